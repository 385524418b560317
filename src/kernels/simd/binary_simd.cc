// Vector binary ops (binary_simd.h), compiled once per Highway target (dispatch.h). The
// tail shorter than a vector uses the scalar op, which gives the same (exact) results;
// power and atan2 (approximations) compute the tail as a padded vector instead, and hand
// their special lanes to the scalar op.
#include "kernels/simd/binary_simd.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/binary_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/half_convert-inl.h"
#include "kernels/simd/max_min-inl.h"
#include "kernels/simd/special_math-inl.h"

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

// out[i] = f(a[i], s) (kFirst: f(s, a[i])): VectorZip with b filled with s.
template <class ScalarOp, bool kFirst, typename T, class Fn>
HWY_INLINE void VectorZipScalar(const T* a, T s, T* out, size_t n, Fn f) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto vs = hn::Set(d, s);
  const auto g = [&](auto x) { return kFirst ? f(d, vs, x) : f(d, x, vs); };
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto y0 = g(hn::LoadU(d, a + i));
    const auto y1 = g(hn::LoadU(d, a + i + lanes));
    hn::StoreU(y0, d, out + i);
    hn::StoreU(y1, d, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(g(hn::LoadU(d, a + i)), d, out + i);
  for (; i < n; ++i) out[i] = kFirst ? ScalarOp::Apply(s, a[i]) : ScalarOp::Apply(a[i], s);
}

template <bool kFirst, typename T>
void BinaryScalarImpl(BinaryFn fn, const T* a, T s, T* out, size_t n) {
  switch (fn) {
    case BinaryFn::kAdd:
      return VectorZipScalar<ops::AddOp, kFirst>(a, s, out, n, [](auto, auto x, auto y) { return hn::Add(x, y); });
    case BinaryFn::kSub:
      return VectorZipScalar<ops::SubtractOp, kFirst>(a, s, out, n, [](auto, auto x, auto y) { return hn::Sub(x, y); });
    case BinaryFn::kMul:
      return VectorZipScalar<ops::MultiplyOp, kFirst>(a, s, out, n, [](auto, auto x, auto y) { return hn::Mul(x, y); });
    case BinaryFn::kDiv:
      return VectorZipScalar<ops::DivideOp, kFirst>(a, s, out, n, [](auto, auto x, auto y) { return hn::Div(x, y); });
    case BinaryFn::kMax:
      return VectorZipScalar<ops::MaxOp, kFirst>(a, s, out, n,
                                                 [](auto d, auto x, auto y) { return MaxMin<true>(d, x, y); });
    case BinaryFn::kMin:
      return VectorZipScalar<ops::MinOp, kFirst>(a, s, out, n,
                                                 [](auto d, auto x, auto y) { return MaxMin<false>(d, x, y); });
    case BinaryFn::kPow:
    case BinaryFn::kAtan2:
      return;  // not offered (binary_simd.h)
  }
}

// out[i] = f(a[i], b[i]) where that is not NaN, else ScalarOp::Apply(a[i], b[i]): f returns
// NaN for every lane it leaves to the scalar op.
template <class ScalarOp, typename T, class Fn>
HWY_INLINE void VectorZipOrScalar(const T* a, const T* b, T* out, size_t n, Fn f) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  HWY_ALIGN T ys[HWY_MAX_BYTES / sizeof(T)];
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto y = f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    if (!hn::AllFalse(d, hn::IsNaN(y))) {
      hn::Store(y, d, ys);
      for (size_t j = 0; j < lanes; ++j) out[i + j] = std::isnan(ys[j]) ? ScalarOp::Apply(a[i + j], b[i + j]) : ys[j];
    } else {
      hn::StoreU(y, d, out + i);
    }
  }
  if (i < n) {
    HWY_ALIGN T ta[HWY_MAX_BYTES / sizeof(T)];
    HWY_ALIGN T tb[HWY_MAX_BYTES / sizeof(T)];
    for (size_t j = 0; j < lanes; ++j) ta[j] = tb[j] = i + j < n ? T(0) : T(1);
    for (size_t j = 0; i + j < n; ++j) ta[j] = a[i + j], tb[j] = b[i + j];
    hn::Store(f(d, hn::Load(d, ta), hn::Load(d, tb)), d, ys);
    for (size_t j = 0; i + j < n; ++j) out[i + j] = std::isnan(ys[j]) ? ScalarOp::Apply(ta[j], tb[j]) : ys[j];
  }
}

// Finite, and neither zero nor denormal (by the bits).
template <class D, class V>
HWY_INLINE auto NormalFinite(D d, V x) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  I lo_bits, hi_bits;
  std::memcpy(&lo_bits, &lo, sizeof(I));
  std::memcpy(&hi_bits, &hi, sizeof(I));
  const auto bits = hn::BitCast(di, hn::Abs(x));
  return hn::RebindMask(d, hn::Not(hn::Or(hn::Lt(bits, hn::Set(di, lo_bits)), hn::Gt(bits, hn::Set(di, hi_bits)))));
}

// f32 power and atan2 in f64 lanes (special_math-inl.h); NaN for the lanes of the scalar op.
// pow in f64 lanes only with AVX-512: with 2 or 4 f64 lanes libm's powf is faster (4M
// elements: 0.06 G/s on SSE4 and 0.13 on AVX2 against libm's 0.20; AVX-512: 0.33).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
inline constexpr bool kVectorPow = special::kHasF64Lanes;
#else
inline constexpr bool kVectorPow = false;
#endif

template <class D, class V>
HWY_INLINE V PowF32(D d, V x, V y) {
  if constexpr (!kVectorPow) return hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  // x > 0 normal, y finite (a denormal y gives exp(0) = 1 on both paths).
  const auto ok = hn::And(hn::And(NormalFinite(d, x), hn::Gt(x, hn::Zero(d))), hn::IsFinite(y));
  const V r = special::InF64Lanes(d, x, y, [](auto dd, auto vx, auto vy) { return special::Pow(dd, vx, vy); });
  return hn::IfThenElse(ok, r, hn::Set(d, std::numeric_limits<float>::quiet_NaN()));
}
template <class D, class V>
HWY_INLINE V Atan2F32(D d, V y, V x) {
  if constexpr (!special::kHasF64Lanes) return hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  const V r = special::InF64Lanes(d, y, x, [](auto dd, auto vy, auto vx) { return special::Atan2(dd, vy, vx); });
  // Denormal results (tiny y over huge x) are left to the scalar op.
  const auto ok = hn::And(hn::And(NormalFinite(d, x), NormalFinite(d, y)), NormalFinite(d, r));
  return hn::IfThenElse(ok, r, hn::Set(d, std::numeric_limits<float>::quiet_NaN()));
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
    case BinaryFn::kPow:
      if constexpr (std::is_same_v<T, float> && kVectorPow)
        return VectorZipOrScalar<ops::PowerOp>(a, b, out, n, [](auto d, auto x, auto y) { return PowF32(d, x, y); });
      for (size_t i = 0; i < n; ++i) out[i] = ops::PowerOp::Apply(a[i], b[i]);
      return;
    case BinaryFn::kAtan2:
      if constexpr (std::is_same_v<T, float>)
        return VectorZipOrScalar<ops::Atan2Op>(a, b, out, n, [](auto d, auto y, auto x) { return Atan2F32(d, y, x); });
      for (size_t i = 0; i < n; ++i) out[i] = ops::Atan2Op::Apply(a[i], b[i]);
      return;
  }
}

// The scalar form of a half-precision element: widened, computed in f32, rounded.
template <bool kBF16>
HWY_INLINE float HalfToF32(uint16_t bits) {
  return kBF16 ? BF16ToFloat(BF16{bits}) : F16ToFloat(F16{bits});
}
template <bool kBF16>
HWY_INLINE uint16_t F32ToHalf(float x) {
  return kBF16 ? FloatToBF16(x).bits : FloatToF16(x).bits;
}

// bf16/f16 operands widened to f32 lanes in registers, f(a, b) in f32, rounded once.
template <class ScalarOp, bool kBF16, class Fn>
HWY_INLINE void VectorZipHalf(const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n, Fn f) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto y0 = f(d, LoadHalfAsF32<kBF16>(d, a + i), LoadHalfAsF32<kBF16>(d, b + i));
    const auto y1 = f(d, LoadHalfAsF32<kBF16>(d, a + i + lanes), LoadHalfAsF32<kBF16>(d, b + i + lanes));
    StoreF32AsHalf<kBF16>(d, y0, out + i);
    StoreF32AsHalf<kBF16>(d, y1, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes)
    StoreF32AsHalf<kBF16>(d, f(d, LoadHalfAsF32<kBF16>(d, a + i), LoadHalfAsF32<kBF16>(d, b + i)), out + i);
  for (; i < n; ++i) out[i] = F32ToHalf<kBF16>(ScalarOp::Apply(HalfToF32<kBF16>(a[i]), HalfToF32<kBF16>(b[i])));
}

// power and atan2 on bf16/f16: a block at a time widened into f32 buffers that stay in L1.
template <bool kBF16>
void BinaryHalfBlocks(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kBlock = 512;
  HWY_ALIGN float xs[kBlock];
  HWY_ALIGN float ys[kBlock];
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t count = std::min(kBlock, n - i);
    size_t j = 0;
    for (; j + lanes <= count; j += lanes) {
      hn::Store(LoadHalfAsF32<kBF16>(d, a + i + j), d, xs + j);
      hn::Store(LoadHalfAsF32<kBF16>(d, b + i + j), d, ys + j);
    }
    for (; j < count; ++j) xs[j] = HalfToF32<kBF16>(a[i + j]), ys[j] = HalfToF32<kBF16>(b[i + j]);
    BinaryImpl(fn, xs, ys, xs, count);
    j = 0;
    for (; j + lanes <= count; j += lanes) StoreF32AsHalf<kBF16>(d, hn::Load(d, xs + j), out + i + j);
    for (; j < count; ++j) out[i + j] = F32ToHalf<kBF16>(xs[j]);
  }
}

template <bool kBF16>
void BinaryHalfImpl(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  switch (fn) {
    case BinaryFn::kAdd:
      return VectorZipHalf<ops::AddOp, kBF16>(a, b, out, n, [](auto, auto x, auto y) { return hn::Add(x, y); });
    case BinaryFn::kSub:
      return VectorZipHalf<ops::SubtractOp, kBF16>(a, b, out, n, [](auto, auto x, auto y) { return hn::Sub(x, y); });
    case BinaryFn::kMul:
      return VectorZipHalf<ops::MultiplyOp, kBF16>(a, b, out, n, [](auto, auto x, auto y) { return hn::Mul(x, y); });
    case BinaryFn::kDiv:
      return VectorZipHalf<ops::DivideOp, kBF16>(a, b, out, n, [](auto, auto x, auto y) { return hn::Div(x, y); });
    case BinaryFn::kMax:
      return VectorZipHalf<ops::MaxOp, kBF16>(a, b, out, n,
                                              [](auto d, auto x, auto y) { return MaxMin<true>(d, x, y); });
    case BinaryFn::kMin:
      return VectorZipHalf<ops::MinOp, kBF16>(a, b, out, n,
                                              [](auto d, auto x, auto y) { return MaxMin<false>(d, x, y); });
    case BinaryFn::kPow:
    case BinaryFn::kAtan2:
      return BinaryHalfBlocks<kBF16>(fn, a, b, out, n);
  }
}

// Shifts by per-element amounts read as unsigned: amounts of the lane width or more give 0
// (left, logical right) or the sign fill (arithmetic right), as ops::Shift*Op.
template <IntBinaryFn kFn, class D, class V>
HWY_INLINE V ShiftLanes(D d, V a, V b) {
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto amount = hn::BitCast(du, b);
  const auto last = hn::Set(du, static_cast<hn::TFromD<decltype(du)>>(sizeof(T) * 8 - 1));
  const auto clamped = hn::Min(amount, last);
  if constexpr (kFn == IntBinaryFn::kShiftRightArithmetic) {
    return hn::BitCast(d, hn::Shr(hn::BitCast(di, a), hn::BitCast(di, clamped)));
  } else {
    const auto x = hn::BitCast(du, a);
    hn::VFromD<decltype(du)> shifted;
    if constexpr (kFn == IntBinaryFn::kShiftLeft) shifted = hn::Shl(x, clamped);
    else shifted = hn::Shr(x, clamped);
    return hn::BitCast(d, hn::IfThenZeroElse(hn::Gt(amount, last), shifted));
  }
}

template <class ScalarOp, typename T, class Fn>
HWY_INLINE void IntZip(const T* a, const T* b, T* out, size_t n, Fn f) {
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
  for (; i < n; ++i) out[i] = static_cast<T>(ScalarOp::Apply(a[i], b[i]));
}

template <class ScalarOp, typename T>
HWY_INLINE void IntScalarLoop(const T* a, const T* b, T* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(ScalarOp::Apply(a[i], b[i]));
}

template <typename T>
void IntBinaryImpl(IntBinaryFn fn, const T* a, const T* b, T* out, size_t n) {
  // Highway has no variable shifts of 8-bit lanes, and its 16-bit ones need SSE4 on x86:
  // those stay scalar.
#if HWY_ARCH_X86 && HWY_TARGET == HWY_SSSE3
  constexpr bool kVectorShifts = sizeof(T) > 2;
#else
  constexpr bool kVectorShifts = sizeof(T) > 1;
#endif
  switch (fn) {
    case IntBinaryFn::kAdd:
      return IntZip<ops::AddOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Add(x, y); });
    case IntBinaryFn::kSub:
      return IntZip<ops::SubtractOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Sub(x, y); });
    case IntBinaryFn::kAnd:
      return IntZip<ops::AndOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::And(x, y); });
    case IntBinaryFn::kOr:
      return IntZip<ops::OrOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Or(x, y); });
    case IntBinaryFn::kXor:
      return IntZip<ops::XorOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Xor(x, y); });
    case IntBinaryFn::kMax:
      return IntZip<ops::MaxOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Max(x, y); });
    case IntBinaryFn::kMin:
      return IntZip<ops::MinOp>(a, b, out, n, [](auto, auto x, auto y) { return hn::Min(x, y); });
    case IntBinaryFn::kShiftLeft:
      if constexpr (kVectorShifts)
        return IntZip<ops::ShiftLeftOp>(a, b, out, n, [](auto d, auto x, auto y) {
          return ShiftLanes<IntBinaryFn::kShiftLeft>(d, x, y);
        });
      return IntScalarLoop<ops::ShiftLeftOp>(a, b, out, n);
    case IntBinaryFn::kShiftRightLogical:
      if constexpr (kVectorShifts)
        return IntZip<ops::ShiftRightLogicalOp>(a, b, out, n, [](auto d, auto x, auto y) {
          return ShiftLanes<IntBinaryFn::kShiftRightLogical>(d, x, y);
        });
      return IntScalarLoop<ops::ShiftRightLogicalOp>(a, b, out, n);
    case IntBinaryFn::kShiftRightArithmetic:
      if constexpr (kVectorShifts)
        return IntZip<ops::ShiftRightArithmeticOp>(a, b, out, n, [](auto d, auto x, auto y) {
          return ShiftLanes<IntBinaryFn::kShiftRightArithmetic>(d, x, y);
        });
      return IntScalarLoop<ops::ShiftRightArithmeticOp>(a, b, out, n);
  }
}

#define STABLERT_INT_BINARY(name, T) \
  void name(IntBinaryFn fn, const T* a, const T* b, T* out, size_t n) { IntBinaryImpl(fn, a, b, out, n); }
STABLERT_INT_BINARY(IntBinaryS8, int8_t)
STABLERT_INT_BINARY(IntBinaryS16, int16_t)
STABLERT_INT_BINARY(IntBinaryS32, int32_t)
STABLERT_INT_BINARY(IntBinaryS64, int64_t)
STABLERT_INT_BINARY(IntBinaryU8, uint8_t)
STABLERT_INT_BINARY(IntBinaryU16, uint16_t)
STABLERT_INT_BINARY(IntBinaryU32, uint32_t)
STABLERT_INT_BINARY(IntBinaryU64, uint64_t)
#undef STABLERT_INT_BINARY

void BinaryF32(BinaryFn fn, const float* a, const float* b, float* out, size_t n) { BinaryImpl(fn, a, b, out, n); }
void BinaryF64(BinaryFn fn, const double* a, const double* b, double* out, size_t n) { BinaryImpl(fn, a, b, out, n); }
void BinaryBF16(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  BinaryHalfImpl<true>(fn, a, b, out, n);
}
void BinaryScalarF32(BinaryFn fn, const float* a, float s, bool scalar_first, float* out, size_t n) {
  if (scalar_first) BinaryScalarImpl<true>(fn, a, s, out, n);
  else BinaryScalarImpl<false>(fn, a, s, out, n);
}
void BinaryScalarF64(BinaryFn fn, const double* a, double s, bool scalar_first, double* out, size_t n) {
  if (scalar_first) BinaryScalarImpl<true>(fn, a, s, out, n);
  else BinaryScalarImpl<false>(fn, a, s, out, n);
}
void BinaryF16(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  BinaryHalfImpl<false>(fn, a, b, out, n);
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(BinaryF32);
HWY_EXPORT(BinaryF64);
HWY_EXPORT(BinaryBF16);
HWY_EXPORT(BinaryScalarF32);
HWY_EXPORT(BinaryScalarF64);
HWY_EXPORT(BinaryF16);
HWY_EXPORT(IntBinaryS8);
HWY_EXPORT(IntBinaryS16);
HWY_EXPORT(IntBinaryS32);
HWY_EXPORT(IntBinaryS64);
HWY_EXPORT(IntBinaryU8);
HWY_EXPORT(IntBinaryU16);
HWY_EXPORT(IntBinaryU32);
HWY_EXPORT(IntBinaryU64);

void Binary(BinaryFn fn, const float* a, const float* b, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF32)(fn, a, b, out, n);
}
void Binary(BinaryFn fn, const double* a, const double* b, double* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF64)(fn, a, b, out, n);
}
void BinaryBF16(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryBF16)(fn, a, b, out, n);
}
void BinaryScalar(BinaryFn fn, const float* a, float s, bool scalar_first, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryScalarF32)(fn, a, s, scalar_first, out, n);
}
void BinaryScalar(BinaryFn fn, const double* a, double s, bool scalar_first, double* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryScalarF64)(fn, a, s, scalar_first, out, n);
}
void BinaryF16(BinaryFn fn, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF16)(fn, a, b, out, n);
}
#define STABLERT_INT_BINARY(name, T)                                         \
  void IntBinary(IntBinaryFn fn, const T* a, const T* b, T* out, size_t n) { \
    HWY_DYNAMIC_DISPATCH(name)(fn, a, b, out, n);                            \
  }
STABLERT_INT_BINARY(IntBinaryS8, int8_t)
STABLERT_INT_BINARY(IntBinaryS16, int16_t)
STABLERT_INT_BINARY(IntBinaryS32, int32_t)
STABLERT_INT_BINARY(IntBinaryS64, int64_t)
STABLERT_INT_BINARY(IntBinaryU8, uint8_t)
STABLERT_INT_BINARY(IntBinaryU16, uint16_t)
STABLERT_INT_BINARY(IntBinaryU32, uint32_t)
STABLERT_INT_BINARY(IntBinaryU64, uint64_t)
#undef STABLERT_INT_BINARY
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
