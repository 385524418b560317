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
// so a thread that is descheduled delays only its current part; each thread takes its own
// part first if it is still free (the caller part 0, worker w part w), so that the same
// thread runs the same part from call to call (ParallelForChunks). Workers that run out of work
// keep polling for new work for a short while (kSpinMicroseconds) before they sleep:
// back-to-back splits then cost well under a microsecond instead of a wake-up (~15 µs on a VM).
// Between polls they yield the core, so a thread the scheduler queued behind a polling worker
// (the device thread about to hand out the next split) runs at once instead of waiting out
// the poll (that wait was measured as +100 µs on every other 256^3 product on 2 cores).
// The caller, once its parts are done, polls the same way for the others' before it sleeps.
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

// Moves the calling thread off CPU `cpu` onto another CPU of its affinity mask, and leaves the
// mask as it was (the thread may later be moved anywhere the mask allows, as before). Returns
// the CPU it moved to, or -1 when there is no other CPU in the mask or the system refuses.
int MoveToAnotherCpu(int cpu);

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

  // Runs fn(part, chunk) for every chunk in [0, chunks), on up to `parts` threads at once;
  // `part` (in [0, parts)) is the same for all calls running on one thread at one time
  // (so per-part scratch memory is never shared by two threads). Chunks are shared out in
  // contiguous runs, run k to part k, and each thread takes its own run first, in order, then
  // helps with the rest: a thread that starts late or is descheduled holds back one chunk
  // at most. The caller always takes part 0 and worker w part w (when it arrives in time), so
  // a split step touches the same rows on the same threads from call to call and from step
  // to step, and the rows stay in those cores' caches. fn must not throw.
  void ParallelForChunks(int parts, int chunks, const std::function<void(int part, int chunk)>& fn);

  // Runs `task` on a worker, asynchronously. Tasks queued before destruction all run.
  void Schedule(std::function<void()> task);

 private:
  // Batches of up to this many parts hand each thread its own part first (the caller part
  // 0, worker w part w); larger ones hand parts out in order.
  static constexpr int kMaxPreferredParts = 64;
  struct Batch {
    const std::function<void(int)>* fn;
    int n;
    uint64_t fp_control = 0;  // the caller's floating-point control register
    int caller_cpu = -1;      // the CPU the caller ran on when it queued the batch
    std::atomic<uint64_t> claimed{0};  // n <= kMaxPreferredParts: bit i set once part i is taken
    std::atomic<int> next{0};          // larger n: the next part to take
    std::atomic<int> done{0};
    std::mutex mutex;
    std::condition_variable finished;
  };
  // Runs parts of `batch` until none are left, part `preferred` first if still free.
  static void Work(Batch& batch, int preferred);
  // Takes part `part` (n <= kMaxPreferredParts); false if another thread has it.
  static bool Claim(Batch& batch, int part);
  // Whether every part of `batch` has been taken.
  static bool AllTaken(const Batch& batch);
  // Worker `preferred` (1-based: the caller is part 0).
  void WorkerLoop(int preferred);
  // The caller of ParallelFor after its own parts: polls (yielding now and then) for up to
  // kSpinMicroseconds until every part of `batch` has run.
  static void WaitForParts(const Batch& batch);
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
