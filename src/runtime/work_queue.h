// WorkQueue: one worker thread running submitted tasks in FIFO order.
//
// Each device owns one queue; work submitted to a device runs in submission order,
// and different devices' queues run concurrently. Submit() and RunInlineIfIdle() are
// thread-safe. The destructor finishes the tasks already queued, then joins the thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace stablert::runtime {

class WorkQueue {
 public:
  explicit WorkQueue(std::string name);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Submit(std::function<void()> task);
  // Runs `task` on the calling thread if the queue has nothing queued or running (tasks
  // submitted meanwhile wait for it, so the order holds) and returns true; otherwise
  // leaves `task` untouched and returns false.
  bool RunInlineIfIdle(const std::function<void()>& task);
  // Whether the caller is this queue's worker thread, i.e. code run by one of its tasks
  // (a host callback of a program on this device).
  bool OnWorkerThread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void Run();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  bool running_ = false;  // a task is running, on the worker or inline
  std::thread thread_;
};

}  // namespace stablert::runtime
