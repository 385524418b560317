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

// Calls `slot` with null handles and exits: 99 for no error, 100 + code for an error. A
// PJRT_Client_* slot gets a real client as its first handle (every such args struct has it
// right after struct_size and extension_start), so that only its other arguments are null.
[[noreturn]] void ProbeInChild(const PJRT_Api* api, AnySlot slot, bool with_client) {
  alignas(16) unsigned char args[2048] = {};
  size_t size = sizeof args;
  std::memcpy(args, &size, sizeof size);
  if (with_client) {
    PJRT_Client_Create_Args create{};
    create.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
    if (api->PJRT_Client_Create(&create) != nullptr) _exit(97);
    static_assert(offsetof(PJRT_Client_PlatformName_Args, client) == 16);
    std::memcpy(args + 16, &create.client, sizeof create.client);
  }
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
  slots.emplace_back(#name, plugin.Has(&PJRT_Api::name) ? reinterpret_cast<AnySlot>(api->name) : nullptr);
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
      ProbeInChild(api, slot, name.rfind("PJRT_Client_", 0) == 0 && plugin.Has(&PJRT_Api::PJRT_Client_Create));
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
