#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

ir::Module Program() {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {8});
  b.BeginFunction("body");
  auto a = b.Param(DType::kF32, {8});
  auto e1 = b.Op(OpCode::kExponential, {a}, DType::kF32, {8});
  auto e2 = b.Op(OpCode::kExponential, {a}, DType::kF32, {8});
  b.Op(OpCode::kLog, {a}, DType::kF32, {8});  // unused
  auto same = b.Op(OpCode::kConvert, {e2}, DType::kF32, {8});
  b.EndFunction({b.Op(OpCode::kAdd, {e1, same}, DType::kF32, {8})});
  auto r1 = b.OpN(OpCode::kCall, {x}, {ir::Type::Tensor(DType::kF32, {8})},
                  {{"callee", ir::Attribute(ir::Attribute::Symbol{"body"})}});
  auto r2 = b.OpN(OpCode::kCall, {x}, {ir::Type::Tensor(DType::kF32, {8})},
                  {{"callee", ir::Attribute(ir::Attribute::Symbol{"body"})}});
  return b.Build({b.Op(OpCode::kMultiply, {r1[0], r2[0]}, DType::kF32, {8})});
}

TEST(PipelineTest, InlinesSimplifiesMergesAndRemovesInOrder) {
  ir::Module module = Program();
  auto records = RunPipeline(module);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 7u);
  EXPECT_EQ((*records)[0].name, "inline_calls");
  EXPECT_EQ((*records)[0].changes, 2);
  EXPECT_EQ((*records)[1].name, "expand_maps");
  EXPECT_EQ((*records)[1].changes, 0);  // no maps
  EXPECT_EQ((*records)[2].name, "shrink_broadcasts");
  EXPECT_EQ((*records)[2].changes, 0);  // no broadcasts
  EXPECT_EQ((*records)[3].name, "fold_constants");
  EXPECT_EQ((*records)[3].changes, 0);  // no constants
  EXPECT_EQ((*records)[4].name, "simplify");
  EXPECT_EQ((*records)[4].changes, 2);  // the two converts
  EXPECT_EQ((*records)[5].name, "common_subexpressions");
  // Into the first call's ops: its second exp, the other call's two exps, log, convert and add.
  EXPECT_EQ((*records)[5].changes, 6);
  EXPECT_EQ((*records)[6].name, "dead_code");
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<8xf32>) -> (tensor<8xf32>) {
    %10 = stablehlo.exponential %0 : tensor<8xf32>
    %14 = stablehlo.add %10, %10 : tensor<8xf32>
    %9 = stablehlo.multiply %14, %14 : tensor<8xf32>
    stablehlo.return %9 : tensor<8xf32>
  }
}
)");
  EXPECT_NE(PassRecordsToString(*records).find("common_subexpressions: 6 changes"), std::string::npos);
}

TEST(PipelineTest, FoldedConstantsFeedSimplification) {
  // x * (3 - 2) on broadcasts: shrink_broadcasts moves the subtraction onto the scalars,
  // fold_constants computes it, simplify drops the multiplication by one.
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {1000});
  auto wide = [&](float value) {
    return b.Op(OpCode::kBroadcastInDim, {b.Constant<float>(DType::kF32, {}, {value})}, DType::kF32, {1000},
                {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  };
  auto one = b.Op(OpCode::kSubtract, {wide(3.0f), wide(2.0f)}, DType::kF32, {1000});
  ir::Module module = b.Build({b.Op(OpCode::kMultiply, {x, one}, DType::kF32, {1000})});
  auto records = RunPipeline(module);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  EXPECT_EQ((*records)[3].name, "fold_constants");
  EXPECT_EQ((*records)[3].changes, 1);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<1000xf32>) -> (tensor<1000xf32>) {
    stablehlo.return %0 : tensor<1000xf32>
  }
}
)");
}

TEST(PipelineTest, Deterministic) {
  ir::Module first = Program(), second = Program();
  ASSERT_TRUE(RunPipeline(first).ok());
  ASSERT_TRUE(RunPipeline(second).ok());
  EXPECT_EQ(ir::PrintModule(first), ir::PrintModule(second));
}

}  // namespace
}  // namespace stablert::passes
