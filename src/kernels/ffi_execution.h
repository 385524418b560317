// What an XLA FFI handler may ask about the execution running it: the user data of the
// execution's PJRT_ExecuteContext (XLA_FFI_ExecutionContext_Get), the device it runs on
// (XLA_FFI_DeviceOrdinal_Get) and the run id (XLA_FFI_RunId_Get).
//
// The runtime states the execution a thread works for with a ScopedExecution around the
// plan's run (runtime/executable.cc; the threads of a manual region inherit it, with the
// ordinal of their partition's device); the "ffi_call" kernel (kernels/ffi_call.cc) reads
// CurrentExecution() when it builds the call frame. Kernels keep their ABI: nothing else
// reads it.
//
// Ownership: the caller keeps the ExecutionInfo (and its user data) alive for the scope.
// Thread-safety: the current execution is per thread; ExecutionInfo is immutable once set;
// the process's user data is internally synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stablert::kernels::ffi {

// (type id, data) pairs, as PJRT_FFI_UserData_Add received them: the data belongs to the
// framework, which keeps it alive while the execution runs.
using UserData = std::vector<std::pair<int64_t, void*>>;

struct ExecutionInfo {
  std::shared_ptr<const UserData> user_data;  // may be null: no user data
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
  // The user data of `type_id`: the execution's own, else the process's
  // (AddProcessUserData); nullptr if neither has it.
  void* Find(int64_t type_id) const;
};

// Adds user data every execution's handlers find when their execution has none of that
// type (PJRT_FFI_UserData_Add with a null context: a framework whose executions cannot
// carry a PJRT_ExecuteContext, such as jaxlib for a platform it does not name CPU or GPU).
// Kept for the life of the process; the data stays the caller's and must outlive every
// execution. Adding the same pointer again is OK; AlreadyExists, naming `function`, if
// `type_id` holds other data.
Status AddProcessUserData(std::string_view function, int64_t type_id, void* data);
// The process's user data of `type_id`, or nullptr.
void* FindProcessUserData(int64_t type_id);

// The execution the calling thread works for, or nullptr outside any ScopedExecution.
const ExecutionInfo* CurrentExecution();

// Makes `info` the calling thread's current execution until destroyed (then the previous
// one again). Not copyable.
class ScopedExecution {
 public:
  explicit ScopedExecution(const ExecutionInfo* info);
  ~ScopedExecution();
  ScopedExecution(const ScopedExecution&) = delete;
  ScopedExecution& operator=(const ScopedExecution&) = delete;

 private:
  const ExecutionInfo* previous_;
};

}  // namespace stablert::kernels::ffi
