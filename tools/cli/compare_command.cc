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
constexpr char kHelp[] =
    "usage: stablert compare PLUGIN_A PLUGIN_B PROGRAM [options]\n"
    "\n"
    "Runs PROGRAM on two plugins with the same inputs and compares every output.\n"
    "PLUGIN_A, PLUGIN_B: a PJRT plugin's path or an installed plugin's name (stablert, cpu).\n"
    "PROGRAM: StableHLO bytecode, MLIR text (passed to the plugins unchanged; needs --in) or a\n"
    "jax.export artifact (Exported.serialize()); multi-device programs run on as many devices\n"
    "as they are compiled for, each device getting its shard of the global inputs.\n"
    "\n"
    "options:\n"
    "  --in FILE.npy        one per argument, in order (global arrays)\n"
    "  --inputs random|zeros  generated inputs when no --in is given (default random)\n"
    "  --seed N             seed of the random inputs (default 0)\n"
    "  --rtol X, --atol X   tolerances for floats: |a-b| <= atol + rtol*|b| (defaults per type:\n"
    "                       f16 1e-3, bf16 1e-2, f32 1e-5, f64 1e-12; integers exact)\n"
    "\n"
    "exit status: 0 outputs agree, 3 they differ, 1 an error, 2 bad usage\n";

std::optional<double> ParseTolerance(const std::string& text, std::string& problem, const std::string& flag) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(value >= 0) || value > 1e6) {
    problem = flag + " '" + text + "': expected a non-negative number";
    return std::nullopt;
  }
  return value;
}

}  // namespace

int CompareCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional, npy;
  InputKind kind = InputKind::kRandom;
  uint64_t seed = 0;
  Tolerance tolerance;
  std::string problem;
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) return std::fputs(kHelp, stdout), 0;
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
  StatusOr<std::vector<NamedOutput>> a = RunOn(positional[0], *file, *inputs);
  if (!a.ok()) return Fail("on " + positional[0] + ": " + a.status().ToString());
  StatusOr<std::vector<NamedOutput>> b = RunOn(positional[1], *file, *inputs);
  if (!b.ok()) return Fail("on " + positional[1] + ": " + b.status().ToString());
  if (a->size() != b->size()) {
    std::printf("DIFFER: %zu outputs on %s, %zu on %s\n", a->size(), positional[0].c_str(), b->size(),
                positional[1].c_str());
    return 3;
  }
  bool all_agree = true;
  for (size_t i = 0; i < a->size(); ++i) {
    Comparison c = CompareLiterals((*a)[i].value, (*b)[i].value, tolerance);
    std::printf("%s: %s %s: %s\n", (*a)[i].label.c_str(), DescribeLiteral((*a)[i].value).c_str(),
                c.agree ? "agree" : "DIFFER", c.detail.c_str());
    all_agree &= c.agree;
  }
  std::printf("%s\n", all_agree ? "outputs agree" : "outputs differ");
  return all_agree ? 0 : 3;
}

}  // namespace stablert::cli
