// The long-scan kernels (kernels/scan.h through the reduce_window kernels) on their own:
// cumsum/cummax/cummin of one 4M f32 line forward and reverse, rows and columns of 2048x2048,
// outputs allocated and touched once before timing. Each call is split across `--threads`
// threads as the executor splits a step. Prints the best and median wall ms and the best
// CPU ms (all threads' CPU time: readable when other processes share the cores) of
// --repeats calls, with GB/s (bytes read + written) at the best wall time. With --offset B
// (bytes, a multiple of 4 below 64) every case runs twice, on 64-byte aligned buffers and
// with output and input B bytes past a 64-byte boundary (--in-offset: another input offset),
// as borrowed host buffers (NumPy arrays passed without a copy) can be.
//
//   build/benchmarks/scan_kernel_benchmark [--threads 2] [--repeats 30] [--isa avx2] [--only cumsum]
//                                          [--offset 16] [--in-offset 0]
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/dtype.h"
#include "base/env.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "kernels/simd/dispatch.h"
#include "kernels/simd/scan_simd.h"
#include "kernels/simd/transpose_simd.h"
#include "kernels/window_params.h"

namespace {

using stablert::DType;
using namespace stablert::kernels;  // NOLINT

struct Case {
  const char* name;
  const char* op;
  std::vector<int64_t> dims;
  size_t axis;
  bool reverse;
};

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

void Run(const Case& c, int threads, int repeats, int offset, int in_offset) {
  // offset, in_offset: bytes past a 64-byte boundary (multiples of 4).
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(KernelKey(c.op, {DType::kF32}));
  if (entry == nullptr) {
    std::printf("%s: no kernel\n", c.name);
    return;
  }
  int64_t count = 1;
  for (int64_t d : c.dims) count *= d;
  const size_t size = static_cast<size_t>(count) * sizeof(float);
  auto* in_block = static_cast<float*>(std::aligned_alloc(64, (size + 127) / 64 * 64));
  auto* out_block = static_cast<float*>(std::aligned_alloc(64, (size + 127) / 64 * 64));
  float* in = in_block + in_offset / 4;
  float* out = out_block + offset / 4;
  uint32_t state = 12345;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    in[i] = static_cast<float>(state >> 8) * (1.0f / 16777216.0f) - 0.5f;
  }
  std::memset(out, 0, size);
  float init = std::string(c.op) == "reduce_window_add" ? 0.0f
                     : std::string(c.op) == "reduce_window_max" ? -__builtin_inff()
                                                                 : __builtin_inff();
  WindowParams params;
  const size_t rank = c.dims.size();
  params.window_dimensions.assign(rank, 1);
  params.window_strides.assign(rank, 1);
  params.base_dilations.assign(rank, 1);
  params.window_dilations.assign(rank, 1);
  params.padding_low.assign(rank, 0);
  params.padding_high.assign(rank, 0);
  const int64_t n = c.dims[c.axis];
  params.window_dimensions[c.axis] = n;
  (c.reverse ? params.padding_high : params.padding_low)[c.axis] = n - 1;
  BufferView views[3] = {{in, DType::kF32, c.dims, count}, {&init, DType::kF32, {}, 1}, {out, DType::kF32, c.dims, count}};
  KernelArgs args;
  args.inputs = {&views[0], 2};
  args.outputs = {&views[2], 1};
  args.params = &params;
  std::vector<double> wall, cpu;
  std::vector<double> thread_cpu(static_cast<size_t>(threads));
  for (int r = 0; r < repeats + 2; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto call = [&](int t) {
      const double c0 = ThreadCpuMs();
      (void)entry->fn(KernelContext{t, threads}, args);
      thread_cpu[static_cast<size_t>(t)] = ThreadCpuMs() - c0;
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(call, t);
    call(0);
    for (auto& th : pool) th.join();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r >= 2) {
      wall.push_back(ms);
      double total = 0;
      for (double t : thread_cpu) total += t;
      cpu.push_back(total);
    }
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  char alignment[32] = "aligned";
  if (offset != 0 || in_offset != 0) std::snprintf(alignment, sizeof(alignment), "out +%d in +%d B", offset, in_offset);
  std::printf("%-34s %-16s best %7.3f ms  median %7.3f ms  cpu best %7.3f ms  %6.1f GB/s\n", c.name, alignment,
              wall[0], wall[wall.size() / 2], cpu[0], 2.0 * static_cast<double>(size) / wall[0] / 1e6);
  std::free(in_block);
  std::free(out_block);
}


// --split-probe F: a forward 4M f32 sum on two cores with XLA's grouping kept
// (simd::ScanLinePart): one core scans [0, s) (s = F * n, whole groups of 256) while the
// other folds the tile totals of [0, s) (a read) and then scans [s, n) from that carry;
// against simd::ScanLine of the whole line on one core. The second thread is started once
// and spins between repeats (as a woken pool worker would be), so its start costs nothing.
void SplitProbe(int repeats, double fraction) {
  using stablert::kernels::simd::ScanBody;
  constexpr int64_t n = int64_t{4} << 20;
  const int64_t s = static_cast<int64_t>(fraction * static_cast<double>(n)) / 256 * 256;
  const size_t size = static_cast<size_t>(n) * sizeof(float);
  auto* in = static_cast<float*>(std::aligned_alloc(64, size));
  auto* out = static_cast<float*>(std::aligned_alloc(64, size));
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000) * 1e-3f;
  std::memset(out, 0, size);
  std::atomic<int> go{0}, done{0};
  std::atomic<bool> quit{false};
  std::thread worker([&] {
    int seen = 0;
    while (true) {
      while (go.load(std::memory_order_acquire) == seen && !quit.load(std::memory_order_relaxed)) {
      }
      if (quit.load()) return;
      seen = go.load();
      simd::ScanLinePart(ScanBody::kAdd, in, out, n, 0.0f, true, s, n);
      simd::TransposeStreamFence();
      done.fetch_add(1, std::memory_order_release);
    }
  });
  std::vector<double> one, two;
  for (int r = 0; r < repeats + 2; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    simd::ScanLine(ScanBody::kAdd, false, in, out, n, 0.0f, true);
    simd::TransposeStreamFence();
    const double single = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const int before = done.load();
    t0 = std::chrono::steady_clock::now();
    go.fetch_add(1, std::memory_order_release);
    simd::ScanLinePart(ScanBody::kAdd, in, out, n, 0.0f, true, 0, s);
    simd::TransposeStreamFence();
    while (done.load(std::memory_order_acquire) == before) {
    }
    const double pair = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0) {
      std::vector<float> whole(static_cast<size_t>(n));
      simd::ScanLine(ScanBody::kAdd, false, in, whole.data(), n, 0.0f, false);
      if (std::memcmp(whole.data(), out, size) != 0) std::printf("split probe: the parts differ from the whole line\n");
    }
    if (r >= 2) {
      one.push_back(single);
      two.push_back(pair);
    }
  }
  quit = true;
  worker.join();
  std::sort(one.begin(), one.end());
  std::sort(two.begin(), two.end());
  std::printf("split probe cumsum 4M f32, s = %.2f n: one core best %.3f median %.3f ms; two cores best %.3f median %.3f ms\n",
              static_cast<double>(s) / static_cast<double>(n), one[0], one[one.size() / 2], two[0], two[two.size() / 2]);
  std::free(in);
  std::free(out);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeats = 30, offset = 0, in_offset = -1;
  std::string only;
  double split = 0;
  auto number = [&](int i) {  // the value after flag i, or exit with a message
    char* end = nullptr;
    const double value = i + 1 < argc ? std::strtod(argv[i + 1], &end) : 0;
    if (end == nullptr || end == argv[i + 1] || *end != '\0') {
      std::fprintf(stderr, "%s: expected a number after it, got '%s'\n", argv[i], i + 1 < argc ? argv[i + 1] : "");
      std::exit(2);
    }
    return value;
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = static_cast<int>(number(i));
    else if (flag == "--repeats") repeats = static_cast<int>(number(i));
    else if (flag == "--only" && i + 1 < argc) only = argv[i + 1];
    else if (flag == "--split-probe") split = number(i);
    else if (flag == "--offset") offset = std::clamp(static_cast<int>(number(i)), 0, 60) / 4 * 4;
    else if (flag == "--in-offset") in_offset = std::clamp(static_cast<int>(number(i)), 0, 60) / 4 * 4;
    else if (flag == "--isa" && i + 1 < argc) {
      auto isa = stablert::env::ParseIsa("--isa", argv[i + 1]);
      if (!isa.ok() || !simd::SetIsa(*isa).ok()) {
        std::fprintf(stderr, "--isa %s: not available\n", argv[i + 1]);
        return 1;
      }
    } else {
      std::fprintf(stderr, "unknown flag or missing value: %s\n", flag.c_str());
      return 2;
    }
  }
  if (threads < 1 || repeats < 1) {
    std::fprintf(stderr, "--threads and --repeats must be at least 1\n");
    return 2;
  }
  constexpr int64_t kN = int64_t{4} << 20;
  const Case cases[] = {
      {"cumsum 4M f32", "reduce_window_add", {kN}, 0, false},
      {"cumsum 4M f32 reverse", "reduce_window_add", {kN}, 0, true},
      {"cummax 4M f32", "reduce_window_max", {kN}, 0, false},
      {"cummax 4M f32 reverse", "reduce_window_max", {kN}, 0, true},
      {"cummin 4M f32 reverse", "reduce_window_min", {kN}, 0, true},
      {"cumsum rows 2048x2048 f32", "reduce_window_add", {2048, 2048}, 1, false},
      {"cumsum rows 2048x2048 f32 reverse", "reduce_window_add", {2048, 2048}, 1, true},
      {"cumsum columns 2048x2048 f32", "reduce_window_add", {2048, 2048}, 0, false},
  };
  std::printf("# %s, %d thread(s)\n", simd::CurrentTarget().c_str(), threads);
  if (split > 0) {
    SplitProbe(repeats, std::clamp(split, 0.05, 0.95));
    return 0;
  }
  for (const Case& c : cases)
    if (only.empty() || std::string(c.name).find(only) != std::string::npos) {
      const int in = in_offset < 0 ? offset : in_offset;
      if (offset != 0 || in != 0) Run(c, threads, repeats, 0, 0);
      Run(c, threads, repeats, offset, in);
    }
  return 0;
}
