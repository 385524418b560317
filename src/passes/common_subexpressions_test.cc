#include "passes/common_subexpressions.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

const ir::Type kF32x4 = ir::Type::Tensor(DType::kF32, {4});

ir::Attribute Direction(int64_t value) {
  return ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, value);
}

TEST(CommonSubexpressionsTest, IdenticalPureOpsMergeOthersStay) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto y = b.Param(DType::kF32, {4});
  auto add1 = b.Op(OpCode::kAdd, {x, y}, DType::kF32, {4});
  auto add2 = b.Op(OpCode::kAdd, {x, y}, DType::kF32, {4});   // merges with add1
  auto add3 = b.Op(OpCode::kAdd, {y, x}, DType::kF32, {4});   // other operand order: stays
  auto mul1 = b.Op(OpCode::kMultiply, {add1, add2}, DType::kF32, {4});
  auto mul2 = b.Op(OpCode::kMultiply, {add2, add1}, DType::kF32, {4});  // after add2 -> add1: merges
  auto lt = b.Op(OpCode::kCompare, {x, y}, DType::kPred, {4}, {{"comparison_direction", Direction(5)}});
  auto gt = b.Op(OpCode::kCompare, {x, y}, DType::kPred, {4}, {{"comparison_direction", Direction(3)}});
  auto c1 = b.Constant<float>(DType::kF32, {4}, {1, 2, 3, 4});
  auto c2 = b.Constant<float>(DType::kF32, {4}, {1, 2, 3, 4});  // same bytes: merges
  auto c3 = b.Constant<float>(DType::kF32, {4}, {1, 2, 3, 5});
  auto call1 = b.OpN(OpCode::kCustomCall, {x}, {kF32x4}, {{"call_target_name", ir::Attribute(std::string("f"))}});
  auto call2 = b.OpN(OpCode::kCustomCall, {x}, {kF32x4}, {{"call_target_name", ir::Attribute(std::string("f"))}});
  ir::Module module = b.Build({mul1, mul2, add3, lt, gt, c1, c2, c3, call1[0], call2[0]});
  EXPECT_EQ(EliminateCommonSubexpressions(module), 3);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<4xf32>, %1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %2 = stablehlo.add %0, %1 : tensor<4xf32>
    %4 = stablehlo.add %1, %0 : tensor<4xf32>
    %5 = stablehlo.multiply %2, %2 : tensor<4xf32>
    %7 = stablehlo.compare %0, %1 {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %8 = stablehlo.compare %0, %1 {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %9 = stablehlo.constant {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : tensor<4xf32>
    %11 = stablehlo.constant {value = dense<[1.0, 2.0, 3.0, 5.0]> : tensor<4xf32>} : tensor<4xf32>
    %12 = stablehlo.custom_call %0 {call_target_name = "f"} : tensor<4xf32>
    %13 = stablehlo.custom_call %0 {call_target_name = "f"} : tensor<4xf32>
    stablehlo.return %5, %5, %4, %7, %8, %9, %9, %11, %12, %13 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
)");
}

TEST(CommonSubexpressionsTest, RegionsSeeEnclosingOpsButNotEachOther) {
  ModuleBuilder b;
  auto p = b.Param(DType::kPred, {});
  auto x = b.Param(DType::kF32, {4});
  auto outer = b.Op(OpCode::kExponential, {x}, DType::kF32, {4});
  std::vector<ir::Region> branches;
  for (int i = 0; i < 2; ++i)
    branches.push_back(b.Region({}, [&](std::vector<ir::ValueId>) {
      auto same_as_outer = b.Op(OpCode::kExponential, {x}, DType::kF32, {4});  // merges with `outer`
      auto only_here = b.Op(OpCode::kLog, {x}, DType::kF32, {4});  // in both branches: both stay
      return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {same_as_outer, only_here}, DType::kF32, {4})};
    }));
  auto result = b.OpN(OpCode::kIf, {p}, {kF32x4}, {}, std::move(branches));
  ir::Module module = b.Build({result[0], outer});
  EXPECT_EQ(EliminateCommonSubexpressions(module), 2);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<i1>, %1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %2 = stablehlo.exponential %1 : tensor<4xf32>
    %9 = stablehlo.if %0 ({
      %4 = stablehlo.log %1 : tensor<4xf32>
      %5 = stablehlo.add %2, %4 : tensor<4xf32>
      stablehlo.return %5 : tensor<4xf32>
    }, {
      %7 = stablehlo.log %1 : tensor<4xf32>
      %8 = stablehlo.add %2, %7 : tensor<4xf32>
      stablehlo.return %8 : tensor<4xf32>
    }) : (tensor<i1>) -> tensor<4xf32>
    stablehlo.return %9, %2 : tensor<4xf32>
  }
}
)");
}

TEST(CommonSubexpressionsTest, IsolatedRegionsNeverReadEnclosingValues) {
  // A reduce body computing with a constant equal to one outside keeps its own constant.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto outer_zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  ir::Region body = b.Region({ir::Type::Tensor(DType::kF32, {}), ir::Type::Tensor(DType::kF32, {})},
                             [&](std::vector<ir::ValueId> args) {
                               auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
                               auto sum = b.Op(OpCode::kAdd, {args[0], args[1]}, DType::kF32, {});
                               return std::vector<ir::ValueId>{b.Op(OpCode::kMaximum, {sum, zero}, DType::kF32, {})};
                             });
  std::vector<ir::Region> regions;
  regions.push_back(std::move(body));
  auto reduced = b.OpN(OpCode::kReduce, {x, outer_zero}, {ir::Type::Tensor(DType::kF32, {})},
                       {{"dimensions", ModuleBuilder::IntList({0})}}, std::move(regions));
  ir::Module module = b.Build({reduced[0]});
  EXPECT_EQ(EliminateCommonSubexpressions(module), 0);
  const ir::Block& reduce_body = module.functions[0].body.blocks[0].ops[1].regions[0].blocks[0];
  EXPECT_EQ(reduce_body.ops[0].code, OpCode::kConstant);
}

TEST(CommonSubexpressionsTest, ReducesWithEqualBodiesMerge) {
  // jnp.mean and jnp.var of one array both sum it: the two reduces merge; a reduce with
  // another body, another operand or other dimensions stays.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {3, 4});
  auto y = b.Param(DType::kF32, {3, 4});
  auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  auto reduce = [&](ir::ValueId v, OpCode body, int64_t dim) {
    std::vector<ir::Region> regions;
    regions.push_back(b.BinaryBody(body, DType::kF32));
    return b.Op(OpCode::kReduce, {v, zero}, DType::kF32, {dim == 1 ? 3 : 4},
                {{"dimensions", ModuleBuilder::IntList({dim})}}, std::move(regions));
  };
  auto sum = reduce(x, OpCode::kAdd, 1);
  auto same_sum = reduce(x, OpCode::kAdd, 1);   // merges into `sum`
  auto max = reduce(x, OpCode::kMaximum, 1);    // another body
  auto other = reduce(y, OpCode::kAdd, 1);      // another operand
  auto columns = reduce(x, OpCode::kAdd, 0);    // other dimensions
  auto both = b.Op(OpCode::kAdd, {sum, same_sum}, DType::kF32, {3});
  ir::Module module = b.Build({both, max, other, columns});
  EXPECT_EQ(EliminateCommonSubexpressions(module), 1);
  const ir::Operation& add = module.functions[0].body.blocks[0].ops[5];  // after zero and four reduces
  ASSERT_EQ(add.code, OpCode::kAdd);
  EXPECT_EQ(add.operands[0], add.operands[1]);
}

TEST(CommonSubexpressionsTest, SiblingRegionsStaySeparateWhileTheTableGrows) {
  // Enough ops per branch that the table rehashes while a branch is open; leaving the
  // branch must still drop exactly its entries.
  ModuleBuilder b;
  auto p = b.Param(DType::kPred, {});
  auto x = b.Param(DType::kF32, {4});
  std::vector<ir::Region> branches;
  for (int i = 0; i < 2; ++i)
    branches.push_back(b.Region({}, [&](std::vector<ir::ValueId>) {
      ir::ValueId v = x;
      for (int k = 0; k < 200; ++k) v = b.Op(OpCode::kSine, {v}, DType::kF32, {4});
      return std::vector<ir::ValueId>{v};
    }));
  auto result = b.OpN(OpCode::kIf, {p}, {kF32x4}, {}, std::move(branches));
  ir::Module module = b.Build({result[0]});
  EXPECT_EQ(EliminateCommonSubexpressions(module), 0);
  const ir::Operation& if_op = module.functions[0].body.blocks[0].ops[0];
  EXPECT_EQ(if_op.regions[0].blocks[0].ops.size(), 201u);
  EXPECT_EQ(if_op.regions[1].blocks[0].ops.size(), 201u);
}

}  // namespace
}  // namespace stablert::passes
