#include "runtime/compile_options.h"

#include <cctype>
#include <cstring>

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
  std::string key, value;
  while (!entry.done()) {
    STABLERT_ASSIGN_OR_RETURN(Field field, entry.Next());
    if (field.number == 1 && field.wire_type == WireType::kLengthDelimited) {
      key = std::string(field.bytes);
    } else if (field.number == 2 && field.wire_type == WireType::kLengthDelimited) {
      WireReader inner(field.bytes);
      while (!inner.done()) {
        STABLERT_ASSIGN_OR_RETURN(Field v, inner.Next());
        if (v.number == 1 && v.wire_type == WireType::kLengthDelimited) value = std::string(v.bytes);
        if (v.number == 2 && v.wire_type == WireType::kVarint) value = v.varint ? "true" : "false";
        if (v.number == 3 && v.wire_type == WireType::kVarint) value = std::to_string(static_cast<int64_t>(v.varint));
        if (v.number == 4 && v.wire_type == WireType::kFixed64) {
          double d;
          std::memcpy(&d, &v.varint, sizeof d);
          value = std::to_string(d);
        }
      }
    }
  }
  options->env_option_overrides.emplace_back(std::move(key), std::move(value));
  return OkStatus();
}

// XLA's boolean debug options that frameworks and users commonly pass.
constexpr std::string_view kBooleanXlaOptions[] = {
    "xla_embed_ir_in_executable", "xla_dump_hlo_as_text", "xla_dump_hlo_as_proto", "xla_dump_hlo_as_html",
    "xla_cpu_enable_fast_math",   "xla_cpu_fast_math_honor_nans", "xla_allow_excess_precision",
    "xla_detailed_logging",       "xla_llvm_disable_expensive_passes"};

bool ParsesAsBool(std::string value) {
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view accepted : {"true", "false", "t", "f", "yes", "no", "y", "n", "1", "0"})
    if (value == accepted) return true;
  return false;
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

Status ValidateOptionOverrides(const CompileOptions& options) {
  for (const auto& [name, value] : options.env_option_overrides) {
    if (name.rfind("xla_", 0) != 0)
      return InvalidArgument("PJRT_Client_Compile: No such compile option: '" + name +
                             "' (StableRT accepts XLA's xla_... option names, which have no effect on it)");
    for (std::string_view boolean : kBooleanXlaOptions)
      if (name == boolean && !ParsesAsBool(value))
        return InvalidArgument("PJRT_Client_Compile: compile option '" + name + "': '" + value +
                               "' is not a valid bool value.");
  }
  return OkStatus();
}

}  // namespace stablert::runtime
