// Loops whose carried values are updated in place (plan/in_place.h), run by the executor:
// the bytes a run moves with copies and update steps grow linearly with the trip count, and
// the results are those of the loop as written (swaps of carries, carries read after their
// new value is computed, nested loops, scatters).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "plan/lower.h"
#include "ir/test_module_builder.h"
#include "runtime/executor.h"
#include "plan/test_lowering.h"

namespace stablert::runtime {
namespace {

using ir::OpCode;
using plan::ExecutionPlan;
using ir::testing::ModuleBuilder;

constexpr int64_t kRows = 16, kCols = 128;

using plan::testing::MustLower;

std::vector<std::vector<uint8_t>> RunPlan(const ExecutionPlan& plan, const std::vector<const void*>& args) {
  std::vector<std::vector<uint8_t>> results;
  std::vector<void*> pointers;
  for (const plan::TensorType& type : plan.result_types) results.emplace_back(plan::ByteSize(type));
  for (auto& r : results) pointers.push_back(r.data());
  Status status = ExecutePlan(plan, args, pointers);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return results;
}

template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

bool SameStorage(const ExecutionPlan& plan, plan::ValueId a, plan::ValueId b) {
  return plan.values[a].storage == plan.values[b].storage && plan.values[a].index == plan.values[b].index;
}

// Bytes a run moves with copies and update steps: a copy its output; a dynamic_update_slice
// or scatter its update, plus its whole operand unless the output shares the operand's
// storage. The body of a while at nesting depth k runs trips[k] times per run of its
// enclosing sequence.
int64_t BytesMoved(const ExecutionPlan& plan, const plan::Sequence& sequence, const std::vector<int64_t>& trips,
                   size_t depth = 0) {
  int64_t bytes = 0;
  for (const plan::Step& step : sequence.steps) {
    const std::string& key = step.kernel;
    if (step.kind == plan::StepKind::kKernel && key.rfind("copy.", 0) == 0) {
      bytes += plan.values[step.outputs[0]].byte_size;
    } else if (step.kind == plan::StepKind::kKernel &&
               (key.rfind("dynamic_update_slice.", 0) == 0 || key.rfind("scatter", 0) == 0)) {
      const plan::ValueId update = key.rfind("scatter", 0) == 0 ? step.inputs[2] : step.inputs[1];
      bytes += plan.values[update].byte_size;
      if (!SameStorage(plan, step.inputs[0], step.outputs[0])) bytes += plan.values[step.outputs[0]].byte_size;
    }
    if (step.kind == plan::StepKind::kWhile) bytes += trips[depth] * BytesMoved(plan, step.regions[1], trips, depth + 1);
  }
  return bytes;
}

ir::ValueId LessThan(ModuleBuilder& b, ir::ValueId x, ir::ValueId y) {
  return b.Op(OpCode::kCompare, {x, y}, DType::kPred, {},
              {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
}

// for i in [0, n): acc[i] = tanh(xs[i] + i * 0.5) (a [n, 16, 128] f32 array stacked one slice
// per step, as lax.scan stacks its outputs); returns acc.
ir::Module ScanStacking(int32_t n) {
  ModuleBuilder b;
  auto xs = b.Param(DType::kF32, {n, kRows, kCols});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto count = b.Constant<int32_t>(DType::kS32, {}, {n});
  auto half = b.Constant<float>(DType::kF32, {}, {0.5f});
  auto fzero = b.Constant<float>(DType::kF32, {}, {0.0f});
  auto acc = b.Op(OpCode::kBroadcastInDim, {fzero}, DType::kF32, {n, kRows, kCols},
                  {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto loop = b.While(
      {zero, acc}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], count); },
      [&](const std::vector<ir::ValueId>& c) {
        auto x = b.Op(OpCode::kDynamicSlice, {xs, c[0], zero, zero}, DType::kF32, {1, kRows, kCols},
                      {{"slice_sizes", ModuleBuilder::IntList({1, kRows, kCols})}});
        auto f = b.Op(OpCode::kMultiply, {b.Op(OpCode::kConvert, {c[0]}, DType::kF32, {}), half}, DType::kF32, {});
        auto fb = b.Op(OpCode::kBroadcastInDim, {f}, DType::kF32, {1, kRows, kCols},
                       {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
        auto y = b.Op(OpCode::kTanh, {b.Op(OpCode::kAdd, {x, fb}, DType::kF32, {1, kRows, kCols})}, DType::kF32,
                      {1, kRows, kCols});
        auto updated = b.Op(OpCode::kDynamicUpdateSlice, {c[1], y, c[0], zero, zero}, DType::kF32, {n, kRows, kCols});
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}), updated};
      });
  return b.Build({loop[1]});
}

TEST(LoopInPlaceTest, StackingScanMovesLinearBytes) {
  const ExecutionPlan small = MustLower(ScanStacking(100));
  const ExecutionPlan large = MustLower(ScanStacking(1000));
  const int64_t slice = kRows * kCols * 4;
  const int64_t bytes_small = BytesMoved(small, small.body, {100}), bytes_large = BytesMoved(large, large.body, {1000});
  // Each step writes its slice (and the 4-byte counter); nothing moves the whole array.
  EXPECT_LE(bytes_large, 11 * bytes_small) << plan::PrintPlan(large);
  EXPECT_LE(bytes_large, 1000 * (slice + 64)) << plan::PrintPlan(large);
  // The loop body has no copy, and the update writes the carried array in place.
  const plan::Step& loop = large.body.steps.back();
  ASSERT_EQ(loop.kind, plan::StepKind::kWhile) << plan::PrintPlan(large);
  for (const plan::Step& step : loop.regions[1].steps) {
    EXPECT_NE(step.kernel.rfind("copy.", 0), 0u) << plan::PrintPlan(large);
    if (step.kernel == "dynamic_update_slice.f32") EXPECT_TRUE(SameStorage(large, step.inputs[0], step.outputs[0]));
  }

  std::vector<float> xs(1000 * kRows * kCols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  const std::vector<float> got = As<float>(RunPlan(large, {xs.data()})[0]);
  ASSERT_EQ(got.size(), xs.size());
  for (size_t i = 0; i < xs.size(); i += 997) {
    const auto step = static_cast<float>(i / static_cast<size_t>(kRows * kCols));
    EXPECT_FLOAT_EQ(got[i], std::tanh(xs[i] + step * 0.5f)) << i;
  }
}

// (i, a, b) -> (i + 1, b, a): the copies behave as one parallel assignment.
TEST(LoopInPlaceTest, SwappedCarries) {
  ModuleBuilder b;
  auto a0 = b.Param(DType::kF32, {1000});
  auto b0 = b.Param(DType::kF32, {1000});
  auto n = b.Param(DType::kS32, {});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto loop = b.While(
      {zero, a0, b0}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], n); },
      [&](const std::vector<ir::ValueId>& c) {
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}), c[2], c[1]};
      });
  const ExecutionPlan plan = MustLower(b.Build({loop[1], loop[2]}));
  std::vector<float> a(1000), bb(1000);
  for (int i = 0; i < 1000; ++i) a[i] = static_cast<float>(i), bb[i] = static_cast<float>(-i);
  for (int32_t trips : {0, 1, 2, 5}) {
    auto results = RunPlan(plan, {a.data(), bb.data(), &trips});
    EXPECT_EQ(As<float>(results[0]), trips % 2 ? bb : a) << trips;
    EXPECT_EQ(As<float>(results[1]), trips % 2 ? a : bb) << trips;
  }
}

// (i, c, d) -> (i + 1, c + 1, d + c): d's new value reads c's old one after c's new one is
// computed, so c keeps its copy; d and i are updated in place.
TEST(LoopInPlaceTest, CarryReadAfterItsNewValueKeepsItsCopy) {
  ModuleBuilder b;
  auto c0 = b.Param(DType::kF32, {256});
  auto d0 = b.Param(DType::kF32, {256});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto four = b.Constant<int32_t>(DType::kS32, {}, {4});
  auto fone = b.Op(OpCode::kBroadcastInDim, {b.Constant<float>(DType::kF32, {}, {1.0f})}, DType::kF32, {256},
                   {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto loop = b.While(
      {zero, c0, d0}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], four); },
      [&](const std::vector<ir::ValueId>& c) {
        auto next_c = b.Op(OpCode::kAdd, {c[1], fone}, DType::kF32, {256});
        auto next_d = b.Op(OpCode::kAdd, {c[2], c[1]}, DType::kF32, {256});
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}), next_c, next_d};
      });
  const ExecutionPlan plan = MustLower(b.Build({loop[1], loop[2]}));
  const plan::Step& step = plan.body.steps.back();
  ASSERT_EQ(step.kind, plan::StepKind::kWhile) << plan::PrintPlan(plan);
  int copies = 0;
  for (const plan::Step& s : step.regions[1].steps) copies += s.kernel.rfind("copy.", 0) == 0;
  EXPECT_EQ(copies, 1) << plan::PrintPlan(plan);
  std::vector<float> c(256), d(256);
  for (int i = 0; i < 256; ++i) c[i] = static_cast<float>(i), d[i] = static_cast<float>(2 * i);
  auto results = RunPlan(plan, {c.data(), d.data()});
  std::vector<float> want_c = c, want_d = d;
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 256; ++i) want_d[i] += want_c[i], want_c[i] += 1.0f;
  EXPECT_EQ(As<float>(results[0]), want_c);
  EXPECT_EQ(As<float>(results[1]), want_d);
}

// for j in [0, 4): for i in [0, n): acc[j * n + i] = acc[j * n + i] + (j * n + i): an outer
// carry updated by an inner loop is the inner loop's carried buffer too.
TEST(LoopInPlaceTest, NestedLoopsUpdateOneBuffer) {
  auto build = [](int32_t n) {
    ModuleBuilder b;
    auto acc0 = b.Param(DType::kF32, {4 * n});
    auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
    auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
    auto outer_count = b.Constant<int32_t>(DType::kS32, {}, {4});
    auto inner_count = b.Constant<int32_t>(DType::kS32, {}, {n});
    auto size = b.Constant<int32_t>(DType::kS32, {}, {n});
    auto outer = b.While(
        {zero, acc0}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], outer_count); },
        [&](const std::vector<ir::ValueId>& oc) {
          auto base = b.Op(OpCode::kMultiply, {oc[0], size}, DType::kS32, {});
          auto inner = b.While(
              {zero, oc[1]}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], inner_count); },
              [&](const std::vector<ir::ValueId>& c) {
                auto at = b.Op(OpCode::kAdd, {base, c[0]}, DType::kS32, {});
                auto old = b.Op(OpCode::kDynamicSlice, {c[1], at}, DType::kF32, {1},
                                {{"slice_sizes", ModuleBuilder::IntList({1})}});
                auto value = b.Op(OpCode::kReshape, {b.Op(OpCode::kConvert, {at}, DType::kF32, {})}, DType::kF32, {1});
                auto updated = b.Op(OpCode::kDynamicUpdateSlice,
                                    {c[1], b.Op(OpCode::kAdd, {old, value}, DType::kF32, {1}), at}, DType::kF32,
                                    {4 * n});
                return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}), updated};
              });
          return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {oc[0], one}, DType::kS32, {}), inner[1]};
        });
    return b.Build({outer[1]});
  };
  const ExecutionPlan small = MustLower(build(100));
  const ExecutionPlan large = MustLower(build(1000));
  EXPECT_LE(BytesMoved(large, large.body, {4, 1000}), 11 * BytesMoved(small, small.body, {4, 100}))
      << plan::PrintPlan(large);
  std::vector<float> acc(4000);
  for (int i = 0; i < 4000; ++i) acc[i] = static_cast<float>(i % 3);
  const std::vector<float> got = As<float>(RunPlan(large, {acc.data()})[0]);
  ASSERT_EQ(got.size(), acc.size());
  for (int i = 0; i < 4000; ++i) ASSERT_EQ(got[i], acc[i] + static_cast<float>(i)) << i;
}

// A loop carry that is also read after the loop (and returned): the in-place updates must
// leave it holding the final value, and the value the loop started from intact.
TEST(LoopInPlaceTest, CarryReadAfterTheLoop) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {512});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto three = b.Constant<int32_t>(DType::kS32, {}, {3});
  auto start = b.Op(OpCode::kMultiply, {x, x}, DType::kF32, {512});
  auto loop = b.While(
      {zero, start}, [&](const std::vector<ir::ValueId>& c) { return LessThan(b, c[0], three); },
      [&](const std::vector<ir::ValueId>& c) {
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {c[0], one}, DType::kS32, {}),
                                        b.Op(OpCode::kAdd, {c[1], x}, DType::kF32, {512})};
      });
  auto after = b.Op(OpCode::kSubtract, {loop[1], start}, DType::kF32, {512});
  const ExecutionPlan plan = MustLower(b.Build({loop[1], after, start}));
  std::vector<float> xs(512);
  for (int i = 0; i < 512; ++i) xs[i] = static_cast<float>(i % 11);
  auto results = RunPlan(plan, {xs.data()});
  for (int i = 0; i < 512; ++i) {
    EXPECT_EQ(As<float>(results[0])[i], xs[i] * xs[i] + 3 * xs[i]);
    EXPECT_EQ(As<float>(results[1])[i], 3 * xs[i]);
    EXPECT_EQ(As<float>(results[2])[i], xs[i] * xs[i]);
  }
}

}  // namespace
}  // namespace stablert::runtime
