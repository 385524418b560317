#include "passes/expand_maps.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

ir::Type Scalar(DType dtype) { return ir::Type::Tensor(dtype, {}); }

ir::ValueId Map(ModuleBuilder& b, std::vector<ir::ValueId> operands, DType dtype, Dims dims, ir::Region body,
                std::vector<int64_t> dimensions) {
  std::vector<ir::Region> regions;
  regions.push_back(std::move(body));
  return b.Op(OpCode::kMap, std::move(operands), dtype, std::move(dims),
              {{"dimensions", ModuleBuilder::IntList(std::move(dimensions))}}, std::move(regions));
}

std::string Expanded(ir::Module& module, int expected) {
  auto expanded = ExpandMaps(module);
  EXPECT_TRUE(expanded.ok()) << expanded.status().ToString();
  if (expanded.ok()) {
    EXPECT_EQ(*expanded, expected);
  }
  return ir::PrintModule(module);
}

std::string Error(ir::Module& module) {
  auto expanded = ExpandMaps(module);
  EXPECT_FALSE(expanded.ok());
  if (expanded.ok()) return "";
  EXPECT_EQ(expanded.status().code(), StatusCode::kInvalidArgument);
  return expanded.status().ToString();
}

TEST(ExpandMapsTest, ElementwiseBodyIsInlinedOverTheOperands) {
  // map(a, b) { x * y + 1 } -> a * b + broadcast(1); the map's result is renamed in its user.
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {2, 3});
  auto c = b.Param(DType::kF32, {2, 3});
  ir::Region body = b.Region({Scalar(DType::kF32), Scalar(DType::kF32)}, [&](const std::vector<ir::ValueId>& args) {
    auto product = b.Op(OpCode::kMultiply, {args[0], args[1]}, DType::kF32, {});
    auto one = b.Constant<float>(DType::kF32, {}, {1.0f});
    return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {product, one}, DType::kF32, {})};
  });
  auto mapped = Map(b, {a, c}, DType::kF32, {2, 3}, std::move(body), {0, 1});
  ir::Module module = b.Build({b.Op(OpCode::kNegate, {mapped}, DType::kF32, {2, 3})});
  EXPECT_EQ(Expanded(module, 1), R"(module @test {
  func.func public @main(%0: tensor<2x3xf32>, %1: tensor<2x3xf32>) -> (tensor<2x3xf32>) {
    %9 = stablehlo.multiply %0, %1 : tensor<2x3xf32>
    %5 = stablehlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %5 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f32>) -> tensor<2x3xf32>
    %11 = stablehlo.add %9, %10 : tensor<2x3xf32>
    %8 = stablehlo.negate %11 : tensor<2x3xf32>
    stablehlo.return %8 : tensor<2x3xf32>
  }
}
)");
}

TEST(ExpandMapsTest, ArgumentReturnedAndConvertedAndNoOperands) {
  // map(i) { convert(i) > 0.5 ? i : 2 } on s32, and a map without operands returning a constant.
  ModuleBuilder b;
  auto i = b.Param(DType::kS32, {4});
  ir::Region body = b.Region({Scalar(DType::kS32)}, [&](const std::vector<ir::ValueId>& args) {
    auto f = b.Op(OpCode::kConvert, {args[0]}, DType::kF32, {});
    auto half = b.Constant<float>(DType::kF32, {}, {0.5f});
    auto gt = b.Op(OpCode::kCompare, {f, half}, DType::kPred, {},
                   {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 3)}});
    auto two = b.Constant<int32_t>(DType::kS32, {}, {2});
    return std::vector<ir::ValueId>{b.Op(OpCode::kSelect, {gt, args[0], two}, DType::kS32, {})};
  });
  auto selected = Map(b, {i}, DType::kS32, {4}, std::move(body), {0});
  ir::Region constant = b.Region({}, [&](const std::vector<ir::ValueId>&) {
    return std::vector<ir::ValueId>{b.Constant<int32_t>(DType::kS32, {}, {7})};
  });
  auto sevens = Map(b, {}, DType::kS32, {4}, std::move(constant), {0});
  ir::Module module = b.Build({selected, sevens});
  EXPECT_EQ(Expanded(module, 2), R"(module @test {
  func.func public @main(%0: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
    %10 = stablehlo.convert %0 : (tensor<4xi32>) -> tensor<4xf32>
    %3 = stablehlo.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %3 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f32>) -> tensor<4xf32>
    %12 = stablehlo.compare %10, %11 {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %5 = stablehlo.constant {value = dense<2> : tensor<i32>} : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %5 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<i32>) -> tensor<4xi32>
    %14 = stablehlo.select %12, %0, %13 : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %8 = stablehlo.constant {value = dense<7> : tensor<i32>} : tensor<i32>
    %15 = stablehlo.broadcast_in_dim %8 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<i32>) -> tensor<4xi32>
    stablehlo.return %14, %15 : tensor<4xi32>
  }
}
)");
}

TEST(ExpandMapsTest, OtherBodiesRunPerElementInALoop) {
  // A body with an op that is not scalar elementwise code (here an optimization barrier) runs
  // once per element of the flattened operands.
  ModuleBuilder b;
  auto x = b.Param(DType::kF16, {2, 2});
  ir::Region body = b.Region({Scalar(DType::kF16)}, [&](const std::vector<ir::ValueId>& args) {
    auto kept = b.Op(OpCode::kOptimizationBarrier, {args[0]}, DType::kF16, {});
    return std::vector<ir::ValueId>{b.Op(OpCode::kAbs, {kept}, DType::kF16, {})};
  });
  ir::Module module = b.Build({Map(b, {x}, DType::kF16, {2, 2}, std::move(body), {0, 1})});
  EXPECT_EQ(Expanded(module, 1), R"(module @test {
  func.func public @main(%0: tensor<2x2xf16>) -> (tensor<2x2xf16>) {
    %5 = stablehlo.reshape %0 : (tensor<2x2xf16>) -> tensor<4xf16>
    %6 = stablehlo.constant {value = dense<0.0> : tensor<f16>} : tensor<f16>
    %7 = stablehlo.broadcast_in_dim %6 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f16>) -> tensor<4xf16>
    %8 = stablehlo.constant {value = dense<0> : tensor<i64>} : tensor<i64>
    %21, %22 = stablehlo.while %8, %7 ({
    ^bb0(%9: tensor<i64>, %10: tensor<4xf16>):
      %11 = stablehlo.constant {value = dense<4> : tensor<i64>} : tensor<i64>
      %12 = stablehlo.compare %9, %11 {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %12 : tensor<i1>
    }, {
    ^bb0(%13: tensor<i64>, %14: tensor<4xf16>):
      %15 = stablehlo.dynamic_slice %5, %13 {slice_sizes = dense<[1]> : tensor<1xi64>} : (tensor<4xf16>, tensor<i64>) -> tensor<1xf16>
      %16 = stablehlo.reshape %15 : (tensor<1xf16>) -> tensor<f16>
      %2 = stablehlo.optimization_barrier %16 : tensor<f16>
      %3 = stablehlo.abs %2 : tensor<f16>
      %17 = stablehlo.reshape %3 : (tensor<f16>) -> tensor<1xf16>
      %18 = stablehlo.dynamic_update_slice %14, %17, %13 : (tensor<4xf16>, tensor<1xf16>, tensor<i64>) -> tensor<4xf16>
      %19 = stablehlo.constant {value = dense<1> : tensor<i64>} : tensor<i64>
      %20 = stablehlo.add %13, %19 : tensor<i64>
      stablehlo.return %20, %18 : tensor<i64>, tensor<4xf16>
    }) : (tensor<i64>, tensor<4xf16>) -> (tensor<i64>, tensor<4xf16>)
    %23 = stablehlo.reshape %22 : (tensor<4xf16>) -> tensor<2x2xf16>
    stablehlo.return %23 : tensor<2x2xf16>
  }
}
)");
}

TEST(ExpandMapsTest, MalformedMapsAreRefusedByName) {
  auto build = [](std::vector<int64_t> dimensions, std::vector<ir::Type> arguments, DType returned, Dims other_dims) {
    ModuleBuilder b;
    auto a = b.Param(DType::kF32, {2, 3});
    auto c = b.Param(DType::kF32, std::move(other_dims));
    ir::Region body = b.Region(arguments, [&](const std::vector<ir::ValueId>& args) {
      return std::vector<ir::ValueId>{b.Op(OpCode::kConvert, {args[0]}, returned, {})};
    });
    return b.Build({Map(b, {a, c}, DType::kF32, {2, 3}, std::move(body), std::move(dimensions))});
  };
  const ir::Type f32 = Scalar(DType::kF32);
  ir::Module transposed = build({1, 0}, {f32, f32}, DType::kF32, {2, 3});
  const std::string transposed_error = Error(transposed);
  EXPECT_NE(transposed_error.find("stablehlo.map"), std::string::npos);
  EXPECT_NE(transposed_error.find("dimensions must be [0, ..., 1] (every dimension of the operands, in order), got [1,0]"),
            std::string::npos)
      << transposed_error;
  ir::Module one_argument = build({0, 1}, {f32}, DType::kF32, {2, 3});
  EXPECT_NE(Error(one_argument).find("stablehlo.map (unknown location): the body takes 1 arguments, expected 2"),
            std::string::npos);
  ir::Module wrong_argument = build({0, 1}, {f32, Scalar(DType::kS32)}, DType::kF32, {2, 3});
  EXPECT_NE(Error(wrong_argument).find("body argument 1 is tensor<i32>, expected tensor<f32>"), std::string::npos);
  ir::Module wrong_result = build({0, 1}, {f32, f32}, DType::kF64, {2, 3});
  EXPECT_NE(Error(wrong_result).find("the body returns tensor<f64>, expected tensor<f32>"), std::string::npos);
  ir::Module wrong_shape = build({0, 1}, {f32, f32}, DType::kF32, {3, 2});
  EXPECT_NE(Error(wrong_shape).find("operand 1 of type tensor<3x2xf32> does not have the result's shape"),
            std::string::npos);
}

}  // namespace
}  // namespace stablert::passes
