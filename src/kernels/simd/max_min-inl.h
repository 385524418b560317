// Vector forms of scalar_ops.h's denormal flushing and of MaxOp/MinOp, per Highway target:
// included inside the per-target block of the simd/*.cc files that need them (Highway's
// "-inl.h" convention: the guard toggles once per target). Pure functions; no state.
#if defined(STABLERT_KERNELS_SIMD_MAX_MIN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STABLERT_KERNELS_SIMD_MAX_MIN_INL_H_
#undef STABLERT_KERNELS_SIMD_MAX_MIN_INL_H_
#else
#define STABLERT_KERNELS_SIMD_MAX_MIN_INL_H_
#endif

#include <cstring>
#include <limits>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A zero of x's sign where x is zero or denormal, else x (ops::FlushDenormal). Decided on
// the bits, so the floating-point mode (denormals-are-zero or not) does not matter.
template <class D, class V>
HWY_INLINE V FlushDenormal(D d, V x) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const T min = std::numeric_limits<T>::min();
  I min_bits;
  std::memcpy(&min_bits, &min, sizeof(min_bits));
  const auto tiny = hn::RebindMask(d, hn::Lt(hn::BitCast(di, hn::Abs(x)), hn::Set(di, min_bits)));
  return hn::IfThenElse(tiny, hn::And(x, hn::SignBit(d)), x);
}

// The maximum (kMax) or minimum of a and b, neither NaN, in the order -0 < +0, before
// flushing: equal values (IEEE equality: +0 == -0, and with denormals-are-zero a denormal
// equals the zeros) combine their bits, so the sign of the result is that of the larger
// (smaller) zero; a denormal or zero result is flushed by the caller (FlushDenormal is
// monotone, so flushing the result equals taking max/min of the flushed operands). The
// same in either floating-point mode.
template <bool kMax, class V>
HWY_INLINE V MaxMinUnflushed(V a, V b) {
  const V tie = kMax ? hn::And(a, b) : hn::Or(a, b);
  return hn::IfThenElse(hn::Eq(a, b), tie, kMax ? hn::Max(a, b) : hn::Min(a, b));
}

// a where a is NaN, else b where b is NaN, else r.
template <class V>
HWY_INLINE V KeepNaN(V a, V b, V r) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, r));
}

// ops::MaxOp (kMax) or MinOp: a NaN a is kept, else a NaN b is taken; flushed values
// compare with -0 < +0.
template <bool kMax, class D, class V>
HWY_INLINE V MaxMin(D d, V a, V b) {
  return FlushDenormal(d, KeepNaN(a, b, MaxMinUnflushed<kMax>(a, b)));
}

// ops::ClampOne(lo, x, hi) for lo and hi neither NaN: MinOp(MaxOp(x, lo), hi).
template <class D, class V>
HWY_INLINE V ClampNumberBounds(D d, V lo, V x, V hi) {
  const V r = MaxMinUnflushed<false>(MaxMinUnflushed<true>(x, lo), hi);
  return FlushDenormal(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// The same for lo and hi neither NaN nor zero nor denormal: no ties between distinct bits.
template <class D, class V>
HWY_INLINE V ClampNormalBounds(D d, V lo, V x, V hi) {
  const V r = hn::Min(hn::Max(x, lo), hi);
  return FlushDenormal(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // STABLERT_KERNELS_SIMD_MAX_MIN_INL_H_ toggle
