// Lowering of custom calls to XLA FFI handlers (kernels/ffi_registry.h); see lower_ffi.cc.
// Internal to plan/.
#pragma once

#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::plan {

class Lowering;

// Whether `op` (a custom_call to `target`) is an FFI call: the target is registered, or the
// op has the typed-FFI form (api_version 4 or a dictionary backend_config).
bool IsFfiCustomCall(const ir::Operation& op, std::string_view target);
// One "ffi_call" step; Unimplemented naming an unregistered target.
Status LowerFfiCall(Lowering& lowering, const ir::Operation& op, std::string_view target);

}  // namespace stablert::plan
