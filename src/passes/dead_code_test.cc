#include "passes/dead_code.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/test_module_builder.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

const ir::Type kF32x4 = ir::Type::Tensor(DType::kF32, {4});

TEST(DeadCodeTest, UnusedPureOpsGoOpsWithEffectsStay) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto unused_exp = b.Op(OpCode::kExponential, {x}, DType::kF32, {4});
  b.Op(OpCode::kNegate, {unused_exp}, DType::kF32, {4});  // dead, and makes exp dead
  b.OpN(OpCode::kCustomCall, {x}, {kF32x4}, {{"call_target_name", ir::Attribute(std::string("side_effect"))}});
  auto used = b.Op(OpCode::kAbs, {x}, DType::kF32, {4});
  ir::Module module = b.Build({used});
  EXPECT_EQ(RemoveDeadCode(module), 2);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<4xf32>) -> (tensor<4xf32>) {
    %3 = stablehlo.custom_call %0 {call_target_name = "side_effect"} : tensor<4xf32>
    %4 = stablehlo.abs %0 : tensor<4xf32>
    stablehlo.return %4 : tensor<4xf32>
  }
}
)");
}

TEST(DeadCodeTest, InsideLoopBodiesAndWholeUnusedLoops) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4});
  auto make_loop = [&]() {
    std::vector<ir::Region> regions;
    regions.push_back(b.Region({kF32x4}, [&](std::vector<ir::ValueId> args) {
      return std::vector<ir::ValueId>{b.Op(OpCode::kCompare, {args[0], args[0]}, DType::kPred, {})};
    }));
    regions.push_back(b.Region({kF32x4}, [&](std::vector<ir::ValueId> args) {
      b.Op(OpCode::kSine, {args[0]}, DType::kF32, {4});  // dead inside the body
      return std::vector<ir::ValueId>{b.Op(OpCode::kCosine, {args[0]}, DType::kF32, {4})};
    }));
    return b.OpN(OpCode::kWhile, {x}, {kF32x4}, {}, std::move(regions))[0];
  };
  make_loop();  // its result is unused and its regions are pure: removed whole
  auto kept = make_loop();
  ir::Module module = b.Build({kept});
  EXPECT_EQ(RemoveDeadCode(module), 2);
  EXPECT_EQ(ir::PrintModule(module), R"(module @test {
  func.func public @main(%0: tensor<4xf32>) -> (tensor<4xf32>) {
    %12 = stablehlo.while %0 ({
    ^bb0(%7: tensor<4xf32>):
      %8 = stablehlo.compare %7, %7 : (tensor<4xf32>, tensor<4xf32>) -> tensor<i1>
      stablehlo.return %8 : tensor<i1>
    }, {
    ^bb0(%9: tensor<4xf32>):
      %11 = stablehlo.cosine %9 : tensor<4xf32>
      stablehlo.return %11 : tensor<4xf32>
    }) : tensor<4xf32>
    stablehlo.return %12 : tensor<4xf32>
  }
}
)");
}

}  // namespace
}  // namespace stablert::passes
