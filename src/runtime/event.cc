#include "runtime/event.h"

#include <atomic>

namespace stablert::runtime {

EventRef Event::Ready(Status status) {
  EventRef event = Create();
  event->Set(std::move(status)).IgnoreError();
  return event;
}

EventRef Event::AfterAll(const std::vector<EventRef>& events) {
  EventRef joined = Create();
  if (events.empty()) {
    joined->Set(OkStatus()).IgnoreError();
    return joined;
  }
  struct State {
    std::atomic<size_t> remaining;
    std::mutex mutex;
    Status first_error;
  };
  auto state = std::make_shared<State>();
  state->remaining = events.size();
  for (const EventRef& event : events) {
    event->OnReady([state, joined](const Status& status) {
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(state->mutex);
        if (state->first_error.ok()) state->first_error = status;
      }
      if (state->remaining.fetch_sub(1) == 1) {
        Status result;
        {
          std::lock_guard<std::mutex> lock(state->mutex);
          result = state->first_error;
        }
        joined->Set(result).IgnoreError();
      }
    });
  }
  return joined;
}

Status Event::Set(Status status) {
  std::vector<std::function<void(const Status&)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ready_) return FailedPrecondition("PJRT_Event_Set: the event is already set");
    ready_ = true;
    status_ = std::move(status);
    callbacks.swap(callbacks_);
  }
  ready_cv_.notify_all();
  for (auto& callback : callbacks) callback(status_);
  return OkStatus();
}

bool Event::IsReady() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ready_;
}

Status Event::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

Status Event::Await() const {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_cv_.wait(lock, [this] { return ready_; });
  return status_;
}

void Event::OnReady(std::function<void(const Status&)> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ready_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback(status_);
}

}  // namespace stablert::runtime
