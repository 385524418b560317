// The PJRT profiler extension: frameworks (jax.profiler) start and stop StableRT's trace
// recorder (runtime/trace.h) through it and receive what it recorded as a serialized
// tensorflow.profiler.XSpace: a plane "/device:CUSTOM:<id>" per device with a line of
// executions ("XLA Modules") and a line of plan steps ("XLA Ops", each named by its op,
// with its source location and kernel as a stat).
// Static, immutable data; the API's functions are thread-safe.
#pragma once

#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// The extension, linked in front of `next`.
PJRT_Extension_Base* ProfilerExtension(PJRT_Extension_Base* next);

}  // namespace stablert::capi
