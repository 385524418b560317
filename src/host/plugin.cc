#include "host/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>

namespace stablert::host {
namespace {

// The oldest table layout this host reads: PJRT 0.57 rearranged PJRT_Api's slots; the order
// has been stable (append-only) since.
constexpr int kOldestMinor = 57;

std::string ExtensionName(PJRT_Extension_Type type) {
  switch (type) {
    case PJRT_Extension_Type_Gpu_Custom_Call: return "gpu_custom_call";
    case PJRT_Extension_Type_Profiler: return "profiler";
    case PJRT_Extension_Type_Custom_Partitioner: return "custom_partitioner";
    case PJRT_Extension_Type_Stream: return "stream";
    case PJRT_Extension_Type_Layouts: return "layouts";
    case PJRT_Extension_Type_FFI: return "ffi";
    case PJRT_Extension_Type_MemoryDescriptions: return "memory_descriptions";
    case PJRT_Extension_Type_Triton: return "triton";
    case PJRT_Extension_Type_RawBuffer: return "raw_buffer";
    case PJRT_Extension_Type_PhaseCompile: return "phase_compile";
    case PJRT_Extension_Type_Example: return "example";
    case PJRT_Extension_Type_Unknown: return "unknown";
    case PJRT_Extension_Type_CrossHostTransfers: return "cross_host_transfers";
    case PJRT_Extension_Type_ExecutableMetadata: return "executable_metadata";
    case PJRT_Extension_Type_Callback: return "callback";
    case PJRT_Extension_Type_HostAllocator: return "host_allocator";
    case PJRT_Extension_Type_TpuTopology: return "tpu_topology";
    case PJRT_Extension_Type_TpuExecutable: return "tpu_executable";
    case PJRT_Extension_Type_Megascale: return "megascale";
    case PJRT_Extension_Type_Shardings: return "shardings";
    case PJRT_Extension_Type_AbiVersion: return "abi_version";
    case PJRT_Extension_Type_Collectives: return "collectives";
    case PJRT_Extension_Type_MultiSlice: return "multi_slice";
    case PJRT_Extension_Type_HostMemoryAllocator: return "host_memory_allocator";
    case PJRT_Extension_Type_XlaTransform: return "xla_transform";
  }
  return "unknown(" + std::to_string(static_cast<int>(type)) + ")";
}

bool LooksLikePath(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0) || s.find(".so.") != std::string::npos;
}

// site-packages directories of the Python environments a user of this host has.
std::vector<std::filesystem::path> SitePackages() {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) roots.emplace_back(venv);
  std::vector<fs::path> out;
  if (const char* pythonpath = std::getenv("PYTHONPATH"); pythonpath && *pythonpath) {
    std::stringstream entries(pythonpath);
    for (std::string entry; std::getline(entries, entry, ':');)
      if (!entry.empty()) out.emplace_back(entry);
  }
  for (const fs::path& root : roots) {
    std::error_code error;
    fs::path lib = root / "lib";
    if (!fs::is_directory(lib, error)) continue;
    for (const fs::directory_entry& python : fs::directory_iterator(lib, error))
      if (python.path().filename().string().rfind("python", 0) == 0)
        out.push_back(python.path() / "site-packages");
  }
  // The running program's own environment: an installed stablert CLI sits in
  // <site-packages>/stablert/, a checkout's build/stablert beside <checkout>/.venv.
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    out.push_back(self.parent_path().parent_path());
    fs::path venv_lib = self.parent_path().parent_path() / ".venv" / "lib";
    if (fs::is_directory(venv_lib, error))
      for (const fs::directory_entry& python : fs::directory_iterator(venv_lib, error))
        if (python.path().filename().string().rfind("python", 0) == 0)
          out.push_back(python.path() / "site-packages");
  }
  out.emplace_back("/usr/lib/python3/dist-packages");
  return out;
}

// The plugin library in package directory `dir`, if there is one.
std::optional<std::filesystem::path> LibraryIn(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return std::nullopt;
  std::vector<fs::path> libraries;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (entry.is_regular_file(error) && entry.path().extension() == ".so") libraries.push_back(entry.path());
  std::sort(libraries.begin(), libraries.end());
  for (const fs::path& library : libraries)
    if (library.filename().string().find("pjrt") != std::string::npos) return library;
  if (libraries.size() == 1) return libraries.front();
  return std::nullopt;
}

}  // namespace

std::string NamedValue::ToString() const {
  std::ostringstream out;
  out << name << "=";
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          out << "[";
          for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
          out << "]";
        } else if constexpr (std::is_same_v<T, bool>) {
          out << (v ? "true" : "false");
        } else {
          out << v;
        }
      },
      value);
  return out.str();
}

std::vector<PJRT_NamedValue> NamedValuesToPjrt(const std::vector<NamedValue>& values) {
  std::vector<PJRT_NamedValue> out;
  for (const NamedValue& v : values) {
    PJRT_NamedValue raw{};
    raw.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    raw.name = v.name.data();
    raw.name_size = v.name.size();
    std::visit(
        [&raw](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>) {
            raw.type = PJRT_NamedValue_kString;
            raw.string_value = value.data();
            raw.value_size = value.size();
          } else if constexpr (std::is_same_v<T, int64_t>) {
            raw.type = PJRT_NamedValue_kInt64;
            raw.int64_value = value;
            raw.value_size = 1;
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            raw.type = PJRT_NamedValue_kInt64List;
            raw.int64_array_value = value.data();
            raw.value_size = value.size();
          } else if constexpr (std::is_same_v<T, float>) {
            raw.type = PJRT_NamedValue_kFloat;
            raw.float_value = value;
            raw.value_size = 1;
          } else {
            raw.type = PJRT_NamedValue_kBool;
            raw.bool_value = value;
            raw.value_size = 1;
          }
        },
        v.value);
    out.push_back(raw);
  }
  return out;
}

StatusOr<std::vector<NamedValue>> NamedValuesFromPjrt(const PJRT_NamedValue* values, size_t count, std::string_view function) {
  std::vector<NamedValue> out;
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& raw = values[i];
    NamedValue value;
    value.name.assign(raw.name, raw.name_size);
    switch (raw.type) {
      case PJRT_NamedValue_kString: value.value = std::string(raw.string_value, raw.value_size); break;
      case PJRT_NamedValue_kInt64: value.value = raw.int64_value; break;
      case PJRT_NamedValue_kInt64List:
        value.value = std::vector<int64_t>(raw.int64_array_value, raw.int64_array_value + raw.value_size);
        break;
      case PJRT_NamedValue_kFloat: value.value = raw.float_value; break;
      case PJRT_NamedValue_kBool: value.value = raw.bool_value; break;
      default:
        return InvalidArgument(std::string(function) + ": attribute '" + value.name + "' has unknown type " +
                               std::to_string(static_cast<int>(raw.type)));
    }
    out.push_back(std::move(value));
  }
  return out;
}


StatusOr<std::string> FindPlugin(const std::string& name) {
  if (name.empty()) return InvalidArgument("FindPlugin: empty plugin name");
  if (const char* pairs = std::getenv("PJRT_NAMES_AND_LIBRARY_PATHS"); pairs && *pairs) {
    std::stringstream entries(pairs);
    for (std::string entry; std::getline(entries, entry, ',');) {
      size_t colon = entry.find(':');
      if (colon != std::string::npos && entry.substr(0, colon) == name) return entry.substr(colon + 1);
    }
  }
  std::vector<std::string> searched;
  for (const std::filesystem::path& site : SitePackages()) {
    for (const std::filesystem::path& dir :
         {site / name, site / "jax_plugins" / name, site / "xla_plugins" / name,
          site / "xla_plugins" / ("xla_" + name + "_pjrt")}) {
      if (std::optional<std::filesystem::path> library = LibraryIn(dir)) return library->string();
    }
    searched.push_back(site.string());
  }
  std::string places;
  for (const std::string& s : searched) places += (places.empty() ? "" : ", ") + s;
  return NotFound("no PJRT plugin named '" + name +
                  "': not in PJRT_NAMES_AND_LIBRARY_PATHS, and no plugin package of that name in " + places +
                  " (give the library's path instead, or set VIRTUAL_ENV)");
}

StatusOr<std::shared_ptr<const Plugin>> Plugin::Load(const std::string& path_or_name) {
  std::string path = path_or_name;
  if (!LooksLikePath(path_or_name)) {
    STABLERT_ASSIGN_OR_RETURN(path, FindPlugin(path_or_name));
  }
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    return NotFound("PJRT plugin library '" + path + "' does not exist");
  // A process loads a plugin once; a second Load of the same file shares the first's table.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return InvalidArgument("cannot load PJRT plugin '" + path + "': " + dlerror());
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (!get) return InvalidArgument("'" + path + "' is not a PJRT plugin: it does not export GetPjrtApi");
  const PJRT_Api* api = get();
  if (!api) return FailedPrecondition("'" + path + "': GetPjrtApi returned no table");
  auto plugin = std::shared_ptr<Plugin>(new Plugin(api, path));
  STABLERT_RETURN_IF_ERROR(plugin->CheckAndInitialize());
  return std::shared_ptr<const Plugin>(std::move(plugin));
}

StatusOr<std::shared_ptr<const Plugin>> Plugin::FromApi(const PJRT_Api* api, std::string origin) {
  if (!api) return InvalidArgument("Plugin::FromApi: null PJRT_Api for " + origin);
  auto plugin = std::shared_ptr<Plugin>(new Plugin(api, std::move(origin)));
  STABLERT_RETURN_IF_ERROR(plugin->CheckAndInitialize());
  return std::shared_ptr<const Plugin>(std::move(plugin));
}

Status Plugin::CheckAndInitialize() {
  // Before 0.57 the table had other fields at these offsets; the version sits right after
  // struct_size and extension_start in every layout.
  constexpr size_t kVersionEnd = offsetof(PJRT_Api, pjrt_api_version) + sizeof(PJRT_Api_Version);
  if (api_->struct_size < kVersionEnd)
    return FailedPrecondition("'" + path_ + "': PJRT_Api.struct_size " + std::to_string(api_->struct_size) +
                              " is too small to hold a version (" + std::to_string(kVersionEnd) + " bytes)");
  major_ = api_->pjrt_api_version.major_version;
  minor_ = api_->pjrt_api_version.minor_version;
  if (major_ != PJRT_API_MAJOR)
    return FailedPrecondition("'" + path_ + "' speaks PJRT " + version() + "; this host speaks major version " +
                              std::to_string(PJRT_API_MAJOR));
  if (minor_ < kOldestMinor)
    return FailedPrecondition("'" + path_ + "' speaks PJRT " + version() + "; this host reads plugins from 0." +
                              std::to_string(kOldestMinor) + " on (older tables have another layout)");
  // Initialize once per table, however many Plugins wrap it.
  static std::mutex mutex;
  static std::vector<const PJRT_Api*> initialized;
  std::lock_guard<std::mutex> lock(mutex);
  if (std::find(initialized.begin(), initialized.end(), api_) != initialized.end()) return OkStatus();
  if (Has(&PJRT_Api::PJRT_Plugin_Initialize)) {
    PJRT_Plugin_Initialize_Args args{};
    args.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
    STABLERT_RETURN_IF_ERROR(Call(&PJRT_Api::PJRT_Plugin_Initialize, "PJRT_Plugin_Initialize", &args));
  }
  initialized.push_back(api_);
  return OkStatus();
}

std::string Plugin::version() const { return std::to_string(major_) + "." + std::to_string(minor_); }

Status Plugin::MissingSlot(std::string_view name) const {
  return Unimplemented(std::string(name) + " is not provided by the plugin '" + path_ + "' (PJRT " + version() +
                       ")");
}

Status Plugin::TakeError(PJRT_Error* error, std::string_view context) const {
  if (!error) return OkStatus();
  StatusCode code = StatusCode::kUnknown;
  if (Has(&PJRT_Api::PJRT_Error_GetCode)) {
    PJRT_Error_GetCode_Args args{};
    args.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
    args.error = error;
    PJRT_Error* inner = api_->PJRT_Error_GetCode(&args);
    if (!inner && args.code >= 0 && args.code <= static_cast<int>(StatusCode::kUnauthenticated))
      code = static_cast<StatusCode>(args.code);
    if (inner) {
      PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, inner};
      api_->PJRT_Error_Destroy(&destroy);
    }
  }
  std::string message = "(no message)";
  if (Has(&PJRT_Api::PJRT_Error_Message)) {
    PJRT_Error_Message_Args args{};
    args.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
    args.error = error;
    api_->PJRT_Error_Message(&args);
    if (args.message) message.assign(args.message, args.message_size);
  }
  if (Has(&PJRT_Api::PJRT_Error_Destroy)) {
    PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
    api_->PJRT_Error_Destroy(&destroy);
  }
  if (code == StatusCode::kOk) code = StatusCode::kUnknown;  // an error that claims OK is still an error
  return Status(code, std::string(context) + ": " + message);
}

StatusOr<std::vector<NamedValue>> Plugin::Attributes() const {
  if (!Has(&PJRT_Api::PJRT_Plugin_Attributes)) return std::vector<NamedValue>{};
  PJRT_Plugin_Attributes_Args args{};
  args.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE;
  STABLERT_RETURN_IF_ERROR(Call(&PJRT_Api::PJRT_Plugin_Attributes, "PJRT_Plugin_Attributes", &args));
  return NamedValuesFromPjrt(args.attributes, args.num_attributes, "PJRT_Plugin_Attributes");
}

std::vector<ExtensionInfo> Plugin::Extensions() const {
  std::vector<ExtensionInfo> out;
  // A malformed chain (a cycle) must not hang the host: PJRT defines fewer than 64 types.
  int guard = 0;
  for (const PJRT_Extension_Base* e = api_->extension_start; e && guard < 256; e = e->next, ++guard)
    out.push_back({e->type, ExtensionName(e->type)});
  return out;
}

const PJRT_Extension_Base* Plugin::FindExtension(PJRT_Extension_Type type) const {
  int guard = 0;
  for (const PJRT_Extension_Base* e = api_->extension_start; e && guard < 256; e = e->next, ++guard)
    if (e->type == type) return e;
  return nullptr;
}

std::vector<std::pair<std::string, bool>> Plugin::Slots() const {
  std::vector<std::pair<std::string, bool>> out;
#define PJRT_API_SLOT(name) out.emplace_back(#name, Has(&PJRT_Api::name));
#include "base/pjrt_api_slots.def"
#undef PJRT_API_SLOT
  return out;
}

}  // namespace stablert::host
