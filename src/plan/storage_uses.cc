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

}  // namespace stablert::plan
