// FoldEpiloguesIntoDots: a product's bias, relu, scaling and residual ops become its
// "dot_epilogue.f32" step (golden plans); what does not fit stays separate steps.
#include "plan/fold_dot_epilogue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/test_module_builder.h"
#include "kernels/compare_params.h"
#include "kernels/dot_params.h"
#include "plan/lower.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;
using kernels::EpilogueOp;
using testing::CountSteps;
using testing::FindStep;
using testing::MustLower;

std::vector<int64_t> Ops(std::initializer_list<EpilogueOp> ops) {
  std::vector<int64_t> codes;
  for (EpilogueOp op : ops) codes.push_back(static_cast<int64_t>(op));
  return codes;
}

ir::ValueId Broadcast(ModuleBuilder& b, ir::ValueId x, Dims out, std::vector<int64_t> dims) {
  return b.Op(OpCode::kBroadcastInDim, {x}, DType::kF32, std::move(out),
              {{"broadcast_dimensions", ModuleBuilder::IntList(std::move(dims))}});
}

ir::ValueId Scalar(ModuleBuilder& b, float value, Dims out) {
  auto c = b.Constant<float>(DType::kF32, {}, {value});
  return Broadcast(b, c, std::move(out), {});
}

ir::ValueId Compare(ModuleBuilder& b, ir::ValueId x, ir::ValueId y, int direction, Dims dims) {
  return b.Op(OpCode::kCompare, {x, y}, DType::kPred, std::move(dims),
              {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, direction)}});
}

constexpr int kGe = 2, kGt = 3;

// relu(x @ w + b), as an MLP layer: one step, reading x, w and b where they lie.
TEST(FoldDotEpilogueTest, BiasAndReluAreOneStep) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {256, 512});
  auto w = b.Param(DType::kF32, {512, 1024});
  auto bias = b.Param(DType::kF32, {1024});
  auto xw = b.Op(OpCode::kDot, {x, w}, DType::kF32, {256, 1024});
  auto z = b.Op(OpCode::kAdd, {xw, Broadcast(b, bias, {256, 1024}, {1})}, DType::kF32, {256, 1024});
  auto h = b.Op(OpCode::kMaximum, {z, Scalar(b, 0.0f, {256, 1024})}, DType::kF32, {256, 1024});
  ExecutionPlan plan = MustLower(b.Build({h}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& dot = plan.body.steps[0];
  EXPECT_EQ(dot.kernel, "dot_epilogue.f32");
  EXPECT_EQ(dot.params, kernels::KernelParams(kernels::DotEpilogueParams{
                            .dot = {}, .ops = Ops({EpilogueOp::kAdd, EpilogueOp::kRelu})}));
  ASSERT_EQ(dot.inputs.size(), 3u);
  EXPECT_EQ(plan.values[dot.inputs[2]].storage, Storage::kParameter);
  EXPECT_EQ(plan.values[dot.inputs[2]].index, 2);
  EXPECT_EQ(plan.values[dot.outputs[0]].storage, Storage::kResult);
}

// A bias broadcast from [1, N] (JAX's form) and a row of several trailing dims fold too.
TEST(FoldDotEpilogueTest, RowsOfTrailingDims) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4, 8, 64});
  auto w = b.Param(DType::kF32, {64, 6, 5});
  auto bias = b.Param(DType::kF32, {1, 6, 5});
  auto xw = b.OpN(OpCode::kDotGeneral, {x, w}, {ir::Type::Tensor(DType::kF32, {4, 8, 6, 5})},
                  {{"lhs_contracting_dimensions", ModuleBuilder::IntList({2})},
                   {"rhs_contracting_dimensions", ModuleBuilder::IntList({0})}})[0];
  auto z = b.Op(OpCode::kAdd, {Broadcast(b, bias, {4, 8, 6, 5}, {1, 2, 3}), xw}, DType::kF32, {4, 8, 6, 5});
  ExecutionPlan plan = MustLower(b.Build({z}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].kernel, "dot_epilogue.f32");
}

// JAX's relu gradient compares the pre-activation with zero: the compare reads the relu's
// output (max(z, 0) > 0 == z > 0), and the relu still folds.
TEST(FoldDotEpilogueTest, ReluMaskReadsTheReluOutput) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {64, 128});
  auto w = b.Param(DType::kF32, {128, 256});
  auto bias = b.Param(DType::kF32, {256});
  auto xw = b.Op(OpCode::kDot, {x, w}, DType::kF32, {64, 256});
  auto z = b.Op(OpCode::kAdd, {xw, Broadcast(b, bias, {64, 256}, {1})}, DType::kF32, {64, 256});
  auto zero = Scalar(b, 0.0f, {64, 256});
  auto h = b.Op(OpCode::kMaximum, {z, zero}, DType::kF32, {64, 256});
  auto mask = Compare(b, z, zero, kGt, {64, 256});
  ExecutionPlan plan = MustLower(b.Build({h, mask}));
  const Step* dot = FindStep(plan, "dot_epilogue.f32");
  ASSERT_NE(dot, nullptr) << PrintPlan(plan);
  EXPECT_EQ(dot->params, kernels::KernelParams(kernels::DotEpilogueParams{
                             .dot = {}, .ops = Ops({EpilogueOp::kAdd, EpilogueOp::kRelu})}));
  EXPECT_EQ(CountSteps(plan.body, "maximum"), 0) << PrintPlan(plan);
  EXPECT_EQ(CountSteps(plan.body, "add"), 0) << PrintPlan(plan);
  const Step* compare = FindStep(plan, "compare");
  ASSERT_NE(compare, nullptr) << PrintPlan(plan);
  EXPECT_EQ(plan.values[compare->inputs[0]].storage, plan.values[dot->outputs[0]].storage);
  EXPECT_EQ(plan.values[compare->inputs[0]].index, plan.values[dot->outputs[0]].index);
}

// Attention scores (q . k^T / sqrt(d)), a scale, a bias and a residual in one chain.
TEST(FoldDotEpilogueTest, ScalesBiasesAndResiduals) {
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {128, 64});
  auto w = b.Param(DType::kF32, {64, 256});
  auto bias = b.Param(DType::kF32, {256});
  auto residual = b.Param(DType::kF32, {128, 256});
  auto p = b.Op(OpCode::kDot, {a, w}, DType::kF32, {128, 256});
  auto scaled = b.Op(OpCode::kDivide, {p, Scalar(b, 8.0f, {128, 256})}, DType::kF32, {128, 256});
  auto twice = b.Op(OpCode::kMultiply, {Scalar(b, 2.0f, {128, 256}), scaled}, DType::kF32, {128, 256});
  auto biased = b.Op(OpCode::kAdd, {twice, Broadcast(b, bias, {128, 256}, {1})}, DType::kF32, {128, 256});
  auto out = b.Op(OpCode::kAdd, {residual, biased}, DType::kF32, {128, 256});
  // The residual is read by a later step too (the result `residual * 1`), so it folds.
  auto kept = b.Op(OpCode::kMultiply, {residual, Scalar(b, 1.0f, {128, 256})}, DType::kF32, {128, 256});
  ExecutionPlan plan = MustLower(b.Build({out, kept}));
  ASSERT_GE(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& dot = plan.body.steps[0];
  EXPECT_EQ(dot.params,
            kernels::KernelParams(kernels::DotEpilogueParams{
                .dot = {}, .ops = Ops({EpilogueOp::kDivide, EpilogueOp::kMultiply, EpilogueOp::kAdd, EpilogueOp::kAdd})}))
      << PrintPlan(plan);
  ASSERT_EQ(dot.inputs.size(), 6u);
  EXPECT_EQ(plan.values[dot.inputs[2]].storage, Storage::kConstant);  // 8, read as a scalar
  EXPECT_EQ(plan.values[dot.inputs[2]].type.dims, Dims{});
  EXPECT_EQ(plan.values[dot.inputs[4]].index, 2);  // the bias
  EXPECT_EQ(plan.values[dot.inputs[5]].index, 3);  // the residual
}

// A residual last read by its add stays with the add, which writes over it in place.
TEST(FoldDotEpilogueTest, ResidualLastReadByItsAddStaysInPlace) {
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {128, 64});
  auto w = b.Param(DType::kF32, {64, 256});
  auto residual = b.Param(DType::kF32, {128, 256});
  auto p = b.Op(OpCode::kDot, {a, w}, DType::kF32, {128, 256});
  auto scaled = b.Op(OpCode::kMultiply, {p, Scalar(b, 0.5f, {128, 256})}, DType::kF32, {128, 256});
  auto out = b.Op(OpCode::kAdd, {residual, scaled}, DType::kF32, {128, 256});
  ExecutionPlan plan = MustLower(b.Build({out}));
  ASSERT_EQ(plan.body.steps.size(), 2u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].params,
            kernels::KernelParams(kernels::DotEpilogueParams{.dot = {}, .ops = Ops({EpilogueOp::kMultiply})}));
  EXPECT_EQ(plan.body.steps[1].kernel, "add.f32");
}

// A gradient step's update p - lr * (x^T . g): the scaling folds into the product, the
// subtraction stays a step of its own, so that a donated p is updated where it lies.
TEST(FoldDotEpilogueTest, ParameterUpdateKeepsItsSubtraction) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {256, 512});
  auto g = b.Param(DType::kF32, {256, 1024});
  auto p = b.Param(DType::kF32, {512, 1024});
  auto grad = b.OpN(OpCode::kDotGeneral, {x, g}, {ir::Type::Tensor(DType::kF32, {512, 1024})},
                    {{"lhs_contracting_dimensions", ModuleBuilder::IntList({0})},
                     {"rhs_contracting_dimensions", ModuleBuilder::IntList({0})}})[0];
  auto step = b.Op(OpCode::kMultiply, {Scalar(b, 1e-3f, {512, 1024}), grad}, DType::kF32, {512, 1024});
  auto updated = b.Op(OpCode::kSubtract, {p, step}, DType::kF32, {512, 1024});
  ExecutionPlan plan = MustLower(b.Build({updated}));
  ASSERT_EQ(plan.body.steps.size(), 2u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].params,
            kernels::KernelParams(kernels::DotEpilogueParams{.dot = {.lhs_is_bkm = true},
                                                             .ops = Ops({EpilogueOp::kMultiply})}));
  EXPECT_EQ(plan.body.steps[1].kernel, "subtract.f32");
}

// Stay separate steps: a product read twice, a maximum with a non-zero constant, a
// compare other than > 0 next to a relu, the product as divisor, a bias along the columns
// (broadcast over the product's last dim), and f64 products.
TEST(FoldDotEpilogueTest, OtherFormsStay) {
  auto lower = [](auto&& build) {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {32, 48});
    auto w = b.Param(DType::kF32, {48, 40});
    auto p = b.Op(OpCode::kDot, {x, w}, DType::kF32, {32, 40});
    return MustLower(b.Build(build(b, p)));
  };
  ExecutionPlan read_twice = lower([](ModuleBuilder& b, ir::ValueId p) {
    auto r = b.Op(OpCode::kMaximum, {p, Scalar(b, 0.0f, {32, 40})}, DType::kF32, {32, 40});
    return std::vector<ir::ValueId>{r, p};
  });
  EXPECT_EQ(CountSteps(read_twice.body, "dot_epilogue"), 0) << PrintPlan(read_twice);
  ExecutionPlan nonzero = lower([](ModuleBuilder& b, ir::ValueId p) {
    return std::vector<ir::ValueId>{b.Op(OpCode::kMaximum, {p, Scalar(b, 1.0f, {32, 40})}, DType::kF32, {32, 40})};
  });
  EXPECT_EQ(CountSteps(nonzero.body, "dot_epilogue"), 0) << PrintPlan(nonzero);
  ExecutionPlan ge = lower([](ModuleBuilder& b, ir::ValueId p) {
    auto zero = Scalar(b, 0.0f, {32, 40});
    auto r = b.Op(OpCode::kMaximum, {p, zero}, DType::kF32, {32, 40});
    return std::vector<ir::ValueId>{r, Compare(b, p, zero, kGe, {32, 40})};
  });
  EXPECT_EQ(CountSteps(ge.body, "dot_epilogue"), 0) << PrintPlan(ge);
  ExecutionPlan divisor = lower([](ModuleBuilder& b, ir::ValueId p) {
    return std::vector<ir::ValueId>{b.Op(OpCode::kDivide, {Scalar(b, 1.0f, {32, 40}), p}, DType::kF32, {32, 40})};
  });
  EXPECT_EQ(CountSteps(divisor.body, "dot_epilogue"), 0) << PrintPlan(divisor);
  ExecutionPlan column = lower([](ModuleBuilder& b, ir::ValueId p) {
    auto c = b.Constant<float>(DType::kF32, {32}, std::vector<float>(32, 1.5f));
    return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {p, Broadcast(b, c, {32, 40}, {0})}, DType::kF32, {32, 40})};
  });
  EXPECT_EQ(CountSteps(column.body, "dot_epilogue"), 0) << PrintPlan(column);
  ModuleBuilder b;
  auto x = b.Param(DType::kF64, {32, 48});
  auto w = b.Param(DType::kF64, {48, 40});
  auto p = b.Op(OpCode::kDot, {x, w}, DType::kF64, {32, 40});
  auto c = b.Constant<double>(DType::kF64, {}, {0.0});
  auto zero = b.Op(OpCode::kBroadcastInDim, {c}, DType::kF64, {32, 40},
                   {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  ExecutionPlan f64 = MustLower(b.Build({b.Op(OpCode::kMaximum, {p, zero}, DType::kF64, {32, 40})}));
  EXPECT_EQ(CountSteps(f64.body, "dot_epilogue"), 0) << PrintPlan(f64);
}

// Inside a loop body, as everywhere.
TEST(FoldDotEpilogueTest, FoldsInsideLoopBodies) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {16, 64});
  auto w = b.Param(DType::kF32, {64, 64});
  auto bias = b.Param(DType::kF32, {64});
  auto zero_i = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto three = b.Constant<int32_t>(DType::kS32, {}, {3});
  auto outs = b.While(
      {zero_i, x},
      [&](const std::vector<ir::ValueId>& c) {
        return b.Op(OpCode::kCompare, {c[0], three}, DType::kPred, {},
                    {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
      },
      [&](const std::vector<ir::ValueId>& c) {
        auto p = b.Op(OpCode::kDot, {c[1], w}, DType::kF32, {16, 64});
        auto z = b.Op(OpCode::kAdd, {p, Broadcast(b, bias, {16, 64}, {1})}, DType::kF32, {16, 64});
        auto h = b.Op(OpCode::kMaximum, {z, Scalar(b, 0.0f, {16, 64})}, DType::kF32, {16, 64});
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}), h};
      });
  ExecutionPlan plan = MustLower(b.Build({outs[1]}));
  EXPECT_EQ(CountSteps(plan.body, "dot_epilogue.f32"), 1) << PrintPlan(plan);
  EXPECT_EQ(CountSteps(plan.body, "maximum"), 0) << PrintPlan(plan);
  EXPECT_EQ(CountSteps(plan.body, "add.f32"), 0) << PrintPlan(plan);
}

}  // namespace
}  // namespace stablert::plan
