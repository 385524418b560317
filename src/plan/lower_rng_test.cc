// Lowering of rng_bit_generator and rng: kernel choice and compile-time errors.
#include <gtest/gtest.h>

#include <string>

#include "kernels/rng_params.h"
#include "plan/lower.h"
#include "ir/test_module_builder.h"

namespace stablert::plan {
namespace {

using ir::EnumKind;
using ir::OpCode;
using ir::testing::ModuleBuilder;

StatusOr<ExecutionPlan> LowerRbg(int64_t algorithm, Dims state_dims, DType state_dtype, DType bits_dtype) {
  ModuleBuilder b;
  auto state = b.Param(state_dtype, state_dims);
  auto results = b.OpN(OpCode::kRngBitGenerator, {state},
                       {ir::Type::Tensor(state_dtype, state_dims), ir::Type::Tensor(bits_dtype, {3, 5})},
                       {{"rng_algorithm", ModuleBuilder::Enum(EnumKind::kRngAlgorithm, algorithm)}});
  return LowerToPlan(b.Build(results));
}

TEST(LowerRngTest, DefaultIsPhilox) {
  for (auto [algorithm, kernel] : {std::pair<int64_t, std::string>{0, "rng_bit_generator_philox.ui8"},
                                   {1, "rng_bit_generator_three_fry.ui8"},
                                   {2, "rng_bit_generator_philox.ui8"}}) {
    auto plan = LowerRbg(algorithm, {2}, DType::kU64, DType::kU8);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_EQ(plan->body.steps.size(), 1u);
    EXPECT_EQ(plan->body.steps[0].kernel, kernel);
  }
  EXPECT_TRUE(LowerRbg(2, {3}, DType::kU64, DType::kU64).ok());  // PHILOX takes u64[3] too
}

TEST(LowerRngTest, StatesAndTypesXlaRejectsFailAtCompileTime) {
  auto three_word = LowerRbg(1, {3}, DType::kU64, DType::kU32);
  ASSERT_FALSE(three_word.ok());
  EXPECT_EQ(three_word.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(three_word.status().message().find("THREE_FRY takes tensor<2xui64>"), std::string_view::npos)
      << three_word.status().message();
  auto u32_state = LowerRbg(2, {4}, DType::kU32, DType::kU32);
  ASSERT_FALSE(u32_state.ok());
  EXPECT_NE(u32_state.status().message().find("stablehlo.rng_bit_generator"), std::string_view::npos);
  auto float_bits = LowerRbg(0, {2}, DType::kU64, DType::kF32);
  ASSERT_FALSE(float_bits.ok());
  EXPECT_EQ(float_bits.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(float_bits.status().message().find("8- to 64-bit integer"), std::string_view::npos);
}

TEST(LowerRngTest, RngDistributions) {
  auto lower = [](int64_t distribution, DType dtype) {
    ModuleBuilder b;
    auto lo = b.Param(dtype, {});
    auto hi = b.Param(dtype, {});
    auto shape = b.Constant<int64_t>(DType::kS64, {2}, {4, 5});
    auto r = b.Op(OpCode::kRng, {lo, hi, shape}, dtype, {4, 5},
                  {{"rng_distribution", ModuleBuilder::Enum(EnumKind::kRngDistribution, distribution)}});
    return LowerToPlan(b.Build({r}));
  };
  auto uniform = lower(1, DType::kS32);
  ASSERT_TRUE(uniform.ok()) << uniform.status().ToString();
  EXPECT_EQ(uniform->body.steps.back().kernel, "rng_uniform.i32");
  EXPECT_NE(uniform->body.steps.back().params.As<kernels::RngParams>(), nullptr);
  auto normal = lower(2, DType::kF32);
  ASSERT_TRUE(normal.ok());
  EXPECT_EQ(normal->body.steps.back().kernel, "rng_normal.f32");
  auto int_normal = lower(2, DType::kS32);
  ASSERT_FALSE(int_normal.ok());
  EXPECT_EQ(int_normal.status().code(), StatusCode::kUnimplemented);
  EXPECT_FALSE(lower(1, DType::kS8).ok());
}

}  // namespace
}  // namespace stablert::plan
