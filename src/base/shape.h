// Dense array shapes: dimensions, element counts and row-major strides.
// Pure value types; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"

namespace stablert {

using Dims = std::vector<int64_t>;

// Product of dims; 1 for a scalar. Returns an error if any dim is negative or the
// product overflows int64.
StatusOr<int64_t> CheckedElementCount(const Dims& dims);
// Product of dims for dims known to be valid.
int64_t ElementCount(const Dims& dims);
// Row-major (major-to-minor) strides in elements.
Dims RowMajorStrides(const Dims& dims);
// "[2,3]" style text, "[]" for scalars.
std::string DimsToString(const Dims& dims);

}  // namespace stablert
