// Vector conversions between f32 lanes and bf16/f16 storage, per Highway target: included
// inside the per-target block of the simd/*.cc files that need them (Highway's "-inl.h"
// convention: the guard toggles once per target). They are the integer bit manipulations
// of kernels/half.h applied lane by lane, so bit-identical to them:
//   - f32 -> bf16/f16: round to nearest even; NaN stays a quiet NaN with its payload's top
//     bits; f16 overflows to infinity and has subnormals;
//   - bf16/f16 -> f32: exact (an f16 NaN keeps its payload bits as they are).
// The floating-point mode (denormals flushed or not) does not change any result: the one
// float operation (x + 0.5 for f16 subnormals) has a normal result. Pure functions.
#if defined(STABLERT_KERNELS_SIMD_HALF_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STABLERT_KERNELS_SIMD_HALF_CONVERT_INL_H_
#undef STABLERT_KERNELS_SIMD_HALF_CONVERT_INL_H_
#else
#define STABLERT_KERNELS_SIMD_HALF_CONVERT_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// u32 lanes of f32 bits -> the bf16 bits in the low half of each lane.
template <class DU>
HWY_INLINE hn::VFromD<DU> F32BitsToBF16Bits(DU du, hn::VFromD<DU> x) {
  const hn::RebindToSigned<DU> di;
  const auto magnitude = hn::BitCast(di, hn::And(x, hn::Set(du, 0x7fffffffu)));
  const auto nan = hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x7f800000)));
  const auto odd = hn::And(hn::ShiftRight<16>(x), hn::Set(du, 1u));
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(x, hn::Set(du, 0x7fffu)), odd));
  const auto quiet = hn::Or(hn::ShiftRight<16>(x), hn::Set(du, 0x40u));
  return hn::IfThenElse(nan, quiet, rounded);
}

// u32 lanes of f32 bits -> the f16 bits in the low half of each lane.
template <class DU>
HWY_INLINE hn::VFromD<DU> F32BitsToF16Bits(DU du, hn::VFromD<DU> bits) {
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  const auto sign = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u));
  const auto x = hn::And(bits, hn::Set(du, 0x7fffffffu));
  const auto xi = hn::BitCast(di, x);  // < 2^31: signed compares are exact
  // Normal results: rebias and round to nearest even.
  const auto odd = hn::And(hn::ShiftRight<13>(x), hn::Set(du, 1u));
  auto out16 = hn::ShiftRight<13>(hn::Add(hn::Add(x, hn::Set(du, 0xc8000fffu)), odd));
  // Below 2^-14: the hardware rounds x + 0.5 at the f16 subnormal step.
  const auto aligned = hn::BitCast(du, hn::Add(hn::BitCast(df, x), hn::Set(df, 0.5f)));
  out16 = hn::IfThenElse(hn::RebindMask(du, hn::Lt(xi, hn::Set(di, 0x38800000))),
                         hn::Sub(aligned, hn::Set(du, 0x3f000000u)), out16);
  // Overflow to infinity; infinity; NaN stays quiet with its payload's top bits.
  out16 = hn::IfThenElse(hn::RebindMask(du, hn::Gt(xi, hn::Set(di, 0x477fefff))), hn::Set(du, 0x7c00u), out16);
  const auto nan_bits = hn::Or(hn::And(hn::ShiftRight<13>(x), hn::Set(du, 0x3ffu)), hn::Set(du, 0x7e00u));
  out16 = hn::IfThenElse(hn::RebindMask(du, hn::Gt(xi, hn::Set(di, 0x7f800000))), nan_bits, out16);
  return hn::Or(out16, sign);
}

// u32 lanes holding f16 bits -> f32 bits.
template <class DU>
HWY_INLINE hn::VFromD<DU> F16BitsToF32Bits(DU du, hn::VFromD<DU> x) {
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  const auto sign = hn::ShiftLeft<16>(hn::And(x, hn::Set(du, 0x8000u)));
  const auto magnitude = hn::And(x, hn::Set(du, 0x7fffu));
  const auto mi = hn::BitCast(di, magnitude);
  auto result = hn::Add(hn::ShiftLeft<13>(magnitude), hn::Set(du, 0x38000000u));
  // Zero or subnormal: magnitude * 2^-24, exact in float.
  const auto small = hn::BitCast(du, hn::Mul(hn::ConvertTo(df, mi), hn::Set(df, 5.9604644775390625e-8f)));
  result = hn::IfThenElse(hn::RebindMask(du, hn::Lt(mi, hn::Set(di, 0x400))), small, result);
  // Infinity or NaN: the payload as it is.
  const auto special = hn::Or(hn::Set(du, 0x7f800000u), hn::ShiftLeft<13>(hn::And(magnitude, hn::Set(du, 0x3ffu))));
  result = hn::IfThenElse(hn::RebindMask(du, hn::Gt(mi, hn::Set(di, 0x7bff))), special, result);
  return hn::Or(result, sign);
}

// Lanes(df) bf16 (kBF16) or f16 values at `in`, as f32 lanes.
template <bool kBF16, class DF>
HWY_INLINE hn::VFromD<DF> LoadHalfAsF32(DF df, const uint16_t* in) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const auto wide = hn::PromoteTo(du, hn::LoadU(d16, in));
  if constexpr (kBF16) return hn::BitCast(df, hn::ShiftLeft<16>(wide));
  else return hn::BitCast(df, F16BitsToF32Bits(du, wide));
}

// Stores f32 lanes `v` as Lanes(df) bf16 (kBF16) or f16 values at `out`, rounded.
template <bool kBF16, class DF>
HWY_INLINE void StoreF32AsHalf(DF df, hn::VFromD<DF> v, uint16_t* out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const auto bits = hn::BitCast(du, v);
  const auto narrow = kBF16 ? F32BitsToBF16Bits(du, bits) : F32BitsToF16Bits(du, bits);
  hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, narrow)), d16, out);  // values < 2^16: exact
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // STABLERT_KERNELS_SIMD_HALF_CONVERT_INL_H_ toggle
