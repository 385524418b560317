// FoldViewsIntoReaders: broadcasts and transposes read in place by kernels taking strided
// views, and the cases left materialized.
#include <gtest/gtest.h>

#include <string>

#include "plan/lower.h"
#include "ir/test_module_builder.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

using testing::CountSteps;
using testing::MustLower;

const Step& OnlyStep(const ExecutionPlan& plan, std::string_view prefix) {
  for (const Step& step : plan.body.steps)
    if (step.kernel.substr(0, prefix.size()) == prefix) return step;
  ADD_FAILURE() << "no " << prefix << " step";
  return plan.body.steps.front();
}

ir::ValueId Broadcast(ModuleBuilder& b, ir::ValueId x, Dims dims, std::vector<int64_t> map) {
  return b.Op(OpCode::kBroadcastInDim, {x}, DType::kF32, std::move(dims),
              {{"broadcast_dimensions", ModuleBuilder::IntList(std::move(map))}});
}

// The sum of a [4, 8] over its last dim.
ir::ValueId Sum(ModuleBuilder& b, ir::ValueId x, ir::ValueId zero) {
  std::vector<ir::Region> body;
  body.push_back(b.BinaryBody(OpCode::kAdd, DType::kF32));
  return b.OpN(OpCode::kReduce, {x, zero}, {ir::Type::Tensor(DType::kF32, {4})},
               {{"dimensions", ModuleBuilder::IntList({1})}}, std::move(body))[0];
}

// x - broadcast(broadcast(m)): softmax's shape. Both broadcasts fold, composed into one view.
TEST(FoldViewsTest, BroadcastChainIntoSubtractIsOneView) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4, 8, 16});
  auto m = b.Param(DType::kF32, {4, 8});
  auto m1 = Broadcast(b, m, {4, 8, 1}, {0, 1});
  auto mb = Broadcast(b, m1, {4, 8, 16}, {0, 1, 2});
  auto d = b.Op(OpCode::kSubtract, {x, mb}, DType::kF32, {4, 8, 16});
  ExecutionPlan plan = MustLower(b.Build({d}));
  EXPECT_EQ(CountSteps(plan.body, "broadcast_in_dim"), 0) << PrintPlan(plan);
  const Step& sub = OnlyStep(plan, "subtract");
  const Value& view = plan.values[sub.inputs[1]];
  EXPECT_EQ(view.strides, (std::vector<int64_t>{8, 1, 0}));
  EXPECT_EQ(view.storage, Storage::kParameter);
  EXPECT_EQ(view.index, 1);
  EXPECT_EQ(view.byte_size, 32 * 4);
  EXPECT_EQ(plan.arena_size, 0);
}

// A broadcast read outside a loop and, through a broadcast folded inside the loop body, in
// it: the body's view reads the outer broadcast's storage, so that one stays materialized.
TEST(FoldViewsTest, ValuesViewedInsideALoopBodyStayMaterialized) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {1});
  auto row = Broadcast(b, x, {1, 3}, {0});  // not only unit dims inserted: a real broadcast
  auto outer_sum = b.Op(OpCode::kAdd, {row, row}, DType::kF32, {1, 3});
  const ir::Type square = ir::Type::Tensor(DType::kF32, {3, 3}), counter = ir::Type::Tensor(DType::kS32, {});
  auto init = Broadcast(b, x, {3, 3}, {1});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  std::vector<ir::Region> regions;
  regions.push_back(b.Region({counter, square}, [&](std::vector<ir::ValueId> args) {
    return std::vector<ir::ValueId>{b.Op(OpCode::kCompare, {args[0], args[0]}, DType::kPred, {},
                                         {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 1)}})};
  }));
  regions.push_back(b.Region({counter, square}, [&](std::vector<ir::ValueId> args) {
    auto rows = Broadcast(b, row, {3, 3}, {0, 1});
    return std::vector<ir::ValueId>{args[0], b.Op(OpCode::kAdd, {args[1], rows}, DType::kF32, {3, 3})};
  }));
  auto loop = b.OpN(OpCode::kWhile, {zero, init}, {counter, square}, {}, std::move(regions));
  ExecutionPlan plan = MustLower(b.Build({loop[1], outer_sum}));
  // The loop body's broadcast folded into its add; the outer one stays a step.
  int outer_broadcasts = 0;
  for (const Step& step : plan.body.steps)
    if (step.kernel.starts_with("broadcast_in_dim") && plan.values[step.inputs[0]].type.dims == Dims{1} &&
        plan.values[step.outputs[0]].type.dims == Dims{1, 3})
      ++outer_broadcasts;
  EXPECT_EQ(outer_broadcasts, 1) << PrintPlan(plan);
}

// A transpose that keeps the last dim last reads whole rows: folded. One that moves it
// would gather an element per cache line: the blocked transpose kernel stays.
TEST(FoldViewsTest, TransposesFoldOnlyWhenRowsStayContiguous) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {3, 5, 4});
  auto y = b.Param(DType::kF32, {5, 3, 4});
  auto rows = b.Op(OpCode::kTranspose, {y}, DType::kF32, {3, 5, 4}, {{"permutation", ModuleBuilder::IntList({1, 0, 2})}});
  auto s = b.Op(OpCode::kAdd, {x, rows}, DType::kF32, {3, 5, 4});
  auto z = b.Param(DType::kF32, {4, 5, 3});
  auto moved = b.Op(OpCode::kTranspose, {z}, DType::kF32, {3, 5, 4}, {{"permutation", ModuleBuilder::IntList({2, 1, 0})}});
  auto m = b.Op(OpCode::kMultiply, {s, moved}, DType::kF32, {3, 5, 4});
  ExecutionPlan plan = MustLower(b.Build({m}));
  EXPECT_EQ(CountSteps(plan.body, "transpose"), 1) << PrintPlan(plan);
  EXPECT_EQ(plan.values[OnlyStep(plan, "add").inputs[1]].strides, (std::vector<int64_t>{4, 12, 1}));
  EXPECT_TRUE(plan.values[OnlyStep(plan, "multiply").inputs[1]].strides.empty());
}

// A broadcast read by a kernel that needs dense inputs (a reduction), one returned as a
// result, and a transpose read by a product stay materialized.
TEST(FoldViewsTest, DenseReadersAndResultsKeepTheirCopies) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {8});
  auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  auto xb = Broadcast(b, x, {4, 8}, {1});
  auto sum = Sum(b, xb, zero);
  auto result = Broadcast(b, x, {2, 8}, {1});
  ExecutionPlan plan = MustLower(b.Build({sum, result}));
  EXPECT_EQ(CountSteps(plan.body, "broadcast_in_dim"), 2) << PrintPlan(plan);
  for (const Value& value : plan.values) EXPECT_TRUE(value.strides.empty());
}

// A broadcast feeding both a view-taking kernel and a dense one stays materialized.
TEST(FoldViewsTest, MixedReadersKeepTheCopy) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {8});
  auto y = b.Param(DType::kF32, {4, 8});
  auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  auto xb = Broadcast(b, x, {4, 8}, {1});
  auto s = b.Op(OpCode::kMultiply, {xb, y}, DType::kF32, {4, 8});
  auto r = Sum(b, xb, zero);
  ExecutionPlan plan = MustLower(b.Build({s, r}));
  EXPECT_EQ(CountSteps(plan.body, "broadcast_in_dim"), 1) << PrintPlan(plan);
}

}  // namespace
}  // namespace stablert::plan
