#include "host/slot_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <thread>

namespace stablert::host {
namespace {

using AnySlot = PJRT_Error* (*)(void*);

// The first handle of a slot's args struct, for the families whose args all start with one
// (right after struct_size and extension_start): a real object made in the child, so that
// only the slot's other arguments are null. nullptr for other slots or if it cannot be made.
void* FirstHandle(const PJRT_Api* api, const std::string& name, bool can_create_client) {
  static_assert(offsetof(PJRT_Client_PlatformName_Args, client) == 16);
  static_assert(offsetof(PJRT_Device_IsAddressable_Args, device) == 16);
  static_assert(offsetof(PJRT_DeviceDescription_Id_Args, device_description) == 16);
  static_assert(offsetof(PJRT_Memory_Id_Args, memory) == 16);
  static_assert(offsetof(PJRT_Buffer_Dimensions_Args, buffer) == 16);
  static_assert(offsetof(PJRT_Buffer_ToHostBuffer_Args, src) == 16);
  static_assert(offsetof(PJRT_Event_IsReady_Args, event) == 16);
  static_assert(offsetof(PJRT_TopologyDescription_PlatformName_Args, topology) == 16);
  auto family = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
  bool wanted = family("PJRT_Client_") || family("PJRT_Device_") || family("PJRT_DeviceDescription_") ||
                family("PJRT_Memory_") || family("PJRT_Buffer_") || family("PJRT_Event_") ||
                (family("PJRT_TopologyDescription_") && name != "PJRT_TopologyDescription_Create");
  if (!wanted || !can_create_client) return nullptr;
  PJRT_Client_Create_Args create{};
  create.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  if (api->PJRT_Client_Create(&create) != nullptr) return nullptr;
  if (family("PJRT_Client_")) return create.client;
  if (family("PJRT_TopologyDescription_")) {
    PJRT_Client_TopologyDescription_Args topology{};
    topology.struct_size = PJRT_Client_TopologyDescription_Args_STRUCT_SIZE;
    topology.client = create.client;
    if (!api->PJRT_Client_TopologyDescription || api->PJRT_Client_TopologyDescription(&topology)) return nullptr;
    return topology.topology;
  }
  PJRT_Client_AddressableDevices_Args devices{};
  devices.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  devices.client = create.client;
  if (api->PJRT_Client_AddressableDevices(&devices) != nullptr || devices.num_addressable_devices == 0) return nullptr;
  PJRT_Device* device = devices.addressable_devices[0];
  if (family("PJRT_DeviceDescription_")) {
    PJRT_Device_GetDescription_Args description{};
    description.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
    description.device = device;
    if (api->PJRT_Device_GetDescription(&description) != nullptr) return nullptr;
    return description.device_description;
  }
  if (family("PJRT_Device_")) return device;
  if (family("PJRT_Memory_")) {
    PJRT_Device_DefaultMemory_Args memory{};
    memory.struct_size = PJRT_Device_DefaultMemory_Args_STRUCT_SIZE;
    memory.device = device;
    if (api->PJRT_Device_DefaultMemory(&memory) != nullptr) return nullptr;
    return memory.memory;
  }
  static const float value = 1.0f;
  static const int64_t dims[1] = {1};
  PJRT_Client_BufferFromHostBuffer_Args buffer{};
  buffer.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  buffer.client = create.client;
  buffer.data = &value;
  buffer.type = PJRT_Buffer_Type_F32;
  buffer.dims = dims;
  buffer.num_dims = 1;
  buffer.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  buffer.device = device;
  if (api->PJRT_Client_BufferFromHostBuffer(&buffer) != nullptr) return nullptr;
  if (family("PJRT_Buffer_")) return buffer.buffer;
  PJRT_Buffer_ReadyEvent_Args ready{};
  ready.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
  ready.buffer = buffer.buffer;
  if (api->PJRT_Buffer_ReadyEvent(&ready) != nullptr) return nullptr;
  return ready.event;
}

// Calls `slot` with null handles and exits: 99 for no error, 100 + code for an error. Slots of
// the families FirstHandle knows get a real first handle.
[[noreturn]] void ProbeInChild(const PJRT_Api* api, AnySlot slot, const std::string& name, bool can_create_client) {
  alignas(16) unsigned char args[2048] = {};
  size_t size = sizeof args;
  std::memcpy(args, &size, sizeof size);
  if (void* handle = FirstHandle(api, name, can_create_client)) std::memcpy(args + 16, &handle, sizeof handle);
  PJRT_Error* error = slot(args);
  if (!error) _exit(99);
  PJRT_Error_GetCode_Args code{};
  code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code.error = error;
  if (api->PJRT_Error_GetCode(&code) != nullptr) _exit(98);
  _exit(100 + static_cast<int>(code.code));
}

bool Skipped(const std::string& name) {
  return name.rfind("PJRT_Error_", 0) == 0 || name == "PJRT_Plugin_Initialize" || name == "PJRT_Client_Create";
}

}  // namespace

const char* SlotAnswerName(SlotAnswer answer) {
  switch (answer) {
    case SlotAnswer::kAbsent: return "absent";
    case SlotAnswer::kNotProbed: return "not probed";
    case SlotAnswer::kUnimplemented: return "UNIMPLEMENTED";
    case SlotAnswer::kRejected: return "rejects null handles";
    case SlotAnswer::kAccepted: return "accepts null handles";
    case SlotAnswer::kCrashed: return "crashes on null handles";
    case SlotAnswer::kTimedOut: return "hangs on null handles";
  }
  return "?";
}

std::vector<SlotProbe> ProbeSlots(const Plugin& plugin, std::chrono::milliseconds timeout) {
  const PJRT_Api* api = plugin.api();
  std::vector<std::pair<std::string, AnySlot>> slots;
#define PJRT_API_SLOT(name) \
  slots.emplace_back(#name, plugin.Has(&PJRT_Api::name) ? reinterpret_cast<AnySlot>(reinterpret_cast<void (*)()>(api->name)) : nullptr);
#include "base/pjrt_api_slots.def"
#undef PJRT_API_SLOT
  std::vector<SlotProbe> out;
  std::fflush(nullptr);
  for (const auto& [name, slot] : slots) {
    SlotProbe probe{name, SlotAnswer::kAbsent, ""};
    if (slot && Skipped(name)) probe.answer = SlotAnswer::kNotProbed;
    if (!slot || Skipped(name)) {
      out.push_back(std::move(probe));
      continue;
    }
    pid_t pid = fork();
    if (pid == 0) {
      // The plugin's own messages about the bad call are noise here.
      int null_fd = ::open("/dev/null", 0);
      if (null_fd >= 0) {
        dup2(null_fd, 1);
        dup2(null_fd, 2);
      }
      bool can_create_client = plugin.Has(&PJRT_Api::PJRT_Client_Create) &&
                               plugin.Has(&PJRT_Api::PJRT_Client_AddressableDevices) &&
                               plugin.Has(&PJRT_Api::PJRT_Device_GetDescription) &&
                               plugin.Has(&PJRT_Api::PJRT_Device_DefaultMemory) &&
                               plugin.Has(&PJRT_Api::PJRT_Client_BufferFromHostBuffer) &&
                               plugin.Has(&PJRT_Api::PJRT_Buffer_ReadyEvent);
      ProbeInChild(api, slot, name, can_create_client);
    }
    if (pid < 0) {
      probe.answer = SlotAnswer::kNotProbed;
      probe.detail = "fork failed";
      out.push_back(std::move(probe));
      continue;
    }
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      probe.answer = SlotAnswer::kTimedOut;
    } else if (WIFSIGNALED(status)) {
      probe.answer = SlotAnswer::kCrashed;
      probe.detail = strsignal(WTERMSIG(status));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 99) {
      probe.answer = SlotAnswer::kAccepted;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) >= 100) {
      int code = WEXITSTATUS(status) - 100;
      probe.answer = code == PJRT_Error_Code_UNIMPLEMENTED ? SlotAnswer::kUnimplemented : SlotAnswer::kRejected;
      probe.detail = std::string(StatusCodeName(static_cast<StatusCode>(code)));
    } else {
      probe.answer = SlotAnswer::kNotProbed;
      probe.detail = "the probe exited with " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    out.push_back(std::move(probe));
  }
  return out;
}

}  // namespace stablert::host
