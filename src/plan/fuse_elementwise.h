// FuseElementwise: chains of elementwise kernel steps become one "fused" step
// (kernels/fused.cc, parameters kernels/fused_params.h) that runs them tile by tile, so the
// values only the chain reads never reach memory; a reduction of the chain's last value
// folds into the same step.
//
// Grouping (per sequence, control-flow regions each on their own; manual regions untouched):
//   - a run is a maximal stretch of consecutive fusible steps (elementwise steps on single
//     elements may sit between them and stay where they are): kernel steps whose kernel
//     takes strided views (unary, binary, compare, select, clamp, convert: registered with
//     KernelRegistry::RegisterElementwise), one output of more than one element that is its
//     own storage root, element types the fused kernel supports;
//   - a run's steps of one element count form a group (counts differ only between groups,
//     and elementwise steps read values of their own count or rank-0 scalars, so groups of
//     a run do not read each other's values); a step reading a strided view of a value its
//     group computes ends the run before it;
//   - a group value is an output of the fused step if anything outside the group reads its
//     storage (another step, a control step, a region, a plan result), else internal: it
//     gets no storage (DropDeadSteps drops it);
//   - the first step after the run reading the group's values may fold in if it is a
//     "reduce_<body>.<T>" (add, mul, max, min, and, or over f32, f64 and integers) of an
//     internal value over all or trailing dims whose init no step in between writes;
//     long reductions with few rows are cut into segments whose partial results a small
//     reduce step then combines;
//   - a group becomes a fused step if it has two or more steps, or one and a reduction. The
//     fused step takes the place of the group's last step (the reduction moves up to it).
// Deterministic: the result depends only on the plan.
#pragma once

#include <vector>

#include "plan/plan.h"

namespace stablert::plan {

// Rewrites `plan` in place; `alias_root` gains entries for values it adds. Run after
// FoldViewsIntoReaders and before DropDeadSteps' final sweep and buffer assignment.
void FuseElementwise(ExecutionPlan& plan, std::vector<ValueId>& alias_root);

}  // namespace stablert::plan
