// Vector elementwise binary ops on f32/f64 (the host's ISA, dispatch.h), with the scalar
// semantics of kernels/scalar_ops.h: maximum/minimum propagate NaN, order -0 below +0 and
// treat denormals as zeros of their sign. out may alias a or b.
#pragma once

#include <cstddef>

namespace stablert::kernels::simd {

enum class BinaryFn : int { kAdd, kSub, kMul, kDiv, kMax, kMin };

void Binary(BinaryFn fn, const float* a, const float* b, float* out, size_t n);
void Binary(BinaryFn fn, const double* a, const double* b, double* out, size_t n);

}  // namespace stablert::kernels::simd
