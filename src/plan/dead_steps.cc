// DropDeadSteps (lowering.h): removes kernel steps whose results nothing reads.
//
// A value is read when a step (in any sequence, control steps included) takes it or a value
// sharing its storage as an input, when it is a plan result, or when a control step writes
// it (loop-carried values, the results of if/case). Kernel steps are pure, so a kernel step
// none of whose outputs is read can go; its inputs may then become unread in turn, so the
// pass repeats until nothing changes. Collective, host-transfer and control steps always stay,
// and so do FFI calls ("ffi_call"): a user's handler may act beyond its results, and calls
// compiled to fail when run ("call_error", kernels/call_error_params.h).
// Computed values that no step and no result refers to any more are then dropped from the
// value table (the others renumbered), so buffer assignment never sees them.
#include <vector>

#include "plan/lowering.h"

namespace stablert::plan {
namespace {

void MarkReads(const Sequence& sequence, const std::vector<ValueId>& alias_root, std::vector<bool>& read) {
  for (const Step& step : sequence.steps) {
    for (ValueId v : step.inputs) read[alias_root[v]] = true;
    if (step.kind != StepKind::kKernel)
      for (ValueId v : step.outputs) read[alias_root[v]] = true;
    for (const Sequence& region : step.regions) MarkReads(region, alias_root, read);
  }
}

// Removes dead kernel steps from `sequence` and its regions; true if any was removed.
bool Sweep(Sequence& sequence, const std::vector<ValueId>& alias_root, const std::vector<bool>& read) {
  bool removed = false;
  std::vector<Step> kept;
  kept.reserve(sequence.steps.size());
  for (Step& step : sequence.steps) {
    bool dead = step.kind == StepKind::kKernel && !step.outputs.empty() && step.kernel != "ffi_call" &&
                step.kernel != "call_error";
    for (ValueId v : step.outputs) dead = dead && !read[alias_root[v]];
    if (dead) {
      removed = true;
      continue;
    }
    for (Sequence& region : step.regions) removed = Sweep(region, alias_root, read) || removed;
    kept.push_back(std::move(step));
  }
  sequence.steps = std::move(kept);
  return removed;
}

void MarkReferenced(const Sequence& sequence, std::vector<bool>& referenced) {
  for (const Step& step : sequence.steps) {
    for (ValueId v : step.inputs) referenced[v] = true;
    for (ValueId v : step.outputs) referenced[v] = true;
    for (const Sequence& region : step.regions) MarkReferenced(region, referenced);
  }
}

void Renumber(Sequence& sequence, const std::vector<ValueId>& new_id) {
  for (Step& step : sequence.steps) {
    for (ValueId& v : step.inputs) v = new_id[v];
    for (ValueId& v : step.outputs) v = new_id[v];
    for (Sequence& region : step.regions) Renumber(region, new_id);
  }
}

// Drops arena values nothing refers to (parameters, constants and results stay).
void DropUnreferencedValues(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  const size_t n = plan.values.size();
  std::vector<bool> referenced(n, false);
  MarkReferenced(plan.body, referenced);
  for (ValueId v : plan.results) referenced[v] = true;
  for (size_t v = 0; v < n; ++v) {
    if (plan.values[v].storage != Storage::kArena) referenced[v] = true;
    if (referenced[v]) referenced[alias_root[v]] = true;  // an alias keeps its storage's owner
  }
  std::vector<ValueId> new_id(n, 0);
  std::vector<Value> values;
  std::vector<ValueId> roots;
  for (size_t v = 0; v < n; ++v) {
    if (!referenced[v]) continue;
    new_id[v] = static_cast<ValueId>(values.size());
    values.push_back(std::move(plan.values[v]));
    roots.push_back(alias_root[v]);
  }
  if (values.size() == n) {
    plan.values = std::move(values);
    return;
  }
  for (ValueId& root : roots) root = new_id[root];
  Renumber(plan.body, new_id);
  for (ValueId& v : plan.results) v = new_id[v];
  plan.values = std::move(values);
  alias_root = std::move(roots);
}

}  // namespace

void DropDeadSteps(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  while (true) {
    std::vector<bool> read(plan.values.size(), false);
    MarkReads(plan.body, alias_root, read);
    for (ValueId v : plan.results) read[alias_root[v]] = true;
    if (!Sweep(plan.body, alias_root, read)) break;
  }
  DropUnreferencedValues(plan, alias_root);
}

}  // namespace stablert::plan
