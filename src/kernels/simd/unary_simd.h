// Vector elementwise unary math on f32/f64 (the host's ISA, dispatch.h). Results equal the
// scalar semantics in kernels/scalar_ops.h on special values (NaN, ±Inf, ±0, denormals,
// overflow and underflow ranges): lanes outside a function's accurate range are computed by
// the scalar op. In-place (in == out) is allowed.
//
// cbrt, tan, erf, erf_inv, lgamma and digamma are StableRT's own approximations
// (special_math-inl.h) on f32; on f64 they are the scalar op per element.
#pragma once

#include <cstddef>

namespace stablert::kernels::simd {

enum class UnaryFn : int {
  kExp, kExpm1, kLog, kLog1p, kTanh, kLogistic, kSin, kCos, kSqrt, kRsqrt,
  kCbrt, kTan, kErf, kErfInv, kLgamma, kDigamma,
};

void Unary(UnaryFn fn, const float* in, float* out, size_t n);
void Unary(UnaryFn fn, const double* in, double* out, size_t n);

}  // namespace stablert::kernels::simd
