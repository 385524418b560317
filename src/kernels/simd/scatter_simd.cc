// Vector row updates for scatter (scatter_simd.h), compiled once per Highway target
// (dispatch.h). Columns past the last whole vector use the scalar op, which gives the same
// (exact) results.
#include "kernels/simd/scatter_simd.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/scatter_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/max_min-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls combine(r, u) for each (row, update) pair that next(i, &r, &u) yields for
// i in [0, count), with the row update specialized to the width.
template <class ScalarOp, typename T, class Fn, class Next>
HWY_INLINE void CombineEach(int64_t count, int64_t width, Fn f, Next next) {
  // add and mul: at most 256-bit vectors, as read-modify-writes of rows with 512-bit vectors
  // run at about 60% of the speed on Zen 5 (0.114 against 0.073 ms for 64K rows of 16 f32
  // into 1K rows). max and min (NaN, signed-zero and denormal logic per lane) are bound by
  // their arithmetic and keep the full width (segment_max of 256K rows of 16 f32: 0.82
  // against 1.00 ms).
  constexpr bool kFull = std::is_same_v<ScalarOp, ops::MaxOp> || std::is_same_v<ScalarOp, ops::MinOp>;
  const hn::CappedTag<T, (kFull ? 64 : 32) / sizeof(T)> d;
  const hn::CappedTag<T, 16 / sizeof(T)> d4;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d)), lanes4 = static_cast<int64_t>(hn::Lanes(d4));
  T* r;
  const T* u;
  // Rows of one or two whole vectors (8 and 16 f32, 4 and 8 f64) without a column loop.
  if (width == lanes || width == 2 * lanes) {
    const bool two = width == 2 * lanes;
    for (int64_t i = 0; i < count; ++i) {
      if (!next(i, &r, &u)) continue;
      const auto first = f(d, hn::LoadU(d, r), hn::LoadU(d, u));
      if (two) hn::StoreU(f(d, hn::LoadU(d, r + lanes), hn::LoadU(d, u + lanes)), d, r + lanes);
      hn::StoreU(first, d, r);
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (!next(i, &r, &u)) continue;
    int64_t c = 0;
    for (; c + lanes <= width; c += lanes) hn::StoreU(f(d, hn::LoadU(d, r + c), hn::LoadU(d, u + c)), d, r + c);
    for (; c + lanes4 <= width; c += lanes4) hn::StoreU(f(d4, hn::LoadU(d4, r + c), hn::LoadU(d4, u + c)), d4, r + c);
    for (; c < width; ++c) r[c] = ScalarOp::Apply(r[c], u[c]);
  }
}

template <class ScalarOp, typename T, class Fn>
HWY_INLINE void CombineRows(T* block, int64_t row_stride, const int64_t* rows, const T* updates,
                            int64_t update_stride, const int64_t* positions, int64_t count, int64_t width, Fn f) {
  CombineEach<ScalarOp, T>(count, width, f, [&](int64_t i, T** r, const T** u) {
    *r = block + rows[i] * row_stride;
    *u = updates + positions[i] * update_stride;
    return true;
  });
}

template <class ScalarOp, typename T, class Fn>
HWY_INLINE void CombineIndexed(T* block, int64_t row_stride, const IndexedRows& ix, const T* updates,
                               int64_t update_stride, int64_t count, int64_t width, Fn f) {
  const uint64_t size = static_cast<uint64_t>(ix.size);
  const int64_t wrap = ix.wrap;
  CombineEach<ScalarOp, T>(count, width, f, [&](int64_t i, T** r, const T** u) {
    int64_t v = ix.indices[i];
    v += v < 0 ? wrap : 0;
    *r = block + v * row_stride;
    *u = updates + i * update_stride;
    return static_cast<uint64_t>(v) < size;
  });
}

template <typename T, class Run>
void WithCombiner(BinaryFn fn, Run run) {
  switch (fn) {
    case BinaryFn::kAdd:
      return run.template operator()<ops::AddOp>([](auto, auto x, auto y) { return hn::Add(x, y); });
    case BinaryFn::kMul:
      return run.template operator()<ops::MultiplyOp>([](auto, auto x, auto y) { return hn::Mul(x, y); });
    case BinaryFn::kMax:
      return run.template operator()<ops::MaxOp>([](auto d, auto x, auto y) { return MaxMin<true>(d, x, y); });
    case BinaryFn::kMin:
      return run.template operator()<ops::MinOp>([](auto d, auto x, auto y) { return MaxMin<false>(d, x, y); });
    default:
      return;
  }
}

template <typename T>
void CombineImpl(BinaryFn fn, T* block, int64_t row_stride, const int64_t* rows, const T* updates,
                 int64_t update_stride, const int64_t* positions, int64_t count, int64_t width) {
  WithCombiner<T>(fn, [&]<class ScalarOp>(auto f) {
    CombineRows<ScalarOp>(block, row_stride, rows, updates, update_stride, positions, count, width, f);
  });
}

template <typename T>
void IndexedImpl(BinaryFn fn, T* block, int64_t row_stride, const IndexedRows& ix, const T* updates,
                 int64_t update_stride, int64_t count, int64_t width) {
  WithCombiner<T>(fn, [&]<class ScalarOp>(auto f) {
    CombineIndexed<ScalarOp>(block, row_stride, ix, updates, update_stride, count, width, f);
  });
}

void IndexedF32(BinaryFn fn, float* block, int64_t row_stride, const IndexedRows& ix, const float* updates,
                int64_t update_stride, int64_t count, int64_t width) {
  IndexedImpl(fn, block, row_stride, ix, updates, update_stride, count, width);
}
void IndexedF64(BinaryFn fn, double* block, int64_t row_stride, const IndexedRows& ix, const double* updates,
                int64_t update_stride, int64_t count, int64_t width) {
  IndexedImpl(fn, block, row_stride, ix, updates, update_stride, count, width);
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
HWY_EXPORT(IndexedF32);
HWY_EXPORT(IndexedF64);

void ScatterCombineIndexed(BinaryFn fn, float* block, int64_t row_stride, const IndexedRows& rows,
                           const float* updates, int64_t update_stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(IndexedF32)(fn, block, row_stride, rows, updates, update_stride, count, width);
}
void ScatterCombineIndexed(BinaryFn fn, double* block, int64_t row_stride, const IndexedRows& rows,
                           const double* updates, int64_t update_stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(IndexedF64)(fn, block, row_stride, rows, updates, update_stride, count, width);
}

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
