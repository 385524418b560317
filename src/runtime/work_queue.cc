#include "runtime/work_queue.h"

#include <pthread.h>

namespace stablert::runtime {

WorkQueue::WorkQueue(std::string name) : name_(std::move(name)), thread_([this] { Run(); }) {}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WorkQueue::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

bool WorkQueue::RunInlineIfIdle(const std::function<void()>& task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ || stopping_ || !tasks_.empty()) return false;
    running_ = true;
  }
  task();
  // The worker waits for queued tasks (or the stop) with nothing running: it needs waking
  // only if a task was submitted while this one ran, or the queue is stopping. Waking it
  // otherwise costs a futex call here and a context switch on the worker's core for every
  // inline run, that is for every call of a small program.
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    wake = stopping_ || !tasks_.empty();
  }
  if (wake) cv_.notify_one();
  return true;
}

void WorkQueue::Run() {
  pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return (stopping_ && !running_) || (!tasks_.empty() && !running_); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
      running_ = true;
    }
    task();
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }
}

}  // namespace stablert::runtime
