// Conversions between floating-point element bit patterns and double, for every float
// dtype StableRT knows (f64, f32, f16, bf16, the f8/f6/f4 formats). Used to print
// constants and to read float attributes. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace stablert::ir {

// The value of the `DTypeBitWidth(dtype)`-bit pattern `bits` (in the low bits) as a
// double. NaN for NaN patterns; 0 for non-float dtypes.
double FloatBitsToDouble(DType dtype, uint64_t bits);

// Loads element bits of a float dtype from storage of DTypeByteSize(dtype) bytes
// (little-endian).
uint64_t LoadElementBits(DType dtype, const uint8_t* data);

}  // namespace stablert::ir
