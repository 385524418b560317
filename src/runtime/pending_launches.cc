#include "runtime/pending_launches.h"

#include <utility>

namespace stablert::runtime {

std::shared_ptr<PendingLaunches::Launch> PendingLaunches::Add(int launch_id) {
  auto launch = std::make_shared<Launch>();
  launch->launch_id = launch_id;
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_.emplace(launch_id, launch);
  return launch;
}

Status PendingLaunches::Start(const std::shared_ptr<Launch>& launch) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [first, last] = waiting_.equal_range(launch->launch_id);
  for (auto it = first; it != last; ++it) {
    if (it->second == launch) {
      waiting_.erase(it);
      break;
    }
  }
  return launch->poison;
}

bool PendingLaunches::Poison(int launch_id, Status error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = waiting_.find(launch_id);  // the first of equal keys: the earliest added
  if (it == waiting_.end()) return false;
  it->second->poison = std::move(error);
  waiting_.erase(it);
  return true;
}

}  // namespace stablert::runtime
