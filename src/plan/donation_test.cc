#include "plan/donation.h"

#include <gtest/gtest.h>

#include "plan/lower.h"
#include "ir/test_module_builder.h"
#include "kernels/fused_params.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

using testing::MustLower;

TEST(DonationTest, AnElementwiseUpdateIsWrittenIntoItsParameter) {
  // p - 0.1 * g: the subtraction reads p element by element as it writes the result.
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {1024});
  auto g = b.Param(DType::kF32, {1024});
  auto lr = b.Constant<float>(DType::kF32, {}, {0.1f});
  auto lrb = b.Op(OpCode::kBroadcastInDim, {lr}, DType::kF32, {1024}, {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto step = b.Op(OpCode::kMultiply, {lrb, g}, DType::kF32, {1024});
  auto updated = b.Op(OpCode::kSubtract, {p, step}, DType::kF32, {1024});
  ir::Module module = b.Build({updated});
  // Donated parameters (as JAX marks them): the result keeps storage of its own, written by
  // the subtraction only (buffer assignment merges no earlier temporary into it).
  for (auto& attrs : module.functions[0].argument_attrs) attrs = {{"jax.buffer_donor", ir::Attribute(true)}};
  ExecutionPlan plan = MustLower(module);
  EXPECT_TRUE(ResultMayOverwriteParameter(plan, 0, 0)) << PrintPlan(plan);
  EXPECT_EQ(PlanDonation(plan, {true, false}), std::vector<int64_t>({0}));
  EXPECT_EQ(PlanDonation(plan, {false, false}), std::vector<int64_t>({kNoDonor}));
  // g is read by the multiplication before the subtraction writes: it may back the result too.
  EXPECT_EQ(PlanDonation(plan, {false, true}), std::vector<int64_t>({1}));
}

TEST(DonationTest, AFusedStepWritesOverAParameterOnlyAfterItsLastRead) {
  // (p + g, p * g) run as one fused step, sum then product, tile by tile: the product may
  // take p's memory (nothing reads p after it), the sum may not (the product reads p later).
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {4096});
  auto g = b.Param(DType::kF32, {4096});
  auto sum = b.Op(OpCode::kAdd, {p, g}, DType::kF32, {4096});
  auto product = b.Op(OpCode::kMultiply, {p, g}, DType::kF32, {4096});
  ir::Module module = b.Build({sum, product});
  for (auto& attrs : module.functions[0].argument_attrs) attrs = {{"jax.buffer_donor", ir::Attribute(true)}};
  ExecutionPlan plan = MustLower(module);
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  ASSERT_NE(plan.body.steps[0].params.As<kernels::FusedParams>(), nullptr) << PrintPlan(plan);
  EXPECT_FALSE(ResultMayOverwriteParameter(plan, 0, 0));
  EXPECT_TRUE(ResultMayOverwriteParameter(plan, 1, 0));
  EXPECT_EQ(PlanDonation(plan, {true, false}), std::vector<int64_t>({kNoDonor, 0}));
}

TEST(DonationTest, ATransposeOrReverseOfTheParameterIsNotWrittenInPlace) {
  // The transpose itself writes the result.
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {64, 64});
  auto t = b.Op(OpCode::kTranspose, {p}, DType::kF32, {64, 64}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  ExecutionPlan plan = MustLower(b.Build({t}));
  EXPECT_FALSE(ResultMayOverwriteParameter(plan, 0, 0)) << PrintPlan(plan);
  EXPECT_EQ(PlanDonation(plan, {true}), std::vector<int64_t>({kNoDonor}));

  // p + transpose(p) with the transpose read as a view of p (plan/fold_views.cc): the
  // addition reads p out of order as it writes.
  ExecutionPlan view_plan;
  const TensorType square{DType::kF32, {64, 64}};
  view_plan.parameter_types = {square};
  view_plan.result_types = {square};
  view_plan.values = {Value{square, Storage::kParameter, 0, ByteSize(square), {}},
                      Value{square, Storage::kParameter, 0, ByteSize(square), {1, 64}},
                      Value{square, Storage::kResult, 0, ByteSize(square), {}}};
  Step add;
  add.kernel = "add.f32";
  add.inputs = {0, 1};
  add.outputs = {2};
  view_plan.body.steps.push_back(add);
  view_plan.results = {2};
  EXPECT_FALSE(ResultMayOverwriteParameter(view_plan, 0, 0));
  view_plan.values[1].strides.clear();  // p + p: in place
  EXPECT_TRUE(ResultMayOverwriteParameter(view_plan, 0, 0));

  ModuleBuilder r;
  auto q = r.Param(DType::kF32, {4096});
  auto reversed = r.Op(OpCode::kReverse, {q}, DType::kF32, {4096}, {{"dimensions", ModuleBuilder::IntList({0})}});
  ExecutionPlan reverse_plan = MustLower(r.Build({reversed}));
  EXPECT_FALSE(ResultMayOverwriteParameter(reverse_plan, 0, 0)) << PrintPlan(reverse_plan);
  // Without the safety check (results written after the plan ran) any same-size pair is taken.
  EXPECT_EQ(PlanDonation(reverse_plan, {true}, /*check_safety=*/false), std::vector<int64_t>({0}));
}

TEST(DonationTest, AResultWrittenBeforeTheParameterIsLastReadTakesAnother) {
  // (p * 2, p + 1): the product is written while the sum still has to read p, so only the
  // sum (the last reader) may take p's storage.
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {256});
  auto two = b.Constant<float>(DType::kF32, {256}, std::vector<float>(256, 2.0f));
  auto one = b.Constant<float>(DType::kF32, {256}, std::vector<float>(256, 1.0f));
  auto product = b.Op(OpCode::kMultiply, {p, two}, DType::kF32, {256});
  auto sum = b.Op(OpCode::kAdd, {p, one}, DType::kF32, {256});
  ExecutionPlan plan = MustLower(b.Build({product, sum}));
  EXPECT_FALSE(ResultMayOverwriteParameter(plan, 0, 0)) << PrintPlan(plan);
  EXPECT_TRUE(ResultMayOverwriteParameter(plan, 1, 0));
  EXPECT_EQ(PlanDonation(plan, {true}), std::vector<int64_t>({kNoDonor, 0}));
}

TEST(DonationTest, ReturnedParametersAndSizes) {
  // (p, p * 2 reshaped, q): p returned unchanged may keep its storage; a reshaped result of
  // the same bytes may take another parameter's; the second copy of q may not.
  ModuleBuilder b;
  auto p = b.Param(DType::kF32, {8});
  auto q = b.Param(DType::kF32, {4, 2});
  auto doubled = b.Op(OpCode::kAdd, {q, q}, DType::kF32, {4, 2});
  auto flat = b.Op(OpCode::kReshape, {doubled}, DType::kF32, {8});
  ExecutionPlan plan = MustLower(b.Build({p, flat}));
  EXPECT_TRUE(ResultMayOverwriteParameter(plan, 0, 0)) << PrintPlan(plan);
  EXPECT_EQ(PlanDonation(plan, {true, true}), std::vector<int64_t>({0, 1}));

  ModuleBuilder twice;
  auto x = twice.Param(DType::kF32, {8});
  ExecutionPlan both = MustLower(twice.Build({x, x}));
  EXPECT_FALSE(ResultMayOverwriteParameter(both, 0, 0));
  EXPECT_EQ(PlanDonation(both, {true}), std::vector<int64_t>({kNoDonor, kNoDonor}));

  ModuleBuilder sizes;
  auto small = sizes.Param(DType::kF32, {4});
  auto wide = sizes.Op(OpCode::kConcatenate, {small, small}, DType::kF32, {8}, {{"dimension", ModuleBuilder::Int(0)}});
  ExecutionPlan mismatch = MustLower(sizes.Build({wide}));
  EXPECT_EQ(PlanDonation(mismatch, {true}), std::vector<int64_t>({kNoDonor}));
}

TEST(DonationTest, LeavesOfATreeKeepTheirOwnStorage) {
  // (a, b) -> (a * 3, b * 3), all of one type: result k takes parameter k.
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {16});
  auto c = b.Param(DType::kF32, {16});
  auto three = b.Constant<float>(DType::kF32, {16}, std::vector<float>(16, 3.0f));
  auto x = b.Op(OpCode::kMultiply, {a, three}, DType::kF32, {16});
  auto y = b.Op(OpCode::kMultiply, {c, three}, DType::kF32, {16});
  ExecutionPlan plan = MustLower(b.Build({x, y}));
  EXPECT_EQ(PlanDonation(plan, {true, true}), std::vector<int64_t>({0, 1}));
}

// A plan built by hand: a loop reads p in its body; a result written before the loop may
// not take p (the next iteration reads p again), one written after it may.
TEST(DonationTest, ReadsInsideALoopLastUntilTheLoopEnds) {
  ExecutionPlan plan;
  const TensorType f32{DType::kF32, {4}};
  const TensorType pred{DType::kPred, {}};
  plan.parameter_types = {f32};
  plan.result_types = {f32, f32};
  auto add_value = [&](TensorType type, Storage storage, int64_t index) {
    plan.values.push_back(Value{type, storage, index, ByteSize(type), {}});
    return static_cast<ValueId>(plan.values.size() - 1);
  };
  ValueId p = add_value(f32, Storage::kParameter, 0);
  ValueId before = add_value(f32, Storage::kResult, 0);
  ValueId condition = add_value(pred, Storage::kArena, 0);
  ValueId scratch = add_value(f32, Storage::kArena, 64);
  ValueId after = add_value(f32, Storage::kResult, 1);
  auto kernel = [](std::string key, std::vector<ValueId> in, std::vector<ValueId> out) {
    Step step;
    step.kernel = std::move(key);
    step.inputs = std::move(in);
    step.outputs = std::move(out);
    return step;
  };
  plan.body.steps.push_back(kernel("negate.f32", {p}, {before}));
  Step loop;
  loop.kind = StepKind::kWhile;
  loop.inputs = {condition};
  loop.regions.resize(2);
  loop.regions[0].steps.push_back(kernel("is_finite.f32", {p}, {condition}));
  loop.regions[1].steps.push_back(kernel("add.f32", {p, p}, {scratch}));
  plan.body.steps.push_back(std::move(loop));
  plan.body.steps.push_back(kernel("add.f32", {p, scratch}, {after}));
  plan.results = {before, after};
  EXPECT_FALSE(ResultMayOverwriteParameter(plan, 0, 0));
  EXPECT_TRUE(ResultMayOverwriteParameter(plan, 1, 0));
  EXPECT_EQ(PlanDonation(plan, {true}), std::vector<int64_t>({kNoDonor, 0}));
}

}  // namespace
}  // namespace stablert::plan
