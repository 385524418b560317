// A process-wide pool of worker threads for splitting one kernel call into parts.
//
// ParallelFor(n, fn) runs fn(0) .. fn(n-1), on the pool's workers and on the calling thread
// (which takes parts too, so nested or concurrent callers never wait on an idle pool), and
// returns when all have run. Thread-safe; callers from many threads share the workers.
// fn must not throw.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace stablert {

class ThreadPool {
 public:
  // `workers` threads besides the callers.
  explicit ThreadPool(int workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // One worker per hardware thread beyond the first; created on first use, lives until exit.
  static ThreadPool& Shared();

  // Parts a call can usefully be split into: the workers plus the caller.
  int parallelism() const { return static_cast<int>(threads_.size()) + 1; }

  void ParallelFor(int n, const std::function<void(int)>& fn);

 private:
  struct Batch {
    const std::function<void(int)>* fn;
    int n;
    std::atomic<int> next{0};
    std::atomic<int> done{0};
    std::mutex mutex;
    std::condition_variable finished;
  };
  // Runs parts of `batch` until none are left.
  static void Work(Batch& batch);
  void WorkerLoop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Batch>> batches_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace stablert
