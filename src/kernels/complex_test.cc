// Complex element types: the scalar semantics of complex_ops.h against std::complex and
// exact special cases (XLA's CPU results), and the complex kernels run by key (elementwise,
// compare, convert, data movement, reduce, dot). Also the f16/bf16 reduction order.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/compare_params.h"
#include "kernels/complex_ops.h"
#include "kernels/data_movement_params.h"
#include "kernels/dot_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"
#include "kernels/scalar_program.h"
#include "kernels/window_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT
using C64 = std::complex<float>;
using C128 = std::complex<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
Array Make(DType dtype, const std::vector<T>& values, Dims dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  Array a(dtype, dims);
  std::memcpy(a.bytes.data(), values.data(), values.size() * sizeof(T));
  return a;
}
template <typename T>
T At(const Array& a, int64_t i) {
  T value;
  std::memcpy(static_cast<void*>(&value), &a.bytes[static_cast<size_t>(i) * sizeof(T)], sizeof(T));
  return value;
}

bool Near(C128 got, C128 want, double rel) {
  return std::abs(got - want) <= rel * std::max(1.0, std::abs(want));
}

std::vector<C128> RandomValues(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> part(-4, 4);
  std::vector<C128> values;
  for (int i = 0; i < count; ++i) values.emplace_back(part(rng), part(rng));
  return values;
}

//===--- Scalar semantics ---===//

TEST(ComplexOps, FiniteValuesAgreeWithStdComplex) {
  for (const C128& x : RandomValues(200, 1)) {
    for (const C128& y : RandomValues(3, 7)) {
      EXPECT_TRUE(Near(cx::Multiply(x, y), x * y, 1e-15));
      EXPECT_TRUE(Near(cx::Divide(x, y), x / y, 1e-15));
      EXPECT_TRUE(Near(cx::Power(x, y), std::pow(x, y), 1e-12)) << x << "^" << y;
    }
    EXPECT_NEAR(cx::Abs(x), std::abs(x), 1e-15 * std::abs(x));
    EXPECT_TRUE(Near(cx::Sqrt(x), std::sqrt(x), 1e-14)) << x;
    EXPECT_TRUE(Near(cx::Rsqrt(x), 1.0 / std::sqrt(x), 1e-14)) << x;
    EXPECT_TRUE(Near(cx::Exp(x), std::exp(x), 1e-14)) << x;
    EXPECT_TRUE(Near(cx::Expm1(x), std::exp(x) - 1.0, 1e-13)) << x;
    EXPECT_TRUE(Near(cx::Log(x), std::log(x), 1e-14)) << x;
    EXPECT_TRUE(Near(cx::Log1p(x), std::log(x + 1.0), 1e-13)) << x;
    EXPECT_TRUE(Near(cx::SinCos<false>(x), std::sin(x), 1e-13)) << x;
    EXPECT_TRUE(Near(cx::SinCos<true>(x), std::cos(x), 1e-13)) << x;
    EXPECT_TRUE(Near(cx::TanTanh<false>(x), std::tanh(x), 1e-13)) << x;
    EXPECT_TRUE(Near(cx::TanTanh<true>(x), std::tan(x), 1e-13)) << x;
    EXPECT_TRUE(Near(cx::Sign(x), x / std::abs(x), 1e-15)) << x;
    EXPECT_TRUE(Near(cx::Logistic(x), 1.0 / (1.0 + std::exp(-x)), 1e-12)) << x;
  }
}

TEST(ComplexOps, SmallArgumentsKeepPrecision) {
  const C128 tiny(1e-20, -3e-21);
  EXPECT_TRUE(Near(cx::Expm1(tiny), tiny, 1e-15));
  EXPECT_TRUE(Near(cx::Log1p(tiny), tiny, 1e-15));
  EXPECT_TRUE(Near(cx::TanTanh<false>(tiny), tiny, 1e-15));
}

TEST(ComplexOps, SpecialValuesMatchXla) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // abs: hypot-like without overflow; (0, 0) -> 0, (inf, inf) -> inf, NaN propagates.
  EXPECT_EQ(cx::Abs(C128(3e300, 4e300)), 5e300);
  EXPECT_EQ(cx::Abs(C128(0, 0)), 0.0);
  EXPECT_EQ(cx::Abs(C128(kInf, kInf)), kInf);
  EXPECT_TRUE(std::isnan(cx::Abs(C128(kInf, nan))));
  // exp keeps a zero imaginary part exact.
  EXPECT_EQ(cx::Exp(C128(kInf, 0)), C128(kInf, 0));
  EXPECT_EQ(cx::Exp(C128(-kInf, 0)), C128(0, 0));
  // divide: zero denominator gives signed infinities, finite / inf gives zeros.
  EXPECT_EQ(cx::Divide(C128(1, 1), C128(0, 0)), C128(kInf, kInf));
  EXPECT_EQ(cx::Divide(C128(1, 2), C128(kInf, 0)), C128(0, 0));
  // multiply rounds as a fused multiply-add: (1 + 1e30i)(1e30 - inf i) = inf - inf i in f32.
  const C64 product = cx::Multiply(C64(1, 1e30f), C64(1e30f, -std::numeric_limits<float>::infinity()));
  EXPECT_EQ(product.real(), std::numeric_limits<float>::infinity());
  EXPECT_EQ(product.imag(), -std::numeric_limits<float>::infinity());
  // sqrt and rsqrt branch values.
  EXPECT_TRUE(Near(cx::Sqrt(C128(-4, 0)), C128(0, 2), 1e-15));  // polar form: real part ~1e-16
  EXPECT_EQ(cx::Sqrt(C128(0, 0)), C128(0, 0));
  EXPECT_EQ(cx::Sqrt(C128(-kInf, 1)), C128(0, kInf));
  const C128 r = cx::Rsqrt(C128(0, 0));
  EXPECT_EQ(r.real(), kInf);
  EXPECT_TRUE(std::isnan(r.imag()));
  // tanh limits.
  EXPECT_EQ(cx::TanTanh<false>(C128(kInf, 1)).real(), 1.0);
  EXPECT_EQ(cx::TanTanh<false>(C128(-1000, 0)), C128(-1, 0));
  // pow: x^0 = 1, 0^c = 0 for c > 0, 1^y = 1.
  EXPECT_EQ(cx::Power(C128(nan, 2), C128(0, 0)), C128(1, 0));
  EXPECT_EQ(cx::Power(C128(0, 0), C128(2, 0)), C128(0, 0));
  EXPECT_EQ(cx::Power(C128(1, 0), C128(nan, 3)), C128(1, 0));
  // compare: EQ ordered on both parts, NE unordered on either.
  EXPECT_EQ(cx::CompareEqNe(C128(nan, 0), C128(nan, 0), 0), 0);
  EXPECT_EQ(cx::CompareEqNe(C128(nan, 0), C128(nan, 0), 1), 1);
  EXPECT_EQ(cx::CompareEqNe(C128(-0.0, 1), C128(0.0, 1), 0), 1);
  // GE/GT/LE/LT: lexicographic on (real, imag); a NaN part compares false.
  EXPECT_EQ(cx::CompareEqNe(C128(0, 1), C128(0, 2), 5), 1);   // LT on the imaginary parts
  EXPECT_EQ(cx::CompareEqNe(C128(0, 9), C128(1, 0), 5), 1);   // LT on the real parts
  EXPECT_EQ(cx::CompareEqNe(C128(1, 0), C128(1, 0), 4), 1);   // LE on equal values
  EXPECT_EQ(cx::CompareEqNe(C128(1, 0), C128(1, 0), 3), 0);   // GT on equal values
  EXPECT_EQ(cx::CompareEqNe(C128(2, -5), C128(1, 5), 2), 1);  // GE
  EXPECT_EQ(cx::CompareEqNe(C128(nan, 0), C128(0, 0), 5), 0);
  EXPECT_EQ(cx::CompareEqNe(C128(0, nan), C128(0, 0), 2), 0);
  // maximum/minimum as XLA's CPU backend: by the real parts, the first operand on ties.
  EXPECT_EQ(cx::MaxOp::Apply(C128(0, 0), C128(0, 1)), C128(0, 0));
  EXPECT_EQ(cx::MaxOp::Apply(C128(1, 5), C128(2, 0)), C128(2, 0));
  EXPECT_EQ(cx::MinOp::Apply(C128(1, 5), C128(2, 0)), C128(1, 5));
  EXPECT_EQ(cx::MaxOp::Apply(C128(0, 0), C128(nan, 0)).real() != 0.0, true);  // NaN real part: the second
  EXPECT_EQ(cx::MinOp::Apply(C128(nan, 0), C128(0, 0)), C128(0, 0));
}

//===--- Kernels by key ---===//

TEST(ComplexKernels, ElementwiseKernelsApplyTheScalarOps) {
  const std::vector<C64> x = {{1, 2}, {-3, 0.5f}, {0, 0}, {2.5f, -1}};
  const std::vector<C64> y = {{0.5f, -1}, {2, 2}, {1, 0}, {-1, 3}};
  Array a = Make(DType::kC64, x), b = Make(DType::kC64, y);
  Array out(DType::kC64, {4});
  RunKernel("multiply.complex<f32>", {&a, &b}, {&out});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(At<C64>(out, i), cx::Multiply(x[i], y[i]));
  RunKernel("divide.complex<f32>", {&a, &b}, {&out});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(At<C64>(out, i), cx::Divide(x[i], y[i]));
  RunKernel("exponential.complex<f32>", {&a}, {&out});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(At<C64>(out, i), cx::Exp(x[i]));
  Array parts(DType::kF32, {4});
  RunKernel("abs.complex<f32>", {&a}, {&parts});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(At<float>(parts, i), cx::Abs(x[i]));
  RunKernel("imag.complex<f32>", {&a}, {&parts});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(At<float>(parts, i), x[i].imag());

  Array re = Make(DType::kF64, std::vector<double>{1, -2}), im = Make(DType::kF64, std::vector<double>{3, -0.0});
  Array made(DType::kC128, {2});
  RunKernel("complex.f64", {&re, &im}, {&made});
  EXPECT_EQ(At<C128>(made, 0), C128(1, 3));
  EXPECT_EQ(At<C128>(made, 1), C128(-2, -0.0));
  EXPECT_TRUE(std::signbit(At<C128>(made, 1).imag()));
}

TEST(ComplexKernels, CompareEqNe) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Array a = Make(DType::kC128, std::vector<C128>{{1, 2}, {1, 2}, {nan, 0}});
  Array b = Make(DType::kC128, std::vector<C128>{{1, 2}, {1, -2}, {nan, 0}});
  Array out(DType::kPred, {3});
  RunKernel("compare.complex<f64>", {&a, &b}, {&out}, CompareParams{.direction = CompareDirection::kEq});
  EXPECT_EQ(GetInt(out, 0), 1);
  EXPECT_EQ(GetInt(out, 1), 0);
  EXPECT_EQ(GetInt(out, 2), 0);
  RunKernel("compare.complex<f64>", {&a, &b}, {&out}, CompareParams{.direction = CompareDirection::kNe});
  EXPECT_EQ(GetInt(out, 0), 0);
  EXPECT_EQ(GetInt(out, 1), 1);
  EXPECT_EQ(GetInt(out, 2), 1);
}

TEST(ComplexKernels, ConvertToAndFromComplex) {
  Array ints = Make(DType::kS32, std::vector<int32_t>{-7, 3});
  Array c(DType::kC128, {2});
  RunKernel("convert.i32.complex<f64>", {&ints}, {&c});
  EXPECT_EQ(At<C128>(c, 0), C128(-7, 0));
  EXPECT_EQ(At<C128>(c, 1), C128(3, 0));
  Array narrow(DType::kC64, {2});
  RunKernel("convert.complex<f64>.complex<f32>", {&c}, {&narrow});
  EXPECT_EQ(At<C64>(narrow, 0), C64(-7, 0));
  Array halves = Make(DType::kC64, std::vector<C64>{{2.75f, 9}, {-1.5f, -4}});
  Array back(DType::kS32, {2});
  RunKernel("convert.complex<f32>.i32", {&halves}, {&back});  // the real part, truncated
  EXPECT_EQ(GetInt(back, 0), 2);
  EXPECT_EQ(GetInt(back, 1), -1);
  Array bf(DType::kBF16, {2});
  RunKernel("convert.complex<f32>.bf16", {&halves}, {&bf});
  EXPECT_EQ(GetDouble(bf, 0), 2.75);
}

TEST(ComplexKernels, DataMovementMovesSixteenByteElements) {
  Array in = Make(DType::kC128, std::vector<C128>{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}}, {2, 3});
  Array out(DType::kC128, {3, 2});
  RunKernel("transpose.complex<f64>", {&in}, {&out}, TransposeParams{.permutation = {1, 0}});
  EXPECT_EQ(At<C128>(out, 0), C128(0, 1));
  EXPECT_EQ(At<C128>(out, 1), C128(6, 7));
  EXPECT_EQ(At<C128>(out, 2), C128(2, 3));
  EXPECT_EQ(At<C128>(out, 5), C128(10, 11));
}

TEST(ComplexKernels, ReduceAndDot) {
  const std::vector<C128> x = {{1, 1}, {2, -1}, {0.5, 3}, {-1, -1}};
  Array in = Make(DType::kC128, x, {2, 2});
  Array init = Make(DType::kC128, std::vector<C128>{{0, 0}}, {});
  init.dims = {};
  Array sum(DType::kC128, {2});
  RunKernel("reduce_add.complex<f64>", {&in, &init}, {&sum}, ReduceParams{.dimensions = {1}});
  EXPECT_EQ(At<C128>(sum, 0), C128(3, 0));
  EXPECT_EQ(At<C128>(sum, 1), C128(-0.5, 2));
  Array one = Make(DType::kC128, std::vector<C128>{{1, 0}}, {});
  one.dims = {};
  Array product(DType::kC128, {2});
  RunKernel("reduce_mul.complex<f64>", {&in, &one}, {&product}, ReduceParams{.dimensions = {0}});
  EXPECT_TRUE(Near(At<C128>(product, 0), x[0] * x[2], 1e-15));

  // [1,2,2] x [1,2,2]
  Array lhs = Make(DType::kC64, std::vector<C64>{{1, 1}, {2, 0}, {0, 1}, {1, -1}}, {1, 2, 2});
  Array rhs = Make(DType::kC64, std::vector<C64>{{1, 0}, {0, 1}, {2, 2}, {1, 1}}, {1, 2, 2});
  Array dot(DType::kC64, {1, 2, 2});
  RunKernel("dot.complex<f32>", {&lhs, &rhs}, {&dot}, DotParams{});
  // row 0: (1+i)*1 + 2*(2+2i) = 5+5i ; (1+i)*i + 2*(1+i) = (-1+i) + (2+2i) = 1+3i
  EXPECT_EQ(At<C64>(dot, 0), C64(5, 5));
  EXPECT_EQ(At<C64>(dot, 1), C64(1, 3));
}

TEST(ComplexKernels, BodyProgramWithComplexConstant) {
  // (x, y) -> x * y + c with c = (0.25, -8) a complex<f64> constant (low and high words).
  const C128 c(0.25, -8);
  int64_t words[2];
  std::memcpy(words, &c, sizeof(c));
  const auto c128 = static_cast<int64_t>(DType::kC128);
  const std::vector<int64_t> code = {1, 5, c128, c128, c128, c128, c128, 2,
                                     2, 2, words[0], 5 + 2, words[1],
                                     2, 42, 3, 0, 1, 0, 0, 40, 4, 3, 2, 0, 0,
                                     1, 4};
  auto program = ScalarProgram::Decode(code, CpuKernels());
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<ScalarSlot> registers(5);
  program->Initialize(registers.data());
  SetSlot(registers[0], C128(1, 2));
  SetSlot(registers[1], C128(3, -1));
  program->Run(registers.data());
  EXPECT_EQ(GetSlot<C128>(registers[4]), cx::Add(cx::Multiply(C128(1, 2), C128(3, -1)), c));
}

//===--- f16/bf16 reductions follow XLA's tree-reduction rewrite ---===//

TEST(HalfReduce, LongSumsKeepPrecisionShortSumsRoundPerStep) {
  Array ones(DType::kBF16, {300});
  for (int64_t i = 0; i < 300; ++i) SetDouble(ones, i, 1.0);
  Array zero(DType::kBF16, {});
  Array out(DType::kBF16, {});
  RunKernel("reduce_add.bf16", {&ones, &zero}, {&out}, ReduceParams{.dimensions = {0}});
  EXPECT_EQ(GetDouble(out, 0), 300.0);  // 256 if every step of one long chain rounded

  Array f16_ones(DType::kF16, {3000});
  for (int64_t i = 0; i < 3000; ++i) SetDouble(f16_ones, i, 1.0);
  Array f16_zero(DType::kF16, {}), f16_out(DType::kF16, {});
  RunKernel("reduce_add.f16", {&f16_ones, &f16_zero}, {&f16_out}, ReduceParams{.dimensions = {0}});
  EXPECT_EQ(GetDouble(f16_out, 0), 3000.0);

  // 32 elements or fewer: one chain, rounded after every step (256 + 1 + 1 + ... stays 256).
  Array short_row(DType::kBF16, {20});
  SetDouble(short_row, 0, 256.0);
  for (int64_t i = 1; i < 20; ++i) SetDouble(short_row, i, 1.0);
  RunKernel("reduce_add.bf16", {&short_row, &zero}, {&out}, ReduceParams{.dimensions = {0}});
  EXPECT_EQ(GetDouble(out, 0), 256.0);
}

TEST(HalfReduce, LongScansAreGroupedAsXlaGroupsThem) {
  // cumsum of 300 bf16 ones: reduce_window with window 300, padding (299, 0).
  Array ones(DType::kBF16, {300});
  for (int64_t i = 0; i < 300; ++i) SetDouble(ones, i, 1.0);
  Array zero(DType::kBF16, {});
  Array out(DType::kBF16, {300});
  RunKernel("reduce_window_add.bf16", {&ones, &zero}, {&out},
            WindowParams{.window_dimensions = {300}, .window_strides = {1}, .base_dilations = {1},
                         .window_dilations = {1}, .padding_low = {299}, .padding_high = {0}});
  EXPECT_EQ(GetDouble(out, 15), 16.0);
  EXPECT_EQ(GetDouble(out, 299), 300.0);  // one chain of 300 rounded steps would stop at 256
  // Reverse exclusive scan: padding (0, 300), 301 outputs, the last one the init value.
  Array reverse(DType::kBF16, {301});
  RunKernel("reduce_window_add.bf16", {&ones, &zero}, {&reverse},
            WindowParams{.window_dimensions = {300}, .window_strides = {1}, .base_dilations = {1},
                         .window_dilations = {1}, .padding_low = {0}, .padding_high = {300}});
  EXPECT_EQ(GetDouble(reverse, 0), 300.0);
  EXPECT_EQ(GetDouble(reverse, 299), 1.0);
  EXPECT_EQ(GetDouble(reverse, 300), 0.0);
  // A window covering the whole dimension runs as a reduce (tree-grouped).
  Array whole(DType::kBF16, {1});
  RunKernel("reduce_window_add.bf16", {&ones, &zero}, {&whole},
            WindowParams{.window_dimensions = {300}, .window_strides = {1}, .base_dilations = {1},
                         .window_dilations = {1}, .padding_low = {0}, .padding_high = {0}});
  EXPECT_EQ(GetDouble(whole, 0), 300.0);
}

}  // namespace
}  // namespace stablert::kernels
