#include "passes/inline_calls.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

ir::Attribute Symbol(const char* name) { return ir::Attribute(ir::Attribute::Symbol{name}); }
const ir::Type kVec3 = ir::Type::Tensor(DType::kS32, {3});

// The last call site of a function takes its ops (keeping their values); earlier ones a
// copy with fresh values.
TEST(InlineCallsTest, CallsBecomeTheCalleesOpsAndUnusedFunctionsGo) {
  ModuleBuilder b;
  auto x = b.Param(DType::kS32, {3});
  b.BeginFunction("double_it");
  auto a = b.Param(DType::kS32, {3});
  auto twice = b.Op(OpCode::kAdd, {a, a}, DType::kS32, {3});
  b.EndFunction({twice});
  auto y = b.OpN(OpCode::kCall, {x}, {kVec3}, {{"callee", Symbol("double_it")}});
  auto z = b.OpN(OpCode::kCall, {y[0]}, {kVec3}, {{"callee", Symbol("double_it")}});
  ir::Module module = b.Build(z);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<3xi32>) -> (tensor<3xi32>) {
    %3 = func.call %0 {callee = @double_it} : tensor<3xi32>
    %4 = func.call %3 {callee = @double_it} : tensor<3xi32>
    stablehlo.return %4 : tensor<3xi32>
  }
  func.func private @double_it(%1: tensor<3xi32>) -> (tensor<3xi32>) {
    %2 = stablehlo.add %1, %1 : tensor<3xi32>
    stablehlo.return %2 : tensor<3xi32>
  }
}
)");
  auto inlined = InlineCalls(module);
  ASSERT_TRUE(inlined.ok()) << inlined.status().ToString();
  EXPECT_EQ(*inlined, 2);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<3xi32>) -> (tensor<3xi32>) {
    %5 = stablehlo.add %0, %0 : tensor<3xi32>
    %2 = stablehlo.add %5, %5 : tensor<3xi32>
    stablehlo.return %2 : tensor<3xi32>
  }
}
)");
}

TEST(InlineCallsTest, CallsInsideCalleesAndLoopBodiesAreInlined) {
  ModuleBuilder b;
  auto x = b.Param(DType::kS32, {3});
  b.BeginFunction("inner");
  auto a = b.Param(DType::kS32, {3});
  auto negated = b.Op(OpCode::kNegate, {a}, DType::kS32, {3});
  b.EndFunction({negated});
  b.BeginFunction("outer");
  auto c = b.Param(DType::kS32, {3});
  auto called = b.OpN(OpCode::kCall, {c}, {kVec3}, {{"callee", Symbol("inner")}});
  auto sum = b.Op(OpCode::kAdd, {called[0], c}, DType::kS32, {3});
  b.EndFunction({sum});
  std::vector<ir::Region> regions;
  regions.push_back(b.Region({kVec3}, [&](std::vector<ir::ValueId> args) {
    return std::vector<ir::ValueId>{b.Op(OpCode::kCompare, {args[0], args[0]}, DType::kPred, {})};
  }));
  regions.push_back(b.Region({kVec3}, [&](std::vector<ir::ValueId> args) {
    return b.OpN(OpCode::kCall, {args[0]}, {kVec3}, {{"callee", Symbol("outer")}});
  }));
  auto loop = b.OpN(OpCode::kWhile, {x}, {kVec3}, {}, std::move(regions));
  ir::Module module = b.Build(loop);
  auto inlined = InlineCalls(module);
  ASSERT_TRUE(inlined.ok()) << inlined.status().ToString();
  EXPECT_EQ(*inlined, 2);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<3xi32>) -> (tensor<3xi32>) {
    %10 = stablehlo.while %0 ({
    ^bb0(%6: tensor<3xi32>):
      %7 = stablehlo.compare %6, %6 : (tensor<3xi32>, tensor<3xi32>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    }, {
    ^bb0(%8: tensor<3xi32>):
      %2 = stablehlo.negate %8 : tensor<3xi32>
      %5 = stablehlo.add %2, %8 : tensor<3xi32>
      stablehlo.return %5 : tensor<3xi32>
    }) : tensor<3xi32>
    stablehlo.return %10 : tensor<3xi32>
  }
}
)");
}

TEST(InlineCallsTest, CompositesAreInlinedUnlessKept) {
  for (bool keep : {false, true}) {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {3});
    b.BeginFunction("my.decomposition");
    auto a = b.Param(DType::kF32, {3});
    auto e = b.Op(OpCode::kExponential, {a}, DType::kF32, {3});
    b.EndFunction({e});
    auto y = b.OpN(OpCode::kComposite, {x}, {ir::Type::Tensor(DType::kF32, {3})},
                   {{"name", ir::Attribute(std::string("my.op"))}, {"decomposition", Symbol("my.decomposition")}});
    ir::Module module = b.Build(y);
    InlineOptions options;
    options.keep_composite = [&](const ir::Operation&) { return keep; };
    auto inlined = InlineCalls(module, options);
    ASSERT_TRUE(inlined.ok()) << inlined.status().ToString();
    EXPECT_EQ(*inlined, keep ? 0 : 1);
    const std::string text = ir::PrintModule(module);
    EXPECT_EQ(text.find("stablehlo.composite") != std::string::npos, keep) << text;
    // A kept composite still needs its decomposition; an inlined one does not.
    EXPECT_EQ(text.find("@my.decomposition(") != std::string::npos, keep) << text;
  }
}

TEST(InlineCallsTest, FunctionsNamedInsideAttributeArraysStay) {
  // approx_top_k's comparator: custom_call {called_computations = [@comparator]}.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  b.BeginFunction("comparator");
  auto l = b.Param(DType::kF32, {});
  auto r = b.Param(DType::kF32, {});
  b.EndFunction({b.Op(OpCode::kCompare, {l, r}, DType::kPred, {})});
  b.BeginFunction("unused");
  b.EndFunction({b.Param(DType::kF32, {})});
  auto y = b.OpN(OpCode::kCustomCall, {x}, {ir::Type::Tensor(DType::kF32, {4})},
                 {{"called_computations", ir::Attribute(ir::Attribute::Array{Symbol("comparator")})}});
  ir::Module module = b.Build(y);
  ASSERT_TRUE(InlineCalls(module).ok());
  ASSERT_EQ(module.functions.size(), 2u);
  EXPECT_EQ(module.functions[1].name, "comparator");
}

TEST(InlineCallsTest, BadCallsAreNamedErrors) {
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kS32, {3});
    b.BeginFunction("f");
    auto a = b.Param(DType::kS32, {3});
    auto r = b.OpN(OpCode::kCall, {a}, {kVec3}, {{"callee", Symbol("f")}});
    b.EndFunction(r);
    ir::Module module = b.Build(b.OpN(OpCode::kCall, {x}, {kVec3}, {{"callee", Symbol("f")}}));
    auto inlined = InlineCalls(module);
    ASSERT_FALSE(inlined.ok());
    EXPECT_EQ(inlined.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(inlined.status().message().find("func.call: recursive call of @f"), std::string_view::npos)
        << inlined.status().message();
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kS32, {3});
    ir::Module module = b.Build(b.OpN(OpCode::kCall, {x}, {kVec3}, {{"callee", Symbol("missing")}}));
    auto inlined = InlineCalls(module);
    ASSERT_FALSE(inlined.ok());
    EXPECT_EQ(inlined.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(inlined.status().message().find("func.call"), std::string_view::npos);
    EXPECT_NE(inlined.status().message().find("unknown function @missing"), std::string_view::npos)
        << inlined.status().message();
  }
  {
    ModuleBuilder b;
    auto x = b.Param(DType::kS32, {3});
    b.BeginFunction("two");
    auto a = b.Param(DType::kS32, {3});
    auto c = b.Param(DType::kS32, {3});
    b.EndFunction({b.Op(OpCode::kAdd, {a, c}, DType::kS32, {3})});
    ir::Module module = b.Build(b.OpN(OpCode::kCall, {x}, {kVec3}, {{"callee", Symbol("two")}}));
    auto inlined = InlineCalls(module);
    ASSERT_FALSE(inlined.ok());
    EXPECT_NE(inlined.status().message().find("passes 1 operands to @two, which takes 2"), std::string_view::npos)
        << inlined.status().message();
  }
}

}  // namespace
}  // namespace stablert::passes
