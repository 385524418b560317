#include "plan/lower.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "kernels/compare_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/dot_params.h"
#include "kernels/fused_params.h"
#include "kernels/reduce_params.h"
#include "ir/test_module_builder.h"
#include "plan/test_lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

using testing::MustLower;

TEST(LowerTest, GoldenPlan) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2, 3});
  auto c = b.Constant<float>(DType::kF32, {}, {1.5f});
  auto cb = b.Op(OpCode::kBroadcastInDim, {c}, DType::kF32, {2, 3}, {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto sum = b.Op(OpCode::kAdd, {x, cb}, DType::kF32, {2, 3});
  auto t = b.Op(OpCode::kTranspose, {sum}, DType::kF32, {3, 2}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  auto r = b.Op(OpCode::kReshape, {t}, DType::kF32, {6});
  ExecutionPlan plan = MustLower(b.Build({r, x}));
  EXPECT_EQ(PrintPlan(plan),
            "plan v1\n"
            "parameters: (f32[2,3])\n"
            "results: (f32[6], f32[2,3])\n"
            "arena: 64 bytes\n"
            "values:\n"
            "  %0 f32[2,3] parameter 0\n"
            "  %1 f32[] constant 0 = {1.5}\n"
            "  %2 f32[2,3] constant 0 = {1.5} view strides [0,0]\n"
            "  %3 f32[2,3] arena @0 (24 bytes)\n"
            "  %4 f32[3,2] result 0\n"
            "  %5 f32[6] result 0\n"
            "steps:\n"
            "  add.f32 %0, %2 -> %3  # stablehlo.add (unknown location)\n"
            "  transpose.f32 %3 -> %4 {permutation=[1,0]}  # stablehlo.transpose (unknown location)\n"
            "return %5, %0\n");
}

TEST(LowerTest, UnsupportedOpNamesOpAndLocation) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  b.SetLocation("model.py", 12, 7, "jit(f)/tuple");
  auto y = b.Op(OpCode::kTuple, {x}, DType::kF32, {4});
  auto plan = LowerToPlan(b.Build({y}));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(plan.status().message(),
            "stablehlo.tuple (jit(f)/tuple at model.py:12:7): op is not supported by the CPU plan yet");
}

TEST(LowerTest, ComplexOpsLowerWithPartTypedResults) {
  ModuleBuilder b;
  auto re = b.Param(DType::kF32, {4});
  auto im = b.Param(DType::kF32, {4});
  auto z = b.Op(OpCode::kComplex, {re, im}, DType::kC64, {4});
  auto product = b.Op(OpCode::kMultiply, {z, z}, DType::kC64, {4});
  auto magnitude = b.Op(OpCode::kAbs, {product}, DType::kF32, {4});
  auto eq = b.Op(OpCode::kCompare, {z, product}, DType::kPred, {4},
                 {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 0)}});
  ExecutionPlan plan = MustLower(b.Build({magnitude, eq}));
  ASSERT_EQ(plan.body.steps.size(), 4u);
  EXPECT_EQ(plan.body.steps[0].kernel, "complex.f32");
  EXPECT_EQ(plan.body.steps[1].kernel, "multiply.complex<f32>");
  EXPECT_EQ(plan.body.steps[2].kernel, "abs.complex<f32>");
  EXPECT_EQ(plan.body.steps[3].kernel, "compare.complex<f32>");
  EXPECT_EQ(plan.body.steps[3].params,
            kernels::KernelParams(kernels::CompareParams{.direction = kernels::CompareDirection::kEq,
                                                         .type = kernels::CompareType::kFloat}));
  {
    // GT on complex values is the lexicographic order (the compare kernel, its direction).
    ModuleBuilder c;
    auto x = c.Param(DType::kC128, {2});
    auto gt = c.Op(OpCode::kCompare, {x, x}, DType::kPred, {2},
                   {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 3)}});
    auto result = LowerToPlan(c.Build({gt}));
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->body.steps[0].kernel, "compare.complex<f64>");
  }
  {
    ModuleBuilder c;
    auto x = c.Param(DType::kC128, {2});
    auto wrong = c.Op(OpCode::kAbs, {x}, DType::kC128, {2});
    auto result = LowerToPlan(c.Build({wrong}));
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().message();
  }
}

// Each step carries its family's parameter struct, built from the op's attributes.
TEST(LowerTest, StepsCarryTheirParameterStructs) {
  ModuleBuilder b;
  auto x = b.Param(DType::kS32, {4, 6});
  auto sliced = b.Op(OpCode::kSlice, {x}, DType::kS32, {2, 2},
                     {{"start_indices", ModuleBuilder::IntList({1, 0})},
                      {"limit_indices", ModuleBuilder::IntList({3, 6})},
                      {"strides", ModuleBuilder::IntList({1, 3})}});
  auto iota = b.Op(OpCode::kIota, {}, DType::kS32, {2, 2}, {{"iota_dimension", ModuleBuilder::Int(1)}});
  auto less = b.Op(OpCode::kCompare, {sliced, iota}, DType::kPred, {2, 2},
                   {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
  ExecutionPlan plan = MustLower(b.Build({less}));
  ASSERT_EQ(plan.body.steps.size(), 3u) << PrintPlan(plan);
  EXPECT_EQ(plan.body.steps[0].kernel, "slice.i32");
  EXPECT_EQ(plan.body.steps[0].params,
            kernels::KernelParams(kernels::SliceParams{.start = {1, 0}, .limit = {3, 6}, .stride = {1, 3}}));
  EXPECT_EQ(plan.body.steps[0].params.ToString(), "start=[1,0] limit=[3,6] stride=[1,3]");
  EXPECT_EQ(plan.body.steps[1].params, kernels::KernelParams(kernels::IotaParams{.dimension = 1}));
  // No compare_type: an integer compare of a signed type is SIGNED.
  EXPECT_EQ(plan.body.steps[2].params,
            kernels::KernelParams(kernels::CompareParams{.direction = kernels::CompareDirection::kLt,
                                                         .type = kernels::CompareType::kSigned}));
}

TEST(LowerTest, UnsupportedDtypeFailsAtLowering) {
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF6E2M3FN, {4});
    auto plan = LowerToPlan(b.Build({x}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find("f6E2M3FN"), std::string_view::npos) << plan.status().message();
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kS32, {4});
    auto y = b.Op(OpCode::kSqrt, {x}, DType::kS32, {4});
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find("stablehlo.sqrt"), std::string_view::npos);
    EXPECT_NE(plan.status().message().find("i32"), std::string_view::npos);
  }
  {
    ModuleBuilder b;  // narrowing f32 operands to an f16 result
    auto x = b.Param(DType::kF32, {2, 2});
    auto y = b.OpN(OpCode::kDotGeneral, {x, x}, {ir::Type::Tensor(DType::kF16, {2, 2})},
                   {{"lhs_contracting_dimensions", ModuleBuilder::IntList({1})},
                    {"rhs_contracting_dimensions", ModuleBuilder::IntList({0})}});
    auto plan = LowerToPlan(b.Build(y));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  }
}

TEST(LowerTest, MalformedAttributesAreInvalidArgument) {
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2, 3});
    auto y = b.Op(OpCode::kTranspose, {x}, DType::kF32, {3, 2}, {{"permutation", ModuleBuilder::IntList({1, 1})}});
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find("stablehlo.transpose"), std::string_view::npos);
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2, 3});
    auto y = b.Op(OpCode::kSlice, {x}, DType::kF32, {1, 3},
                  {{"start_indices", ModuleBuilder::IntList({1, 0})},
                   {"limit_indices", ModuleBuilder::IntList({3, 3})},
                   {"strides", ModuleBuilder::IntList({1, 1})}});
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2, 3});
    auto y = b.Op(OpCode::kBroadcastInDim, {x}, DType::kF32, {2, 4}, {{"broadcast_dimensions", ModuleBuilder::IntList({0, 1})}});
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2});
    auto y = b.Op(OpCode::kCompare, {x, x}, DType::kPred, {2});  // no comparison_direction
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2});
    auto y = b.Op(OpCode::kAdd, {x, x}, DType::kF32, {3});
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(LowerTest, ReduceBodyIsRecognizedOrRejected) {
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2, 3});
    auto init = b.Constant<float>(DType::kF32, {}, {0.0f});
    std::vector<ir::Region> regions;
    regions.push_back(b.BinaryBody(OpCode::kMaximum, DType::kF32));
    auto y = b.Op(OpCode::kReduce, {x, init}, DType::kF32, {2}, {{"dimensions", ModuleBuilder::IntList({1})}},
                  std::move(regions));
    ExecutionPlan plan = MustLower(b.Build({y}));
    ASSERT_EQ(plan.body.steps.size(), 1u);
    EXPECT_EQ(plan.body.steps[0].kernel, "reduce_max.f32");
    EXPECT_EQ(plan.body.steps[0].params, kernels::KernelParams(kernels::ReduceParams{.dimensions = {1}}));
    EXPECT_EQ(plan.body.steps[0].params.ToString(), "dimensions=[1]");
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2, 3});
    auto init = b.Constant<float>(DType::kF32, {}, {0.0f});
    std::vector<ir::Region> regions;
    regions.push_back(b.BinaryBody(OpCode::kDot, DType::kF32));
    auto y = b.Op(OpCode::kReduce, {x, init}, DType::kF32, {2}, {{"dimensions", ModuleBuilder::IntList({1})}},
                  std::move(regions));
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find("stablehlo.reduce"), std::string_view::npos);
  }
}

TEST(LowerTest, CallsLeftInTheEntryAreRejected) {
  // passes::InlineCalls runs before the lowering; a call reaching it is a caller bug, named.
  ModuleBuilder b;
  auto x = b.Param(DType::kS32, {3});
  b.BeginFunction("double_it");
  auto a = b.Param(DType::kS32, {3});
  auto twice = b.Op(OpCode::kAdd, {a, a}, DType::kS32, {3});
  b.EndFunction({twice});
  auto y = b.OpN(OpCode::kCall, {x}, {ir::Type::Tensor(DType::kS32, {3})}, {{"callee", ir::Attribute(ir::Attribute::Symbol{"double_it"})}});
  auto plan = LowerToPlan(b.Build(y));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("func.call"), std::string_view::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find("inlined"), std::string_view::npos) << plan.status().message();
}

TEST(LowerTest, DotOperandsInMatrixOrderNeedNoTranspose) {
  // lhs [K, M] contracting dim 0, rhs [K, N] contracting dim 0: both read in place.
  ModuleBuilder b;
  auto lhs = b.Param(DType::kF32, {4, 2});
  auto rhs = b.Param(DType::kF32, {4, 3});
  auto y = b.OpN(OpCode::kDotGeneral, {lhs, rhs}, {ir::Type::Tensor(DType::kF32, {2, 3})},
                 {{"lhs_contracting_dimensions", ModuleBuilder::IntList({0})},
                  {"rhs_contracting_dimensions", ModuleBuilder::IntList({0})}});
  ExecutionPlan plan = MustLower(b.Build(y));
  ASSERT_EQ(plan.body.steps.size(), 1u);
  EXPECT_EQ(plan.body.steps[0].kernel, "dot.f32");
  EXPECT_EQ(plan.body.steps[0].params, kernels::KernelParams(kernels::DotParams{.lhs_is_bkm = true}));
  EXPECT_EQ(plan.body.steps[0].params.ToString(), "lhs_is_bkm=true rhs_is_bnk=false");

  // Batch dim last on the lhs: needs a transpose.
  ModuleBuilder b2;
  auto l2 = b2.Param(DType::kF32, {2, 4, 5});  // [M, K, B]
  auto r2 = b2.Param(DType::kF32, {5, 4, 3});  // [B, K, N]
  auto y2 = b2.OpN(OpCode::kDotGeneral, {l2, r2}, {ir::Type::Tensor(DType::kF32, {5, 2, 3})},
                   {{"lhs_batching_dimensions", ModuleBuilder::IntList({2})},
                    {"rhs_batching_dimensions", ModuleBuilder::IntList({0})},
                    {"lhs_contracting_dimensions", ModuleBuilder::IntList({1})},
                    {"rhs_contracting_dimensions", ModuleBuilder::IntList({1})}});
  ExecutionPlan plan2 = MustLower(b2.Build(y2));
  ASSERT_EQ(plan2.body.steps.size(), 2u);
  EXPECT_EQ(plan2.body.steps[0].kernel, "transpose.f32");
  EXPECT_EQ(plan2.body.steps[0].params,
            kernels::KernelParams(kernels::TransposeParams{.permutation = {2, 0, 1}}));
  EXPECT_EQ(plan2.body.steps[1].kernel, "dot.f32");
}

// Checks that no two arena values that are live at the same time overlap, except a value
// and the one a step computes in its place (same bytes, handed over at that step).
void ExpectNoLiveOverlap(const ExecutionPlan& plan) {
  const auto& steps = plan.body.steps;
  // Storage key of a value: arena values by offset range.
  std::vector<int64_t> first(plan.values.size(), -1), last(plan.values.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (ValueId v : steps[s].outputs)
      if (first[v] < 0) first[v] = static_cast<int64_t>(s);
    for (ValueId v : steps[s].inputs) last[v] = static_cast<int64_t>(s);
    for (ValueId v : steps[s].outputs) last[v] = std::max(last[v], static_cast<int64_t>(s));
  }
  for (size_t a = 0; a < plan.values.size(); ++a) {
    const Value& va = plan.values[a];
    if (va.storage != Storage::kArena || first[a] < 0 || va.byte_size == 0) continue;
    EXPECT_EQ(va.index % 64, 0);
    EXPECT_LE(va.index + va.byte_size, plan.arena_size);
    for (size_t b = a + 1; b < plan.values.size(); ++b) {
      const Value& vb = plan.values[b];
      if (vb.storage != Storage::kArena || first[b] < 0 || vb.byte_size == 0) continue;
      bool live_together = first[a] <= last[b] && first[b] <= last[a];
      bool overlap = va.index < vb.index + vb.byte_size && vb.index < va.index + va.byte_size;
      auto handed_over = [&](size_t from, size_t to) {
        if (last[from] != first[to] || va.index != vb.index || va.byte_size != vb.byte_size) return false;
        const Step& step = steps[static_cast<size_t>(first[to])];
        return std::find(step.inputs.begin(), step.inputs.end(), from) != step.inputs.end() &&
               std::find(step.outputs.begin(), step.outputs.end(), to) != step.outputs.end();
      };
      if (handed_over(a, b) || handed_over(b, a)) continue;
      EXPECT_FALSE(live_together && overlap) << "%" << a << " and %" << b << " overlap while live";
    }
  }
}

TEST(LowerTest, ArenaReusesDeadBuffersInAChain) {
  ModuleBuilder b;
  // Complex kernels are not fused (plan/fuse_elementwise.h), so every step is its own.
  auto x = b.Param(DType::kC64, {1024});
  ir::ValueId v = x;
  for (int i = 0; i < 20; ++i) v = b.Op(i % 2 ? OpCode::kExponential : OpCode::kNegate, {v}, DType::kC64, {1024});
  ExecutionPlan plan = MustLower(b.Build({v}));
  // Complex kernels do not fuse but run in place: every step writes over the value it reads,
  // which dies there, so the whole chain runs in the result buffer.
  EXPECT_EQ(plan.arena_size, 0);
  ExpectNoLiveOverlap(plan);
  // Each w is read twice (exp, then add), so exp needs a buffer of its own; the add writes
  // the new w over a dying operand. One arena buffer, reused round the chain, besides the
  // result buffer.
  ModuleBuilder b2;
  auto x2 = b2.Param(DType::kC64, {1024});
  ir::ValueId w = b2.Op(OpCode::kNegate, {x2}, DType::kC64, {1024});
  for (int i = 0; i < 20; ++i) {
    auto e = b2.Op(OpCode::kExponential, {w}, DType::kC64, {1024});
    w = b2.Op(OpCode::kAdd, {w, e}, DType::kC64, {1024});
  }
  ExecutionPlan plan2 = MustLower(b2.Build({w}));
  EXPECT_EQ(plan2.arena_size, 8192);
  ExpectNoLiveOverlap(plan2);
}

// A large splat constant is one scalar constant broadcast when the program runs: the plan
// holds the same few bytes of constants whatever the size.
TEST(LowerTest, LargeSplatConstantsAreNotMaterialized) {
  for (int64_t n : {int64_t{1} << 12, int64_t{1} << 22}) {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {n});
    auto data = std::make_shared<ir::ElementsData>();
    data->type = ir::Type::Tensor(DType::kF32, {n});
    data->splat = true;
    const float two = 2.0f;
    data->bytes.resize(4);
    std::memcpy(data->bytes.data(), &two, 4);
    auto c = b.Op(OpCode::kConstant, {}, DType::kF32, {n},
                  {{"value", ir::Attribute(ir::Attribute::Elements(std::move(data)))}});
    auto y = b.Op(OpCode::kMultiply, {x, c}, DType::kF32, {n});
    ExecutionPlan plan = MustLower(b.Build({y, c}));
    size_t constant_bytes = 0;
    for (const auto& constant : plan.constants) constant_bytes += constant.size();
    EXPECT_EQ(constant_bytes, 4u) << n;
    EXPECT_EQ(plan.body.steps.size(), 2u) << PrintPlan(plan);  // the broadcast (a result) and the multiply
  }
}

TEST(LowerTest, RandomDagsNeverOverlapLiveBuffers) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    ModuleBuilder b;
    std::vector<ir::ValueId> values;
    std::vector<int64_t> sizes;
    for (int i = 0; i < 3; ++i) {
      int64_t n = 1 + rng() % 100;
      values.push_back(b.Param(DType::kF32, {n}));
      sizes.push_back(n);
    }
    for (int i = 0; i < 40; ++i) {
      size_t a = rng() % values.size();
      int64_t n = sizes[a];
      std::vector<size_t> same;
      for (size_t j = 0; j < values.size(); ++j)
        if (sizes[j] == n) same.push_back(j);
      size_t c = same[rng() % same.size()];
      if (rng() % 4 == 0) {
        int64_t m = 1 + rng() % 100;
        values.push_back(b.Op(OpCode::kBroadcastInDim, {b.Op(OpCode::kReshape, {values[a]}, DType::kF32, {n, 1})},
                              DType::kF32, {n, m}, {{"broadcast_dimensions", ModuleBuilder::IntList({0, 1})}}));
        values.back() = b.Op(OpCode::kReshape, {values.back()}, DType::kF32, {n * m});
        sizes.push_back(n * m);
      } else {
        values.push_back(b.Op(OpCode::kAdd, {values[a], values[c]}, DType::kF32, {n}));
        sizes.push_back(n);
      }
    }
    std::vector<ir::ValueId> results;
    for (int i = 0; i < 3; ++i) results.push_back(values[rng() % values.size()]);
    ExecutionPlan plan = MustLower(b.Build(results));
    ExpectNoLiveOverlap(plan);
  }
}

TEST(LowerTest, BitcastCountsI1AsOneBitAndKeepsComplexWithComplex) {
  {
    ModuleBuilder b;  // tensor<3x8xi1> -> tensor<3xui8> and back: two repacking steps
    auto x = b.Param(DType::kPred, {3, 8});
    auto y = b.Op(OpCode::kBitcastConvert, {x}, DType::kU8, {3});
    auto z = b.Op(OpCode::kBitcastConvert, {y}, DType::kPred, {3, 8});
    ExecutionPlan plan = MustLower(b.Build({y, z}));
    EXPECT_NE(testing::FindStep(plan, "bitcast_convert.i1.ui8"), nullptr);
    EXPECT_NE(testing::FindStep(plan, "bitcast_convert.ui8.i1"), nullptr);
  }
  {
    ModuleBuilder b;  // i1 -> i1 shares the bytes
    auto x = b.Param(DType::kPred, {4});
    auto y = b.Op(OpCode::kBitcastConvert, {x}, DType::kPred, {4});
    EXPECT_EQ(testing::CountSteps(MustLower(b.Build({y})).body, "bitcast_convert"), 0);
  }
  {
    ModuleBuilder b;  // complex to complex (C2): complex<f64>[2] <-> complex<f32>[2,2] share the bytes
    auto x = b.Param(DType::kC128, {2});
    auto y = b.Op(OpCode::kBitcastConvert, {x}, DType::kC64, {2, 2});
    auto z = b.Op(OpCode::kBitcastConvert, {y}, DType::kC128, {2});
    EXPECT_EQ(testing::CountSteps(MustLower(b.Build({y, z})).body, "bitcast_convert"), 0);
  }
  struct Bad {
    DType from;
    Dims from_dims;
    DType to;
    Dims to_dims;
    const char* expected;
  };
  const Bad bad[] = {
      // XLA's reading (i1 as 8 bits) is not the specification's.
      {DType::kPred, {3}, DType::kS8, {3}, "expected an operand whose last dimension is 8 (i1: 1 bit, i8: 8 bits)"},
      {DType::kF32, {2}, DType::kPred, {2}, "expected the result shape [2,32] (f32: 32 bits, i1: 1 bit)"},
      {DType::kPred, {2, 16}, DType::kF16, {4}, "expected the result shape [2] (i1: 1 bit, f16: 16 bits)"},
      {DType::kPred, {2}, DType::kPred, {3}, "expected the operand's shape [2] (i1: 1 bit, i1: 1 bit)"},
      // Specification C2: complex only to and from complex, even at equal widths.
      {DType::kC64, {2}, DType::kF64, {2}, "expected both element types complex or neither (specification C2"},
      {DType::kS64, {2}, DType::kC64, {2}, "expected both element types complex or neither (specification C2"},
      {DType::kC128, {2}, DType::kF64, {2, 2}, "expected both element types complex or neither (specification C2"},
      {DType::kF32, {2, 4}, DType::kC128, {2}, "expected both element types complex or neither (specification C2"},
      {DType::kC64, {2}, DType::kPred, {2, 64}, "expected both element types complex or neither (specification C2"},
  };
  for (const Bad& c : bad) {
    ModuleBuilder b;
    auto x = b.Param(c.from, c.from_dims);
    auto y = b.Op(OpCode::kBitcastConvert, {x}, c.to, c.to_dims);
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok()) << c.expected;
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find("stablehlo.bitcast_convert"), std::string_view::npos)
        << plan.status().message();
    EXPECT_NE(plan.status().message().find(c.expected), std::string_view::npos) << plan.status().message();
  }
}

TEST(LowerTest, F8E8M0FnuCeilSignRemainderComputeInF64) {
  // 2^-127 is an f32 denormal the f32 kernels flush; these three ops keep it, as XLA does,
  // by computing in f64. Other ops keep the f32 carrier.
  ModuleBuilder b;
  auto x = b.Param(DType::kF8E8M0FNU, {4});
  auto ceil = b.Op(OpCode::kCeil, {x}, DType::kF8E8M0FNU, {4});
  auto sign = b.Op(OpCode::kSign, {x}, DType::kF8E8M0FNU, {4});
  auto rem = b.Op(OpCode::kRemainder, {x, x}, DType::kF8E8M0FNU, {4});
  auto floor = b.Op(OpCode::kFloor, {x}, DType::kF8E8M0FNU, {4});
  ExecutionPlan plan = MustLower(b.Build({ceil, sign, rem, floor}));
  EXPECT_EQ(testing::CountSteps(plan.body, "ceil.f64"), 1);
  EXPECT_EQ(testing::CountSteps(plan.body, "sign.f64"), 1);
  EXPECT_EQ(testing::CountSteps(plan.body, "remainder.f64"), 1);
  EXPECT_EQ(testing::CountSteps(plan.body, "floor.f32"), 1);
  EXPECT_EQ(testing::CountSteps(plan.body, "convert.f64.f8E8M0FNU"), 3);
}

}  // namespace
}  // namespace stablert::plan
