// stablert: command-line tools over StableRT's libraries.
//
//   stablert dump [--locations] FILE   read a StableHLO portable artifact (MLIR bytecode),
//                                      verify it and print the imported IR
//
// Exit status: 0 on success, 1 on any error (the message goes to stderr), 2 on bad usage.
#include <cstdio>
#include <cstring>
#include <string>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/read_module.h"

namespace {

int Usage() {
  std::fprintf(stderr, "usage: stablert dump [--locations] FILE\n");
  return 2;
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
  return Usage();
}
