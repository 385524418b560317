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
constexpr char kProgramHelp[] =
    "PLUGIN: a PJRT plugin's path or an installed plugin's name (stablert, cpu).\n"
    "PROGRAM: StableHLO bytecode, MLIR text (passed to the plugin unchanged; needs --in) or a\n"
    "jax.export artifact (Exported.serialize()). A program for several devices\n"
    "(mhlo.num_partitions / num_replicas > 1) is compiled for devices 0..N-1 of a client with\n"
    "enough devices (cpu_device_count=N if the default has fewer); each device gets its shard\n"
    "of every global input, and sharded outputs are reassembled.\n"
    "\n"
    "options:\n"
    "  --in FILE.npy        one per argument, in order (global arrays, NumPy .npy)\n"
    "  --inputs random|zeros  generated inputs when no --in is given (default random: values\n"
    "                       with 8 significant bits in [-1, 1), small integers)\n"
    "  --seed N             seed of the random inputs (default 0)\n";
constexpr char kRunHelp[] =
    "usage: stablert run PLUGIN PROGRAM [options]\n\nRuns PROGRAM once; prints each output's type, "
    "shape and first values.\n";
constexpr char kRunHelpTail[] =
    "  --out DIR            write the outputs to DIR/output<i>.npy (replicas: output<i>_r<r>.npy)\n"
    "\nexit status: 0 success, 1 an error, 2 bad usage\n";
constexpr char kBenchHelp[] =
    "usage: stablert bench PLUGIN PROGRAM [options]\n\nTimes PROGRAM: compile in a new client (cold), "
    "the first run, the steady state\n(best / median / worst of --runs, each Execute + wait) and "
    "dispatch (Execute returning).\n";
constexpr char kBenchHelpTail[] =
    "  --runs N             steady-state runs (default 20)\n"
    "\nexit status: 0 success, 1 an error, 2 bad usage\n";

bool WantsHelp(const std::vector<std::string>& args) {
  return args.size() == 1 && (args[0] == "--help" || args[0] == "-h");
}

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
// `file` receives the program (the run refers to it).
StatusOr<ProgramRun> PrepareFromArguments(const Arguments& parsed, ProgramFile& file) {
  STABLERT_ASSIGN_OR_RETURN(file, LoadProgramFile(parsed.program));
  if (file.exported) std::fprintf(stderr, "%s\n", DescribeArtifact(*file.exported).c_str());
  STABLERT_ASSIGN_OR_RETURN(std::vector<host::Literal> inputs,
                            MakeInputs(file, parsed.inputs, parsed.kind, parsed.seed));
  return Prepare(parsed.plugin, file, inputs);
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return std::printf("%s\n%s%s", kRunHelp, kProgramHelp, kRunHelpTail), 0;
  std::string problem;
  Arguments parsed = Parse(args, /*bench=*/false, problem);
  if (!problem.empty()) return BadUsage(kRunUsage, problem);
  ProgramFile file;
  StatusOr<ProgramRun> run = PrepareFromArguments(parsed, file);
  if (!run.ok()) return Fail(run.status().ToString());
  StatusOr<host::ExecuteResult> executed = ExecuteOnce(*run);
  if (!executed.ok()) return Fail(executed.status().ToString());
  StatusOr<std::vector<NamedOutput>> literals = ReadBack(*run, *executed);
  if (!literals.ok()) return Fail(literals.status().ToString());
  if (!parsed.out_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parsed.out_dir, error);
    if (error) return Fail(parsed.out_dir + ": " + error.message());
  }
  int replicas = run->file->num_replicas;
  size_t per_replica = literals->size() / static_cast<size_t>(replicas);
  for (size_t i = 0; i < literals->size(); ++i) {
    const host::Literal& literal = (*literals)[i].value;
    std::printf("%s: %s %s\n", (*literals)[i].label.c_str(), DescribeLiteral(literal).c_str(), Preview(literal).c_str());
    if (parsed.out_dir.empty()) continue;
    std::string path = parsed.out_dir + "/output" + std::to_string(i % per_replica) +
                       (replicas > 1 ? "_r" + std::to_string(i / per_replica) : "") + ".npy";
    if (Status written = WriteNpy(path, literal); !written.ok()) return Fail(written.ToString());
  }
  return 0;
}

int BenchCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return std::printf("%s\n%s%s", kBenchHelp, kProgramHelp, kBenchHelpTail), 0;
  std::string problem;
  Arguments parsed = Parse(args, /*bench=*/true, problem);
  if (!problem.empty()) return BadUsage(kBenchUsage, problem);
  ProgramFile file;
  StatusOr<ProgramRun> run = PrepareFromArguments(parsed, file);
  if (!run.ok()) return Fail(run.status().ToString());
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  auto t0 = Clock::now();
  StatusOr<host::ExecuteResult> first = ExecuteOnce(*run);
  double first_ms = ms(t0, Clock::now());
  if (!first.ok()) return Fail(first.status().ToString());
  std::vector<double> steady, dispatch;
  for (int r = 0; r < parsed.runs; ++r) {
    auto start = Clock::now();
    StatusOr<host::ExecuteResult> result = Launch(*run);
    auto dispatched = Clock::now();
    if (!result.ok()) return Fail(result.status().ToString());
    if (Status done = AwaitAll(*result); !done.ok()) return Fail(done.ToString());
    auto end = Clock::now();
    dispatch.push_back(ms(start, dispatched));
    steady.push_back(ms(start, end));
  }
  std::sort(steady.begin(), steady.end());
  std::sort(dispatch.begin(), dispatch.end());
  std::printf("plugin: %s (%s)\n", run->client->plugin()->path().c_str(), run->client->platform_name().c_str());
  std::printf("program: %s, %d device(s)\n", run->file->kind.c_str(), run->file->num_devices());
  std::printf("compile (cold, in a new client): %.3f ms\n", run->compile_ms);
  std::printf("first run: %.3f ms\n", first_ms);
  std::printf("steady state over %d runs: best %.3f ms, median %.3f ms, worst %.3f ms\n", parsed.runs, steady.front(),
              steady[steady.size() / 2], steady.back());
  std::printf("dispatch (Execute returning): best %.3f ms, median %.3f ms\n", dispatch.front(),
              dispatch[dispatch.size() / 2]);
  return 0;
}

}  // namespace stablert::cli
