#include "kernels/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using testing::ReferenceBF16Bits;
using testing::ReferenceF16Bits;

TEST(HalfTest, EveryF16WidensExactly) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float got = F16ToFloat(F16{static_cast<uint16_t>(bits)});
    _Float16 h;
    uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(&h, &b, 2);
    float want = static_cast<float>(h);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << bits;
      EXPECT_EQ(FloatToF16(got).bits & 0x7fff, (bits | 0x200) & 0x7fff) << "quieted NaN payload of " << bits;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << bits;
    ASSERT_EQ(FloatToF16(got).bits, bits) << "round trip of " << bits;
  }
}

TEST(HalfTest, EveryBF16WidensExactly) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float got = BF16ToFloat(BF16{static_cast<uint16_t>(bits)});
    if (std::isnan(got)) continue;
    ASSERT_EQ(FloatToBF16(got).bits, bits) << bits;
  }
}

// Checks narrowing on floats around every f16/bf16 value (ties, just above/below ties)
// and on random bit patterns.
TEST(HalfTest, NarrowingRoundsToNearestEven) {
  std::vector<float> inputs;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    for (uint32_t base : {bits << 16, bits << 13}) {
      for (int64_t delta : {-1, 0, 1, 0x1000 - 1, 0x1000, 0x1000 + 1, 0x8000 - 1, 0x8000, 0x8000 + 1}) {
        uint32_t x = static_cast<uint32_t>(static_cast<int64_t>(base) + delta);
        inputs.push_back(std::bit_cast<float>(x));
      }
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) inputs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  for (float f : inputs) {
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16ToFloat(FloatToF16(f))));
      EXPECT_TRUE(std::isnan(BF16ToFloat(FloatToBF16(f))));
      continue;
    }
    ASSERT_EQ(FloatToF16(f).bits, ReferenceF16Bits(f)) << std::hexfloat << f;
    ASSERT_EQ(FloatToBF16(f).bits, ReferenceBF16Bits(f)) << std::hexfloat << f;
  }
}

}  // namespace
}  // namespace stablert::kernels
