// Vector elementwise binary ops on f32/f64 (the host's ISA, dispatch.h), with the scalar
// semantics of kernels/scalar_ops.h: maximum/minimum propagate NaN, order -0 below +0 and
// treat denormals as zeros of their sign. out may alias a or b.
//
// power and atan2 on f32 are StableRT's own (special_math-inl.h: computed in f64 lanes and
// rounded), with every lane the approximation does not cover (zero, denormal, negative,
// infinite or NaN operands; results that overflow or are denormal) computed by the scalar op;
// on f64 they are the scalar op per element.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stablert::kernels::simd {

enum class BinaryFn : int { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kAtan2 };

void Binary(BinaryFn fn, const float* a, const float* b, float* out, size_t n);
void Binary(BinaryFn fn, const double* a, const double* b, double* out, size_t n);
// bf16 / f16 operands and results as their bits: widened exactly to f32, computed as the
// f32 function computes, rounded once to nearest even (kernels/half.h), as XLA computes
// them. out may alias a or b.
void BinaryBF16(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n);
void BinaryF16(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n);

}  // namespace stablert::kernels::simd
