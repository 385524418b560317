// The machine's limits, measured: FMA peak (an FMA loop on zmm and ymm registers, one
// thread and all threads, and one thread rated by its CPU time), DRAM bandwidth (copy and
// triad over 256 MB arrays) and L2 bandwidth (copy and triad over 3 x 128 KiB arrays per
// thread, repeated), and the vector ISA StableRT's kernels dispatch to under the current
// STABLERT_ISA. Prints one JSON object on stdout; benchmarks/kernel_benchmark.py runs it in
// the same session as the kernels it rates against these limits. Exits 2 on a bad flag, 1 if
// memory cannot be allocated.
//
//   build/benchmarks/machine_limits [--threads N] [--dram-mb 256]
//
// Best of several repetitions each (the machine is shared). Bandwidth counts the bytes the
// program reads and writes (copy: 2 x size, triad: 3 x size); write-allocate traffic is not
// counted, as STREAM does not count it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "kernels/simd/dispatch.h"

#if defined(__x86_64__)
// GCC 12's avx512fintrin.h warns about its own _mm512_set1_ps (-Wuninitialized).
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#endif

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs fn(thread_index) on `threads` threads at once; returns the wall time of the slowest.
template <typename Fn>
double RunThreads(int threads, Fn fn) {
  std::vector<std::thread> pool;
  std::vector<double> times(static_cast<size_t>(threads));
  const double start = Now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      fn(t);
      times[static_cast<size_t>(t)] = Now();
    });
  for (auto& th : pool) th.join();
  return *std::max_element(times.begin(), times.end()) - start;
}

constexpr int64_t kFmaIterations = 100'000'000;
constexpr int kAccumulators = 12;  // enough independent chains to cover FMA latency x 2 ports

#if defined(__x86_64__)
// 12 independent chains of FMAs; returns a value that depends on all of them.
__attribute__((target("avx512f"))) float FmaLoopZmm(int64_t iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t k = 0; k < iterations; ++k)
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 sum = acc[0];
  for (int i = 1; i < kAccumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"))) float FmaLoopYmm(int64_t iterations) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t k = 0; k < iterations; ++k)
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 sum = acc[0];
  for (int i = 1; i < kAccumulators; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}
#endif

volatile float g_sink;

// GFLOP/s of `loop` (lanes f32 lanes, 2 flops per FMA) on `threads` threads, best of 3.
double FmaPeak(float (*loop)(int64_t), int lanes, int threads) {
  const int64_t iterations = kFmaIterations / 4;
  loop(iterations / 10);  // warm up (clock ramp)
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) best = std::min(best, RunThreads(threads, [&](int) { g_sink = loop(iterations); }));
  return 2.0 * lanes * kAccumulators * static_cast<double>(iterations) * threads / best / 1e9;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The same on the calling thread, rated by its CPU time instead of the wall clock: one core's
// peak while it runs, which stays readable when other processes share the cores (wall-clock
// peaks then fall with the share the scheduler gives). Compare with kernels' CPU times.
double FmaPeakCpuTime(float (*loop)(int64_t), int lanes) {
  const int64_t iterations = kFmaIterations / 4;
  loop(iterations / 10);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double start = ThreadCpuSeconds();
    g_sink = loop(iterations);
    best = std::min(best, ThreadCpuSeconds() - start);
  }
  return 2.0 * lanes * kAccumulators * static_cast<double>(iterations) / best / 1e9;
}

// Bandwidth kernels over [begin, end) of each array; the compiler vectorizes them at -O2+.
void Copy(float* __restrict a, const float* __restrict b, int64_t begin, int64_t end) {
  std::memcpy(a + begin, b + begin, static_cast<size_t>(end - begin) * sizeof(float));
}
void Triad(float* __restrict a, const float* __restrict b, const float* __restrict c, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + 3.0f * c[i];
}

float* Allocate(int64_t n) {
  void* p = std::aligned_alloc(4096, static_cast<size_t>(n) * sizeof(float));
  if (p == nullptr) {
    std::fprintf(stderr, "machine_limits: cannot allocate %lld floats\n", static_cast<long long>(n));
    std::exit(1);
  }
  auto* f = static_cast<float*>(p);
  for (int64_t i = 0; i < n; ++i) f[i] = 1.0f;  // touch every page
  return f;
}

struct Bandwidth {
  double copy, triad;  // GB/s
};

// `n` floats per array, each thread working on its share; the best of `reps` passes, where a
// pass repeats the kernel `inner` times (to time cache-resident arrays).
Bandwidth MeasureBandwidth(int64_t n, int threads, int reps, int inner) {
  std::vector<float*> a(static_cast<size_t>(threads)), b(a.size()), c(a.size());
  // One set of arrays per thread for cache-resident sizes (each core its own L2), one
  // shared set split by ranges for DRAM sizes.
  const bool per_thread = inner > 1;
  for (int t = 0; t < threads; ++t) {
    if (per_thread || t == 0) {
      a[static_cast<size_t>(t)] = Allocate(n);
      b[static_cast<size_t>(t)] = Allocate(n);
      c[static_cast<size_t>(t)] = Allocate(n);
    } else {
      a[static_cast<size_t>(t)] = a[0], b[static_cast<size_t>(t)] = b[0], c[static_cast<size_t>(t)] = c[0];
    }
  }
  auto range = [&](int t) -> std::pair<int64_t, int64_t> {
    if (per_thread) return {0, n};
    return {n * t / threads, n * (t + 1) / threads};
  };
  double best_copy = 1e30, best_triad = 1e30;
  for (int rep = 0; rep < reps; ++rep) {
    best_copy = std::min(best_copy, RunThreads(threads, [&](int t) {
                           const auto [begin, end] = range(t);
                           const auto i = static_cast<size_t>(t);
                           for (int k = 0; k < inner; ++k) Copy(a[i], b[i], begin, end);
                         }));
    best_triad = std::min(best_triad, RunThreads(threads, [&](int t) {
                            const auto [begin, end] = range(t);
                            const auto i = static_cast<size_t>(t);
                            for (int k = 0; k < inner; ++k) Triad(a[i], b[i], c[i], begin, end);
                          }));
  }
  g_sink = a[0][n / 2];
  for (int t = 0; t < threads; ++t) {
    if (!per_thread && t > 0) break;
    std::free(a[static_cast<size_t>(t)]);
    std::free(b[static_cast<size_t>(t)]);
    std::free(c[static_cast<size_t>(t)]);
  }
  const double copies = per_thread ? threads : 1;
  const double bytes = static_cast<double>(n) * sizeof(float) * inner * copies;
  return {2 * bytes / best_copy / 1e9, 3 * bytes / best_triad / 1e9};
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int64_t dram_mb = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    else if (flag == "--dram-mb") dram_mb = std::atoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "machine_limits: unknown flag %s (expected --threads N, --dram-mb MB)\n", flag.c_str());
      return 2;
    }
  }
  if (threads < 1 || dram_mb < 1) {
    std::fprintf(stderr, "machine_limits: --threads and --dram-mb must be positive\n");
    return 2;
  }
  // The vector ISA StableRT's kernels run on under the same STABLERT_ISA setting.
  std::string isa = "error";
  if (stablert::kernels::simd::ApplyIsaSetting().ok()) isa = stablert::kernels::simd::CurrentTarget();
  std::printf("{\"threads\": %d, \"stablert_isa\": \"%s\"", threads, isa.c_str());
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    std::printf(", \"fma_zmm_1t_gflops\": %.1f", FmaPeak(&FmaLoopZmm, 16, 1));
    std::printf(", \"fma_zmm_all_gflops\": %.1f", FmaPeak(&FmaLoopZmm, 16, threads));
    std::printf(", \"fma_zmm_1t_cpu_gflops\": %.1f", FmaPeakCpuTime(&FmaLoopZmm, 16));
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    std::printf(", \"fma_ymm_1t_gflops\": %.1f", FmaPeak(&FmaLoopYmm, 8, 1));
    std::printf(", \"fma_ymm_all_gflops\": %.1f", FmaPeak(&FmaLoopYmm, 8, threads));
    std::printf(", \"fma_ymm_1t_cpu_gflops\": %.1f", FmaPeakCpuTime(&FmaLoopYmm, 8));
  }
#endif
  const int64_t dram_n = dram_mb * 1024 * 1024 / static_cast<int64_t>(sizeof(float));
  const Bandwidth dram1 = MeasureBandwidth(dram_n, 1, 4, 1);
  const Bandwidth dram_all = MeasureBandwidth(dram_n, threads, 4, 1);
  const int64_t l2_n = 128 * 1024 / static_cast<int64_t>(sizeof(float));  // 3 x 128 KiB: inside a 1 MiB L2
  const Bandwidth l2_1 = MeasureBandwidth(l2_n, 1, 5, 400);
  const Bandwidth l2_all = MeasureBandwidth(l2_n, threads, 5, 400);
  std::printf(", \"dram_mb\": %lld", static_cast<long long>(dram_mb));
  std::printf(", \"dram_copy_1t_gbs\": %.1f, \"dram_triad_1t_gbs\": %.1f", dram1.copy, dram1.triad);
  std::printf(", \"dram_copy_all_gbs\": %.1f, \"dram_triad_all_gbs\": %.1f", dram_all.copy, dram_all.triad);
  std::printf(", \"l2_copy_1t_gbs\": %.1f, \"l2_triad_1t_gbs\": %.1f", l2_1.copy, l2_1.triad);
  std::printf(", \"l2_copy_all_gbs\": %.1f, \"l2_triad_all_gbs\": %.1f}\n", l2_all.copy, l2_all.triad);
  return 0;
}
