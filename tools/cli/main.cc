// stablert: command-line tools over StableRT's libraries and the host library (host/), which
// runs any PJRT plugin. The usage text below lists the commands (commands.h has the others).
//
// Exit status: 0 on success, 1 on any error (the message goes to stderr), 2 on bad usage,
// 3 when `compare` finds outputs that differ.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/version.h"
#include "commands.h"
#include "ir/printer.h"
#include "ir/stablehlo_text.h"
#include "ir/verifier.h"
#include "runtime/version.h"
#include "stablehlo/read_module.h"
#include "stablehlo/version.h"

namespace {

constexpr char kUsage[] =
    "usage: stablert <command> [options]\n"
    "\n"
    "StableRT's command-line tool (StableRT is a PJRT plugin that runs StableHLO on CPUs; JAX\n"
    "uses it with JAX_PLATFORMS=stablert).\n"
    "\n"
    "commands (PLUGIN: a PJRT plugin library's path, or an installed plugin's name such as\n"
    "stablert or cpu; PROGRAM: StableHLO as MLIR bytecode or text, or a jax.export artifact;\n"
    "`stablert COMMAND --help` describes each):\n"
    "  info PLUGIN [--no-probe]  the plugin's PJRT version, attributes, extensions, absent slots,\n"
    "                            slots answering UNIMPLEMENTED, devices and memories\n"
    "  run PLUGIN PROGRAM [--in FILE.npy ...] [--inputs random|zeros] [--seed N] [--out DIR]\n"
    "                            run on the program's devices (each gets its shard of the global\n"
    "                            inputs); inputs from .npy files or generated from the program's\n"
    "                            signature (random: fixed by the seed); outputs printed and\n"
    "                            written to DIR/output<i>.npy\n"
    "  bench PLUGIN PROGRAM [--runs N] [input options as run]\n"
    "                            cold compile, first run, steady state and dispatch times\n"
    "  compare PLUGIN_A PLUGIN_B PROGRAM [--rtol X] [--atol X] [input options as run]\n"
    "                            the same inputs on both; outputs compared with per-type\n"
    "                            tolerances (f32 1e-5, f16 1e-3, bf16 1e-2, integers exact)\n"
    "  conform PLUGIN [--diff-with OTHER] [--json FILE] [--filter TEXT] [--timeout SECONDS]\n"
    "                            the C API conformance suite, each test in its own process:\n"
    "                            pass / fail / unsupported / crash / timeout, a JSON report;\n"
    "                            --diff-with: programs run on both plugins, outputs compared\n"
    "  conform --diff A.json B.json   the tests whose outcomes differ between two reports\n"
    "  dump [--locations] [--stablehlo] FILE\n"
    "                            read a StableHLO program (a portable artifact as MLIR bytecode,\n"
    "                            or MLIR text), verify it and print the imported IR\n"
    "                            (--locations: with source locations; --stablehlo: as StableHLO\n"
    "                            MLIR text in the generic form, which MLIR parses)\n"
    "  --version                 print StableRT's version, its PJRT C API and StableHLO versions\n"
    "  --help                    print this help\n"
    "\n"
    "exit status: 0 on success, 1 on an error (message on stderr), 2 on bad usage, 3 when\n"
    "compare finds outputs that differ\n";

int Usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

int Help() {
  std::fputs(kUsage, stdout);
  return 0;
}

int PrintVersion() {
  std::printf("stablert %s\n", std::string(stablert::Version()).c_str());
  std::printf("platform version: %s\n", stablert::runtime::PlatformVersion().c_str());
  std::printf("device kind: %s\n", stablert::runtime::DeviceKind().c_str());
  std::printf("reads StableHLO %s to %s\n", stablert::stablehlo::kMinimumVersion.ToString().c_str(),
              stablert::stablehlo::kCurrentVersion.ToString().c_str());
  return 0;
}

int Dump(int argc, char** argv) {
  stablert::ir::PrintOptions options;
  const char* path = nullptr;
  bool stablehlo_text = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--locations") == 0) {
      options.locations = true;
    } else if (std::strcmp(argv[i], "--stablehlo") == 0) {
      stablehlo_text = true;
    } else if (!path) {
      path = argv[i];
    } else {
      return Usage();
    }
  }
  if (!path) return Usage();
  auto module = stablert::stablehlo::ReadModuleFromFile(path);
  if (!module.ok()) {
    std::fprintf(stderr, "error: %s\n", module.status().ToString().c_str());
    return 1;
  }
  stablert::Status verified = stablert::ir::Verify(**module);
  if (!verified.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", path, verified.ToString().c_str());
    return 1;
  }
  std::string text;
  if (stablehlo_text) {
    auto printed = stablert::ir::PrintStablehloText(**module);
    if (!printed.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", path, printed.status().ToString().c_str());
      return 1;
    }
    text = std::move(printed).value();
  } else {
    text = stablert::ir::PrintModule(**module, options);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

namespace stablert::cli {

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

int BadUsage(const std::string& usage, const std::string& problem) {
  std::fprintf(stderr, "stablert: %s\nusage: %s\n", problem.c_str(), usage.c_str());
  return 2;
}

}  // namespace stablert::cli

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "dump") == 0) return Dump(argc - 2, argv + 2);
  if (argc >= 2) {
    std::vector<std::string> rest(argv + 2, argv + argc);
    std::string command = argv[1];
    if (command == "info") return stablert::cli::InfoCommand(rest);
    if (command == "run") return stablert::cli::RunCommand(rest);
    if (command == "bench") return stablert::cli::BenchCommand(rest);
    if (command == "compare") return stablert::cli::CompareCommand(rest);
    if (command == "conform") return stablert::cli::ConformCommand(rest);
    if (command == "conform-child") return stablert::cli::ConformChildCommand(rest);
  }
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
                    std::strcmp(argv[1], "help") == 0))
    return Help();
  if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0))
    return PrintVersion();
  return Usage();
}
