// Allocation counters of one device (PJRT_Device_MemoryStats): the buffers' storage
// allocated for it (runtime/buffer.h), counted when allocated and when released. Storage
// taken from the process-wide cache of released blocks counts as a new allocation: it is
// new storage as far as the program's buffers go. Executions' arenas are not counted
// (see the executable's memory statistics for those).
//
// Thread-safety: all methods are thread-safe (relaxed atomics; a snapshot's fields may
// come from slightly different moments).
#pragma once

#include <atomic>
#include <cstdint>

namespace stablert::runtime {

class MemoryStats {
 public:
  struct Snapshot {
    int64_t bytes_in_use = 0;
    int64_t peak_bytes_in_use = 0;
    int64_t num_allocs = 0;          // since the process started
    int64_t largest_alloc_size = 0;
  };

  void Allocated(int64_t bytes) {
    num_allocs_.fetch_add(1, std::memory_order_relaxed);
    const int64_t in_use = in_use_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (in_use > peak && !peak_.compare_exchange_weak(peak, in_use, std::memory_order_relaxed)) {}
    int64_t largest = largest_.load(std::memory_order_relaxed);
    while (bytes > largest && !largest_.compare_exchange_weak(largest, bytes, std::memory_order_relaxed)) {}
  }
  void Released(int64_t bytes) { in_use_.fetch_sub(bytes, std::memory_order_relaxed); }
  // The peak restarts from the bytes in use now (PJRT_Device_ClearMemoryStats).
  void ResetPeak() { peak_.store(in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

  Snapshot Get() const {
    return {in_use_.load(std::memory_order_relaxed), peak_.load(std::memory_order_relaxed),
            num_allocs_.load(std::memory_order_relaxed), largest_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> largest_{0};
};

}  // namespace stablert::runtime
