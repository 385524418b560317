// Vector binary ops (binary_simd.h), compiled once per Highway target (dispatch.h). The
// tail shorter than a vector uses the scalar op, which gives the same (exact) results.
#include "kernels/simd/binary_simd.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/binary_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class ScalarOp, typename T, class Fn>
HWY_INLINE void VectorZip(const T* a, const T* b, T* out, size_t n, Fn f) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto y0 = f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    const auto y1 = f(d, hn::LoadU(d, a + i + lanes), hn::LoadU(d, b + i + lanes));
    hn::StoreU(y0, d, out + i);
    hn::StoreU(y1, d, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  for (; i < n; ++i) out[i] = ScalarOp::Apply(a[i], b[i]);
}

// A zero of x's sign where x is zero or denormal (by its bits), else x.
template <class D, class V>
HWY_INLINE V Flush(D d, V x) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const T min = std::numeric_limits<T>::min();
  I min_bits;
  std::memcpy(&min_bits, &min, sizeof(min_bits));
  const auto tiny = hn::RebindMask(d, hn::Lt(hn::BitCast(di, hn::Abs(x)), hn::Set(di, min_bits)));
  return hn::IfThenElse(tiny, hn::And(x, hn::SignBit(d)), x);
}

// maximum (kMax) or minimum with scalar_ops.h's MaxOp/MinOp semantics.
template <bool kMax, class D, class V>
HWY_INLINE V MaxMin(D d, V a, V b) {
  const V fa = Flush(d, a), fb = Flush(d, b);
  const auto a_neg = hn::RebindMask(d, hn::Lt(hn::BitCast(hn::RebindToSigned<D>(), fa), hn::Zero(hn::RebindToSigned<D>())));
  const auto equal = hn::Eq(fa, fb);
  const auto pick_a = kMax ? hn::Or(hn::Gt(fa, fb), hn::AndNot(a_neg, equal))
                           : hn::Or(hn::Lt(fa, fb), hn::And(a_neg, equal));
  V r = hn::IfThenElse(pick_a, fa, fb);
  r = hn::IfThenElse(hn::IsNaN(b), b, r);
  return hn::IfThenElse(hn::IsNaN(a), a, r);
}

template <typename T>
void BinaryImpl(BinaryFn fn, const T* a, const T* b, T* out, size_t n) {
  switch (fn) {
    case BinaryFn::kAdd:
      return VectorZip<ops::AddOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Add(x, y); });
    case BinaryFn::kSub:
      return VectorZip<ops::SubtractOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Sub(x, y); });
    case BinaryFn::kMul:
      return VectorZip<ops::MultiplyOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Mul(x, y); });
    case BinaryFn::kDiv:
      return VectorZip<ops::DivideOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Div(x, y); });
    case BinaryFn::kMax:
      return VectorZip<ops::MaxOp>(a, b, out, n, [](auto d, auto x, auto y) { return MaxMin<true>(d, x, y); });
    case BinaryFn::kMin:
      return VectorZip<ops::MinOp>(a, b, out, n, [](auto d, auto x, auto y) { return MaxMin<false>(d, x, y); });
  }
}

void BinaryF32(BinaryFn fn, const float* a, const float* b, float* out, size_t n) { BinaryImpl(fn, a, b, out, n); }
void BinaryF64(BinaryFn fn, const double* a, const double* b, double* out, size_t n) { BinaryImpl(fn, a, b, out, n); }

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(BinaryF32);
HWY_EXPORT(BinaryF64);

void Binary(BinaryFn fn, const float* a, const float* b, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF32)(fn, a, b, out, n);
}
void Binary(BinaryFn fn, const double* a, const double* b, double* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF64)(fn, a, b, out, n);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
