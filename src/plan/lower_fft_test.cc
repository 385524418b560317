// Lowering of fft: kernel choice and compile-time errors.
#include <gtest/gtest.h>

#include <string>

#include "kernels/fft_params.h"
#include "plan/lower.h"
#include "ir/test_module_builder.h"

namespace stablert::plan {
namespace {

using ir::EnumKind;
using ir::OpCode;
using ir::testing::ModuleBuilder;

StatusOr<ExecutionPlan> LowerFftOp(int64_t type, DType in, Dims in_dims, DType out, Dims out_dims,
                                   std::vector<int64_t> lengths) {
  ModuleBuilder b;
  auto x = b.Param(in, in_dims);
  auto y = b.Op(OpCode::kFft, {x}, out, out_dims,
                {{"fft_type", ModuleBuilder::Enum(EnumKind::kFftType, type)},
                 {"fft_length", ModuleBuilder::IntList(std::move(lengths))}});
  return LowerToPlan(b.Build({y}));
}

TEST(LowerFftTest, KernelsPerKind) {
  auto fft = LowerFftOp(0, DType::kC64, {2, 4, 6}, DType::kC64, {2, 4, 6}, {4, 6});
  ASSERT_TRUE(fft.ok()) << fft.status().ToString();
  EXPECT_EQ(fft->body.steps[0].kernel, "fft.complex<f32>");
  auto rfft = LowerFftOp(2, DType::kF64, {3, 10}, DType::kC128, {3, 6}, {10});
  ASSERT_TRUE(rfft.ok()) << rfft.status().ToString();
  EXPECT_EQ(rfft->body.steps[0].kernel, "rfft.f64");
  auto irfft = LowerFftOp(3, DType::kC64, {3, 5}, DType::kF32, {3, 9}, {9});
  ASSERT_TRUE(irfft.ok()) << irfft.status().ToString();
  EXPECT_EQ(irfft->body.steps[0].kernel, "irfft.complex<f32>");
  EXPECT_EQ(irfft->body.steps[0].params,
            kernels::KernelParams(kernels::FftParams{.type = kernels::FftType::kIrfft, .lengths = {9}}));
  EXPECT_EQ(fft->body.steps[0].params.ToString(), "type=0 lengths=[4,6]");
}

TEST(LowerFftTest, BadShapesAndTypesFailAtCompileTime) {
  auto mismatch = LowerFftOp(0, DType::kC64, {2, 8}, DType::kC64, {2, 8}, {16});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("do not match fft_length [16]"), std::string_view::npos)
      << mismatch.status().message();
  auto real_fft = LowerFftOp(0, DType::kF32, {8}, DType::kF32, {8}, {8});
  ASSERT_FALSE(real_fft.ok());
  EXPECT_EQ(real_fft.status().code(), StatusCode::kUnimplemented);
  auto wrong_half = LowerFftOp(2, DType::kF32, {8}, DType::kC64, {8}, {8});
  ASSERT_FALSE(wrong_half.ok());
  EXPECT_NE(wrong_half.status().message().find("expected [5]"), std::string_view::npos) << wrong_half.status().message();
  auto zero_rfft = LowerFftOp(2, DType::kF32, {3, 0}, DType::kC64, {3, 1}, {0});
  ASSERT_FALSE(zero_rfft.ok());
  EXPECT_EQ(zero_rfft.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(LowerFftOp(0, DType::kC64, {3, 0}, DType::kC64, {3, 0}, {0}).ok());  // empty FFT
  auto rank4 = LowerFftOp(0, DType::kC64, {2, 2, 2, 2}, DType::kC64, {2, 2, 2, 2}, {2, 2, 2, 2});
  ASSERT_FALSE(rank4.ok());
  EXPECT_EQ(rank4.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stablert::plan
