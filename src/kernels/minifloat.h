// The narrow float formats (f8E5M2, f8E4M3FN, f8E4M3B11FNUZ, f8E5M2FNUZ, f8E4M3FNUZ,
// f8E4M3, f8E3M4, f8E8M0FNU, f4E2M1FN): one code per byte, decoded to float and encoded
// from float or double with round-to-nearest-even directly from the source value (as XLA's
// convert does). Pure functions; thread-safe.
//
// Format rules (as ml_dtypes and XLA define them):
//   IEEE-like (E5M2, E4M3, E3M4): bias 2^(e-1)-1, infinities and NaNs, signed zeros.
//   FN (E4M3FN): no infinities; only S.1111.111 is NaN; overflow gives NaN.
//   FNUZ (E4M3FNUZ, E5M2FNUZ, E4M3B11FNUZ): no infinities, no negative zero, NaN = 0x80;
//     bias 2^(e-1) (11 for B11); overflow gives NaN.
//   E8M0FNU: an unsigned power of two 2^(code-127); 0xFF is NaN; no zero or sign (zero,
//     negative values and infinities convert to NaN).
//   F4E2M1FN: 1.2.1 bits, bias 1, no infinities or NaN; overflow saturates at ±6 and NaN
//     converts to -0.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/dtype.h"

namespace stablert::kernels {

struct MinifloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  enum class Special : uint8_t { kIeee, kFiniteNanAllOnes, kUnsignedZeroNan, kExponentOnly, kNone } special;

  int total_bits() const { return (special == Special::kExponentOnly ? 0 : 1) + exponent_bits + mantissa_bits; }
};

constexpr MinifloatFormat MinifloatFormatOf(DType dtype) {
  using S = MinifloatFormat::Special;
  switch (dtype) {
    case DType::kF8E5M2: return {5, 2, 15, S::kIeee};
    case DType::kF8E4M3: return {4, 3, 7, S::kIeee};
    case DType::kF8E3M4: return {3, 4, 3, S::kIeee};
    case DType::kF8E4M3FN: return {4, 3, 7, S::kFiniteNanAllOnes};
    case DType::kF8E4M3FNUZ: return {4, 3, 8, S::kUnsignedZeroNan};
    case DType::kF8E5M2FNUZ: return {5, 2, 16, S::kUnsignedZeroNan};
    case DType::kF8E4M3B11FNUZ: return {4, 3, 11, S::kUnsignedZeroNan};
    case DType::kF8E8M0FNU: return {8, 0, 127, S::kExponentOnly};
    case DType::kF4E2M1FN: return {2, 1, 1, S::kNone};
    default: return {0, 0, 0, S::kNone};
  }
}

constexpr bool IsMinifloat(DType dtype) { return MinifloatFormatOf(dtype).exponent_bits > 0; }

// The value of `code` (NaN for the format's NaN codes).
inline float MinifloatToFloat(const MinifloatFormat& f, uint8_t code) {
  using S = MinifloatFormat::Special;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.special == S::kExponentOnly) {
    if (code == 0xFF) return nan;
    // Built from bits: 2^-127 is a subnormal float, which arithmetic under flush-to-zero loses.
    return std::bit_cast<float>(code == 0 ? uint32_t{0x00400000} : uint32_t{code} << 23);
  }
  const int width = f.total_bits();
  code &= static_cast<uint8_t>((1u << width) - 1);
  const bool negative = (code >> (width - 1)) & 1;
  const int exponent = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mantissa = code & ((1 << f.mantissa_bits) - 1);
  const int max_exponent = (1 << f.exponent_bits) - 1;
  if (f.special == S::kUnsignedZeroNan && code == (1u << (width - 1))) return nan;
  if (f.special == S::kIeee && exponent == max_exponent)
    return mantissa == 0 ? (negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity())
                         : nan;
  if (f.special == S::kFiniteNanAllOnes && exponent == max_exponent && mantissa == (1 << f.mantissa_bits) - 1)
    return nan;
  float magnitude = exponent == 0 ? std::ldexp(float(mantissa), 1 - f.bias - f.mantissa_bits)
                                  : std::ldexp(float((1 << f.mantissa_bits) | mantissa), exponent - f.bias - f.mantissa_bits);
  return negative ? -magnitude : magnitude;
}

// The code of `value`, rounded to nearest even from its exact value. `e8m0_underflow`:
// what f8E8M0FNU gives below its smallest value 2^-127 (XLA gives NaN from f64 sources and
// 2^-127 from narrower ones).
inline uint8_t MinifloatFromDouble(const MinifloatFormat& f, double value, uint8_t e8m0_underflow = 0xFF) {
  using S = MinifloatFormat::Special;
  const int width = f.total_bits();
  const uint8_t sign_bit = f.special == S::kExponentOnly ? 0 : static_cast<uint8_t>(1u << (width - 1));
  const int max_exponent = (1 << f.exponent_bits) - 1;
  const uint8_t nan_code = f.special == S::kExponentOnly   ? 0xFF
                           : f.special == S::kUnsignedZeroNan ? sign_bit
                           : f.special == S::kIeee            ? static_cast<uint8_t>((max_exponent << f.mantissa_bits) |
                                                                          (1 << (f.mantissa_bits - 1)))
                           : f.special == S::kFiniteNanAllOnes
                               ? static_cast<uint8_t>((max_exponent << f.mantissa_bits) | ((1 << f.mantissa_bits) - 1))
                               : 0;
  const bool negative = std::signbit(value);
  if (std::isnan(value)) {
    if (f.special == S::kNone) return sign_bit;  // no NaN to give: -0, as XLA converts it
    return static_cast<uint8_t>(nan_code | (negative && f.special != S::kUnsignedZeroNan && f.special != S::kExponentOnly
                                                ? sign_bit
                                                : 0));
  }
  const uint8_t sign = negative ? sign_bit : 0;
  double a = std::fabs(value);
  if (f.special == S::kExponentOnly) {
    if (negative && a != 0) return 0xFF;
    if (a == 0 || std::isinf(a)) return 0xFF;  // no zero or infinity: NaN, as XLA converts them
    int e;
    const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    int exponent = e - 1;                   // a = (2m) * 2^exponent, 2m in [1, 2)
    const double n = std::nearbyint(2 * m);  // 1 or 2, ties to even
    if (n == 2) ++exponent;
    const int code = exponent + f.bias;
    if (code < 0) return e8m0_underflow;
    if (code > 254) return 0xFF;
    return static_cast<uint8_t>(code);
  }
  // The largest finite code's exponent and mantissa.
  int top_exponent = f.special == S::kIeee ? max_exponent - 1 : max_exponent;
  int top_mantissa = f.special == S::kFiniteNanAllOnes ? (1 << f.mantissa_bits) - 2 : (1 << f.mantissa_bits) - 1;
  auto overflow = [&]() -> uint8_t {
    if (f.special == S::kIeee) return static_cast<uint8_t>(sign | (max_exponent << f.mantissa_bits));
    if (f.special == S::kNone) return static_cast<uint8_t>(sign | (top_exponent << f.mantissa_bits) | top_mantissa);
    return static_cast<uint8_t>(nan_code | (f.special == S::kUnsignedZeroNan ? 0 : sign));
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return f.special == S::kUnsignedZeroNan ? 0 : sign;
  const int min_exponent = 1 - f.bias;  // of normal values
  int e;
  std::frexp(a, &e);
  int exponent = e - 1;  // a in [2^exponent, 2^(exponent+1))
  uint8_t code;
  if (exponent < min_exponent) {
    // Subnormal: a multiple of 2^(min_exponent - mantissa_bits).
    const double n = std::nearbyint(std::ldexp(a, f.mantissa_bits - min_exponent));
    if (n == 0) return f.special == S::kUnsignedZeroNan ? 0 : sign;
    code = static_cast<uint8_t>(n);  // n == 2^mantissa_bits is the smallest normal, encoded alike
  } else {
    double n = std::nearbyint(std::ldexp(a, f.mantissa_bits - exponent));  // in [2^m, 2^(m+1)]
    if (n == std::ldexp(1.0, f.mantissa_bits + 1)) {
      n /= 2;
      ++exponent;
    }
    const int biased = exponent + f.bias;
    const int mantissa = static_cast<int>(n) - (1 << f.mantissa_bits);
    if (biased > top_exponent || (biased == top_exponent && mantissa > top_mantissa)) return overflow();
    code = static_cast<uint8_t>((biased << f.mantissa_bits) | mantissa);
  }
  return static_cast<uint8_t>(sign | code);
}

// The exact value of `x` as a double, also for subnormal floats (read from the bits, so
// that denormals-are-zero mode does not turn them into zero).
inline double ExactDouble(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7f800000u) != 0 || (bits & 0x007fffffu) == 0) return static_cast<double>(x);
  const double magnitude = std::ldexp(static_cast<double>(bits & 0x007fffffu), -149);
  return (bits >> 31) ? -magnitude : magnitude;
}

// XLA's conversion of a narrow float to an integer type: truncation, NaN to 0, and
// saturation where the value reaches the integer type's limits as the narrow format
// rounds them (for f4E2M1FN, whose largest value 6 is the rounded limit of every integer
// type wider than 3 bits, ±6 saturate).
template <typename I>
inline I MinifloatToInt(const MinifloatFormat& f, float x) {
  if (std::isnan(x)) return 0;
  const float high = MinifloatToFloat(f, MinifloatFromDouble(f, static_cast<double>(std::numeric_limits<I>::max())));
  const float low = MinifloatToFloat(f, MinifloatFromDouble(f, static_cast<double>(std::numeric_limits<I>::min())));
  if (!std::isnan(high) && x >= high) return std::numeric_limits<I>::max();
  if (!std::isnan(low) && x <= low) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}

}  // namespace stablert::kernels
