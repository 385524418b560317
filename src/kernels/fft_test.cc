#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>

#include "kernels/fft_plan.h"
#include "kernels/fft_params.h"
#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT
using C64 = std::complex<float>;
using C128 = std::complex<double>;

// The DFT by its definition, in long double.
std::vector<std::complex<long double>> NaiveDft(const std::vector<std::complex<long double>>& x, bool inverse) {
  const size_t n = x.size();
  std::vector<std::complex<long double>> y(n), roots(n);
  for (size_t k = 0; k < n; ++k) {
    const long double angle =
        (inverse ? 2 : -2) * std::numbers::pi_v<long double> * static_cast<long double>(k) / static_cast<long double>(n);
    roots[k] = {std::cos(angle), std::sin(angle)};
  }
  for (size_t k = 0; k < n; ++k) {
    std::complex<long double> sum = 0;
    for (size_t j = 0; j < n; ++j) sum += x[j] * roots[(j * k) % n];
    y[k] = sum;
  }
  return y;
}

template <typename T>
double MaxError(const std::vector<std::complex<T>>& got, const std::vector<std::complex<long double>>& want) {
  long double err = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(std::complex<long double>(got[i].real(), got[i].imag()) - want[i]));
    norm = std::max(norm, std::abs(want[i]));
  }
  return static_cast<double>(err / std::max<long double>(norm, 1));
}

template <typename T>
void CheckPlan(int64_t n, int64_t stride, bool inverse, double tolerance) {
  std::mt19937 rng(static_cast<unsigned>(n * 31 + stride));
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<std::complex<T>> data(static_cast<size_t>(n * stride));
  for (auto& v : data) v = {static_cast<T>(uniform(rng)), static_cast<T>(uniform(rng))};
  const std::vector<std::complex<T>> original = data;
  fft::FftPlan<T> plan(n);
  std::vector<std::complex<T>> scratch(static_cast<size_t>(plan.ScratchSize(stride)));
  plan.Run(data.data(), scratch.data(), stride, inverse);
  for (int64_t q = 0; q < stride; ++q) {
    std::vector<std::complex<long double>> x(static_cast<size_t>(n));
    std::vector<std::complex<T>> got(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      const auto v = original[static_cast<size_t>(q + j * stride)];
      x[static_cast<size_t>(j)] = {v.real(), v.imag()};
      got[static_cast<size_t>(j)] = data[static_cast<size_t>(q + j * stride)];
    }
    ASSERT_LT(MaxError(got, NaiveDft(x, inverse)), tolerance)
        << "n=" << n << " stride=" << stride << " inverse=" << inverse << " sequence " << q;
  }
}

TEST(FftPlanTest, EveryLengthUpTo130MatchesTheDefinition) {
  for (int64_t n = 1; n <= 130; ++n) {
    CheckPlan<double>(n, 1, false, 1e-14);
    CheckPlan<double>(n, 1, true, 1e-14);
    CheckPlan<float>(n, 1, false, 2e-6);
  }
}

TEST(FftPlanTest, LargeAndAwkwardLengths) {
  for (int64_t n : {210, 256, 243, 625, 1000, 1024, 2 * 67, 4 * 127, 1009, 3 * 61, 4096}) {
    CheckPlan<double>(n, 1, false, 1e-13);
    CheckPlan<float>(n, 1, true, 5e-6);
  }
}

TEST(FftPlanTest, InterleavedSequences) {
  for (int64_t n : {8, 12, 15, 17, 67}) {
    for (int64_t stride : {2, 3, 7}) {
      CheckPlan<double>(n, stride, false, 1e-14);
      CheckPlan<float>(n, stride, true, 2e-6);
    }
  }
}

// Long lengths run as four-step FFTs (fft_plan.h), for one sequence and interleaved ones;
// 4160 = 64 x 65 (an odd row length), 4096 = 64 x 64 (the inverse).
TEST(FftPlanTest, FourStepLengthsMatchTheDefinition) {
  EXPECT_EQ(fft::FftPlan<float>(4160).split_lengths(), (std::pair<int64_t, int64_t>{64, 65}));
  EXPECT_EQ(fft::FftPlan<float>(1 << 20).split_lengths(), (std::pair<int64_t, int64_t>{1024, 1024}));
  EXPECT_FALSE(fft::FftPlan<float>(2048).splits());
  for (int64_t stride : {1, 3}) {
    CheckPlan<double>(4160, stride, false, 1e-13);
    CheckPlan<float>(4096, stride, true, 5e-6);
  }
}

TEST(FftPlanTest, RadixChoiceAndBluesteinFallback) {
  EXPECT_EQ(fft::FftPlan<float>(1000).radices(), (std::vector<int>{4, 2, 5, 5, 5}));
  EXPECT_EQ(fft::FftPlan<float>(17).radices(), (std::vector<int>{17}));
  EXPECT_TRUE(fft::FftPlan<float>(2 * 67).radices().empty());  // 67 > kMaxDirectRadix
}

// An infinite input gives infinite real parts and finite imaginary parts (no 0 * inf), as
// XLA's CPU backend does.
TEST(FftKernelTest, InfinityDoesNotTurnIntoNaN) {
  Array x(DType::kC64, {8}), y(DType::kC64, {8});
  const C64 values[8] = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {std::numeric_limits<float>::infinity(), 0}, {0, 0}, {2, 0}, {3, 0}};
  std::memcpy(x.bytes.data(), values, sizeof(values));
  for (int64_t type : {0, 1}) {
    RunKernel(KernelKey("fft", {DType::kC64}), {&x}, {&y}, FftParams{static_cast<FftType>(type), {8}});
    const C64* out = reinterpret_cast<const C64*>(y.bytes.data());
    for (int k = 0; k < 8; ++k) {
      EXPECT_TRUE(std::isinf(out[k].real())) << k;
      EXPECT_EQ(std::signbit(out[k].real()), k % 2 == 1) << k;
      EXPECT_TRUE(std::isfinite(out[k].imag())) << k;
    }
  }
}

// Multi-dimensional kinds against separable naive DFTs.
TEST(FftKernelTest, TwoDimensionalKindsMatchTheDefinition) {
  const int64_t batch = 2, n0 = 5, n1 = 6, half = n1 / 2 + 1;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  // Reference: full 2-D DFT of each batch.
  auto dft2 = [&](const std::vector<C128>& in, bool inverse) {
    std::vector<C128> out(in.size());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k0 = 0; k0 < n0; ++k0)
        for (int64_t k1 = 0; k1 < n1; ++k1) {
          std::complex<long double> sum = 0;
          for (int64_t j0 = 0; j0 < n0; ++j0)
            for (int64_t j1 = 0; j1 < n1; ++j1) {
              const long double angle = (inverse ? 2 : -2) * std::numbers::pi_v<long double> *
                                        (static_cast<long double>(j0 * k0 % n0) / n0 + static_cast<long double>(j1 * k1 % n1) / n1);
              const C128 v = in[static_cast<size_t>((b * n0 + j0) * n1 + j1)];
              sum += std::complex<long double>(v.real(), v.imag()) * std::complex<long double>(std::cos(angle), std::sin(angle));
            }
          out[static_cast<size_t>((b * n0 + k0) * n1 + k1)] = {static_cast<double>(sum.real()), static_cast<double>(sum.imag())};
        }
    return out;
  };
  std::vector<C128> signal(static_cast<size_t>(batch * n0 * n1));
  for (auto& v : signal) v = {uniform(rng), uniform(rng)};

  Array x(DType::kC128, {batch, n0, n1}), y(DType::kC128, {batch, n0, n1});
  std::memcpy(x.bytes.data(), signal.data(), x.bytes.size());
  RunKernel(KernelKey("fft", {DType::kC128}), {&x}, {&y}, FftParams{FftType::kFft, {n0, n1}});
  std::vector<C128> want = dft2(signal, false);
  const C128* got = reinterpret_cast<const C128*>(y.bytes.data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_LT(std::abs(got[i] - want[i]), 1e-12) << i;

  RunKernel(KernelKey("fft", {DType::kC128}), {&x}, {&y}, FftParams{FftType::kIfft, {n0, n1}});
  want = dft2(signal, true);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_LT(std::abs(got[i] - want[i] / double(n0 * n1)), 1e-14) << i;

  // RFFT of the real parts: the first n1/2+1 columns of the full transform.
  std::vector<C128> real_signal(signal.size());
  Array r(DType::kF64, {batch, n0, n1}), rf(DType::kC128, {batch, n0, half});
  for (size_t i = 0; i < signal.size(); ++i) {
    real_signal[i] = signal[i].real();
    SetDouble(r, static_cast<int64_t>(i), signal[i].real());
  }
  RunKernel(KernelKey("rfft", {DType::kF64}), {&r}, {&rf}, FftParams{FftType::kRfft, {n0, n1}});
  want = dft2(real_signal, false);
  const C128* rgot = reinterpret_cast<const C128*>(rf.bytes.data());
  for (int64_t row = 0; row < batch * n0; ++row)
    for (int64_t k = 0; k < half; ++k)
      ASSERT_LT(std::abs(rgot[row * half + k] - want[static_cast<size_t>(row * n1 + k)]), 1e-12);

  // IRFFT of that half spectrum gives the real signal back.
  Array back(DType::kF64, {batch, n0, n1});
  RunKernel(KernelKey("irfft", {DType::kC128}), {&rf}, {&back}, FftParams{FftType::kIrfft, {n0, n1}});
  for (size_t i = 0; i < signal.size(); ++i)
    ASSERT_NEAR(GetDouble(back, static_cast<int64_t>(i)), signal[i].real(), 1e-14) << i;
}

// IRFFT ignores the imaginary parts of the k = 0 and k = n/2 terms.
TEST(FftKernelTest, InverseRealIgnoresImaginaryPartsOfSelfConjugateTerms) {
  const int64_t n = 8;
  Array z(DType::kC64, {5}), z_clean(DType::kC64, {5}), out(DType::kF32, {n}), out_clean(DType::kF32, {n});
  const C64 spectrum[5] = {{1, 5}, {2, -1}, {0.5f, 0.25f}, {-1, 2}, {3, -7}};
  C64 clean[5];
  std::memcpy(clean, spectrum, sizeof(clean));
  clean[0].imag(0);
  clean[4].imag(0);
  std::memcpy(z.bytes.data(), spectrum, sizeof(spectrum));
  std::memcpy(z_clean.bytes.data(), clean, sizeof(clean));
  RunKernel(KernelKey("irfft", {DType::kC64}), {&z}, {&out}, FftParams{FftType::kIrfft, {n}});
  RunKernel(KernelKey("irfft", {DType::kC64}), {&z_clean}, {&out_clean}, FftParams{FftType::kIrfft, {n}});
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(GetDouble(out, i), GetDouble(out_clean, i), 1e-6);
  // Ignored whatever they hold, NaN and infinity included; in a batch of lines as well.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t lines = 20;
  Array zs(DType::kC64, {lines, 5}), zs_clean(DType::kC64, {lines, 5}), outs(DType::kF32, {lines, n}),
      outs_clean(DType::kF32, {lines, n});
  for (int64_t l = 0; l < lines; ++l) {
    C64 line[5];
    std::memcpy(line, spectrum, sizeof(line));
    line[0].imag(l % 2 == 0 ? nan : inf);
    line[4].imag(l % 2 == 0 ? -inf : nan);
    std::memcpy(zs.bytes.data() + l * sizeof(line), line, sizeof(line));
    std::memcpy(zs_clean.bytes.data() + l * sizeof(clean), clean, sizeof(clean));
  }
  RunKernel(KernelKey("irfft", {DType::kC64}), {&zs}, {&outs}, FftParams{FftType::kIrfft, {n}});
  RunKernel(KernelKey("irfft", {DType::kC64}), {&zs_clean}, {&outs_clean}, FftParams{FftType::kIrfft, {n}});
  for (int64_t i = 0; i < lines * n; ++i) EXPECT_EQ(GetDouble(outs, i), GetDouble(outs_clean, i)) << i;
}


// Many lines (more than one interleaved group, with a partial last group) give the same
// result as transforming each line alone; RFFT then IRFFT gives the signal back.
TEST(FftKernelTest, ManyLinesMatchOneLineAtATime) {
  const int64_t lines = 37, n = 12, half = n / 2 + 1;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Array x(DType::kC128, {lines, n}), y(DType::kC128, {lines, n}), r(DType::kF64, {lines, n});
  auto* xs = reinterpret_cast<C128*>(x.bytes.data());
  for (int64_t i = 0; i < lines * n; ++i) {
    xs[i] = {uniform(rng), uniform(rng)};
    SetDouble(r, i, xs[i].real());
  }
  RunKernel(KernelKey("fft", {DType::kC128}), {&x}, {&y}, FftParams{FftType::kFft, {n}});
  fft::FftPlan<double> plan(n);
  std::vector<C128> scratch(static_cast<size_t>(plan.ScratchSize(1)));
  const auto* ys = reinterpret_cast<const C128*>(y.bytes.data());
  for (int64_t l = 0; l < lines; ++l) {
    std::vector<C128> line(xs + l * n, xs + (l + 1) * n);
    plan.Run(line.data(), scratch.data(), 1, false);
    for (int64_t k = 0; k < n; ++k) ASSERT_LT(std::abs(ys[l * n + k] - line[static_cast<size_t>(k)]), 1e-13);
  }
  Array spectrum(DType::kC128, {lines, half}), back(DType::kF64, {lines, n});
  RunKernel(KernelKey("rfft", {DType::kF64}), {&r}, {&spectrum}, FftParams{FftType::kRfft, {n}});
  RunKernel(KernelKey("irfft", {DType::kC128}), {&spectrum}, {&back}, FftParams{FftType::kIrfft, {n}});
  for (int64_t i = 0; i < lines * n; ++i) ASSERT_NEAR(GetDouble(back, i), GetDouble(r, i), 1e-14) << i;
}

// RFFT and IRFFT of even lengths (packed half-length path, incl. a Bluestein half) and odd
// lengths against the definition; IRFFT against the Hermitian extension of its input.
TEST(FftKernelTest, RealTransformsMatchTheDefinition) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int64_t n : {1, 2, 4, 6, 10, 16, 15, 134, 1000}) {
    const int64_t lines = 19, half = n / 2 + 1;
    Array r(DType::kF64, {lines, n}), spectrum(DType::kC128, {lines, half});
    for (int64_t i = 0; i < lines * n; ++i) SetDouble(r, i, uniform(rng));
    RunKernel(KernelKey("rfft", {DType::kF64}), {&r}, {&spectrum}, FftParams{FftType::kRfft, {n}});
    const auto* got = reinterpret_cast<const C128*>(spectrum.bytes.data());
    for (int64_t l = 0; l < lines; ++l) {
      std::vector<std::complex<long double>> x(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) x[static_cast<size_t>(j)] = GetDouble(r, l * n + j);
      auto want = NaiveDft(x, false);
      for (int64_t k = 0; k < half; ++k) {
        const auto d = std::complex<long double>(got[l * half + k].real(), got[l * half + k].imag()) - want[static_cast<size_t>(k)];
        ASSERT_LT(static_cast<double>(std::abs(d)), 1e-12 * static_cast<double>(n)) << "n=" << n << " k=" << k;
      }
    }
    // IRFFT of an arbitrary half spectrum (imaginary parts at k = 0 and n/2 included).
    Array z(DType::kC128, {lines, half}), back(DType::kF64, {lines, n});
    auto* zs = reinterpret_cast<C128*>(z.bytes.data());
    for (int64_t i = 0; i < lines * half; ++i) zs[i] = {uniform(rng), uniform(rng)};
    RunKernel(KernelKey("irfft", {DType::kC128}), {&z}, {&back}, FftParams{FftType::kIrfft, {n}});
    for (int64_t l = 0; l < lines; ++l) {
      std::vector<std::complex<long double>> full(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) {
        const C128 v = k < half ? zs[l * half + k] : std::conj(zs[l * half + n - k]);
        full[static_cast<size_t>(k)] = {v.real(), v.imag()};
      }
      auto want = NaiveDft(full, true);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_NEAR(GetDouble(back, l * n + j), static_cast<double>(want[static_cast<size_t>(j)].real()) / n, 1e-13)
            << "n=" << n << " j=" << j;
    }
  }
}


// Single-precision kernels against the double-precision ones (checked against the definition
// above) on the same input: batches of lines of many lengths (partial groups, groups smaller
// than 16 to occupy the threads, Bluestein and four-step lengths, even and odd real lengths),
// out of place and in place (input and output one buffer, as with a donated argument).
// Scalar i of a real or complex array (complex: real and imaginary parts in turn).
double ScalarAt(const Array& a, int64_t i) {
  switch (a.dtype) {
    case DType::kC64: return reinterpret_cast<const float*>(a.bytes.data())[i];
    case DType::kC128: return reinterpret_cast<const double*>(a.bytes.data())[i];
    default: return GetDouble(a, i);
  }
}
int64_t ScalarCount(const Array& a) { return a.size() * (a.dtype == DType::kC64 || a.dtype == DType::kC128 ? 2 : 1); }

double MaxRelativeDifference(const Array& got, const Array& want) {
  EXPECT_EQ(ScalarCount(got), ScalarCount(want));
  double err = 0, norm = 0;
  for (int64_t i = 0; i < ScalarCount(want); ++i) {
    const double w = ScalarAt(want, i), g = ScalarAt(got, i);
    err = std::max(err, std::abs(g - w));
    norm = std::max(norm, std::abs(w));
  }
  return err / std::max(norm, 1.0);
}

Array Widened(const Array& a) {
  Array wide(a.dtype == DType::kC64 ? DType::kC128 : DType::kF64, a.dims);
  if (a.dtype == DType::kC64) {
    const auto* from = reinterpret_cast<const C64*>(a.bytes.data());
    auto* to = reinterpret_cast<C128*>(wide.bytes.data());
    for (int64_t i = 0; i < a.size(); ++i) to[i] = {from[i].real(), from[i].imag()};
  } else {
    for (int64_t i = 0; i < a.size(); ++i) SetDouble(wide, i, GetDouble(a, i));
  }
  return wide;
}

Array RandomArray(DType dtype, Dims dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  Array a(dtype, std::move(dims));
  if (dtype == DType::kC64) {
    auto* v = reinterpret_cast<C64*>(a.bytes.data());
    for (int64_t i = 0; i < a.size(); ++i) v[i] = {uniform(rng), uniform(rng)};
  } else {
    for (int64_t i = 0; i < a.size(); ++i) SetDouble(a, i, uniform(rng));
  }
  return a;
}

TEST(FftKernelTest, SinglePrecisionBatchesMatchDoublePrecision) {
  for (int64_t n : {6, 64, 1000, 1021, 1024, 8192}) {
    for (int64_t lines : {1, 3, 16, 21, 64}) {
      if (n * lines > (int64_t{1} << 17)) continue;
      for (FftType type : {FftType::kFft, FftType::kIfft}) {
        const Array x = RandomArray(DType::kC64, {lines, n}, static_cast<unsigned>(n + lines));
        Array y(DType::kC64, {lines, n}), in_place = x;
        const Array x_wide = Widened(x);
        Array want(DType::kC128, {lines, n});
        RunKernel(KernelKey("fft", {DType::kC64}), {&x}, {&y}, FftParams{type, {n}});
        RunKernel(KernelKey("fft", {DType::kC64}), {&in_place}, {&in_place}, FftParams{type, {n}});
        RunKernel(KernelKey("fft", {DType::kC128}), {&x_wide}, {&want}, FftParams{type, {n}});
        EXPECT_LT(MaxRelativeDifference(y, want), 2e-6) << "n=" << n << " lines=" << lines;
        EXPECT_EQ(in_place.bytes, y.bytes) << "n=" << n << " lines=" << lines;
      }
    }
  }
  for (int64_t n : {6, 7, 64, 1000, 2050, 8192}) {
    for (int64_t lines : {1, 3, 16, 21}) {
      const int64_t half = n / 2 + 1;
      const Array x = RandomArray(DType::kF32, {lines, n}, static_cast<unsigned>(n * lines));
      const Array x_wide = Widened(x);
      Array spectrum(DType::kC64, {lines, half}), want(DType::kC128, {lines, half});
      RunKernel(KernelKey("rfft", {DType::kF32}), {&x}, {&spectrum}, FftParams{FftType::kRfft, {n}});
      RunKernel(KernelKey("rfft", {DType::kF64}), {&x_wide}, {&want}, FftParams{FftType::kRfft, {n}});
      EXPECT_LT(MaxRelativeDifference(spectrum, want), 2e-6) << "rfft n=" << n << " lines=" << lines;
      const Array z = RandomArray(DType::kC64, {lines, half}, static_cast<unsigned>(n + 7 * lines));
      const Array z_wide = Widened(z);
      Array back(DType::kF32, {lines, n}), back_want(DType::kF64, {lines, n});
      RunKernel(KernelKey("irfft", {DType::kC64}), {&z}, {&back}, FftParams{FftType::kIrfft, {n}});
      RunKernel(KernelKey("irfft", {DType::kC128}), {&z_wide}, {&back_want}, FftParams{FftType::kIrfft, {n}});
      EXPECT_LT(MaxRelativeDifference(back, back_want), 2e-6) << "irfft n=" << n << " lines=" << lines;
    }
  }
}

// Multi-dimensional single-precision transforms (every axis kind: lines, short rows, column
// blocks) against the double-precision kernels, out of place and in place.
TEST(FftKernelTest, SinglePrecisionMultiDimensionalMatchDoublePrecision) {
  const Dims dims = {3, 40, 24, 48};
  for (size_t rank : {2, 3}) {
    std::vector<int64_t> lengths(dims.end() - static_cast<std::ptrdiff_t>(rank), dims.end());
    for (FftType type : {FftType::kFft, FftType::kIfft}) {
      const Array x = RandomArray(DType::kC64, dims, static_cast<unsigned>(rank));
      Array y(DType::kC64, dims), in_place = x, want(DType::kC128, dims);
      const Array x_wide = Widened(x);
      RunKernel(KernelKey("fft", {DType::kC64}), {&x}, {&y}, FftParams{type, lengths});
      RunKernel(KernelKey("fft", {DType::kC64}), {&in_place}, {&in_place}, FftParams{type, lengths});
      RunKernel(KernelKey("fft", {DType::kC128}), {&x_wide}, {&want}, FftParams{type, lengths});
      EXPECT_LT(MaxRelativeDifference(y, want), 2e-6) << "rank " << rank;
      EXPECT_EQ(in_place.bytes, y.bytes) << "rank " << rank;
    }
    Dims half_dims = dims;
    half_dims.back() = dims.back() / 2 + 1;
    const Array r = RandomArray(DType::kF32, dims, static_cast<unsigned>(10 + rank));
    const Array r_wide = Widened(r);
    Array spectrum(DType::kC64, half_dims), want(DType::kC128, half_dims);
    RunKernel(KernelKey("rfft", {DType::kF32}), {&r}, {&spectrum}, FftParams{FftType::kRfft, lengths});
    RunKernel(KernelKey("rfft", {DType::kF64}), {&r_wide}, {&want}, FftParams{FftType::kRfft, lengths});
    EXPECT_LT(MaxRelativeDifference(spectrum, want), 2e-6) << "rfft rank " << rank;
    const Array spectrum_wide = Widened(spectrum);
    Array back(DType::kF32, dims), back_want(DType::kF64, dims);
    RunKernel(KernelKey("irfft", {DType::kC64}), {&spectrum}, {&back}, FftParams{FftType::kIrfft, lengths});
    RunKernel(KernelKey("irfft", {DType::kC128}), {&spectrum_wide}, {&back_want}, FftParams{FftType::kIrfft, lengths});
    EXPECT_LT(MaxRelativeDifference(back, back_want), 2e-6) << "irfft rank " << rank;
    EXPECT_LT(MaxRelativeDifference(back, r), 2e-6) << "irfft(rfft(x)) rank " << rank;
  }
}

}  // namespace
}  // namespace stablert::kernels
