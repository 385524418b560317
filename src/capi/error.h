// PJRT_Error: how a Status crosses the C boundary, and the argument checks every entry
// point starts with.
//
// A PJRT_Error is heap-allocated by the plugin and owned by the caller, who frees it with
// PJRT_Error_Destroy (or its vtable's destroy). Errors are immutable; all functions here
// are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// A new PJRT_Error for a non-OK status; nullptr for OK.
PJRT_Error* ToPjrtError(const Status& status);
// Whether `buffer` was made by this plugin and not destroyed yet (handles.cc).
bool IsLiveBuffer(const PJRT_Buffer* buffer);
// The status an error carries (OK for nullptr).
Status FromPjrtError(const PJRT_Error* error);

// InvalidArgument unless the caller's struct covers `needed` bytes of the args struct.
Status CheckStructSize(const char* function, const char* struct_name, size_t given, size_t needed);

// The integer a C enum field of the caller's holds, read as its underlying integer: a
// caller may store any value there, and loading one outside the enumeration as the enum
// type is undefined behaviour. Every enum field the plugin reads from the caller goes
// through this before it is validated. Negative values read as negative.
template <typename E>
int64_t RawEnumValue(const E& field) {
  static_assert(std::is_enum_v<E>);
  std::make_signed_t<std::underlying_type_t<E>> raw;  // as C callers store it: an int
  std::memcpy(&raw, &field, sizeof raw);
  return static_cast<int64_t>(raw);
}

// True for the codes PJRT_Error_Code defines (OK through UNAUTHENTICATED).
bool IsValidErrorCode(int64_t code);
// The status a caller hands in as an error code (read with RawEnumValue) and a message of
// `message_size` bytes (null: empty). A code PJRT does not define becomes UNKNOWN; OK stays OK.
Status CallerStatus(int64_t code, const char* message, size_t message_size);
// InvalidArgument naming `function` and `field` unless `code` is a PJRT_Error_Code other
// than OK (the code of an error the caller hands in: PJRT_Event_Set, error buffers).
Status CheckCallerErrorCode(const char* function, const char* field, int64_t code, bool allow_ok);

// `status` with its message prefixed by "`function`: " unless it already names it
// (errors of lower layers passed out of an entry point).
Status NameFunction(const char* function, const Status& status);
template <typename T>
StatusOr<T> NameFunction(const char* function, StatusOr<T> result) {
  if (result.ok()) return result;
  return NameFunction(function, result.status());
}

// The error an exception escaping an entry point becomes: RESOURCE_EXHAUSTED for failed
// allocations (std::bad_alloc, std::length_error), INTERNAL otherwise; named by `function`.
PJRT_Error* ExceptionToPjrtError(const char* function, std::exception_ptr exception) noexcept;

// PJRT_Error_* entry points.
void ErrorDestroy(PJRT_Error_Destroy_Args* args);
void ErrorMessage(PJRT_Error_Message_Args* args);
PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args);
PJRT_Error* ErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args);

}  // namespace stablert::capi

// Starts an entry point: checks that `args` is non-null and its struct_size covers the
// whole args struct of the header StableRT is built with (or up to `last_field`).
#define STABLERT_CAPI_ARGS(fn, args)                                                         \
  do {                                                                                       \
    if ((args) == nullptr)                                                                   \
      return ::stablert::capi::ToPjrtError(::stablert::InvalidArgument(#fn ": args is null")); \
    ::stablert::Status _size_status = ::stablert::capi::CheckStructSize(                     \
        #fn, #fn "_Args", (args)->struct_size, fn##_Args_STRUCT_SIZE);                       \
    if (!_size_status.ok()) return ::stablert::capi::ToPjrtError(_size_status);               \
  } while (0)

#define STABLERT_CAPI_ARGS_UP_TO(fn, args, last_field)                                       \
  do {                                                                                       \
    if ((args) == nullptr)                                                                   \
      return ::stablert::capi::ToPjrtError(::stablert::InvalidArgument(#fn ": args is null")); \
    ::stablert::Status _size_status = ::stablert::capi::CheckStructSize(                     \
        #fn, #fn "_Args", (args)->struct_size,                                               \
        offsetof(fn##_Args, last_field) + sizeof(((fn##_Args*)nullptr)->last_field));        \
    if (!_size_status.ok()) return ::stablert::capi::ToPjrtError(_size_status);               \
  } while (0)

// Rejects a null handle argument with a message naming the function and the field.
#define STABLERT_CAPI_REQUIRE(fn, pointer)                                                      \
  do {                                                                                          \
    if ((pointer) == nullptr)                                                                   \
      return ::stablert::capi::ToPjrtError(::stablert::InvalidArgument(#fn ": " #pointer " is null")); \
  } while (0)

// As STABLERT_CAPI_REQUIRE, and the buffer must be live: made by this plugin and not
// destroyed (a destroyed or foreign handle is INVALID_ARGUMENT, never dereferenced).
#define STABLERT_CAPI_REQUIRE_BUFFER(fn, pointer)                                                   \
  do {                                                                                              \
    STABLERT_CAPI_REQUIRE(fn, pointer);                                                             \
    if (!::stablert::capi::IsLiveBuffer(pointer))                                                   \
      return ::stablert::capi::ToPjrtError(::stablert::InvalidArgument(                             \
          #fn ": " #pointer " is not a live buffer of this plugin (destroyed already, or another plugin's)")); \
  } while (0)

// Returns the error of a failed Status from an entry point.
#define STABLERT_CAPI_RETURN_IF_ERROR(expr)                                       \
  do {                                                                            \
    ::stablert::Status _capi_status = (expr);                                     \
    if (!_capi_status.ok()) return ::stablert::capi::ToPjrtError(_capi_status);   \
  } while (0)

#define STABLERT_CAPI_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)           \
  auto tmp = (expr);                                                  \
  if (!tmp.ok()) return ::stablert::capi::ToPjrtError(tmp.status());  \
  lhs = std::move(tmp).value()

#define STABLERT_CAPI_ASSIGN_OR_RETURN(lhs, expr) \
  STABLERT_CAPI_ASSIGN_OR_RETURN_IMPL(STABLERT_CONCAT(_capi_or_, __LINE__), lhs, expr)

// Wraps an entry point body so that no C++ exception (e.g. std::bad_alloc) crosses the ABI.
// api_table.cc also wraps every slot in the same guard, so an entry point that forgets it
// is still covered; the macro keeps each body safe when called directly.
#define STABLERT_CAPI_GUARD(fn, ...)                                        \
  try {                                                                     \
    __VA_ARGS__                                                             \
  } catch (...) {                                                           \
    return ::stablert::capi::ExceptionToPjrtError(#fn, std::current_exception()); \
  }
