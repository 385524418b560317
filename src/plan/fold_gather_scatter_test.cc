// The index arithmetic JAX emits around gathers and scatters folds into the step
// (fold_gather_scatter.cc) and its producers are dropped (dead_steps.cc); it stays when
// another op reads the intermediate values. Programs are built as JAX emits them
// (jnp.take, x[i], x.at[i].add, uint32 indices).
#include <gtest/gtest.h>

#include <limits>

#include "plan/lower.h"
#include "kernels/gather_scatter_params.h"
#include "ir/test_module_builder.h"
#include "kernels/fused_params.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

constexpr int64_t kLt = 5, kGe = 2, kLe = 4, kSigned = 3;

using testing::MustLower;

ir::ValueId Splat(ModuleBuilder& b, DType dtype, Dims dims, int32_t value) {
  auto c = b.Constant<int32_t>(dtype, {}, {value});
  return b.Op(OpCode::kBroadcastInDim, {c}, dtype, std::move(dims), {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
}

ir::ValueId Compare(ModuleBuilder& b, ir::ValueId x, ir::ValueId y, int64_t direction, Dims dims) {
  return b.Op(OpCode::kCompare, {x, y}, DType::kPred, std::move(dims),
              {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, direction)},
               {"compare_type", ModuleBuilder::Enum(ir::EnumKind::kComparisonType, kSigned)}});
}

// select(i < 0, i + n, i), then broadcast [N] -> [N,1] (JAX's _normalize_index and
// the index vector dim).
ir::ValueId NormalizedIndices(ModuleBuilder& b, ir::ValueId i, int64_t count, int32_t n, ir::ValueId* normalized) {
  auto negative = Compare(b, i, Splat(b, DType::kS32, {count}, 0), kLt, {count});
  auto wrapped = b.Op(OpCode::kAdd, {i, Splat(b, DType::kS32, {count}, n)}, DType::kS32, {count});
  *normalized = b.Op(OpCode::kSelect, {negative, wrapped, i}, DType::kS32, {count});
  return b.Op(OpCode::kBroadcastInDim, {*normalized}, DType::kS32, {count, 1},
              {{"broadcast_dimensions", ModuleBuilder::IntList({0})}});
}

ir::ValueId Gather(ModuleBuilder& b, ir::ValueId x, ir::ValueId idx, int64_t count) {
  return b.Op(OpCode::kGather, {x, idx}, DType::kF32, {count},
              {{"offset_dims", ModuleBuilder::IntList({})},
               {"collapsed_slice_dims", ModuleBuilder::IntList({0})},
               {"start_index_map", ModuleBuilder::IntList({0})},
               {"index_vector_dim", ModuleBuilder::Int(1)},
               {"slice_sizes", ModuleBuilder::IntList({1})}});
}

// jnp.take(x, i) (mode="fill", fill value NaN): the normalization, the gather and the mask.
ir::Module Take(bool also_return_normalized, bool also_return_mask) {
  ModuleBuilder b;
  const int64_t n = 8, count = 6;
  auto x = b.Param(DType::kF32, {n});
  auto i = b.Param(DType::kS32, {count});
  ir::ValueId normalized;
  auto idx = NormalizedIndices(b, i, count, n, &normalized);
  auto ge = Compare(b, idx, Splat(b, DType::kS32, {count, 1}, 0), kGe, {count, 1});
  auto bound = b.Constant<int32_t>(DType::kS32, {1}, {n - 1});
  auto bound11 = b.Op(OpCode::kBroadcastInDim, {bound}, DType::kS32, {1, 1},
                      {{"broadcast_dimensions", ModuleBuilder::IntList({1})}});
  auto bound_n1 = b.Op(OpCode::kBroadcastInDim, {bound11}, DType::kS32, {count, 1},
                       {{"broadcast_dimensions", ModuleBuilder::IntList({0, 1})}});
  auto le = Compare(b, idx, bound_n1, kLe, {count, 1});
  auto both = b.Op(OpCode::kAnd, {ge, le}, DType::kPred, {count, 1});
  auto yes = b.Constant<uint8_t>(DType::kPred, {}, {1});
  auto mask = b.Op(OpCode::kReduce, {both, yes}, DType::kPred, {count}, {{"dimensions", ModuleBuilder::IntList({1})}},
                   {b.BinaryBody(OpCode::kAnd, DType::kPred)});
  auto gathered = Gather(b, x, idx, count);
  auto nan = b.Constant<float>(DType::kF32, {}, {std::numeric_limits<float>::quiet_NaN()});
  auto fill = b.Op(OpCode::kBroadcastInDim, {nan}, DType::kF32, {count}, {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto result = b.Op(OpCode::kSelect, {mask, gathered, fill}, DType::kF32, {count});
  std::vector<ir::ValueId> results = {result};
  if (also_return_normalized) results.push_back(normalized);
  if (also_return_mask) results.push_back(mask);
  return b.Build(results);
}

// A gather or scatter step's index transform as [mode, bits, wrap..., lo..., hi...]; empty
// for the identity.
std::vector<int64_t> TransformList(const Step& step) {
  const kernels::IndexTransformParams* t = nullptr;
  if (const auto* g = step.params.As<kernels::GatherParams>()) t = &g->index_transform;
  if (const auto* sc = step.params.As<kernels::ScatterParams>()) t = &sc->index_transform;
  if (t == nullptr) {
    ADD_FAILURE() << step.kernel << " carries no gather or scatter parameters";
    return {};
  }
  if (t->mode == kernels::IndexTransformParams::Mode::kNone && t->bits == 0 && t->wrap.empty()) return {};
  std::vector<int64_t> list = {static_cast<int64_t>(t->mode), t->bits};
  list.insert(list.end(), t->wrap.begin(), t->wrap.end());
  list.insert(list.end(), t->lo.begin(), t->lo.end());
  list.insert(list.end(), t->hi.begin(), t->hi.end());
  return list;
}

TEST(FoldGatherScatterTest, TakeInFillModeIsOneGatherStep) {
  ExecutionPlan plan = MustLower(Take(false, false));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& g = plan.body.steps[0];
  EXPECT_EQ(g.kernel, "gather.f32");
  ASSERT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.inputs[0], 0u);  // x
  // The raw parameter, viewed as [6,1].
  EXPECT_EQ(plan.values[g.inputs[1]].storage, Storage::kParameter);
  EXPECT_EQ(plan.values[g.inputs[1]].type, (TensorType{DType::kS32, {6, 1}}));
  EXPECT_EQ(plan.values[g.inputs[2]].storage, Storage::kConstant);  // the fill value
  EXPECT_EQ(TransformList(g), (std::vector<int64_t>{1, 0, 8, 0, 7}));  // fill, wrap by 8, in [0, 7]
  EXPECT_EQ(plan.results[0], g.outputs[0]);
  EXPECT_EQ(plan.arena_size, 0);
}

TEST(FoldGatherScatterTest, NormalizationReadElsewhereStays) {
  // The normalized indices are a result too: the gather reads them (through a view, the
  // [N] -> [N,1] copy is gone) and the normalization steps stay.
  ExecutionPlan plan = MustLower(Take(true, false));
  int selects = 0, gathers = 0, broadcasts_of_indices = 0;
  for (const Step& s : plan.body.steps) {
    if (s.kernel == "select.i32") ++selects;
    if (const auto* fused = s.params.As<kernels::FusedParams>())  // plan/fuse_elementwise.h
      for (const kernels::FusedOp& op : fused->ops) selects += op.kernel == "select.i32";
    if (s.kernel == "broadcast_in_dim.i32" && plan.values[s.outputs[0]].type.dims == Dims{6, 1} &&
        plan.values[s.inputs[0]].type.dims == Dims{6})
      ++broadcasts_of_indices;
    if (s.kernel == "gather.f32") {
      ++gathers;
      EXPECT_EQ(TransformList(s), (std::vector<int64_t>{1, 0, 0, 0, 7})) << "no wrap: the gather reads the normalized indices";
    }
  }
  EXPECT_EQ(selects, 1) << PrintPlan(plan);
  EXPECT_EQ(gathers, 1) << PrintPlan(plan);
  EXPECT_EQ(broadcasts_of_indices, 0) << PrintPlan(plan);
}

TEST(FoldGatherScatterTest, MaskReadElsewhereKeepsTheSelect) {
  ExecutionPlan plan = MustLower(Take(false, true));
  bool select = false, reduce = false;
  for (const Step& s : plan.body.steps) {
    if (s.kernel == "select.f32") select = true;
    if (s.kernel == "reduce_and.i1") reduce = true;
    if (s.kernel == "gather.f32") {
      EXPECT_EQ(s.inputs.size(), 2u);
      EXPECT_EQ(TransformList(s), std::vector<int64_t>{}) << "the mask's compares read the normalized indices, so no wrap either";
    }
  }
  EXPECT_TRUE(select) << PrintPlan(plan);
  EXPECT_TRUE(reduce) << PrintPlan(plan);
}

TEST(FoldGatherScatterTest, IndexingWrapsNegativeIndices) {
  // x[i]: normalization and gather, no mask.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {100});
  auto i = b.Param(DType::kS32, {40});
  ir::ValueId normalized;
  auto idx = NormalizedIndices(b, i, 40, 100, &normalized);
  ExecutionPlan plan = MustLower(b.Build({Gather(b, x, idx, 40)}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].inputs.size(), 2u);
  EXPECT_EQ(TransformList(plan.body.steps[0]), (std::vector<int64_t>{0, 0, 100}));
}

TEST(FoldGatherScatterTest, UnsignedIndicesAreReadThroughTheirConvert) {
  // x[i] with uint32 i: convert to i32 and broadcast; the gather reads i's bytes as i32.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {100});
  auto i = b.Param(DType::kU32, {40});
  auto converted = b.Op(OpCode::kConvert, {i}, DType::kS32, {40});
  auto idx = b.Op(OpCode::kBroadcastInDim, {converted}, DType::kS32, {40, 1},
                  {{"broadcast_dimensions", ModuleBuilder::IntList({0})}});
  ExecutionPlan plan = MustLower(b.Build({Gather(b, x, idx, 40)}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& g = plan.body.steps[0];
  EXPECT_EQ(TransformList(g), std::vector<int64_t>{});
  EXPECT_EQ(plan.values[g.inputs[1]].type, (TensorType{DType::kS32, {40, 1}}));
  EXPECT_EQ(plan.values[g.inputs[1]].storage, Storage::kParameter);
  EXPECT_EQ(plan.values[g.inputs[1]].index, 1);
}

TEST(FoldGatherScatterTest, NarrowingConvertKeepsLowBits) {
  // x[i] with int64 i under x64: normalized in i64, converted to i32 (low bits kept).
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {100});
  auto i = b.Param(DType::kS64, {40});
  auto negative = b.Op(OpCode::kCompare, {i, b.Op(OpCode::kBroadcastInDim, {b.Constant<int64_t>(DType::kS64, {}, {0})},
                                                    DType::kS64, {40}, {{"broadcast_dimensions", ModuleBuilder::IntList({})}})},
                       DType::kPred, {40},
                       {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, kLt)},
                        {"compare_type", ModuleBuilder::Enum(ir::EnumKind::kComparisonType, kSigned)}});
  auto n = b.Op(OpCode::kBroadcastInDim, {b.Constant<int64_t>(DType::kS64, {}, {100})}, DType::kS64, {40},
                {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto wrapped = b.Op(OpCode::kAdd, {i, n}, DType::kS64, {40});
  auto normalized = b.Op(OpCode::kSelect, {negative, wrapped, i}, DType::kS64, {40});
  auto wide = b.Op(OpCode::kBroadcastInDim, {normalized}, DType::kS64, {40, 1},
                   {{"broadcast_dimensions", ModuleBuilder::IntList({0})}});
  auto idx = b.Op(OpCode::kConvert, {wide}, DType::kS32, {40, 1});
  ExecutionPlan plan = MustLower(b.Build({Gather(b, x, idx, 40)}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& g = plan.body.steps[0];
  EXPECT_EQ(plan.values[g.inputs[1]].type, (TensorType{DType::kS64, {40, 1}}));
  EXPECT_EQ(TransformList(g), (std::vector<int64_t>{0, 32, 100}));
}

TEST(FoldGatherScatterTest, NarrowingBeforeTheWrapIsNotFolded) {
  // convert i64 -> i32, then normalize in i32: the kernel wraps before it narrows, so the
  // convert stays (the normalization folds).
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {100});
  auto i = b.Param(DType::kS64, {40});
  auto converted = b.Op(OpCode::kConvert, {i}, DType::kS32, {40});
  ir::ValueId normalized;
  auto idx = NormalizedIndices(b, converted, 40, 100, &normalized);
  ExecutionPlan plan = MustLower(b.Build({Gather(b, x, idx, 40)}));
  ASSERT_EQ(plan.body.steps.size(), 2u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].kernel, "convert.i64.i32");
  EXPECT_EQ(TransformList(plan.body.steps[1]), (std::vector<int64_t>{0, 0, 100}));
}

TEST(FoldGatherScatterTest, ScatterAddWrapsNegativeIndices) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {64});
  auto i = b.Param(DType::kS32, {1000});
  auto u = b.Param(DType::kF32, {1000});
  ir::ValueId normalized;
  auto idx = NormalizedIndices(b, i, 1000, 64, &normalized);
  auto y = b.Op(OpCode::kScatter, {x, idx, u}, DType::kF32, {64},
                {{"update_window_dims", ModuleBuilder::IntList({})},
                 {"inserted_window_dims", ModuleBuilder::IntList({0})},
                 {"scatter_dims_to_operand_dims", ModuleBuilder::IntList({0})},
                 {"index_vector_dim", ModuleBuilder::Int(1)}},
                {b.BinaryBody(OpCode::kAdd, DType::kF32)});
  ExecutionPlan plan = MustLower(b.Build({y}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  const Step& s = plan.body.steps[0];
  EXPECT_EQ(s.kernel, "scatter_add.f32");
  EXPECT_EQ(plan.values[s.inputs[1]].storage, Storage::kParameter);
  EXPECT_EQ(TransformList(s), (std::vector<int64_t>{0, 0, 64}));
}

// jax.ops.segment_sum(table[ids], segments, num_segments=16) as JAX emits it: the row gather
// (negative ids normalized), then a row scatter-add into zeros. Optionally the gathered rows
// are also returned.
ir::Module SegmentSumOfRows(bool also_return_rows) {
  ModuleBuilder b;
  const int64_t rows = 50, width = 8, count = 100, segments = 16;
  auto table = b.Param(DType::kF32, {rows, width});
  auto ids = b.Param(DType::kS32, {count});
  auto seg = b.Param(DType::kS32, {count});
  ir::ValueId normalized;
  auto idx = NormalizedIndices(b, ids, count, static_cast<int32_t>(rows), &normalized);
  auto gathered = b.Op(OpCode::kGather, {table, idx}, DType::kF32, {count, width},
                       {{"offset_dims", ModuleBuilder::IntList({1})},
                        {"collapsed_slice_dims", ModuleBuilder::IntList({0})},
                        {"start_index_map", ModuleBuilder::IntList({0})},
                        {"index_vector_dim", ModuleBuilder::Int(1)},
                        {"slice_sizes", ModuleBuilder::IntList({1, width})}});
  auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  auto zeros = b.Op(OpCode::kBroadcastInDim, {zero}, DType::kF32, {segments, width},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto seg_idx = b.Op(OpCode::kBroadcastInDim, {seg}, DType::kS32, {count, 1},
                      {{"broadcast_dimensions", ModuleBuilder::IntList({0})}});
  auto sums = b.Op(OpCode::kScatter, {zeros, seg_idx, gathered}, DType::kF32, {segments, width},
                   {{"update_window_dims", ModuleBuilder::IntList({1})},
                    {"inserted_window_dims", ModuleBuilder::IntList({0})},
                    {"scatter_dims_to_operand_dims", ModuleBuilder::IntList({0})},
                    {"index_vector_dim", ModuleBuilder::Int(1)}},
                   {b.BinaryBody(OpCode::kAdd, DType::kF32)});
  std::vector<ir::ValueId> results = {sums};
  if (also_return_rows) results.push_back(gathered);
  return b.Build(results);
}

// The gathered [N, W] rows are never materialized: one scatter_add_gathered step reads the
// table and both index parameters, and the plan needs no arena for the rows.
TEST(FoldGatherScatterTest, SegmentSumOfGatheredRowsWritesNoRows) {
  ExecutionPlan plan = MustLower(SegmentSumOfRows(false));
  int gathers = 0, folded = 0;
  const Step* step = nullptr;
  for (const Step& s : plan.body.steps) {
    gathers += s.kernel.rfind("gather.", 0) == 0;
    if (s.kernel == "scatter_add_gathered.f32") {
      ++folded;
      step = &s;
    }
  }
  EXPECT_EQ(gathers, 0) << PrintPlan(plan);
  ASSERT_EQ(folded, 1) << PrintPlan(plan);
  ASSERT_EQ(step->inputs.size(), 4u);
  EXPECT_EQ(plan.values[step->inputs[1]].storage, Storage::kParameter);
  EXPECT_EQ(plan.values[step->inputs[2]].storage, Storage::kParameter);
  EXPECT_EQ(plan.values[step->inputs[3]].storage, Storage::kParameter);
  const auto* params = step->params.As<kernels::GatheredScatterParams>();
  ASSERT_NE(params, nullptr);
  EXPECT_EQ(params->gather_transform.wrap, (std::vector<int64_t>{50}));
  EXPECT_TRUE(params->scatter_transform.wrap.empty());
  EXPECT_EQ(plan.arena_size, 0) << PrintPlan(plan);  // no 100x8 f32 rows
}

// Rows read by something else than the scatter are computed once, by the gather, and the
// scatter reads them.
TEST(FoldGatherScatterTest, GatheredRowsReadElsewhereAreNotFolded) {
  ExecutionPlan plan = MustLower(SegmentSumOfRows(true));
  int gathers = 0, scatters = 0;
  for (const Step& s : plan.body.steps) {
    gathers += s.kernel == "gather.f32";
    scatters += s.kernel == "scatter_add.f32";
    EXPECT_NE(s.kernel, "scatter_add_gathered.f32") << PrintPlan(plan);
  }
  EXPECT_EQ(gathers, 1) << PrintPlan(plan);
  EXPECT_EQ(scatters, 1) << PrintPlan(plan);
}

TEST(DeadStepsTest, UnreadStepsAndValuesAreDropped) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto unused = b.Op(OpCode::kMultiply, {x, x}, DType::kF32, {4});
  b.Op(OpCode::kAdd, {unused, x}, DType::kF32, {4});
  auto y = b.Op(OpCode::kSubtract, {x, x}, DType::kF32, {4});
  ExecutionPlan plan = MustLower(b.Build({y}));
  ASSERT_EQ(plan.body.steps.size(), 1u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].kernel, "subtract.f32");
  for (const Value& v : plan.values) EXPECT_NE(v.storage, Storage::kArena) << PrintPlan(plan);
}

}  // namespace
}  // namespace stablert::plan
