// FoldTransposesIntoDots (a product's transposed result computed by the product, operands
// swapped; transposed operands read in place), FoldAddsIntoDots (an add of a product accumulated by the product), and
// broadcasts/transposes that only insert or move unit dims lowering to
// aliases instead of copies.
#include <gtest/gtest.h>

#include <string>

#include "ir/test_module_builder.h"
#include "kernels/dot_params.h"
#include "plan/lower.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;
using testing::CountSteps;
using testing::FindStep;
using testing::MustLower;

// g^T . x with g [K=16, M=512], x [K=16, N=128]: lhs stored [K,M], rhs [K,N].
ir::ValueId WeightGradient(ModuleBuilder& b, ir::ValueId g, ir::ValueId x, Dims out) {
  return b.OpN(OpCode::kDotGeneral, {g, x}, {ir::Type::Tensor(DType::kF32, std::move(out))},
               {{"lhs_contracting_dimensions", ModuleBuilder::IntList({0})},
                {"rhs_contracting_dimensions", ModuleBuilder::IntList({0})}})[0];
}

ir::ValueId Transpose(ModuleBuilder& b, ir::ValueId x, Dims dims, std::vector<int64_t> permutation) {
  return b.Op(OpCode::kTranspose, {x}, DType::kF32, std::move(dims),
              {{"permutation", ModuleBuilder::IntList(std::move(permutation))}});
}

// JAX's weight gradient of `x @ w`: transpose(g^T . x). The product computes x^T . g.
TEST(FoldDotTransposeTest, TransposedWeightGradientIsOneProduct) {
  ModuleBuilder b;
  auto g = b.Param(DType::kF32, {16, 512});
  auto x = b.Param(DType::kF32, {16, 128});
  auto gx = WeightGradient(b, g, x, {512, 128});
  auto t = Transpose(b, gx, {128, 512}, {1, 0});
  ExecutionPlan plan = MustLower(b.Build({t}));
  EXPECT_EQ(CountSteps(plan.body, "transpose"), 0) << PrintPlan(plan);
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& dot = plan.body.steps[0];
  EXPECT_EQ(dot.kernel, "dot.f32");
  // lhs: x stored [K=16, M=128]; rhs: g stored [K=16, N=512].
  EXPECT_EQ(dot.params, kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = true, .rhs_is_bnk = false}));
  EXPECT_EQ(plan.values[dot.inputs[0]].type.dims, (Dims{1, 16, 128}));
  EXPECT_EQ(plan.values[dot.inputs[1]].type.dims, (Dims{1, 16, 512}));
  EXPECT_EQ(plan.values[dot.outputs[0]].type.dims, (Dims{1, 128, 512}));
  EXPECT_EQ(plan.values[dot.outputs[0]].storage, Storage::kResult) << PrintPlan(plan);
}

// a . b^T transposed, a [M,K], b [N,K] (rhs stored [N,K]): b . a^T, lhs [M',K], rhs [K,N'].
TEST(FoldDotTransposeTest, SwapsBothLayoutFlags) {
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {8, 32});
  auto c = b.Param(DType::kF32, {24, 32});
  auto y = b.OpN(OpCode::kDotGeneral, {a, c}, {ir::Type::Tensor(DType::kF32, {8, 24})},
                 {{"lhs_contracting_dimensions", ModuleBuilder::IntList({1})},
                  {"rhs_contracting_dimensions", ModuleBuilder::IntList({1})}})[0];
  auto t = Transpose(b, y, {24, 8}, {1, 0});
  ExecutionPlan plan = MustLower(b.Build({t}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& dot = plan.body.steps[0];
  EXPECT_EQ(dot.params, kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = false, .rhs_is_bnk = true}));
  EXPECT_EQ(plan.values[dot.inputs[0]].type.dims, (Dims{1, 24, 32}));
  EXPECT_EQ(plan.values[dot.inputs[1]].type.dims, (Dims{1, 8, 32}));
}

// Batched: [B,M,N] -> [B,N,M] folds; a permutation moving the batch dim does not.
TEST(FoldDotTransposeTest, BatchedSwapFoldsOtherPermutationsStay) {
  auto build = [](std::vector<int64_t> permutation, Dims out) {
    ModuleBuilder b;
    auto l = b.Param(DType::kF32, {4, 8, 16});
    auto r = b.Param(DType::kF32, {4, 16, 6});
    auto y = b.OpN(OpCode::kDotGeneral, {l, r}, {ir::Type::Tensor(DType::kF32, {4, 8, 6})},
                   {{"lhs_batching_dimensions", ModuleBuilder::IntList({0})},
                    {"rhs_batching_dimensions", ModuleBuilder::IntList({0})},
                    {"lhs_contracting_dimensions", ModuleBuilder::IntList({2})},
                    {"rhs_contracting_dimensions", ModuleBuilder::IntList({1})}})[0];
    auto t = Transpose(b, y, std::move(out), std::move(permutation));
    return MustLower(b.Build({t}));
  };
  ExecutionPlan swapped = build({0, 2, 1}, {4, 6, 8});
  EXPECT_EQ(CountSteps(swapped.body, "transpose"), 0) << PrintPlan(swapped);
  ASSERT_NE(FindStep(swapped, "dot."), nullptr);
  EXPECT_EQ(FindStep(swapped, "dot.")->params,
            kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = true, .rhs_is_bnk = true}));
  ExecutionPlan moved = build({1, 0, 2}, {8, 4, 6});
  EXPECT_EQ(CountSteps(moved.body, "transpose"), 1) << PrintPlan(moved);
}

// A product also read untransposed keeps its transpose (the product must exist as is).
TEST(FoldDotTransposeTest, ProductReadElsewhereKeepsTranspose) {
  ModuleBuilder b;
  auto g = b.Param(DType::kF32, {16, 64});
  auto x = b.Param(DType::kF32, {16, 32});
  auto gx = WeightGradient(b, g, x, {64, 32});
  auto t = Transpose(b, gx, {32, 64}, {1, 0});
  ExecutionPlan plan = MustLower(b.Build({t, gx}));
  EXPECT_EQ(CountSteps(plan.body, "transpose"), 1) << PrintPlan(plan);
  EXPECT_EQ(FindStep(plan, "dot.")->params, kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = true}));
}

// The same inside a loop body (JAX's backward scan accumulating a weight gradient).
TEST(FoldDotTransposeTest, FoldsInsideLoopBodies) {
  ModuleBuilder b;
  auto g = b.Param(DType::kF32, {16, 64});
  auto x = b.Param(DType::kF32, {16, 32});
  auto acc = b.Param(DType::kF32, {32, 64});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto three = b.Constant<int32_t>(DType::kS32, {}, {3});
  auto outs = b.While(
      {zero, acc},
      [&](const std::vector<ir::ValueId>& c) {
        return b.Op(OpCode::kCompare, {c[0], three}, DType::kPred, {},
                    {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
      },
      [&](const std::vector<ir::ValueId>& c) {
        auto gx = WeightGradient(b, g, x, {64, 32});
        auto t = Transpose(b, gx, {32, 64}, {1, 0});
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}),
                                        b.Op(OpCode::kAdd, {c[1], t}, DType::kF32, {32, 64})};
      });
  ExecutionPlan plan = MustLower(b.Build({outs[1]}));
  EXPECT_EQ(CountSteps(plan.body, "transpose"), 0) << PrintPlan(plan);
  EXPECT_EQ(CountSteps(plan.body, "dot."), 1) << PrintPlan(plan);
  // The accumulation is the product's: it adds into the carried buffer where it lies (no
  // add, no copy in the body).
  EXPECT_EQ(CountSteps(plan.body, "add.f32"), 0) << PrintPlan(plan);
  const Step* dot = nullptr;
  for (const Step& step : plan.body.steps)
    for (const Sequence& region : step.regions) {
      EXPECT_EQ(CountSteps(region, "copy.f32"), 0) << PrintPlan(plan);
      for (const Step& inner : region.steps)
        if (inner.kernel == "dot.f32") dot = &inner;
    }
  ASSERT_NE(dot, nullptr);
  ASSERT_EQ(dot->inputs.size(), 3u);
  const Value& addend = plan.values[dot->inputs[2]];
  const Value& out = plan.values[dot->outputs[0]];
  EXPECT_EQ(addend.storage, out.storage);
  EXPECT_EQ(addend.index, out.index);
}

// acc + a . b: one accumulating product step; the add is gone.
TEST(FoldDotAddTest, AddOfAProductAccumulates) {
  ModuleBuilder b;
  auto acc = b.Param(DType::kF32, {16, 512});
  auto a = b.Param(DType::kF32, {16, 128});
  auto w = b.Param(DType::kF32, {128, 512});
  auto p = b.Op(OpCode::kDot, {a, w}, DType::kF32, {16, 512});
  auto sum = b.Op(OpCode::kAdd, {acc, p}, DType::kF32, {16, 512});
  ExecutionPlan plan = MustLower(b.Build({sum}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& dot = plan.body.steps[0];
  EXPECT_EQ(dot.kernel, "dot.f32");
  ASSERT_EQ(dot.inputs.size(), 3u);
  EXPECT_EQ(dot.inputs[2], 0u);  // the addend: parameter 0, read where it lies
  EXPECT_EQ(plan.values[dot.outputs[0]].storage, Storage::kResult);
}

// Left as they are: a product read elsewhere, an f64 product; a broadcast addend (a bias)
// is not accumulated (that would materialize it) but becomes the product's epilogue
// (fold_dot_epilogue.cc), reading the bias itself.
TEST(FoldDotAddTest, OtherFormsStay) {
  {
    ModuleBuilder b;
    auto acc = b.Param(DType::kF32, {8, 8});
    auto a = b.Param(DType::kF32, {8, 8});
    auto p = b.Op(OpCode::kDot, {a, a}, DType::kF32, {8, 8});
    auto sum = b.Op(OpCode::kAdd, {acc, p}, DType::kF32, {8, 8});
    ExecutionPlan plan = MustLower(b.Build({sum, p}));
    EXPECT_EQ(CountSteps(plan.body, "add.f32"), 1) << PrintPlan(plan);
  }
  {
    ModuleBuilder b;
    auto acc = b.Param(DType::kF64, {8, 8});
    auto a = b.Param(DType::kF64, {8, 8});
    auto p = b.Op(OpCode::kDot, {a, a}, DType::kF64, {8, 8});
    auto sum = b.Op(OpCode::kAdd, {acc, p}, DType::kF64, {8, 8});
    ExecutionPlan plan = MustLower(b.Build({sum}));
    EXPECT_EQ(CountSteps(plan.body, "add.f64"), 1) << PrintPlan(plan);
  }
  {
    ModuleBuilder b;
    auto bias = b.Param(DType::kF32, {8});
    auto a = b.Param(DType::kF32, {8, 8});
    auto p = b.Op(OpCode::kDot, {a, a}, DType::kF32, {8, 8});
    auto wide = b.Op(OpCode::kBroadcastInDim, {bias}, DType::kF32, {8, 8},
                     {{"broadcast_dimensions", ModuleBuilder::IntList({1})}});
    auto sum = b.Op(OpCode::kAdd, {p, wide}, DType::kF32, {8, 8});
    ExecutionPlan plan = MustLower(b.Build({sum}));
    EXPECT_EQ(CountSteps(plan.body, "add.f32"), 0) << PrintPlan(plan);
    EXPECT_EQ(CountSteps(plan.body, "broadcast_in_dim"), 0) << PrintPlan(plan);
    const Step* dot = FindStep(plan, "dot_epilogue.f32");
    ASSERT_NE(dot, nullptr) << PrintPlan(plan);
    ASSERT_EQ(dot->inputs.size(), 3u);
    EXPECT_EQ(dot->inputs[2], 0u);  // the bias, parameter 0
  }
}

// Broadcasts inserting unit dims and transposes moving unit dims are the same bytes: no step.
TEST(FoldDotTransposeTest, UnitDimBroadcastsAndTransposesAreAliases) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {16, 128});
  auto x3 = b.Op(OpCode::kBroadcastInDim, {x}, DType::kF32, {1, 16, 128},
                 {{"broadcast_dimensions", ModuleBuilder::IntList({1, 2})}});
  auto moved = Transpose(b, x3, {16, 1, 128}, {1, 0, 2});
  auto sum = b.Op(OpCode::kAdd, {moved, moved}, DType::kF32, {16, 1, 128});
  ExecutionPlan plan = MustLower(b.Build({sum}));
  EXPECT_EQ(CountSteps(plan.body, "broadcast_in_dim"), 0) << PrintPlan(plan);
  EXPECT_EQ(CountSteps(plan.body, "transpose"), 0) << PrintPlan(plan);
  // A real broadcast and a transpose of non-unit dims stay steps.
  ModuleBuilder b2;
  auto y = b2.Param(DType::kF32, {16, 128});
  auto wide = b2.Op(OpCode::kBroadcastInDim, {y}, DType::kF32, {2, 16, 128},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({1, 2})}});
  auto flipped = Transpose(b2, y, {128, 16}, {1, 0});
  ExecutionPlan plan2 = MustLower(b2.Build({wide, flipped}));
  EXPECT_EQ(CountSteps(plan2.body, "broadcast_in_dim"), 1) << PrintPlan(plan2);
  EXPECT_EQ(CountSteps(plan2.body, "transpose"), 1) << PrintPlan(plan2);
}

// x @ w.T and w.T @ x (JAX emits the transpose as its own op): the dot reads w where it
// lies, the operand's layout flag flipped; no transpose step, no copy of w.
TEST(FoldDotTransposeTest, TransposedOperandsAreReadInPlace) {
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {1, 512});
    auto w = b.Param(DType::kF32, {256, 512});
    auto wt = Transpose(b, w, {512, 256}, {1, 0});
    auto y = b.Op(OpCode::kDot, {x, wt}, DType::kF32, {1, 256});
    ExecutionPlan plan = MustLower(b.Build({y}));
    EXPECT_EQ(CountSteps(plan.body, "transpose"), 0) << PrintPlan(plan);
    ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
    const Step& dot = plan.body.steps[0];
    EXPECT_EQ(dot.params, kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = false, .rhs_is_bnk = true}));
    EXPECT_EQ(plan.values[dot.inputs[1]].type.dims, (Dims{1, 256, 512}));
    EXPECT_EQ(plan.values[dot.inputs[1]].storage, Storage::kParameter);
    EXPECT_EQ(plan.values[dot.inputs[1]].index, 1);
  }
  {
    ModuleBuilder b;
    auto w = b.Param(DType::kF32, {512, 256});
    auto x = b.Param(DType::kF32, {512, 3});
    auto wt = Transpose(b, w, {256, 512}, {1, 0});
    auto y = b.Op(OpCode::kDot, {wt, x}, DType::kF32, {256, 3});
    ExecutionPlan plan = MustLower(b.Build({y}));
    ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
    const Step& dot = plan.body.steps[0];
    EXPECT_EQ(dot.params, kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = true, .rhs_is_bnk = false}));
    EXPECT_EQ(plan.values[dot.inputs[0]].type.dims, (Dims{1, 512, 256}));
  }
}

// Batched operands transposed in their last two dims fold too; other permutations, small
// rhs (kept [K,N] for libxsmm), f64 and operands read elsewhere keep the transpose.
TEST(FoldDotTransposeTest, OnlySwapsOfTheLastTwoDimsOfLargeOrLhsOperandsFold) {
  auto batched = [](std::vector<int64_t> permutation, Dims rhs_dims) {
    ModuleBuilder b;
    auto l = b.Param(DType::kF32, {4, 8, 64});
    auto r = b.Param(DType::kF32, std::move(rhs_dims));
    auto rt = Transpose(b, r, {4, 64, 300}, std::move(permutation));
    auto y = b.OpN(OpCode::kDotGeneral, {l, rt}, {ir::Type::Tensor(DType::kF32, {4, 8, 300})},
                   {{"lhs_batching_dimensions", ModuleBuilder::IntList({0})},
                    {"rhs_batching_dimensions", ModuleBuilder::IntList({0})},
                    {"lhs_contracting_dimensions", ModuleBuilder::IntList({2})},
                    {"rhs_contracting_dimensions", ModuleBuilder::IntList({1})}})[0];
    return MustLower(b.Build({y}));
  };
  ExecutionPlan swapped = batched({0, 2, 1}, {4, 300, 64});
  EXPECT_EQ(CountSteps(swapped.body, "transpose"), 0) << PrintPlan(swapped);
  EXPECT_EQ(FindStep(swapped, "dot.")->params, kernels::KernelParams(kernels::DotParams{.rhs_is_bnk = true}));
  ExecutionPlan moved = batched({1, 2, 0}, {300, 4, 64});
  EXPECT_EQ(CountSteps(moved.body, "transpose"), 1) << PrintPlan(moved);
  auto plain = [](DType dtype, Dims w_dims, bool read_elsewhere) {
    ModuleBuilder b;
    auto x = b.Param(dtype, {2, w_dims[1]});
    auto w = b.Param(dtype, w_dims);
    auto wt = b.Op(OpCode::kTranspose, {w}, dtype, {w_dims[1], w_dims[0]},
                   {{"permutation", ModuleBuilder::IntList({1, 0})}});
    auto y = b.Op(OpCode::kDot, {x, wt}, dtype, {2, w_dims[0]});
    std::vector<ir::ValueId> results = {y};
    if (read_elsewhere) results.push_back(wt);
    return MustLower(b.Build(results));
  };
  ExecutionPlan small = plain(DType::kF32, {64, 32}, false);
  EXPECT_EQ(CountSteps(small.body, "transpose"), 1) << PrintPlan(small);
  ExecutionPlan large = plain(DType::kF32, {512, 256}, false);
  EXPECT_EQ(CountSteps(large.body, "transpose"), 0) << PrintPlan(large);
  ExecutionPlan f64 = plain(DType::kF64, {512, 256}, false);
  EXPECT_EQ(CountSteps(f64.body, "transpose"), 1) << PrintPlan(f64);
  ExecutionPlan shared = plain(DType::kF32, {512, 256}, true);
  EXPECT_EQ(CountSteps(shared.body, "transpose"), 1) << PrintPlan(shared);
}

}  // namespace
}  // namespace stablert::plan
