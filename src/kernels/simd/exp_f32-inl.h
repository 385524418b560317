// exp of f32 lanes in f32 arithmetic, included by the per-target vector code (unary_simd.cc;
// HWY_TARGET_INCLUDE, so no include guard: once per Highway target).
//
// exp(x) = 2^n e^r, n = x / ln 2 rounded to nearest, r = x - n ln 2 (two FMAs, ln 2 split in
// a high part and a correction), e^r by a degree-6 polynomial in r whose first two
// coefficients are 1 (tools/fit/fit_exp.py: relative error 3.1e-9 on [-ln2/2, ln2/2]; the f32
// evaluation below is within 0.91 ulp over every f32 of its domain, emulated; 0.84 ulp measured
// by vector_math_test's sample; with FMA instructions: without them the separately rounded
// steps reach 1.14 ulp), and 2^n built in the
// exponent bits. The rounding of x / ln 2 is the addition of 1.5 * 2^23: the sum's low
// mantissa bits are n, so n needs no conversion instructions (both Highway's and the
// hardware's float -> int conversions cost extra steps for out-of-range lanes this domain
// never has).
//
// Domain: finite x in [-87.3, 88.37] (n in [-126, 127]: 2^n is a normal f32 and exp(x) is
// normal and finite). The caller sends every other lane (NaN, +-Inf, overflow, denormal
// results) to the scalar op. Cannot fail; pure function of x.

// Per-target include guard (Highway's idiom for -inl.h headers).
#if defined(STABLERT_KERNELS_SIMD_EXP_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STABLERT_KERNELS_SIMD_EXP_F32_INL_H_
#undef STABLERT_KERNELS_SIMD_EXP_F32_INL_H_
#else
#define STABLERT_KERNELS_SIMD_EXP_F32_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace exp_f32 {

// The vector domain's bounds (see above).
inline constexpr float kLo = -87.3f;
inline constexpr float kHi = 88.37f;

// c2..c6 of e^r ~= 1 + r + c2 r^2 + ... + c6 r^6 (tools/fit/fit_exp.py).
inline constexpr float kC2 = 4.999999345e-01f;
inline constexpr float kC3 = 1.666652069e-01f;
inline constexpr float kC4 = 4.166838738e-02f;
inline constexpr float kC5 = 8.368709900e-03f;
inline constexpr float kC6 = 1.381461239e-03f;

template <class D, class V>
HWY_INLINE V Exp(D d, V x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::RebindToSigned<D> di;
  constexpr float kRound = 12582912.0f;       // 1.5 * 2^23: adding it rounds to an integer
  constexpr int32_t kRoundBits = 0x4B400000;  // its bits; the sum's bits are kRoundBits + n
  const V t = hn::MulAdd(x, hn::Set(d, 1.44269504f), hn::Set(d, kRound));
  const V n = hn::Sub(t, hn::Set(d, kRound));
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693145752f), x);  // ln 2 high part: n * it is exact
  r = hn::NegMulAdd(n, hn::Set(d, 1.42860677e-06f), r);
  V p = hn::MulAdd(hn::Set(d, kC6), r, hn::Set(d, kC5));
  p = hn::MulAdd(p, r, hn::Set(d, kC4));
  p = hn::MulAdd(p, r, hn::Set(d, kC3));
  p = hn::MulAdd(p, r, hn::Set(d, kC2));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  const auto exponent = hn::Add(hn::BitCast(di, t), hn::Set(di, int32_t{127} - kRoundBits));
  return hn::Mul(p, hn::BitCast(d, hn::ShiftLeft<23>(exponent)));
}

}  // namespace exp_f32
}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
