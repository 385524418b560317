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

// ops::MaxOp (kMax) or MinOp: a NaN a is kept, else a NaN b is taken; flushed values
// compare with -0 < +0.
template <bool kMax, class D, class V>
HWY_INLINE V MaxMin(D d, V a, V b) {
  const hn::RebindToSigned<D> di;
  const V fa = FlushDenormal(d, a), fb = FlushDenormal(d, b);
  const auto a_negative = hn::RebindMask(d, hn::Lt(hn::BitCast(di, fa), hn::Zero(di)));
  const auto equal = hn::Eq(fa, fb);
  const auto pick_a = kMax ? hn::Or(hn::Gt(fa, fb), hn::AndNot(a_negative, equal))
                           : hn::Or(hn::Lt(fa, fb), hn::And(a_negative, equal));
  const V picked = hn::IfThenElse(pick_a, fa, fb);
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, picked));
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // STABLERT_KERNELS_SIMD_MAX_MIN_INL_H_ toggle
