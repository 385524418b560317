// What a plan costs: the numbers PJRT_Executable_GetCostAnalysis reports (JAX's
// `compiled.cost_analysis()`), computed from the plan's steps with the definitions of XLA's
// HloCostAnalysis where the two can be compared (docs/decisions.md, "Cost analysis"):
//
//   flops            dot: 2·B·M·N·K; convolution: 2 × the multiply-adds that touch the
//                    input (positions in padding or between dilated elements excluded, as
//                    XLA counts them); reduce: (input − output elements) per reduced
//                    operand; reduce_window: output elements × (window size − 1);
//                    elementwise arithmetic, comparisons, selects, conversions and bit
//                    operations: one per output element
//   transcendentals  one per output element of exp, expm1, log, log1p, logistic, power,
//                    sqrt, rsqrt, cbrt, tanh, sin, cos, tan, atan2, erf (and erf_inv,
//                    lgamma, digamma, which XLA expands into many flops instead)
//   bytes accessed   bytes read and written by every step (each input and output once;
//                    a broadcast read in place counts the bytes it spans). XLA counts a
//                    fusion's operands and results only, so a chain of elementwise steps
//                    reports more here than on XLA.
//
// Data movement (copy, transpose, slice, broadcast, gather, scatter, sort, ...) costs bytes
// only. A loop body counts once (the trip count is not known at compile time), as in XLA.
// Pure function; thread-safe.
#pragma once

#include "plan/plan.h"

namespace stablert::plan {

struct PlanCost {
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;
};

PlanCost AnalyzeCost(const ExecutionPlan& plan);

// The cost of one step of `plan` (with its regions, each counted once), as above.
PlanCost StepCost(const ExecutionPlan& plan, const Step& step);

}  // namespace stablert::plan
