// Running one program file on one plugin, as `stablert run/bench/compare` do: load the plugin,
// create a client, compile for one device, transfer the inputs, execute, read the outputs
// back — each step timed. Errors name the plugin and the step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/executable.h"
#include "host/plugin.h"
#include "program_file.h"

namespace stablert::cli {

struct ProgramRun {
  std::shared_ptr<host::Client> client;
  std::shared_ptr<host::LoadedExecutable> executable;
  std::vector<host::Buffer> arguments;
  double compile_ms = 0;
};

// Loads `plugin` (path or name), compiles `file` and transfers `inputs`.
StatusOr<ProgramRun> Prepare(const std::string& plugin, const ProgramFile& file,
                             const std::vector<host::Literal>& inputs);
// Starts one execution (arguments never donated, so they serve every run); returns once the
// plugin's Execute returns.
StatusOr<host::ExecuteResult> Launch(const ProgramRun& run);
// Executes once and waits for the outputs.
StatusOr<std::vector<host::Buffer>> ExecuteOnce(const ProgramRun& run);
// Reads `outputs` back to the host.
StatusOr<std::vector<host::Literal>> ReadBack(const std::vector<host::Buffer>& outputs);

}  // namespace stablert::cli
