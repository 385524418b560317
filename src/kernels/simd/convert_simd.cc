// Vector conversions (convert_simd.h), compiled once per Highway target (dispatch.h). The
// half-precision conversions are those of half_convert-inl.h (kernels/half.h's integer bit
// manipulations applied lane by lane); tails shorter than a vector use the scalar functions.
#include "kernels/simd/convert_simd.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/half.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/convert_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/half_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Applies `f` (full vectors of D's lanes, loaded from `in`'s type, stored as `out`'s) and
// `scalar` to the tail.
template <class DIn, class DOut, typename In, typename Out, class Fn, class Scalar>
HWY_INLINE void Map(DIn din, DOut dout, const In* in, Out* out, int64_t n, Fn f, Scalar scalar) {
  const auto lanes = static_cast<int64_t>(hn::Lanes(din));
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto y0 = f(hn::LoadU(din, in + i)), y1 = f(hn::LoadU(din, in + i + lanes));
    hn::StoreU(y0, dout, out + i);
    hn::StoreU(y1, dout, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(din, in + i)), dout, out + i);
  for (; i < n; ++i) out[i] = scalar(in[i]);
}

void F32ToBF16Impl(const float* in, uint16_t* out, int64_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  Map(du, d16, reinterpret_cast<const uint32_t*>(in), out, n,
      [&](auto x) { return hn::DemoteTo(d16, hn::BitCast(di, F32BitsToBF16Bits(du, x))); },
      [](uint32_t bits) { return FloatToBF16(std::bit_cast<float>(bits)).bits; });
}

void BF16ToF32Impl(const uint16_t* in, float* out, int64_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  Map(d16, du, in, reinterpret_cast<uint32_t*>(out), n,
      [&](auto x) { return hn::ShiftLeft<16>(hn::PromoteTo(du, x)); },
      [](uint16_t bits) { return static_cast<uint32_t>(bits) << 16; });
}

void F32ToF16Impl(const float* in, uint16_t* out, int64_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  Map(du, d16, reinterpret_cast<const uint32_t*>(in), out, n,
      [&](auto bits) { return hn::DemoteTo(d16, hn::BitCast(di, F32BitsToF16Bits(du, bits))); },
      [](uint32_t bits) { return FloatToF16(std::bit_cast<float>(bits)).bits; });
}

void F16ToF32Impl(const uint16_t* in, float* out, int64_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  Map(d16, du, in, reinterpret_cast<uint32_t*>(out), n,
      [&](auto h) { return F16BitsToF32Bits(du, hn::PromoteTo(du, h)); },
      [](uint16_t bits) { return std::bit_cast<uint32_t>(F16ToFloat(F16{bits})); });
}

void F32ToS32Impl(const float* in, int32_t* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  Map(df, di, in, out, n,
      [&](auto x) {
        auto r = hn::ConvertTo(di, x);  // truncates; out of range and NaN are fixed below
        r = hn::IfThenElse(hn::RebindMask(di, hn::Ge(x, hn::Set(df, 2147483648.0f))),
                           hn::Set(di, std::numeric_limits<int32_t>::max()), r);
        r = hn::IfThenElse(hn::RebindMask(di, hn::Le(x, hn::Set(df, -2147483648.0f))),
                           hn::Set(di, std::numeric_limits<int32_t>::min()), r);
        return hn::IfThenZeroElse(hn::RebindMask(di, hn::IsNaN(x)), r);
      },
      [](float x) -> int32_t {
        if (std::isnan(x)) return 0;
        if (x <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
        if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
        return static_cast<int32_t>(x);
      });
}

void S32ToF32Impl(const int32_t* in, float* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  Map(di, df, in, out, n, [&](auto x) { return hn::ConvertTo(df, x); },
      [](int32_t x) { return static_cast<float>(x); });
}

void F64ToF32Impl(const double* in, float* out, int64_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  Map(dd, df, in, out, n, [&](auto x) { return hn::DemoteTo(df, x); },
      [](double x) { return static_cast<float>(x); });
}

void F32ToF64Impl(const float* in, double* out, int64_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  Map(df, dd, in, out, n, [&](auto x) { return hn::PromoteTo(dd, x); },
      [](float x) { return static_cast<double>(x); });
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(F32ToBF16Impl);
HWY_EXPORT(BF16ToF32Impl);
HWY_EXPORT(F32ToF16Impl);
HWY_EXPORT(F16ToF32Impl);
HWY_EXPORT(F32ToS32Impl);
HWY_EXPORT(S32ToF32Impl);
HWY_EXPORT(F64ToF32Impl);
HWY_EXPORT(F32ToF64Impl);

void F32ToBF16(const float* in, uint16_t* out, int64_t n) { HWY_DYNAMIC_DISPATCH(F32ToBF16Impl)(in, out, n); }
void BF16ToF32(const uint16_t* in, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(BF16ToF32Impl)(in, out, n); }
void F32ToF16(const float* in, uint16_t* out, int64_t n) { HWY_DYNAMIC_DISPATCH(F32ToF16Impl)(in, out, n); }
void F16ToF32(const uint16_t* in, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(F16ToF32Impl)(in, out, n); }
void F32ToS32(const float* in, int32_t* out, int64_t n) { HWY_DYNAMIC_DISPATCH(F32ToS32Impl)(in, out, n); }
void S32ToF32(const int32_t* in, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(S32ToF32Impl)(in, out, n); }
void F64ToF32(const double* in, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(F64ToF32Impl)(in, out, n); }
void F32ToF64(const float* in, double* out, int64_t n) { HWY_DYNAMIC_DISPATCH(F32ToF64Impl)(in, out, n); }
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
