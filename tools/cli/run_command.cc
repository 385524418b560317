// stablert run / bench: one program on one plugin.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "commands.h"
#include "npy.h"
#include "run_program.h"

namespace stablert::cli {
namespace {

constexpr char kRunUsage[] =
    "stablert run PLUGIN PROGRAM [--in FILE.npy ...] [--inputs random|zeros] [--seed N] [--out DIR]";
constexpr char kBenchUsage[] =
    "stablert bench PLUGIN PROGRAM [--in FILE.npy ...] [--inputs random|zeros] [--seed N] [--runs N]";

struct Arguments {
  std::string plugin;
  std::string program;
  std::vector<std::string> inputs;
  InputKind kind = InputKind::kRandom;
  uint64_t seed = 0;
  std::string out_dir;
  int runs = 20;
};

// Parses the shared options; `problem` is set on bad usage.
Arguments Parse(const std::vector<std::string>& args, bool bench, std::string& problem) {
  Arguments parsed;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) {
        problem = a + " needs a value";
        return "";
      }
      return args[++i];
    };
    if (a == "--in") {
      parsed.inputs.push_back(value());
    } else if (a == "--inputs") {
      StatusOr<InputKind> kind = ParseInputKind(value());
      if (!kind.ok()) problem = std::string(kind.status().message());
      else parsed.kind = *kind;
    } else if (a == "--seed") {
      std::string v = value();
      char* end = nullptr;
      parsed.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end) problem = "--seed '" + v + "': expected a non-negative integer";
    } else if (a == "--out" && !bench) {
      parsed.out_dir = value();
    } else if (a == "--runs" && bench) {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 1000000) problem = "--runs '" + v + "': expected 1..1000000";
      parsed.runs = static_cast<int>(n);
    } else if (!a.empty() && a[0] == '-') {
      problem = "unknown option " + a;
    } else {
      positional.push_back(a);
    }
    if (!problem.empty()) return parsed;
  }
  if (positional.size() != 2) {
    problem = "expected PLUGIN and PROGRAM";
    return parsed;
  }
  parsed.plugin = positional[0];
  parsed.program = positional[1];
  return parsed;
}

// Up to six leading values of a literal of a common type, for the console ("" for others).
std::string Preview(const host::Literal& literal) {
  int element_bytes = 0;
  std::string out;
  for (size_t offset = 0, shown = 0; offset < literal.bytes.size() && shown < 6; ++shown) {
    const uint8_t* p = literal.bytes.data() + offset;
    char item[48];
    if (literal.type == PJRT_Buffer_Type_F32) {
      float v;
      std::memcpy(&v, p, 4);
      std::snprintf(item, sizeof item, "%g", v);
      element_bytes = 4;
    } else if (literal.type == PJRT_Buffer_Type_F64) {
      double v;
      std::memcpy(&v, p, 8);
      std::snprintf(item, sizeof item, "%g", v);
      element_bytes = 8;
    } else if (literal.type == PJRT_Buffer_Type_S32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      std::snprintf(item, sizeof item, "%d", v);
      element_bytes = 4;
    } else if (literal.type == PJRT_Buffer_Type_S64) {
      int64_t v;
      std::memcpy(&v, p, 8);
      std::snprintf(item, sizeof item, "%" PRId64, v);
      element_bytes = 8;
    } else {
      return "";
    }
    out += (out.empty() ? "" : " ") + std::string(item);
    offset += static_cast<size_t>(element_bytes);
  }
  if (element_bytes && literal.bytes.size() > 6 * static_cast<size_t>(element_bytes)) out += " ...";
  return out;
}

// The program compiled on the plugin with its inputs in place, as the parsed options ask.
StatusOr<ProgramRun> PrepareFromArguments(const Arguments& parsed) {
  STABLERT_ASSIGN_OR_RETURN(ProgramFile file, LoadProgramFile(parsed.program));
  STABLERT_ASSIGN_OR_RETURN(std::vector<host::Literal> inputs,
                            MakeInputs(file, parsed.inputs, parsed.kind, parsed.seed));
  return Prepare(parsed.plugin, file, inputs);
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  std::string problem;
  Arguments parsed = Parse(args, /*bench=*/false, problem);
  if (!problem.empty()) return BadUsage(kRunUsage, problem);
  StatusOr<ProgramRun> run = PrepareFromArguments(parsed);
  if (!run.ok()) return Fail(run.status().ToString());
  StatusOr<std::vector<host::Buffer>> outputs = ExecuteOnce(*run);
  if (!outputs.ok()) return Fail(outputs.status().ToString());
  StatusOr<std::vector<host::Literal>> literals = ReadBack(*outputs);
  if (!literals.ok()) return Fail(literals.status().ToString());
  if (!parsed.out_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parsed.out_dir, error);
    if (error) return Fail(parsed.out_dir + ": " + error.message());
  }
  for (size_t i = 0; i < literals->size(); ++i) {
    const host::Literal& literal = (*literals)[i];
    std::printf("output %zu: %s %s\n", i, DescribeLiteral(literal).c_str(), Preview(literal).c_str());
    if (parsed.out_dir.empty()) continue;
    std::string path = parsed.out_dir + "/output" + std::to_string(i) + ".npy";
    if (Status written = WriteNpy(path, literal); !written.ok()) return Fail(written.ToString());
  }
  return 0;
}

int BenchCommand(const std::vector<std::string>& args) {
  std::string problem;
  Arguments parsed = Parse(args, /*bench=*/true, problem);
  if (!problem.empty()) return BadUsage(kBenchUsage, problem);
  StatusOr<ProgramRun> run = PrepareFromArguments(parsed);
  if (!run.ok()) return Fail(run.status().ToString());
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  auto t0 = Clock::now();
  StatusOr<std::vector<host::Buffer>> first = ExecuteOnce(*run);
  double first_ms = ms(t0, Clock::now());
  if (!first.ok()) return Fail(first.status().ToString());
  std::vector<double> steady, dispatch;
  for (int r = 0; r < parsed.runs; ++r) {
    auto start = Clock::now();
    StatusOr<host::ExecuteResult> result = Launch(*run);
    auto dispatched = Clock::now();
    if (!result.ok()) return Fail(result.status().ToString());
    if (Status done = result->done.at(0).Await(); !done.ok()) return Fail(done.ToString());
    auto end = Clock::now();
    dispatch.push_back(ms(start, dispatched));
    steady.push_back(ms(start, end));
  }
  std::sort(steady.begin(), steady.end());
  std::sort(dispatch.begin(), dispatch.end());
  std::printf("plugin: %s (%s)\n", run->client->plugin()->path().c_str(), run->client->platform_name().c_str());
  std::printf("compile (cold, in a new client): %.3f ms\n", run->compile_ms);
  std::printf("first run: %.3f ms\n", first_ms);
  std::printf("steady state over %d runs: best %.3f ms, median %.3f ms, worst %.3f ms\n", parsed.runs, steady.front(),
              steady[steady.size() / 2], steady.back());
  std::printf("dispatch (Execute returning): best %.3f ms, median %.3f ms\n", dispatch.front(),
              dispatch[dispatch.size() / 2]);
  return 0;
}

}  // namespace stablert::cli
