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

// An env_option_overrides map entry {key 1, value 2: OptionOverrideProto}.
std::string Override(std::string_view name, uint32_t field, uint64_t varint, std::string_view text = {}) {
  proto::WireWriter value;
  if (field == 1) value.Bytes(1, text);
  else value.Varint(field, varint);
  proto::WireWriter entry;
  entry.Bytes(1, name);
  entry.Bytes(2, value.data());
  return entry.Take();
}

OptionOverride Make(std::string name, OptionOverride::Kind kind, std::string text = {}, int64_t i = 0, double d = 0,
                    bool b = false) {
  OptionOverride option;
  option.name = std::move(name);
  option.kind = kind;
  option.string_value = std::move(text);
  option.int_value = i;
  option.double_value = d;
  option.bool_value = b;
  return option;
}

std::string Check(OptionOverride option) {
  CompileOptions options;
  options.env_option_overrides.push_back(std::move(option));
  Status status = ValidateOptionOverrides(options);
  return status.ok() ? "ok" : std::string(status.message());
}

TEST(CompileOptions, DecodesOptionOverridesWithTheirKinds) {
  proto::WireWriter writer;
  writer.Bytes(7, Override("xla_cpu_enable_fast_math", 2, 1));
  writer.Bytes(7, Override("xla_dump_max_hlo_modules", 3, static_cast<uint64_t>(int64_t{-2})));
  writer.Bytes(7, Override("xla_dump_to", 1, 0, "/tmp/d"));
  auto options = ParseCompileOptions(writer.Take());
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  ASSERT_EQ(options->env_option_overrides.size(), 3u);
  EXPECT_EQ(options->env_option_overrides[0].kind, OptionOverride::Kind::kBool);
  EXPECT_TRUE(options->env_option_overrides[0].bool_value);
  EXPECT_EQ(options->env_option_overrides[1].kind, OptionOverride::Kind::kInt);
  EXPECT_EQ(options->env_option_overrides[1].int_value, -2);
  EXPECT_EQ(StringOverride(*options, "xla_dump_to"), "/tmp/d");
  EXPECT_TRUE(ValidateOptionOverrides(*options).ok());
  std::string text = CompileOptionsToString(*options);
  EXPECT_NE(text.find("xla_dump_max_hlo_modules = -2 (int)"), std::string::npos) << text;
}

TEST(CompileOptions, OverridesAreCheckedAsXlaDoes) {
  using K = OptionOverride::Kind;
  EXPECT_EQ(Check(Make("xla_cpu_enable_fast_math", K::kBool)), "ok");
  EXPECT_EQ(Check(Make("xla_cpu_enable_fastmath", K::kBool)), "No such compile option: 'xla_cpu_enable_fastmath'");
  EXPECT_EQ(Check(Make("xla_cpu_enable_fast_math", K::kString, "true")),
            "While setting option xla_cpu_enable_fast_math, 'true' is not a valid bool value.");
  EXPECT_EQ(Check(Make("xla_cpu_enable_fast_math", K::kDouble, "", 0, 1.5)),
            "While setting option xla_cpu_enable_fast_math, '1.5' is not a valid bool value.");
  EXPECT_EQ(Check(Make("xla_dump_max_hlo_modules", K::kInt, "", 7)), "ok");
  EXPECT_EQ(Check(Make("xla_dump_max_hlo_modules", K::kString, " +7 ")), "ok");
  EXPECT_EQ(Check(Make("xla_dump_max_hlo_modules", K::kInt, "", int64_t{1} << 40)),
            "While setting option xla_dump_max_hlo_modules, '1099511627776' is not a valid int32 value.");
  EXPECT_EQ(Check(Make("xla_dump_max_hlo_modules", K::kBool, "", 0, 0, true)),
            "While setting option xla_dump_max_hlo_modules, '1' is not a valid int32 value.");
  EXPECT_EQ(Check(Make("xla_debug_buffer_assignment_show_max", K::kInt, "", int64_t{1} << 40)), "ok");
  EXPECT_EQ(Check(Make("xla_gpu_autotune_gemm_rtol", K::kDouble, "", 0, 0.5)), "ok");
  EXPECT_EQ(Check(Make("xla_gpu_autotune_gemm_rtol", K::kDouble, "", 0, 1e300)),
            "While setting option xla_gpu_autotune_gemm_rtol, '1e+300' is not a valid float value.");
  EXPECT_EQ(Check(Make("xla_gpu_autotune_gemm_rtol", K::kInt, "", 1)),
            "While setting option xla_gpu_autotune_gemm_rtol, '1' is not a valid float value.");
  EXPECT_EQ(Check(Make("xla_dump_to", K::kInt, "", 3)), "While setting option xla_dump_to, '3' is not a valid string value.");
  EXPECT_EQ(Check(Make("xla_step_marker_location", K::kString, "STEP_MARK_AT_ENTRY")), "ok");
  EXPECT_EQ(Check(Make("xla_step_marker_location", K::kInt, "", 99)), "ok");
  EXPECT_EQ(Check(Make("xla_step_marker_location", K::kString, "bogus")),
            "While setting option xla_step_marker_location, 'bogus' is not a valid enum value.");
  EXPECT_EQ(Check(Make("xla_cpu_experimental_xnn_fusion_type", K::kString, "LIBRARY_FUSION_TYPE_DOT,bogus")),
            "While setting option xla_cpu_experimental_xnn_fusion_type, 'bogus' is not a valid enum value.");
  EXPECT_EQ(Check(Make("xla_backend_extra_options", K::kString, "a")),
            "While setting option xla_backend_extra_options, 'a' is not a valid message value.");
}

}  // namespace
}  // namespace stablert::runtime
