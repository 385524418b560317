// In-place updates in plans (plan/in_place.h, buffer_assignment.cc): which steps write over
// their operand, and the plan a stacking loop lowers to.
#include "plan/in_place.h"

#include <gtest/gtest.h>

#include "plan/lower.h"
#include "ir/test_module_builder.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

using testing::MustLower;

bool SameStorage(const ExecutionPlan& plan, ValueId a, ValueId b) {
  return plan.values[a].storage == plan.values[b].storage && plan.values[a].index == plan.values[b].index;
}

const Step* FindStep(const Sequence& sequence, std::string_view prefix) {
  for (const Step& step : sequence.steps) {
    if (step.kernel.rfind(prefix, 0) == 0) return &step;
    for (const Sequence& region : step.regions)
      if (const Step* found = FindStep(region, prefix)) return found;
  }
  return nullptr;
}

ir::ValueId LessThan(ModuleBuilder& b, ir::ValueId x, ir::ValueId y) {
  return b.Op(OpCode::kCompare, {x, y}, DType::kPred, {},
              {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
}

// for i in [0, 3): acc[i] = xs[i] * 2; a loop-invariant xs, a counter, a stacked output.
TEST(InPlaceTest, GoldenStackingLoop) {
  ModuleBuilder b;
  auto xs = b.Param(DType::kF32, {3, 2});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto three = b.Constant<int32_t>(DType::kS32, {}, {3});
  auto two = b.Op(OpCode::kBroadcastInDim, {b.Constant<float>(DType::kF32, {}, {2.0f})}, DType::kF32, {1, 2},
                  {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto acc = b.Op(OpCode::kBroadcastInDim, {b.Constant<float>(DType::kF32, {}, {0.0f})}, DType::kF32, {3, 2},
                  {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto loop = b.While(
      {zero, xs, acc}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], three); },
      [&](const std::vector<ir::ValueId>& c) {
        auto x = b.Op(OpCode::kDynamicSlice, {c[1], c[0], zero}, DType::kF32, {1, 2},
                      {{"slice_sizes", ModuleBuilder::IntList({1, 2})}});
        auto y = b.Op(OpCode::kMultiply, {x, two}, DType::kF32, {1, 2});
        auto updated = b.Op(OpCode::kDynamicUpdateSlice, {c[2], y, c[0], zero}, DType::kF32, {3, 2});
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}), c[1], updated};
      });
  ExecutionPlan plan = MustLower(b.Build({loop[2]}));
  // xs is read where it is (no copy); acc starts as the broadcast, written straight into the
  // result buffer; the body updates the counter and the result in place, without copies.
  EXPECT_EQ(PrintPlan(plan),
            "plan v1\n"
            "parameters: (f32[3,2])\n"
            "results: (f32[3,2])\n"
            "arena: 256 bytes\n"
            "values:\n"
            "  %0 f32[3,2] parameter 0\n"
            "  %1 i32[] constant 0 = {0}\n"
            "  %2 i32[] constant 1 = {1}\n"
            "  %3 i32[] constant 2 = {3}\n"
            "  %4 f32[] constant 3 = {2}\n"
            "  %5 f32[1,2] arena @0 (8 bytes)\n"
            "  %6 f32[] constant 4 = {0}\n"
            "  %7 f32[3,2] result 0\n"
            "  %8 i32[] arena @64 (4 bytes)\n"
            "  %9 f32[3,2] result 0\n"
            "  %10 i1[] arena @128 (1 bytes)\n"
            "  %11 f32[1,2] arena @192 (8 bytes)\n"
            "  %12 f32[1,2] arena @192 (8 bytes)\n"
            "  %13 f32[3,2] result 0\n"
            "  %14 i32[] arena @64 (4 bytes)\n"
            "steps:\n"
            "  broadcast_in_dim.f32 %4 -> %5 {dimensions=[]}  # stablehlo.broadcast_in_dim (unknown location)\n"
            "  broadcast_in_dim.f32 %6 -> %7 {dimensions=[]}  # stablehlo.broadcast_in_dim (unknown location)\n"
            "  copy.i32 %1 -> %8  # stablehlo.while (unknown location)\n"
            "  while %10 -> %8, %9  # stablehlo.while (unknown location)\n"
            "    region 0:\n"
            "      compare.i32 %8, %3 -> %10 {direction=5 type=3}  # stablehlo.compare (unknown location)\n"
            "    region 1:\n"
            "      dynamic_slice.f32 %0, %8, %1 -> %11  # stablehlo.dynamic_slice (unknown location)\n"
            "      multiply.f32 %11, %5 -> %12  # stablehlo.multiply (unknown location)\n"
            "      dynamic_update_slice.f32 %9, %12, %8, %1 -> %13  # stablehlo.dynamic_update_slice (unknown location)\n"
            "      add.i32 %8, %2 -> %14  # stablehlo.add (unknown location)\n"
            "return %9\n");
}

// y = dynamic_update_slice(x, u, i) where x dies at the update: y is x's storage.
TEST(InPlaceTest, DynamicUpdateSliceOverADyingOperand) {
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {1 << 20});
  auto u = b.Param(DType::kF32, {16});
  auto i = b.Param(DType::kS32, {});
  auto x = b.Op(OpCode::kAdd, {p, p}, DType::kF32, {1 << 20});
  auto y = b.Op(OpCode::kDynamicUpdateSlice, {x, u, i}, DType::kF32, {1 << 20});
  auto z = b.Op(OpCode::kNegate, {y}, DType::kF32, {1 << 20});
  ExecutionPlan plan = MustLower(b.Build({z}));
  const Step* update = FindStep(plan.body, "dynamic_update_slice.");
  ASSERT_NE(update, nullptr);
  EXPECT_TRUE(SameStorage(plan, update->inputs[0], update->outputs[0])) << PrintPlan(plan);
  // add, update and negate all run in the result buffer: no arena at all.
  EXPECT_EQ(plan.arena_size, 0) << PrintPlan(plan);
}

// Not in place: the operand is read after the update, or is a parameter.
TEST(InPlaceTest, OperandStillNeededOrAParameterIsNotOverwritten) {
  {
    ModuleBuilder b;
    auto p = b.Param(DType::kF32, {4096});
    auto u = b.Param(DType::kF32, {16});
    auto i = b.Param(DType::kS32, {});
    auto x = b.Op(OpCode::kAdd, {p, p}, DType::kF32, {4096});
    auto y = b.Op(OpCode::kDynamicUpdateSlice, {x, u, i}, DType::kF32, {4096});
    auto z = b.Op(OpCode::kAdd, {x, y}, DType::kF32, {4096});
    ExecutionPlan plan = MustLower(b.Build({z}));
    const Step* update = FindStep(plan.body, "dynamic_update_slice.");
    ASSERT_NE(update, nullptr);
    EXPECT_FALSE(SameStorage(plan, update->inputs[0], update->outputs[0])) << PrintPlan(plan);
  }
  {
    ModuleBuilder b;
    auto p = b.Param(DType::kF32, {4096});
    auto u = b.Param(DType::kF32, {16});
    auto i = b.Param(DType::kS32, {});
    auto y = b.Op(OpCode::kDynamicUpdateSlice, {p, u, i}, DType::kF32, {4096});
    ExecutionPlan plan = MustLower(b.Build({y}));
    const Step* update = FindStep(plan.body, "dynamic_update_slice.");
    ASSERT_NE(update, nullptr);
    EXPECT_EQ(plan.values[update->inputs[0]].storage, Storage::kParameter);
    EXPECT_EQ(plan.values[update->outputs[0]].storage, Storage::kResult);
  }
  {
    // The update is a view of the operand's storage: never in place.
    ModuleBuilder b;
    auto p = b.Param(DType::kF32, {64});
    auto i = b.Param(DType::kS32, {});
    auto x = b.Op(OpCode::kAdd, {p, p}, DType::kF32, {64});
    auto u = b.Op(OpCode::kReshape, {x}, DType::kF32, {64});
    auto y = b.Op(OpCode::kDynamicUpdateSlice, {x, u, i}, DType::kF32, {64});
    ExecutionPlan plan = MustLower(b.Build({y}));
    const Step* update = FindStep(plan.body, "dynamic_update_slice.");
    ASSERT_NE(update, nullptr);
    EXPECT_FALSE(SameStorage(plan, update->inputs[0], update->outputs[0])) << PrintPlan(plan);
  }
}

// Each branch of a case computes the result in the result's storage: no copies, no arena
// buffer for the branches' values. A branch returning its operand unchanged, and a branch
// returning one value as two results, keep the copies they need.
TEST(InPlaceTest, BranchesComputeTheirResultsInPlace) {
  constexpr int64_t kN = 1 << 16;
  {
    ModuleBuilder b;
    auto index = b.Param(DType::kS32, {});
    auto x = b.Param(DType::kF32, {kN});
    auto branch = [&](OpCode code) {
      return b.Region({}, [&, code](const std::vector<ir::ValueId>&) {
        auto y = b.Op(code, {x}, DType::kF32, {kN});
        return std::vector<ir::ValueId>{b.Op(OpCode::kMultiply, {y, y}, DType::kF32, {kN})};
      });
    };
    std::vector<ir::Region> regions;
    for (OpCode code : {OpCode::kSine, OpCode::kNegate, OpCode::kExponential}) regions.push_back(branch(code));
    auto r = b.Op(OpCode::kCase, {index}, DType::kF32, {kN}, {}, std::move(regions));
    ExecutionPlan plan = MustLower(b.Build({r}));
    EXPECT_EQ(testing::CountSteps(plan.body, "copy."), 0) << PrintPlan(plan);
    EXPECT_LT(plan.arena_size, kN * 4) << PrintPlan(plan);
  }
  {
    ModuleBuilder b;
    auto predicate = b.Param(DType::kPred, {});
    auto x = b.Param(DType::kF32, {kN});
    std::vector<ir::Region> regions;
    regions.push_back(b.Region({}, [&](const std::vector<ir::ValueId>&) {
      auto y = b.Op(OpCode::kNegate, {x}, DType::kF32, {kN});
      return std::vector<ir::ValueId>{y, y};
    }));
    regions.push_back(b.Region({}, [&](const std::vector<ir::ValueId>&) { return std::vector<ir::ValueId>{x, x}; }));
    auto r = b.OpN(OpCode::kIf, {predicate}, {ir::Type::Tensor(DType::kF32, {kN}), ir::Type::Tensor(DType::kF32, {kN})},
                   {}, std::move(regions));
    ExecutionPlan plan = MustLower(b.Build({r[0], r[1]}));
    // The first branch computes one result in place and copies it to the other; the second
    // copies the parameter to both.
    EXPECT_EQ(testing::CountSteps(plan.body, "copy."), 3) << PrintPlan(plan);
  }
}

TEST(InPlaceTest, ScatterOverADyingOperand) {
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {1000});
  auto idx = b.Param(DType::kS32, {50, 1});
  auto u = b.Param(DType::kF32, {50});
  auto x = b.Op(OpCode::kMultiply, {p, p}, DType::kF32, {1000});
  auto y = b.Op(OpCode::kScatter, {x, idx, u}, DType::kF32, {1000},
                {{"update_window_dims", ModuleBuilder::IntList({})},
                 {"inserted_window_dims", ModuleBuilder::IntList({0})},
                 {"scatter_dims_to_operand_dims", ModuleBuilder::IntList({0})},
                 {"index_vector_dim", ModuleBuilder::Int(1)}},
                {b.BinaryBody(OpCode::kAdd, DType::kF32)});
  auto z = b.Op(OpCode::kExponential, {y}, DType::kF32, {1000});
  ExecutionPlan plan = MustLower(b.Build({z, x}));
  // x is also a result: read at the end, so the scatter may not overwrite it.
  const Step* scatter = FindStep(plan.body, "scatter_add.");
  ASSERT_NE(scatter, nullptr);
  EXPECT_FALSE(SameStorage(plan, scatter->inputs[0], scatter->outputs[0])) << PrintPlan(plan);
  ExecutionPlan plan2 = MustLower([&] {
    ModuleBuilder c;
    auto p2 = c.Param(DType::kF32, {1000});
    auto idx2 = c.Param(DType::kS32, {50, 1});
    auto u2 = c.Param(DType::kF32, {50});
    auto x2 = c.Op(OpCode::kMultiply, {p2, p2}, DType::kF32, {1000});
    auto y2 = c.Op(OpCode::kScatter, {x2, idx2, u2}, DType::kF32, {1000},
                   {{"update_window_dims", ModuleBuilder::IntList({})},
                    {"inserted_window_dims", ModuleBuilder::IntList({0})},
                    {"scatter_dims_to_operand_dims", ModuleBuilder::IntList({0})},
                    {"index_vector_dim", ModuleBuilder::Int(1)}},
                   {c.BinaryBody(OpCode::kAdd, DType::kF32)});
    return c.Build({y2});
  }());
  const Step* scatter2 = FindStep(plan2.body, "scatter_add.");
  ASSERT_NE(scatter2, nullptr);
  EXPECT_TRUE(SameStorage(plan2, scatter2->inputs[0], scatter2->outputs[0])) << PrintPlan(plan2);
}

// Kernels that do not allow it never run in place, even on a dying input.
TEST(InPlaceTest, OnlyKernelsThatAllowItShareStorage) {
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {8, 8});
  auto x = b.Op(OpCode::kAdd, {p, p}, DType::kF32, {8, 8});
  auto t = b.Op(OpCode::kTranspose, {x}, DType::kF32, {8, 8}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  ExecutionPlan plan = MustLower(b.Build({t}));
  const Step* transpose = FindStep(plan.body, "transpose.");
  ASSERT_NE(transpose, nullptr) << PrintPlan(plan);
  EXPECT_FALSE(SameStorage(plan, transpose->inputs[0], transpose->outputs[0])) << PrintPlan(plan);
  std::vector<ValueId> roots(plan.values.size());
  for (ValueId v = 0; v < roots.size(); ++v) roots[v] = v;
  EXPECT_FALSE(MayShareWithOutput(plan, roots, *transpose, 0));
}

}  // namespace
}  // namespace stablert::plan
