// The PJRT C API conformance suite (`stablert conform PLUGIN`): checks any plugin against the
// contracts frameworks rely on, each test in its own child process so that a crash or a hang
// is a result, not the end of the run.
//
// A test's body returns OK (pass), Unimplemented (the plugin does not offer what the test
// needs: "unsupported"), or another Status (fail, with the reason). The runner starts
// `<self> conform-child TEST PLUGIN` per test, reads the child's one result line, and reports
// "crash" (a signal or an exit without a result) and "timeout" (killed after the limit).
// Reports are JSON (one object per test, one per line inside the "results" array), and two
// reports can be compared (`--diff`). The runner is thread-compatible (one run at a time).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/client.h"
#include "host/plugin.h"

namespace stablert::conform {

enum class Outcome { kPass, kFail, kUnsupported, kCrash, kTimeout };
const char* OutcomeName(Outcome outcome);

struct Result {
  std::string name;
  Outcome outcome = Outcome::kFail;
  std::string detail;
  double seconds = 0;
};

// What a test body gets: the plugin, loaded, and a fresh client with default options; for
// the differential tier ("diff." tests), the second plugin's path.
struct Context {
  std::shared_ptr<const host::Plugin> plugin;
  std::shared_ptr<host::Client> client;
  std::string diff_with;
};

struct TestCase {
  const char* name;   // "family.what", e.g. "buffer.round_trip_f32"
  const char* checks; // one line: the contract checked
  Status (*body)(Context&);
};

// Every test of the C API tier, in report order.
const std::vector<TestCase>& AllTests();
// The differential tier: one program on two plugins (same inputs, outputs compared with
// dtype-aware tolerances), named "diff.<program>"; run when a second plugin is given.
const std::vector<TestCase>& DifferentialTests();

// Runs test `name` in this process and prints its result line (the child's side).
// `diff_with`: the second plugin of a differential test ("" otherwise).
int RunChild(const std::string& name, const std::string& plugin, const std::string& diff_with = "");

// Runs the tests whose names contain `filter` (all if empty), each in a child process of
// `self` (the stablert executable), with `timeout` per test; with `diff_with` (a second
// plugin's path) also the differential tier. Progress goes to stderr.
std::vector<Result> RunSuite(const std::string& self, const std::string& plugin, const std::string& filter,
                             std::chrono::seconds timeout, const std::string& diff_with = "");

std::string ReportJson(const std::string& plugin, const std::string& plugin_version,
                       const std::vector<Result>& results);
// Reads a report written by ReportJson. InvalidArgument naming the file otherwise.
StatusOr<std::vector<Result>> ReadReport(const std::string& path);

}  // namespace stablert::conform
