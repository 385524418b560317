// CompileOptions: the parts of xla.CompileOptionsProto StableRT acts on, decoded from the
// wire format PJRT_Client_Compile receives. The original bytes are kept so that
// PJRT_Executable_GetCompileOptions can return them unchanged.
//
// Field numbers follow xla/pjrt/proto/compile_options.proto. Unknown fields are skipped
// (newer JAX versions add some); malformed bytes are InvalidArgument. Plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stablert::runtime {

struct CompileOptions {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  int64_t device_ordinal = -1;  // -1: unset
  bool use_spmd_partitioning = false;
  bool use_shardy_partitioner = false;
  bool compile_portable_executable = false;
  // device_assignment[replica][partition] = device id; empty if the proto had none.
  std::vector<std::vector<int64_t>> device_assignment;
  // env_option_overrides (jit(..., compiler_options={...})): name -> printed value.
  std::vector<std::pair<std::string, std::string>> env_option_overrides;
  std::string serialized;  // the bytes as received

  bool has_device_assignment() const { return !device_assignment.empty(); }
};

// Decodes a serialized CompileOptionsProto. Errors are InvalidArgument and start with
// "failed to deserialize CompileOptionsProto".
StatusOr<CompileOptions> ParseCompileOptions(std::string_view bytes);

// Checks env_option_overrides (`jit(..., compiler_options=...)`). StableRT has no options
// of its own there; names of XLA's debug options (`xla_...`) are accepted so programs tuned
// for XLA compile unchanged, and they have no effect; the boolean ones must hold a boolean.
// Any other name is InvalidArgument "No such compile option: '<name>'".
Status ValidateOptionOverrides(const CompileOptions& options);

// Encodes an xla.DeviceAssignmentProto for assignment[replica][partition].
std::string SerializeDeviceAssignment(const std::vector<std::vector<int64_t>>& assignment);

}  // namespace stablert::runtime
