// In-place updates: steps that write their output over one of their inputs' storage.
//
// Two places decide it:
//   - buffer assignment (buffer_assignment.cc) gives a step's output the storage of an
//     input that dies at that step (no later reader, through any alias or view), when the
//     kernel allows that input to share storage with its output (MayShareWithOutput); a
//     copy whose input dies becomes no step at all;
//   - UpdateLoopCarriesInPlace (below), before buffer assignment, lets the step computing a
//     loop body's new value of a carried value write the carried buffer directly, so the
//     body's copy at its end disappears: a loop that updates a large array a slice at a time
//     (lax.scan stacking its outputs, x.at[i].set in a fori_loop) moves O(slice) bytes per
//     iteration, not the whole array.
// The plan is single-threaded data here; these functions are pure transformations of it.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/plan.h"

namespace stablert::plan {

// Whether kernel step `step` may write output `output` over the storage of
// `step.inputs[input]`, as far as the step itself goes: the kernel allows it
// (kernels::InPlace), input and output are dense with the same dtype and element count, and
// no other input of the step reads that storage at other positions (an accumulating
// product, InPlace::kThirdInput, only on its addend). "copy.<T>" steps count
// as allowed (they become no step). Kernels have one output, except fused steps
// (kernels/fused_params.h), which may write an output over an input no later sub-op reads.
// Whether the input's value is still needed later is the caller's question.
bool MayShareWithOutput(const ExecutionPlan& plan, const std::vector<ValueId>& alias_root, const Step& step,
                        size_t input, size_t output = 0);

// For every while step (innermost first): a carried value whose body ends with
// `copy s -> carried` takes s's storage when that is safe, and the copy goes. Safe when
//   - s's storage is written only inside the body, first by top-level step P (and only at
//     or after P), and
//   - nothing in the body reads the carried value (through any alias or view) after P, and
//     P reads it only as an input it may update in place (MayShareWithOutput).
// A carried value the body returns unchanged, or one whose old value is read after the new
// one is computed (a swap of carries), keeps its copy. The same holds for the results of if
// and case steps: each branch ends with `copy s -> result`, and under the same conditions
// (with the branch as the body) the branch computes the result in place, in every branch
// where it is safe. Extends `alias_root` (values that shared s's storage now share the
// carried value's or the result's).
void UpdateLoopCarriesInPlace(ExecutionPlan& plan, std::vector<ValueId>& alias_root);

// Removes "copy.<T>" kernel steps whose input and output share storage, in every sequence.
void DropSelfCopies(Sequence& sequence, const std::vector<ValueId>& alias_root);

}  // namespace stablert::plan
