// The global process information a framework hands the client (PJRT_Client_UpdateGlobalProcessInfo):
// which processes of the job exist, their incarnations and connection states.
//
// JAX sends it after `jax.distributed.initialize` and treats any error as fatal, so every
// report consistent with the client's own job is accepted and stored; a report the client
// cannot honour (a process outside the job, the same process twice) is InvalidArgument naming
// what is wrong. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace stablert::runtime {

struct ProcessInfo {
  // PJRT_ProcessState: 0 unspecified, 1 uninitialized, 2 disconnected, 3 connected, 4 error.
  enum class State : int { kUnspecified = 0, kUninitialized = 1, kDisconnected = 2, kConnected = 3, kError = 4 };

  int task_id = 0;
  uint64_t incarnation_id = 0;
  State state = State::kUnspecified;
  int error_code = 0;
  std::string error_message;
};

class GlobalProcessInfo {
 public:
  // Validates `infos` against a job of `process_count` processes (task ids 0..count-1, each
  // at most once) and, if valid, replaces the stored information with it. Any state is
  // stored as given (a newer framework may send states this build does not name).
  Status Update(std::vector<ProcessInfo> infos, int process_count);
  // The last accepted report (empty before the first).
  std::vector<ProcessInfo> Get() const;

 private:
  mutable std::mutex mutex_;
  std::vector<ProcessInfo> infos_;
};

}  // namespace stablert::runtime
