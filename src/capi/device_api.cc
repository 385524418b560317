// PJRT_DeviceDescription_*, PJRT_Device_* and PJRT_Memory_* entry points.
#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"

namespace stablert::capi {

PJRT_Error* PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_DeviceDescription_Id, args);
  STABLERT_CAPI_REQUIRE(PJRT_DeviceDescription_Id, args->device_description);
  args->id = args->device_description->id;
  return nullptr;
}

PJRT_Error* PJRT_DeviceDescription_ProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_DeviceDescription_ProcessIndex, args);
  STABLERT_CAPI_REQUIRE(PJRT_DeviceDescription_ProcessIndex, args->device_description);
  args->process_index = args->device_description->process_index;
  return nullptr;
}

PJRT_Error* PJRT_DeviceDescription_Attributes(PJRT_DeviceDescription_Attributes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_DeviceDescription_Attributes, args);
  STABLERT_CAPI_REQUIRE(PJRT_DeviceDescription_Attributes, args->device_description);
  args->attributes = args->device_description->attributes.data();
  args->num_attributes = args->device_description->attributes.size();
  return nullptr;
}

PJRT_Error* PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_DeviceDescription_Kind, args);
  STABLERT_CAPI_REQUIRE(PJRT_DeviceDescription_Kind, args->device_description);
  args->device_kind = args->device_description->kind.c_str();
  args->device_kind_size = args->device_description->kind.size();
  return nullptr;
}

PJRT_Error* PJRT_DeviceDescription_DebugString(PJRT_DeviceDescription_DebugString_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_DeviceDescription_DebugString, args);
  STABLERT_CAPI_REQUIRE(PJRT_DeviceDescription_DebugString, args->device_description);
  args->debug_string = args->device_description->debug_string.c_str();
  args->debug_string_size = args->device_description->debug_string.size();
  return nullptr;
}

PJRT_Error* PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_DeviceDescription_ToString, args);
  STABLERT_CAPI_REQUIRE(PJRT_DeviceDescription_ToString, args->device_description);
  args->to_string = args->device_description->to_string.c_str();
  args->to_string_size = args->device_description->to_string.size();
  return nullptr;
}

PJRT_Error* PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_GetDescription, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_GetDescription, args->device);
  args->device_description = &args->device->description;
  return nullptr;
}

PJRT_Error* PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_IsAddressable, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_IsAddressable, args->device);
  args->is_addressable = args->device->device->is_addressable();
  return nullptr;
}

PJRT_Error* PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_LocalHardwareId, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_LocalHardwareId, args->device);
  args->local_hardware_id = args->device->device->local_hardware_id();
  return nullptr;
}

PJRT_Error* PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_AddressableMemories, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_AddressableMemories, args->device);
  args->memories = args->device->memories.data();
  args->num_memories = args->device->memories.size();
  return nullptr;
}

PJRT_Error* PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_DefaultMemory, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_DefaultMemory, args->device);
  args->memory = args->device->memories.front();
  return nullptr;
}

PJRT_Error* PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args* args) {
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Device_MemoryStats, args, bytes_in_use);
  STABLERT_CAPI_REQUIRE(PJRT_Device_MemoryStats, args->device);
  // The device's buffers (runtime/memory_stats.h); the fields past bytes_in_use are filled
  // as far as the caller's struct reaches.
  const runtime::MemoryStats::Snapshot stats = args->device->device->memory_stats()->Get();
  args->bytes_in_use = stats.bytes_in_use;
  using Args = PJRT_Device_MemoryStats_Args;
  auto fits = [&](size_t end) { return args->struct_size >= end; };
  if (fits(offsetof(Args, largest_alloc_size_is_set) + sizeof(bool))) {
    args->peak_bytes_in_use = stats.peak_bytes_in_use;
    args->peak_bytes_in_use_is_set = true;
    args->num_allocs = stats.num_allocs;
    args->num_allocs_is_set = true;
    args->largest_alloc_size = stats.largest_alloc_size;
    args->largest_alloc_size_is_set = true;
  }
  // Not tracked: the limits, reservations and pools.
  if (fits(offsetof(Args, bytes_limit_is_set) + sizeof(bool))) args->bytes_limit_is_set = false;
  if (fits(offsetof(Args, bytes_reservable_limit_is_set) + sizeof(bool))) {
    args->bytes_reserved_is_set = false;
    args->peak_bytes_reserved_is_set = false;
    args->bytes_reservable_limit_is_set = false;
  }
  if (fits(offsetof(Args, largest_free_block_bytes_is_set) + sizeof(bool))) args->largest_free_block_bytes_is_set = false;
  if (fits(offsetof(Args, peak_pool_bytes_is_set) + sizeof(bool))) {
    args->pool_bytes_is_set = false;
    args->peak_pool_bytes_is_set = false;
  }
  if (fits(offsetof(Args, peak_allocated_bytes_is_set) + sizeof(bool))) args->peak_allocated_bytes_is_set = false;
  return nullptr;
}

PJRT_Error* PJRT_Device_ClearMemoryStats(PJRT_Device_ClearMemoryStats_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_ClearMemoryStats, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_ClearMemoryStats, args->device);
  args->device->device->memory_stats()->ResetPeak();
  return nullptr;
}

PJRT_Error* PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_GetAttributes, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_GetAttributes, args->device);
  // The attributes live in the device description, owned by the client.
  args->attributes = args->device->description.attributes.data();
  args->num_attributes = args->device->description.attributes.size();
  args->device_attributes = nullptr;
  args->attributes_deleter = [](PJRT_Device_Attributes*) {};
  return nullptr;
}

PJRT_Error* PJRT_Memory_Id(PJRT_Memory_Id_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Memory_Id, args);
  STABLERT_CAPI_REQUIRE(PJRT_Memory_Id, args->memory);
  args->id = AsMemoryHandle(args->memory)->memory->id();
  return nullptr;
}

PJRT_Error* PJRT_Memory_Kind(PJRT_Memory_Kind_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Memory_Kind, args);
  STABLERT_CAPI_REQUIRE(PJRT_Memory_Kind, args->memory);
  const std::string& kind = AsMemoryHandle(args->memory)->memory->kind();
  args->kind = kind.c_str();
  args->kind_size = kind.size();
  return nullptr;
}

PJRT_Error* PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Memory_Kind_Id, args);
  STABLERT_CAPI_REQUIRE(PJRT_Memory_Kind_Id, args->memory);
  args->kind_id = AsMemoryHandle(args->memory)->memory->kind_id();
  return nullptr;
}

PJRT_Error* PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Memory_DebugString, args);
  STABLERT_CAPI_REQUIRE(PJRT_Memory_DebugString, args->memory);
  const std::string& text = AsMemoryHandle(args->memory)->debug_string;
  args->debug_string = text.c_str();
  args->debug_string_size = text.size();
  return nullptr;
}

PJRT_Error* PJRT_Memory_ToString(PJRT_Memory_ToString_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Memory_ToString, args);
  STABLERT_CAPI_REQUIRE(PJRT_Memory_ToString, args->memory);
  const std::string& text = AsMemoryHandle(args->memory)->to_string;
  args->to_string = text.c_str();
  args->to_string_size = text.size();
  return nullptr;
}

PJRT_Error* PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Memory_AddressableByDevices, args);
  STABLERT_CAPI_REQUIRE(PJRT_Memory_AddressableByDevices, args->memory);
  const auto& devices = AsMemoryHandle(args->memory)->devices;
  args->devices = devices.data();
  args->num_devices = devices.size();
  return nullptr;
}

}  // namespace stablert::capi

namespace stablert::capi {

// Makes the earliest execution of `launch_id` still queued on the device fail with the
// given error instead of running. Payloads are not kept (StableRT's errors carry none).
PJRT_Error* PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args* args) {
  constexpr const char* kFn = "PJRT_Device_PoisonExecution";
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Device_PoisonExecution, args, poisoned);
  STABLERT_CAPI_REQUIRE(PJRT_Device_PoisonExecution, args->device);
  STABLERT_CAPI_GUARD(PJRT_Device_PoisonExecution, {
    const int64_t code = RawEnumValue(args->error_code);
    STABLERT_CAPI_RETURN_IF_ERROR(CheckCallerErrorCode(kFn, "error_code", code, /*allow_ok=*/false));
    if (args->error_message_size > 0 && !args->error_message)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": error_message is null"));
    args->poisoned = args->device->device->pending_launches().Poison(
        args->launch_id, CallerStatus(code, args->error_message, args->error_message_size));
    return nullptr;
  })
}

}  // namespace stablert::capi
