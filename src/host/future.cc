#include "host/future.h"


namespace stablert::host {

void Future::State::Set(Status result) {
  std::vector<std::function<void(Status)>> to_run;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (status) return;
    status = result;
    to_run.swap(callbacks);
  }
  done.notify_all();
  for (auto& callback : to_run) callback(result);
}

Future Future::Ready(Status status) {
  auto state = std::make_shared<State>();
  state->status = std::move(status);
  return Future(std::move(state));
}

namespace {

struct OnReadyContext {
  std::shared_ptr<const Plugin> plugin;
  std::string context;
  std::function<void(Status)> set;
};

void DestroyEvent(const Plugin& plugin, PJRT_Event* event) {
  if (!plugin.Has(&PJRT_Api::PJRT_Event_Destroy)) return;
  PJRT_Event_Destroy_Args args{};
  args.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  args.event = event;
  plugin.TakeError(plugin.api()->PJRT_Event_Destroy(&args), "PJRT_Event_Destroy").IgnoreError();
}

}  // namespace

Future Future::FromEvent(const std::shared_ptr<const Plugin>& plugin, PJRT_Event* event, std::string context) {
  if (!event) return Ready();
  auto state = std::make_shared<State>();
  Future future(state);
  if (plugin->Has(&PJRT_Api::PJRT_Event_OnReady)) {
    auto* callback_context = new OnReadyContext{plugin, context, [state](Status s) { state->Set(std::move(s)); }};
    PJRT_Event_OnReady_Args args{};
    args.struct_size = PJRT_Event_OnReady_Args_STRUCT_SIZE;
    args.event = event;
    args.user_arg = callback_context;
    args.callback = [](PJRT_Error* error, void* user_arg) {
      std::unique_ptr<OnReadyContext> owned(static_cast<OnReadyContext*>(user_arg));
      owned->set(owned->plugin->TakeError(error, owned->context));
    };
    Status registered = plugin->TakeError(plugin->api()->PJRT_Event_OnReady(&args), "PJRT_Event_OnReady");
    if (!registered.ok()) {
      delete callback_context;
      state->Set(registered);
    }
  } else {
    PJRT_Event_Await_Args args{};
    args.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE;
    args.event = event;
    state->Set(plugin->Call(&PJRT_Api::PJRT_Event_Await, context, &args));
  }
  DestroyEvent(*plugin, event);
  return future;
}

bool Future::IsReady() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->status.has_value();
}

Status Future::Await() const {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->done.wait(lock, [this] { return state_->status.has_value(); });
  return *state_->status;
}

void Future::OnReady(std::function<void(Status)> callback) const {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (!state_->status) {
    state_->callbacks.push_back(std::move(callback));
    return;
  }
  Status status = *state_->status;
  lock.unlock();
  callback(status);
}

Promise::Promise() : future_(std::make_shared<Future::State>()) {}

Future WhenAll(const std::vector<Future>& futures) {
  if (futures.empty()) return Future::Ready();
  struct Join {
    std::mutex mutex;
    std::vector<Status> statuses;
    size_t remaining = 0;
    Promise promise;
  };
  auto join = std::make_shared<Join>();
  join->statuses.resize(futures.size());
  join->remaining = futures.size();
  Future all = join->promise.future();
  for (size_t i = 0; i < futures.size(); ++i) {
    futures[i].OnReady([join, i](Status status) {
      std::unique_lock<std::mutex> lock(join->mutex);
      join->statuses[i] = std::move(status);
      if (--join->remaining > 0) return;
      Status first;
      for (const Status& s : join->statuses)
        if (!s.ok()) {
          first = s;
          break;
        }
      lock.unlock();
      join->promise.Set(first);
    });
  }
  return all;
}

}  // namespace stablert::host
