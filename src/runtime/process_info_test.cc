#include "runtime/process_info.h"

#include <gtest/gtest.h>

namespace stablert::runtime {
namespace {

ProcessInfo Task(int id, ProcessInfo::State state) {
  ProcessInfo info;
  info.task_id = id;
  info.incarnation_id = 100 + id;
  info.state = state;
  return info;
}

TEST(GlobalProcessInfoTest, StoresWhatTheJobCanHave) {
  GlobalProcessInfo store;
  EXPECT_TRUE(store.Get().empty());
  ASSERT_TRUE(store.Update({Task(0, ProcessInfo::State::kConnected)}, 1).ok());
  ASSERT_EQ(store.Get().size(), 1u);
  EXPECT_EQ(store.Get()[0].incarnation_id, 100u);
  ProcessInfo failed = Task(0, ProcessInfo::State::kError);
  failed.error_message = "lost";
  ASSERT_TRUE(store.Update({failed}, 1).ok());
  EXPECT_EQ(store.Get()[0].state, ProcessInfo::State::kError);
  EXPECT_EQ(store.Get()[0].error_message, "lost");
  // A state this build does not name is stored as given.
  ASSERT_TRUE(store.Update({Task(0, static_cast<ProcessInfo::State>(7))}, 1).ok());
  ASSERT_TRUE(store.Update({Task(1, ProcessInfo::State::kConnected), Task(0, ProcessInfo::State::kConnected)}, 2).ok());
  EXPECT_EQ(store.Get().size(), 2u);
}

TEST(GlobalProcessInfoTest, RejectsTasksOutsideTheJobAndKeepsTheLastGoodReport) {
  GlobalProcessInfo store;
  ASSERT_TRUE(store.Update({Task(0, ProcessInfo::State::kConnected)}, 1).ok());
  Status outside = store.Update({Task(0, ProcessInfo::State::kConnected), Task(1, ProcessInfo::State::kConnected)}, 1);
  EXPECT_FALSE(outside.ok());
  EXPECT_NE(outside.ToString().find("task 1"), std::string::npos) << outside.ToString();
  EXPECT_FALSE(store.Update({Task(-1, ProcessInfo::State::kConnected)}, 1).ok());
  EXPECT_FALSE(store.Update({Task(0, ProcessInfo::State::kConnected), Task(0, ProcessInfo::State::kError)}, 1).ok());
  ASSERT_EQ(store.Get().size(), 1u);
  EXPECT_EQ(store.Get()[0].state, ProcessInfo::State::kConnected);
}

}  // namespace
}  // namespace stablert::runtime
