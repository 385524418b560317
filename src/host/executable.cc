#include "host/executable.h"

#include <algorithm>
#include <cstddef>

#include "base/proto_wire.h"
#include "host/call.h"
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"

namespace stablert::host {

std::string SerializeCompileOptions(const CompileOptions& options) {
  // xla.DeviceAssignmentProto: one ComputationDevice per partition listing its replicas' ids.
  proto::WireWriter assignment;
  assignment.Varint(1, static_cast<uint64_t>(options.num_replicas));    // replica_count
  assignment.Varint(2, static_cast<uint64_t>(options.num_partitions));  // computation_count
  for (int p = 0; p < options.num_partitions; ++p) {
    std::vector<int64_t> ids;
    for (int r = 0; r < options.num_replicas; ++r) {
      size_t index = static_cast<size_t>(r * options.num_partitions + p);
      ids.push_back(index < options.device_ids.size() ? options.device_ids[index] : static_cast<int64_t>(index));
    }
    proto::WireWriter computation;
    computation.PackedVarints(1, ids);  // replica_device_ids
    assignment.Bytes(3, computation.data());
  }
  // xla.ExecutableBuildOptionsProto.
  proto::WireWriter build;
  build.Varint(4, static_cast<uint64_t>(options.num_replicas));
  build.Varint(5, static_cast<uint64_t>(options.num_partitions));
  build.Varint(6, options.num_partitions > 1 ? 1 : 0);  // use_spmd_partitioning
  if (options.use_shardy_partitioner) build.Varint(19, 1);  // use_shardy_partitioner
  build.Bytes(9, assignment.data());
  proto::WireWriter compile;
  compile.Bytes(3, build.data());  // executable_build_options
  return compile.Take();
}

StatusOr<std::shared_ptr<LoadedExecutable>> LoadedExecutable::Compile(const std::shared_ptr<Client>& client,
                                                                      const Program& program,
                                                                      const CompileOptions& options) {
  if (!client) return InvalidArgument("LoadedExecutable::Compile: no client");
  if (options.num_replicas < 1 || options.num_partitions < 1)
    return InvalidArgument("LoadedExecutable::Compile: num_replicas and num_partitions must be at least 1");
  CompileOptions resolved = options;
  size_t needed = static_cast<size_t>(options.num_replicas) * static_cast<size_t>(options.num_partitions);
  if (resolved.device_ids.empty()) {
    if (client->addressable_devices().size() < needed)
      return InvalidArgument("LoadedExecutable::Compile: " + std::to_string(needed) + " devices needed, " +
                             client->platform_name() + " has " +
                             std::to_string(client->addressable_devices().size()));
    for (size_t i = 0; i < needed; ++i) resolved.device_ids.push_back(client->addressable_devices()[i].id);
  } else if (resolved.device_ids.size() != needed) {
    return InvalidArgument("LoadedExecutable::Compile: " + std::to_string(resolved.device_ids.size()) +
                           " device ids for " + std::to_string(needed) + " replicas x partitions");
  }
  std::string serialized = SerializeCompileOptions(resolved);
  PJRT_Program raw{};
  raw.struct_size = PJRT_Program_STRUCT_SIZE;
  std::string code = program.code;  // PJRT_Program.code is not const
  raw.code = code.data();
  raw.code_size = code.size();
  raw.format = program.format.data();
  raw.format_size = program.format.size();
  STABLERT_HOST_ARGS(PJRT_Client_Compile, args);
  args.client = client->handle();
  args.program = &raw;
  args.compile_options = serialized.data();
  args.compile_options_size = serialized.size();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*client->plugin(), PJRT_Client_Compile, &args));
  std::shared_ptr<LoadedExecutable> executable(new LoadedExecutable(client, args.executable));
  STABLERT_RETURN_IF_ERROR(executable->ReadFacts());
  return executable;
}

LoadedExecutable::~LoadedExecutable() {
  if (!executable_) return;
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_Destroy, args);
  args.executable = executable_;
  STABLERT_HOST_CALL(*client_->plugin(), PJRT_LoadedExecutable_Destroy, &args).IgnoreError();
}

Status LoadedExecutable::ReadFacts() {
  const Plugin& plugin = *client_->plugin();
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_GetExecutable, get);
  get.loaded_executable = executable_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_LoadedExecutable_GetExecutable, &get));
  Status status;
  {
    STABLERT_HOST_ARGS(PJRT_Executable_Name, args);
    args.executable = get.executable;
    status = STABLERT_HOST_CALL(plugin, PJRT_Executable_Name, &args);
    if (status.ok()) name_.assign(args.executable_name, args.executable_name_size);
  }
  if (status.ok()) {
    STABLERT_HOST_ARGS(PJRT_Executable_NumOutputs, args);
    args.executable = get.executable;
    status = STABLERT_HOST_CALL(plugin, PJRT_Executable_NumOutputs, &args);
    num_outputs_ = args.num_outputs;
  }
  STABLERT_HOST_ARGS(PJRT_Executable_Destroy, destroy);
  destroy.executable = get.executable;
  Status destroyed = STABLERT_HOST_CALL(plugin, PJRT_Executable_Destroy, &destroy);
  STABLERT_RETURN_IF_ERROR(status);
  STABLERT_RETURN_IF_ERROR(destroyed);
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_AddressableDevices, devices);
  devices.executable = executable_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_LoadedExecutable_AddressableDevices, &devices));
  for (size_t i = 0; i < devices.num_addressable_devices; ++i) {
    bool found = false;
    for (const Device& device : client_->devices())
      if (device.handle == devices.addressable_devices[i]) {
        devices_.push_back(device);
        found = true;
      }
    if (!found)
      return Internal("PJRT_LoadedExecutable_AddressableDevices: device " + std::to_string(i) +
                      " is not one of the client's devices");
  }
  return OkStatus();
}

StatusOr<ExecuteResult> LoadedExecutable::Execute(const std::vector<std::vector<const Buffer*>>& arguments,
                                                  const std::vector<int64_t>& non_donatable) const {
  if (arguments.size() != devices_.size())
    return InvalidArgument("Execute of '" + name_ + "': argument lists for " + std::to_string(arguments.size()) +
                           " devices, the executable runs on " + std::to_string(devices_.size()));
  size_t num_args = arguments.empty() ? 0 : arguments[0].size();
  std::vector<std::vector<PJRT_Buffer*>> raw_arguments;
  for (size_t d = 0; d < arguments.size(); ++d) {
    if (arguments[d].size() != num_args)
      return InvalidArgument("Execute of '" + name_ + "': device " + std::to_string(d) + " has " +
                             std::to_string(arguments[d].size()) + " arguments, device 0 has " +
                             std::to_string(num_args));
    std::vector<PJRT_Buffer*>& raw = raw_arguments.emplace_back();
    for (const Buffer* buffer : arguments[d]) {
      if (!buffer || !buffer->handle())
        return InvalidArgument("Execute of '" + name_ + "': a null or moved-from argument buffer");
      raw.push_back(buffer->handle());
    }
  }
  std::vector<PJRT_Buffer* const*> argument_lists;
  for (const std::vector<PJRT_Buffer*>& raw : raw_arguments) argument_lists.push_back(raw.data());
  std::vector<std::vector<PJRT_Buffer*>> raw_outputs(devices_.size(), std::vector<PJRT_Buffer*>(num_outputs_));
  std::vector<PJRT_Buffer**> output_lists;
  for (std::vector<PJRT_Buffer*>& raw : raw_outputs) output_lists.push_back(raw.data());
  std::vector<PJRT_Event*> events(devices_.size(), nullptr);

  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  options.non_donatable_input_indices = non_donatable.data();
  options.num_non_donatable_input_indices = non_donatable.size();
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_Execute, args);
  args.executable = executable_;
  args.options = &options;
  args.argument_lists = argument_lists.data();
  args.num_devices = devices_.size();
  args.num_args = num_args;
  args.output_lists = output_lists.data();
  args.device_complete_events = events.data();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*client_->plugin(), PJRT_LoadedExecutable_Execute, &args));
  ExecuteResult result;
  for (size_t d = 0; d < devices_.size(); ++d) {
    std::vector<Buffer>& outputs = result.outputs.emplace_back();
    for (PJRT_Buffer* raw : raw_outputs[d]) outputs.emplace_back(client_, raw);
    result.done.push_back(Future::FromEvent(client_->plugin(), events[d], "execution of '" + name_ + "'"));
  }
  return result;
}

StatusOr<std::string> LoadedExecutable::Serialize() const {
  const Plugin& plugin = *client_->plugin();
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_GetExecutable, get);
  get.loaded_executable = executable_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_LoadedExecutable_GetExecutable, &get));
  STABLERT_HOST_ARGS(PJRT_Executable_Serialize, args);
  args.executable = get.executable;
  Status status = STABLERT_HOST_CALL(plugin, PJRT_Executable_Serialize, &args);
  std::string bytes;
  if (status.ok()) {
    bytes.assign(args.serialized_bytes, args.serialized_bytes_size);
    if (args.serialized_executable_deleter) args.serialized_executable_deleter(args.serialized_executable);
  }
  STABLERT_HOST_ARGS(PJRT_Executable_Destroy, destroy);
  destroy.executable = get.executable;
  Status destroyed = STABLERT_HOST_CALL(plugin, PJRT_Executable_Destroy, &destroy);
  STABLERT_RETURN_IF_ERROR(status);
  STABLERT_RETURN_IF_ERROR(destroyed);
  return bytes;
}

namespace {

// The Shardings extension's output shardings, or nullopt when the plugin lacks the extension
// (or this member of it) or does not answer for all `num_outputs` outputs.
StatusOr<std::optional<std::vector<std::string>>> ShardingsFromExtension(const Plugin& plugin,
                                                                         PJRT_Executable* executable,
                                                                         size_t num_outputs) {
  const auto* extension =
      reinterpret_cast<const PJRT_Shardings_Extension*>(plugin.FindExtension(PJRT_Extension_Type_Shardings));
  constexpr size_t kMemberEnd =
      offsetof(PJRT_Shardings_Extension, PJRT_Shardings_PJRT_Executable_OutputShardings) + sizeof(void*);
  if (!extension || extension->base.struct_size < kMemberEnd ||
      !extension->PJRT_Shardings_PJRT_Executable_OutputShardings)
    return std::optional<std::vector<std::string>>();
  PJRT_Shardings_PJRT_Executable_OutputShardings_Args args{};
  args.struct_size = PJRT_Shardings_PJRT_Executable_OutputShardings_Args_STRUCT_SIZE;
  args.executable = executable;
  STABLERT_RETURN_IF_ERROR(plugin.TakeError(extension->PJRT_Shardings_PJRT_Executable_OutputShardings(&args),
                                            "PJRT_Shardings_PJRT_Executable_OutputShardings"));
  if (!args.shardings || !args.sharding_sizes || args.num_outputs != num_outputs || num_outputs == 0)
    return std::optional<std::vector<std::string>>();
  std::vector<std::string> shardings;
  for (size_t i = 0; i < args.num_outputs; ++i) {
    if (!args.shardings[i] && args.sharding_sizes[i] != 0)
      return Internal("PJRT_Shardings_PJRT_Executable_OutputShardings: output " + std::to_string(i) +
                      " has a null sharding of " + std::to_string(args.sharding_sizes[i]) + " bytes");
    shardings.emplace_back(args.shardings[i] ? args.shardings[i] : "", args.sharding_sizes[i]);
  }
  return std::optional<std::vector<std::string>>(std::move(shardings));
}

// The last occurrence of length-delimited field `number` in `message` (proto's rule for a
// repeated singular field), or nullopt.
StatusOr<std::optional<std::string_view>> LastBytesField(std::string_view message, uint32_t number) {
  proto::WireReader reader(message);
  std::optional<std::string_view> found;
  while (!reader.done()) {
    STABLERT_ASSIGN_OR_RETURN(proto::Field field, reader.Next());
    if (field.number == number && field.wire_type == proto::WireType::kLengthDelimited) found = field.bytes;
  }
  return found;
}

// Splits an xla.OpSharding into one sharding per output: a TUPLE's tuple_shardings, or the
// sharding itself for a single output.
StatusOr<std::vector<std::string>> SplitOutputSharding(std::string_view sharding, size_t num_outputs) {
  constexpr uint32_t kType = 1, kTupleShardings = 5;
  constexpr uint64_t kTuple = 2;
  proto::WireReader reader(sharding);
  uint64_t type = 0;
  std::vector<std::string> tuple;
  while (!reader.done()) {
    STABLERT_ASSIGN_OR_RETURN(proto::Field field, reader.Next());
    if (field.number == kType && field.wire_type == proto::WireType::kVarint) type = field.varint;
    if (field.number == kTupleShardings && field.wire_type == proto::WireType::kLengthDelimited)
      tuple.emplace_back(field.bytes);
  }
  if (type != kTuple) {
    if (num_outputs != 1)
      return Internal("the optimized program's spmd_output_sharding is not a tuple, for " +
                      std::to_string(num_outputs) + " outputs");
    return std::vector<std::string>{std::string(sharding)};
  }
  if (tuple.size() != num_outputs)
    return Internal("the optimized program's spmd_output_sharding has " + std::to_string(tuple.size()) +
                    " entries, for " + std::to_string(num_outputs) + " outputs");
  return tuple;
}

// The output shardings in PJRT_Executable_OptimizedProgram's HloModuleProto; nullopt when the
// plugin lacks or refuses the slot, or the module states none.
StatusOr<std::optional<std::vector<std::string>>> ShardingsFromOptimizedProgram(const Plugin& plugin,
                                                                                PJRT_Executable* executable,
                                                                                size_t num_outputs) {
  if (!plugin.Has(&PJRT_Api::PJRT_Executable_OptimizedProgram)) return std::optional<std::vector<std::string>>();
  PJRT_Program program{};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  STABLERT_HOST_ARGS(PJRT_Executable_OptimizedProgram, args);
  args.executable = executable;
  args.program = &program;
  Status sized = STABLERT_HOST_CALL(plugin, PJRT_Executable_OptimizedProgram, &args);
  if (sized.code() == StatusCode::kUnimplemented) return std::optional<std::vector<std::string>>();
  STABLERT_RETURN_IF_ERROR(sized);
  std::string code(program.code_size, '\0');
  program.code = code.data();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_Executable_OptimizedProgram, &args));
  code.resize(std::min(code.size(), program.code_size));
  std::string format = program.format ? std::string(program.format, program.format_size) : "";
  std::string_view module = code;
  constexpr uint32_t kHloModule = 1, kSpmdOutputSharding = 12;
  if (format == "hlo_with_config") {  // xla.HloModuleProtoWithConfig: hlo_module = 1
    STABLERT_ASSIGN_OR_RETURN(std::optional<std::string_view> inner, LastBytesField(module, kHloModule));
    if (!inner) return std::optional<std::vector<std::string>>();
    module = *inner;
  } else if (format != "hlo") {
    return std::optional<std::vector<std::string>>();  // a program form without shardings to read
  }
  StatusOr<std::optional<std::string_view>> sharding = LastBytesField(module, kSpmdOutputSharding);
  if (!sharding.ok()) return sharding.status().WithPrefix("PJRT_Executable_OptimizedProgram: the HloModuleProto");
  if (!*sharding) return std::optional<std::vector<std::string>>();
  StatusOr<std::vector<std::string>> split = SplitOutputSharding(**sharding, num_outputs);
  if (!split.ok()) return split.status().WithPrefix("PJRT_Executable_OptimizedProgram");
  return std::optional<std::vector<std::string>>(std::move(*split));
}

}  // namespace

StatusOr<std::optional<std::vector<std::string>>> LoadedExecutable::OutputShardings() const {
  const Plugin& plugin = *client_->plugin();
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_GetExecutable, get);
  get.loaded_executable = executable_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_LoadedExecutable_GetExecutable, &get));
  StatusOr<std::optional<std::vector<std::string>>> shardings = ShardingsFromExtension(plugin, get.executable, num_outputs_);
  if (shardings.ok() && !*shardings) shardings = ShardingsFromOptimizedProgram(plugin, get.executable, num_outputs_);
  STABLERT_HOST_ARGS(PJRT_Executable_Destroy, destroy);
  destroy.executable = get.executable;
  Status destroyed = STABLERT_HOST_CALL(plugin, PJRT_Executable_Destroy, &destroy);
  if (shardings.ok() && !destroyed.ok()) return destroyed;
  return shardings;
}

}  // namespace stablert::host
