// The "dot.f32" kernel's paths on the same products: StableRT's loops (one thread, as
// the executor runs products too small to split), oneDNN's matmul primitive and libxsmm's
// kernels (created once, then executed; tiled over the process's cores on StableRT's pool,
// timed by the wall clock, and on the calling thread alone), and (BM_Prepared) the path the
// prepare function chooses for matrix-vector products in every layout. Sets the crossovers
// kMinOneDnnMacs in kernels/dot.cc and xsmm::kMaxMidDim in kernels/xsmm_matmul.h. Also prints which oneDNN implementation each element type would get.
// See docs/benchmarks.md for the command and results.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <random>
#include <vector>

#include "base/large_blocks.h"
#include "kernels/dot_params.h"
#include "kernels/onednn_matmul.h"
#include "kernels/xsmm_matmul.h"
#include "kernels/registry.h"
#include "kernels/simd/dispatch.h"

namespace {

using namespace stablert;
using namespace stablert::kernels;

// An array in memory as a device buffer holds it (base/large_blocks.h: 64-byte aligned, huge
// pages from 4 MiB): operands at 16 mod 64 bytes, as a std::vector's, run oneDNN's 256^3 product
// 16% slower (164 against 141 us on one core of an Intel Xeon).
class Block {
 public:
  explicit Block(size_t count)
      : count_(count), data_(static_cast<float*>(AllocateLargeBlock(std::max<size_t>(count, 1) * sizeof(float)))) {
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~Block() { FreeLargeBlock(data_); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  float* data() const { return data_; }
  float* begin() const { return data_; }
  float* end() const { return data_ + count_; }

 private:
  size_t count_;
  float* data_;
};

struct Product {
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
  Block lhs, rhs, out;
  std::vector<BufferView> in, outs;
  DotParams params;  // [B,M,K] x [B,K,N]
  KernelArgs args;

  Product(int64_t b, int64_t m, int64_t k, int64_t n)
      : lhs_dims{b, m, k}, rhs_dims{b, k, n}, out_dims{b, m, n},
        lhs(static_cast<size_t>(b * m * k)), rhs(static_cast<size_t>(b * k * n)), out(static_cast<size_t>(b * m * n)) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& v : lhs) v = u(rng);
    for (float& v : rhs) v = u(rng);
    std::fill(out.begin(), out.end(), 0.0f);
    in = {{lhs.data(), DType::kF32, lhs_dims, b * m * k}, {rhs.data(), DType::kF32, rhs_dims, b * k * n}};
    outs = {{out.data(), DType::kF32, out_dims, b * m * n}};
    args.inputs = in;
    args.outputs = outs;
    args.params = &params;
  }
};

void SetCounters(benchmark::State& state, int64_t b, int64_t m, int64_t k, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(b * m * k * n),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Loops(benchmark::State& state) {
  const int64_t b = state.range(0), m = state.range(1), k = state.range(2), n = state.range(3);
  Product p(b, m, k, n);
  // Without prepared state the kernel runs its loops.
  KernelFn fn = CpuKernels().Find("dot.f32");
  for (auto _ : state) {
    Status status = fn(KernelContext{}, p.args);
    benchmark::DoNotOptimize(p.out.data());
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  SetCounters(state, b, m, k, n);
}

void OneDnn(benchmark::State& state, int threads) {
  const int64_t b = state.range(0), m = state.range(1), k = state.range(2), n = state.range(3);
  Product p(b, m, k, n);
  onednn::MatmulShape shape = onednn::DotShape(p.args);
  auto prepared = onednn::PrepareMatmul(shape, threads);
  if (!prepared.ok()) {
    state.SkipWithError(prepared.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    Status status = onednn::RunMatmul(prepared->get(), p.args);
    benchmark::DoNotOptimize(p.out.data());
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  SetCounters(state, b, m, k, n);
}

// libxsmm's generated kernels, also beyond xsmm::kMaxMidDim (to see the crossover): tiled
// over the process's cores (wall clock), and on the calling thread alone.
void Small(benchmark::State& state, int threads) {
  const int64_t b = state.range(0), m = state.range(1), k = state.range(2), n = state.range(3);
  Product p(b, m, k, n);
  auto prepared = xsmm::PrepareSmallMatmul(onednn::DotShape(p.args), /*max_dim=*/1024, threads);
  if (!prepared.ok()) {
    state.SkipWithError(prepared.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    Status status = xsmm::RunSmallMatmul(prepared->get(), p.args);
    benchmark::DoNotOptimize(p.out.data());
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  SetCounters(state, b, m, k, n);
  state.counters["parts"] = xsmm::PreparedParts(prepared->get());
}

void BM_Small(benchmark::State& state) { Small(state, 0); }
void BM_SmallOneThread(benchmark::State& state) { Small(state, 1); }

// libxsmm's row tiles on the pool, range 4 tiles per thread (xsmm::kTilesPerThread).
void BM_SmallTiles(benchmark::State& state) {
  const int64_t b = state.range(0), m = state.range(1), k = state.range(2), n = state.range(3);
  Product p(b, m, k, n);
  auto prepared = xsmm::PrepareSmallMatmul(onednn::DotShape(p.args), /*max_dim=*/1024, 0, state.range(4));
  if (!prepared.ok()) {
    state.SkipWithError(prepared.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    Status status = xsmm::RunSmallMatmul(prepared->get(), p.args);
    benchmark::DoNotOptimize(p.out.data());
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  SetCounters(state, b, m, k, n);
  state.counters["parts"] = xsmm::PreparedParts(prepared->get());
}

void TileShapes(benchmark::internal::Benchmark* bench) {
  for (int64_t s : {128, 192, 256, 384})
    for (int64_t tiles : {1, 2, 4, 8}) bench->Args({1, s, s, s, tiles});
}

// The step as the executor runs it: the path the prepare function chooses (matrix-vector
// products: dot_matvec.h), with rhs stored [K,N] (range 4 = 0) or [N,K] (1) and lhs stored
// [M,K] (range 5 = 0) or [K,M] (1).
void BM_Prepared(benchmark::State& state) {
  const int64_t b = state.range(0), m = state.range(1), k = state.range(2), n = state.range(3);
  Product p(b, m, k, n);
  p.params.rhs_is_bnk = state.range(4) != 0;
  p.params.lhs_is_bkm = state.range(5) != 0;
  const std::vector<int64_t> rhs_bnk_dims = {b, n, k}, lhs_bkm_dims = {b, k, m};
  if (p.params.rhs_is_bnk) p.in[1].dims = rhs_bnk_dims;
  if (p.params.lhs_is_bkm) p.in[0].dims = lhs_bkm_dims;
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("dot.f32");
  auto prepared = entry->prepare(p.args);
  if (!prepared.ok()) {
    state.SkipWithError(prepared.status().ToString().c_str());
    return;
  }
  KernelArgs args = p.args;
  args.state = prepared->state.get();
  for (auto _ : state) {
    Status status = entry->fn(KernelContext{}, args);
    benchmark::DoNotOptimize(p.out.data());
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  SetCounters(state, b, m, k, n);
  state.counters["GB/s"] = benchmark::Counter(4.0 * static_cast<double>(b * (m * k + k * n + m * n)),
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void MatVecShapes(benchmark::internal::Benchmark* bench) {
  for (int64_t rhs_bnk : {0, 1}) bench->Args({1, 1, 4096, 4096, rhs_bnk, 0})->Args({1, 1, 1024, 1024, rhs_bnk, 0});
  for (int64_t lhs_bkm : {0, 1}) bench->Args({1, 4096, 4096, 1, 0, lhs_bkm})->Args({1, 1024, 1024, 1, 0, lhs_bkm});
  bench->Args({1, 256, 256, 1, 0, 0})->Args({1, 1, 256, 256, 0, 0})->Args({1, 1, 256, 256, 1, 0});
}

// Tiled over the process's cores (StableRT's pool), and on the calling thread alone.
void BM_OneDnn(benchmark::State& state) { OneDnn(state, 0); }
void BM_OneDnnOneThread(benchmark::State& state) { OneDnn(state, 1); }

void Shapes(benchmark::internal::Benchmark* bench) {
  for (int64_t s : {8, 16, 24, 32, 48, 64, 96, 128, 256}) bench->Args({1, s, s, s});
  bench->Args({512, 32, 32, 32})->Args({4096, 8, 8, 8});
  bench->Args({1, 1, 256, 256})->Args({1, 256, 256, 1})->Args({1, 4, 64, 64})->Args({16, 16, 16, 16});
  bench->Args({1, 1, 4096, 4096})->Args({64, 128, 128, 128})->Args({1, 1024, 1024, 1024});
  // Loop bodies of benchmarks/workloads.py: the stacking scan's carry product, an LSTM
  // cell's input and recurrent products (batch 16, 64 -> 4 * 128).
  bench->Args({1, 16, 128, 128})->Args({1, 16, 64, 512})->Args({1, 16, 128, 512});
  bench->Args({1, 128, 16, 512})->Args({1, 16, 512, 128});
  // Around the libxsmm/oneDNN crossover (kernels/xsmm_matmul.h).
  bench->Args({1, 64, 128, 128})->Args({1, 128, 128, 64})->Args({1, 32, 256, 128})->Args({1, 256, 64, 64});
  // Mid-size products, where libxsmm's row tiles and oneDNN's tiles compete.
  for (int64_t s : {192, 384, 512}) bench->Args({1, s, s, s});
  bench->Args({1, 128, 512, 512})->Args({1, 512, 512, 128})->Args({1, 64, 512, 512})->Args({2, 256, 256, 256});
  // Attention at batch 4, 8 heads, 256 positions, 64 per head: probabilities times values,
  // queries times keys.
  bench->Args({32, 256, 256, 64})->Args({32, 256, 64, 256});
  bench->Args({64, 256, 256, 256})->Args({1, 32, 256, 256})->Args({1, 64, 256, 256})->Args({1, 128, 256, 256});
  // One of the four row tiles oneDNN's path cuts 1024^3 into on two cores.
  bench->Args({1, 256, 1024, 1024})->Args({1, 2048, 2048, 2048});
}

BENCHMARK(BM_Loops)->Apply(Shapes);
// Wall clock; the CPU column is the whole process's (the pool's workers included), which
// stays readable when other processes share the cores.
BENCHMARK(BM_OneDnn)->Apply(Shapes)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_Small)->Apply(Shapes)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_OneDnnOneThread)->Apply(Shapes);
BENCHMARK(BM_SmallOneThread)->Apply(Shapes);
BENCHMARK(BM_SmallTiles)->Apply(TileShapes)->UseRealTime();
BENCHMARK(BM_Prepared)->Apply(MatVecShapes)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  // STABLERT_ISA caps Highway's, oneDNN's and libxsmm's code as at client creation.
  if (Status status = simd::ApplyIsaSetting(); !status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    onednn::MatmulShape shape{dtype, 1, 256, 256, 256, false, false};
    auto prepared = onednn::PrepareMatmul(shape);
    std::printf("oneDNN matmul %s: %s\n", DTypeName(dtype).data(),
                prepared.ok() ? onednn::ImplementationName(prepared->get()) : prepared.status().ToString().c_str());
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
