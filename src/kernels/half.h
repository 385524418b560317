// 16-bit float storage types (IEEE binary16 and bfloat16) and their conversions to and
// from float, rounding to nearest even. Arithmetic on these types is done in float by
// the kernels. Header-only, pure functions; thread-safe.
#pragma once

#include <bit>
#include <cstdint>

namespace stablert::kernels {

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
static_assert(sizeof(F16) == 2 && sizeof(BF16) == 2);

inline float F16ToFloat(F16 h) {
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t magnitude = h.bits & 0x7fffu;
  if (magnitude >= 0x7c00u)  // infinity or NaN: keep the payload
    return std::bit_cast<float>(sign | 0x7f800000u | ((magnitude & 0x3ffu) << 13));
  if (magnitude < 0x400u) {  // zero or subnormal: magnitude * 2^-24, exact in float
    float value = static_cast<float>(magnitude) * 5.9604644775390625e-8f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(value) | sign);
  }
  return std::bit_cast<float>(sign | ((magnitude << 13) + 0x38000000u));
}

inline F16 FloatToF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  uint16_t out;
  if (x >= 0x7f800000u) {  // infinity or NaN (NaN stays a quiet NaN)
    out = x > 0x7f800000u ? static_cast<uint16_t>(0x7e00u | ((x >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (x >= 0x477ff000u) {  // >= 65520 rounds to infinity
    out = 0x7c00u;
  } else if (x < 0x38800000u) {  // below 2^-14: the result is subnormal or zero.
    // Adding 0.5 aligns the value to float's ulp at 0.5 (2^-24, the f16 subnormal step),
    // so the hardware's round-to-nearest-even does the rounding.
    float aligned = std::bit_cast<float>(x) + 0.5f;
    out = static_cast<uint16_t>(std::bit_cast<uint32_t>(aligned) - 0x3f000000u);
  } else {
    uint32_t odd = (x >> 13) & 1u;
    x += 0xc8000fffu + odd;  // rebias the exponent (127 -> 15) and round to nearest even
    out = static_cast<uint16_t>(x >> 13);
  }
  return F16{static_cast<uint16_t>(out | sign)};
}

inline float BF16ToFloat(BF16 b) { return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16); }

inline BF16 FloatToBF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BF16{static_cast<uint16_t>((x >> 16) | 0x40u)};
  x += 0x7fffu + ((x >> 16) & 1u);
  return BF16{static_cast<uint16_t>(x >> 16)};
}

}  // namespace stablert::kernels
