// Vector row updates for scatter (scatter_simd.h), compiled once per Highway target
// (dispatch.h). Columns past the last whole vector use the scalar op, which gives the same
// (exact) results.
#include "kernels/simd/scatter_simd.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/scatter_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A zero of x's sign where x is zero or denormal (by its bits), else x.
template <class D, class V>
HWY_INLINE V FlushTiny(D d, V x) {
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
HWY_INLINE V MaxMinOf(D d, V a, V b) {
  const V fa = FlushTiny(d, a), fb = FlushTiny(d, b);
  const hn::RebindToSigned<D> di;
  const auto a_neg = hn::RebindMask(d, hn::Lt(hn::BitCast(di, fa), hn::Zero(di)));
  const auto equal = hn::Eq(fa, fb);
  const auto pick_a = kMax ? hn::Or(hn::Gt(fa, fb), hn::AndNot(a_neg, equal))
                           : hn::Or(hn::Lt(fa, fb), hn::And(a_neg, equal));
  V r = hn::IfThenElse(pick_a, fa, fb);
  r = hn::IfThenElse(hn::IsNaN(b), b, r);
  return hn::IfThenElse(hn::IsNaN(a), a, r);
}

template <class ScalarOp, typename T, class Fn>
HWY_INLINE void CombineRows(T* block, int64_t row_stride, const int64_t* rows, const T* updates,
                            int64_t update_stride, int64_t count, int64_t width, Fn f) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < count; ++i) {
    if (rows[i] < 0) continue;
    T* r = block + rows[i] * row_stride;
    const T* u = updates + i * update_stride;
    int64_t c = 0;
    for (; c + lanes <= width; c += lanes) hn::StoreU(f(d, hn::LoadU(d, r + c), hn::LoadU(d, u + c)), d, r + c);
    for (; c < width; ++c) r[c] = ScalarOp::Apply(r[c], u[c]);
  }
}

template <typename T>
void CombineImpl(BinaryFn fn, T* block, int64_t row_stride, const int64_t* rows, const T* updates,
                 int64_t update_stride, int64_t count, int64_t width) {
  switch (fn) {
    case BinaryFn::kAdd:
      return CombineRows<ops::AddOp>(block, row_stride, rows, updates, update_stride, count, width,
                                     [](auto, auto x, auto y) { return hn::Add(x, y); });
    case BinaryFn::kMul:
      return CombineRows<ops::MultiplyOp>(block, row_stride, rows, updates, update_stride, count, width,
                                          [](auto, auto x, auto y) { return hn::Mul(x, y); });
    case BinaryFn::kMax:
      return CombineRows<ops::MaxOp>(block, row_stride, rows, updates, update_stride, count, width,
                                     [](auto d, auto x, auto y) { return MaxMinOf<true>(d, x, y); });
    case BinaryFn::kMin:
      return CombineRows<ops::MinOp>(block, row_stride, rows, updates, update_stride, count, width,
                                     [](auto d, auto x, auto y) { return MaxMinOf<false>(d, x, y); });
    default:
      return;
  }
}

void CombineF32(BinaryFn fn, float* block, int64_t row_stride, const int64_t* rows, const float* updates,
                int64_t update_stride, int64_t count, int64_t width) {
  CombineImpl(fn, block, row_stride, rows, updates, update_stride, count, width);
}
void CombineF64(BinaryFn fn, double* block, int64_t row_stride, const int64_t* rows, const double* updates,
                int64_t update_stride, int64_t count, int64_t width) {
  CombineImpl(fn, block, row_stride, rows, updates, update_stride, count, width);
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(CombineF32);
HWY_EXPORT(CombineF64);

void ScatterCombineRows(BinaryFn fn, float* block, int64_t row_stride, const int64_t* rows, const float* updates,
                        int64_t update_stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(CombineF32)(fn, block, row_stride, rows, updates, update_stride, count, width);
}
void ScatterCombineRows(BinaryFn fn, double* block, int64_t row_stride, const int64_t* rows, const double* updates,
                        int64_t update_stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(CombineF64)(fn, block, row_stride, rows, updates, update_stride, count, width);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
