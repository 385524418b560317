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
#include "kernels/simd/max_min-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class ScalarOp, typename T, class Fn>
HWY_INLINE void CombineRows(T* block, int64_t row_stride, const int64_t* rows, const T* updates,
                            int64_t update_stride, const int64_t* positions, int64_t count, int64_t width, Fn f) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < count; ++i) {
    T* r = block + rows[i] * row_stride;
    const T* u = updates + positions[i] * update_stride;
    int64_t c = 0;
    for (; c + lanes <= width; c += lanes) hn::StoreU(f(d, hn::LoadU(d, r + c), hn::LoadU(d, u + c)), d, r + c);
    for (; c < width; ++c) r[c] = ScalarOp::Apply(r[c], u[c]);
  }
}

template <typename T>
void CombineImpl(BinaryFn fn, T* block, int64_t row_stride, const int64_t* rows, const T* updates,
                 int64_t update_stride, const int64_t* positions, int64_t count, int64_t width) {
  switch (fn) {
    case BinaryFn::kAdd:
      return CombineRows<ops::AddOp>(block, row_stride, rows, updates, update_stride, positions, count, width,
                                     [](auto, auto x, auto y) { return hn::Add(x, y); });
    case BinaryFn::kMul:
      return CombineRows<ops::MultiplyOp>(block, row_stride, rows, updates, update_stride, positions, count, width,
                                          [](auto, auto x, auto y) { return hn::Mul(x, y); });
    case BinaryFn::kMax:
      return CombineRows<ops::MaxOp>(block, row_stride, rows, updates, update_stride, positions, count, width,
                                     [](auto d, auto x, auto y) { return MaxMin<true>(d, x, y); });
    case BinaryFn::kMin:
      return CombineRows<ops::MinOp>(block, row_stride, rows, updates, update_stride, positions, count, width,
                                     [](auto d, auto x, auto y) { return MaxMin<false>(d, x, y); });
    default:
      return;
  }
}

void CombineF32(BinaryFn fn, float* block, int64_t row_stride, const int64_t* rows, const float* updates,
                int64_t update_stride, const int64_t* positions, int64_t count, int64_t width) {
  CombineImpl(fn, block, row_stride, rows, updates, update_stride, positions, count, width);
}
void CombineF64(BinaryFn fn, double* block, int64_t row_stride, const int64_t* rows, const double* updates,
                int64_t update_stride, const int64_t* positions, int64_t count, int64_t width) {
  CombineImpl(fn, block, row_stride, rows, updates, update_stride, positions, count, width);
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(CombineF32);
HWY_EXPORT(CombineF64);

void ScatterCombineRows(BinaryFn fn, float* block, int64_t row_stride, const int64_t* rows, const float* updates,
                        int64_t update_stride, const int64_t* positions, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(CombineF32)(fn, block, row_stride, rows, updates, update_stride, positions, count, width);
}
void ScatterCombineRows(BinaryFn fn, double* block, int64_t row_stride, const int64_t* rows, const double* updates,
                        int64_t update_stride, const int64_t* positions, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(CombineF64)(fn, block, row_stride, rows, updates, update_stride, positions, count, width);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
