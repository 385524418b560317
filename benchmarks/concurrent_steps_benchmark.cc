// Two steps that run as one call each, independent or chained, through the executor
// (runtime/executor.h): what running the independent pair on two threads saves
// (LoadedPlan::SetConcurrentSteps).
//
//   concurrent_steps_benchmark [calls] [floats]
//
// Both plans run two calls of the same kernel (out = in * 1.0001 + 1 over `floats` f32,
// default 2^20: 4 MiB in, 4 MiB out) and then a third reading both; in "independent" the
// first two read different parameters (the executor pairs them), in "chained" the second
// reads the first's output. Rows: the independent plan with concurrent steps on ("paired")
// and off ("in order"), the chained plan. Prints min / median / p90 of Execute in µs and
// how many kernel calls ran on a pool thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/registry.h"
#include "runtime/executor.h"

namespace {

using namespace stablert;

std::atomic<int> calls_off_caller{0};
thread_local bool is_caller = false;

Status StreamKernel(const kernels::KernelContext&, const kernels::KernelArgs& args) {
  if (!is_caller) calls_off_caller.fetch_add(1, std::memory_order_relaxed);
  const int64_t n = args.outputs[0].num_elements;
  float* out = args.outputs[0].as<float>();
  const float* a = args.inputs[0].as<const float>();
  const float* b = args.inputs.size() > 1 ? args.inputs[1].as<const float>() : nullptr;
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * 1.0001f + (b ? b[i] : 1.0f);
  return OkStatus();
}

plan::ExecutionPlan MakePlan(int64_t n, bool independent) {
  const int64_t bytes = n * 4;
  plan::ExecutionPlan plan;
  plan.parameter_types = {{DType::kF32, {n}}, {DType::kF32, {n}}};
  plan.result_types = {{DType::kF32, {n}}};
  plan.values.push_back({{DType::kF32, {n}}, plan::Storage::kParameter, 0, bytes});  // %0
  plan.values.push_back({{DType::kF32, {n}}, plan::Storage::kParameter, 1, bytes});  // %1
  plan.values.push_back({{DType::kF32, {n}}, plan::Storage::kArena, 0, bytes});      // %2
  plan.values.push_back({{DType::kF32, {n}}, plan::Storage::kArena, bytes, bytes});  // %3
  plan.values.push_back({{DType::kF32, {n}}, plan::Storage::kResult, 0, bytes});     // %4
  plan.arena_size = 2 * bytes;
  auto step = [&](std::vector<plan::ValueId> in, plan::ValueId out) {
    plan::Step s;
    s.kernel = "stream.f32";
    s.inputs = std::move(in);
    s.outputs = {out};
    s.origin = "benchmark.step";
    plan.body.steps.push_back(s);
  };
  step({0}, 2);
  step({independent ? plan::ValueId{1} : plan::ValueId{2}}, 3);
  step({2, 3}, 4);
  plan.results = {4};
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  is_caller = true;
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : int64_t{1} << 20;
  kernels::KernelRegistry registry;
  if (!registry.Register("stream.f32", &StreamKernel).ok()) return 1;
  std::vector<float> x(static_cast<size_t>(n), 1.0f), y(static_cast<size_t>(n), 2.0f), out(static_cast<size_t>(n));
  const void* args[] = {x.data(), y.data()};
  void* results[] = {out.data()};
  for (int variant = 0; variant < 3; ++variant) {
    const bool independent = variant < 2, concurrent = variant == 0;
    runtime::LoadedPlan::SetConcurrentSteps(concurrent);
    plan::ExecutionPlan plan = MakePlan(n, independent);
    auto loaded = runtime::LoadedPlan::Create(plan, registry);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 1;
    }
    std::vector<double> times;
    for (int c = 0; c < calls + 5; ++c) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!(*loaded)->Execute(args, results).ok()) return 1;
      if (c >= 5)
        times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const int off_caller = calls_off_caller.exchange(0);
    std::printf("%-12s %zu pair(s), %lld floats: min %8.1f  median %8.1f  p90 %8.1f µs; %d of %d calls on a pool thread\n",
                concurrent ? "paired" : independent ? "in order" : "chained", (*loaded)->ConcurrentPairs().size(),
                static_cast<long long>(n), times.front(), times[times.size() / 2], times[times.size() * 9 / 10], off_caller, 3 * (calls + 5));
  }
  return 0;
}
