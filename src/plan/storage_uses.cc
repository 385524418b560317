#include "plan/storage_uses.h"

namespace stablert::plan {
namespace {

void Count(const Sequence& sequence, const std::vector<ValueId>& alias_root, StorageUses& uses) {
  for (const Step& step : sequence.steps) {
    for (ValueId v : step.outputs) ++uses.writers[alias_root[v]];
    for (ValueId v : step.inputs) uses.readers[alias_root[v]] += step.kind == StepKind::kKernel ? 1 : 2;
    for (const Sequence& region : step.regions) Count(region, alias_root, uses);
  }
}

}  // namespace

StorageUses CountStorageUses(const ExecutionPlan& plan, const std::vector<ValueId>& alias_root) {
  StorageUses uses;
  uses.writers.assign(plan.values.size(), 0);
  uses.readers.assign(plan.values.size(), 0);
  for (ValueId v : plan.results) uses.readers[alias_root[v]] += 2;
  Count(plan.body, alias_root, uses);
  return uses;
}

bool StepWrites(const Step& step, ValueId root, const std::vector<ValueId>& alias_root) {
  for (ValueId v : step.outputs)
    if (alias_root[v] == root) return true;
  for (const Sequence& region : step.regions)
    for (const Step& inner : region.steps)
      if (StepWrites(inner, root, alias_root)) return true;
  return false;
}

bool StepReads(const Step& step, ValueId root, const std::vector<ValueId>& alias_root) {
  for (ValueId v : step.inputs)
    if (alias_root[v] == root) return true;
  for (const Sequence& region : step.regions)
    for (const Step& inner : region.steps)
      if (StepReads(inner, root, alias_root)) return true;
  return false;
}

void DropSteps(Sequence& sequence, const std::vector<bool>& removed) {
  std::vector<Step> kept;
  kept.reserve(sequence.steps.size());
  for (size_t i = 0; i < sequence.steps.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(sequence.steps[i]));
  sequence.steps = std::move(kept);
}

}  // namespace stablert::plan
