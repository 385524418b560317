// Running one program file on one plugin, as `stablert run/bench/compare` and the
// conformance suite's differential tier do: load the plugin, create a client with enough
// devices, compile for the program's replicas x partitions (devices 0..N-1 of the client,
// replica-major), transfer each device's inputs (its shard of every global input), execute,
// read the outputs back and reassemble global arrays by the output shardings the compiled
// executable reports — each step timed. Errors name the
// plugin and the step.
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
  const ProgramFile* file = nullptr;  // must outlive the run
  std::shared_ptr<host::Client> client;
  std::shared_ptr<host::LoadedExecutable> executable;
  std::vector<std::vector<host::Buffer>> arguments;  // per device of the executable
  // With several partitions: where each partition's shard of every output lies, as the
  // compiled executable reports it (host::LoadedExecutable::OutputShardings); from the
  // program's own annotations (file->result_layouts) only when the plugin reports none.
  std::vector<passes::ShardLayout> result_layouts;
  bool result_layouts_from_executable = false;
  double compile_ms = 0;
};

// One output as the program's caller sees it: a global array (per replica when there are
// several), with a label ("output 1", "output 1 (replica 2)").
struct NamedOutput {
  std::string label;
  host::Literal value;
};

// Loads `plugin` (path or name), compiles `file` and transfers `inputs` (global arrays).
StatusOr<ProgramRun> Prepare(const std::string& plugin, const ProgramFile& file,
                             const std::vector<host::Literal>& inputs);
// Starts one execution on every device (arguments never donated, so they serve every run);
// returns once the plugin's Execute returns.
StatusOr<host::ExecuteResult> Launch(const ProgramRun& run);
// Waits for every device of an execution.
Status AwaitAll(const host::ExecuteResult& result);
// Executes once and waits for the outputs.
StatusOr<host::ExecuteResult> ExecuteOnce(const ProgramRun& run);
// Reads the outputs back: per replica, each result as a global array.
StatusOr<std::vector<NamedOutput>> ReadBack(const ProgramRun& run, const host::ExecuteResult& result);
// Prepare, ExecuteOnce and ReadBack.
StatusOr<std::vector<NamedOutput>> RunOn(const std::string& plugin, const ProgramFile& file,
                                         const std::vector<host::Literal>& inputs);

}  // namespace stablert::cli
