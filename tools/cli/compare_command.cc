// stablert compare PLUGIN_A PLUGIN_B PROGRAM: the same program and inputs on two plugins.
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "compare.h"
#include "run_program.h"

namespace stablert::cli {
namespace {

constexpr char kUsage[] =
    "stablert compare PLUGIN_A PLUGIN_B PROGRAM [--in FILE.npy ...] [--inputs random|zeros] [--seed N]"
    " [--rtol X] [--atol X]";

std::optional<double> ParseTolerance(const std::string& text, std::string& problem, const std::string& flag) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(value >= 0) || value > 1e6) {
    problem = flag + " '" + text + "': expected a non-negative number";
    return std::nullopt;
  }
  return value;
}

// Runs `file` on `plugin` and reads the outputs back.
StatusOr<std::vector<host::Literal>> RunOn(const std::string& plugin, const ProgramFile& file,
                                           const std::vector<host::Literal>& inputs) {
  STABLERT_ASSIGN_OR_RETURN(ProgramRun run, Prepare(plugin, file, inputs));
  STABLERT_ASSIGN_OR_RETURN(std::vector<host::Buffer> outputs, ExecuteOnce(run));
  return ReadBack(outputs);
}

}  // namespace

int CompareCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional, npy;
  InputKind kind = InputKind::kRandom;
  uint64_t seed = 0;
  Tolerance tolerance;
  std::string problem;
  for (size_t i = 0; i < args.size() && problem.empty(); ++i) {
    const std::string& a = args[i];
    bool takes_value = a == "--in" || a == "--inputs" || a == "--seed" || a == "--rtol" || a == "--atol";
    if (takes_value && i + 1 >= args.size()) {
      problem = a + " needs a value";
      break;
    }
    if (a == "--in") npy.push_back(args[++i]);
    else if (a == "--inputs") {
      StatusOr<InputKind> parsed = ParseInputKind(args[++i]);
      if (!parsed.ok()) problem = std::string(parsed.status().message());
      else kind = *parsed;
    } else if (a == "--seed") {
      char* end = nullptr;
      const std::string& v = args[++i];
      seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end) problem = "--seed '" + v + "': expected a non-negative integer";
    } else if (a == "--rtol") tolerance.rtol = ParseTolerance(args[++i], problem, "--rtol");
    else if (a == "--atol") tolerance.atol = ParseTolerance(args[++i], problem, "--atol");
    else if (!a.empty() && a[0] == '-') problem = "unknown option " + a;
    else positional.push_back(a);
  }
  if (problem.empty() && positional.size() != 3) problem = "expected PLUGIN_A, PLUGIN_B and PROGRAM";
  if (!problem.empty()) return BadUsage(kUsage, problem);

  StatusOr<ProgramFile> file = LoadProgramFile(positional[2]);
  if (!file.ok()) return Fail(file.status().ToString());
  StatusOr<std::vector<host::Literal>> inputs = MakeInputs(*file, npy, kind, seed);
  if (!inputs.ok()) return Fail(inputs.status().ToString());
  StatusOr<std::vector<host::Literal>> a = RunOn(positional[0], *file, *inputs);
  if (!a.ok()) return Fail("on " + positional[0] + ": " + a.status().ToString());
  StatusOr<std::vector<host::Literal>> b = RunOn(positional[1], *file, *inputs);
  if (!b.ok()) return Fail("on " + positional[1] + ": " + b.status().ToString());
  if (a->size() != b->size()) {
    std::printf("DIFFER: %zu outputs on %s, %zu on %s\n", a->size(), positional[0].c_str(), b->size(),
                positional[1].c_str());
    return 3;
  }
  bool all_agree = true;
  for (size_t i = 0; i < a->size(); ++i) {
    Comparison c = CompareLiterals((*a)[i], (*b)[i], tolerance);
    std::printf("output %zu: %s %s: %s\n", i, DescribeLiteral((*a)[i]).c_str(), c.agree ? "agree" : "DIFFER",
                c.detail.c_str());
    all_agree &= c.agree;
  }
  std::printf("%s\n", all_agree ? "outputs agree" : "outputs differ");
  return all_agree ? 0 : 3;
}

}  // namespace stablert::cli
