// The PJRT custom partitioner extension (xla/pjrt/c/pjrt_c_api_custom_partitioner_extension.h):
//   register_batch_partitionable  marks a custom call target batch partitionable
//                                 (passes/sharding/batch_partitionable.h): JAX's
//                                 jax.ffi.register_ffi_target_as_batch_partitionable
//   register_custom_partitioner   accepted and not used: StableRT does not run partitioning
//                                 callbacks (jax.experimental.custom_partitioning); jaxlib
//                                 registers each rule with every plugin as it is defined

// Errors name the function. Thread-safe: static data; the registry is synchronized.
#pragma once

#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// The extension, whose `next` is `next`.
PJRT_Extension_Base* CustomPartitionerExtension(PJRT_Extension_Base* next);

}  // namespace stablert::capi
