// Dumps of what the compiler did, for developers (docs/configuration.md, "Dumps").
//
// Where: STABLERT_DUMP_DIR, else the compile option xla_dump_to, else --xla_dump_to in
// XLA_FLAGS (env::DumpDirectory). The directory is created (with its parents) if missing;
// one that cannot be created or written is InvalidArgument naming the setting and the path.
//
// What: every compilation writes files named
//   <dir>/stablert.<pid>.<n>.<module>.<fingerprint>.<part>
// <pid> the process id, <n> a per-process counter (4+ digits), <module> the module's
// sym_name (e.g. jit_f; characters other than [A-Za-z0-9_.-] become '_'), <fingerprint>
// 16 hex digits of Fingerprint64 of the program bytes. So concurrent processes and runs
// never overwrite each other and `ls` lists them by process and compile order. <part>:
//   input.mlirbc / input.mlir   the program as received (bytecode / MLIR text)
//   input.txt                   the program as read (ir/printer.h)
//   lowered.txt                 the module lowered to the plan: the per-partition program
//                               after SPMD partitioning, or the program in the global view
//   plan.txt                    the execution plan: steps, kernels, values, arena offsets
//   after_optimizations.txt     the program after the passes as XLA HLO text (hlo/text.h)
//   after_optimizations.hlo.pb  the same as an xla.HloModuleProto (hlo/proto.h), when asked
//   hlo_error.txt               instead, for a program with an op HLO has no form for
//   compile_options.pb / .txt   the CompileOptionsProto as received / readable
//   timings.json                microseconds per compile phase, the parts of lowering
//                               (each plan pass, buffer assignment) and the compilation's
//                               work counters (ops read, steps, constant bytes, ...)
//   error.txt                   the error, if compilation failed
// Thread-safe: concurrent compilations use distinct counters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace stablert::runtime {

// Creates `dir.path` (and its parents) if missing and checks that it is a writable
// directory. Errors name dir.source and the path.
Status PrepareDumpDirectory(const env::DumpDir& dir);

// Wall-clock time per compile phase, in order, and the work counters of one compilation.
// Not thread-safe (one per compilation).
class CompileTimer {
 public:
  using Times = std::vector<std::pair<std::string, int64_t>>;
  CompileTimer();
  // Ends the phase running since the last call (or construction) and names it.
  void EndPhase(std::string_view name);
  // Records the parts of phase `phase` (microseconds each, in order), e.g. the passes of
  // lowering; they are reported beside the phases, not added to the total.
  void AddParts(std::string_view phase, Times parts_us);
  // Sets a work counter (a count that depends on the program's structure, not its data).
  void SetCounter(std::string_view name, int64_t value);
  const Times& phases() const { return phases_; }
  const Times& counters() const { return counters_; }
  // {"module": ..., "phases_us": {...}, "parts_us": {phase: {...}}, "counters": {...},
  //  "total_us": ...}
  std::string ToJson(std::string_view module) const;

 private:
  int64_t start_us_;
  int64_t last_us_;
  Times phases_;
  std::vector<std::pair<std::string, Times>> parts_;
  Times counters_;
};

// The dump of one compilation; does nothing if constructed without a directory.
class CompileDump {
 public:
  CompileDump(std::optional<env::DumpDir> dir, std::string_view program);
  bool enabled() const { return dir_.has_value(); }
  // Fixes the file names (the module name is known once the program is read).
  void SetModuleName(std::string_view name);
  // Writes <prefix>.<part>. The first failure is kept and returned by status().
  void Write(std::string_view part, std::string_view contents);
  const Status& status() const { return status_; }

 private:
  std::optional<env::DumpDir> dir_;
  std::string prefix_;
  uint64_t fingerprint_;
  int64_t number_;
  Status status_;
};

}  // namespace stablert::runtime
