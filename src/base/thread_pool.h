// The process's thread budget and its pool of worker threads.
//
// StableRT computes on at most CoreBudget() threads at once per device call: the calling
// thread plus the shared pool's CoreBudget() - 1 workers. Libraries that would start threads
// of their own (oneDNN's OpenMP team) are always called single-threaded on pool threads
// instead, so the process never runs more compute threads than cores (kernels/onednn_*).
//
// ParallelFor(n, fn) runs fn(0) .. fn(n-1), on the pool's workers and on the calling thread
// (which takes parts too, so nested or concurrent callers never wait on an idle pool), and
// returns when all have run, each part in the caller's floating-point environment (rounding
// mode, denormal flushing). Parts are handed out one at a time to whichever thread is free,
// so a thread that is descheduled delays only its current part. Workers that run out of work
// keep polling for new work for a short while (kSpinMicroseconds) before they sleep:
// back-to-back splits then cost well under a microsecond instead of a wake-up (~15 µs on a VM).
// Between polls they yield the core, so a thread the scheduler queued behind a polling worker
// (the device thread about to hand out the next split) runs at once instead of waiting out
// the poll (that wait was measured as +100 µs on every other 256^3 product on 2 cores).
// Schedule(task) queues a task and returns at once; a free worker runs it (batches of
// ParallelFor first: a caller of ParallelFor works on its own batch anyway, so a long task
// never stalls one). Tasks run in the worker's default floating-point environment. A task
// must not wait for another scheduled task (the pool may have a single worker); with no
// workers at all (a budget of one core) each task gets a thread of its own.
// Thread-safe; callers from many threads share the workers. fn and tasks must not throw.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace stablert {

// CPUs this process may run on (its affinity mask; at least 1).
int CoreBudget();

class ThreadPool {
 public:
  static constexpr int kSpinMicroseconds = 100;

  // `workers` threads besides the callers.
  explicit ThreadPool(int workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // CoreBudget() - 1 workers; created on first use, lives until exit.
  static ThreadPool& Shared();

  // Parts a call can usefully be split into: the workers plus the caller.
  int parallelism() const { return static_cast<int>(threads_.size()) + 1; }

  void ParallelFor(int n, const std::function<void(int)>& fn);

  // Runs `task` on a worker, asynchronously. Tasks queued before destruction all run.
  void Schedule(std::function<void()> task);

 private:
  struct Batch {
    const std::function<void(int)>* fn;
    int n;
    uint64_t fp_control = 0;  // the caller's floating-point control register
    std::atomic<int> next{0};
    std::atomic<int> done{0};
    std::mutex mutex;
    std::condition_variable finished;
  };
  // Runs parts of `batch` until none are left.
  static void Work(Batch& batch);
  void WorkerLoop();
  // Polls for queued work for up to kSpinMicroseconds; true if some arrived.
  bool SpinForWork() const;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Batch>> batches_;
  std::deque<std::function<void()>> tasks_;  // Schedule's
  std::atomic<int> queued_{0};  // batches_.size() + tasks_.size(), readable without the lock
  bool stopping_ = false;
  std::atomic<bool> stopping_flag_{false};
  std::vector<std::thread> threads_;
};

}  // namespace stablert
