// The oneDNN path of "dot.f32" (and "dot.bf16") against the loop path and a double-precision reference:
// every stored layout, batches, matrix-vector and K == 1 products, one thread and
// oneDNN's team; empty products never reach oneDNN; the prepare function's choice.
#include "kernels/onednn_matmul.h"
#include "kernels/dot.h"
#include "kernels/dot_matvec.h"
#include "kernels/dot_params.h"
#include "kernels/xsmm_matmul.h"

#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::ArgsWith;
using testing::GetDouble;
using testing::SetDouble;

struct Case {
  int64_t b, m, k, n;
};

struct Operands {
  Array lhs, rhs;
  Operands(const Case& c, bool lhs_bkm, bool rhs_bnk, std::mt19937& rng)
      : lhs(DType::kF32, lhs_bkm ? Dims{c.b, c.k, c.m} : Dims{c.b, c.m, c.k}),
        rhs(DType::kF32, rhs_bnk ? Dims{c.b, c.n, c.k} : Dims{c.b, c.k, c.n}) {
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < lhs.size(); ++i) SetDouble(lhs, i, u(rng));
    for (int64_t i = 0; i < rhs.size(); ++i) SetDouble(rhs, i, u(rng));
  }
};

// One output of the product in double precision, and the sum of its terms' magnitudes.
struct ReferenceOutput {
  double sum = 0, magnitude = 0;
};
ReferenceOutput ReferenceAt(const Case& c, const Operands& x, bool lhs_bkm, bool rhs_bnk, int64_t b, int64_t m,
                            int64_t n) {
  ReferenceOutput reference;
  for (int64_t k = 0; k < c.k; ++k) {
    const double l = GetDouble(x.lhs, lhs_bkm ? (b * c.k + k) * c.m + m : (b * c.m + m) * c.k + k);
    const double r = GetDouble(x.rhs, rhs_bnk ? (b * c.n + n) * c.k + k : (b * c.k + k) * c.n + n);
    reference.sum += l * r;
    reference.magnitude += std::fabs(l * r);
  }
  return reference;
}

// Checks `out` against the double-precision product: within a flat f32 sum's error bound.
void ExpectProduct(const Case& c, const Operands& x, bool lhs_bkm, bool rhs_bnk, const Array& out, const char* what) {
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t n = 0; n < c.n; ++n) {
        const auto [sum, magnitude] = ReferenceAt(c, x, lhs_bkm, rhs_bnk, b, m, n);
        const double got = GetDouble(out, (b * c.m + m) * c.n + n);
        ASSERT_NEAR(got, sum, std::ldexp(1.0, -24) * static_cast<double>(c.k + 2) * magnitude)
            << what << " b=" << c.b << " m=" << c.m << " k=" << c.k << " n=" << c.n << " lhs_bkm=" << lhs_bkm
            << " rhs_bnk=" << rhs_bnk << " at " << b << "," << m << "," << n;
      }
}

// Checks 300 sampled outputs of `out` (the last one among them) against the double-precision
// product plus `addend`.
void ExpectSampledProduct(const Case& c, const Operands& x, bool lhs_bkm, bool rhs_bnk, const Array& addend,
                          const Array& out, std::mt19937& rng, const std::string& what) {
  std::uniform_int_distribution<int64_t> pick_b(0, c.b - 1), pick_m(0, c.m - 1), pick_n(0, c.n - 1);
  for (int sample = 0; sample < 300; ++sample) {
    const bool last = sample == 0;
    const int64_t b = last ? c.b - 1 : pick_b(rng), m = last ? c.m - 1 : pick_m(rng), n = last ? c.n - 1 : pick_n(rng);
    const auto [sum, magnitude] = ReferenceAt(c, x, lhs_bkm, rhs_bnk, b, m, n);
    const int64_t at = (b * c.m + m) * c.n + n;
    const double added = GetDouble(addend, at);
    ASSERT_NEAR(GetDouble(out, at), added + sum, std::ldexp(1.0, -24) * (c.k + 4) * (magnitude + std::fabs(added)))
        << what << " at " << b << "," << m << "," << n;
  }
}

std::vector<BufferView> Views(std::initializer_list<const Array*> arrays) {
  std::vector<BufferView> views;
  for (const Array* a : arrays) views.push_back(a->View());
  return views;
}

TEST(OneDnnMatmulTest, MatchesLoopsInEveryLayout) {
  std::mt19937 rng(7);
  const Case cases[] = {{1, 64, 64, 64},  {1, 37, 53, 29}, {5, 16, 24, 8},   {3, 1, 300, 17}, {2, 17, 300, 1},
                        {1, 1, 1, 1},     {2, 19, 1, 23},  {1, 1, 4096, 64}, {1, 8, 3000, 9}, {64, 16, 16, 16},
                        {1, 130, 70, 150}, {3, 100, 90, 120}, {1, 40, 500, 100}, {1, 333, 77, 80},
                        {1, 1000, 300, 40}};
  for (const Case& c : cases)
    for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm)
      for (int rhs_bnk = 0; rhs_bnk < 2; ++rhs_bnk)
        for (int threads : {1, 2, 3}) {
          Operands x(c, lhs_bkm, rhs_bnk, rng);
          Array loops(DType::kF32, {c.b, c.m, c.n}), onednn(DType::kF32, {c.b, c.m, c.n});
          std::vector<BufferView> in = Views({&x.lhs, &x.rhs});
          std::vector<BufferView> out_loops = Views({&loops}), out_onednn = Views({&onednn});
          DotParams params{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk != 0};
          // Without state the registered kernel runs its loops.
          ASSERT_TRUE(CpuKernels().Find("dot.f32")(KernelContext{}, ArgsWith(in, out_loops, params)).ok());
          onednn::MatmulShape shape = onednn::DotShape(ArgsWith(in, out_onednn, params));
          EXPECT_EQ(shape.k, c.k);
          auto state = onednn::PrepareMatmul(shape, threads);
          ASSERT_TRUE(state.ok()) << state.status().ToString();
          EXPECT_STRNE(onednn::ImplementationName(state->get()), "");
          EXPECT_EQ(onednn::PreparedTileCount(state->get()), onednn::TileCount(shape, threads));
          Status status = onednn::RunMatmul(state->get(), ArgsWith(in, out_onednn, params));
          ASSERT_TRUE(status.ok()) << status.ToString();
          ExpectProduct(c, x, lhs_bkm, rhs_bnk, loops, "loops");
          ExpectProduct(c, x, lhs_bkm, rhs_bnk, onednn, "oneDNN");
        }
}

TEST(OneDnnMatmulTest, CutsLargeProductsIntoTilesForTheThreads) {
  using onednn::MatmulShape;
  auto shape = [](int64_t b, int64_t m, int64_t n, int64_t k) { return MatmulShape{DType::kF32, b, m, n, k}; };
  // Below kMinSplitMacs, or with one thread: one tile.
  EXPECT_EQ(onednn::TileCount(shape(1, 64, 64, 64), 2), 1);
  EXPECT_EQ(onednn::TileCount(shape(1, 1024, 1024, 1024), 1), 1);
  // Batches first, then the longer of M and N.
  EXPECT_EQ(onednn::TileCount(shape(64, 128, 128, 128), 2), 2);
  EXPECT_EQ(onednn::TileCount(shape(3, 100, 90, 120), 2), 2);
  EXPECT_EQ(onednn::TileCount(shape(1, 256, 256, 256), 2), 2);
  EXPECT_EQ(onednn::TileCount(shape(1, 40, 500, 100), 2), 2);
  // From 2^28 multiply-adds, two tiles per thread; four when the contraction runs in blocks;
  // one on the gemm:jit driver.
  const auto large = [&](int64_t b, int64_t m, int64_t n, int64_t k) {
    const MatmulShape s = shape(b, m, n, k);
    return onednn::OnGemmJit(s) ? 2 : onednn::ContractionBlock(s) ? 8 : 4;
  };
  EXPECT_EQ(onednn::TileCount(shape(1, 1024, 1024, 1024), 2), large(1, 1024, 1024, 1024));
  EXPECT_EQ(onednn::TileCount(shape(1, 2048, 2048, 2048), 2), large(1, 2048, 2048, 2048));
  EXPECT_EQ(onednn::TileCount(shape(4, 512, 512, 512), 2), large(4, 512, 512, 512));
  // Rows go in multiples of 16: 8 rows are one tile however long the contraction.
  EXPECT_EQ(onednn::TileCount(shape(1, 8, 8, 32768), 2), 1);
  EXPECT_EQ(onednn::TileCount(shape(1, 32, 16, 4096), 2), 2);
}

// One thread budget: oneDNN's work runs on StableRT's pool, never on an OpenMP team of its own.
TEST(OneDnnMatmulTest, StartsNoThreadsBeyondThePool) {
  ThreadPool::Shared();  // the budget's workers
  const int before = testing::ProcessThreadCount();
  ASSERT_GT(before, 0);
  std::mt19937 rng(9);
  for (const Case& c : {Case{1, 512, 512, 512}, Case{8, 128, 128, 128}, Case{1, 64, 64, 64}}) {
    Operands x(c, false, false, rng);
    Array out(DType::kF32, {c.b, c.m, c.n});
    std::vector<BufferView> in = Views({&x.lhs, &x.rhs}), outs = Views({&out});
    DotParams params{};
    auto state = onednn::PrepareMatmul(onednn::DotShape(ArgsWith(in, outs, params)));
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    ASSERT_TRUE(onednn::RunMatmul(state->get(), ArgsWith(in, outs, params)).ok());
    ExpectProduct(c, x, false, false, out, "oneDNN");
  }
  EXPECT_EQ(testing::ProcessThreadCount(), before);
}

TEST(OneDnnMatmulTest, RunsConcurrentlyFromSeveralThreads) {
  std::mt19937 rng(8);
  const Case c{2, 48, 40, 56};
  Operands x(c, false, true, rng);
  std::vector<BufferView> in = Views({&x.lhs, &x.rhs});
  DotParams params{.rhs_is_bnk = true};
  Array probe(DType::kF32, {c.b, c.m, c.n});
  std::vector<BufferView> probe_out = Views({&probe});
  auto state = onednn::PrepareMatmul(onednn::DotShape(ArgsWith(in, probe_out, params)));
  ASSERT_TRUE(state.ok());
  std::vector<Array> outs(4, Array(DType::kF32, {c.b, c.m, c.n}));
  std::vector<Status> statuses(outs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < outs.size(); ++t)
    threads.emplace_back([&, t] {
      std::vector<BufferView> out = Views({&outs[t]});
      for (int i = 0; i < 20 && statuses[t].ok(); ++i) statuses[t] = onednn::RunMatmul(state->get(), ArgsWith(in, out, params));
    });
  for (auto& thread : threads) thread.join();
  for (size_t t = 0; t < outs.size(); ++t) {
    ASSERT_TRUE(statuses[t].ok()) << statuses[t].ToString();
    ExpectProduct(c, x, false, true, outs[t], "concurrent");
  }
}

TEST(OneDnnMatmulTest, EmptyProductsStayOnTheLoops) {
  const Case cases[] = {{0, 40, 40, 40}, {1, 0, 40, 40}, {1, 40, 40, 0}, {1, 40, 0, 40}, {2, 64, 0, 64}};
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("dot.f32");
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(entry->prepare, nullptr);
  for (const Case& c : cases) {
    Array lhs(DType::kF32, {c.b, c.m, c.k}), rhs(DType::kF32, {c.b, c.k, c.n}), out(DType::kF32, {c.b, c.m, c.n});
    for (int64_t i = 0; i < out.size(); ++i) SetDouble(out, i, 5.0);  // overwritten with zeros when K == 0
    std::vector<BufferView> in = Views({&lhs, &rhs}), outs = Views({&out});
    DotParams params{};
    EXPECT_EQ(onednn::PrepareMatmul(onednn::DotShape(ArgsWith(in, outs, params))).status().code(),
              StatusCode::kUnimplemented);
    auto prepared = entry->prepare(ArgsWith(in, outs, params));
    ASSERT_TRUE(prepared.ok());
    EXPECT_EQ(prepared->state, nullptr);
    EXPECT_FALSE(prepared->single_call);
    testing::RunKernel("dot.f32", {&lhs, &rhs}, {&out}, params);
    for (int64_t i = 0; i < out.size(); ++i) ASSERT_EQ(GetDouble(out, i), 0.0);
  }
}

TEST(OneDnnMatmulTest, PrepareChoosesThePath) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("dot.f32");
  ASSERT_NE(entry, nullptr);
  struct Expectation {
    Case c;
    bool rhs_bnk;
    DotPath path;
  };
  // Products over 2^20 multiply-adds with a dim over 64 go to libxsmm only where oneDNN runs
  // on brgemm (AVX-512); below it oneDNN's gemm:jit is faster (xsmm_matmul.h).
  const DotPath mid = onednn::F32OnGemmJit() ? DotPath::kOneDnn : DotPath::kSmall;
  const Expectation expectations[] = {
      {{1, 8, 8, 8}, false, DotPath::kSmall},          {{1, 16, 16, 16}, false, DotPath::kSmall},
      {{1, 32, 32, 32}, false, DotPath::kSmall},       {{512, 32, 32, 32}, false, DotPath::kSmall},
      {{1, 1, 64, 64}, false, DotPath::kSmall},        {{1, 64, 65, 64}, false, DotPath::kSmall},
      // Up to 512 per dim, in tiles on the pool beyond 2^20 multiply-adds while the rhs fits
      // the L2 (at most 384 x 384 elements).
      {{1, 16, 128, 128}, false, DotPath::kSmall},     {{1, 128, 16, 512}, false, DotPath::kSmall},
      {{1, 16, 128, 512}, false, DotPath::kSmall},     {{1, 128, 128, 128}, false, mid},
      {{1, 256, 256, 256}, false, mid},    {{1, 384, 384, 384}, false, mid},
      {{1, 512, 256, 512}, false, mid},    {{1, 512, 512, 512}, false, DotPath::kOneDnn},
      {{1, 256, 512, 384}, false, DotPath::kOneDnn},   {{1, 256, 256, 256}, true, DotPath::kOneDnn},
      {{1, 16, 600, 16}, false, DotPath::kOneDnn},     {{2, 16, 128, 512}, false, mid},
      {{1, 16, 512, 128}, true, DotPath::kOneDnn},
      // libxsmm has no kernel for an rhs stored [N,K]: oneDNN from 16*16*32 multiply-adds.
      {{1, 8, 8, 8}, true, DotPath::kLoops},           {{1, 32, 32, 32}, true, DotPath::kOneDnn},
      {{1, 1024, 1024, 1024}, false, DotPath::kOneDnn}, {{64, 128, 128, 128}, false, mid},
      // Matrix-vector products in every layout (libxsmm keeps those it takes); a dot of two
      // vectors stays on the loops.
      {{1, 1, 4096, 4096}, false, DotPath::kMatVec},    {{1, 1, 4096, 4096}, true, DotPath::kMatVec},
      {{1, 4096, 4096, 1}, false, DotPath::kMatVec},    {{4, 1, 300, 700}, true, DotPath::kMatVec},
      {{1, 1, 600, 1}, false, DotPath::kLoops}};
  for (const auto& [c, rhs_bnk, path] : expectations) {
    Array lhs(DType::kF32, {c.b, c.m, c.k}), out(DType::kF32, {c.b, c.m, c.n});
    Array rhs(DType::kF32, rhs_bnk ? Dims{c.b, c.n, c.k} : Dims{c.b, c.k, c.n});
    // Prepare sees shapes only.
    std::vector<BufferView> in = Views({&lhs, &rhs}), outs = Views({&out});
    for (auto& v : in) v.data = nullptr;
    for (auto& v : outs) v.data = nullptr;
    DotParams params{.rhs_is_bnk = rhs_bnk};
    auto prepared = entry->prepare(ArgsWith(in, outs, params));
    ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
    EXPECT_EQ(PreparedDotPath(prepared->state.get()), path) << c.b << "x" << c.m << "x" << c.k << "x" << c.n;
    EXPECT_EQ(prepared->single_call, path != DotPath::kLoops);
  }
  // Other element types keep the loops (and the pool's splitting).
  for (DType dtype : {DType::kF64, DType::kF16, DType::kS32, DType::kC64, DType::kPred})
    EXPECT_EQ(CpuKernels().Lookup(testing::Key("dot", dtype))->prepare, nullptr) << DTypeName(dtype);
}

// Below AVX-512 an rhs stored [K,N] with N a multiple of 512 is read from a padded copy
// (onednn_matmul.h); PaddedRhsBytes names that copy's size, and nothing elsewhere. The
// products through the copy are checked against XLA at STABLERT_ISA=avx2 and sse4
// (tests/jax/ops/test_dot_conv.py).
TEST(OneDnnMatmulTest, PaddedRhsOnlyForGemmJitAndRowsOf512) {
  const bool gemm_jit = onednn::F32OnGemmJit();
  const auto shape = [](int64_t b, int64_t m, int64_t k, int64_t n, bool rhs_bnk, DType dtype = DType::kF32) {
    onednn::MatmulShape s;
    s.dtype = dtype, s.batch = b, s.m = m, s.k = k, s.n = n, s.rhs_bnk = rhs_bnk;
    return s;
  };
  EXPECT_EQ(onednn::PaddedRhsBytes(shape(1, 256, 1024, 1024, false)), gemm_jit ? 1024 * (1024 + 16) * 4 : 0);
  EXPECT_EQ(onednn::PaddedRhsBytes(shape(3, 64, 100, 512, false)), gemm_jit ? 3 * 100 * (512 + 16) * 4 : 0);
  EXPECT_EQ(onednn::PaddedRhsBytes(shape(1, 256, 1024, 1000, false)), 0);
  EXPECT_EQ(onednn::PaddedRhsBytes(shape(1, 256, 1024, 1024, true)), 0);
  EXPECT_EQ(onednn::PaddedRhsBytes(shape(1, 256, 1024, 1024, false, DType::kBF16)), 0);
}

// Matrix-vector products in all four stored forms (x . A, x . A^T, A . x, A^T . x), batched
// or not, on one to three threads (k split over the pool, or rows), against the loops and
// the double-precision product; the split results equal one thread's for the rows form.
TEST(OneDnnMatmulTest, MatrixVectorProductsMatchLoops) {
  std::mt19937 rng(12);
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("dot.f32");
  const Case cases[] = {{1, 1, 4096, 4096}, {1, 1, 300, 3500}, {1, 1, 1000, 1111}, {1, 1, 128 * 9 + 5, 2048},
                        {1, 2048, 128 * 9 + 5, 1}, {1, 1111, 1000, 1}, {3, 1, 700, 900}, {5, 333, 257, 1},
                        {1, 1, 3, 100}, {1, 77, 1, 1}};
  for (const Case& c : cases)
    for (int layout = 0; layout < 4; ++layout) {
      const bool lhs_bkm = (layout & 1) != 0, rhs_bnk = (layout & 2) != 0;
      Operands x(c, lhs_bkm, rhs_bnk, rng);
      Array loops(DType::kF32, {c.b, c.m, c.n});
      std::vector<BufferView> in = Views({&x.lhs, &x.rhs});
      std::vector<BufferView> out_loops = Views({&loops});
      DotParams params{.lhs_is_bkm = lhs_bkm, .rhs_is_bnk = rhs_bnk};
      ASSERT_TRUE(entry->fn(KernelContext{}, ArgsWith(in, out_loops, params)).ok());
      ExpectProduct(c, x, lhs_bkm, rhs_bnk, loops, "loops");
      auto prepared = entry->prepare(ArgsWith(in, out_loops, params));
      ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
      if (std::max({c.m, c.n, c.k}) > 64 || rhs_bnk) {  // libxsmm takes the smallest
        ASSERT_EQ(PreparedDotPath(prepared->state.get()), DotPath::kMatVec) << c.m << "x" << c.k << "x" << c.n;
      }
      Array one_thread(DType::kF32, {c.b, c.m, c.n});
      for (int threads = 1; threads <= 3; ++threads) {
        Array split(DType::kF32, {c.b, c.m, c.n});
        for (int64_t i = 0; i < split.size(); ++i) SetDouble(split, i, 7.0);
        std::vector<BufferView> out_split = Views({&split});
        KernelArgs args = ArgsWith(in, out_split, params);
        auto state = matvec::PrepareMatVec(onednn::DotShape(args), threads);
        ASSERT_TRUE(state.ok()) << state.status().ToString();
        if (threads == 1) {
          EXPECT_EQ(matvec::PreparedParts(state->get()), 1);
        }
        ASSERT_TRUE(matvec::RunMatVec(state->get(), args).ok());
        ExpectProduct(c, x, lhs_bkm, rhs_bnk, split, "matrix-vector");
        const bool dots = c.m == 1 ? rhs_bnk : !lhs_bkm;
        if (threads == 1) {
          one_thread = split;
        } else if (dots) {
          for (int64_t i = 0; i < split.size(); ++i) ASSERT_EQ(GetDouble(split, i), GetDouble(one_thread, i));
        }
      }
    }
}

// The libxsmm path against the loops, in both lhs layouts, batched and split over the pool.
TEST(OneDnnMatmulTest, SmallProductsMatchLoops) {
  std::mt19937 rng(11);
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("dot.f32");
  const Case cases[] = {{1, 1, 1, 1},  {1, 3, 5, 7},    {7, 16, 16, 16}, {1, 64, 64, 64},
                        {2, 1, 64, 33}, {3, 40, 1, 17}, {600, 32, 32, 32}, {4, 64, 9, 64},
                        {1, 16, 128, 128}, {1, 128, 16, 512}, {1, 16, 64, 512}, {1, 96, 96, 96}};
  for (const Case& c : cases)
    for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm) {
      Operands x(c, lhs_bkm, false, rng);
      Array loops(DType::kF32, {c.b, c.m, c.n}), small(DType::kF32, {c.b, c.m, c.n});
      for (int64_t i = 0; i < small.size(); ++i) SetDouble(small, i, 7.0);
      std::vector<BufferView> in = Views({&x.lhs, &x.rhs});
      std::vector<BufferView> out_loops = Views({&loops}), out_small = Views({&small});
      DotParams params{.lhs_is_bkm = lhs_bkm != 0};
      ASSERT_TRUE(entry->fn(KernelContext{}, ArgsWith(in, out_loops, params)).ok());
      auto prepared = entry->prepare(ArgsWith(in, out_small, params));
      ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
      ASSERT_EQ(PreparedDotPath(prepared->state.get()), DotPath::kSmall);
      KernelArgs args = ArgsWith(in, out_small, params);
      args.state = prepared->state.get();
      ASSERT_TRUE(entry->fn(KernelContext{}, args).ok());
      ExpectProduct(c, x, lhs_bkm, false, loops, "loops");
      ExpectProduct(c, x, lhs_bkm, false, small, "libxsmm");
    }
}

// Mid-size products in libxsmm tiles: rows or columns (the longer), a shorter last tile,
// batch entries fewer than threads cut into tiles each, or shared out whole; both lhs
// layouts; one to four threads. Close to the double-precision product, and with row tiles
// or whole batch entries equal to the one-thread result bit for bit (each output column is
// computed by the same kernel code; a tile of columns may not be).
TEST(OneDnnMatmulTest, MidSizeProductsInTilesMatchOneThread) {
  std::mt19937 rng(13);
  const Case cases[] = {{1, 256, 256, 256}, {1, 300, 77, 250}, {1, 200, 100, 300}, {3, 130, 64, 170},
                        {1, 512, 128, 96},  {1, 40, 512, 400},  {5, 64, 96, 112}};
  for (const Case& c : cases)
    for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm) {
      Operands x(c, lhs_bkm, false, rng);
      std::vector<BufferView> in = Views({&x.lhs, &x.rhs});
      DotParams params{.lhs_is_bkm = lhs_bkm != 0};
      Array one_thread(DType::kF32, {c.b, c.m, c.n});
      for (int threads = 1; threads <= 4; ++threads) {
        Array out(DType::kF32, {c.b, c.m, c.n});
        for (int64_t i = 0; i < out.size(); ++i) SetDouble(out, i, 7.0);
        std::vector<BufferView> outs = Views({&out});
        KernelArgs args = ArgsWith(in, outs, params);
        auto state = xsmm::PrepareSmallMatmul(onednn::DotShape(args), xsmm::kMaxMidDim, threads);
        ASSERT_TRUE(state.ok()) << state.status().ToString();
        const int parts = xsmm::PreparedParts(state->get());
        if (threads == 1) {
          EXPECT_EQ(parts, 1);
        } else {
          EXPECT_GE(parts, std::min<int64_t>(threads, c.b > 1 ? c.b : 2)) << c.b << "x" << c.m << "x" << c.k << "x" << c.n;
        }
        ASSERT_TRUE(xsmm::RunSmallMatmul(state->get(), args).ok());
        ExpectProduct(c, x, lhs_bkm, false, out, "libxsmm");
        if (threads == 1) {
          one_thread = out;
        } else if (c.m >= c.n || c.b >= threads) {  // column tiles run kernels of other widths
          for (int64_t i = 0; i < out.size(); ++i)
            ASSERT_EQ(GetDouble(out, i), GetDouble(one_thread, i))
                << c.b << "x" << c.m << "x" << c.k << "x" << c.n << " threads=" << threads << " at " << i;
        }
      }
    }
}

TEST(OneDnnMatmulTest, RegisteredKernelMatchesReference) {
  std::mt19937 rng(9);
  const Case c{2, 96, 80, 72};
  for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm)
    for (int rhs_bnk = 0; rhs_bnk < 2; ++rhs_bnk) {
      Operands x(c, lhs_bkm, rhs_bnk, rng);
      Array out(DType::kF32, {c.b, c.m, c.n});
      testing::RunKernel("dot.f32", {&x.lhs, &x.rhs}, {&out}, DotParams{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk != 0});
      ExpectProduct(c, x, lhs_bkm, rhs_bnk, out, "dot.f32");
    }
}

// bf16 products: f32 accumulation, one rounding of each output (where oneDNN has a native
// implementation; else the registered kernel keeps the loops, which round the same way).
TEST(OneDnnMatmulTest, Bf16AccumulatesInF32AndRoundsOnce) {
  std::mt19937 rng(10);
  std::uniform_real_distribution<double> u(-1, 1);
  const Case cases[] = {{1, 64, 64, 64}, {3, 33, 700, 21}, {1, 2, 5, 3}};
  for (const Case& c : cases)
    for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm)
      for (int rhs_bnk = 0; rhs_bnk < 2; ++rhs_bnk) {
        Array lhs(DType::kBF16, lhs_bkm ? Dims{c.b, c.k, c.m} : Dims{c.b, c.m, c.k});
        Array rhs(DType::kBF16, rhs_bnk ? Dims{c.b, c.n, c.k} : Dims{c.b, c.k, c.n});
        for (int64_t i = 0; i < lhs.size(); ++i) SetDouble(lhs, i, u(rng));
        for (int64_t i = 0; i < rhs.size(); ++i) SetDouble(rhs, i, u(rng));
        Array out(DType::kBF16, {c.b, c.m, c.n}), forced(DType::kBF16, {c.b, c.m, c.n});
        testing::RunKernel("dot.bf16", {&lhs, &rhs}, {&out}, DotParams{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk != 0});
        std::vector<BufferView> in = Views({&lhs, &rhs}), outs = Views({&forced});
        DotParams params{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk != 0};
        auto state = onednn::PrepareMatmul(onednn::DotShape(ArgsWith(in, outs, params)));
        const bool have_onednn = state.ok();
        if (have_onednn) {
          ASSERT_TRUE(onednn::RunMatmul(state->get(), ArgsWith(in, outs, params)).ok());
        }
        for (int64_t b = 0; b < c.b; ++b)
          for (int64_t m = 0; m < c.m; ++m)
            for (int64_t n = 0; n < c.n; ++n) {
              double sum = 0, magnitude = 0;
              for (int64_t k = 0; k < c.k; ++k) {
                const double l = GetDouble(lhs, lhs_bkm ? (b * c.k + k) * c.m + m : (b * c.m + m) * c.k + k);
                const double r = GetDouble(rhs, rhs_bnk ? (b * c.n + n) * c.k + k : (b * c.k + k) * c.n + n);
                sum += l * r;
                magnitude += std::fabs(l * r);
              }
              // Half an ulp of bf16 for the one rounding, plus the f32 accumulation's bound.
              const double tolerance = std::ldexp(std::fabs(sum), -8) + std::ldexp(1.0, -24) * (c.k + 2) * magnitude;
              const int64_t i = (b * c.m + m) * c.n + n;
              ASSERT_NEAR(GetDouble(out, i), sum, tolerance) << "dot.bf16 " << c.m << "x" << c.k << "x" << c.n;
              if (have_onednn) {
                ASSERT_NEAR(GetDouble(forced, i), sum, tolerance) << "oneDNN " << c.m << "x" << c.k << "x" << c.n;
              }
            }
      }
}

}  // namespace
}  // namespace stablert::kernels

namespace stablert::kernels {
namespace {

// "dot.f32" with an addend (out = addend + product) on every path, into a separate output
// and in place over the addend (InPlace::kThirdInput): the product plus the addend.
TEST(OneDnnMatmulTest, AccumulatingProductsAddTheAddend) {
  std::mt19937 rng(21);
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("dot.f32");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->in_place, InPlace::kThirdInput);
  struct Expectation {
    Case c;
    bool rhs_bnk;
    DotPath path;
  };
  std::vector<Expectation> expectations = {
      {{1, 4, 4, 4}, true, DotPath::kLoops},         {{1, 4, 4, 4}, false, DotPath::kSmall},
      {{3, 16, 128, 128}, false, DotPath::kSmall},   {{1, 128, 16, 512}, false, DotPath::kSmall},
      {{1, 128, 128, 128}, false, DotPath::kSmall},  {{2, 200, 64, 300}, false, DotPath::kSmall},
      {{1, 256, 256, 256}, false, DotPath::kSmall},  {{1, 300, 77, 250}, false, DotPath::kSmall},
      {{1, 600, 64, 64}, false, DotPath::kOneDnn},   {{1, 16, 512, 128}, true, DotPath::kOneDnn}};
  if (CoreBudget() > 1) expectations.push_back({{1, 1, 4096, 4096}, false, DotPath::kMatVec});
  for (const auto& [c, rhs_bnk, path] : expectations)
    for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm)
      for (int in_place = 0; in_place < 2; ++in_place) {
        Operands x(c, lhs_bkm, rhs_bnk, rng);
        const Dims dims = {c.b, c.m, c.n};
        Array addend(DType::kF32, dims), out(DType::kF32, dims), product(DType::kF32, dims);
        std::uniform_real_distribution<double> u(-4, 4);
        for (int64_t i = 0; i < addend.size(); ++i) SetDouble(addend, i, u(rng));
        Array original = addend;
        DotParams params{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk};
        std::vector<BufferView> plain = Views({&x.lhs, &x.rhs}), out_product = Views({&product});
        ASSERT_TRUE(entry->fn(KernelContext{}, ArgsWith(plain, out_product, params)).ok());
        std::vector<BufferView> in = Views({&x.lhs, &x.rhs, &addend});
        std::vector<BufferView> outs = Views({in_place ? &addend : &out});
        auto prepared = entry->prepare(ArgsWith(in, outs, params));
        ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
        ASSERT_EQ(PreparedDotPath(prepared->state.get()), path) << c.b << "x" << c.m << "x" << c.k << "x" << c.n;
        EXPECT_TRUE(prepared->single_call);
        KernelArgs args = ArgsWith(in, outs, params);
        args.state = prepared->state.get();
        Status status = entry->fn(KernelContext{}, args);
        ASSERT_TRUE(status.ok()) << status.ToString();
        const Array& got = in_place ? addend : out;
        for (int64_t i = 0; i < got.size(); ++i) {
          const double expected = GetDouble(original, i) + GetDouble(product, i);
          ASSERT_NEAR(GetDouble(got, i), expected, 1e-5 * (1.0 + std::fabs(expected)) + 1e-6 * c.k)
              << c.b << "x" << c.m << "x" << c.k << "x" << c.n << " lhs_bkm=" << lhs_bkm << " in_place=" << in_place
              << " at " << i;
        }
      }
}

}  // namespace
}  // namespace stablert::kernels

namespace stablert::kernels {
namespace {

TEST(OneDnnMatmulTest, BlocksTheContractionOfLargeF32Products) {
  using onednn::MatmulShape;
  auto shape = [](DType dtype, int64_t b, int64_t m, int64_t n, int64_t k) { return MatmulShape{dtype, b, m, n, k}; };
  const int64_t block = onednn::F32OnGemmJit() ? 0 : onednn::kKBlock;
  const MatmulShape square = shape(DType::kF32, 1, 2048, 2048, 2048);
  EXPECT_EQ(onednn::ContractionBlock(square), onednn::OnGemmJit(square) ? 0 : block);
  EXPECT_EQ(onednn::ContractionBlock(shape(DType::kF32, 2, 1024, 2048, 2048)), block);
  EXPECT_EQ(onednn::ContractionBlock(shape(DType::kF32, 1, 1024, 1024, 1024)), 0);  // k too short
  EXPECT_EQ(onednn::ContractionBlock(shape(DType::kF32, 1, 64, 64, 8192)), 0);      // below the size
  EXPECT_EQ(onednn::ContractionBlock(shape(DType::kF32, 1, 4096, 4096, 256)), 0);  // k in one block
  EXPECT_EQ(onednn::ContractionBlock(shape(DType::kBF16, 1, 2048, 2048, 2048)), 0);

  // Blocks of k (the last one shorter) add up to the product, with and without an addend,
  // on one and two threads; checked against double precision at sampled outputs. Two
  // matrices, so that no CPU runs the product on the gemm:jit driver instead.
  std::mt19937 rng(5);
  const Case c{2, 256, 2112, 1024};  // 1.1e9 multiply-adds; k = 4 x 512 + 64
  for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm)
    for (int accumulate = 0; accumulate < 2; ++accumulate)
      for (int threads : {1, 2}) {
        Operands x(c, lhs_bkm, false, rng);
        Array out(DType::kF32, {c.b, c.m, c.n});
        std::uniform_real_distribution<double> u(-4, 4);
        for (int64_t i = 0; i < out.size(); ++i) SetDouble(out, i, accumulate ? u(rng) : 0.0);
        const Array addend = out;
        DotParams params{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = false};
        std::vector<BufferView> in = Views({&x.lhs, &x.rhs}), outs = Views({&out});
        MatmulShape s = onednn::DotShape(ArgsWith(in, outs, params));
        s.accumulate = accumulate != 0;
        ASSERT_EQ(onednn::ContractionBlock(s), block);
        auto state = onednn::PrepareMatmul(s, threads);
        ASSERT_TRUE(state.ok()) << state.status().ToString();
        ASSERT_TRUE(onednn::RunMatmul(state->get(), ArgsWith(in, outs, params)).ok());
        ExpectSampledProduct(c, x, lhs_bkm != 0, false, addend, out, rng,
                             "lhs_bkm=" + std::to_string(lhs_bkm) + " accumulate=" + std::to_string(accumulate) +
                                 " threads=" + std::to_string(threads));
      }
}

// Large products in every layout, with and without an addend, on one and two threads, run on
// the driver OnGemmJit names (gemm:jit where it says so) and are right.
TEST(OneDnnMatmulTest, LargeProductsRunOnTheDriverChosenForThem) {
  using onednn::MatmulShape;
  std::mt19937 rng(11);
  // 2^27 multiply-adds (kMinGemmJitMacs; row tiles) and 2^30 (kMinGemmJitNSplitMacs: column
  // tiles on gemm:jit).
  for (const Case& c : {Case{1, 256, 1024, 512}, Case{1, 1024, 1024, 1024}}) {
    for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm)
      for (int rhs_bnk = 0; rhs_bnk < 2; ++rhs_bnk)
        for (int accumulate = 0; accumulate < 2; ++accumulate) {
          const int threads = 1 + (lhs_bkm + rhs_bnk + accumulate) % 2;
          Operands x(c, lhs_bkm, rhs_bnk, rng);
          Array out(DType::kF32, {c.b, c.m, c.n});
          std::uniform_real_distribution<double> u(-4, 4);
          for (int64_t i = 0; i < out.size(); ++i) SetDouble(out, i, accumulate ? u(rng) : 0.0);
          const Array addend = out;
          DotParams params{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk != 0};
          std::vector<BufferView> in = Views({&x.lhs, &x.rhs}), outs = Views({&out});
          MatmulShape s = onednn::DotShape(ArgsWith(in, outs, params));
          s.accumulate = accumulate != 0;
          ASSERT_GE(static_cast<double>(s.m * s.n * s.k), onednn::kMinGemmJitMacs);
          auto state = onednn::PrepareMatmul(s, threads);
          ASSERT_TRUE(state.ok()) << state.status().ToString();
          const std::string implementation = onednn::ImplementationName(state->get());
          EXPECT_EQ(implementation.rfind("gemm:jit", 0) == 0, onednn::OnGemmJit(s)) << implementation;
          ASSERT_TRUE(onednn::RunMatmul(state->get(), ArgsWith(in, outs, params)).ok());
          ExpectSampledProduct(c, x, lhs_bkm != 0, rhs_bnk != 0, addend, out, rng,
                               implementation + " lhs_bkm=" + std::to_string(lhs_bkm) + " rhs_bnk=" +
                                   std::to_string(rhs_bnk) + " accumulate=" + std::to_string(accumulate));
        }
  }
  // Never for other element types, and for batches of matrices only where every f32 product is.
  EXPECT_FALSE(onednn::OnGemmJit(MatmulShape{DType::kBF16, 1, 2048, 2048, 2048}));
  EXPECT_EQ(onednn::OnGemmJit(MatmulShape{DType::kF32, 4, 512, 512, 512}), onednn::F32OnGemmJit());
  EXPECT_EQ(onednn::OnGemmJit(MatmulShape{DType::kF32, 1, 64, 64, 64}), onednn::F32OnGemmJit());
}

}  // namespace
}  // namespace stablert::kernels
