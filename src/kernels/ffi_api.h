// StableRT's implementation of the XLA FFI C API (xla/ffi/api/c_api.h): the XLA_FFI_Api
// table every call frame carries, and the objects behind its opaque handles.
//
// What each entry does here (CPU, one device per execution):
//   Error_Create/GetMessage/Destroy   an owned message and code
//   Handler_Register, Type_Register   kernels/ffi_registry.h
//   Stream_Get                        a null stream (CPU)
//   ExecutionContext_Get              the user data of the execution's PJRT_ExecuteContext
//                                     (kernels/ffi_execution.h); NotFound naming the type id
//   State_Set/State_Get               state of the instantiate stage, one per plan step,
//                                     freed with its type's deleter when the plan is unloaded
//   DeviceMemory_Allocate/Free        aligned host memory
//   ThreadPool_Schedule/NumThreads    a task queued on the process's thread pool
//                                     (ThreadPool::Schedule); the core budget
//   Future_Create/SetAvailable/SetError  a one-shot event the call waits for
//   RunId_Get, DeviceOrdinal_Get      the execution's run id and the local hardware id of
//                                     the device the call runs for (0 outside an execution)
// Entry points never throw; bad arguments return an XLA_FFI_Error naming the function.
// Thread-safety: the table is immutable; entries are thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "kernels/ffi_execution.h"
#include "xla/ffi/api/c_api.h"

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_UNKNOWN;
  std::string message;
};

struct XLA_FFI_Future {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  XLA_FFI_Error* error = nullptr;  // owned; set by SetError
};

namespace stablert::kernels::ffi {

// The states one plan step's handlers set (XLA_FFI_State_Set), by stage. Owns them: the
// destructor frees each with its type's deleter. Guarded by `mutex`.
struct StepState {
  StepState() = default;
  StepState(const StepState&) = delete;
  StepState& operator=(const StepState&) = delete;
  ~StepState();
  struct Entry {
    int64_t type_id = 0;
    void* object = nullptr;
  };
  std::mutex mutex;
  std::map<int, Entry> by_stage;
};

}  // namespace stablert::kernels::ffi

struct XLA_FFI_ExecutionContext {
  stablert::kernels::ffi::StepState* state = nullptr;  // the step's; never null
  XLA_FFI_ExecutionStage stage = XLA_FFI_ExecutionStage_EXECUTE;
  // The execution the call belongs to; null when none (plan loading, metadata queries).
  const stablert::kernels::ffi::ExecutionInfo* execution = nullptr;
};

namespace stablert::kernels::ffi {

// The table handed to handlers in XLA_FFI_CallFrame::api.
const XLA_FFI_Api* Api();

// Asks `handler` (an XLA_FFI_Handler) for its metadata, as XLA does at registration:
// InvalidArgument naming `function` and `target` if it was built against an FFI API version
// StableRT cannot serve (another major version, or a newer minor one). A handler that
// answers with an error or not at all is accepted (headers older than the metadata query).
Status CheckHandlerMetadata(std::string_view function, std::string_view target, void* handler);

// A Status from a handler's error (which it then destroys), its message prefixed with
// `prefix`; OK for null.
Status TakeError(XLA_FFI_Error* error, std::string_view prefix);

}  // namespace stablert::kernels::ffi
