#include "runtime/process_info.h"

#include <set>
#include <utility>

namespace stablert::runtime {

Status GlobalProcessInfo::Update(std::vector<ProcessInfo> infos, int process_count) {
  std::set<int> seen;
  for (const ProcessInfo& info : infos) {
    if (info.task_id < 0 || info.task_id >= process_count)
      return InvalidArgument("PJRT_Client_UpdateGlobalProcessInfo: process info for task " +
                             std::to_string(info.task_id) + ", but this client belongs to a job of " +
                             std::to_string(process_count) + " process" + (process_count == 1 ? "" : "es") +
                             " (task ids 0.." + std::to_string(process_count - 1) + ")");
    if (!seen.insert(info.task_id).second)
      return InvalidArgument("PJRT_Client_UpdateGlobalProcessInfo: task " + std::to_string(info.task_id) +
                             " is listed twice");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  infos_ = std::move(infos);
  return OkStatus();
}

std::vector<ProcessInfo> GlobalProcessInfo::Get() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return infos_;
}

}  // namespace stablert::runtime
