// WorkQueue: one worker thread running submitted tasks in FIFO order.
//
// Each device owns one queue; work submitted to a device runs in submission order,
// and different devices' queues run concurrently. Submit() is thread-safe. The destructor
// finishes the tasks already queued, then joins the thread.
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

 private:
  void Run();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace stablert::runtime
