#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/reduce_precision_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

// Reducing f32 to bf16's or f16's bits equals rounding through those formats (f16's
// subnormals flush to zero under reduce_precision).
TEST(ReducePrecisionTest, MatchesRoundingThroughHalfFormats) {
  std::mt19937 rng(81);
  Array in(DType::kF32, {20000});
  for (int64_t i = 0; i < in.size(); ++i) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (i < 8) f = std::array<float, 8>{0.0f, -0.0f, INFINITY, -INFINITY, 65504.0f, 65520.0f, 6e-8f, 1e-40f}[i];
    SetDouble(in, i, f);
  }
  Array as_bf16(DType::kF32, in.dims), as_f16(DType::kF32, in.dims);
  RunKernel("reduce_precision.f32", {&in}, {&as_bf16}, ReducePrecisionParams{.exponent_bits = 8, .mantissa_bits = 7});
  RunKernel("reduce_precision.f32", {&in}, {&as_f16}, ReducePrecisionParams{.exponent_bits = 5, .mantissa_bits = 10});
  for (int64_t i = 0; i < in.size(); ++i) {
    const float x = static_cast<float>(GetDouble(in, i));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(GetDouble(as_bf16, i)) && std::isnan(GetDouble(as_f16, i)));
      continue;
    }
    const float bf = BF16ToFloat(FloatToBF16(x));
    ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(GetDouble(as_bf16, i))), std::bit_cast<uint32_t>(bf)) << x;
    float h = F16ToFloat(FloatToF16(x));
    if (std::fabs(h) < 6.103515625e-05f) h = std::copysign(0.0f, x);  // below f16's normals
    ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(GetDouble(as_f16, i))), std::bit_cast<uint32_t>(h)) << x;
  }
}

}  // namespace
}  // namespace stablert::kernels
