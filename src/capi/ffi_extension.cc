#include "capi/ffi_extension.h"

#include <string>
#include <string_view>

#include "capi/error.h"
#include "capi/handles.h"
#include "kernels/ffi_api.h"
#include "kernels/ffi_execution.h"
#include "kernels/ffi_registry.h"
#include "xla/pjrt/c/pjrt_c_api_ffi_extension.h"

namespace stablert::capi {
namespace {

std::string_view View(const char* data, size_t size) { return data ? std::string_view(data, size) : std::string_view(); }

PJRT_Error* RegisterHandler(PJRT_FFI_Register_Handler_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_FFI_Register_Handler, args);
  STABLERT_CAPI_REQUIRE(PJRT_FFI_Register_Handler, args->target_name);
  STABLERT_CAPI_REQUIRE(PJRT_FFI_Register_Handler, args->handler);
  STABLERT_CAPI_REQUIRE(PJRT_FFI_Register_Handler, args->platform_name);
  STABLERT_CAPI_GUARD(PJRT_FFI_Register_Handler, {
    const std::string_view target = View(args->target_name, args->target_name_size);
    if (!target.empty())
      STABLERT_CAPI_RETURN_IF_ERROR(
          kernels::ffi::CheckHandlerMetadata("PJRT_FFI_Register_Handler", target, args->handler));
    kernels::ffi::HandlerBundle bundle;
    bundle.execute = args->handler;
    bundle.traits = static_cast<uint32_t>(args->traits);
    STABLERT_CAPI_RETURN_IF_ERROR(kernels::ffi::RegisterHandler("PJRT_FFI_Register_Handler",
                                                                View(args->target_name, args->target_name_size),
                                                                View(args->platform_name, args->platform_name_size),
                                                                bundle));
    return nullptr;
  })
}

PJRT_Error* TypeRegister(PJRT_FFI_Type_Register_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_FFI_Type_Register, args);
  STABLERT_CAPI_REQUIRE(PJRT_FFI_Type_Register, args->type_name);
  STABLERT_CAPI_GUARD(PJRT_FFI_Type_Register, {
    int64_t id = args->type_id;
    STABLERT_CAPI_RETURN_IF_ERROR(kernels::ffi::RegisterType("PJRT_FFI_Type_Register",
                                                             View(args->type_name, args->type_name_size), &id,
                                                             args->type_info ? args->type_info->deleter : nullptr));
    args->type_id = id;
    return nullptr;
  })
}

PJRT_Error* UserDataAdd(PJRT_FFI_UserData_Add_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_FFI_UserData_Add, args);
  STABLERT_CAPI_GUARD(PJRT_FFI_UserData_Add, {
    if (args->context == nullptr) {
      STABLERT_CAPI_RETURN_IF_ERROR(kernels::ffi::AddProcessUserData("PJRT_FFI_UserData_Add", args->user_data.type_id,
                                                                     args->user_data.data));
      return nullptr;
    }
    STABLERT_CAPI_RETURN_IF_ERROR(CheckLiveExecuteContext("PJRT_FFI_UserData_Add", args->context));
    std::lock_guard<std::mutex> lock(args->context->mutex);
    for (const auto& [type_id, data] : args->context->ffi_user_data)
      if (type_id == args->user_data.type_id)
        return ToPjrtError(Status(StatusCode::kAlreadyExists, "PJRT_FFI_UserData_Add: the context already holds "
                                                              "user data of type id " +
                                                                  std::to_string(type_id)));
    args->context->ffi_user_data.emplace_back(args->user_data.type_id, args->user_data.data);
    return nullptr;
  })
}

PJRT_FFI_Extension kFfi = {
    {PJRT_FFI_Extension_STRUCT_SIZE, PJRT_Extension_Type_FFI, nullptr},
    &TypeRegister,
    &UserDataAdd,
    &RegisterHandler,
};

}  // namespace

PJRT_Extension_Base* FfiExtension(PJRT_Extension_Base* next) {
  kFfi.base.next = next;
  return &kFfi.base;
}

}  // namespace stablert::capi
