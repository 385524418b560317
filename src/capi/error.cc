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
  const PJRT_Error_Code returned = error->vtable->get_code(error);
  int64_t code = RawEnumValue(returned);
  // A foreign error always fails: an OK (or unknown) code becomes UNKNOWN.
  return CallerStatus(code == PJRT_Error_Code_OK ? int64_t{PJRT_Error_Code_UNKNOWN} : code, message, size);
}

Status CallerStatus(int64_t code, const char* message, size_t message_size) {
  if (!IsValidErrorCode(code)) code = PJRT_Error_Code_UNKNOWN;
  return Status(static_cast<StatusCode>(code), message ? std::string(message, message_size) : std::string());
}

bool IsValidErrorCode(int64_t code) { return code >= PJRT_Error_Code_OK && code <= PJRT_Error_Code_UNAUTHENTICATED; }

Status CheckCallerErrorCode(const char* function, const char* field, int64_t code, bool allow_ok) {
  if (IsValidErrorCode(code) && (allow_ok || code != PJRT_Error_Code_OK)) return OkStatus();
  return InvalidArgument(std::string(function) + ": " + field + " " + std::to_string(code) +
                         (IsValidErrorCode(code) ? " (OK) is not an error code" : " is not a PJRT_Error_Code") +
                         "; expected " + (allow_ok ? "0 (OK)" : "1 (CANCELLED)") + " through 16 (UNAUTHENTICATED)");
}

Status NameFunction(const char* function, const Status& status) {
  if (status.ok() || status.message().rfind(function, 0) == 0) return status;
  return status.WithPrefix(function);
}

PJRT_Error* ExceptionToPjrtError(const char* function, std::exception_ptr exception) noexcept {
  try {
    try {
      std::rethrow_exception(exception);
    } catch (const std::bad_alloc& e) {
      return ToPjrtError(ResourceExhausted(std::string(function) + ": out of memory (" + e.what() + ")"));
    } catch (const std::length_error& e) {
      return ToPjrtError(ResourceExhausted(std::string(function) + ": a size exceeds what can be allocated (" +
                                           e.what() + ")"));
    } catch (const std::exception& e) {
      return ToPjrtError(Internal(std::string(function) + ": " + e.what()));
    } catch (...) {
      return ToPjrtError(Internal(std::string(function) + ": unknown exception"));
    }
  } catch (...) {
    // Building the message failed (no memory left): the code alone must still get out.
    return ToPjrtError(Status(StatusCode::kResourceExhausted, std::string()));
  }
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
