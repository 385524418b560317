// PendingLaunches: the executions queued on one device that have not started, by launch id,
// so that PJRT_Device_PoisonExecution can make the earliest of a launch fail instead of run.
//
// Thread-safe. An execution registers when it is queued (Add) and takes its entry back
// when it starts (Start); a poisoned entry is removed at once, and its execution, when it
// starts, gets the poison status and does not run.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "base/status.h"

namespace stablert::runtime {

class PendingLaunches {
 public:
  // One queued execution's entry; owned by the execution's task.
  struct Launch {
    int launch_id = 0;
    Status poison;  // guarded by the PendingLaunches' mutex
  };

  std::shared_ptr<Launch> Add(int launch_id);
  // Removes `launch` (if still registered) and returns its poison status: OK to run.
  Status Start(const std::shared_ptr<Launch>& launch);
  // Poisons the earliest registered launch with `launch_id` with `error` (not OK) and
  // unregisters it; false if none is waiting.
  bool Poison(int launch_id, Status error);

 private:
  std::mutex mutex_;
  std::multimap<int, std::shared_ptr<Launch>> waiting_;  // equal ids in the order added
};

}  // namespace stablert::runtime
