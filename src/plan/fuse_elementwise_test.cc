// FuseElementwise: golden plans before and after the pass (grouping, outputs, views,
// element counts, loop bodies, manual regions, reductions), and the arena of a broadcast
// chain lowered from IR.
#include "plan/fuse_elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <string>

#include "kernels/compare_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/reduce_params.h"
#include "plan/collective_params.h"
#include "plan/lower.h"
#include "plan/lowering.h"
#include "ir/test_module_builder.h"

namespace stablert::plan {
namespace {

// A plan written by hand, with its alias roots.
struct Builder {
  ExecutionPlan plan;
  std::vector<ValueId> roots;

  ValueId Value(DType dtype, Dims dims, Storage storage = Storage::kArena, int64_t index = 0) {
    plan::Value value;
    value.type = TensorType{dtype, std::move(dims)};
    value.byte_size = ByteSize(value.type);
    value.storage = storage;
    value.index = index;
    plan.values.push_back(std::move(value));
    roots.push_back(static_cast<ValueId>(plan.values.size() - 1));
    return roots.back();
  }
  ValueId Param(DType dtype, Dims dims) {
    plan.parameter_types.push_back(TensorType{dtype, dims});
    return Value(dtype, std::move(dims), Storage::kParameter, static_cast<int64_t>(plan.parameter_types.size() - 1));
  }
  // A view of `of` (strides as fold_views makes them).
  ValueId View(ValueId of, Dims dims, std::vector<int64_t> strides) {
    ValueId v = Value(plan.values[of].type.dtype, std::move(dims), plan.values[of].storage, plan.values[of].index);
    plan.values[v].strides = std::move(strides);
    plan.values[v].byte_size = ViewByteSize(plan.values[v].type, plan.values[v].strides);
    roots[v] = roots[of];
    return v;
  }
  static Step Kernel(std::string kernel, std::vector<ValueId> in, std::vector<ValueId> out,
                     kernels::KernelParams params = {}) {
    Step step;
    step.kernel = std::move(kernel);
    step.inputs = std::move(in);
    step.outputs = std::move(out);
    step.params = std::move(params);
    return step;
  }
  void Add(Step step, Sequence* into = nullptr) { (into ? into : &plan.body)->steps.push_back(std::move(step)); }
  void Results(std::vector<ValueId> results) {
    plan.results = results;
    for (ValueId v : results) plan.result_types.push_back(plan.values[v].type);
  }
};

// The step lines of the plan's dump.
std::string Steps(const ExecutionPlan& plan) {
  const std::string text = PrintPlan(plan);
  return text.substr(text.find("steps:\n") + 7);
}

std::string Fuse(Builder& b) {
  FuseElementwise(b.plan, b.roots);
  DropDeadSteps(b.plan, b.roots);
  return Steps(b.plan);
}

TEST(FuseElementwiseTest, ChainWithViewsBecomesOneStep) {
  Builder b;
  auto x = b.Param(DType::kF32, {4, 8});
  auto row = b.Param(DType::kF32, {8});
  auto bias = b.View(row, {4, 8}, {0, 1});
  auto e = b.Value(DType::kF32, {4, 8});
  auto m = b.Value(DType::kF32, {4, 8});
  auto s = b.Value(DType::kF32, {4, 8});
  b.Add(Builder::Kernel("exponential.f32", {x}, {e}));
  b.Add(Builder::Kernel("multiply.f32", {e, x}, {m}));
  b.Add(Builder::Kernel("add.f32", {m, bias}, {s}));
  b.Results({s});
  EXPECT_EQ(Steps(b.plan),
            "  exponential.f32 %0 -> %3\n"
            "  multiply.f32 %3, %0 -> %4\n"
            "  add.f32 %4, %2 -> %5\n"
            "return %5\n");
  // The internal values %3 and %4 are gone (%5 becomes %3).
  EXPECT_EQ(Fuse(b),
            "  fused %0, %2 -> %3 {elements=32 dtypes=[11,11,11,11,11] ops=[{kernel=\"exponential.f32\" in=[0] out=2 "
            "params=\"\"},{kernel=\"multiply.f32\" in=[2,0] out=3 params=\"\"},{kernel=\"add.f32\" in=[3,1] out=4 "
            "params=\"\"}] outputs=[4] reduce=[]}  # fused 3 steps ending \n"
            "return %3\n");
  EXPECT_EQ(b.plan.values.size(), 4u);
  EXPECT_EQ(b.plan.values[2].strides, (std::vector<int64_t>{0, 1}));
}

// An integer iota read only by the chain folds in: the fused step generates it per tile
// (fused_iota, its index along the dimension: size and inner) and the array is gone. A float
// iota, or one read outside the group, is not folded away.
TEST(FuseElementwiseTest, IntegerIotaFoldsIntoTheChain) {
  Builder b;
  auto x = b.Param(DType::kU32, {3, 5});
  auto i = b.Value(DType::kU32, {3, 5});
  auto s = b.Value(DType::kU32, {3, 5});
  auto t = b.Value(DType::kU32, {3, 5});
  b.Add(Builder::Kernel("iota.ui32", {}, {i}, kernels::IotaParams{0}));
  b.Add(Builder::Kernel("add.ui32", {i, x}, {s}));
  b.Add(Builder::Kernel("xor.ui32", {s, x}, {t}));
  b.Results({t});
  EXPECT_EQ(Fuse(b),
            "  fused %0 -> %1 {elements=15 dtypes=[8,8,8,8] ops=[{kernel=\"fused_iota.ui32\" in=[] out=1 "
            "params=\"size=3 inner=5\"},{kernel=\"add.ui32\" in=[1,0] out=2 params=\"\"},{kernel=\"xor.ui32\" "
            "in=[2,0] out=3 params=\"\"}] outputs=[3] reduce=[]}  # fused 3 steps ending \n"
            "return %1\n");

  Builder f;
  auto y = f.Param(DType::kF32, {8});
  auto j = f.Value(DType::kF32, {8});
  auto u = f.Value(DType::kF32, {8});
  auto v = f.Value(DType::kF32, {8});
  f.Add(Builder::Kernel("iota.f32", {}, {j}, kernels::IotaParams{0}));
  f.Add(Builder::Kernel("add.f32", {j, y}, {u}));
  f.Add(Builder::Kernel("multiply.f32", {u, y}, {v}));
  f.Results({v});
  const std::string fused = Fuse(f);
  EXPECT_NE(fused.find("iota.f32  -> "), std::string::npos) << fused;
  EXPECT_EQ(fused.find("fused_iota"), std::string::npos) << fused;
}

// A value also read after the group, or returned, stays an output; sub-op parameters go along.
TEST(FuseElementwiseTest, ValuesReadOutsideStayOutputs) {
  Builder b;
  auto x = b.Param(DType::kF32, {16});
  auto y = b.Param(DType::kF32, {16});
  auto n = b.Value(DType::kF32, {16});
  auto c = b.Value(DType::kPred, {16});
  auto s = b.Value(DType::kF32, {16});
  auto z = b.Value(DType::kF32, {16});
  kernels::CompareParams lt{kernels::CompareDirection::kLt, kernels::CompareType::kFloat};
  b.Add(Builder::Kernel("negate.f32", {x}, {n}));
  b.Add(Builder::Kernel("compare.f32", {n, y}, {c}, lt));
  b.Add(Builder::Kernel("select.f32", {c, n, y}, {s}));
  b.Add(Builder::Kernel("sort_keys.f32", {n}, {z}));  // not elementwise: reads n outside the group
  b.Results({s, z});
  EXPECT_EQ(Fuse(b),
            "  fused %0, %1 -> %2, %3 {elements=16 dtypes=[11,11,11,1,11] ops=[{kernel=\"negate.f32\" in=[0] out=2 "
            "params=\"\"},{kernel=\"compare.f32\" in=[2,1] out=3 params=\"direction=5 type=1\"},{kernel=\"select.f32\" "
            "in=[3,2,1] out=4 params=\"\"}] outputs=[2,4] reduce=[]}  # fused 3 steps ending \n"
            "  sort_keys.f32 %2 -> %4\n"
            "return %3, %4\n");
}

// Steps of other element counts form their own groups; a lone step stays as it is; scalar
// steps are not fused and do not end a run; the fused step takes its last step's place.
TEST(FuseElementwiseTest, ElementCountsGroupSeparately) {
  Builder b;
  auto x = b.Param(DType::kF32, {8});
  auto y = b.Param(DType::kF32, {2, 8});
  auto k = b.Param(DType::kF32, {});
  auto a = b.Value(DType::kF32, {8});
  auto p = b.Value(DType::kF32, {2, 8});
  auto q = b.Value(DType::kF32, {});
  auto c = b.Value(DType::kF32, {8});
  b.Add(Builder::Kernel("exponential.f32", {x}, {a}));
  b.Add(Builder::Kernel("negate.f32", {y}, {p}));
  b.Add(Builder::Kernel("negate.f32", {k}, {q}));
  b.Add(Builder::Kernel("log.f32", {a}, {c}));
  b.Results({c, p, q});
  EXPECT_EQ(Fuse(b),
            "  negate.f32 %1 -> %3\n"
            "  negate.f32 %2 -> %4\n"
            "  fused %0 -> %5 {elements=8 dtypes=[11,11,11] ops=[{kernel=\"exponential.f32\" in=[0] out=1 params=\"\"},"
            "{kernel=\"log.f32\" in=[1] out=2 params=\"\"}] outputs=[2] reduce=[]}  # fused 2 steps ending \n"
            "return %5, %3, %4\n");
}

// Inside a loop body the chain fuses within the body; what the loop carries stays written.
TEST(FuseElementwiseTest, LoopBodiesFuseWithinTheirSequence) {
  Builder b;
  auto x = b.Param(DType::kF32, {32});
  auto carried = b.Value(DType::kF32, {32});
  auto t1 = b.Value(DType::kF32, {32});
  auto t2 = b.Value(DType::kF32, {32});
  auto flag = b.Value(DType::kPred, {});
  Step loop;
  loop.kind = StepKind::kWhile;
  loop.inputs = {flag};
  loop.outputs = {carried};
  loop.regions.resize(2);
  b.Add(Builder::Kernel("is_finite.f32", {x}, {flag}), &loop.regions[0]);  // stands for a condition
  b.Add(Builder::Kernel("multiply.f32", {carried, x}, {t1}), &loop.regions[1]);
  b.Add(Builder::Kernel("tanh.f32", {t1}, {t2}), &loop.regions[1]);
  b.Add(Builder::Kernel("copy.f32", {t2}, {carried}), &loop.regions[1]);
  b.Add(Builder::Kernel("copy.f32", {x}, {carried}));
  b.Add(std::move(loop));
  b.Results({carried});
  EXPECT_EQ(Fuse(b),
            "  copy.f32 %0 -> %1\n"
            "  while %3 -> %1\n"
            "    region 0:\n"
            "      is_finite.f32 %0 -> %3\n"
            "    region 1:\n"
            "      fused %1, %0 -> %2 {elements=32 dtypes=[11,11,11,11] ops=[{kernel=\"multiply.f32\" in=[0,1] out=2 "
            "params=\"\"},{kernel=\"tanh.f32\" in=[2] out=3 params=\"\"}] outputs=[3] reduce=[]}  # fused 2 steps "
            "ending \n"
            "      copy.f32 %2 -> %1\n"
            "return %1\n");
}

// Manual regions (per-partition values) are left as they are.
TEST(FuseElementwiseTest, ManualRegionsUntouched) {
  Builder b;
  auto x = b.Param(DType::kF32, {32});
  auto t1 = b.Value(DType::kF32, {32});
  auto t2 = b.Value(DType::kF32, {32});
  Step manual;
  manual.kind = StepKind::kManual;
  manual.inputs = {x};
  manual.outputs = {t2};
  manual.params = ManualParams{1};
  manual.regions.resize(1);
  b.Add(Builder::Kernel("negate.f32", {x}, {t1}), &manual.regions[0]);
  b.Add(Builder::Kernel("tanh.f32", {t1}, {t2}), &manual.regions[0]);
  b.Add(std::move(manual));
  b.Results({t2});
  const std::string before = Steps(b.plan);
  EXPECT_EQ(Fuse(b), before);
}

// A sum over trailing dims of a value only the sum reads folds into the fused step; one
// over all dims of a long value is cut into segments that a reduce step finishes.
TEST(FuseElementwiseTest, ReductionsFoldIn) {
  Builder b;
  auto x = b.Param(DType::kF32, {128, 64});
  auto big = b.Param(DType::kF32, {1 << 20});
  auto zero = b.Value(DType::kF32, {}, Storage::kConstant, 0);
  b.plan.constants.push_back({0, 0, 0, 0});
  auto e = b.Value(DType::kF32, {128, 64});
  auto rows = b.Value(DType::kF32, {128});
  auto sq = b.Value(DType::kF32, {1 << 20});
  auto total = b.Value(DType::kF32, {});
  b.Add(Builder::Kernel("exponential.f32", {x}, {e}));
  b.Add(Builder::Kernel("reduce_add.f32", {e, zero}, {rows}, kernels::ReduceParams{{1}}));
  b.Add(Builder::Kernel("multiply.f32", {big, big}, {sq}));
  b.Add(Builder::Kernel("reduce_max.f32", {sq, zero}, {total}, kernels::ReduceParams{{0}}));
  b.Results({rows, total});
  EXPECT_EQ(Fuse(b),
            "  fused %0, %2 -> %3 {elements=8192 dtypes=[11,11] ops=[{kernel=\"exponential.f32\" in=[0] out=1 "
            "params=\"\"}] outputs=[] reduce=[{kernel=\"reduce_add.f32\" slot=1 rows=128 length=64 segments=1}]}  "
            "# fused 1 steps ending \n"
            "  fused %1, %2 -> %5 {elements=1048576 dtypes=[11,11] ops=[{kernel=\"multiply.f32\" in=[0,0] out=1 "
            "params=\"\"}] outputs=[] reduce=[{kernel=\"reduce_max.f32\" slot=1 rows=1 length=1048576 segments=32}]}  "
            "# fused 1 steps ending \n"
            "  reduce_max.f32 %5, %2 -> %4 {dimensions=[0]}\n"
            "return %3, %4\n");
}

// A reduction whose operand something else reads, or over leading dims, stays unfused.
TEST(FuseElementwiseTest, ReductionsThatStay) {
  Builder b;
  auto x = b.Param(DType::kF32, {64, 64});
  auto zero = b.Value(DType::kF32, {}, Storage::kConstant, 0);
  b.plan.constants.push_back({0, 0, 0, 0});
  auto e = b.Value(DType::kF32, {64, 64});
  auto cols = b.Value(DType::kF32, {64});
  auto n = b.Value(DType::kF32, {64, 64});
  auto rows = b.Value(DType::kF32, {64});
  auto d = b.Value(DType::kF32, {64, 64});
  b.Add(Builder::Kernel("exponential.f32", {x}, {e}));
  b.Add(Builder::Kernel("reduce_add.f32", {e, zero}, {cols}, kernels::ReduceParams{{0}}));
  b.Add(Builder::Kernel("negate.f32", {x}, {n}));
  b.Add(Builder::Kernel("reduce_add.f32", {n, zero}, {rows}, kernels::ReduceParams{{1}}));
  b.Add(Builder::Kernel("tanh.f32", {n}, {d}));
  b.Results({cols, rows, d});
  const std::string before = Steps(b.plan);
  EXPECT_EQ(Fuse(b), before);
}

// softmax over rows: the max, the exp chain and its sum, the divide become one fused_rows
// step; the exp and its sum merge into one fused sub-step that keeps the exp for the divide.
TEST(FuseElementwiseTest, RowSoftmaxBecomesOneRowsStep) {
  Builder b;
  auto x = b.Param(DType::kF32, {64, 100});
  auto low = b.Value(DType::kF32, {}, Storage::kConstant, 0);
  auto zero = b.Value(DType::kF32, {}, Storage::kConstant, 1);
  b.plan.constants.push_back({0, 0, 0x80, 0xff});
  b.plan.constants.push_back({0, 0, 0, 0});
  auto m = b.Value(DType::kF32, {64});
  auto low_b = b.View(low, {64}, {0});
  auto m2 = b.Value(DType::kF32, {64});
  auto m2_b = b.View(m2, {64, 100}, {1, 0});
  auto t = b.Value(DType::kF32, {64, 100});
  auto e = b.Value(DType::kF32, {64, 100});
  auto s = b.Value(DType::kF32, {64});
  auto s_b = b.View(s, {64, 100}, {1, 0});
  auto out = b.Value(DType::kF32, {64, 100});
  b.Add(Builder::Kernel("reduce_max.f32", {x, low}, {m}, kernels::ReduceParams{{1}}));
  b.Add(Builder::Kernel("maximum.f32", {low_b, m}, {m2}));
  b.Add(Builder::Kernel("subtract.f32", {x, m2_b}, {t}));
  b.Add(Builder::Kernel("exponential.f32", {t}, {e}));
  b.Add(Builder::Kernel("reduce_add.f32", {e, zero}, {s}, kernels::ReduceParams{{1}}));
  b.Add(Builder::Kernel("divide.f32", {e, s_b}, {out}));
  b.Results({out});
  EXPECT_EQ(Fuse(b),
            "  fused_rows %0, %1, %3, %2 -> %4 {rows=64 length=100 values=[{form=0 dtype=11 input=0 of=-1},"
            "{form=4 dtype=11 input=1 of=-1},{form=1 dtype=11 input=-1 of=-1},"
            "{form=6 dtype=11 input=2 of=-1},{form=1 dtype=11 input=-1 of=-1},"
            "{form=2 dtype=11 input=-1 of=4},{form=0 dtype=11 input=-1 of=-1},"
            "{form=4 dtype=11 input=3 of=-1},{form=1 dtype=11 input=-1 of=-1},"
            "{form=2 dtype=11 input=-1 of=8},"
            "{form=0 dtype=11 input=-1 of=-1}] steps=[{kernel=\"reduce_max.f32\" in=[0,1] out=[2] params=\"dimensions=[1]\"},"
            "{kernel=\"maximum.f32\" in=[3,2] out=[4] params=\"\"},"
            "{kernel=\"fused\" in=[0,5,7] out=[6,8] params=\"elements=6400 dtypes=[11,11,11,11] ops=[{kernel=\"subtract.f32\" in=[0,1] out=2 params=\"\"},"
            "{kernel=\"exponential.f32\" in=[2] out=3 params=\"\"}] outputs=[3] reduce=[{kernel=\"reduce_add.f32\" slot=3 rows=64 length=100 segments=1}]\"},"
            "{kernel=\"fused\" in=[6,9] out=[10] params=\"elements=6400 dtypes=[11,11,11] ops=[{kernel=\"divide.f32\" in=[0,1] out=2 params=\"\"}] outputs=[2] reduce=[]\"}] outputs=[10]}  # rows of 5 steps ending \nreturn %4\n");
}

// A chain before the reduction (a residual add before a normalization) joins the row group,
// so its value is never stored.
TEST(FuseElementwiseTest, ChainBeforeRowReductionJoins) {
  Builder b;
  auto x = b.Param(DType::kF32, {64, 100});
  auto y = b.Param(DType::kF32, {64, 100});
  auto zero = b.Value(DType::kF32, {}, Storage::kConstant, 0);
  b.plan.constants.push_back({0, 0, 0, 0});
  auto h = b.Value(DType::kF32, {64, 100});
  auto s = b.Value(DType::kF32, {64});
  auto s_b = b.View(s, {64, 100}, {1, 0});
  auto out = b.Value(DType::kF32, {64, 100});
  b.Add(Builder::Kernel("add.f32", {x, y}, {h}));
  b.Add(Builder::Kernel("reduce_add.f32", {h, zero}, {s}, kernels::ReduceParams{{1}}));
  b.Add(Builder::Kernel("divide.f32", {h, s_b}, {out}));
  b.Results({out});
  const std::string steps = Fuse(b);
  EXPECT_TRUE(steps.starts_with("  fused_rows %0, %1, %2 -> ")) << steps;
  EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 2) << steps;  // the step and the return
  EXPECT_NE(steps.find("kernel=\"add.f32\""), std::string::npos) << steps;
  EXPECT_NE(steps.find("reduce=[{kernel=\"reduce_add.f32\""), std::string::npos) << steps;
}

// A row reduction whose result no later step broadcasts back stays as it was.
TEST(FuseElementwiseTest, RowReductionWithoutBroadcastStays) {
  Builder b;
  auto x = b.Param(DType::kF32, {64, 100});
  auto zero = b.Value(DType::kF32, {}, Storage::kConstant, 0);
  b.plan.constants.push_back({0, 0, 0, 0});
  auto s = b.Value(DType::kF32, {64});
  auto r = b.Value(DType::kF32, {64});
  b.Add(Builder::Kernel("reduce_add.f32", {x, zero}, {s}, kernels::ReduceParams{{1}}));
  b.Add(Builder::Kernel("rsqrt.f32", {s}, {r}));
  b.Results({r});
  const std::string before = Steps(b.plan);
  EXPECT_EQ(Fuse(b), before);
}

// (broadcast_to(x, (8192, 8192)) * 2 + 1).sum(): no 8192 x 8192 array is stored.
TEST(FuseElementwiseTest, BroadcastChainSumStoresNoFullArray) {
  using ir::OpCode;
  ir::testing::ModuleBuilder m;
  const int64_t n = 8192;
  auto x = m.Param(DType::kF32, {n});
  auto xb = m.Op(OpCode::kBroadcastInDim, {x}, DType::kF32, {n, n},
                 {{"broadcast_dimensions", ir::testing::ModuleBuilder::IntList({1})}});
  auto two = m.Constant<float>(DType::kF32, {}, {2.0f});
  auto one = m.Constant<float>(DType::kF32, {}, {1.0f});
  auto zero = m.Constant<float>(DType::kF32, {}, {0.0f});
  auto two_b = m.Op(OpCode::kBroadcastInDim, {two}, DType::kF32, {n, n},
                    {{"broadcast_dimensions", ir::testing::ModuleBuilder::IntList({})}});
  auto one_b = m.Op(OpCode::kBroadcastInDim, {one}, DType::kF32, {n, n},
                    {{"broadcast_dimensions", ir::testing::ModuleBuilder::IntList({})}});
  auto prod = m.Op(OpCode::kMultiply, {xb, two_b}, DType::kF32, {n, n});
  auto sum = m.Op(OpCode::kAdd, {prod, one_b}, DType::kF32, {n, n});
  std::vector<ir::Region> body;
  body.push_back(m.BinaryBody(OpCode::kAdd, DType::kF32));
  auto total = m.OpN(OpCode::kReduce, {sum, zero}, {ir::Type::Tensor(DType::kF32, {})},
                     {{"dimensions", ir::testing::ModuleBuilder::IntList({0, 1})}}, std::move(body))[0];
  auto plan = LowerToPlan(m.Build({total}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_LT(plan->arena_size, 1 << 20) << PrintPlan(*plan);
  for (const plan::Value& value : plan->values)
    if (value.strides.empty()) EXPECT_LT(value.byte_size, n * n) << PrintPlan(*plan);
}

}  // namespace
}  // namespace stablert::plan
