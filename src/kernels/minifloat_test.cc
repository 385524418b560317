// The narrow float formats: every code decodes and re-encodes to itself, rounding is to
// nearest even from the exact source value, and overflow, NaN and zero follow each
// format's rules.
#include "kernels/minifloat.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stablert::kernels {
namespace {

constexpr DType kFormats[] = {DType::kF8E5M2,     DType::kF8E4M3FN, DType::kF8E4M3B11FNUZ,
                              DType::kF8E5M2FNUZ, DType::kF8E4M3FNUZ, DType::kF8E4M3,
                              DType::kF8E3M4,     DType::kF8E8M0FNU, DType::kF4E2M1FN};

TEST(Minifloat, EveryCodeRoundTrips) {
  for (DType dtype : kFormats) {
    const MinifloatFormat f = MinifloatFormatOf(dtype);
    const int codes = 1 << f.total_bits();
    for (int code = 0; code < codes; ++code) {
      const float value = MinifloatToFloat(f, static_cast<uint8_t>(code));
      const uint8_t back = MinifloatFromDouble(f, value);
      if (std::isnan(value)) {
        EXPECT_TRUE(std::isnan(MinifloatToFloat(f, back))) << DTypeName(dtype) << " code " << code;
      } else {
        EXPECT_EQ(back, code) << DTypeName(dtype) << " code " << code << " value " << value;
      }
    }
  }
}

TEST(Minifloat, RoundsToNearestEvenFromTheExactValue) {
  const MinifloatFormat e4m3fn = MinifloatFormatOf(DType::kF8E4M3FN);
  // Between 1 and 1.125 (spacing 1/8): ties go to the even mantissa, anything above a tie up.
  EXPECT_EQ(MinifloatToFloat(e4m3fn, MinifloatFromDouble(e4m3fn, 1.0625)), 1.0f);
  EXPECT_EQ(MinifloatToFloat(e4m3fn, MinifloatFromDouble(e4m3fn, 1.0625 + 1e-9)), 1.125f);
  EXPECT_EQ(MinifloatToFloat(e4m3fn, MinifloatFromDouble(e4m3fn, 1.1875)), 1.25f);
  // Subnormals: the smallest is 2^-9.
  EXPECT_EQ(MinifloatToFloat(e4m3fn, MinifloatFromDouble(e4m3fn, std::ldexp(1.0, -9))), std::ldexp(1.0f, -9));
  EXPECT_EQ(MinifloatToFloat(e4m3fn, MinifloatFromDouble(e4m3fn, std::ldexp(1.0, -11))), 0.0f);
}

TEST(Minifloat, OverflowNanAndZeroFollowTheFormat) {
  auto value = [](DType dtype, double x) {
    const MinifloatFormat f = MinifloatFormatOf(dtype);
    return MinifloatToFloat(f, MinifloatFromDouble(f, x));
  };
  EXPECT_EQ(value(DType::kF8E4M3FN, 448), 448.0f);
  EXPECT_TRUE(std::isnan(value(DType::kF8E4M3FN, 1e6)));  // no infinity: NaN
  EXPECT_TRUE(std::isinf(value(DType::kF8E5M2, 1e6)));
  EXPECT_EQ(value(DType::kF8E5M2, 57344), 57344.0f);
  EXPECT_EQ(value(DType::kF4E2M1FN, 100), 6.0f);  // saturates
  EXPECT_EQ(value(DType::kF4E2M1FN, -100), -6.0f);
  EXPECT_TRUE(std::signbit(value(DType::kF4E2M1FN, NAN)));  // NaN -> -0, as XLA
  EXPECT_FALSE(std::signbit(value(DType::kF8E4M3FNUZ, -0.0)));  // no negative zero
  EXPECT_EQ(MinifloatFromDouble(MinifloatFormatOf(DType::kF8E4M3FNUZ), NAN), 0x80);
  EXPECT_TRUE(std::isnan(value(DType::kF8E8M0FNU, 0.0)));  // no zero
  EXPECT_TRUE(std::isnan(value(DType::kF8E8M0FNU, -2.0)));
  EXPECT_EQ(value(DType::kF8E8M0FNU, 3.0), 4.0f);  // 1.5 * 2^1: the tie goes to the even 2^2
  EXPECT_EQ(value(DType::kF8E8M0FNU, 0.75), 1.0f);
}

TEST(Minifloat, ExactDoubleKeepsSubnormalFloats) {
  EXPECT_EQ(ExactDouble(std::ldexp(1.0f, -140)), std::ldexp(1.0, -140));
  EXPECT_EQ(ExactDouble(-std::ldexp(3.0f, -149)), -std::ldexp(3.0, -149));
  EXPECT_EQ(ExactDouble(1.5f), 1.5);
}

}  // namespace
}  // namespace stablert::kernels
