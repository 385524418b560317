// Trace: what the profiler records while a trace is active (PJRT profiler extension,
// capi/profiler_extension.cc): one event per execution on a device and one per plan step it
// runs, with the step's op and source location, on wall-clock nanoseconds.
//
// Recording is off unless a trace is active; the executor's only cost then is Active(), a
// relaxed atomic load per step. All functions are thread-safe. Events are copied in (no
// pointers into plans), so a trace outlives the executables it saw.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stablert::runtime::trace {

enum class EventKind : uint8_t { kExecution, kStep };

struct Event {
  EventKind kind = EventKind::kStep;
  int device_id = -1;     // the device whose execution ran it
  std::string name;       // the executable's name, or the step's op ("stablehlo.dot_general")
  std::string detail;     // a step's source location and kernel; empty for executions
  int64_t start_ns = 0;   // wall clock (CLOCK_REALTIME), as the host profiler's
  int64_t end_ns = 0;
};

namespace internal {
extern std::atomic<int> active_sessions;
}  // namespace internal

// Whether a trace is recording.
inline bool Active() { return internal::active_sessions.load(std::memory_order_relaxed) > 0; }

// Wall-clock nanoseconds (CLOCK_REALTIME).
int64_t NowNs();

// Starts recording (nested sessions count; events of one session are not cleared by
// another's start). Returns the session's start time.
int64_t Start();
// Stops one session's recording and returns the events recorded since `since_ns` (its start);
// the buffer is cleared once no session is active.
std::vector<Event> Stop(int64_t since_ns);

void Record(Event event);

// The device the current thread computes for, set by the execution around its plan (so step
// events know their device); -1 outside executions.
int CurrentDevice();
class ScopedDevice {
 public:
  explicit ScopedDevice(int device_id);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_;
};

}  // namespace stablert::runtime::trace
