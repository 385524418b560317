// Vector steps of the scan kernels (scan_simd.h), compiled once per Highway target
// (dispatch.h).
#include "kernels/simd/scan_simd.h"

#include <cstdint>
#include <type_traits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/scan_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/max_min-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One step of the body on vectors and on scalars (the definition, scalar_ops.h).
template <ScanBody kBody, class D, class V>
HWY_INLINE V Step(D d, V a, V b) {
  using T = hn::TFromD<D>;
  if constexpr (kBody == ScanBody::kAdd) {
    return hn::Add(a, b);
  } else if constexpr (kBody == ScanBody::kMul) {
    return hn::Mul(a, b);
  } else if constexpr (std::is_floating_point_v<T>) {
    return MaxMin<kBody == ScanBody::kMax>(d, a, b);
  } else if constexpr (kBody == ScanBody::kMax) {
    return hn::Max(a, b);
  } else {
    return hn::Min(a, b);
  }
}

template <ScanBody kBody, typename T>
HWY_INLINE T StepOne(T a, T b) {
  if constexpr (kBody == ScanBody::kAdd) return ops::AddOp::Apply(a, b);
  else if constexpr (kBody == ScanBody::kMul) return ops::MultiplyOp::Apply(a, b);
  else if constexpr (kBody == ScanBody::kMax) return ops::MaxOp::Apply(a, b);
  else return ops::MinOp::Apply(a, b);
}

template <ScanBody kBody, typename T>
void TileImpl(bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, T init, const T* e,
              T* total) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vinit = hn::Set(d, init);
  int64_t k = 0;
  if (!reverse) {
    for (; k + lanes <= w; k += lanes) {
      const auto ev = e != nullptr ? hn::LoadU(d, e + k) : vinit;
      auto p = Step<kBody>(d, vinit, hn::LoadU(d, x + k));
      hn::StoreU(e != nullptr ? Step<kBody>(d, p, ev) : p, d, y + k);
      for (int64_t r = 1; r < rows; ++r) {
        p = Step<kBody>(d, p, hn::LoadU(d, x + r * xs + k));
        hn::StoreU(e != nullptr ? Step<kBody>(d, p, ev) : p, d, y + r * ys + k);
      }
      hn::StoreU(p, d, total + k);
    }
    for (; k < w; ++k) {
      T p = StepOne<kBody>(init, x[k]);
      y[k] = e != nullptr ? StepOne<kBody>(p, e[k]) : p;
      for (int64_t r = 1; r < rows; ++r) {
        p = StepOne<kBody>(p, x[r * xs + k]);
        y[r * ys + k] = e != nullptr ? StepOne<kBody>(p, e[k]) : p;
      }
      total[k] = p;
    }
    return;
  }
  // Reverse: every suffix folded anew in ascending order; row r is written after the
  // suffixes that read it (r' <= r), so y may be x.
  for (; k + lanes <= w; k += lanes) {
    const auto ev = e != nullptr ? hn::LoadU(d, e + k) : vinit;
    for (int64_t r = 0; r < rows; ++r) {
      auto acc = Step<kBody>(d, vinit, hn::LoadU(d, x + r * xs + k));
      for (int64_t i = r + 1; i < rows; ++i) acc = Step<kBody>(d, acc, hn::LoadU(d, x + i * xs + k));
      if (r == 0) hn::StoreU(acc, d, total + k);
      hn::StoreU(e != nullptr ? Step<kBody>(d, acc, ev) : acc, d, y + r * ys + k);
    }
  }
  for (; k < w; ++k) {
    for (int64_t r = 0; r < rows; ++r) {
      T acc = StepOne<kBody>(init, x[r * xs + k]);
      for (int64_t i = r + 1; i < rows; ++i) acc = StepOne<kBody>(acc, x[i * xs + k]);
      if (r == 0) total[k] = acc;
      y[r * ys + k] = e != nullptr ? StepOne<kBody>(acc, e[k]) : acc;
    }
  }
}

template <ScanBody kBody, typename T>
void CarryImpl(T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    T* row = y + r * ys;
    int64_t k = 0;
    for (; k + lanes <= w; k += lanes)
      hn::StoreU(Step<kBody>(d, hn::LoadU(d, row + k), hn::LoadU(d, e + k)), d, row + k);
    for (; k < w; ++k) row[k] = StepOne<kBody>(row[k], e[k]);
  }
}

template <typename T>
void Tile(ScanBody body, bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, T init,
          const T* e, T* total) {
  switch (body) {
    case ScanBody::kAdd: return TileImpl<ScanBody::kAdd>(reverse, x, xs, y, ys, rows, w, init, e, total);
    case ScanBody::kMul:
      if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) return;  // not offered (scan_simd.h)
      else return TileImpl<ScanBody::kMul>(reverse, x, xs, y, ys, rows, w, init, e, total);
    case ScanBody::kMax: return TileImpl<ScanBody::kMax>(reverse, x, xs, y, ys, rows, w, init, e, total);
    case ScanBody::kMin: return TileImpl<ScanBody::kMin>(reverse, x, xs, y, ys, rows, w, init, e, total);
  }
}

template <typename T>
void Carry(ScanBody body, T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {
  switch (body) {
    case ScanBody::kAdd: return CarryImpl<ScanBody::kAdd>(y, ys, rows, w, e);
    case ScanBody::kMul:
      if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) return;
      else return CarryImpl<ScanBody::kMul>(y, ys, rows, w, e);
    case ScanBody::kMax: return CarryImpl<ScanBody::kMax>(y, ys, rows, w, e);
    case ScanBody::kMin: return CarryImpl<ScanBody::kMin>(y, ys, rows, w, e);
  }
}

#define STABLERT_SCAN_TYPE(Name, T)                                                                             \
  void ScanTile##Name(ScanBody body, bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows,     \
                      int64_t w, T init, const T* e, T* total) {                                               \
    Tile(body, reverse, x, xs, y, ys, rows, w, init, e, total);                                                \
  }                                                                                                             \
  void ScanCarry##Name(ScanBody body, T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {                 \
    Carry(body, y, ys, rows, w, e);                                                                             \
  }
STABLERT_SCAN_TYPE(F32, float)
STABLERT_SCAN_TYPE(F64, double)
STABLERT_SCAN_TYPE(S32, int32_t)
STABLERT_SCAN_TYPE(S64, int64_t)
#undef STABLERT_SCAN_TYPE

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {

#define STABLERT_SCAN_EXPORT(Name, T)                                                                          \
  HWY_EXPORT(ScanTile##Name);                                                                                  \
  HWY_EXPORT(ScanCarry##Name);                                                                                 \
  void ScanTile(ScanBody body, bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, \
                T init, const T* e, T* total) {                                                                \
    HWY_DYNAMIC_DISPATCH(ScanTile##Name)(body, reverse, x, xs, y, ys, rows, w, init, e, total);                 \
  }                                                                                                             \
  void ScanCarry(ScanBody body, T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {                       \
    HWY_DYNAMIC_DISPATCH(ScanCarry##Name)(body, y, ys, rows, w, e);                                            \
  }
STABLERT_SCAN_EXPORT(F32, float)
STABLERT_SCAN_EXPORT(F64, double)
STABLERT_SCAN_EXPORT(S32, int32_t)
STABLERT_SCAN_EXPORT(S64, int64_t)
#undef STABLERT_SCAN_EXPORT

}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
