// LiveHandles: the handles of one kind the plugin made and has not destroyed yet, by
// address, so that a destroyed or foreign handle passed back by a caller is reported as an
// error instead of being dereferenced (buffers, execute contexts, tracking events,
// alias-buffer promises: handles the caller owns and frees).
// Thread-safe. Instances are process-wide and never destroyed (handles may outlive static
// teardown).
#pragma once

#include <mutex>
#include <unordered_set>

namespace stablert::capi {

template <typename T>
class LiveHandles {
 public:
  // The registry of T's handles.
  static LiveHandles& Of() {
    static auto* live = new LiveHandles;
    return *live;
  }

  void Add(const T* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    handles_.insert(handle);
  }
  // The first of `handles` (a range of T*) that is not live, or nullptr if all are; one lock
  // for the whole range (an execution's argument lists).
  template <typename Range>
  const T* FirstDead(const Range& handles) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const T* handle : handles)
      if (!handles_.count(handle)) return handle;
    return nullptr;
  }
  // Whether `handle` is live; if so and `remove`, it is not any more.
  bool Check(const T* handle, bool remove = false) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = handles_.find(handle);
    if (it == handles_.end()) return false;
    if (remove) handles_.erase(it);
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<const T*> handles_;
};

}  // namespace stablert::capi
