// The pass pipeline every compilation runs between verification and partitioning or
// lowering: call inlining, map expansion, computing on broadcasts' operands, constant folding, simplification,
// common-subexpression elimination, dead-code removal (each pass's header says what it
// does). Deterministic: the same module gives the same result.
// Failure: what InlineCalls or ExpandMaps reports (the module must then be discarded). Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "passes/inline_calls.h"

namespace stablert::passes {

struct PipelineOptions {
  InlineOptions inline_options;
  // Off for programs partitioned afterwards: their iota-derived index tables stay symbolic,
  // so the partitioner gives each device its block (folded first, they would be constants of
  // the global shape on every device).
  bool fold_constants = true;
};

// What one pass did: its name, how many ops it changed or removed, and its time.
struct PassRecord {
  std::string name;
  int changes = 0;
  double seconds = 0;
};

StatusOr<std::vector<PassRecord>> RunPipeline(ir::Module& module, const PipelineOptions& options = {});

// "inline_calls: 3 changes, 0.012 ms\n..." for dumps.
std::string PassRecordsToString(const std::vector<PassRecord>& records);

}  // namespace stablert::passes
