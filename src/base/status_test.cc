#include "base/status.h"

#include <gtest/gtest.h>

#include "base/dtype.h"
#include "base/hash.h"
#include "base/shape.h"

namespace stablert {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  STABLERT_ASSIGN_OR_RETURN(int half, Half(x));
  STABLERT_ASSIGN_OR_RETURN(*out, Half(half));
  return OkStatus();
}

TEST(Status, OkAndErrorsPropagate) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status error = Quarter(6, &out);
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error.ToString(), "INVALID_ARGUMENT: odd: 3");
  EXPECT_EQ(error.WithPrefix("while quartering").message(), "while quartering: odd: 3");
  EXPECT_EQ(OkStatus().ToString(), "OK");
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(DTypeByteSize(DType::kF32), 4);
  EXPECT_EQ(DTypeByteSize(DType::kS4), 1);
  EXPECT_EQ(DTypeByteSize(DType::kC128), 16);
  EXPECT_EQ(DTypeByteSize(DType::kToken), 0);
  EXPECT_EQ(DTypeName(DType::kBF16), "bf16");
  EXPECT_EQ(DTypeFromOrdinal(11), DType::kF32);
  EXPECT_FALSE(DTypeFromOrdinal(34).has_value());
  EXPECT_FALSE(DTypeFromOrdinal(0).has_value());
}

TEST(Shape, CountsStridesAndOverflow) {
  EXPECT_EQ(ElementCount({}), 1);
  EXPECT_EQ(RowMajorStrides({2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_FALSE(CheckedElementCount({1LL << 40, 1LL << 40}).ok());
  EXPECT_FALSE(CheckedElementCount({-1}).ok());
  EXPECT_EQ(*CheckedElementCount({0, 1LL << 62}), 0);
}

TEST(Hash, FingerprintIsStable) {
  EXPECT_EQ(FingerprintToHex(Fingerprint64("")), "cbf29ce484222325");
  EXPECT_EQ(FingerprintToHex(Fingerprint64("a")), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace stablert
