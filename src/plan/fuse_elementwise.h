// FuseElementwise: chains of elementwise kernel steps become one "fused" step
// (kernels/fused.cc, parameters kernels/fused_params.h) that runs them tile by tile, so the
// values only the chain reads never reach memory; a reduction of the chain's last value
// folds into the same step. Row reductions and the steps that read their results broadcast
// back (softmax, layer norm) then become one "fused_rows" step run over blocks of rows.
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
//   - an iota of s32/u32/s64/u64 is a fusible step too: in a fused step it is generated per
//     tile (FusedIotaParams), so its array is never written when only the group reads it
//     (threefry's counters); fused steps holding one never join fused_rows groups;
//   - a group becomes a fused step if it has two or more steps besides iotas, or one and a
//     reduction. The fused step takes the place of the group's last step (the reduction
//     moves up to it).
// Then, per sequence, row groups become "fused_rows" steps (kernels/fused.cc, parameters
// FusedRowsParams in kernels/fused_params.h) that run a row reduction, the steps reading its
// result broadcast back, and the reductions and chains after them over blocks of rows:
//   - a group starts at a reduction over trailing dims (reduce step, or fused step with a
//     folded reduction in one segment) of [rows, length], rows >= 2, length <= 256K, or at
//     the full-size chain steps just before it;
//   - consecutive kernel steps join while everything they read is a full value, a row
//     value, a broadcast of a row value along the rows, a broadcast of a [length] input over
//     the rows, a splat or a scalar (elementwise steps on single elements that read no group
//     value may sit between members and stay where they are); a group is kept only if a
//     member reads a row value of the group broadcast back;
//   - values read outside the group are the step's outputs; the rest live in the blocks;
//   - inside the step, consecutive chains merge into one fused sub-step and a reduction of
//     a value they compute folds in (the value stays an output where later sub-steps read
//     it); repeated identical sub-steps whose results only the group reads run once.
// Deterministic: the result depends only on the plan.
#pragma once

#include <vector>

#include "plan/plan.h"

namespace stablert::plan {

// Rewrites `plan` in place; `alias_root` gains entries for values it adds. Run after
// FoldViewsIntoReaders and before DropDeadSteps' final sweep and buffer assignment.
void FuseElementwise(ExecutionPlan& plan, std::vector<ValueId>& alias_root);

}  // namespace stablert::plan
