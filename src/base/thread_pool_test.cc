#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace stablert {
namespace {

TEST(ThreadPool, RunsEveryPartOnceAndWaitsForAll) {
  ThreadPool pool(3);
  for (int n : {0, 1, 2, 7, 100}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
    pool.ParallelFor(n, [&](int i) { runs[static_cast<size_t>(i)].fetch_add(1); });
    for (int i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "n=" << n << " part " << i;
  }
}

TEST(ThreadPool, ConcurrentAndNestedCallersFinish) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        pool.ParallelFor(4, [&](int) { pool.ParallelFor(3, [&](int) { total.fetch_add(1); }); });
    });
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 4 * 50 * 4 * 3);
}

TEST(ThreadPool, WithoutWorkersTheCallerRunsEverything) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.parallelism(), 1);
  int sum = 0;
  pool.ParallelFor(10, [&](int i) { sum += i; });
  EXPECT_EQ(sum, 45);
}

}  // namespace
}  // namespace stablert
