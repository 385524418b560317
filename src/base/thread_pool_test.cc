#include "base/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif
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

TEST(ThreadPool, ScheduleReturnsAtOnceAndRunsEveryTaskOnAWorker) {
  ThreadPool pool(2);
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  int done = 0;
  std::vector<std::thread::id> runners;
  constexpr int kTasks = 1000;
  // The first task waits until every Schedule call has returned: Schedule does not run tasks.
  pool.Schedule([&] {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return release; });
    ++done;
    runners.push_back(std::this_thread::get_id());
    changed.notify_all();
  });
  for (int i = 1; i < kTasks; ++i)
    pool.Schedule([&] {
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      runners.push_back(std::this_thread::get_id());
      changed.notify_all();
    });
  {
    std::unique_lock<std::mutex> lock(mutex);
    release = true;
    changed.notify_all();
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(30), [&] { return done == kTasks; }));
    for (std::thread::id runner : runners) EXPECT_NE(runner, std::this_thread::get_id());
    std::sort(runners.begin(), runners.end());
    // The pool's two workers ran them all: no thread per task.
    EXPECT_LE(std::unique(runners.begin(), runners.end()) - runners.begin(), 2);
  }
}

TEST(ThreadPool, ScheduledTasksAndParallelForShareTheWorkers) {
  ThreadPool pool(1);
  std::atomic<int> tasks{0}, parts{0};
  for (int round = 0; round < 100; ++round) {
    pool.Schedule([&] { tasks.fetch_add(1); });
    pool.ParallelFor(4, [&](int) { parts.fetch_add(1); });
  }
  EXPECT_EQ(parts.load(), 400);
  for (int wait = 0; wait < 30000 && tasks.load() != 100; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(tasks.load(), 100);
}

TEST(ThreadPool, TasksQueuedBeforeDestructionAllRun) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 200; ++i) pool.Schedule([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 200);
}

TEST(ThreadPool, WithoutWorkersScheduledTasksStillRun) {
  ThreadPool pool(0);
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) pool.Schedule([&] { ran.fetch_add(1); });
  for (int wait = 0; wait < 30000 && ran.load() != 5; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(ran.load(), 5);
}

TEST(ThreadPool, WithoutWorkersTheCallerRunsEverything) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.parallelism(), 1);
  int sum = 0;
  pool.ParallelFor(10, [&](int i) { sum += i; });
  EXPECT_EQ(sum, 45);
}

TEST(ThreadPool, PartsRunInTheCallersFloatingPointEnvironment) {
#if defined(__x86_64__)
  ThreadPool pool(2);
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040);  // flush denormals to zero, treat denormal inputs as zero
  std::vector<float> results(64);
  volatile float tiny = 1e-39f;  // a denormal
  pool.ParallelFor(64, [&](int i) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // let the workers take parts
    results[static_cast<size_t>(i)] = tiny * 0.5f;
  });
  _mm_setcsr(saved);
  for (float r : results) EXPECT_EQ(r, 0.0f);
  // And the workers' own environment is back afterwards.
  pool.ParallelFor(64, [&](int i) { results[static_cast<size_t>(i)] = tiny * 0.5f; });
  for (float r : results) EXPECT_EQ(r, 1e-39f * 0.5f);
#else
  GTEST_SKIP() << "checks the x86 MXCSR register";
#endif
}

TEST(ThreadPool, ChunksRunOnceEachWithOnePartPerThreadAtATime) {
  ThreadPool pool(3);
  for (int parts : {1, 2, 4, 70}) {
    for (int chunks : {1, 3, 8, 100, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(chunks));
      std::vector<std::atomic<int>> busy(static_cast<size_t>(std::max(parts, 1)));
      std::atomic<bool> shared{false};
      pool.ParallelForChunks(parts, chunks, [&](int part, int chunk) {
        if (busy[static_cast<size_t>(part)].fetch_add(1) != 0) shared = true;  // two threads, one part
        runs[static_cast<size_t>(chunk)].fetch_add(1);
        busy[static_cast<size_t>(part)].fetch_sub(1);
      });
      EXPECT_FALSE(shared.load()) << parts << " parts, " << chunks << " chunks";
      for (int c = 0; c < chunks; ++c)
        EXPECT_EQ(runs[static_cast<size_t>(c)].load(), 1) << parts << " parts, chunk " << c << " of " << chunks;
    }
  }
}

TEST(ThreadPool, TheSharedPoolHasOneThreadPerCoreOfTheBudget) {
  EXPECT_GE(CoreBudget(), 1);
  EXPECT_EQ(ThreadPool::Shared().parallelism(), CoreBudget());
}

TEST(ThreadPool, MoveToAnotherCpuLeavesTheCpuAndKeepsTheAffinityMask) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  EXPECT_EQ(MoveToAnotherCpu(-1), -1);
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "this process may run on one CPU only: there is no other to move to";
  // Run where the scheduler puts us; then move off that CPU.
  const int here = sched_getcpu();
  ASSERT_GE(here, 0);
  const int moved_to = MoveToAnotherCpu(here);
  EXPECT_NE(moved_to, here);
  EXPECT_GE(moved_to, 0);
  EXPECT_TRUE(CPU_ISSET(moved_to, &before));
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the thread must not stay pinned";
  // A CPU outside the mask: nothing to leave.
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &before)) continue;
    EXPECT_EQ(MoveToAnotherCpu(cpu), -1);
    break;
  }
}

}  // namespace
}  // namespace stablert
