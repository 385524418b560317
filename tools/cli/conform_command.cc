// stablert conform PLUGIN | conform --diff A.json B.json: the conformance suite.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "commands.h"
#include "conformance.h"

namespace stablert::cli {
namespace {

constexpr char kUsage[] =
    "stablert conform PLUGIN [--diff-with OTHER] [--json FILE] [--filter TEXT] [--timeout SECONDS]\n"
    "       stablert conform --diff A.json B.json";
constexpr char kHelp[] =
    "usage: stablert conform PLUGIN [--diff-with OTHER] [--json FILE] [--filter TEXT] [--timeout SECONDS]\n"
    "       stablert conform --diff A.json B.json\n"
    "\n"
    "The PJRT C API conformance suite. Each test runs in its own child process, so a crash or a\n"
    "hang is a result: pass, fail (with the reason), unsupported (the plugin lacks what the test\n"
    "needs), crash (with the signal) or timeout.\n"
    "\n"
    "options:\n"
    "  --diff-with OTHER    also run the differential tier: JAX programs (matmul + softmax,\n"
    "                       reductions, a while loop, sort, scatter, f16/bf16) on PLUGIN and on\n"
    "                       OTHER with the same inputs; outputs must agree within per-type\n"
    "                       tolerances (f32 1e-5, f16 1e-3, bf16 1e-2, integers exactly)\n"
    "  --json FILE          write a JSON report\n"
    "  --filter TEXT        only the tests whose names contain TEXT\n"
    "  --timeout SECONDS    per test (default 60)\n"
    "  --diff A.json B.json list the tests whose outcomes differ between two reports\n"
    "\n"
    "exit status: 0 the suite ran (whatever the outcomes), 3 (--diff) reports differ, 1 an error,\n"
    "2 bad usage\n";

int Diff(const std::string& a_path, const std::string& b_path) {
  StatusOr<std::vector<conform::Result>> a = conform::ReadReport(a_path);
  if (!a.ok()) return Fail(a.status().ToString());
  StatusOr<std::vector<conform::Result>> b = conform::ReadReport(b_path);
  if (!b.ok()) return Fail(b.status().ToString());
  std::map<std::string, std::pair<std::string, std::string>> outcomes;
  for (const conform::Result& r : *a) outcomes[r.name].first = conform::OutcomeName(r.outcome);
  for (const conform::Result& r : *b) outcomes[r.name].second = conform::OutcomeName(r.outcome);
  int differences = 0;
  for (const auto& [name, pair] : outcomes) {
    if (pair.first == pair.second) continue;
    ++differences;
    std::printf("%-40s %-12s %s\n", name.c_str(), pair.first.empty() ? "(absent)" : pair.first.c_str(),
                pair.second.empty() ? "(absent)" : pair.second.c_str());
  }
  std::printf("%d of %zu tests differ between %s and %s\n", differences, outcomes.size(), a_path.c_str(),
              b_path.c_str());
  return differences ? 3 : 0;
}

}  // namespace

int ConformCommand(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) return std::fputs(kHelp, stdout), 0;
  if (!args.empty() && args[0] == "--diff") {
    if (args.size() != 3) return BadUsage(kUsage, "--diff takes two reports");
    return Diff(args[1], args[2]);
  }
  std::string plugin, json, filter, diff_with;
  long timeout = 60;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool takes_value = a == "--json" || a == "--filter" || a == "--timeout" || a == "--diff-with";
    if (takes_value && i + 1 >= args.size()) return BadUsage(kUsage, a + " needs a value");
    if (a == "--json") json = args[++i];
    else if (a == "--filter") filter = args[++i];
    else if (a == "--diff-with") diff_with = args[++i];
    else if (a == "--timeout") {
      char* end = nullptr;
      const std::string& v = args[++i];
      timeout = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || timeout < 1 || timeout > 86400)
        return BadUsage(kUsage, "--timeout '" + v + "': expected 1..86400 seconds");
    } else if (!a.empty() && a[0] == '-') return BadUsage(kUsage, "unknown option " + a);
    else if (plugin.empty()) plugin = a;
    else return BadUsage(kUsage, "more than one PLUGIN");
  }
  if (plugin.empty()) return BadUsage(kUsage, "expected PLUGIN");
  StatusOr<std::shared_ptr<const host::Plugin>> loaded = host::Plugin::Load(plugin);
  if (!loaded.ok()) return Fail(loaded.status().ToString());
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Fail("cannot find the stablert executable (/proc/self/exe)");
  self[n] = '\0';
  // Children get the resolved path, so a name resolves once, here.
  std::string other;
  if (!diff_with.empty()) {
    StatusOr<std::shared_ptr<const host::Plugin>> reference = host::Plugin::Load(diff_with);
    if (!reference.ok()) return Fail(reference.status().ToString());
    other = (*reference)->path();
  }
  std::vector<conform::Result> results =
      conform::RunSuite(self, (*loaded)->path(), filter, std::chrono::seconds(timeout), other);
  std::map<conform::Outcome, int> counts;
  for (const conform::Result& r : results) ++counts[r.outcome];
  std::printf("%s (PJRT %s): %zu tests: %d pass, %d fail, %d unsupported, %d crash, %d timeout\n",
              (*loaded)->path().c_str(), (*loaded)->version().c_str(), results.size(),
              counts[conform::Outcome::kPass], counts[conform::Outcome::kFail],
              counts[conform::Outcome::kUnsupported], counts[conform::Outcome::kCrash],
              counts[conform::Outcome::kTimeout]);
  if (!json.empty()) {
    std::ofstream out(json);
    out << conform::ReportJson((*loaded)->path(), (*loaded)->version(), results);
    if (!out) return Fail(json + ": cannot write the report");
  }
  return 0;
}

int ConformChildCommand(const std::vector<std::string>& args) {
  if (args.size() == 4 && args[2] == "--diff-with") return conform::RunChild(args[0], args[1], args[3]);
  if (args.size() != 2)
    return BadUsage("stablert conform-child TEST PLUGIN [--diff-with OTHER]", "expected TEST and PLUGIN");
  return conform::RunChild(args[0], args[1]);
}

}  // namespace stablert::cli
