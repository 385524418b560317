// Completion of a plugin's asynchronous work as a host-side future.
//
// `Future::FromEvent` registers PJRT_Event_OnReady on the plugin's event and destroys the
// event at once: the Future holds its own state, so it stays valid (and can be awaited, copied
// and queried) however long the host keeps it, whatever the plugin does with its event.
// A plugin without OnReady is awaited synchronously (PJRT_Event_Await) before FromEvent
// returns. Copies share one state. Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "base/status.h"
#include "host/plugin.h"

namespace stablert::host {

class Promise;

class Future {
 public:
  // Already complete with `status`.
  static Future Ready(Status status = OkStatus());
  // Takes ownership of `event` (destroyed before this returns). `context` prefixes errors.
  static Future FromEvent(const std::shared_ptr<const Plugin>& plugin, PJRT_Event* event, std::string context);

  bool IsReady() const;
  // Blocks until complete; the work's status.
  Status Await() const;
  // Runs `callback(status)` once complete: at once on this thread if it already is, else on
  // the thread that completes it.
  void OnReady(std::function<void(Status)> callback) const;

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<Status> status;
    std::vector<std::function<void(Status)>> callbacks;
    void Set(Status status);
  };
  explicit Future(std::shared_ptr<State> state) : state_(std::move(state)) {}
  friend class Promise;
  std::shared_ptr<State> state_;
};

// The completing side of a Future. The first Set wins; later ones are ignored.
class Promise {
 public:
  Promise();
  Future future() const { return future_; }
  void Set(Status status) const { future_.state_->Set(std::move(status)); }

 private:
  Future future_;
};

// A Future complete when all of `futures` are; the first error among them (in order).
Future WhenAll(const std::vector<Future>& futures);

}  // namespace stablert::host
