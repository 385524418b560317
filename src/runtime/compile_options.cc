#include "runtime/compile_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>

#include "base/proto_wire.h"

namespace stablert::runtime {
namespace {

using proto::Field;
using proto::WireReader;
using proto::WireType;

// CompileOptionsProto
constexpr uint32_t kExecutableBuildOptions = 3;
constexpr uint32_t kCompilePortableExecutable = 4;
constexpr uint32_t kEnvOptionOverrides = 7;
// ExecutableBuildOptionsProto
constexpr uint32_t kDeviceOrdinal = 1;
constexpr uint32_t kNumReplicas = 4;
constexpr uint32_t kNumPartitions = 5;
constexpr uint32_t kUseSpmdPartitioning = 6;
constexpr uint32_t kDeviceAssignment = 9;
constexpr uint32_t kUseShardyPartitioner = 19;
// DeviceAssignmentProto
constexpr uint32_t kReplicaCount = 1;
constexpr uint32_t kComputationCount = 2;
constexpr uint32_t kComputationDevices = 3;
constexpr uint32_t kReplicaDeviceIds = 1;

Status Expect(const Field& field, WireType type, std::string_view what) {
  if (field.wire_type == type) return OkStatus();
  return InvalidArgument(std::string("field ") + std::to_string(field.number) + " (" + std::string(what) +
                         ") has the wrong wire type");
}

Status ParseDeviceAssignment(std::string_view bytes, CompileOptions* options) {
  WireReader reader(bytes);
  int64_t replicas = 0, computations = 0;
  std::vector<std::vector<int64_t>> per_computation;
  while (!reader.done()) {
    STABLERT_ASSIGN_OR_RETURN(Field field, reader.Next());
    if (field.number == kReplicaCount) {
      STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "replica_count"));
      replicas = static_cast<int32_t>(field.varint);
    } else if (field.number == kComputationCount) {
      STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "computation_count"));
      computations = static_cast<int32_t>(field.varint);
    } else if (field.number == kComputationDevices) {
      STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "computation_devices"));
      WireReader inner(field.bytes);
      std::vector<int64_t> ids;
      while (!inner.done()) {
        STABLERT_ASSIGN_OR_RETURN(Field id_field, inner.Next());
        if (id_field.number == kReplicaDeviceIds)
          STABLERT_RETURN_IF_ERROR(WireReader::AppendPackedVarints(id_field, &ids));
      }
      per_computation.push_back(std::move(ids));
    }
  }
  if (replicas < 0 || computations < 0 || static_cast<int64_t>(per_computation.size()) != computations)
    return InvalidArgument("device_assignment lists " + std::to_string(per_computation.size()) +
                           " computations but computation_count is " + std::to_string(computations));
  options->device_assignment.assign(replicas, std::vector<int64_t>(computations));
  for (int64_t c = 0; c < computations; ++c) {
    if (static_cast<int64_t>(per_computation[c].size()) != replicas)
      return InvalidArgument("device_assignment computation " + std::to_string(c) + " has " +
                             std::to_string(per_computation[c].size()) + " devices, expected " + std::to_string(replicas));
    for (int64_t r = 0; r < replicas; ++r) options->device_assignment[r][c] = per_computation[c][r];
  }
  return OkStatus();
}

Status ParseBuildOptions(std::string_view bytes, CompileOptions* options) {
  WireReader reader(bytes);
  while (!reader.done()) {
    STABLERT_ASSIGN_OR_RETURN(Field field, reader.Next());
    switch (field.number) {
      case kDeviceOrdinal:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "device_ordinal"));
        options->device_ordinal = static_cast<int64_t>(field.varint);
        break;
      case kNumReplicas:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "num_replicas"));
        options->num_replicas = static_cast<int64_t>(field.varint);
        break;
      case kNumPartitions:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "num_partitions"));
        options->num_partitions = static_cast<int64_t>(field.varint);
        break;
      case kUseSpmdPartitioning:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "use_spmd_partitioning"));
        options->use_spmd_partitioning = field.varint != 0;
        break;
      case kUseShardyPartitioner:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "use_shardy_partitioner"));
        options->use_shardy_partitioner = field.varint != 0;
        break;
      case kDeviceAssignment:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "device_assignment"));
        STABLERT_RETURN_IF_ERROR(ParseDeviceAssignment(field.bytes, options));
        break;
      default:
        break;
    }
  }
  if (options->num_replicas < 1 || options->num_partitions < 1 || options->num_replicas > (1 << 20) ||
      options->num_partitions > (1 << 20))
    return InvalidArgument("num_replicas " + std::to_string(options->num_replicas) + " and num_partitions " +
                           std::to_string(options->num_partitions) + " must both be at least 1");
  if (options->has_device_assignment() &&
      (static_cast<int64_t>(options->device_assignment.size()) != options->num_replicas ||
       static_cast<int64_t>(options->device_assignment[0].size()) != options->num_partitions))
    return InvalidArgument("device_assignment is " + std::to_string(options->device_assignment.size()) + "x" +
                           std::to_string(options->device_assignment.empty() ? 0 : options->device_assignment[0].size()) +
                           " but num_replicas x num_partitions is " + std::to_string(options->num_replicas) + "x" +
                           std::to_string(options->num_partitions));
  return OkStatus();
}

// OptionOverrideProto {string 1, bool 2, int64 3, double 4} inside a map entry {key 1, value 2}.
Status ParseOverride(std::string_view bytes, CompileOptions* options) {
  WireReader entry(bytes);
  OptionOverride option;
  while (!entry.done()) {
    STABLERT_ASSIGN_OR_RETURN(Field field, entry.Next());
    if (field.number == 1 && field.wire_type == WireType::kLengthDelimited) {
      option.name = std::string(field.bytes);
    } else if (field.number == 2 && field.wire_type == WireType::kLengthDelimited) {
      WireReader inner(field.bytes);
      while (!inner.done()) {
        STABLERT_ASSIGN_OR_RETURN(Field v, inner.Next());
        if (v.number == 1 && v.wire_type == WireType::kLengthDelimited) {
          option.kind = OptionOverride::Kind::kString;
          option.string_value = std::string(v.bytes);
        } else if (v.number == 2 && v.wire_type == WireType::kVarint) {
          option.kind = OptionOverride::Kind::kBool;
          option.bool_value = v.varint != 0;
        } else if (v.number == 3 && v.wire_type == WireType::kVarint) {
          option.kind = OptionOverride::Kind::kInt;
          option.int_value = static_cast<int64_t>(v.varint);
        } else if (v.number == 4 && v.wire_type == WireType::kFixed64) {
          option.kind = OptionOverride::Kind::kDouble;
          std::memcpy(&option.double_value, &v.varint, sizeof option.double_value);
        }
      }
    }
  }
  options->env_option_overrides.push_back(std::move(option));
  return OkStatus();
}

// The type of an xla.DebugOptions field, as XLA names it in errors.
enum class XlaKind { kBool, kInt32, kInt64, kUInt32, kUInt64, kFloat, kDouble, kString, kBytes, kEnum, kMessage };

struct XlaOption {
  std::string_view name;
  XlaKind kind;
  bool repeated;
  std::string_view enum_values;  // "A|B|C"; "?" if unknown
};

// Sorted by name (the generator writes them so).
#define STABLERT_XLA_OPTION(name, kind, repeated, values) {name, XlaKind::kind, repeated, values},
constexpr XlaOption kXlaOptions[] = {
#include "runtime/xla_debug_options.inc"
};
#undef STABLERT_XLA_OPTION

const XlaOption* FindXlaOption(std::string_view name) {
  auto it = std::lower_bound(std::begin(kXlaOptions), std::end(kXlaOptions), name,
                             [](const XlaOption& option, std::string_view key) { return option.name < key; });
  return it != std::end(kXlaOptions) && it->name == name ? it : nullptr;
}

const char* KindName(XlaKind kind) {
  switch (kind) {
    case XlaKind::kBool: return "bool";
    case XlaKind::kInt32: return "int32";
    case XlaKind::kInt64: return "int64";
    case XlaKind::kUInt32: return "uint32";
    case XlaKind::kUInt64: return "uint64";
    case XlaKind::kFloat: return "float";
    case XlaKind::kDouble: return "double";
    case XlaKind::kString: return "string";
    case XlaKind::kBytes: return "bytes";
    case XlaKind::kEnum: return "enum";
    case XlaKind::kMessage: return "message";
  }
  return "?";
}

std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// A whole decimal integer in [min, max] (surrounding spaces and a '+' allowed, as XLA's
// SimpleAtoi does).
bool ParsesAsInteger(std::string_view text, int64_t min, int64_t max) {
  text = TrimSpace(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() && value >= min && value <= max;
}

bool ParsesAsFloat(std::string_view text) {
  std::string value(TrimSpace(text));
  if (value.empty()) return false;
  char* end = nullptr;
  std::strtod(value.c_str(), &end);
  return end == value.c_str() + value.size();
}

bool IsEnumValue(const XlaOption& option, std::string_view name) {
  if (option.enum_values == "?") return true;
  std::string_view values = option.enum_values;
  while (!values.empty()) {
    size_t bar = values.find('|');
    if (values.substr(0, bar) == name) return true;
    if (bar == std::string_view::npos) break;
    values.remove_prefix(bar + 1);
  }
  return false;
}

// nullopt if `value` may set `option`; else the value text XLA names in its error.
std::optional<std::string> Mismatch(const XlaOption& option, const OptionOverride& value) {
  using Kind = OptionOverride::Kind;
  const std::string printed = value.Printed();
  switch (option.kind) {
    case XlaKind::kBool:
      if (value.kind == Kind::kBool) return std::nullopt;
      break;
    case XlaKind::kInt32:
    case XlaKind::kInt64:
    case XlaKind::kUInt32:
    case XlaKind::kUInt64: {
      int64_t min = option.kind == XlaKind::kInt32 ? INT32_MIN : option.kind == XlaKind::kInt64 ? INT64_MIN : 0;
      int64_t max = option.kind == XlaKind::kInt32 ? INT32_MAX : option.kind == XlaKind::kUInt32 ? UINT32_MAX : INT64_MAX;
      if (value.kind == Kind::kInt && value.int_value >= min && value.int_value <= max) return std::nullopt;
      if (value.kind == Kind::kString && ParsesAsInteger(value.string_value, min, max)) return std::nullopt;
      break;
    }
    case XlaKind::kFloat:
    case XlaKind::kDouble:
      // A float option holds a double only if it fits (XLA rejects 1e300).
      if (value.kind == Kind::kDouble &&
          (option.kind == XlaKind::kDouble || !std::isfinite(value.double_value) ||
           std::fabs(value.double_value) <= std::numeric_limits<float>::max()))
        return std::nullopt;
      if (value.kind == Kind::kString && ParsesAsFloat(value.string_value)) return std::nullopt;
      break;
    case XlaKind::kString:
    case XlaKind::kBytes:
      if (value.kind == Kind::kString) return std::nullopt;
      break;
    case XlaKind::kEnum:
      if (value.kind == Kind::kInt) return std::nullopt;
      if (value.kind == Kind::kString) {
        if (!option.repeated) {
          if (IsEnumValue(option, value.string_value)) return std::nullopt;
          break;
        }
        // A repeated enum takes a comma-separated list; XLA names the first bad element.
        std::string_view list = value.string_value;
        while (true) {
          size_t comma = list.find(',');
          std::string_view element = list.substr(0, comma);
          if (!IsEnumValue(option, element)) return std::string(element);
          if (comma == std::string_view::npos) return std::nullopt;
          list.remove_prefix(comma + 1);
        }
      }
      break;
    case XlaKind::kMessage:
      break;
  }
  return printed;
}

Status ParseTopLevel(std::string_view bytes, CompileOptions* options) {
  WireReader reader(bytes);
  while (!reader.done()) {
    STABLERT_ASSIGN_OR_RETURN(Field field, reader.Next());
    switch (field.number) {
      case kExecutableBuildOptions:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "executable_build_options"));
        STABLERT_RETURN_IF_ERROR(ParseBuildOptions(field.bytes, options));
        break;
      case kCompilePortableExecutable:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kVarint, "compile_portable_executable"));
        options->compile_portable_executable = field.varint != 0;
        break;
      case kEnvOptionOverrides:
        STABLERT_RETURN_IF_ERROR(Expect(field, WireType::kLengthDelimited, "env_option_overrides"));
        STABLERT_RETURN_IF_ERROR(ParseOverride(field.bytes, options));
        break;
      default:
        break;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<CompileOptions> ParseCompileOptions(std::string_view bytes) {
  CompileOptions options;
  options.serialized = std::string(bytes);
  Status status = ParseTopLevel(bytes, &options);
  if (!status.ok()) return InvalidArgument("failed to deserialize CompileOptionsProto: " + std::string(status.message()));
  return options;
}

std::string SerializeDeviceAssignment(const std::vector<std::vector<int64_t>>& assignment) {
  proto::WireWriter writer;
  int64_t replicas = static_cast<int64_t>(assignment.size());
  int64_t computations = replicas ? static_cast<int64_t>(assignment[0].size()) : 0;
  writer.Varint(kReplicaCount, replicas);
  writer.Varint(kComputationCount, computations);
  for (int64_t c = 0; c < computations; ++c) {
    proto::WireWriter devices;
    for (int64_t r = 0; r < replicas; ++r) devices.Varint(kReplicaDeviceIds, assignment[r][c]);
    writer.Bytes(kComputationDevices, devices.data());
  }
  return writer.Take();
}

std::string OptionOverride::Printed() const {
  switch (kind) {
    case Kind::kString: return string_value;
    case Kind::kBool: return bool_value ? "1" : "0";
    case Kind::kInt: return std::to_string(int_value);
    case Kind::kDouble: {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%g", double_value);
      return buffer;
    }
  }
  return "";
}

Status ValidateOptionOverrides(const CompileOptions& options) {
  for (const OptionOverride& value : options.env_option_overrides) {
    const XlaOption* option = FindXlaOption(value.name);
    if (!option) return InvalidArgument("No such compile option: '" + value.name + "'");
    if (std::optional<std::string> bad = Mismatch(*option, value))
      return InvalidArgument("While setting option " + value.name + ", '" + *bad + "' is not a valid " +
                             KindName(option->kind) + " value.");
  }
  return OkStatus();
}

std::optional<std::string> StringOverride(const CompileOptions& options, std::string_view name) {
  std::optional<std::string> found;
  for (const OptionOverride& value : options.env_option_overrides)
    if (value.name == name && value.kind == OptionOverride::Kind::kString) found = value.string_value;
  return found;
}

std::optional<bool> BoolOverride(const CompileOptions& options, std::string_view name) {
  std::optional<bool> found;
  for (const OptionOverride& value : options.env_option_overrides) {
    if (value.name != name) continue;
    if (value.kind == OptionOverride::Kind::kBool) found = value.bool_value;
    else if (value.kind == OptionOverride::Kind::kString && (value.string_value == "true" || value.string_value == "false"))
      found = value.string_value == "true";
  }
  return found;
}

std::string CompileOptionsToString(const CompileOptions& options) {
  auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
  std::string out;
  out += "num_replicas: " + std::to_string(options.num_replicas) + "\n";
  out += "num_partitions: " + std::to_string(options.num_partitions) + "\n";
  out += "device_ordinal: " + std::to_string(options.device_ordinal) + "\n";
  out += "use_spmd_partitioning: " + flag(options.use_spmd_partitioning) + "\n";
  out += "use_shardy_partitioner: " + flag(options.use_shardy_partitioner) + "\n";
  out += "compile_portable_executable: " + flag(options.compile_portable_executable) + "\n";
  out += "device_assignment:";
  if (options.device_assignment.empty()) out += " none";
  for (const auto& replica : options.device_assignment) {
    out += " [";
    for (size_t p = 0; p < replica.size(); ++p) {
      if (p) out += ',';
      out += std::to_string(replica[p]);
    }
    out += "]";
  }
  out += "\nenv_option_overrides:";
  if (options.env_option_overrides.empty()) out += " none";
  out += "\n";
  static constexpr const char* kKinds[] = {"string", "bool", "int", "double"};
  for (const OptionOverride& value : options.env_option_overrides)
    out += "  " + value.name + " = " + value.Printed() + " (" + kKinds[static_cast<int>(value.kind)] + ")\n";
  return out;
}

}  // namespace stablert::runtime
