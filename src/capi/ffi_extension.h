// The PJRT FFI extension (xla/pjrt/c/pjrt_c_api_ffi_extension.h): how a framework registers
// XLA FFI handlers and types with StableRT and gives an execution user data.
//   register_handler  a typed FFI handler (XLA_FFI_Handler*) as the execute stage of a
//                     target, for platform "stablert" (or "cpu"/"host", any case);
//                     kernels/ffi_registry.h
//   type_register     an FFI type id by name (0 in: a new or the existing id)
//   user_data_add     user data kept by a live PJRT_ExecuteContext, one per type id; the
//                     handlers of an execution given that context find it with
//                     XLA_FFI_ExecutionContext_Get (kernels/ffi_execution.h). A null
//                     context (an error in XLA's plugins) adds user data of the process,
//                     found by every execution whose own context lacks that type: how
//                     stablert's Python package serves jaxlib's CPU callback handlers,
//                     since jaxlib forwards its host callbacks to CPU and GPU platforms only
// Errors name the function. Thread-safe: the extension is static data; the registry is
// internally synchronized.
#pragma once

#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// The extension, whose `next` is `next`.
PJRT_Extension_Base* FfiExtension(PJRT_Extension_Base* next);

}  // namespace stablert::capi
