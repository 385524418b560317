// stablert: command-line tools over StableRT's libraries.
//
//   stablert dump [--locations] FILE   read a StableHLO portable artifact (MLIR bytecode),
//                                      verify it and print the imported IR
//   stablert --version                 print the version (and PJRT / StableHLO versions)
//   stablert --help                    print the usage
//
// Exit status: 0 on success, 1 on any error (the message goes to stderr), 2 on bad usage.
#include <cstdio>
#include <cstring>
#include <string>

#include "base/version.h"
#include "ir/printer.h"
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
    "commands:\n"
    "  dump [--locations] FILE   read a StableHLO portable artifact (MLIR bytecode), verify it\n"
    "                            and print the imported IR (--locations: with source locations)\n"
    "  --version                 print StableRT's version, its PJRT C API and StableHLO versions\n"
    "  --help                    print this help\n"
    "\n"
    "exit status: 0 on success, 1 on an error (message on stderr), 2 on bad usage\n";

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
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--locations") == 0) {
      options.locations = true;
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
  std::string text = stablert::ir::PrintModule(**module, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "dump") == 0) return Dump(argc - 2, argv + 2);
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
                    std::strcmp(argv[1], "help") == 0))
    return Help();
  if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0))
    return PrintVersion();
  return Usage();
}
