#include "ir/float_format.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace stablert::ir {
namespace {

enum class Special : uint8_t {
  kIeee,     // all-ones exponent: infinity (mantissa 0) or NaN
  kFiniteNanAllOnes,  // no infinity; NaN = all-ones exponent and mantissa
  kNanIsNegativeZero,  // no infinity, no -0; the pattern 1000...0 is NaN
  kFinite,   // every pattern is a finite number
};

double DecodeMinifloat(uint64_t bits, int exp_bits, int mantissa_bits, int bias,
                       Special special) {
  const int total = 1 + exp_bits + mantissa_bits;
  const bool negative = (bits >> (total - 1)) & 1;
  const uint64_t exp_mask = (uint64_t{1} << exp_bits) - 1;
  const uint64_t mantissa_mask = (uint64_t{1} << mantissa_bits) - 1;
  const uint64_t e = (bits >> mantissa_bits) & exp_mask;
  const uint64_t m = bits & mantissa_mask;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (special) {
    case Special::kIeee:
      if (e == exp_mask) {
        if (m != 0) return nan;
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      }
      break;
    case Special::kFiniteNanAllOnes:
      if (e == exp_mask && m == mantissa_mask) return nan;
      break;
    case Special::kNanIsNegativeZero:
      if (negative && e == 0 && m == 0) return nan;
      break;
    case Special::kFinite:
      break;
  }
  double magnitude;
  if (e == 0) {
    magnitude = std::ldexp(static_cast<double>(m), 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(m | (uint64_t{1} << mantissa_bits)),
                           static_cast<int>(e) - bias - mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

double FloatBitsToDouble(DType dtype, uint64_t bits) {
  switch (dtype) {
    case DType::kF64: {
      double v;
      std::memcpy(&v, &bits, 8);
      return v;
    }
    case DType::kF32: {
      uint32_t b = static_cast<uint32_t>(bits);
      // Subnormals are decoded without float arithmetic: on a thread that treats denormals as
      // zero (DAZ), converting one to double gives 0.
      if ((b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0) return DecodeMinifloat(b, 8, 23, 127, Special::kIeee);
      float v;
      std::memcpy(&v, &b, 4);
      return v;
    }
    case DType::kF16: return DecodeMinifloat(bits, 5, 10, 15, Special::kIeee);
    case DType::kBF16: return DecodeMinifloat(bits, 8, 7, 127, Special::kIeee);
    case DType::kF8E5M2: return DecodeMinifloat(bits, 5, 2, 15, Special::kIeee);
    case DType::kF8E4M3: return DecodeMinifloat(bits, 4, 3, 7, Special::kIeee);
    case DType::kF8E3M4: return DecodeMinifloat(bits, 3, 4, 3, Special::kIeee);
    case DType::kF8E4M3FN: return DecodeMinifloat(bits, 4, 3, 7, Special::kFiniteNanAllOnes);
    case DType::kF8E4M3FNUZ: return DecodeMinifloat(bits, 4, 3, 8, Special::kNanIsNegativeZero);
    case DType::kF8E5M2FNUZ: return DecodeMinifloat(bits, 5, 2, 16, Special::kNanIsNegativeZero);
    case DType::kF8E4M3B11FNUZ:
      return DecodeMinifloat(bits, 4, 3, 11, Special::kNanIsNegativeZero);
    case DType::kF4E2M1FN: return DecodeMinifloat(bits & 0xF, 2, 1, 1, Special::kFinite);
    case DType::kF6E2M3FN: return DecodeMinifloat(bits & 0x3F, 2, 3, 1, Special::kFinite);
    case DType::kF6E3M2FN: return DecodeMinifloat(bits & 0x3F, 3, 2, 3, Special::kFinite);
    case DType::kF8E8M0FNU: {
      uint64_t e = bits & 0xFF;
      if (e == 0xFF) return std::numeric_limits<double>::quiet_NaN();
      return std::ldexp(1.0, static_cast<int>(e) - 127);
    }
    default:
      return 0;
  }
}

uint64_t LoadElementBits(DType dtype, const uint8_t* data) {
  int size = DTypeByteSize(dtype);
  uint64_t bits = 0;
  for (int i = size - 1; i >= 0; --i) bits = (bits << 8) | data[i];
  return bits;
}

}  // namespace stablert::ir
