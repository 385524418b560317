#include "base/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <bit>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "base/spin_wait.h"

namespace stablert {
namespace {

// The floating-point control state (rounding, denormal flushing) of the calling thread.
inline uint64_t FpControl() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  uint64_t fpcr;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
#else
  return 0;
#endif
}

inline void SetFpControl(uint64_t value) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned>(value));
#elif defined(__aarch64__)
  asm volatile("msr fpcr, %0" : : "r"(value));
#else
  (void)value;
#endif
}

}  // namespace

int MoveToAnotherCpu(int cpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
  if (!CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2) return -1;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof(others), &others) != 0) return -1;
  const int moved_to = sched_getcpu();  // the kernel has migrated this thread before returning
  sched_setaffinity(0, sizeof(allowed), &allowed);
  return moved_to;
}

int CoreBudget() {
  static const int budget = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    int count = 0;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) count = CPU_COUNT(&set);
    if (count <= 0) count = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, count);
  }();
  return budget;
}

ThreadPool::ThreadPool(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { WorkerLoop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    stopping_flag_.store(true);
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

ThreadPool& ThreadPool::Shared() {
  // Intentionally leaked: kernels may run during static destruction of other objects.
  static ThreadPool* pool = new ThreadPool(CoreBudget() - 1);
  return *pool;
}

bool ThreadPool::Claim(Batch& batch, int part) {
  const uint64_t bit = uint64_t{1} << part;
  return (batch.claimed.fetch_or(bit, std::memory_order_acq_rel) & bit) == 0;
}

bool ThreadPool::AllTaken(const Batch& batch) {
  if (batch.n > kMaxPreferredParts) return batch.next.load(std::memory_order_acquire) >= batch.n;
  const uint64_t all = batch.n == 64 ? ~uint64_t{0} : (uint64_t{1} << batch.n) - 1;
  return (batch.claimed.load(std::memory_order_acquire) & all) == all;
}

void ThreadPool::Work(Batch& batch, int preferred) {
  // Parts run in the caller's floating-point environment, whichever thread runs them.
  const uint64_t saved = FpControl();
  if (saved != batch.fp_control) SetFpControl(batch.fp_control);
  auto run = [&batch](int i) {
    (*batch.fn)(i);
    if (batch.done.fetch_add(1) + 1 == batch.n) {
      std::lock_guard<std::mutex> lock(batch.mutex);
      batch.finished.notify_all();
    }
  };
  if (batch.n <= kMaxPreferredParts) {
    // This thread's own part first, then any part nobody has taken.
    if (preferred >= 0 && preferred < batch.n && Claim(batch, preferred)) run(preferred);
    for (;;) {
      const uint64_t taken = batch.claimed.load(std::memory_order_acquire);
      const int free = std::countr_one(taken);
      if (free >= batch.n) break;
      if (Claim(batch, free)) run(free);
    }
  } else {
    for (int i = batch.next.fetch_add(1); i < batch.n; i = batch.next.fetch_add(1)) run(i);
  }
  if (saved != batch.fp_control) SetFpControl(saved);
}

bool ThreadPool::SpinForWork() const {
  // SpinUntil yields the core now and then: the thread that will hand out the next work may
  // be queued behind this spinning worker.
  return SpinUntil(
      [this] { return queued_.load(std::memory_order_acquire) > 0 || stopping_flag_.load(std::memory_order_relaxed); },
      kSpinMicroseconds);
}

void ThreadPool::WaitForParts(const Batch& batch) {
  SpinUntil([&batch] { return batch.done.load(std::memory_order_acquire) == batch.n; }, kSpinMicroseconds);
}

void ThreadPool::WorkerLoop(int preferred) {
  std::chrono::steady_clock::time_point last_move{};
  for (;;) {
    SpinForWork();
    std::shared_ptr<Batch> batch;
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !batches_.empty() || !tasks_.empty(); });
      if (!batches_.empty()) {
        batch = batches_.front();
        // A batch stays queued until its parts are all taken, so every idle worker joins in.
        if (AllTaken(*batch)) {
          batches_.pop_front();
          queued_.fetch_sub(1, std::memory_order_release);
          continue;
        }
      } else if (!tasks_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
        queued_.fetch_sub(1, std::memory_order_release);
      } else {
        return;  // stopping, nothing left
      }
    }
    if (task) {
      task();
      continue;
    }
    // A worker that polls for work never sleeps, so the scheduler never places it again on a
    // wake-up: once it shares a core with the thread handing out the parts, the two take
    // turns on one core while another stays idle until load balancing moves one of them
    // (measured: the first 40-50 calls of a 256^3 product at half speed after start-up). On
    // the caller's core this worker adds nothing, so it moves (at most once a millisecond, so
    // a machine with more busy threads than cores is not made busier).
    if (sched_getcpu() == batch->caller_cpu) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_move >= std::chrono::milliseconds(1)) {
        last_move = now;
        MoveToAnotherCpu(batch->caller_cpu);
      }
    }
    Work(*batch, preferred);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!batches_.empty() && batches_.front() == batch) {
      batches_.pop_front();
      queued_.fetch_sub(1, std::memory_order_release);
    }
  }
}

void ThreadPool::Schedule(std::function<void()> task) {
  if (threads_.empty()) {
    std::thread(std::move(task)).detach();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
    queued_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_one();
}

void ThreadPool::ParallelFor(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  if (n == 1 || threads_.empty()) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  auto batch = std::make_shared<Batch>();
  batch->fn = &fn;
  batch->n = n;
  batch->fp_control = FpControl();
  batch->caller_cpu = sched_getcpu();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batches_.push_back(batch);
    queued_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  Work(*batch, 0);
  // The other parts are running; their last one usually ends within microseconds. Poll
  // for it (bounded), yielding the core now and then: on a busy machine the thread that
  // runs it may be queued behind this one. Only then sleep (a wake-up costs ~5-50 µs).
  WaitForParts(*batch);
  {
    std::unique_lock<std::mutex> lock(batch->mutex);
    batch->finished.wait(lock, [&] { return batch->done.load() == batch->n; });
  }
  std::lock_guard<std::mutex> queue_lock(mutex_);
  auto it = std::find(batches_.begin(), batches_.end(), batch);
  if (it != batches_.end()) {
    batches_.erase(it);
    queued_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::ParallelForChunks(int parts, int chunks, const std::function<void(int, int)>& fn) {
  if (chunks <= 0) return;
  parts = std::clamp(parts, 1, chunks);
  if (parts == 1) {
    for (int c = 0; c < chunks; ++c) fn(0, c);
    return;
  }
  if (parts > kMaxPreferredParts) {  // no home runs: chunks in order to whoever is free
    std::atomic<int> next{0};
    ParallelFor(parts, [&](int part) {
      for (int c = next.fetch_add(1, std::memory_order_relaxed); c < chunks; c = next.fetch_add(1, std::memory_order_relaxed))
        fn(part, c);
    });
    return;
  }
  // Part p's share: chunks [p * chunks / parts, (p + 1) * chunks / parts), taken from the
  // front by whoever gets there (its owner first; others once their own share is done).
  struct alignas(64) Share {
    std::atomic<int> next;
    int end;
  };
  Share shares[kMaxPreferredParts];
  for (int p = 0; p < parts; ++p) {
    shares[p].next.store(static_cast<int>(int64_t{chunks} * p / parts), std::memory_order_relaxed);
    shares[p].end = static_cast<int>(int64_t{chunks} * (p + 1) / parts);
  }
  ParallelFor(parts, [&](int part) {
    for (int k = 0; k < parts; ++k) {
      Share& share = shares[(part + k) % parts];
      for (int c = share.next.fetch_add(1, std::memory_order_relaxed); c < share.end;
           c = share.next.fetch_add(1, std::memory_order_relaxed))
        fn(part, c);
    }
  });
}

}  // namespace stablert
