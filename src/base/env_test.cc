#include "base/env.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace stablert::env {
namespace {

// Sets a variable for the scope of a test and restores its previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void ExpectError(const Status& status, std::initializer_list<std::string_view> parts) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  for (std::string_view part : parts)
    EXPECT_NE(status.message().find(part), std::string_view::npos) << status.message() << " lacks " << part;
}

TEST(EnvTest, BoolAcceptsTheUsualSpellingsInAnyCase) {
  for (const char* yes : {"1", "true", "TRUE", "True", "on", "ON", "yes", "Yes", " yes "})
    EXPECT_TRUE(*ParseBool("X", yes)) << yes;
  for (const char* no : {"0", "false", "FALSE", "off", "Off", "no", "NO"})
    EXPECT_FALSE(*ParseBool("X", no)) << no;
  for (const char* bad : {"2", "enabled", "t", "y", "", "-1", "off2", "0x1"})
    ExpectError(ParseBool("STABLERT_PARTITIONER", bad).status(),
                {"STABLERT_PARTITIONER='", bad, "' is not a boolean", "true", "off"});
}

TEST(EnvTest, IntIsRangeChecked) {
  EXPECT_EQ(*ParseInt("N", "4", 1, 8), 4);
  EXPECT_EQ(*ParseInt("N", "+8", 1, 8), 8);
  EXPECT_EQ(*ParseInt("N", " 1 ", 1, 8), 1);
  for (const char* bad : {"0", "-1", "9", "abc", "", "1.5", "4x", "99999999999999999999999", "0x4"})
    ExpectError(ParseInt("STABLERT_DEVICE_COUNT", bad, 1, 8).status(),
                {"STABLERT_DEVICE_COUNT='", bad, "' is not an integer in [1, 8]"});
}

TEST(EnvTest, SecondsMustBeFinitePositiveAndBounded) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("T", "0.5", 0.001, 86400), 0.5);
  EXPECT_DOUBLE_EQ(*ParseSeconds("T", "86400", 0.001, 86400), 86400);
  EXPECT_DOUBLE_EQ(*ParseSeconds("T", "1e2", 0.001, 86400), 100);
  for (const char* bad : {"inf", "-inf", "nan", "NaN", "1e300", "abc", "-5", "0", "", "0.0001", "86401", "5s"})
    ExpectError(ParseSeconds(kCollectiveTimeout, bad, 0.001, 86400).status(),
                {"STABLERT_COLLECTIVE_TIMEOUT_SECONDS='", bad, "' is not a finite number of seconds in [0.001, 86400]"});
}

TEST(EnvTest, DeviceCount) {
  {
    ScopedEnv unset(kDeviceCount, nullptr);
    EXPECT_EQ(*DeviceCount(), 1);
  }
  {
    ScopedEnv empty(kDeviceCount, "");
    EXPECT_EQ(*DeviceCount(), 1);
  }
  {
    ScopedEnv four(kDeviceCount, "4");
    EXPECT_EQ(*DeviceCount(), 4);
  }
  for (const char* bad : {"0", "-1", "4097", "lots", "2.0"}) {
    ScopedEnv set(kDeviceCount, bad);
    ExpectError(DeviceCount().status(), {"STABLERT_DEVICE_COUNT='", bad, "[1, 4096]"});
    ExpectError(CheckEnvironment(), {"STABLERT_DEVICE_COUNT"});
  }
}

TEST(EnvTest, CollectiveTimeout) {
  {
    ScopedEnv unset(kCollectiveTimeout, nullptr);
    EXPECT_EQ(CollectiveTimeout()->count(), 60000);
  }
  {
    ScopedEnv half(kCollectiveTimeout, "0.5");
    EXPECT_EQ(CollectiveTimeout()->count(), 500);
  }
  {
    ScopedEnv tiny(kCollectiveTimeout, "0.001");
    EXPECT_EQ(CollectiveTimeout()->count(), 1);
  }
  for (const char* bad : {"inf", "nan", "1e300", "abc", "-5", "0"}) {
    ScopedEnv set(kCollectiveTimeout, bad);
    ExpectError(CollectiveTimeout().status(), {"STABLERT_COLLECTIVE_TIMEOUT_SECONDS='", bad, "'"});
    ExpectError(CheckEnvironment(), {"STABLERT_COLLECTIVE_TIMEOUT_SECONDS"});
  }
}

TEST(EnvTest, CollectiveAddressIsANumericIpv4Address) {
  {
    ScopedEnv unset(kCollectiveAddress, nullptr);
    EXPECT_FALSE(CollectiveAddress()->has_value());
  }
  {
    ScopedEnv loopback(kCollectiveAddress, "127.0.0.1");
    EXPECT_EQ(CollectiveAddress()->value(), "127.0.0.1");
  }
  for (const char* bad : {"localhost", "127.0.0.1:80", "::1", "300.1.1.1"}) {
    ScopedEnv set(kCollectiveAddress, bad);
    ExpectError(CollectiveAddress().status(), {"STABLERT_COLLECTIVE_ADDRESS='", bad, "IPv4"});
    ExpectError(CheckEnvironment(), {"STABLERT_COLLECTIVE_ADDRESS"});
  }
}

TEST(EnvTest, PartitionerSwitches) {
  {
    ScopedEnv unset(kPartitioner, nullptr);
    ScopedEnv debug(kDebugPartitioner, nullptr);
    EXPECT_TRUE(*PartitionerEnabled());
    EXPECT_FALSE(*DebugPartitioner());
  }
  {
    ScopedEnv off(kPartitioner, "off");
    ScopedEnv debug(kDebugPartitioner, "true");
    EXPECT_FALSE(*PartitionerEnabled());
    EXPECT_TRUE(*DebugPartitioner());
  }
  {
    ScopedEnv bad(kPartitioner, "disabled");
    ExpectError(PartitionerEnabled().status(), {"STABLERT_PARTITIONER='disabled'"});
    ExpectError(CheckEnvironment(), {"STABLERT_PARTITIONER"});
  }
  {
    ScopedEnv bad(kDebugPartitioner, "verbose");
    ExpectError(DebugPartitioner().status(), {"STABLERT_DEBUG_PARTITIONER='verbose'"});
    ExpectError(CheckEnvironment(), {"STABLERT_DEBUG_PARTITIONER"});
  }
}

TEST(EnvTest, IsaLevels) {
  {
    ScopedEnv unset(kIsa, nullptr);
    EXPECT_EQ(*IsaLevel(), Isa::kBest);
  }
  for (auto [text, level] : {std::pair{"best", Isa::kBest}, std::pair{"AVX512", Isa::kAvx512},
                             std::pair{" avx2 ", Isa::kAvx2}, std::pair{"sse4", Isa::kSse4}}) {
    ScopedEnv set(kIsa, text);
    EXPECT_EQ(*IsaLevel(), level) << text;
  }
  for (const char* bad : {"avx", "sse2", "neon", "avx-512", "1"}) {
    ScopedEnv set(kIsa, bad);
    ExpectError(IsaLevel().status(), {"STABLERT_ISA='", bad, "' is not", "best, avx512, avx2 or sse4"});
    ExpectError(CheckEnvironment(), {"STABLERT_ISA"});
  }
}

TEST(EnvTest, XlaDumpToIsTheOnlyXlaFlagRead) {
  EXPECT_FALSE(XlaDumpTo("")->has_value());
  EXPECT_FALSE(XlaDumpTo("--xla_force_host_platform_device_count=4")->has_value());
  EXPECT_EQ(**XlaDumpTo("--xla_dump_to=/tmp/a"), "/tmp/a");
  EXPECT_EQ(**XlaDumpTo("--xla_force_host_platform_device_count=4  --xla_dump_to=/tmp/a --xla_dump_hlo_as_text"),
            "/tmp/a");
  EXPECT_EQ(**XlaDumpTo("--xla_dump_to='/tmp/with space' --xla_dump_to=/tmp/b"), "/tmp/b");
  EXPECT_EQ(**XlaDumpTo("--xla_dump_to=\"/tmp/with space\""), "/tmp/with space");
  EXPECT_FALSE(XlaDumpTo("--xla_dump_to_other=/tmp/a")->has_value());
  ExpectError(XlaDumpTo("--xla_dump_to=-").status(), {"XLA_FLAGS", "STABLERT_DUMP_DIR"});
  ExpectError(XlaDumpTo("--xla_dump_to=sponge").status(), {"XLA_FLAGS", "STABLERT_DUMP_DIR"});
}

TEST(EnvTest, DumpDirectoryPrefersStablertDumpDir) {
  {
    ScopedEnv dir(kDumpDir, nullptr);
    ScopedEnv flags(kXlaFlags, nullptr);
    EXPECT_FALSE(DumpDirectory()->has_value());
  }
  {
    ScopedEnv dir(kDumpDir, nullptr);
    ScopedEnv flags(kXlaFlags, "--xla_dump_to=/tmp/x");
    auto found = DumpDirectory();
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->path, "/tmp/x");
    EXPECT_EQ((*found)->source, "XLA_FLAGS --xla_dump_to");
  }
  {
    ScopedEnv dir(kDumpDir, "/tmp/y");
    ScopedEnv flags(kXlaFlags, "--xla_dump_to=/tmp/x");
    auto found = DumpDirectory();
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->path, "/tmp/y");
    EXPECT_EQ((*found)->source, "STABLERT_DUMP_DIR");
  }
  {
    ScopedEnv dir(kDumpDir, nullptr);
    ScopedEnv flags(kXlaFlags, "--xla_dump_to=-");
    ExpectError(CheckEnvironment(), {"XLA_FLAGS"});
  }
}

}  // namespace
}  // namespace stablert::env
