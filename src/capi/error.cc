#include "capi/error.h"

#include <new>

namespace stablert::capi {
namespace {

struct ErrorImpl {
  PJRT_Error base;  // first member: callers see a PJRT_Error with a vtable
  Status status;
};

void VtableDestroy(PJRT_Error* error) { delete reinterpret_cast<ErrorImpl*>(error); }

void VtableMessage(const PJRT_Error* error, const char** message, size_t* message_size) {
  const auto* impl = reinterpret_cast<const ErrorImpl*>(error);
  *message = impl->status.message().data();
  *message_size = impl->status.message().size();
}

PJRT_Error_Code VtableGetCode(const PJRT_Error* error) {
  return static_cast<PJRT_Error_Code>(reinterpret_cast<const ErrorImpl*>(error)->status.code());
}

// StableRT errors carry no payloads.
void VtableForEachPayload(const PJRT_Error*, PJRT_Error_PayloadVisitor, void*) {}

const PJRT_Error_FunctionTable kErrorVtable = {
    PJRT_Error_FunctionTable_STRUCT_SIZE,
    sizeof(ErrorImpl),
    nullptr,
    &VtableDestroy,
    &VtableMessage,
    &VtableGetCode,
    &VtableForEachPayload,
};

}  // namespace

PJRT_Error* ToPjrtError(const Status& status) {
  if (status.ok()) return nullptr;
  auto* impl = new (std::nothrow) ErrorImpl{{&kErrorVtable}, status};
  return impl ? &impl->base : nullptr;
}

Status FromPjrtError(const PJRT_Error* error) {
  if (!error) return OkStatus();
  if (error->vtable == &kErrorVtable) return reinterpret_cast<const ErrorImpl*>(error)->status;
  const char* message = nullptr;
  size_t size = 0;
  error->vtable->message(error, &message, &size);
  return Status(static_cast<StatusCode>(error->vtable->get_code(error)), std::string(message, size));
}

Status CheckStructSize(const char* function, const char* struct_name, size_t given, size_t needed) {
  if (given >= needed) return OkStatus();
  return InvalidArgument(std::string(function) + ": struct_size " + std::to_string(given) + " of " + struct_name +
                         " is smaller than the " + std::to_string(needed) +
                         " bytes this plugin reads; the caller was built with an older or invalid PJRT header");
}

void ErrorDestroy(PJRT_Error_Destroy_Args* args) {
  if (!args || !args->error) return;
  args->error->vtable->destroy(args->error);
}

void ErrorMessage(PJRT_Error_Message_Args* args) {
  if (!args) return;
  if (!args->error) {
    args->message = "";
    args->message_size = 0;
    return;
  }
  args->error->vtable->message(args->error, &args->message, &args->message_size);
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Error_GetCode, args);
  STABLERT_CAPI_REQUIRE(PJRT_Error_GetCode, args->error);
  args->code = args->error->vtable->get_code(args->error);
  return nullptr;
}

PJRT_Error* ErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Error_ForEachPayload, args);
  STABLERT_CAPI_REQUIRE(PJRT_Error_ForEachPayload, args->error);
  if (args->visitor) args->error->vtable->for_each_payload(args->error, args->visitor, args->user_arg);
  return nullptr;
}

}  // namespace stablert::capi
