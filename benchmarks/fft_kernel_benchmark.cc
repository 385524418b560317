// The FFT plans of kernels/fft_plan.h against KissFFT (Debian libkissfft-dev, float only),
// complex64 (and complex128 for ours): 1-D 1024 and 4096, 1000 (radix 2/4/5), 1021 (prime:
// Bluestein here, KissFFT's generic O(n*p) butterfly), and 2-D 256x256 (ours: rows as
// interleaved sequences, then columns in place; KissFFT: kiss_fftnd).
// See docs/benchmarks.md for the command and results.
#include <benchmark/benchmark.h>

#include <complex>
#include <random>
#include <vector>

#include "kernels/fft_plan.h"

#ifdef STABLERT_HAVE_KISSFFT
#include <kissfft/kiss_fft.h>
#include <kissfft/kiss_fftnd.h>
#endif

namespace {

using stablert::kernels::fft::FftPlan;
using C64 = std::complex<float>;

std::vector<C64> Signal(int64_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<C64> x(static_cast<size_t>(n));
  for (auto& v : x) v = {u(rng), u(rng)};
  return x;
}

template <typename T>
void BM_Ours1D(benchmark::State& state) {
  const int64_t n = state.range(0);
  FftPlan<T> plan(n);
  std::vector<std::complex<T>> x(static_cast<size_t>(n)), scratch(static_cast<size_t>(plan.ScratchSize(1)));
  const std::vector<C64> signal = Signal(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = {signal[i].real(), signal[i].imag()};
  for (auto _ : state) {
    plan.Run(x.data(), scratch.data(), 1, false);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
// Long lines (1M, 1000000, the prime 1000003) run four-step / Bluestein on the thread pool.
BENCHMARK(BM_Ours1D<float>)->Arg(1000)->Arg(1021)->Arg(1024)->Arg(4096)->Arg(1 << 20)->Arg(1000000)->Arg(1000003);
BENCHMARK(BM_Ours1D<double>)->Arg(4096)->Arg(1 << 20);

void BM_Ours2D(benchmark::State& state) {
  const int64_t n = state.range(0);
  FftPlan<float> plan(n);
  std::vector<C64> x = Signal(n * n), scratch(static_cast<size_t>(plan.ScratchSize(n)));
  std::vector<C64> group(static_cast<size_t>(16 * n)), group_scratch(static_cast<size_t>(plan.ScratchSize(16)));
  for (auto _ : state) {
    for (int64_t first = 0; first < n; first += 16) {  // rows, 16 at a time, interleaved
      for (int64_t l = 0; l < 16; ++l)
        for (int64_t j = 0; j < n; ++j) group[static_cast<size_t>(l + j * 16)] = x[static_cast<size_t>((first + l) * n + j)];
      plan.Run(group.data(), group_scratch.data(), 16, false);
      for (int64_t l = 0; l < 16; ++l)
        for (int64_t j = 0; j < n; ++j) x[static_cast<size_t>((first + l) * n + j)] = group[static_cast<size_t>(l + j * 16)];
    }
    plan.Run(x.data(), scratch.data(), n, false);  // columns
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * n * n);
}
BENCHMARK(BM_Ours2D)->Arg(256);

#ifdef STABLERT_HAVE_KISSFFT
void BM_Kiss1D(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  kiss_fft_cfg cfg = kiss_fft_alloc(n, 0, nullptr, nullptr);
  std::vector<C64> x = Signal(n), y(static_cast<size_t>(n));
  for (auto _ : state) {
    kiss_fft(cfg, reinterpret_cast<kiss_fft_cpx*>(x.data()), reinterpret_cast<kiss_fft_cpx*>(y.data()));
    benchmark::DoNotOptimize(y.data());
  }
  kiss_fft_free(cfg);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Kiss1D)->Arg(1000)->Arg(1021)->Arg(1024)->Arg(4096);

void BM_Kiss2D(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int dims[2] = {n, n};
  kiss_fftnd_cfg cfg = kiss_fftnd_alloc(dims, 2, 0, nullptr, nullptr);
  std::vector<C64> x = Signal(int64_t{n} * n), y(x.size());
  for (auto _ : state) {
    kiss_fftnd(cfg, reinterpret_cast<kiss_fft_cpx*>(x.data()), reinterpret_cast<kiss_fft_cpx*>(y.data()));
    benchmark::DoNotOptimize(y.data());
  }
  kiss_fft_free(cfg);
  state.SetItemsProcessed(state.iterations() * int64_t{n} * n);
}
BENCHMARK(BM_Kiss2D)->Arg(256);
#endif

}  // namespace

BENCHMARK_MAIN();
