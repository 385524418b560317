// Vector compare, select and clamp (compare_select_simd.h), compiled once per Highway
// target (dispatch.h). Tails shorter than a vector use the scalar definitions.
#include "kernels/simd/compare_select_simd.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/compare_select_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/max_min-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Integers have no Ge/Le here: they are the negations of Lt/Gt (exact without NaN).
template <int kDirection, class D, class V>
HWY_INLINE auto CompareMask(D, V a, V b) {
  constexpr bool kFloat = hwy::IsFloat<hn::TFromD<D>>();
  if constexpr (kDirection == 0) return hn::Eq(a, b);
  else if constexpr (kDirection == 1) return hn::Not(hn::Eq(a, b));  // true with a NaN (Ne is ordered on some targets)
  else if constexpr (kDirection == 2 && kFloat) return hn::Ge(a, b);
  else if constexpr (kDirection == 2) return hn::Not(hn::Lt(a, b));
  else if constexpr (kDirection == 3) return hn::Gt(a, b);
  else if constexpr (kDirection == 4 && kFloat) return hn::Le(a, b);
  else if constexpr (kDirection == 4) return hn::Not(hn::Gt(a, b));
  else return hn::Lt(a, b);
}

template <int kDirection, typename T>
HWY_INLINE uint8_t CompareOne(T a, T b) {
  return ops::CompareValues(a, b, kDirection, /*total=*/false);
}

// 32-bit lanes: the mask as 0/1 int32, narrowed to bytes.
template <int kDirection, typename T>
void Compare32(const T* a, const T* b, uint8_t* out, int64_t n) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto one = hn::Set(di, 1);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto m = CompareMask<kDirection>(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    hn::StoreU(hn::DemoteTo(d8, hn::IfThenElseZero(hn::RebindMask(di, m), one)), d8, out + i);
  }
  for (; i < n; ++i) out[i] = CompareOne<kDirection>(a[i], b[i]);
}

// f64 lanes: the mask as 0/1 doubles, narrowed to int32 and then to bytes.
template <int kDirection>
void Compare64(const double* a, const double* b, uint8_t* out, int64_t n) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<int32_t, decltype(d)> d32;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto one = hn::Set(d, 1.0);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto m = CompareMask<kDirection>(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    hn::StoreU(hn::DemoteTo(d8, hn::DemoteTo(d32, hn::IfThenElseZero(m, one))), d8, out + i);
  }
  for (; i < n; ++i) out[i] = CompareOne<kDirection>(a[i], b[i]);
}

template <typename T, class Fn>
void ByDirection(int direction, Fn fn) {
  switch (direction) {
    case 0: return fn(std::integral_constant<int, 0>());
    case 1: return fn(std::integral_constant<int, 1>());
    case 2: return fn(std::integral_constant<int, 2>());
    case 3: return fn(std::integral_constant<int, 3>());
    case 4: return fn(std::integral_constant<int, 4>());
    default: return fn(std::integral_constant<int, 5>());
  }
}

void CompareF32(int direction, const float* a, const float* b, uint8_t* out, int64_t n) {
  ByDirection<float>(direction, [&](auto k) { Compare32<decltype(k)::value>(a, b, out, n); });
}
void CompareF64(int direction, const double* a, const double* b, uint8_t* out, int64_t n) {
  ByDirection<double>(direction, [&](auto k) { Compare64<decltype(k)::value>(a, b, out, n); });
}
void CompareS32(int direction, const int32_t* a, const int32_t* b, uint8_t* out, int64_t n) {
  ByDirection<int32_t>(direction, [&](auto k) { Compare32<decltype(k)::value>(a, b, out, n); });
}

// The predicate bytes of lanes of D (unsigned, 1 to 8 bytes) as a mask: non-zero is true.
template <class D>
HWY_INLINE auto PredMask(D d, const uint8_t* pred) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 1) {
    return hn::Ne(hn::LoadU(d, pred), hn::Zero(d));
  } else if constexpr (sizeof(T) == 8) {
    const hn::Rebind<uint32_t, D> d32;
    const hn::Rebind<uint8_t, D> d8;
    return hn::Ne(hn::PromoteTo(d, hn::PromoteTo(d32, hn::LoadU(d8, pred))), hn::Zero(d));
  } else {
    const hn::Rebind<uint8_t, D> d8;
    return hn::Ne(hn::PromoteTo(d, hn::LoadU(d8, pred)), hn::Zero(d));
  }
}

template <typename T>
void SelectImpl(const uint8_t* pred, const T* on_true, const T* on_false, T* out, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::IfThenElse(PredMask(d, pred + i), hn::LoadU(d, on_true + i), hn::LoadU(d, on_false + i)), d,
               out + i);
  for (; i < n; ++i) out[i] = pred[i] ? on_true[i] : on_false[i];
}

void Select8(const uint8_t* p, const uint8_t* t, const uint8_t* f, uint8_t* o, int64_t n) { SelectImpl(p, t, f, o, n); }
void Select16(const uint8_t* p, const uint16_t* t, const uint16_t* f, uint16_t* o, int64_t n) {
  SelectImpl(p, t, f, o, n);
}
void Select32(const uint8_t* p, const uint32_t* t, const uint32_t* f, uint32_t* o, int64_t n) {
  SelectImpl(p, t, f, o, n);
}
void Select64(const uint8_t* p, const uint64_t* t, const uint64_t* f, uint64_t* o, int64_t n) {
  SelectImpl(p, t, f, o, n);
}

// Whether a scalar bound is a number (kNumber: not NaN) or a normal number (neither NaN,
// zero nor denormal), which lets the loop below skip the checks it would need otherwise.
enum class Bound { kAny, kNumber, kNormal };

template <typename T>
Bound BoundKind(T v) {
  if (std::isnan(v)) return Bound::kAny;
  if (std::isnormal(v) || std::isinf(v)) return Bound::kNormal;
  return Bound::kNumber;
}

template <Bound kBounds, typename T>
void ClampLoop(const T* lo, int64_t lo_step, const T* x, const T* hi, int64_t hi_step, T* out, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto lo_scalar = hn::Set(d, lo[0]), hi_scalar = hn::Set(d, hi[0]);
  auto clamp = [&](auto l, auto v, auto h) {
    if constexpr (kBounds == Bound::kNormal) return ClampNormalBounds(d, l, v, h);
    else if constexpr (kBounds == Bound::kNumber) return ClampNumberBounds(d, l, v, h);
    else return MaxMin<false>(d, MaxMin<true>(d, v, l), h);
  };
  int64_t i = 0;
  if (lo_step == 0 && hi_step == 0) {
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const auto y0 = clamp(lo_scalar, hn::LoadU(d, x + i), hi_scalar);
      const auto y1 = clamp(lo_scalar, hn::LoadU(d, x + i + lanes), hi_scalar);
      hn::StoreU(y0, d, out + i);
      hn::StoreU(y1, d, out + i + lanes);
    }
  }
  for (; i + lanes <= n; i += lanes) {
    const auto l = lo_step ? hn::LoadU(d, lo + i) : lo_scalar;
    const auto h = hi_step ? hn::LoadU(d, hi + i) : hi_scalar;
    hn::StoreU(clamp(l, hn::LoadU(d, x + i), h), d, out + i);
  }
  for (; i < n; ++i) out[i] = ops::ClampOne(lo[i * lo_step], x[i], hi[i * hi_step]);
}

template <typename T>
void ClampImpl(const T* lo, int64_t lo_step, const T* x, const T* hi, int64_t hi_step, T* out, int64_t n) {
  if (n <= 0) return;
  if (lo_step == 0 && hi_step == 0) {
    const Bound a = BoundKind(lo[0]), b = BoundKind(hi[0]);
    if (a == Bound::kNormal && b == Bound::kNormal) return ClampLoop<Bound::kNormal>(lo, 0, x, hi, 0, out, n);
    if (a != Bound::kAny && b != Bound::kAny) return ClampLoop<Bound::kNumber>(lo, 0, x, hi, 0, out, n);
  }
  ClampLoop<Bound::kAny>(lo, lo_step, x, hi, hi_step, out, n);
}

void ClampF32(const float* lo, int64_t ls, const float* x, const float* hi, int64_t hs, float* out, int64_t n) {
  ClampImpl(lo, ls, x, hi, hs, out, n);
}
void ClampF64(const double* lo, int64_t ls, const double* x, const double* hi, int64_t hs, double* out, int64_t n) {
  ClampImpl(lo, ls, x, hi, hs, out, n);
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(CompareF32);
HWY_EXPORT(CompareF64);
HWY_EXPORT(CompareS32);
HWY_EXPORT(Select8);
HWY_EXPORT(Select16);
HWY_EXPORT(Select32);
HWY_EXPORT(Select64);
HWY_EXPORT(ClampF32);
HWY_EXPORT(ClampF64);

void Compare(int direction, const float* a, const float* b, uint8_t* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(CompareF32)(direction, a, b, out, n);
}
void Compare(int direction, const double* a, const double* b, uint8_t* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(CompareF64)(direction, a, b, out, n);
}
void Compare(int direction, const int32_t* a, const int32_t* b, uint8_t* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(CompareS32)(direction, a, b, out, n);
}
void Select(const uint8_t* p, const uint8_t* t, const uint8_t* f, uint8_t* o, int64_t n) {
  HWY_DYNAMIC_DISPATCH(Select8)(p, t, f, o, n);
}
void Select(const uint8_t* p, const uint16_t* t, const uint16_t* f, uint16_t* o, int64_t n) {
  HWY_DYNAMIC_DISPATCH(Select16)(p, t, f, o, n);
}
void Select(const uint8_t* p, const uint32_t* t, const uint32_t* f, uint32_t* o, int64_t n) {
  HWY_DYNAMIC_DISPATCH(Select32)(p, t, f, o, n);
}
void Select(const uint8_t* p, const uint64_t* t, const uint64_t* f, uint64_t* o, int64_t n) {
  HWY_DYNAMIC_DISPATCH(Select64)(p, t, f, o, n);
}
void Clamp(const float* lo, int64_t ls, const float* x, const float* hi, int64_t hs, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ClampF32)(lo, ls, x, hi, hs, out, n);
}
void Clamp(const double* lo, int64_t ls, const double* x, const double* hi, int64_t hs, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ClampF64)(lo, ls, x, hi, hs, out, n);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
