// Vector elementwise binary ops on f32/f64 (and f16/bf16 in f32 lanes, integers below) (the host's ISA, dispatch.h), with the scalar
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
// out[i] = fn(a[i], s), or fn(s, a[i]) with `scalar_first`: bit for bit what Binary computes
// with the other operand filled with s (the same vector ops, lane by lane). Only the IEEE
// ops kAdd, kSub, kMul, kDiv, kMax, kMin (fused steps call it for a per-row or splat operand,
// kernels/fused.cc). out may alias a.
void BinaryScalar(BinaryFn fn, const float* a, float s, bool scalar_first, float* out, size_t n);
void BinaryScalar(BinaryFn fn, const double* a, double s, bool scalar_first, double* out, size_t n);

// Integer ops with ops::*Op's semantics: add/subtract wrap; max/min by T's signedness;
// shifts read the amount as unsigned, and amounts of T's width or more (negative ones
// included) give 0 (left, logical right) or the sign fill (arithmetic right). 8-bit shifts
// are scalar loops (Highway 1.0 has no 8-bit variable shift). out may alias a or b.
enum class IntBinaryFn : int {
  kAdd, kSub, kAnd, kOr, kXor, kMax, kMin, kShiftLeft, kShiftRightLogical, kShiftRightArithmetic
};
void IntBinary(IntBinaryFn fn, const int8_t* a, const int8_t* b, int8_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const int16_t* a, const int16_t* b, int16_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const int32_t* a, const int32_t* b, int32_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const int64_t* a, const int64_t* b, int64_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const uint32_t* a, const uint32_t* b, uint32_t* out, size_t n);
void IntBinary(IntBinaryFn fn, const uint64_t* a, const uint64_t* b, uint64_t* out, size_t n);

}  // namespace stablert::kernels::simd
