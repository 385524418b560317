// PJRT_Executable_* and PJRT_LoadedExecutable_* entry points.
#include <cstring>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/host_transfers.h"
#include "capi/serialization.h"
#include "plan/cost_analysis.h"
#include "runtime/compile_options.h"

namespace stablert::capi {
namespace {

// Heap-held bytes handed to the caller together with a deleter.
struct OwnedBytes {
  std::string bytes;
};

template <typename Holder>
void DeleteOwnedBytes(Holder* holder) {
  delete reinterpret_cast<OwnedBytes*>(holder);
}

PJRT_LoadedExecutable* WrapLoaded(PJRT_Client* client, std::unique_ptr<runtime::LoadedExecutable> loaded) {
  auto* handle = new PJRT_LoadedExecutable;
  handle->client = client;
  for (runtime::Device* device : loaded->addressable_devices()) handle->addressable_devices.push_back(client->Wrap(device));
  handle->loaded = std::move(loaded);
  return handle;
}

}  // namespace

PJRT_Error* PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_Destroy, args);
  delete args->executable;
  return nullptr;
}

PJRT_Error* PJRT_Executable_Name(PJRT_Executable_Name_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_Name, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_Name, args->executable);
  const std::string& name = args->executable->executable->name();
  args->executable_name = name.c_str();
  args->executable_name_size = name.size();
  return nullptr;
}

PJRT_Error* PJRT_Executable_NumReplicas(PJRT_Executable_NumReplicas_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_NumReplicas, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_NumReplicas, args->executable);
  args->num_replicas = args->executable->executable->num_replicas();
  return nullptr;
}

PJRT_Error* PJRT_Executable_NumPartitions(PJRT_Executable_NumPartitions_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_NumPartitions, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_NumPartitions, args->executable);
  args->num_partitions = args->executable->executable->num_partitions();
  return nullptr;
}

PJRT_Error* PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_NumOutputs, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_NumOutputs, args->executable);
  args->num_outputs = args->executable->output_types.size();
  return nullptr;
}

PJRT_Error* PJRT_Executable_SizeOfGeneratedCodeInBytes(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_SizeOfGeneratedCodeInBytes, args->executable);
  // No machine code is generated; the plan is interpreted.
  args->size_in_bytes = 0;
  return nullptr;
}

PJRT_Error* PJRT_Executable_GetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_GetCostAnalysis, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_GetCostAnalysis, args->executable);
  // Computed from the plan on first request (plan/cost_analysis.h), as float values like
  // XLA's plugins report them; owned by the executable handle.
  PJRT_Executable* executable = args->executable;
  std::call_once(executable->cost_analysis_once, [executable] {
    const plan::PlanCost cost = plan::AnalyzeCost(executable->executable->plan());
    executable->cost_analysis.AddFloat("flops", static_cast<float>(cost.flops));
    executable->cost_analysis.AddFloat("transcendentals", static_cast<float>(cost.transcendentals));
    executable->cost_analysis.AddFloat("bytes accessed", static_cast<float>(cost.bytes_accessed));
  });
  args->num_properties = executable->cost_analysis.size();
  args->properties = executable->cost_analysis.data();
  return nullptr;
}

PJRT_Error* PJRT_Executable_OutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_OutputMemoryKinds, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_OutputMemoryKinds, args->executable);
  args->num_outputs = args->executable->output_kinds.size();
  args->memory_kinds = args->executable->output_kinds.data();
  args->memory_kind_sizes = args->executable->output_kind_sizes.data();
  return nullptr;
}

PJRT_Error* PJRT_Executable_ParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_ParameterMemoryKinds, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_ParameterMemoryKinds, args->executable);
  args->num_parameters = args->executable->parameter_kinds.size();
  args->memory_kinds = args->executable->parameter_kinds.data();
  args->memory_kind_sizes = args->executable->parameter_kind_sizes.data();
  return nullptr;
}

PJRT_Error* PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_OptimizedProgram, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_OptimizedProgram, args->executable);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_OptimizedProgram, args->program);
  // Format "mlir". A program run per partition shows the partitioned program (what each
  // device runs, with its collectives) as MLIR text; others show the original StableHLO
  // portable artifact: StableRT keeps no HLO. Frameworks turn it into HLO text, which fails
  // for Shardy ops, so a program with them has no optimized form to show (JAX's
  // `compiled.as_text()` is then None).
  const runtime::Executable& executable = *args->executable->executable;
  const std::string& shardy_op = executable.shardy_op();
  if (executable.runs_per_partition() && executable.partitioned_program().empty())
    return ToPjrtError(Unimplemented("PJRT_Executable_OptimizedProgram: the partitioned program of " +
                                     executable.name() + " has no MLIR text form"));
  if (!executable.runs_per_partition() && !shardy_op.empty())
    return ToPjrtError(Unimplemented("PJRT_Executable_OptimizedProgram: the program holds " + shardy_op +
                                     ", which has no HLO form; StableRT runs it from its execution plan"));
  const std::string& code =
      executable.runs_per_partition() ? executable.partitioned_program() : executable.program();
  static constexpr char kFormat[] = "mlir";
  args->program->format = kFormat;
  args->program->format_size = sizeof(kFormat) - 1;
  if (!args->program->code) {
    args->program->code_size = code.size();
    return nullptr;
  }
  if (args->program->code_size < code.size())
    return ToPjrtError(InvalidArgument("PJRT_Executable_OptimizedProgram: code_size " +
                                       std::to_string(args->program->code_size) + " is smaller than the program's " +
                                       std::to_string(code.size()) + " bytes"));
  std::memcpy(args->program->code, code.data(), code.size());
  args->program->code_size = code.size();
  return nullptr;
}

PJRT_Error* PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_Serialize, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_Serialize, args->executable);
  STABLERT_CAPI_GUARD(PJRT_Executable_Serialize, {
    const runtime::Executable& executable = *args->executable->executable;
    auto* owned = new OwnedBytes{SerializeExecutable(
        {executable.program(), executable.program_format(), executable.options().serialized})};
    args->serialized_bytes = owned->bytes.data();
    args->serialized_bytes_size = owned->bytes.size();
    args->serialized_executable = reinterpret_cast<PJRT_SerializedExecutable*>(owned);
    args->serialized_executable_deleter = &DeleteOwnedBytes<PJRT_SerializedExecutable>;
    return nullptr;
  })
}

PJRT_Error* PJRT_Executable_DeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args* args) {
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Executable_DeserializeAndLoad, args, loaded_executable);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_DeserializeAndLoad, args->client);
  STABLERT_CAPI_GUARD(PJRT_Executable_DeserializeAndLoad, {
    if (args->serialized_executable_size > 0 && !args->serialized_executable)
      return ToPjrtError(InvalidArgument("PJRT_Executable_DeserializeAndLoad: serialized_executable is null"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(
        SerializedExecutable serialized,
        DeserializeExecutable(std::string_view(args->serialized_executable ? args->serialized_executable : "",
                                               args->serialized_executable_size)));
    bool has_override = args->struct_size >= offsetof(PJRT_Executable_DeserializeAndLoad_Args,
                                                      overridden_serialized_compile_options_size) + sizeof(size_t) &&
                        args->overridden_serialized_compile_options && args->overridden_serialized_compile_options_size;
    if (has_override)
      serialized.compile_options.assign(args->overridden_serialized_compile_options,
                                        args->overridden_serialized_compile_options_size);
    STABLERT_CAPI_ASSIGN_OR_RETURN(
        auto loaded, args->client->client->Compile(serialized.program, serialized.format, serialized.compile_options));
    args->loaded_executable = WrapLoaded(args->client, std::move(loaded));
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_Load(PJRT_Client_Load_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_Load, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_Load, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_Load, args->executable);
  STABLERT_CAPI_GUARD(PJRT_Client_Load, {
    const runtime::Executable& executable = *args->executable->executable;
    std::string options = executable.options().serialized;
    if (args->compile_options && args->compile_options_size) options.assign(args->compile_options, args->compile_options_size);
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto loaded,
                                   args->client->client->Compile(executable.program(), executable.program_format(), options));
    args->loaded_executable = WrapLoaded(args->client, std::move(loaded));
    return nullptr;
  })
}

PJRT_Error* PJRT_Executable_OutputElementTypes(PJRT_Executable_OutputElementTypes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_OutputElementTypes, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_OutputElementTypes, args->executable);
  args->output_types = args->executable->output_types.data();
  args->num_output_types = args->executable->output_types.size();
  return nullptr;
}

PJRT_Error* PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_OutputDimensions, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_OutputDimensions, args->executable);
  args->num_outputs = args->executable->output_dim_sizes.size();
  args->dims = args->executable->output_dims.data();
  args->dim_sizes = args->executable->output_dim_sizes.data();
  return nullptr;
}

PJRT_Error* PJRT_Executable_Fingerprint(PJRT_Executable_Fingerprint_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_Fingerprint, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_Fingerprint, args->executable);
  const std::string& fingerprint = args->executable->executable->fingerprint();
  args->executable_fingerprint = fingerprint.c_str();
  args->executable_fingerprint_size = fingerprint.size();
  return nullptr;
}

PJRT_Error* PJRT_Executable_GetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args* args) {
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Executable_GetCompiledMemoryStats, args, peak_memory_in_bytes);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_GetCompiledMemoryStats, args->executable);
  // Per device, from the plan (runtime::Executable::memory_stats). All memory is host
  // memory; it is reported as the device's default memory, the host_* fields stay 0.
  const runtime::Executable::MemoryStats stats = args->executable->executable->memory_stats();
  args->generated_code_size_in_bytes = stats.generated_code_bytes;
  args->argument_size_in_bytes = stats.argument_bytes;
  args->output_size_in_bytes = stats.output_bytes;
  args->alias_size_in_bytes = stats.alias_bytes;
  args->temp_size_in_bytes = stats.temp_bytes;
  args->host_generated_code_size_in_bytes = 0;
  args->host_argument_size_in_bytes = 0;
  args->host_output_size_in_bytes = 0;
  args->host_alias_size_in_bytes = 0;
  args->host_temp_size_in_bytes = 0;
  // The arguments, the outputs not written into donated arguments, the arena and the
  // plan's constants are all live during an execution.
  const int64_t total = stats.argument_bytes + stats.output_bytes - stats.alias_bytes + stats.temp_bytes +
                        stats.generated_code_bytes + stats.constant_bytes;
  args->peak_memory_in_bytes = total;
  auto fits = [&](size_t end) { return args->struct_size >= end; };
  using Args = PJRT_Executable_GetCompiledMemoryStats_Args;
  if (fits(offsetof(Args, total_size_in_bytes) + sizeof(args->total_size_in_bytes))) args->total_size_in_bytes = total;
  if (fits(offsetof(Args, peak_unpadded_heap_bytes) + sizeof(args->peak_unpadded_heap_bytes))) {
    // What an execution allocates: its new outputs and its arena.
    args->total_allocation_bytes = stats.output_bytes - stats.alias_bytes + stats.temp_bytes;
    args->indefinite_allocations = 0;
    args->peak_unpadded_heap_bytes = stats.temp_bytes;
  }
  return nullptr;
}

PJRT_Error* PJRT_Executable_GetCompileOptions(PJRT_Executable_GetCompileOptions_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Executable_GetCompileOptions, args);
  STABLERT_CAPI_REQUIRE(PJRT_Executable_GetCompileOptions, args->executable);
  auto* owned = new OwnedBytes{args->executable->executable->options().serialized};
  args->serialized_bytes = owned->bytes.data();
  args->serialized_bytes_size = owned->bytes.size();
  args->serialized_compile_options = reinterpret_cast<PJRT_SerializedCompileOptions*>(owned);
  args->serialized_compile_options_deleter = &DeleteOwnedBytes<PJRT_SerializedCompileOptions>;
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_Destroy, args);
  delete args->executable;
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_GetExecutable(PJRT_LoadedExecutable_GetExecutable_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_GetExecutable, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_GetExecutable, args->loaded_executable);
  STABLERT_CAPI_GUARD(PJRT_LoadedExecutable_GetExecutable, {
    args->executable = NewExecutableHandle(args->loaded_executable->loaded->executable()).release();
    return nullptr;
  })
}

PJRT_Error* PJRT_LoadedExecutable_AddressableDevices(PJRT_LoadedExecutable_AddressableDevices_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_AddressableDevices, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_AddressableDevices, args->executable);
  args->addressable_devices = args->executable->addressable_devices.data();
  args->num_addressable_devices = args->executable->addressable_devices.size();
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_Delete(PJRT_LoadedExecutable_Delete_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_Delete, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_Delete, args->executable);
  args->executable->loaded->Delete();
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_IsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_IsDeleted, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_IsDeleted, args->executable);
  args->is_deleted = args->executable->loaded->IsDeleted();
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_Fingerprint(PJRT_LoadedExecutable_Fingerprint_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_Fingerprint, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_Fingerprint, args->executable);
  const std::string& fingerprint = args->executable->loaded->executable()->fingerprint();
  args->executable_fingerprint = fingerprint.c_str();
  args->executable_fingerprint_size = fingerprint.size();
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_GetDeviceAssignment(PJRT_LoadedExecutable_GetDeviceAssignment_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_GetDeviceAssignment, args->executable);
  auto* owned = new OwnedBytes{runtime::SerializeDeviceAssignment(args->executable->loaded->device_assignment())};
  args->serialized_bytes = owned->bytes.data();
  args->serialized_bytes_size = owned->bytes.size();
  args->serialized_device_assignment = reinterpret_cast<PJRT_DeviceAssignmentSerialized*>(owned);
  args->serialized_device_assignment_deleter = &DeleteOwnedBytes<PJRT_DeviceAssignmentSerialized>;
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_AddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, args->executable);
  const auto& ids = args->executable->loaded->logical_ids();
  if (!args->addressable_device_logical_ids) {
    args->num_addressable_device_logical_ids = ids.size();
    return nullptr;
  }
  if (args->num_addressable_device_logical_ids < ids.size())
    return ToPjrtError(InvalidArgument("PJRT_LoadedExecutable_AddressableDeviceLogicalIds: room for " +
                                       std::to_string(args->num_addressable_device_logical_ids) + " ids, need " +
                                       std::to_string(ids.size())));
  for (size_t i = 0; i < ids.size(); ++i)
    args->addressable_device_logical_ids[i] = PJRT_LogicalDeviceIds{ids[i].first, ids[i].second};
  args->num_addressable_device_logical_ids = ids.size();
  return nullptr;
}

PJRT_Error* PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args* args) {
  constexpr const char* kFn = "PJRT_LoadedExecutable_Execute";
  STABLERT_CAPI_ARGS(PJRT_LoadedExecutable_Execute, args);
  STABLERT_CAPI_REQUIRE(PJRT_LoadedExecutable_Execute, args->executable);
  STABLERT_CAPI_GUARD(PJRT_LoadedExecutable_Execute, {
    // A program without results needs no output lists; JAX passes null ones then, and also
    // when none of the program's devices is in this process (num_devices 0).
    const bool has_outputs = !args->executable->loaded->executable()->result_types().empty();
    if (has_outputs && args->num_devices > 0 && !args->output_lists)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": output_lists is null"));
    if (args->num_devices > 0 && args->num_args > 0 && !args->argument_lists)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": argument_lists is null"));
    PJRT_Client* client = args->executable->client;
    STABLERT_CAPI_RETURN_IF_ERROR(CheckOwnDevice(kFn, "execute_device", client, args->execute_device));
    // The list counts are checked before any list is read: the caller's arrays have the
    // executable's sizes, not the ones it claims.
    const runtime::LoadedExecutable& loaded = *args->executable->loaded;
    const size_t num_lists = args->execute_device ? 1 : loaded.addressable_devices().size();
    if (args->num_devices != num_lists) {
      if (args->execute_device)
        return ToPjrtError(InvalidArgument(std::string(kFn) + ": execute_device is set, so exactly 1 argument list is "
                                           "expected, got " + std::to_string(args->num_devices)));
      // XLA's wording, which frameworks know.
      const runtime::Executable& executable = *loaded.executable();
      return ToPjrtError(InvalidArgument(
          "Attempted to execute with " + std::to_string(args->num_devices) +
          " argument lists when local device count is " + std::to_string(num_lists) +
          " (total replica count: " + std::to_string(executable.num_replicas()) +
          ", partition count: " + std::to_string(executable.num_partitions()) + ")"));
    }
    // A program whose devices are all in other processes of the job: nothing runs here (its
    // collectives involve only those processes).
    if (num_lists == 0) return nullptr;
    const size_t num_parameters = loaded.executable()->local_parameter_types().size();
    if (args->num_args != num_parameters)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": " + loaded.executable()->name() + " takes " +
                                         std::to_string(num_parameters) + " arguments, got " +
                                         std::to_string(args->num_args)));
    std::vector<std::vector<runtime::Buffer*>> arguments(args->num_devices);
    for (size_t d = 0; d < args->num_devices; ++d) {
      if (args->num_args > 0 && !args->argument_lists[d])
        return ToPjrtError(InvalidArgument(std::string(kFn) + ": argument list " + std::to_string(d) + " is null"));
      for (size_t i = 0; i < args->num_args; ++i) {
        PJRT_Buffer* buffer = args->argument_lists[d][i];
        if (!buffer)
          return ToPjrtError(InvalidArgument(std::string(kFn) + ": argument " + std::to_string(i) + " of device list " +
                                             std::to_string(d) + " is null"));
        if (!IsLiveBuffer(buffer))
          return ToPjrtError(InvalidArgument(std::string(kFn) + ": argument " + std::to_string(i) +
                                             " of argument list " + std::to_string(d) +
                                             " is not a live buffer of this plugin (destroyed already, or another "
                                             "plugin's)"));
        if (buffer->client != client)
          return ToPjrtError(InvalidArgument(std::string(kFn) + ": argument " + std::to_string(i) +
                                             " of argument list " + std::to_string(d) +
                                             " belongs to another client than the executable"));
        arguments[d].push_back(buffer->buffer.get());
      }
      if (has_outputs && !args->output_lists[d])
        return ToPjrtError(InvalidArgument(std::string(kFn) + ": output list " + std::to_string(d) + " is null"));
    }
    std::vector<int64_t> non_donatable;
    const PJRT_ExecuteOptions* options = args->options;
    // The execute context's FFI user data, copied: the caller may destroy the context as
    // soon as this returns (the data it points to stays the caller's, alive until the
    // execution is done).
    std::shared_ptr<const kernels::ffi::UserData> ffi_user_data;
    if (options && options->struct_size >= offsetof(PJRT_ExecuteOptions, context) + sizeof(options->context)) {
      STABLERT_CAPI_RETURN_IF_ERROR(CheckLiveExecuteContext("PJRT_LoadedExecutable_Execute", options->context));
      if (options->context != nullptr) {
        std::lock_guard<std::mutex> lock(options->context->mutex);
        if (!options->context->ffi_user_data.empty())
          ffi_user_data = std::make_shared<const kernels::ffi::UserData>(options->context->ffi_user_data);
      }
    }
    if (options && options->struct_size >= offsetof(PJRT_ExecuteOptions, num_non_donatable_input_indices) +
                                               sizeof(options->num_non_donatable_input_indices) &&
        options->num_non_donatable_input_indices > 0) {
      if (!options->non_donatable_input_indices)
        return ToPjrtError(InvalidArgument(std::string(kFn) + ": non_donatable_input_indices is null"));
      non_donatable.assign(options->non_donatable_input_indices,
                           options->non_donatable_input_indices + options->num_non_donatable_input_indices);
    }
    runtime::Device* device = args->execute_device ? args->execute_device->device : nullptr;
    // Host transfers (send/recv callbacks, one list per argument list) serve the program's
    // stablehlo.send/recv host transfers.
    auto host_transfers = HostTransfersFromOptions(options, args->num_devices);
    if (!host_transfers.ok()) return ToPjrtError(host_transfers.status().WithPrefix(kFn));
    STABLERT_CAPI_ASSIGN_OR_RETURN(
        runtime::ExecuteResult result,
        args->executable->loaded->Execute(arguments, device, non_donatable, std::move(host_transfers).value(),
                                          options ? options->launch_id : 0, std::move(ffi_user_data)));
    for (size_t d = 0; d < result.outputs.size(); ++d) {
      for (size_t o = 0; o < result.outputs[d].size(); ++o)
        args->output_lists[d][o] = NewBufferHandle(std::move(result.outputs[d][o]), args->executable->client);
      if (args->device_complete_events) args->device_complete_events[d] = NewEvent(result.device_complete[d]);
    }
    return nullptr;
  })
}

}  // namespace stablert::capi
