// stablehlo.map through the pass pipeline (passes/expand_maps.h) into a plan: an elementwise
// body becomes one fused elementwise step, any other body a loop over the elements.
#include <gtest/gtest.h>

#include "ir/test_module_builder.h"
#include "passes/pipeline.h"
#include "plan/lower.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;
using testing::CountSteps;
using testing::MustLower;

ir::Type Scalar(DType dtype) { return ir::Type::Tensor(dtype, {}); }

ir::ValueId Map(ModuleBuilder& b, std::vector<ir::ValueId> operands, DType dtype, Dims dims, ir::Region body) {
  std::vector<ir::Region> regions;
  regions.push_back(std::move(body));
  std::vector<int64_t> dimensions;
  for (size_t d = 0; d < dims.size(); ++d) dimensions.push_back(static_cast<int64_t>(d));
  return b.Op(OpCode::kMap, std::move(operands), dtype, std::move(dims),
              {{"dimensions", ModuleBuilder::IntList(dimensions)}}, std::move(regions));
}

int CountWhiles(const Sequence& sequence) {
  int n = 0;
  for (const Step& step : sequence.steps) {
    if (step.kind == StepKind::kWhile) ++n;
    for (const Sequence& region : step.regions) n += CountWhiles(region);
  }
  return n;
}

ExecutionPlan Compiled(ir::Module module) {
  auto records = passes::RunPipeline(module);
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  return MustLower(module);
}

TEST(LowerMapTest, ElementwiseBodyFusesIntoOneStep) {
  // map(a, b) { exp(x) * y + 2 } on f32[64, 64]: one fused step, no loop.
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {64, 64});
  auto c = b.Param(DType::kF32, {64, 64});
  ir::Region body = b.Region({Scalar(DType::kF32), Scalar(DType::kF32)}, [&](const std::vector<ir::ValueId>& args) {
    auto e = b.Op(OpCode::kExponential, {args[0]}, DType::kF32, {});
    auto product = b.Op(OpCode::kMultiply, {e, args[1]}, DType::kF32, {});
    auto two = b.Constant<float>(DType::kF32, {}, {2.0f});
    return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {product, two}, DType::kF32, {})};
  });
  ExecutionPlan plan = Compiled(b.Build({Map(b, {a, c}, DType::kF32, {64, 64}, std::move(body))}));
  EXPECT_EQ(CountWhiles(plan.body), 0);
  EXPECT_EQ(plan.body.steps.size(), 1u);
  ASSERT_FALSE(plan.body.steps.empty());
  EXPECT_EQ(plan.body.steps[0].kernel, "fused");
}

TEST(LowerMapTest, NarrowTypesComputeInTheirCarrier) {
  // map(a) { a * a } on f8E5M2: the product runs in f16 and rounds back, as any f8 multiply.
  ModuleBuilder b;
  auto a = b.Param(DType::kF8E5M2, {8});
  ir::Region body = b.Region({Scalar(DType::kF8E5M2)}, [&](const std::vector<ir::ValueId>& args) {
    return std::vector<ir::ValueId>{b.Op(OpCode::kMultiply, {args[0], args[0]}, DType::kF8E5M2, {})};
  });
  ExecutionPlan plan = Compiled(b.Build({Map(b, {a}, DType::kF8E5M2, {8}, std::move(body))}));
  EXPECT_EQ(CountWhiles(plan.body), 0);
  EXPECT_NE(PrintPlan(plan).find("convert.f8E5M2.f16"), std::string::npos) << PrintPlan(plan);
}

TEST(LowerMapTest, BodyWithControlFlowLoopsOverTheElements) {
  // A body holding a while loop (x doubled until above 100) cannot be inlined: one loop over
  // the 6 elements, the body's own loop inside it.
  ModuleBuilder b;
  auto a = b.Param(DType::kS32, {2, 3});
  ir::Region body = b.Region({Scalar(DType::kS32)}, [&](const std::vector<ir::ValueId>& args) {
    auto hundred = b.Constant<int32_t>(DType::kS32, {}, {100});
    auto result = b.While(
        {args[0]},
        [&](const std::vector<ir::ValueId>& v) {
          return b.Op(OpCode::kCompare, {v[0], hundred}, DType::kPred, {},
                      {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
        },
        [&](const std::vector<ir::ValueId>& v) {
          return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {v[0], v[0]}, DType::kS32, {})};
        });
    return std::vector<ir::ValueId>{result[0]};
  });
  ExecutionPlan plan = Compiled(b.Build({Map(b, {a}, DType::kS32, {2, 3}, std::move(body))}));
  EXPECT_EQ(CountWhiles(plan.body), 2);
  EXPECT_EQ(CountSteps(plan.body, "dynamic_update_slice"), 1);
}

}  // namespace
}  // namespace stablert::plan
