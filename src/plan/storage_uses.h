// How many steps write and read each storage root of a plan, over every sequence (regions
// included): what plan passes check before folding one step into another (a value with one
// writer and one reader). A plan result, and each input of a control step (while, if, case,
// manual region, ...), counts as two readers, so such values are never folded away.
// Pure function of the plan; thread-safe.
#pragma once

#include <vector>

#include "plan/plan.h"

namespace stablert::plan {

struct StorageUses {
  std::vector<int> writers;  // per storage root
  std::vector<int> readers;  // per storage root
};

// `alias_root[v]`: the value whose storage `v` shares (itself if none).
StorageUses CountStorageUses(const ExecutionPlan& plan, const std::vector<ValueId>& alias_root);

// Whether `step` (or a step in its regions) writes / reads storage root `root`.
bool StepWrites(const Step& step, ValueId root, const std::vector<ValueId>& alias_root);
bool StepReads(const Step& step, ValueId root, const std::vector<ValueId>& alias_root);

// Removes the steps of `sequence` flagged in `removed` (one flag per step), keeping the
// others in order.
void DropSteps(Sequence& sequence, const std::vector<bool>& removed);

}  // namespace stablert::plan
