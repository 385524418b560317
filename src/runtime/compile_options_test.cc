#include "runtime/compile_options.h"

#include <gtest/gtest.h>

#include "base/proto_wire.h"

namespace stablert::runtime {
namespace {

std::string Options(int replicas, int partitions, const std::vector<std::vector<int64_t>>& assignment) {
  proto::WireWriter build;
  build.Varint(4, replicas);
  build.Varint(5, partitions);
  build.Varint(6, 1);
  build.Varint(19, 1);
  if (!assignment.empty()) build.Bytes(9, SerializeDeviceAssignment(assignment));
  proto::WireWriter options;
  options.Bytes(3, build.data());
  options.Bytes(99, "a field from a newer proto is skipped");
  return options.Take();
}

TEST(CompileOptions, DecodesReplicasPartitionsAndAssignment) {
  auto options = ParseCompileOptions(Options(2, 3, {{0, 1, 2}, {3, 4, 5}}));
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->num_replicas, 2);
  EXPECT_EQ(options->num_partitions, 3);
  EXPECT_TRUE(options->use_spmd_partitioning);
  EXPECT_TRUE(options->use_shardy_partitioner);
  EXPECT_EQ(options->device_assignment, (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}}));
}

TEST(CompileOptions, EmptyBytesMeanDefaults) {
  auto options = ParseCompileOptions("");
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->num_replicas, 1);
  EXPECT_EQ(options->num_partitions, 1);
  EXPECT_FALSE(options->has_device_assignment());
}

TEST(CompileOptions, MalformedBytesAreInvalidArgument) {
  for (std::string bytes : {std::string("\xff\xff\xff"), std::string("\x1a\x50", 2), std::string("garbage!")}) {
    auto options = ParseCompileOptions(bytes);
    ASSERT_FALSE(options.ok());
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(options.status().message().rfind("failed to deserialize CompileOptionsProto", 0), 0u)
        << options.status().message();
  }
}

TEST(CompileOptions, AssignmentMustMatchTheCounts) {
  auto options = ParseCompileOptions(Options(1, 2, {{0}}));
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("device_assignment is 1x1"), std::string::npos);
}

}  // namespace
}  // namespace stablert::runtime
