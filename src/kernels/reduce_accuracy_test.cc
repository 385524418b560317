// Accuracy of long float sums (kernels/accumulate.h): reduce over inner, outer and
// multiple dimensions, reduce_window and dot, against long double references. A single
// running sum misses these bounds by orders of magnitude; pairwise accumulation meets them.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dot_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"
#include "kernels/window_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

template <typename T>
Array Scalar(DType dtype, T v) {
  return ArrayOf<T>(dtype, {}, {v});
}

double RelativeError(double got, long double exact) {
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / std::fabs(exact));
}

constexpr int64_t k16M = int64_t{1} << 24;

TEST(ReduceAccuracyTest, SixteenMillionTenthsF32) {
  // A running f32 sum stalls at 2^21 (0.1 is then below half an ulp): 12% low.
  std::vector<float> x(static_cast<size_t>(k16M), 0.1f);
  Array in = ArrayOf(DType::kF32, {k16M}, x), init = Scalar(DType::kF32, 0.0f), out(DType::kF32, {});
  RunKernel("reduce_add.f32", {&in, &init}, {&out}, ReduceParams{.dimensions = {0}});
  const long double exact = static_cast<long double>(0.1f) * k16M;
  EXPECT_LT(RelativeError(ElementAt<float>(out, 0), exact), 3e-7) << ElementAt<float>(out, 0);
}

TEST(ReduceAccuracyTest, MixedMagnitudesAndSignsF32AndF64) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int64_t n = int64_t{1} << 22;
  std::vector<float> f(static_cast<size_t>(n));
  std::vector<double> d(static_cast<size_t>(n));
  long double exact_f = 0, exact_d = 0, magnitude_f = 0, magnitude_d = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double sign = (i % 2) ? -1.0 : 1.0;
    const double v = sign * (i % 7 == 0 ? 1e4 * unit(rng) : 1e-3 * unit(rng)) + 0.25;
    f[static_cast<size_t>(i)] = static_cast<float>(v);
    d[static_cast<size_t>(i)] = v;
    exact_f += f[static_cast<size_t>(i)];
    exact_d += v;
    magnitude_f += std::fabs(f[static_cast<size_t>(i)]);
    magnitude_d += std::fabs(v);
  }
  Array in_f = ArrayOf(DType::kF32, {n}, f), init_f = Scalar(DType::kF32, 0.0f), out_f(DType::kF32, {});
  RunKernel("reduce_add.f32", {&in_f, &init_f}, {&out_f}, ReduceParams{.dimensions = {0}});
  Array in_d = ArrayOf(DType::kF64, {n}, d), init_d = Scalar(DType::kF64, 0.0), out_d(DType::kF64, {});
  RunKernel("reduce_add.f64", {&in_d, &init_d}, {&out_d}, ReduceParams{.dimensions = {0}});
  // Error bound of pairwise summation: (leaf depth + log2 n) u sum |x|.
  EXPECT_LT(std::fabs(ElementAt<float>(out_f, 0) - exact_f), 80 * 0x1p-24 * magnitude_f);
  EXPECT_LT(std::fabs(ElementAt<double>(out_d, 0) - exact_d), 80 * 0x1p-53 * magnitude_d);
}

TEST(ReduceAccuracyTest, OuterAndMultipleReducedDimensions) {
  // (R, K) over 0, (K1, R, K2) over 1, (R1, K, R2) over {0, 2}: every output sums 0.1f many
  // times, accumulated across rows (not within a contiguous row).
  struct Case {
    Dims dims;
    std::vector<int64_t> reduced;
  };
  const Case cases[] = {{{1 << 20, 16}, {0}}, {{3, 1 << 18, 5}, {1}}, {{1 << 16, 3, 40}, {0, 2}}, {{1 << 22, 1}, {0}}};
  for (const Case& c : cases) {
    int64_t count = 1, per_output = 1;
    for (int64_t d : c.dims) count *= d;
    for (int64_t d : c.reduced) per_output *= c.dims[static_cast<size_t>(d)];
    Dims out_dims;
    for (size_t d = 0; d < c.dims.size(); ++d)
      if (std::find(c.reduced.begin(), c.reduced.end(), static_cast<int64_t>(d)) == c.reduced.end())
        out_dims.push_back(c.dims[d]);
    std::vector<float> x(static_cast<size_t>(count), 0.1f);
    Array in = ArrayOf(DType::kF32, c.dims, x), init = Scalar(DType::kF32, 0.0f), out(DType::kF32, out_dims);
    RunKernel("reduce_add.f32", {&in, &init}, {&out}, ReduceParams{.dimensions = c.reduced});
    const long double exact = static_cast<long double>(0.1f) * per_output;
    for (int64_t o = 0; o < out.size(); ++o)
      ASSERT_LT(RelativeError(ElementAt<float>(out, o), exact), 3e-7) << "case with " << per_output << " per output, at " << o;
  }
}

TEST(ReduceAccuracyTest, CascadeKeepsExactSumsAndInit) {
  // Small integers: every grouping is exact, so the cascade must neither drop nor repeat a
  // contribution, and the init value is counted once.
  std::mt19937 rng(9);
  for (int trial = 0; trial < 20; ++trial) {
    Dims dims = {1 + static_cast<int64_t>(rng() % 300), 1 + static_cast<int64_t>(rng() % 4),
                 1 + static_cast<int64_t>(rng() % 90), 1 + static_cast<int64_t>(rng() % 3)};
    std::vector<int64_t> reduced;
    for (int64_t d = 0; d < 4; ++d)
      if (rng() % 2) reduced.push_back(d);
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<double> x(static_cast<size_t>(count));
    for (double& v : x) v = static_cast<double>(static_cast<int>(rng() % 11) - 5);
    Dims out_dims;
    for (int64_t d = 0; d < 4; ++d)
      if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) out_dims.push_back(dims[static_cast<size_t>(d)]);
    Array in = ArrayOf(DType::kF64, dims, x), init = Scalar(DType::kF64, 3.0), out(DType::kF64, out_dims);
    RunKernel("reduce_add.f64", {&in, &init}, {&out}, ReduceParams{.dimensions = reduced});
    std::vector<double> want(static_cast<size_t>(out.size()), 3.0);
    Dims index(4, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t o = 0;
      for (int64_t d = 0; d < 4; ++d)
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) o = o * dims[static_cast<size_t>(d)] + index[static_cast<size_t>(d)];
      want[static_cast<size_t>(o)] += x[static_cast<size_t>(i)];
      for (int64_t d = 3; d >= 0; --d) {
        if (++index[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
        index[static_cast<size_t>(d)] = 0;
      }
    }
    for (int64_t o = 0; o < out.size(); ++o) ASSERT_EQ(ElementAt<double>(out, o), want[static_cast<size_t>(o)]) << trial;
  }
}

TEST(ReduceAccuracyTest, ComplexSum) {
  const int64_t n = int64_t{1} << 22;
  std::vector<std::complex<float>> x(static_cast<size_t>(n), {0.1f, -0.3f});
  Array in = ArrayOf(DType::kC64, {n}, x), init = Scalar(DType::kC64, std::complex<float>(0, 0)), out(DType::kC64, {});
  RunKernel(Key("reduce_add", DType::kC64), {&in, &init}, {&out}, ReduceParams{.dimensions = {0}});
  const auto got = ElementAt<std::complex<float>>(out, 0);
  EXPECT_LT(RelativeError(got.real(), static_cast<long double>(0.1f) * n), 3e-7) << got.real();
  EXPECT_LT(RelativeError(got.imag(), static_cast<long double>(-0.3f) * n), 3e-7) << got.imag();
  // Outer dimension: (n / 4, 4) over 0.
  Array in2 = ArrayOf(DType::kC64, {n / 4, 4}, x), out2(DType::kC64, {4});
  RunKernel(Key("reduce_add", DType::kC64), {&in2, &init}, {&out2}, ReduceParams{.dimensions = {0}});
  for (int64_t o = 0; o < 4; ++o)
    EXPECT_LT(RelativeError(ElementAt<std::complex<float>>(out2, o).real(), static_cast<long double>(0.1f) * (n / 4)), 3e-7)
        << ElementAt<std::complex<float>>(out2, o).real() << " " << ElementAt<std::complex<float>>(out2, o).imag();
}

TEST(ReduceAccuracyTest, SignedZerosAndSpecialsAsOneRunningSum) {
  const int64_t n = 5000;
  std::vector<float> zeros(static_cast<size_t>(n), -0.0f);
  Array in = ArrayOf(DType::kF32, {n}, zeros), out(DType::kF32, {});
  Array minus = Scalar(DType::kF32, -0.0f), plus = Scalar(DType::kF32, 0.0f);
  RunKernel("reduce_add.f32", {&in, &minus}, {&out}, ReduceParams{.dimensions = {0}});
  EXPECT_TRUE(std::signbit(ElementAt<float>(out, 0)));
  RunKernel("reduce_add.f32", {&in, &plus}, {&out}, ReduceParams{.dimensions = {0}});
  EXPECT_FALSE(std::signbit(ElementAt<float>(out, 0)));
  Array cols = ArrayOf(DType::kF32, {n / 2, 2}, zeros), out2(DType::kF32, {2});
  RunKernel("reduce_add.f32", {&cols, &minus}, {&out2}, ReduceParams{.dimensions = {0}});
  EXPECT_TRUE(std::signbit(ElementAt<float>(out2, 0)) && std::signbit(ElementAt<float>(out2, 1)));
  std::vector<float> x(static_cast<size_t>(n), 1.0f);
  x[4000] = INFINITY;
  Array with_inf = ArrayOf(DType::kF32, {n}, x);
  RunKernel("reduce_add.f32", {&with_inf, &plus}, {&out}, ReduceParams{.dimensions = {0}});
  EXPECT_EQ(ElementAt<float>(out, 0), INFINITY);
  x[100] = -INFINITY;
  Array with_both = ArrayOf(DType::kF32, {n}, x);
  RunKernel("reduce_add.f32", {&with_both, &plus}, {&out}, ReduceParams{.dimensions = {0}});
  EXPECT_TRUE(std::isnan(ElementAt<float>(out, 0)));
}

TEST(ReduceAccuracyTest, LongWindowSums) {
  // 1-D windows of 100,000 tenths with stride 50,000 (leaves of 32 one running sum each: a
  // few ulps; one running sum over the window would be 3e-3 off), and a whole-dimension
  // window (the reduce kernel).
  const int64_t n = 1 << 20, window = 100000, stride = 50000;
  std::vector<float> x(static_cast<size_t>(n), 0.1f);
  Array in = ArrayOf(DType::kF32, {n}, x), init = Scalar(DType::kF32, 0.0f);
  const int64_t outputs = (n - window) / stride + 1;
  Array out(DType::kF32, {outputs});
  RunKernel("reduce_window_add.f32", {&in, &init}, {&out},
            WindowParams{.window_dimensions = {window}, .window_strides = {stride}, .base_dilations = {1},
                         .window_dilations = {1}, .padding_low = {0}, .padding_high = {0}});
  for (int64_t o = 0; o < outputs; ++o)
    ASSERT_LT(RelativeError(ElementAt<float>(out, o), static_cast<long double>(0.1f) * window), 6e-7) << o;
  Array whole(DType::kF32, {1});
  RunKernel("reduce_window_add.f32", {&in, &init}, {&whole},
            WindowParams{.window_dimensions = {n}, .window_strides = {1}, .base_dilations = {1},
                         .window_dilations = {1}, .padding_low = {0}, .padding_high = {0}});
  EXPECT_LT(RelativeError(ElementAt<float>(whole, 0), static_cast<long double>(0.1f) * n), 3e-7);
}

TEST(ReduceAccuracyTest, LongDotContractions) {
  const int64_t k = int64_t{1} << 22;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(k)), b(static_cast<size_t>(3 * k));
  for (float& v : a) v = unit(rng);
  for (float& v : b) v = unit(rng);
  // lhs [1,1,K] against rhs [1,K,1] and [1,1,K] (dot products), and rhs [1,K,3] (rows).
  Array lhs = ArrayOf(DType::kF32, {1, 1, k}, a);
  std::vector<float> column(b.begin(), b.begin() + k);
  Array rhs_kn = ArrayOf(DType::kF32, {1, k, 1}, column), rhs_nk = ArrayOf(DType::kF32, {1, 1, k}, column);
  Array rhs_rows = ArrayOf(DType::kF32, {1, k, 3}, b);
  long double exact = 0;
  std::vector<long double> exact_rows(3, 0);
  for (int64_t i = 0; i < k; ++i) {
    exact += static_cast<long double>(a[static_cast<size_t>(i)]) * column[static_cast<size_t>(i)];
    for (int64_t j = 0; j < 3; ++j)
      exact_rows[static_cast<size_t>(j)] += static_cast<long double>(a[static_cast<size_t>(i)]) * b[static_cast<size_t>(i * 3 + j)];
  }
  Array out(DType::kF32, {1, 1, 1});
  RunKernel("dot.f32", {&lhs, &rhs_kn}, {&out}, DotParams{});
  EXPECT_LT(RelativeError(ElementAt<float>(out, 0), exact), 3e-7);
  RunKernel("dot.f32", {&lhs, &rhs_nk}, {&out}, DotParams{.rhs_is_bnk = true});
  EXPECT_LT(RelativeError(ElementAt<float>(out, 0), exact), 3e-7);
  Array out_rows(DType::kF32, {1, 1, 3});
  RunKernel("dot.f32", {&lhs, &rhs_rows}, {&out_rows}, DotParams{});
  for (int64_t j = 0; j < 3; ++j) EXPECT_LT(RelativeError(ElementAt<float>(out_rows, j), exact_rows[static_cast<size_t>(j)]), 3e-7);
}

}  // namespace
}  // namespace stablert::kernels
