#include "passes/pipeline.h"

#include <chrono>
#include <cstdio>

#include "passes/common_subexpressions.h"
#include "passes/dead_code.h"
#include "passes/expand_maps.h"
#include "passes/fold_constants.h"
#include "passes/shrink_broadcasts.h"
#include "passes/simplify.h"

namespace stablert::passes {

StatusOr<std::vector<PassRecord>> RunPipeline(ir::Module& module, const PipelineOptions& options) {
  std::vector<PassRecord> records;
  auto start = std::chrono::steady_clock::now();
  auto record = [&](const char* name, int changes) {
    const auto now = std::chrono::steady_clock::now();
    records.push_back({name, changes, std::chrono::duration<double>(now - start).count()});
    start = now;
  };
  STABLERT_ASSIGN_OR_RETURN(int inlined, InlineCalls(module, options.inline_options));
  record("inline_calls", inlined);
  STABLERT_ASSIGN_OR_RETURN(int maps, ExpandMaps(module));
  record("expand_maps", maps);
  record("shrink_broadcasts", ShrinkBroadcasts(module));
  record("fold_constants", options.fold_constants ? FoldConstants(module) : 0);
  record("simplify", Simplify(module));
  record("common_subexpressions", EliminateCommonSubexpressions(module));
  record("dead_code", RemoveDeadCode(module));
  return records;
}

std::string PassRecordsToString(const std::vector<PassRecord>& records) {
  std::string out;
  char line[160];
  for (const PassRecord& r : records) {
    std::snprintf(line, sizeof line, "%s: %d changes, %.3f ms\n", r.name.c_str(), r.changes, r.seconds * 1e3);
    out += line;
  }
  return out;
}

}  // namespace stablert::passes
