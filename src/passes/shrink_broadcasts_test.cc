#include "passes/shrink_broadcasts.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"
#include "passes/dead_code.h"
#include "passes/simplify.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

ir::ValueId Broadcast(ModuleBuilder& b, ir::ValueId v, DType dtype, Dims dims, std::vector<int64_t> mapping) {
  return b.Op(OpCode::kBroadcastInDim, {v}, dtype, std::move(dims),
              {{"broadcast_dimensions", ModuleBuilder::IntList(mapping)}});
}

ir::ValueId Reduce(ModuleBuilder& b, OpCode body, ir::ValueId input, ir::ValueId init, DType dtype, Dims dims,
                   std::vector<int64_t> reduced) {
  std::vector<ir::Region> regions;
  regions.push_back(b.BinaryBody(body, dtype));
  return b.Op(OpCode::kReduce, {input, init}, dtype, std::move(dims),
              {{"dimensions", ModuleBuilder::IntList(reduced)}}, std::move(regions));
}

std::string Shrunk(ir::Module& module, int expected_rewrites) {
  EXPECT_EQ(ShrinkBroadcasts(module), expected_rewrites);
  Simplify(module);
  RemoveDeadCode(module);
  return ir::PrintModule(module);
}

TEST(ShrinkBroadcastsTest, ChainOnTheOperandAndSumAsAProduct) {
  // (broadcast(x, [3, 4]) * 2 + 1).sum() -> reduce(x * 2 + 1) * 3
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto wide = Broadcast(b, x, DType::kF32, {3, 4}, {1});
  auto two = Broadcast(b, b.Constant<float>(DType::kF32, {}, {2.0f}), DType::kF32, {3, 4}, {});
  auto one = Broadcast(b, b.Constant<float>(DType::kF32, {}, {1.0f}), DType::kF32, {3, 4}, {});
  auto scaled = b.Op(OpCode::kMultiply, {wide, two}, DType::kF32, {3, 4});
  auto shifted = b.Op(OpCode::kAdd, {scaled, one}, DType::kF32, {3, 4});
  auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  ir::Module module = b.Build({Reduce(b, OpCode::kAdd, shifted, zero, DType::kF32, {}, {0, 1})});
  EXPECT_EQ(Shrunk(module, 3), R"(module @test {
  func.func public @main(%0: tensor<4xf32>) -> (tensor<f32>) {
    %2 = stablehlo.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
    %4 = stablehlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %2 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f32>) -> tensor<4xf32>
    %14 = stablehlo.multiply %0, %13 : tensor<4xf32>
    %15 = stablehlo.broadcast_in_dim %4 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f32>) -> tensor<4xf32>
    %16 = stablehlo.add %14, %15 : tensor<4xf32>
    %8 = stablehlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
    %17 = stablehlo.reduce %16, %8 {dimensions = dense<[0]> : tensor<1xi64>} ({
    ^bb0(%9: tensor<f32>, %10: tensor<f32>):
      %11 = stablehlo.add %9, %10 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %18 = stablehlo.constant {value = dense<3.0> : tensor<f32>} : tensor<f32>
    %20 = stablehlo.multiply %17, %18 : tensor<f32>
    stablehlo.return %20 : tensor<f32>
  }
}
)");
}

TEST(ShrinkBroadcastsTest, IdempotentBodiesDropCreatedAndExpandedDimensions) {
  // max over the created dimension 0 of broadcast(x[4] -> [3, 4]) is x; min over dimension 1
  // of broadcast(y[3, 1] -> [3, 5]) is y reshaped; an integer sum over the expanded
  // dimension is y * 5.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto y = b.Param(DType::kS32, {3, 1});
  auto lowest = b.Constant<float>(DType::kF32, {}, {-1.0f / 0.0f});
  auto highest = b.Constant<int32_t>(DType::kS32, {}, {2147483647});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto wide_x = Broadcast(b, x, DType::kF32, {3, 4}, {1});
  auto wide_y = Broadcast(b, y, DType::kS32, {3, 5}, {0, 1});
  auto max = Reduce(b, OpCode::kMaximum, wide_x, lowest, DType::kF32, {4}, {0});
  auto min = Reduce(b, OpCode::kMinimum, wide_y, highest, DType::kS32, {3}, {1});
  auto sum = Reduce(b, OpCode::kAdd, wide_y, zero, DType::kS32, {3}, {1});
  ir::Module module = b.Build({max, min, sum});
  EXPECT_EQ(Shrunk(module, 3), R"(module @test {
  func.func public @main(%0: tensor<4xf32>, %1: tensor<3x1xi32>) -> (tensor<4xf32>, tensor<3xi32>, tensor<3xi32>) {
    %3 = stablehlo.constant {value = dense<2147483647> : tensor<i32>} : tensor<i32>
    %4 = stablehlo.constant {value = dense<0> : tensor<i32>} : tensor<i32>
    %19 = stablehlo.reduce %1, %3 {dimensions = dense<[1]> : tensor<1xi64>} ({
    ^bb0(%11: tensor<i32>, %12: tensor<i32>):
      %13 = stablehlo.minimum %11, %12 : tensor<i32>
      stablehlo.return %13 : tensor<i32>
    }) : (tensor<3x1xi32>, tensor<i32>) -> tensor<3xi32>
    %20 = stablehlo.reduce %1, %4 {dimensions = dense<[1]> : tensor<1xi64>} ({
    ^bb0(%15: tensor<i32>, %16: tensor<i32>):
      %17 = stablehlo.add %15, %16 : tensor<i32>
      stablehlo.return %17 : tensor<i32>
    }) : (tensor<3x1xi32>, tensor<i32>) -> tensor<3xi32>
    %21 = stablehlo.constant {value = dense<5> : tensor<i32>} : tensor<i32>
    %22 = stablehlo.broadcast_in_dim %21 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<i32>) -> tensor<3xi32>
    %23 = stablehlo.multiply %20, %22 : tensor<3xi32>
    stablehlo.return %0, %19, %23 : tensor<4xf32>, tensor<3xi32>, tensor<3xi32>
  }
}
)");
}

TEST(ShrinkBroadcastsTest, FloatSumOverCreatedDimensionsOnlyKeepsTheInitsZero) {
  // sum over dimension 0 of broadcast(x[4] -> [8, 4]): x * 8 + init (so -0 gives +0, as the sum).
  ModuleBuilder b;
  auto x = b.Param(DType::kF64, {4});
  auto zero = b.Constant<double>(DType::kF64, {}, {0.0});
  auto wide = Broadcast(b, x, DType::kF64, {8, 4}, {1});
  ir::Module module = b.Build({Reduce(b, OpCode::kAdd, wide, zero, DType::kF64, {4}, {0})});
  EXPECT_EQ(Shrunk(module, 1), R"(module @test {
  func.func public @main(%0: tensor<4xf64>) -> (tensor<4xf64>) {
    %1 = stablehlo.constant {value = dense<0.0> : tensor<f64>} : tensor<f64>
    %7 = stablehlo.constant {value = dense<8.0> : tensor<f64>} : tensor<f64>
    %8 = stablehlo.broadcast_in_dim %7 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f64>) -> tensor<4xf64>
    %9 = stablehlo.multiply %0, %8 : tensor<4xf64>
    %10 = stablehlo.broadcast_in_dim %1 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f64>) -> tensor<4xf64>
    %11 = stablehlo.add %9, %10 : tensor<4xf64>
    stablehlo.return %11 : tensor<4xf64>
  }
}
)");
}

TEST(ShrinkBroadcastsTest, AReductionOverTheOperandsDimensionsRunsOnceAndAnyInitStays) {
  // The sum over dimension 1 of broadcast(x[4] -> [3, 4]) is the sum of x, three times.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto wide = Broadcast(b, x, DType::kF32, {3, 4}, {1});
  auto one = b.Constant<float>(DType::kF32, {}, {1.0f});
  ir::Module module = b.Build({Reduce(b, OpCode::kAdd, wide, one, DType::kF32, {3}, {1})});
  EXPECT_EQ(Shrunk(module, 1), R"(module @test {
  func.func public @main(%0: tensor<4xf32>) -> (tensor<3xf32>) {
    %2 = stablehlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
    %7 = stablehlo.reduce %0, %2 {dimensions = dense<[0]> : tensor<1xi64>} ({
    ^bb0(%3: tensor<f32>, %4: tensor<f32>):
      %5 = stablehlo.add %3, %4 : tensor<f32>
      stablehlo.return %5 : tensor<f32>
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %6 = stablehlo.broadcast_in_dim %7 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f32>) -> tensor<3xf32>
    stablehlo.return %6 : tensor<3xf32>
  }
}
)");
}

TEST(ShrinkBroadcastsTest, LeavesWhatItCannotShrink) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto z = b.Param(DType::kF32, {3, 4});
  auto h = b.Param(DType::kBF16, {4});
  auto wide = Broadcast(b, x, DType::kF32, {3, 4}, {1});
  auto mixed = b.Op(OpCode::kAdd, {wide, z}, DType::kF32, {3, 4});             // z is not a broadcast
  auto column = b.Op(OpCode::kReshape, {x}, DType::kF32, {4, 1});
  auto other = Broadcast(b, column, DType::kF32, {4, 3}, {0, 1});
  auto transposed = Broadcast(b, x, DType::kF32, {4, 3}, {0});
  auto unlike = b.Op(OpCode::kAdd, {other, transposed}, DType::kF32, {4, 3});  // two operand shapes
  auto one = b.Constant<float>(DType::kF32, {}, {1.0f});
  auto sum_from_one = Reduce(b, OpCode::kAdd, wide, one, DType::kF32, {4}, {0});  // init 1
  auto wide_h = Broadcast(b, h, DType::kBF16, {3, 4}, {1});
  auto zero_h = b.Constant<uint16_t>(DType::kBF16, {}, {0});
  auto sum_bf16 = Reduce(b, OpCode::kAdd, wide_h, zero_h, DType::kBF16, {4}, {0});  // bf16 sums stay sums
  auto product = Reduce(b, OpCode::kMultiply, wide, one, DType::kF32, {4}, {0});
  ir::Module module = b.Build({mixed, unlike, sum_from_one, sum_bf16, product});
  EXPECT_EQ(Shrunk(module, 0), R"(module @test {
  func.func public @main(%0: tensor<4xf32>, %1: tensor<3x4xf32>, %2: tensor<4xbf16>) -> (tensor<3x4xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) {
    %3 = stablehlo.broadcast_in_dim %0 {broadcast_dimensions = dense<[1]> : tensor<1xi64>} : (tensor<4xf32>) -> tensor<3x4xf32>
    %4 = stablehlo.add %3, %1 : tensor<3x4xf32>
    %5 = stablehlo.reshape %0 : (tensor<4xf32>) -> tensor<4x1xf32>
    %6 = stablehlo.broadcast_in_dim %5 {broadcast_dimensions = dense<[0, 1]> : tensor<2xi64>} : (tensor<4x1xf32>) -> tensor<4x3xf32>
    %7 = stablehlo.broadcast_in_dim %0 {broadcast_dimensions = dense<[0]> : tensor<1xi64>} : (tensor<4xf32>) -> tensor<4x3xf32>
    %8 = stablehlo.add %6, %7 : tensor<4x3xf32>
    %9 = stablehlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
    %13 = stablehlo.reduce %3, %9 {dimensions = dense<[0]> : tensor<1xi64>} ({
    ^bb0(%10: tensor<f32>, %11: tensor<f32>):
      %12 = stablehlo.add %10, %11 : tensor<f32>
      stablehlo.return %12 : tensor<f32>
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
    %14 = stablehlo.broadcast_in_dim %2 {broadcast_dimensions = dense<[1]> : tensor<1xi64>} : (tensor<4xbf16>) -> tensor<3x4xbf16>
    %15 = stablehlo.constant {value = dense<0.0> : tensor<bf16>} : tensor<bf16>
    %19 = stablehlo.reduce %14, %15 {dimensions = dense<[0]> : tensor<1xi64>} ({
    ^bb0(%16: tensor<bf16>, %17: tensor<bf16>):
      %18 = stablehlo.add %16, %17 : tensor<bf16>
      stablehlo.return %18 : tensor<bf16>
    }) : (tensor<3x4xbf16>, tensor<bf16>) -> tensor<4xbf16>
    %23 = stablehlo.reduce %3, %9 {dimensions = dense<[0]> : tensor<1xi64>} ({
    ^bb0(%20: tensor<f32>, %21: tensor<f32>):
      %22 = stablehlo.multiply %20, %21 : tensor<f32>
      stablehlo.return %22 : tensor<f32>
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
    stablehlo.return %4, %8, %13, %19, %23 : tensor<3x4xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>
  }
}
)");
}

}  // namespace
}  // namespace stablert::passes
