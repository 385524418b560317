#include "base/shape.h"

#include <gtest/gtest.h>

#include <limits>

namespace stablert {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedArithmetic, AddAndMulReportOverflow) {
  EXPECT_EQ(CheckedAdd(2, 3), 5);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(kMin, -1), std::nullopt);
}

TEST(CheckedByteSize, RejectsWrappingSizes) {
  EXPECT_EQ(*CheckedByteSize({2, 3}, 4), 24);
  EXPECT_EQ(*CheckedByteSize({}, 8), 8);
  EXPECT_EQ(*CheckedByteSize({0, kMax}, 8), 0);
  // 4 * (2^62 + 16) wraps to 64 in 64-bit arithmetic.
  auto wrapped = CheckedByteSize({(int64_t{1} << 62) + 16}, 4);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_NE(wrapped.status().message().find("overflows"), std::string::npos);
  EXPECT_FALSE(CheckedByteSize({int64_t{1} << 32, int64_t{1} << 32}, 1).ok());
  EXPECT_FALSE(CheckedByteSize({3, -1}, 4).ok());
  EXPECT_FALSE(CheckedByteSize({3}, -4).ok());
}

TEST(CheckedStridedSpan, CoversTheFirstAndLastElement) {
  auto dense = CheckedStridedSpan({2, 3}, {12, 4}, 4);
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(dense->begin, 0);
  EXPECT_EQ(dense->end, 24);
  auto padded = CheckedStridedSpan({2, 2}, {4, 16}, 4);
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->end, 24);
  auto reversed = CheckedStridedSpan({4}, {-4}, 4);
  ASSERT_TRUE(reversed.ok());
  EXPECT_EQ(reversed->begin, -12);
  EXPECT_EQ(reversed->end, 4);
  auto empty = CheckedStridedSpan({0, 5}, {kMax, kMax}, 4);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->end, 0);
  auto broadcast = CheckedStridedSpan({kMax}, {0}, 4);
  ASSERT_TRUE(broadcast.ok());
  EXPECT_EQ(broadcast->end, 4);
}

TEST(CheckedStridedSpan, RejectsOffsetsThatOverflow) {
  auto huge = CheckedStridedSpan({5}, {int64_t{1} << 62}, 4);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("byte_strides[0] = 4611686018427387904"), std::string::npos)
      << huge.status().message();
  EXPECT_FALSE(CheckedStridedSpan({2, 2}, {kMax / 2, kMax / 2 + 8}, 4).ok());
  EXPECT_FALSE(CheckedStridedSpan({2}, {kMax}, 4).ok());
  EXPECT_FALSE(CheckedStridedSpan({3, 2}, {kMin, 4}, 4).ok());
  EXPECT_FALSE(CheckedStridedSpan({2, 2}, {kMin / 2 + 1, kMax / 2}, 4).ok()) << "span wider than 2^63";
  EXPECT_FALSE(CheckedStridedSpan({2}, {4, 4}, 4).ok()) << "rank mismatch";
}

}  // namespace
}  // namespace stablert
