#include "runtime/dump.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace stablert::runtime {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("stablert_dump_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

TEST(Dump, MissingDirectoryIsCreatedRecursively) {
  fs::path dir = TempDir("a") / "b" / "c";
  ASSERT_TRUE(PrepareDumpDirectory({dir.string(), "STABLERT_DUMP_DIR"}).ok());
  EXPECT_TRUE(fs::is_directory(dir));
}

TEST(Dump, UncreatableDirectoryNamesTheSettingAndPath) {
  fs::path base = TempDir("blocked");
  fs::create_directories(base);
  std::ofstream(base / "file") << "x";
  std::string path = (base / "file" / "sub").string();
  Status status = PrepareDumpDirectory({path, "STABLERT_DUMP_DIR"});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("STABLERT_DUMP_DIR=" + path + ": cannot create the dump directory"),
            std::string_view::npos)
      << status.message();
  status = PrepareDumpDirectory({(base / "file").string(), "XLA_FLAGS --xla_dump_to"});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("XLA_FLAGS --xla_dump_to="), std::string_view::npos) << status.message();
}

TEST(Dump, FileNamesHoldPidCounterModuleAndFingerprint) {
  fs::path dir = TempDir("names");
  CompileDump first(env::DumpDir{dir.string(), "STABLERT_DUMP_DIR"}, "program one");
  CompileDump second(env::DumpDir{dir.string(), "STABLERT_DUMP_DIR"}, "program two");
  ASSERT_TRUE(first.status().ok()) << first.status().ToString();
  first.SetModuleName("jit_f");
  second.SetModuleName("jit f/<odd>");
  first.Write("plan.txt", "plan");
  second.Write("plan.txt", "plan");
  ASSERT_TRUE(first.status().ok() && second.status().ok());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u);
  const std::string pid = std::to_string(::getpid());
  EXPECT_EQ(names[0].rfind("stablert." + pid + ".", 0), 0u) << names[0];
  EXPECT_NE(names[0].find(".jit_f."), std::string::npos) << names[0];
  EXPECT_NE(names[1].find(".jit_f__odd_."), std::string::npos) << names[1];
  EXPECT_NE(names[0], names[1]);
  EXPECT_TRUE(names[0].ends_with(".plan.txt"));
}

TEST(Dump, DisabledDumpWritesNothing) {
  CompileDump dump(std::nullopt, "program");
  EXPECT_FALSE(dump.enabled());
  dump.Write("plan.txt", "x");
  EXPECT_TRUE(dump.status().ok());
}

TEST(Dump, TimerReportsPhasesInOrder) {
  CompileTimer timer;
  timer.EndPhase("read");
  timer.EndPhase("lower");
  std::string json = timer.ToJson("jit_\"f\"");
  EXPECT_NE(json.find("\"module\": \"jit_\\\"f\\\"\""), std::string::npos) << json;
  EXPECT_LT(json.find("\"read\": "), json.find("\"lower\": ")) << json;
  EXPECT_NE(json.find("\"total_us\": "), std::string::npos) << json;
}

}  // namespace
}  // namespace stablert::runtime
