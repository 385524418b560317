#include "runtime/trace.h"

#include <ctime>
#include <mutex>
#include <utility>

namespace stablert::runtime::trace {
namespace internal {
std::atomic<int> active_sessions{0};
}  // namespace internal

namespace {

struct Buffer {
  std::mutex mutex;
  std::vector<Event> events;
};
Buffer& Events() {
  static auto* buffer = new Buffer;  // never destroyed: executions may record during exit
  return *buffer;
}

thread_local int current_device = -1;

}  // namespace

int64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

int64_t Start() {
  const int64_t start = NowNs();
  internal::active_sessions.fetch_add(1, std::memory_order_relaxed);
  return start;
}

std::vector<Event> Stop(int64_t since_ns) {
  Buffer& buffer = Events();
  std::lock_guard<std::mutex> lock(buffer.mutex);
  std::vector<Event> events;
  for (const Event& event : buffer.events)
    if (event.start_ns >= since_ns) events.push_back(event);
  if (internal::active_sessions.fetch_sub(1, std::memory_order_relaxed) == 1) buffer.events.clear();
  return events;
}

void Record(Event event) {
  if (!Active()) return;
  Buffer& buffer = Events();
  std::lock_guard<std::mutex> lock(buffer.mutex);
  buffer.events.push_back(std::move(event));
}

int CurrentDevice() { return current_device; }

ScopedDevice::ScopedDevice(int device_id) : previous_(current_device) { current_device = device_id; }
ScopedDevice::~ScopedDevice() { current_device = previous_; }

}  // namespace stablert::runtime::trace
