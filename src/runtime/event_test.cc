#include "runtime/event.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
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

}  // namespace
}  // namespace stablert::runtime
