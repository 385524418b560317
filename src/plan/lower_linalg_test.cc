// Lowering of cholesky, triangular_solve and the LAPACK custom calls: the steps they become,
// and the errors malformed or unsupported programs get at compile time.
#include <gtest/gtest.h>

#include "kernels/call_error_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/linalg_params.h"
#include "plan/lower.h"
#include "ir/test_module_builder.h"

namespace stablert::plan {
namespace {

using ir::Attribute;
using ir::OpCode;
using ir::testing::ModuleBuilder;

std::vector<std::string> Kernels(const ExecutionPlan& plan) {
  std::vector<std::string> kernels;
  for (const Step& step : plan.body.steps) kernels.push_back(step.kernel);
  return kernels;
}

Attribute U8(char c) { return Attribute(Attribute::Integer{c, DType::kU8}); }

// lapack_spotrf_ffi on a [2, 3, 3] batch as JAX's CPU lowering writes it.
Attribute::Dictionary PotrfAttrs(std::vector<int64_t> matrix_layout) {
  Attribute::Array operand_layouts = {ModuleBuilder::IntList(matrix_layout)};
  Attribute::Array result_layouts = {ModuleBuilder::IntList(matrix_layout),
                                     ModuleBuilder::IntList({0})};
  return {{"call_target_name", Attribute(std::string("lapack_spotrf_ffi"))},
          {"api_version", Attribute(Attribute::Integer{4, DType::kS32})},
          {"mhlo.backend_config", Attribute(Attribute::Dictionary{{"uplo", U8('L')}})},
          {"operand_layouts", Attribute(operand_layouts)},
          {"result_layouts", Attribute(result_layouts)}};
}

TEST(LowerLinalgTest, CholeskyAndTriangularSolveAreOneStepEach) {
  ModuleBuilder b;
  auto a = b.Param(DType::kF64, {2, 4, 4});
  auto rhs = b.Param(DType::kF64, {2, 4, 3});
  auto l = b.Op(OpCode::kCholesky, {a}, DType::kF64, {2, 4, 4}, {{"lower", Attribute(true)}});
  auto x = b.Op(OpCode::kTriangularSolve, {l, rhs}, DType::kF64, {2, 4, 3},
                {{"left_side", Attribute(true)},
                 {"lower", Attribute(true)},
                 {"unit_diagonal", Attribute(false)},
                 {"transpose_a", Attribute(ir::EnumValue{ir::EnumKind::kTranspose, 3})}});
  auto plan = LowerToPlan(b.Build({x}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(Kernels(*plan), (std::vector<std::string>{"cholesky.f64", "triangular_solve.f64"}));
  EXPECT_EQ(plan->body.steps[0].params, kernels::KernelParams(kernels::CholeskyParams{.lower = true}));
  EXPECT_EQ(plan->body.steps[1].params,
            kernels::KernelParams(kernels::TriangularSolveParams{
                .left_side = true,
                .lower = true,
                .unit_diagonal = false,
                .transpose = kernels::TriangularTranspose::kAdjoint}));
  EXPECT_EQ(plan->body.steps[1].params.ToString(),
            "left_side=true lower=true unit_diagonal=false transpose=3");
}

TEST(LowerLinalgTest, TriangularSolveShapeMismatchIsInvalid) {
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {4, 4});
  auto rhs = b.Param(DType::kF32, {3, 2});
  auto x = b.Op(OpCode::kTriangularSolve, {a, rhs}, DType::kF32, {3, 2},
                {{"left_side", Attribute(true)},
                 {"lower", Attribute(true)},
                 {"unit_diagonal", Attribute(false)},
                 {"transpose_a", Attribute(ir::EnumValue{ir::EnumKind::kTranspose, 1})}});
  auto plan = LowerToPlan(b.Build({x}));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("stablehlo.triangular_solve"), std::string_view::npos);
}

TEST(LowerLinalgTest, LapackCustomCallTransposesMatricesAroundTheKernel) {
  ModuleBuilder b;
  auto a = b.Param(DType::kF32, {2, 3, 3});
  auto results =
      b.OpN(OpCode::kCustomCall, {a},
            {ir::Type::Tensor(DType::kF32, {2, 3, 3}), ir::Type::Tensor(DType::kS32, {2})},
            PotrfAttrs({1, 2, 0}));
  auto plan = LowerToPlan(b.Build({results[0], results[1]}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(Kernels(*plan),
            (std::vector<std::string>{"transpose.f32", "lapack_potrf.f32", "transpose.f32"}));
  EXPECT_EQ(plan->body.steps[0].params,
            kernels::KernelParams(kernels::TransposeParams{.permutation = {0, 2, 1}}));
  const auto* potrf = plan->body.steps[1].params.As<kernels::LapackPotrfParams>();
  ASSERT_NE(potrf, nullptr);
  EXPECT_TRUE(potrf->lower);
  EXPECT_EQ(plan->body.steps[1].params.ToString(), "lower=true");
}

// jax.ffi.ffi_call("lapack_sgetrf_ffi", (), has_side_effect=True)(): no operands and no
// results. XLA compiles it (its handler would fail decoding the call frame); so does StableRT,
// to a step that fails each execution reaching it and stays although it has no results.
TEST(LowerLinalgTest, LapackCallWithAFrameTheRoutineCannotTakeFailsWhenRun) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2});
  Attribute::Dictionary attrs = {{"call_target_name", Attribute(std::string("lapack_sgetrf_ffi"))},
                                 {"api_version", Attribute(Attribute::Integer{4, DType::kS32})},
                                 {"has_side_effect", Attribute(true)}};
  b.OpN(OpCode::kCustomCall, {}, {}, attrs);
  auto plan = LowerToPlan(b.Build({x}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(Kernels(*plan), (std::vector<std::string>{"call_error"}));
  const auto* error = plan->body.steps[0].params.As<kernels::CallErrorParams>();
  ASSERT_NE(error, nullptr);
  // The execution prefixes the op's origin; the step's message does not repeat it.
  EXPECT_EQ(error->message, "custom_call 'lapack_sgetrf_ffi': expected operands");
}

TEST(LowerLinalgTest, LapackCustomCallErrorsNameTheTarget) {
  {  // wrong result type: compiles, as on XLA, to a step that fails when run
    ModuleBuilder b;
    auto a = b.Param(DType::kF32, {3, 3});
    auto results =
        b.OpN(OpCode::kCustomCall, {a},
              {ir::Type::Tensor(DType::kF32, {3, 3}), ir::Type::Tensor(DType::kS32, {3})},
              PotrfAttrs({0, 1}));
    auto plan = LowerToPlan(b.Build({results[0]}));
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_EQ(Kernels(*plan), (std::vector<std::string>{"call_error"}));
    const auto* error = plan->body.steps[0].params.As<kernels::CallErrorParams>();
    ASSERT_NE(error, nullptr);
    EXPECT_NE(error->message.find("custom_call 'lapack_spotrf_ffi': result 1 is i32[3], expected i32[]"),
              std::string::npos)
        << error->message;
  }
  {  // a matrix layout that is not a permutation of the dimensions
    ModuleBuilder b;
    auto a = b.Param(DType::kF32, {3, 3});
    auto results = b.OpN(OpCode::kCustomCall, {a},
                         {ir::Type::Tensor(DType::kF32, {3, 3}), ir::Type::Tensor(DType::kS32, {})},
                         PotrfAttrs({1, 1}));
    auto plan = LowerToPlan(b.Build({results[0]}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find("operand_layouts"), std::string_view::npos)
        << plan.status().message();
  }
  {  // a row-major matrix layout hands LAPACK the bytes of the transpose: no transpose step
    ModuleBuilder b;
    auto a = b.Param(DType::kF32, {2, 3, 3});
    auto results = b.OpN(OpCode::kCustomCall, {a},
                         {ir::Type::Tensor(DType::kF32, {2, 3, 3}), ir::Type::Tensor(DType::kS32, {2})},
                         PotrfAttrs({2, 1, 0}));
    auto plan = LowerToPlan(b.Build({results[0]}));
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    for (const Step& step : plan->body.steps)
      EXPECT_EQ(step.kernel.find("transpose"), std::string::npos) << step.kernel;
  }
  {  // an unknown LAPACK routine
    ModuleBuilder b;
    auto a = b.Param(DType::kF32, {3, 3});
    Attribute::Dictionary attrs = {{"call_target_name", Attribute(std::string("lapack_sfoo_ffi"))}};
    auto y = b.Op(OpCode::kCustomCall, {a}, DType::kF32, {3, 3}, attrs);
    auto plan = LowerToPlan(b.Build({y}));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find("lapack_sfoo_ffi"), std::string_view::npos)
        << plan.status().message();
  }
}

}  // namespace
}  // namespace stablert::plan
