// Conversions between PJRT memory layouts and StableRT's dense row-major arrays.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// OK if `layout` is null or describes the dense row-major layout StableRT stores.
Status CheckDefaultLayout(const char* function, const PJRT_Buffer_MemoryLayout* layout, const Dims& dims,
                          DType dtype);

// Byte strides for a host-side layout: empty for dense row-major; explicit strides from a
// Strides layout or a tile-free Tiled (minor_to_major) layout. Unimplemented for tiles.
StatusOr<std::vector<int64_t>> HostByteStrides(const char* function, const PJRT_Buffer_MemoryLayout* layout,
                                               const Dims& dims, DType dtype);

// The element type named by a PJRT_Buffer_Type, or InvalidArgument naming `function`.
StatusOr<DType> ToDType(const char* function, PJRT_Buffer_Type type);

// Copies `count` dims from a C array (which may be null when count is 0).
StatusOr<Dims> ToDims(const char* function, const int64_t* dims, size_t count);

}  // namespace stablert::capi
