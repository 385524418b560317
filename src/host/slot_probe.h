// Which slots of a plugin's table are real and which are stubs: each present slot is called
// once with an args struct of null handles (struct_size large enough for any version; slots
// of the client, device, device description, memory, buffer, event and topology families get
// a real object of their family as their first field, and nulls after it), in a
// forked child process so that a plugin which dereferences the nulls crashes the child, not
// the caller. A stub answers UNIMPLEMENTED whatever its arguments; an implemented slot
// rejects the nulls (usually INVALID_ARGUMENT), or crashes, or accepts them.
//
// Slots that cannot be called meaningfully with nulls (PJRT_Error_*, PJRT_Plugin_Initialize,
// PJRT_Client_Create) are not probed. Thread-safety: call from one thread; it forks.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "host/plugin.h"

namespace stablert::host {

enum class SlotAnswer {
  kAbsent,         // outside the table or null
  kNotProbed,
  kUnimplemented,  // answered UNIMPLEMENTED: a stub
  kRejected,       // answered another error: implemented
  kAccepted,       // returned no error for null handles
  kCrashed,        // the child died on a signal (implemented, not null-safe)
  kTimedOut,
};
const char* SlotAnswerName(SlotAnswer answer);

struct SlotProbe {
  std::string name;
  SlotAnswer answer = SlotAnswer::kAbsent;
  std::string detail;  // the error code, or the signal
};

std::vector<SlotProbe> ProbeSlots(const Plugin& plugin,
                                  std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

}  // namespace stablert::host
