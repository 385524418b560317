// Polling for a condition another thread is about to make true, before blocking on it.
//
// A thread that sleeps on a condition variable costs a futex wake-up to restart (~15 µs on a
// VM, more when the core it ran on is busy); a thread that polls for a short while first
// starts at once when work arrives back to back. SpinUntil polls `ready` with a pause between
// polls and, every 64 polls, checks the clock and yields the core: a thread the scheduler
// queued behind the poller (typically the one that will make `ready` true) then runs at
// once instead of waiting out the poll. Header-only; thread-safe as `ready` is.
#pragma once

#include <sched.h>

#include <chrono>

namespace stablert {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready()` until it returns true (then true) or `microseconds` have passed (false).
template <typename Ready>
bool SpinUntil(Ready&& ready, int microseconds) {
  using Clock = std::chrono::steady_clock;
  if (ready()) return true;
  const auto deadline = Clock::now() + std::chrono::microseconds(microseconds);
  for (int round = 0;; ++round) {
    if (ready()) return true;
    CpuRelax();
    if ((round & 63) == 63) {
      if (Clock::now() >= deadline) return false;
      sched_yield();
    }
  }
}

}  // namespace stablert
