// Event: a one-shot completion signal carrying a Status.
//
// An Event is created unset and becomes ready exactly once, with OK or an error, by Set().
// Waiters block in Await(); callbacks registered with OnReady() run exactly once, on the
// thread that sets the event (or at once on the registering thread if it is already set).
// Shared by reference counting (EventRef); all methods are thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"

namespace stablert::runtime {

class Event;
using EventRef = std::shared_ptr<Event>;

class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  static EventRef Create() { return std::make_shared<Event>(); }
  // An event that is already set with `status`.
  static EventRef Ready(Status status = OkStatus());
  // An event that becomes ready when all `events` are; it carries the first error among them.
  static EventRef AfterAll(const std::vector<EventRef>& events);

  // Sets the event. Returns FailedPrecondition if it was already set (the first Set wins).
  Status Set(Status status);
  bool IsReady() const;
  // The status; only meaningful once IsReady().
  Status status() const;
  // Blocks until ready; returns the event's status.
  Status Await() const;
  // Runs `callback(status)` once the event is ready.
  void OnReady(std::function<void(const Status&)> callback);

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable ready_cv_;
  bool ready_ = false;
  Status status_;
  std::vector<std::function<void(const Status&)>> callbacks_;
};

}  // namespace stablert::runtime
