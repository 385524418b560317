// Dense array shapes: dimensions, element counts and row-major strides, and the
// overflow-checked size arithmetic every layer uses on sizes that come from outside
// (C API arguments, program types, host layouts).
// Pure functions and value types; thread-safe. The checked functions never overflow:
// they fail with InvalidArgument (or return nullopt) instead of wrapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"

namespace stablert {

using Dims = std::vector<int64_t>;

// Product of dims; 1 for a scalar. Returns an error if any dim is negative or the
// product overflows int64.
StatusOr<int64_t> CheckedElementCount(const Dims& dims);
// Bytes of a dense array of `dims` with `element_size`-byte elements. InvalidArgument if a
// dim or the element size is negative, or the element count or byte count exceeds
// INT64_MAX (so the result always fits both int64_t and size_t).
StatusOr<int64_t> CheckedByteSize(const Dims& dims, int64_t element_size);

// The bytes a strided array touches, relative to the address of its element [0,...,0]:
// [begin, end), with begin < 0 when a stride is negative. {0, 0} for an empty array.
struct ByteSpan {
  int64_t begin = 0;
  int64_t end = 0;
};
// InvalidArgument if the rank of `byte_strides` differs from `dims`, a dim is negative, or
// an offset (stride x (dim - 1), their sum, or the end of the last element) overflows
// int64. Messages name the stride ("byte_strides[1] = ...").
StatusOr<ByteSpan> CheckedStridedSpan(const Dims& dims, const std::vector<int64_t>& byte_strides,
                                      int64_t element_size);

// a + b and a * b, or nullopt on int64 overflow.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);

// Product of dims for dims known to be valid.
int64_t ElementCount(const Dims& dims);
// Row-major (major-to-minor) strides in elements.
Dims RowMajorStrides(const Dims& dims);
// "[2,3]" style text, "[]" for scalars.
std::string DimsToString(const Dims& dims);

}  // namespace stablert
