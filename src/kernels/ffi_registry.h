// The process-wide registry of XLA FFI handlers and FFI type ids StableRT runs.
//
// User kernels written against XLA's FFI headers (xla/ffi/api/c_api.h, ffi.h) register here
// through PJRT_FFI_Extension (capi/ffi_extension.cc) or the XLA_FFI_Api table's
// XLA_FFI_Handler_Register (kernels/ffi_api.h). Lowering (plan/lower_ffi.cc) looks a custom
// call's target up at compile time; the "ffi_call" kernel (kernels/ffi_call.cc) looks it up
// again when a plan is loaded.
//
// The registry lives in kernels/ (which depends on base/ only) because both plan/ and
// runtime/ read it. It stores handler pointers untyped, so that this header does not need
// the FFI C header; kernels/ffi_api.h has the typed view.
//
// Registrations last for the life of the process (as in XLA); nothing is ever removed.
// Thread-safety: every function may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stablert::kernels::ffi {

// The stage handlers of one target (XLA_FFI_Handler_Bundle): XLA_FFI_Handler pointers,
// execute required, the others optional (null).
struct HandlerBundle {
  void* instantiate = nullptr;
  void* prepare = nullptr;
  void* initialize = nullptr;
  void* execute = nullptr;
  uint32_t traits = 0;  // XLA_FFI_Handler_Traits
  bool operator==(const HandlerBundle&) const = default;
};

// Whether handlers registered for `platform` run on StableRT: "stablert", "cpu" and "host"
// in any letter case (JAX passes the platform name it was given; XLA's CPU client uses
// "Host").
bool IsStablertPlatform(std::string_view platform);

// Registers `bundle` for `target`. `function` names the caller in errors. InvalidArgument
// for an empty target, a platform StableRT does not run (IsStablertPlatform) or a missing
// execute handler; AlreadyExists if `target` has a different bundle (the same one again is
// OK, as JAX may register a target once per platform name).
Status RegisterHandler(std::string_view function, std::string_view target, std::string_view platform,
                       const HandlerBundle& bundle);

// The bundle registered for `target`, or nullopt.
std::optional<HandlerBundle> FindHandler(std::string_view target);

// Registers the FFI type `name` (XLA_FFI_Type_Register / PJRT_FFI_Type_Register). If
// `*type_id` is 0 the type gets the id it already has, or a new unique one; otherwise the
// id must equal the one `name` already has, or not be taken by another type (then `name`
// gets it). `deleter` (may be null) frees objects of the type the runtime owns (FFI state).
// InvalidArgument for an empty name or a conflicting id.
Status RegisterType(std::string_view function, std::string_view name, int64_t* type_id,
                    void (*deleter)(void*));

// The deleter registered with `type_id`, or null.
using Deleter = void (*)(void*);
Deleter TypeDeleter(int64_t type_id);

}  // namespace stablert::kernels::ffi
