#include "kernels/ffi_execution.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

namespace stablert::kernels::ffi {
namespace {

TEST(FfiExecutionTest, ScopesNestPerThread) {
  EXPECT_EQ(CurrentExecution(), nullptr);
  ExecutionInfo outer{nullptr, 1, 10}, inner{nullptr, 2, 20};
  {
    ScopedExecution a(&outer);
    EXPECT_EQ(CurrentExecution(), &outer);
    {
      ScopedExecution b(&inner);
      EXPECT_EQ(CurrentExecution(), &inner);
      const ExecutionInfo* other_thread = &inner;
      std::thread([&] { other_thread = CurrentExecution(); }).join();
      EXPECT_EQ(other_thread, nullptr);  // another thread has its own (none)
    }
    EXPECT_EQ(CurrentExecution(), &outer);
  }
  EXPECT_EQ(CurrentExecution(), nullptr);
}

TEST(FfiExecutionTest, AnExecutionsOwnUserDataComesBeforeTheProcesss) {
  int own = 1, process = 2, other = 3;
  constexpr int64_t kType = 0x7e57'0001, kProcessOnly = 0x7e57'0002, kMissing = 0x7e57'0003;
  ASSERT_TRUE(AddProcessUserData("test", kType, &process).ok());
  ASSERT_TRUE(AddProcessUserData("test", kProcessOnly, &process).ok());
  EXPECT_TRUE(AddProcessUserData("test", kType, &process).ok());  // the same data again
  Status conflict = AddProcessUserData("test_function", kType, &other);
  EXPECT_EQ(conflict.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(conflict.message().find("test_function"), std::string_view::npos);
  EXPECT_EQ(AddProcessUserData("test", 0x7e57'0004, nullptr).code(), StatusCode::kInvalidArgument);

  ExecutionInfo info{std::make_shared<const UserData>(UserData{{kType, &own}}), 0, 1};
  EXPECT_EQ(info.Find(kType), &own);
  EXPECT_EQ(info.Find(kProcessOnly), &process);
  EXPECT_EQ(info.Find(kMissing), nullptr);
  EXPECT_EQ(ExecutionInfo{}.Find(kType), &process);
  EXPECT_EQ(FindProcessUserData(kMissing), nullptr);
}

}  // namespace
}  // namespace stablert::kernels::ffi
