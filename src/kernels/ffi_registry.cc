#include "kernels/ffi_registry.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace stablert::kernels::ffi {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, HandlerBundle, std::less<>> handlers;
  std::map<std::string, int64_t, std::less<>> type_ids;
  std::map<int64_t, Deleter> deleters;  // every registered id, deleter possibly null
  int64_t next_type_id = 1;
};

Registry& Get() {
  static Registry* registry = new Registry();  // never destroyed: handlers outlive exit order
  return *registry;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

bool IsStablertPlatform(std::string_view platform) {
  const std::string name = Lower(platform);
  return name == "stablert" || name == "cpu" || name == "host";
}

Status RegisterHandler(std::string_view function, std::string_view target, std::string_view platform,
                       const HandlerBundle& bundle) {
  const std::string fn(function);
  if (target.empty()) return InvalidArgument(fn + ": the target name is empty");
  if (!IsStablertPlatform(platform))
    return InvalidArgument(fn + ": FFI target '" + std::string(target) + "' is registered for platform '" +
                           std::string(platform) + "'; StableRT runs handlers of platform 'stablert' (or 'cpu')");
  if (bundle.execute == nullptr)
    return InvalidArgument(fn + ": FFI target '" + std::string(target) + "' has no execute handler");
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.handlers.find(target);
  if (it != r.handlers.end()) {
    if (it->second == bundle) return OkStatus();
    return Status(StatusCode::kAlreadyExists,
                  fn + ": FFI target '" + std::string(target) + "' is already registered with other handlers");
  }
  r.handlers.emplace(std::string(target), bundle);
  return OkStatus();
}

std::optional<HandlerBundle> FindHandler(std::string_view target) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.handlers.find(target);
  if (it == r.handlers.end()) return std::nullopt;
  return it->second;
}

Status RegisterType(std::string_view function, std::string_view name, int64_t* type_id, Deleter deleter) {
  const std::string fn(function);
  if (name.empty()) return InvalidArgument(fn + ": the type name is empty");
  if (type_id == nullptr) return InvalidArgument(fn + ": type_id is null");
  if (*type_id < 0) return InvalidArgument(fn + ": type id " + std::to_string(*type_id) + " is negative");
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.type_ids.find(name);
  if (it != r.type_ids.end()) {
    if (*type_id != 0 && *type_id != it->second)
      return InvalidArgument(fn + ": type '" + std::string(name) + "' has id " + std::to_string(it->second) +
                             ", not " + std::to_string(*type_id));
    *type_id = it->second;
    if (deleter != nullptr) r.deleters[it->second] = deleter;
    return OkStatus();
  }
  if (*type_id == 0) {
    while (r.deleters.count(r.next_type_id)) ++r.next_type_id;
    *type_id = r.next_type_id++;
  } else if (r.deleters.count(*type_id)) {
    return InvalidArgument(fn + ": type id " + std::to_string(*type_id) + " is taken by another type");
  }
  r.type_ids.emplace(std::string(name), *type_id);
  r.deleters[*type_id] = deleter;
  return OkStatus();
}

Deleter TypeDeleter(int64_t type_id) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.deleters.find(type_id);
  return it == r.deleters.end() ? nullptr : it->second;
}

}  // namespace stablert::kernels::ffi
