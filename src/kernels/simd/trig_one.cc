// sin and cos of one f32 value (trig_one.h), compiled once per Highway target.
//
// The decisions are those of unary_simd.cc's UnaryFn::kSin / kCos for one element (MapOne),
// taken on the value's bits with branches instead of lane masks:
//   - outside |x| <= 39000 (including ±Inf and NaN), and on the one-lane scalar target: the
//     scalar op (scalar_ops.h, libm);
//   - sin of zeros and denormals (by their bits): x itself; cos of |x| < 2^-13: 1;
//   - otherwise special::SinCosForF32 in one f64 lane (special_math-inl.h), rounded once.
// kernels/scalar_program_test.cc checks them against the kernels bit for bit at every
// instruction-set level.
#include "kernels/simd/trig_one.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/trig_one.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/special_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {

namespace {
inline uint32_t AbsBitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits & 0x7fffffffu;
}
constexpr uint32_t BitsOf(float x) { return __builtin_bit_cast(uint32_t, x); }
}  // namespace

float SinF32(float x) {
  const uint32_t abs = AbsBitsOf(x);
  if (!special::kHasF64Lanes || abs > BitsOf(39000.0f)) [[unlikely]]
    return ops::SineOp::Apply(x);
  if (abs < BitsOf(std::numeric_limits<float>::min())) [[unlikely]]
    return x;
  return special::SinCosForOneF32<false>(x);
}

float CosF32(float x) {
  const uint32_t abs = AbsBitsOf(x);
  if (!special::kHasF64Lanes || abs > BitsOf(39000.0f)) [[unlikely]]
    return ops::CosineOp::Apply(x);
  if (abs < BitsOf(0x1p-13f)) [[unlikely]]
    return 1.0f;
  return special::SinCosForOneF32<true>(x);
}

using OneF32Fn = float (*)(float);
OneF32Fn SinF32Address() { return &SinF32; }
OneF32Fn CosF32Address() { return &CosF32; }

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(SinF32);
HWY_EXPORT(CosF32);

float SinOneF32(float x) { return HWY_DYNAMIC_DISPATCH(SinF32)(x); }
float CosOneF32(float x) { return HWY_DYNAMIC_DISPATCH(CosF32)(x); }

HWY_EXPORT(SinF32Address);
HWY_EXPORT(CosF32Address);

OneF32Fn SinOneF32Function() { return HWY_DYNAMIC_DISPATCH(SinF32Address)(); }
OneF32Fn CosOneF32Function() { return HWY_DYNAMIC_DISPATCH(CosF32Address)(); }
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
