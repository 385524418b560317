#include "kernels/ffi_api.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "base/thread_pool.h"
#include "kernels/ffi_registry.h"

namespace stablert::kernels::ffi {
namespace {

// Returned when an error itself cannot be allocated; never destroyed.
XLA_FFI_Error* OutOfMemoryError() {
  static XLA_FFI_Error* error = new XLA_FFI_Error{XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory"};
  return error;
}

XLA_FFI_Error* MakeError(XLA_FFI_Error_Code code, std::string message) {
  try {
    return new XLA_FFI_Error{code, std::move(message)};
  } catch (...) {
    return OutOfMemoryError();
  }
}

void DestroyError(XLA_FFI_Error* error) {
  if (error != nullptr && error != OutOfMemoryError()) delete error;
}

XLA_FFI_Error* FromStatus(const Status& status) {
  if (status.ok()) return nullptr;
  return MakeError(static_cast<XLA_FFI_Error_Code>(status.code()), std::string(status.message()));
}

#define STABLERT_FFI_REQUIRE(fn, pointer)                                                     \
  do {                                                                                        \
    if ((pointer) == nullptr)                                                                 \
      return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, #fn ": " #pointer " is null");    \
  } while (0)

#define STABLERT_FFI_GUARD(fn, ...)                                                            \
  try {                                                                                        \
    __VA_ARGS__                                                                                \
  } catch (...) {                                                                              \
    return MakeError(XLA_FFI_Error_Code_INTERNAL, #fn ": unexpected C++ exception");           \
  }

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  if (args == nullptr) return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Error_Create: args is null");
  XLA_FFI_Error_Code code = args->errc == XLA_FFI_Error_Code_OK ? XLA_FFI_Error_Code_UNKNOWN : args->errc;
  return MakeError(code, args->message ? args->message : "");
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  if (args == nullptr) return;
  args->message = args->error ? args->error->message.c_str() : "";
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) {
  if (args != nullptr) DestroyError(args->error);
}

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_Handler_Register, args);
  STABLERT_FFI_GUARD(XLA_FFI_Handler_Register, {
    const std::string_view target(args->name.ptr ? args->name.ptr : "", args->name.len);
    for (XLA_FFI_Handler* handler :
         {args->bundle.instantiate, args->bundle.prepare, args->bundle.initialize, args->bundle.execute})
      if (handler != nullptr)
        if (Status checked = CheckHandlerMetadata("XLA_FFI_Handler_Register", target, reinterpret_cast<void*>(handler));
            !checked.ok())
          return FromStatus(checked);
    HandlerBundle bundle{reinterpret_cast<void*>(args->bundle.instantiate),
                         reinterpret_cast<void*>(args->bundle.prepare),
                         reinterpret_cast<void*>(args->bundle.initialize),
                         reinterpret_cast<void*>(args->bundle.execute), args->traits};
    return FromStatus(RegisterHandler("XLA_FFI_Handler_Register",
                                      std::string_view(args->name.ptr ? args->name.ptr : "", args->name.len),
                                      std::string_view(args->platform.ptr ? args->platform.ptr : "", args->platform.len),
                                      bundle));
  })
}

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_Stream_Get, args);
  // No device stream: work runs on the calling thread. (XLA's CPU runtime answers with an
  // error instead; jaxlib's own handlers read XLA's errors as XLA's internal type, so an
  // error of StableRT's here would crash them.)
  args->stream = nullptr;
  return nullptr;
}

XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_Type_Register, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_Type_Register, args->type_id);
  STABLERT_FFI_GUARD(XLA_FFI_Type_Register, {
    int64_t id = args->type_id->type_id;
    Deleter deleter = args->type_info ? args->type_info->deleter : nullptr;
    Status status = RegisterType("XLA_FFI_Type_Register",
                                 std::string_view(args->name.ptr ? args->name.ptr : "", args->name.len), &id, deleter);
    if (status.ok()) args->type_id->type_id = id;
    return FromStatus(status);
  })
}

XLA_FFI_Error* ExecutionContextGet(XLA_FFI_ExecutionContext_Get_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_ExecutionContext_Get, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_ExecutionContext_Get, args->type_id);
  STABLERT_FFI_REQUIRE(XLA_FFI_ExecutionContext_Get, args->ctx);
  const ExecutionInfo* execution = args->ctx->execution;
  args->data = execution ? execution->Find(args->type_id->type_id) : FindProcessUserData(args->type_id->type_id);
  if (args->data == nullptr)
    return MakeError(XLA_FFI_Error_Code_NOT_FOUND,
                     "XLA_FFI_ExecutionContext_Get: the execution has no user data of type id " +
                         std::to_string(args->type_id->type_id) +
                         (execution && execution->user_data ? std::string()
                                                            : std::string(" (it was given no PJRT_ExecuteContext "
                                                                          "user data)")));
  return nullptr;
}

XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_State_Set, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_State_Set, args->ctx);
  STABLERT_FFI_REQUIRE(XLA_FFI_State_Set, args->type_id);
  if (args->stage != XLA_FFI_ExecutionStage_INSTANTIATE || args->ctx->stage != XLA_FFI_ExecutionStage_INSTANTIATE)
    return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "XLA_FFI_State_Set: StableRT keeps state of the instantiate stage only, set while instantiating");
  StepState& state = *args->ctx->state;
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.by_stage.count(args->stage))
    return MakeError(XLA_FFI_Error_Code_ALREADY_EXISTS, "XLA_FFI_State_Set: the state of this stage is already set");
  state.by_stage[args->stage] = StepState::Entry{args->type_id->type_id, args->state};
  return nullptr;
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_State_Get, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_State_Get, args->ctx);
  STABLERT_FFI_REQUIRE(XLA_FFI_State_Get, args->type_id);
  StepState& state = *args->ctx->state;
  std::lock_guard<std::mutex> lock(state.mutex);
  auto it = state.by_stage.find(args->stage);
  if (it == state.by_stage.end())
    return MakeError(XLA_FFI_Error_Code_NOT_FOUND, "XLA_FFI_State_Get: no state was set for stage " +
                                                       std::to_string(static_cast<int>(args->stage)));
  if (it->second.type_id != args->type_id->type_id)
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "XLA_FFI_State_Get: the state has type id " + std::to_string(it->second.type_id) + ", not " +
                         std::to_string(args->type_id->type_id));
  args->state = it->second.object;
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_DeviceMemory_Allocate, args);
  size_t alignment = args->alignment < sizeof(void*) ? sizeof(void*) : args->alignment;
  if ((alignment & (alignment - 1)) != 0)
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "XLA_FFI_DeviceMemory_Allocate: alignment " + std::to_string(args->alignment) +
                         " is not a power of two");
  const size_t size = (args->size + alignment - 1) / alignment * alignment;
  args->data = size == 0 ? nullptr : std::aligned_alloc(alignment, size);
  if (size != 0 && args->data == nullptr)
    return MakeError(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                     "XLA_FFI_DeviceMemory_Allocate: cannot allocate " + std::to_string(args->size) + " bytes");
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_DeviceMemory_Free, args);
  std::free(args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_ThreadPool_Schedule, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_ThreadPool_Schedule, args->task);
  STABLERT_FFI_GUARD(XLA_FFI_ThreadPool_Schedule, {
    ThreadPool::Shared().Schedule([task = args->task, data = args->data] { task(data); });
    return nullptr;
  })
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_ThreadPool_NumThreads, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_ThreadPool_NumThreads, args->num_threads);
  *args->num_threads = CoreBudget();
  return nullptr;
}

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_Future_Create, args);
  STABLERT_FFI_GUARD(XLA_FFI_Future_Create, {
    args->future = new XLA_FFI_Future();
    return nullptr;
  })
}

XLA_FFI_Error* FutureComplete(XLA_FFI_Future* future, XLA_FFI_Error* error) {
  std::lock_guard<std::mutex> lock(future->mutex);
  if (future->done) {
    DestroyError(error);
    return MakeError(XLA_FFI_Error_Code_FAILED_PRECONDITION, "XLA_FFI_Future: the future is already complete");
  }
  future->done = true;
  future->error = error;
  future->done_cv.notify_all();
  return nullptr;
}

XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_Future_SetAvailable, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_Future_SetAvailable, args->future);
  return FutureComplete(args->future, nullptr);
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_Future_SetError, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_Future_SetError, args->future);
  STABLERT_FFI_REQUIRE(XLA_FFI_Future_SetError, args->error);
  return FutureComplete(args->future, args->error);
}

XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_RunId_Get, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_RunId_Get, args->ctx);
  args->run_id = args->ctx->execution ? args->ctx->execution->run_id : 0;
  return nullptr;
}

XLA_FFI_Error* DeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  STABLERT_FFI_REQUIRE(XLA_FFI_DeviceOrdinal_Get, args);
  STABLERT_FFI_REQUIRE(XLA_FFI_DeviceOrdinal_Get, args->ctx);
  args->device_ordinal = args->ctx->execution ? args->ctx->execution->device_ordinal : 0;
  return nullptr;
}

const XLA_FFI_Api kApi = {
    XLA_FFI_Api_STRUCT_SIZE,
    nullptr,
    XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    nullptr,  // internal_api: XLA's own; handlers built with jaxlib's headers never use it
    &ErrorCreate,
    &ErrorGetMessage,
    &ErrorDestroy,
    &HandlerRegister,
    &StreamGet,
    &TypeRegister,
    &ExecutionContextGet,
    &StateSet,
    &StateGet,
    &DeviceMemoryAllocate,
    &DeviceMemoryFree,
    &ThreadPoolSchedule,
    &ThreadPoolNumThreads,
    &FutureCreate,
    &FutureSetAvailable,
    &FutureSetError,
    &RunIdGet,
    &DeviceOrdinalGet,
};

}  // namespace

StepState::~StepState() {
  for (auto& [stage, entry] : by_stage) {
    if (Deleter deleter = TypeDeleter(entry.type_id); deleter && entry.object) deleter(entry.object);
  }
}

const XLA_FFI_Api* Api() { return &kApi; }

Status CheckHandlerMetadata(std::string_view function, std::string_view target, void* handler) {
  XLA_FFI_Metadata metadata{};
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base = XLA_FFI_Extension_Base{XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Extension_Metadata,
                                                    nullptr};
  extension.metadata = &metadata;
  XLA_FFI_ExecutionContext context;
  StepState no_state;
  context.state = &no_state;
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = &extension.extension_base;
  frame.api = Api();
  frame.ctx = &context;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  if (XLA_FFI_Error* error = reinterpret_cast<XLA_FFI_Handler*>(handler)(&frame)) {
    DestroyError(error);
    return OkStatus();
  }
  const XLA_FFI_Api_Version& version = metadata.api_version;
  if (version.struct_size == 0) return OkStatus();  // not answered
  if (version.major_version != XLA_FFI_API_MAJOR || version.minor_version > XLA_FFI_API_MINOR)
    return InvalidArgument(std::string(function) + ": FFI target '" + std::string(target) +
                           "' was built against XLA FFI API " + std::to_string(version.major_version) + "." +
                           std::to_string(version.minor_version) + "; StableRT implements " +
                           std::to_string(XLA_FFI_API_MAJOR) + "." + std::to_string(XLA_FFI_API_MINOR));
  return OkStatus();
}

Status TakeError(XLA_FFI_Error* error, std::string_view prefix) {
  if (error == nullptr) return OkStatus();
  StatusCode code = static_cast<StatusCode>(error->code);
  if (error->code <= XLA_FFI_Error_Code_OK || error->code > XLA_FFI_Error_Code_UNAUTHENTICATED) code = StatusCode::kUnknown;
  Status status(code, std::string(prefix) + ": " + error->message);
  DestroyError(error);
  return status;
}

}  // namespace stablert::kernels::ffi
