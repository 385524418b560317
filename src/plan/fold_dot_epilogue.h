// FoldEpiloguesIntoDots (fold_dot_epilogue.cc): elementwise ops applied to an f32 product
// -- a bias add (a row broadcast along the rows), a scalar or full-size add, subtract,
// multiply or divide, a relu (maximum with zero) -- become one "dot_epilogue.f32" step
// (kernels/dot_params.h: oneDNN post-ops, or applied by the kernel over the product), so
// the product is written once, with its epilogue applied. Conditions in the file.
// Thread-safety: a pure function of the plan. Failure: none (other forms stay as they are).
#pragma once

#include <vector>

#include "plan/plan.h"

namespace stablert::plan {

// Runs after FoldAddsIntoDots (plan/lowering.h), before views and fusion; extends
// `alias_root` with the values it adds; leaves the bypassed steps' outputs unread.
void FoldEpiloguesIntoDots(ExecutionPlan& plan, std::vector<ValueId>& alias_root);

}  // namespace stablert::plan
