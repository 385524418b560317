// Latency of the shared pool's parallel-for (base/thread_pool.h), the path every split step
// of the executor takes.
//
//   pool_latency_benchmark [calls]
//
// For each idle gap before the call (the time the pool's workers sit without work: 0 is
// back-to-back calls, larger gaps let them go from polling to sleeping), it reports over
// `calls` calls (default 2000) the distribution (min / median / p90 / p99 / max, in µs) of
//   - start: from the call until another thread starts a part (the handoff: a poll or a
//     wake-up), or "-" when the caller ran every part itself,
//   - empty: a whole ParallelFor(parallelism) whose parts do nothing,
//   - work: a streaming pass over 8 MB (read and written in place) cut in `chunks` calls
//     run by ParallelForChunks, as the executor runs split steps, for chunks = parallelism
//     and 4 × parallelism; then the same pass on one thread.
// and how many calls had some part run by a worker. Wall clock; the gap is slept.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "base/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

void Report(const char* what, int gap_us, std::vector<double> samples) {
  if (samples.empty()) {
    std::printf("%-22s gap %5d µs: no samples\n", what, gap_us);
    return;
  }
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) { return samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))]; };
  std::printf("%-22s gap %5d µs: min %7.1f  median %7.1f  p90 %7.1f  p99 %7.1f  max %8.1f  (n=%zu)\n", what, gap_us,
              samples.front(), at(0.5), at(0.9), at(0.99), samples.back(), samples.size());
}

void Gap(int gap_us) {
  if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
  stablert::ThreadPool& pool = stablert::ThreadPool::Shared();
  const int parallelism = pool.parallelism();
  std::printf("# pool parallelism %d (CoreBudget %d), %d calls per row\n", parallelism, stablert::CoreBudget(), calls);
  if (parallelism < 2) return 0;

  // 8 MB of floats read and written in place: ~0.3-0.5 ms on one core.
  std::vector<float> data(size_t{1} << 21, 1.0f);
  const size_t n = data.size();

  for (int gap_us : {0, 20, 60, 150, 400, 2000}) {
    std::vector<double> start, empty;
    int handed = 0;
    for (int c = 0; c < calls; ++c) {
      Gap(gap_us);
      const std::thread::id caller = std::this_thread::get_id();
      std::atomic<int64_t> first_other{-1};
      const Clock::time_point t0 = Clock::now();
      pool.ParallelFor(parallelism, [&](int) {
        if (std::this_thread::get_id() != caller) {
          int64_t expected = -1;
          first_other.compare_exchange_strong(expected, (Clock::now() - t0).count());
        }
      });
      empty.push_back(Micros(Clock::now() - t0));
      if (first_other.load() >= 0) {
        ++handed;
        start.push_back(Micros(Clock::duration(first_other.load())));
      }
    }
    Report("start (handoff)", gap_us, start);
    Report("empty ParallelFor", gap_us, empty);
    std::printf("%-22s gap %5d µs: %d of %d calls had a part on a worker\n", "", gap_us, handed, calls);
  }

  for (int chunks : {parallelism, 4 * parallelism}) {
    for (int gap_us : {0, 60, 400}) {
      std::vector<double> work;
      const int work_calls = std::max(1, calls / 4);
      for (int c = 0; c < work_calls; ++c) {
        Gap(gap_us);
        const Clock::time_point t0 = Clock::now();
        pool.ParallelForChunks(parallelism, chunks, [&](int, int k) {
          const size_t begin = n * static_cast<size_t>(k) / static_cast<size_t>(chunks);
          const size_t end = n * static_cast<size_t>(k + 1) / static_cast<size_t>(chunks);
          for (size_t i = begin; i < end; ++i) data[i] = data[i] * 0.999f + 0.001f;
        });
        work.push_back(Micros(Clock::now() - t0));
      }
      char label[64];
      std::snprintf(label, sizeof(label), "work 8MB, %d chunks", chunks);
      Report(label, gap_us, work);
    }
  }
  // One thread, for reference.
  std::vector<double> alone;
  for (int c = 0; c < std::max(1, calls / 4); ++c) {
    const Clock::time_point t0 = Clock::now();
    for (size_t i = 0; i < n; ++i) data[i] = data[i] * 0.999f + 0.001f;
    alone.push_back(Micros(Clock::now() - t0));
  }
  Report("work 8MB, one thread", 0, alone);
  std::printf("# checksum %g\n", static_cast<double>(data[n / 2]));
  return 0;
}
