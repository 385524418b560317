#include "passes/simplify.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"
#include "passes/dead_code.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

TEST(SimplifyTest, IdentitiesInvolutionsAndCompositions) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2, 3});
  auto same_convert = b.Op(OpCode::kConvert, {x}, DType::kF32, {2, 3});
  auto same_reshape = b.Op(OpCode::kReshape, {same_convert}, DType::kF32, {2, 3});
  auto identity_transpose = b.Op(OpCode::kTranspose, {same_reshape}, DType::kF32, {2, 3},
                                 {{"permutation", ModuleBuilder::IntList({0, 1})}});
  auto neg = b.Op(OpCode::kNegate, {identity_transpose}, DType::kF32, {2, 3});
  auto neg_neg = b.Op(OpCode::kNegate, {neg}, DType::kF32, {2, 3});  // -> x
  auto flat = b.Op(OpCode::kReshape, {neg_neg}, DType::kF32, {6});
  auto back = b.Op(OpCode::kReshape, {flat}, DType::kF32, {3, 2});    // reshape(x) to 3x2
  auto t1 = b.Op(OpCode::kTranspose, {x}, DType::kF32, {3, 2}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  auto t2 = b.Op(OpCode::kTranspose, {t1}, DType::kF32, {2, 3}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  auto whole = b.Op(OpCode::kSlice, {t2}, DType::kF32, {2, 3},
                    {{"start_indices", ModuleBuilder::IntList({0, 0})},
                     {"limit_indices", ModuleBuilder::IntList({2, 3})},
                     {"strides", ModuleBuilder::IntList({1, 1})}});
  ir::Module module = b.Build({back, whole});
  EXPECT_EQ(Simplify(module), 8);
  RemoveDeadCode(module);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
    %7 = stablehlo.reshape %0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
    stablehlo.return %7, %0 : tensor<3x2xf32>, tensor<2x3xf32>
  }
}
)");
}

TEST(SimplifyTest, NeutralElementsThroughSplatBroadcastsExactOnly) {
  ModuleBuilder b;
  auto f = b.Param(DType::kF32, {4});
  auto i = b.Param(DType::kS32, {4});
  auto one_f = b.Op(OpCode::kBroadcastInDim, {b.Constant<float>(DType::kF32, {}, {1.0f})}, DType::kF32, {4},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto zero_f = b.Constant<float>(DType::kF32, {4}, {0, 0, 0, 0});
  auto zero_i = b.Constant<int32_t>(DType::kS32, {4}, {0, 0, 0, 0});
  auto mostly_zero = b.Constant<int32_t>(DType::kS32, {4}, {0, 0, 1, 0});
  auto f_times_one = b.Op(OpCode::kMultiply, {one_f, f}, DType::kF32, {4});      // -> f
  auto f_plus_zero = b.Op(OpCode::kAdd, {f, zero_f}, DType::kF32, {4});          // stays: -0 + 0 is +0
  auto i_plus_zero = b.Op(OpCode::kAdd, {zero_i, i}, DType::kS32, {4});          // -> i
  auto i_minus_zero = b.Op(OpCode::kSubtract, {i, zero_i}, DType::kS32, {4});    // -> i
  auto i_plus_other = b.Op(OpCode::kAdd, {i, mostly_zero}, DType::kS32, {4});    // stays: not a splat
  auto yes = b.Constant<uint8_t>(DType::kPred, {}, {1});
  auto chosen = b.Op(OpCode::kSelect, {yes, f_times_one, f_plus_zero}, DType::kF32, {4});  // -> f
  ir::Module module = b.Build({chosen, f_plus_zero, i_plus_zero, i_minus_zero, i_plus_other});
  EXPECT_EQ(Simplify(module), 4);
  RemoveDeadCode(module);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<4xf32>, %1: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
    %4 = stablehlo.constant {value = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
    %6 = stablehlo.constant {value = dense<[0, 0, 1, 0]> : tensor<4xi32>} : tensor<4xi32>
    %8 = stablehlo.add %0, %4 : tensor<4xf32>
    %11 = stablehlo.add %1, %6 : tensor<4xi32>
    stablehlo.return %0, %8, %1, %1, %11 : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
  }
}
)");
}

// JAX's lowering of lax.logistic, divide(1, add(1, exp(-x))), becomes one logistic op for
// f32 and f64 (kernels/logistic_chain_test.cc checks the kernels agree bit for bit); the
// same shape with another constant stays.
TEST(SimplifyTest, LogisticChainBecomesLogistic) {
  ModuleBuilder b;
  auto chain = [&](DType dtype, ir::ValueId x, ir::ValueId numerator, ir::ValueId addend, bool one_first) {
    auto neg = b.Op(OpCode::kNegate, {x}, dtype, {4});
    auto e = b.Op(OpCode::kExponential, {neg}, dtype, {4});
    auto sum = one_first ? b.Op(OpCode::kAdd, {addend, e}, dtype, {4}) : b.Op(OpCode::kAdd, {e, addend}, dtype, {4});
    return b.Op(OpCode::kDivide, {numerator, sum}, dtype, {4});
  };
  auto splat = [&](DType dtype, double v) {
    auto scalar = dtype == DType::kF32 ? b.Constant<float>(dtype, {}, {static_cast<float>(v)})
                                       : b.Constant<double>(dtype, {}, {v});
    return b.Op(OpCode::kBroadcastInDim, {scalar}, dtype, {4}, {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  };
  auto x = b.Param(DType::kF32, {4});
  auto y = b.Param(DType::kF64, {4});
  auto one = splat(DType::kF32, 1.0), two = splat(DType::kF32, 2.0), one64 = splat(DType::kF64, 1.0);
  auto sigmoid = chain(DType::kF32, x, one, one, true);         // -> logistic(x)
  auto sigmoid_swapped = chain(DType::kF32, x, one, one, false);  // -> logistic(x)
  auto sigmoid64 = chain(DType::kF64, y, one64, one64, true);   // -> logistic(y)
  auto two_over = chain(DType::kF32, x, two, one, true);        // stays: 2 / (1 + exp(-x))
  auto plus_two = chain(DType::kF32, x, one, two, true);        // stays: 1 / (2 + exp(-x))
  ir::Module module = b.Build({sigmoid, sigmoid_swapped, sigmoid64, two_over, plus_two});
  EXPECT_EQ(Simplify(module), 3);
  RemoveDeadCode(module);
  const std::string text = ir::PrintModule(module);
  size_t logistic = 0;
  for (size_t at = text.find("stablehlo.logistic"); at != std::string::npos; at = text.find("stablehlo.logistic", at + 1))
    ++logistic;
  EXPECT_EQ(logistic, 3u) << text;
  EXPECT_NE(text.find("stablehlo.logistic %0 : tensor<4xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("stablehlo.logistic %1 : tensor<4xf64>"), std::string::npos) << text;
}

}  // namespace
}  // namespace stablert::passes
