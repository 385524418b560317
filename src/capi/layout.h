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

// The major_to_minor order of the bytes a device layout asks for (runtime/array_layout.h):
// empty for null or dense row-major; the reversed minor_to_major of a tile-free Tiled
// layout; for a Strides layout, the order of its strides when they are those of a dense
// array in some dimension order. Unimplemented naming `function` for tiles and for strides
// with gaps or overlaps (StableRT stores dense arrays); InvalidArgument for malformed input.
StatusOr<std::vector<int64_t>> DeviceLayoutOrder(const char* function, const PJRT_Buffer_MemoryLayout* layout,
                                                 const Dims& dims, DType dtype);

// Byte strides for a host-side layout: empty for dense row-major; explicit strides from a
// Strides layout or a tile-free Tiled (minor_to_major) layout. Unimplemented for tiles.
// `dims` must be a valid shape (ArrayByteSize OK). The strides are not bounds-checked
// here: see HostDestinationBytes / HostSourceSpan.
StatusOr<std::vector<int64_t>> HostByteStrides(const char* function, const PJRT_Buffer_MemoryLayout* layout,
                                               const Dims& dims, DType dtype);

// Bytes of a dense array of `dims` and `dtype`, checked: InvalidArgument naming `function`
// for negative dims and for element or byte counts beyond INT64_MAX. Every entry point
// that takes dims from the caller calls this before sizing anything.
StatusOr<int64_t> ArrayByteSize(const char* function, const Dims& dims, DType dtype);

// The bytes a host destination needs to receive `dims` with `byte_strides` (empty: dense):
// the end of the last element. InvalidArgument naming `function` for negative strides
// (they would write before the destination) and for offsets that overflow.
StatusOr<size_t> HostDestinationBytes(const char* function, const Dims& dims, DType dtype,
                                      const std::vector<int64_t>& byte_strides);

// Checks that reading a host source of `dims` with `byte_strides` (empty: dense) computes
// no offset that overflows; negative strides (reversed NumPy views) are allowed, as the
// caller vouches for the memory around `data`. InvalidArgument naming `function`.
Status CheckHostSourceStrides(const char* function, const Dims& dims, DType dtype,
                              const std::vector<int64_t>& byte_strides);

// The element type named by a PJRT_Buffer_Type value (read with RawEnumValue), or
// InvalidArgument naming `function`.
StatusOr<DType> ToDType(const char* function, int64_t type);

// Copies `count` dims from a C array (which may be null when count is 0).
StatusOr<Dims> ToDims(const char* function, const int64_t* dims, size_t count);

}  // namespace stablert::capi
