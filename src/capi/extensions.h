// The PJRT extensions StableRT provides, chained from PJRT_Api.extension_start.
// The chain is static, immutable data; thread-safe.
#pragma once

#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// Head of the extension chain (Shardings, FFI, Profiler, Layouts).
PJRT_Extension_Base* ExtensionChain();

}  // namespace stablert::capi
