#include "base/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace stablert {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

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
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
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

void ThreadPool::Work(Batch& batch) {
  // Parts run in the caller's floating-point environment, whichever thread runs them.
  const uint64_t saved = FpControl();
  if (saved != batch.fp_control) SetFpControl(batch.fp_control);
  for (int i = batch.next.fetch_add(1); i < batch.n; i = batch.next.fetch_add(1)) {
    (*batch.fn)(i);
    if (batch.done.fetch_add(1) + 1 == batch.n) {
      std::lock_guard<std::mutex> lock(batch.mutex);
      batch.finished.notify_all();
    }
  }
  if (saved != batch.fp_control) SetFpControl(saved);
}

bool ThreadPool::SpinForWork() const {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(kSpinMicroseconds);
  for (int round = 0;; ++round) {
    if (queued_.load(std::memory_order_acquire) > 0 || stopping_flag_.load(std::memory_order_relaxed)) return true;
    CpuRelax();
    if ((round & 63) == 63) {
      if (Clock::now() >= deadline) return false;
      // Give the core to any thread waiting for it (the one that will hand out the next
      // work, typically): the scheduler may have queued it behind this spinning worker.
      sched_yield();
    }
  }
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    SpinForWork();
    std::shared_ptr<Batch> batch;
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !batches_.empty() || !tasks_.empty(); });
      if (batches_.empty()) {
        if (tasks_.empty()) return;  // stopping, nothing left
        task = std::move(tasks_.front());
        tasks_.pop_front();
        queued_.fetch_sub(1, std::memory_order_release);
      }
    }
    if (task) {
      task();
      continue;
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (batches_.empty()) continue;
      batch = batches_.front();
      // A batch stays queued until its parts are all taken, so every idle worker joins in.
      if (batch->next.load() >= batch->n) {
        batches_.pop_front();
        queued_.fetch_sub(1, std::memory_order_release);
        continue;
      }
    }
    Work(*batch);
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batches_.push_back(batch);
    queued_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  Work(*batch);
  // The other parts are running; their last one usually ends within microseconds.
  for (int round = 0; round < 4096 && batch->done.load(std::memory_order_acquire) != n; ++round) CpuRelax();
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

}  // namespace stablert
