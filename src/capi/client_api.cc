// PJRT_Client_* entry points.
#include <cstring>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/layout.h"

namespace stablert::capi {
namespace {

StatusOr<std::vector<std::pair<std::string, runtime::ClientOptions::Value>>> ReadCreateOptions(
    const PJRT_NamedValue* options, size_t count) {
  std::vector<std::pair<std::string, runtime::ClientOptions::Value>> values;
  if (count > 0 && !options) return InvalidArgument("PJRT_Client_Create: create_options is null");
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& option = options[i];
    if (!option.name && option.name_size > 0)
      return InvalidArgument("PJRT_Client_Create: create option " + std::to_string(i) + " has no name");
    std::string name = option.name ? std::string(option.name, option.name_size) : std::string();
    if (name.empty()) return InvalidArgument("PJRT_Client_Create: create option " + std::to_string(i) + " has no name");
    auto null_value = [&](const char* field) {
      return InvalidArgument("PJRT_Client_Create: create option '" + name + "' has a null " + field +
                             " with value_size " + std::to_string(option.value_size) +
                             "; expected a pointer to value_size elements");
    };
    switch (RawEnumValue(option.type)) {
      case PJRT_NamedValue_kString:
        if (!option.string_value && option.value_size > 0) return null_value("string_value");
        values.emplace_back(name, option.string_value ? std::string(option.string_value, option.value_size)
                                                      : std::string());
        break;
      case PJRT_NamedValue_kInt64:
        values.emplace_back(name, option.int64_value);
        break;
      case PJRT_NamedValue_kInt64List:
        if (!option.int64_array_value && option.value_size > 0) return null_value("int64_array_value");
        values.emplace_back(name, option.int64_array_value
                                      ? std::vector<int64_t>(option.int64_array_value,
                                                             option.int64_array_value + option.value_size)
                                      : std::vector<int64_t>());
        break;
      case PJRT_NamedValue_kFloat:
        values.emplace_back(name, option.float_value);
        break;
      case PJRT_NamedValue_kBool:
        values.emplace_back(name, option.bool_value);
        break;
      default:
        return InvalidArgument("PJRT_Client_Create: create option '" + name + "' has unknown type " +
                               std::to_string(RawEnumValue(option.type)));
    }
  }
  return values;
}

// The memory a buffer goes to: `memory` if set, else `device`'s default memory. Both must
// be handles of `client` (checked by address, before they are read).
StatusOr<runtime::MemorySpace*> TargetMemory(const char* function, const PJRT_Client* client, PJRT_Memory* memory,
                                             PJRT_Device* device) {
  STABLERT_RETURN_IF_ERROR(CheckOwnMemory(function, "memory", client, memory));
  STABLERT_RETURN_IF_ERROR(CheckOwnDevice(function, "device", client, device));
  if (memory) return AsMemoryHandle(memory)->memory;
  if (device) return device->device->default_memory();
  return InvalidArgument(std::string(function) + ": neither device nor memory is set");
}

// The checked byte size of a buffer the caller describes, named by `function`.
StatusOr<std::pair<DType, Dims>> ToShape(const char* function, int64_t type, const int64_t* dims,
                                         size_t num_dims) {
  STABLERT_ASSIGN_OR_RETURN(DType dtype, ToDType(function, type));
  STABLERT_ASSIGN_OR_RETURN(Dims shape, ToDims(function, dims, num_dims));
  STABLERT_RETURN_IF_ERROR(ArrayByteSize(function, shape, dtype).status());
  return std::make_pair(dtype, std::move(shape));
}

PJRT_Error* NewCallbackError(PJRT_Error_Code code, const char* message, size_t message_size) {
  return ToPjrtError(CallerStatus(RawEnumValue(code), message, message_size));
}
PJRT_CallbackError kCallbackError = &NewCallbackError;

// The status of an error a store callback returned (and frees it).
Status TakeCallbackStatus(PJRT_Error* error) {
  if (!error) return OkStatus();
  Status status = FromPjrtError(error);
  PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  ErrorDestroy(&destroy);
  return status.ok() ? Internal("key-value store callback failed without a message") : status;
}

// The framework's key-value store callbacks as a runtime::KeyValueStore (empty functions
// when the caller passed none). The callbacks are thread-safe and blocking (PJRT contract).
runtime::KeyValueStore StoreOf(const PJRT_Client_Create_Args& args) {
  runtime::KeyValueStore store;
  if (args.kv_get_callback) {
    store.get = [get = args.kv_get_callback, user = args.kv_get_user_arg](
                    const std::string& key, std::chrono::milliseconds timeout) -> StatusOr<std::string> {
      PJRT_KeyValueGetCallback_Args call{};
      call.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
      call.key = key.data();
      call.key_size = key.size();
      call.timeout_in_ms = static_cast<int>(timeout.count());
      call.callback_error = &kCallbackError;
      call.user_arg = user;
      STABLERT_RETURN_IF_ERROR(TakeCallbackStatus(get(&call)));
      std::string value(call.value ? call.value : "", call.value ? call.value_size : 0);
      if (call.value && call.value_deleter_callback) call.value_deleter_callback(call.value);
      return value;
    };
  }
  if (args.kv_put_callback) {
    store.put = [put = args.kv_put_callback, user = args.kv_put_user_arg](const std::string& key,
                                                                          const std::string& value) -> Status {
      PJRT_KeyValuePutCallback_Args call{};
      call.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
      call.key = key.data();
      call.key_size = key.size();
      call.value = value.data();
      call.value_size = value.size();
      call.callback_error = &kCallbackError;
      call.user_arg = user;
      return TakeCallbackStatus(put(&call));
    };
  }
  return store;
}

}  // namespace

PJRT_Client* WrapClient(std::unique_ptr<runtime::Client> client) {
  auto* handle = new PJRT_Client;
  for (runtime::MemorySpace* memory : client->memories()) {
    auto memory_handle = NewMemoryHandle();
    memory_handle->memory = memory;
    memory_handle->client = handle;
    memory_handle->debug_string = memory->DebugString();
    memory_handle->to_string = memory->ToString();
    handle->memories.push_back(&memory_handle->base);
    handle->owned_memories.push_back(std::move(memory_handle));
  }
  for (runtime::Device* device : client->devices()) {
    auto device_handle = std::make_unique<PJRT_Device>();
    device_handle->device = device;
    device_handle->client = handle;
    FillDeviceDescription(device->id(), device->process_index(), device->local_hardware_id(),
                          &device_handle->description);
    for (runtime::MemorySpace* memory : device->memories()) device_handle->memories.push_back(handle->memories[memory->id()]);
    handle->devices.push_back(device_handle.get());
    if (device->is_addressable()) handle->addressable_devices.push_back(device_handle.get());
    handle->owned_devices.push_back(std::move(device_handle));
  }
  for (auto& memory : handle->owned_memories)
    for (runtime::Device* device : memory->memory->devices()) memory->devices.push_back(handle->Wrap(device));
  auto topology = std::make_unique<PJRT_TopologyDescription>();
  topology->client = handle;
  topology->device_count = static_cast<int>(handle->devices.size());
  for (PJRT_Device* device : handle->devices) topology->descriptions.push_back(&device->description);
  topology->platform_version = client->platform_version();
  topology->attributes.AddInt64("num_devices", static_cast<int64_t>(handle->devices.size()));
  topology->attributes.AddInt64("num_processes", client->process_count());
  topology->serialized = "stablert-topology:" + std::to_string(handle->devices.size());
  handle->topology = std::move(topology);
  handle->client = std::move(client);
  return handle;
}

PJRT_Error* PJRT_Client_Create(PJRT_Client_Create_Args* args) {
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Client_Create, args, client);
  STABLERT_CAPI_GUARD(PJRT_Client_Create, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto values, ReadCreateOptions(args->create_options, args->num_options));
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::ClientOptions options, runtime::ClientOptions::FromNamedValues(values));
    const runtime::KeyValueStore store = StoreOf(*args);
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Client> client, runtime::Client::Create(options, &store));
    args->client = WrapClient(std::move(client));
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_Destroy(PJRT_Client_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_Destroy, args);
  delete args->client;
  return nullptr;
}

PJRT_Error* PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_PlatformName, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_PlatformName, args->client);
  args->platform_name = runtime::kPlatformName;
  args->platform_name_size = std::strlen(runtime::kPlatformName);
  return nullptr;
}

PJRT_Error* PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_ProcessIndex, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_ProcessIndex, args->client);
  args->process_index = args->client->client->process_index();
  return nullptr;
}

PJRT_Error* PJRT_Client_PlatformVersion(PJRT_Client_PlatformVersion_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_PlatformVersion, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_PlatformVersion, args->client);
  const std::string& version = args->client->client->platform_version();
  args->platform_version = version.c_str();
  args->platform_version_size = version.size();
  return nullptr;
}

// JAX calls this after `jax.distributed.initialize` and aborts the process on any error, so
// every report consistent with the client's job is accepted and stored; only a report this
// client cannot honour (a task outside its job, a task twice, a null array) is an error.
PJRT_Error* PJRT_Client_UpdateGlobalProcessInfo(PJRT_Client_UpdateGlobalProcessInfo_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_UpdateGlobalProcessInfo, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_UpdateGlobalProcessInfo, args->client);
  STABLERT_CAPI_GUARD(PJRT_Client_UpdateGlobalProcessInfo, {
    if (args->num_process_infos > 0 && !args->process_infos)
      return ToPjrtError(InvalidArgument("PJRT_Client_UpdateGlobalProcessInfo: process_infos is null"));
    std::vector<runtime::ProcessInfo> infos;
    infos.reserve(args->num_process_infos);
    for (size_t i = 0; i < args->num_process_infos; ++i) {
      const PJRT_ProcessInfo& info = args->process_infos[i];
      STABLERT_CAPI_RETURN_IF_ERROR(CheckStructSize("PJRT_Client_UpdateGlobalProcessInfo", "PJRT_ProcessInfo",
                                                    info.struct_size, PJRT_ProcessInfo_STRUCT_SIZE));
      if (info.error_message_size > 0 && !info.error_message)
        return ToPjrtError(InvalidArgument("PJRT_Client_UpdateGlobalProcessInfo: process info " + std::to_string(i) +
                                           " has a null error_message"));
      runtime::ProcessInfo& out = infos.emplace_back();
      out.task_id = info.task_id;
      out.incarnation_id = info.incarnation_id;
      out.state = static_cast<runtime::ProcessInfo::State>(info.state);
      out.error_code = info.error_code;
      if (info.error_message_size > 0) out.error_message.assign(info.error_message, info.error_message_size);
    }
    runtime::Client& client = *args->client->client;
    STABLERT_CAPI_RETURN_IF_ERROR(client.global_process_info().Update(std::move(infos), client.process_count()));
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_Devices(PJRT_Client_Devices_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_Devices, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_Devices, args->client);
  args->devices = args->client->devices.data();
  args->num_devices = args->client->devices.size();
  return nullptr;
}

PJRT_Error* PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_AddressableDevices, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_AddressableDevices, args->client);
  args->addressable_devices = args->client->addressable_devices.data();
  args->num_addressable_devices = args->client->addressable_devices.size();
  return nullptr;
}

PJRT_Error* PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_LookupDevice, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_LookupDevice, args->client);
  STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::Device * device, args->client->client->LookupDevice(args->id));
  args->device = args->client->Wrap(device);
  return nullptr;
}

PJRT_Error* PJRT_Client_LookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_LookupAddressableDevice, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_LookupAddressableDevice, args->client);
  STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::Device * device,
                                 args->client->client->LookupAddressableDevice(args->local_hardware_id));
  args->addressable_device = args->client->Wrap(device);
  return nullptr;
}

PJRT_Error* PJRT_Client_AddressableMemories(PJRT_Client_AddressableMemories_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_AddressableMemories, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_AddressableMemories, args->client);
  args->addressable_memories = args->client->memories.data();
  args->num_addressable_memories = args->client->memories.size();
  return nullptr;
}

PJRT_Error* PJRT_Client_Compile(PJRT_Client_Compile_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_Compile, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_Compile, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_Compile, args->program);
  STABLERT_CAPI_GUARD(PJRT_Client_Compile, {
    const PJRT_Program* program = args->program;
    if (program->code_size > 0 && !program->code)
      return ToPjrtError(InvalidArgument("PJRT_Client_Compile: program code is null"));
    if (args->compile_options_size > 0 && !args->compile_options)
      return ToPjrtError(InvalidArgument("PJRT_Client_Compile: compile_options is null"));
    std::string_view format(program->format ? program->format : "", program->format ? program->format_size : 0);
    std::string_view code(program->code ? program->code : "", program->code_size);
    std::string_view options(args->compile_options ? args->compile_options : "", args->compile_options_size);
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto loaded, args->client->client->Compile(code, format, options));
    auto* handle = new PJRT_LoadedExecutable;
    handle->client = args->client;
    for (runtime::Device* device : loaded->addressable_devices())
      handle->addressable_devices.push_back(args->client->Wrap(device));
    handle->loaded = std::move(loaded);
    args->executable = handle;
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_DefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_DefaultDeviceAssignment, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_DefaultDeviceAssignment, args->client);
  int64_t needed = static_cast<int64_t>(args->num_replicas) * args->num_partitions;
  if (needed < 0 || args->default_assignment_size < static_cast<size_t>(needed))
    return ToPjrtError(FailedPrecondition(
        "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` " + std::to_string(args->default_assignment_size) +
        " < `num_replicas * num_partitions`, " + std::to_string(args->num_replicas) + " * " +
        std::to_string(args->num_partitions) + " = " + std::to_string(needed)));
  STABLERT_CAPI_REQUIRE(PJRT_Client_DefaultDeviceAssignment, args->default_assignment);
  STABLERT_CAPI_ASSIGN_OR_RETURN(auto assignment,
                                 args->client->client->DefaultDeviceAssignment(args->num_replicas, args->num_partitions));
  size_t next = 0;
  for (const auto& replica : assignment)
    for (int64_t id : replica) args->default_assignment[next++] = static_cast<int>(id);
  return nullptr;
}

PJRT_Error* PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Client_BufferFromHostBuffer";
  STABLERT_CAPI_ARGS(PJRT_Client_BufferFromHostBuffer, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_BufferFromHostBuffer, args->client);
  STABLERT_CAPI_GUARD(PJRT_Client_BufferFromHostBuffer, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto shape, ToShape(kFn, RawEnumValue(args->type), args->dims, args->num_dims));
    const auto& [dtype, dims] = shape;
    std::vector<int64_t> strides;
    if (args->num_byte_strides > 0) {
      if (!args->byte_strides || args->num_byte_strides != dims.size())
        return ToPjrtError(InvalidArgument(std::string(kFn) + ": " + std::to_string(args->num_byte_strides) +
                                           " byte strides for rank " + std::to_string(dims.size())));
      strides.assign(args->byte_strides, args->byte_strides + args->num_byte_strides);
      STABLERT_CAPI_RETURN_IF_ERROR(CheckHostSourceStrides(kFn, dims, dtype, strides));
    }
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> device_layout,
                                   DeviceLayoutOrder(kFn, args->device_layout, dims, dtype));
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace * memory,
                                   TargetMemory(kFn, args->client, args->memory, args->device));
    int64_t semantics = RawEnumValue(args->host_buffer_semantics);
    if (semantics < 0 || semantics > 3)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": unknown host_buffer_semantics " + std::to_string(semantics)));
    STABLERT_CAPI_ASSIGN_OR_RETURN(
        runtime::HostBufferResult result,
        NameFunction(kFn, args->client->client->BufferFromHostBuffer(
                              args->data, dtype, dims, strides, static_cast<runtime::HostBufferSemantics>(semantics),
                              memory, device_layout)));
    args->done_with_host_buffer = NewEvent(result.done_with_host_buffer);
    args->buffer = NewBufferHandle(std::move(result.buffer), args->client);
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_TopologyDescription(PJRT_Client_TopologyDescription_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_TopologyDescription, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_TopologyDescription, args->client);
  args->topology = args->client->topology.get();
  return nullptr;
}

PJRT_Error* PJRT_Client_CreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Client_CreateUninitializedBuffer";
  STABLERT_CAPI_ARGS(PJRT_Client_CreateUninitializedBuffer, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateUninitializedBuffer, args->client);
  STABLERT_CAPI_GUARD(PJRT_Client_CreateUninitializedBuffer, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto shape,
                                   ToShape(kFn, RawEnumValue(args->shape_element_type), args->shape_dims, args->shape_num_dims));
    const auto& [dtype, dims] = shape;
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> layout, DeviceLayoutOrder(kFn, args->shape_layout, dims, dtype));
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace * memory,
                                   TargetMemory(kFn, args->client, args->memory, args->device));
    STABLERT_CAPI_ASSIGN_OR_RETURN(
        auto buffer, NameFunction(kFn, args->client->client->CreateUninitializedBuffer(dtype, dims, memory, layout)));
    args->buffer = NewBufferHandle(std::move(buffer), args->client);
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Client_CreateErrorBuffer";
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Client_CreateErrorBuffer, args, buffer);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateErrorBuffer, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateErrorBuffer, args->memory);
  STABLERT_CAPI_GUARD(PJRT_Client_CreateErrorBuffer, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto shape,
                                   ToShape(kFn, RawEnumValue(args->shape_element_type), args->shape_dims, args->shape_num_dims));
    const auto& [dtype, dims] = shape;
    STABLERT_CAPI_RETURN_IF_ERROR(CheckCallerErrorCode(kFn, "error_code", RawEnumValue(args->error_code),
                                                       /*allow_ok=*/false));
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace * memory, TargetMemory(kFn, args->client, args->memory, nullptr));
    Status error = CallerStatus(RawEnumValue(args->error_code), args->error_message, args->error_message_size);
    auto buffer = args->client->client->CreateErrorBuffer(error, dtype, dims, memory);
    args->buffer = NewBufferHandle(std::move(buffer), args->client);
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_CreateViewOfDeviceBuffer(PJRT_Client_CreateViewOfDeviceBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Client_CreateViewOfDeviceBuffer";
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Client_CreateViewOfDeviceBuffer, args, buffer);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateViewOfDeviceBuffer, args->client);
  STABLERT_CAPI_GUARD(PJRT_Client_CreateViewOfDeviceBuffer, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto shape, ToShape(kFn, RawEnumValue(args->element_type), args->dims, args->num_dims));
    const auto& [dtype, dims] = shape;
    // A view in another dense dimension order keeps it (jaxlib's DLPack import of a
    // column-major tensor asks for one).
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> layout, DeviceLayoutOrder(kFn, args->layout, dims, dtype));
    bool has_memory = args->struct_size >= PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE;
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace * memory,
                                   TargetMemory(kFn, args->client, has_memory ? args->memory : nullptr, args->device));
    STABLERT_CAPI_ASSIGN_OR_RETURN(int64_t bytes, ArrayByteSize(kFn, dims, dtype));
    if (bytes > 0 && !args->device_buffer_ptr)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": device_buffer_ptr is null"));
    void* data = args->device_buffer_ptr;
    auto on_delete = args->on_delete_callback;
    void* on_delete_arg = args->on_delete_callback_arg;
    auto storage = runtime::BufferStorage::Borrow(data, static_cast<size_t>(bytes), [=] {
      if (on_delete) on_delete(data, on_delete_arg);
    });
    auto buffer = std::make_unique<runtime::Buffer>(dtype, dims, memory->devices().front(), memory, std::move(storage),
                                                    runtime::Event::Ready(), layout);
    args->buffer = NewBufferHandle(std::move(buffer), args->client);
    return nullptr;
  })
}

}  // namespace stablert::capi
