#include "host/client.h"

#include "host/call.h"

namespace stablert::host {

StatusOr<std::shared_ptr<Client>> Client::Create(std::shared_ptr<const Plugin> plugin, const ClientOptions& options) {
  if (!plugin) return InvalidArgument("Client::Create: no plugin");
  std::shared_ptr<Client> client(new Client(plugin, options.key_value_store));
  std::vector<PJRT_NamedValue> raw_options = NamedValuesToPjrt(options.create_options);
  STABLERT_HOST_ARGS(PJRT_Client_Create, args);
  args.create_options = raw_options.data();
  args.num_options = raw_options.size();
  if (client->store_) SetKeyValueCallbacks(client->store_.get(), &args);
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin, PJRT_Client_Create, &args));
  client->client_ = args.client;
  STABLERT_RETURN_IF_ERROR(client->ReadFacts());
  return client;
}

Client::~Client() {
  if (!client_) return;
  STABLERT_HOST_ARGS(PJRT_Client_Destroy, args);
  args.client = client_;
  // Nothing can be reported from a destructor; a plugin that fails to destroy leaks its client.
  STABLERT_HOST_CALL(*plugin_, PJRT_Client_Destroy, &args).IgnoreError();
}

Status Client::ReadFacts() {
  {
    STABLERT_HOST_ARGS(PJRT_Client_PlatformName, args);
    args.client = client_;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Client_PlatformName, &args));
    platform_name_.assign(args.platform_name, args.platform_name_size);
  }
  {
    STABLERT_HOST_ARGS(PJRT_Client_PlatformVersion, args);
    args.client = client_;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Client_PlatformVersion, &args));
    platform_version_.assign(args.platform_version, args.platform_version_size);
  }
  {
    STABLERT_HOST_ARGS(PJRT_Client_ProcessIndex, args);
    args.client = client_;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Client_ProcessIndex, &args));
    process_index_ = args.process_index;
  }
  STABLERT_HOST_ARGS(PJRT_Client_Devices, args);
  args.client = client_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Client_Devices, &args));
  for (size_t i = 0; i < args.num_devices; ++i) {
    STABLERT_ASSIGN_OR_RETURN(Device device, Describe(args.devices[i]));
    if (device.addressable) addressable_devices_.push_back(device);
    devices_.push_back(std::move(device));
  }
  return OkStatus();
}

StatusOr<Device> Client::Describe(PJRT_Device* handle) const {
  Device device;
  device.handle = handle;
  STABLERT_HOST_ARGS(PJRT_Device_GetDescription, get);
  get.device = handle;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Device_GetDescription, &get));
  PJRT_DeviceDescription* description = get.device_description;
  {
    STABLERT_HOST_ARGS(PJRT_DeviceDescription_Id, args);
    args.device_description = description;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_DeviceDescription_Id, &args));
    device.id = args.id;
  }
  {
    STABLERT_HOST_ARGS(PJRT_DeviceDescription_ProcessIndex, args);
    args.device_description = description;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_DeviceDescription_ProcessIndex, &args));
    device.process_index = args.process_index;
  }
  {
    STABLERT_HOST_ARGS(PJRT_DeviceDescription_Kind, args);
    args.device_description = description;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_DeviceDescription_Kind, &args));
    device.kind.assign(args.device_kind, args.device_kind_size);
  }
  {
    STABLERT_HOST_ARGS(PJRT_DeviceDescription_DebugString, args);
    args.device_description = description;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_DeviceDescription_DebugString, &args));
    device.debug_string.assign(args.debug_string, args.debug_string_size);
  }
  {
    STABLERT_HOST_ARGS(PJRT_DeviceDescription_Attributes, args);
    args.device_description = description;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_DeviceDescription_Attributes, &args));
    STABLERT_ASSIGN_OR_RETURN(device.attributes,
                              NamedValuesFromPjrt(args.attributes, args.num_attributes, "PJRT_DeviceDescription_Attributes"));
  }
  {
    STABLERT_HOST_ARGS(PJRT_Device_IsAddressable, args);
    args.device = handle;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Device_IsAddressable, &args));
    device.addressable = args.is_addressable;
  }
  if (device.addressable) {
    STABLERT_HOST_ARGS(PJRT_Device_LocalHardwareId, args);
    args.device = handle;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Device_LocalHardwareId, &args));
    device.local_hardware_id = args.local_hardware_id;
  }
  return device;
}

StatusOr<Device> Client::DeviceById(int id) const {
  std::string ids;
  for (const Device& device : devices_) {
    if (device.id == id) return device;
    ids += (ids.empty() ? "" : ", ") + std::to_string(device.id);
  }
  return NotFound("no device with id " + std::to_string(id) + " on " + platform_name_ + " (devices: " + ids + ")");
}

StatusOr<Memory> Client::DescribeMemory(PJRT_Memory* handle) const {
  Memory memory;
  memory.handle = handle;
  {
    STABLERT_HOST_ARGS(PJRT_Memory_Id, args);
    args.memory = handle;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Memory_Id, &args));
    memory.id = args.id;
  }
  {
    STABLERT_HOST_ARGS(PJRT_Memory_Kind, args);
    args.memory = handle;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Memory_Kind, &args));
    memory.kind.assign(args.kind, args.kind_size);
  }
  {
    STABLERT_HOST_ARGS(PJRT_Memory_DebugString, args);
    args.memory = handle;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Memory_DebugString, &args));
    memory.debug_string.assign(args.debug_string, args.debug_string_size);
  }
  return memory;
}

StatusOr<std::vector<Memory>> Client::Memories(const Device& device) const {
  STABLERT_HOST_ARGS(PJRT_Device_AddressableMemories, args);
  args.device = device.handle;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Device_AddressableMemories, &args));
  std::vector<Memory> out;
  for (size_t i = 0; i < args.num_memories; ++i) {
    STABLERT_ASSIGN_OR_RETURN(Memory memory, DescribeMemory(args.memories[i]));
    out.push_back(std::move(memory));
  }
  return out;
}

StatusOr<Memory> Client::DefaultMemory(const Device& device) const {
  STABLERT_HOST_ARGS(PJRT_Device_DefaultMemory, args);
  args.device = device.handle;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*plugin_, PJRT_Device_DefaultMemory, &args));
  return DescribeMemory(args.memory);
}

}  // namespace stablert::host
