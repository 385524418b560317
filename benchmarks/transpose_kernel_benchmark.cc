// The transpose kernel (kernels/data_movement.cc) on its own: outputs allocated and touched
// once before timing, so the time is the kernel's alone (no page faults of a fresh buffer),
// split across `--threads` threads as the executor splits a step. Prints the best and median
// ms of --repeats calls and GB/s (bytes read + written) at the best time.
//
//   build/benchmarks/transpose_kernel_benchmark [--threads 2] [--repeats 30]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/dtype.h"
#include "kernels/data_movement_params.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"

namespace {

using stablert::DType;
using namespace stablert::kernels;  // NOLINT

struct Case {
  const char* name;
  DType dtype;
  std::vector<int64_t> dims;
  std::vector<int64_t> perm;
};

void Run(const Case& c, int threads, int repeats) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(KernelKey("transpose", {c.dtype}));
  if (entry == nullptr) {
    std::printf("%s: no kernel\n", c.name);
    return;
  }
  const auto bytes = static_cast<size_t>(stablert::DTypeByteSize(c.dtype));
  int64_t count = 1;
  for (int64_t d : c.dims) count *= d;
  std::vector<int64_t> out_dims;
  for (int64_t p : c.perm) out_dims.push_back(c.dims[static_cast<size_t>(p)]);
  const size_t size = static_cast<size_t>(count) * bytes;
  auto* in = static_cast<char*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
  auto* out = static_cast<char*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
  for (size_t i = 0; i < size; ++i) in[i] = static_cast<char>(i * 7);
  std::memset(out, 0, size);
  BufferView views[2] = {{in, c.dtype, c.dims, count}, {out, c.dtype, out_dims, count}};
  const TransposeParams params{.permutation = c.perm};
  KernelArgs args;
  args.inputs = {&views[0], 1};
  args.outputs = {&views[1], 1};
  args.params = &params;
  std::vector<double> times;
  for (int r = 0; r < repeats + 2; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { (void)entry->fn(KernelContext{t, threads}, args); });
    (void)entry->fn(KernelContext{0, threads}, args);
    for (auto& th : pool) th.join();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r >= 2) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  std::printf("%-32s best %7.3f ms  median %7.3f ms  %6.1f GB/s\n", c.name, times[0], times[times.size() / 2],
              2.0 * static_cast<double>(size) / times[0] / 1e6);
  std::free(in);
  std::free(out);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, repeats = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--threads") threads = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--repeats") repeats = std::stoi(argv[i + 1]);
  }
  const Case cases[] = {
      {"2048x2048 (1,0) f32", DType::kF32, {2048, 2048}, {1, 0}},
      {"4096x4096 (1,0) f32", DType::kF32, {4096, 4096}, {1, 0}},
      {"1023x2049 (1,0) f32", DType::kF32, {1023, 2049}, {1, 0}},
      {"2048x2048 (1,0) bf16", DType::kBF16, {2048, 2048}, {1, 0}},
      {"2048x2048 (1,0) f64", DType::kF64, {2048, 2048}, {1, 0}},
      {"64x256x256 (0,2,1) f32", DType::kF32, {64, 256, 256}, {0, 2, 1}},
      {"64x256x256 (2,0,1) f32", DType::kF32, {64, 256, 256}, {2, 0, 1}},
      {"64x256x256 (2,1,0) f32", DType::kF32, {64, 256, 256}, {2, 1, 0}},
      {"64x256x256 (1,2,0) f32", DType::kF32, {64, 256, 256}, {1, 2, 0}},
      {"64x256x256 (1,0,2) f32", DType::kF32, {64, 256, 256}, {1, 0, 2}},
      {"64x512x512 (1,0,2) f32", DType::kF32, {64, 512, 512}, {1, 0, 2}},
  };
  for (const Case& c : cases) Run(c, threads, repeats);
  return 0;
}
