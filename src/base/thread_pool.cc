#include "base/thread_pool.h"

#include <algorithm>

namespace stablert {

ThreadPool::ThreadPool(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

ThreadPool& ThreadPool::Shared() {
  // Intentionally leaked: kernels may run during static destruction of other objects.
  static ThreadPool* pool =
      new ThreadPool(std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1));
  return *pool;
}

void ThreadPool::Work(Batch& batch) {
  for (int i = batch.next.fetch_add(1); i < batch.n; i = batch.next.fetch_add(1)) {
    (*batch.fn)(i);
    if (batch.done.fetch_add(1) + 1 == batch.n) {
      std::lock_guard<std::mutex> lock(batch.mutex);
      batch.finished.notify_all();
    }
  }
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !batches_.empty(); });
      if (batches_.empty()) return;
      batch = batches_.front();
      // A batch stays queued until its parts are all taken, so every idle worker joins in.
      if (batch->next.load() >= batch->n) {
        batches_.pop_front();
        continue;
      }
    }
    Work(*batch);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!batches_.empty() && batches_.front() == batch) batches_.pop_front();
  }
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batches_.push_back(batch);
  }
  wake_.notify_all();
  Work(*batch);
  {
    std::unique_lock<std::mutex> lock(batch->mutex);
    batch->finished.wait(lock, [&] { return batch->done.load() == batch->n; });
  }
  std::lock_guard<std::mutex> queue_lock(mutex_);
  auto it = std::find(batches_.begin(), batches_.end(), batch);
  if (it != batches_.end()) batches_.erase(it);
}

}  // namespace stablert
