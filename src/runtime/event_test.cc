#include "runtime/event.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/work_queue.h"

namespace stablert::runtime {
namespace {

TEST(Event, SetOnceWakesWaitersAndRunsCallbacksOnce) {
  EventRef event = Event::Create();
  EXPECT_FALSE(event->IsReady());
  std::atomic<int> calls{0};
  event->OnReady([&](const Status& status) {
    EXPECT_EQ(status.code(), StatusCode::kAborted);
    ++calls;
  });
  std::thread waiter([&] { EXPECT_EQ(event->Await().code(), StatusCode::kAborted); });
  EXPECT_TRUE(event->Set(Status(StatusCode::kAborted, "stop")).ok());
  waiter.join();
  EXPECT_FALSE(event->Set(OkStatus()).ok());
  EXPECT_EQ(calls.load(), 1);
  // A callback registered after the event is set runs at once.
  event->OnReady([&](const Status&) { ++calls; });
  EXPECT_EQ(calls.load(), 2);
}

TEST(Event, AfterAllCarriesTheFirstError) {
  std::vector<EventRef> events = {Event::Create(), Event::Create(), Event::Create()};
  EventRef all = Event::AfterAll(events);
  events[1]->Set(InvalidArgument("second")).IgnoreError();
  EXPECT_FALSE(all->IsReady());
  events[0]->Set(OkStatus()).IgnoreError();
  events[2]->Set(Internal("third")).IgnoreError();
  ASSERT_TRUE(all->IsReady());
  EXPECT_EQ(all->status().message(), "second");
  EXPECT_TRUE(Event::AfterAll({})->IsReady());
}

TEST(WorkQueue, RunsTasksInOrderAndDrainsOnDestruction) {
  std::vector<int> order;
  {
    WorkQueue queue("test");
    for (int i = 0; i < 100; ++i) queue.Submit([&order, i] { order.push_back(i); });
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(WorkQueue, RunsInlineOnlyWhenIdleAndKeepsTheOrder) {
  WorkQueue queue("test");
  std::vector<int> order;
  // Idle: the task runs on this thread, before the call returns.
  const std::thread::id self = std::this_thread::get_id();
  std::thread::id ran_on;
  EXPECT_TRUE(queue.RunInlineIfIdle([&] {
    ran_on = std::this_thread::get_id();
    order.push_back(0);
  }));
  EXPECT_EQ(ran_on, self);
  // Busy: a queued task is still running, so an inline request is refused and the caller
  // queues the work behind it.
  EventRef release = Event::Create();
  EventRef started = Event::Create();
  queue.Submit([&] {
    started->Set(OkStatus()).IgnoreError();
    release->Await().IgnoreError();
    order.push_back(1);
  });
  started->Await().IgnoreError();
  std::function<void()> later = [&] { order.push_back(2); };
  EXPECT_FALSE(queue.RunInlineIfIdle(later));
  queue.Submit(later);
  release->Set(OkStatus()).IgnoreError();
  EventRef drained = Event::Create();
  queue.Submit([&] { drained->Set(OkStatus()).IgnoreError(); });
  drained->Await().IgnoreError();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

// The voluntary context switches of this process's thread named `name` (Linux), or -1.
int64_t VoluntarySwitchesOf(const std::string& name) {
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (!std::getline(comm, line) || line != name) continue;
    std::ifstream status(task.path() / "status");
    while (std::getline(status, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stoll(line.substr(line.find(':') + 1));
  }
  return -1;
}

// An inline run leaves the waiting worker asleep (no wake-up per call of a small program);
// a task submitted during an inline run still runs.
TEST(WorkQueue, InlineRunsDoNotWakeTheWorker) {
  WorkQueue queue("wq-inline-test");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the worker is waiting
  const int64_t before = VoluntarySwitchesOf("wq-inline-test");
  if (before < 0) GTEST_SKIP() << "no /proc/self/task/*/status to count the worker's context switches";
  int runs = 0;
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(queue.RunInlineIfIdle([&] { ++runs; }));
    // Calls spaced as a program's calls are, so that a woken worker would wait again
    // before the next one (one voluntary switch per wake-up: ~100 when it was woken).
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  EXPECT_EQ(runs, 100);
  EXPECT_LE(VoluntarySwitchesOf("wq-inline-test") - before, 3);
  EventRef ran = Event::Create();
  EXPECT_TRUE(queue.RunInlineIfIdle([&] { queue.Submit([&] { ran->Set(OkStatus()).IgnoreError(); }); }));
  EXPECT_TRUE(ran->Await().ok());
}

}  // namespace
}  // namespace stablert::runtime
