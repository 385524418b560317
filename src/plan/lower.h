// Lowering the IR to an ExecutionPlan.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "plan/plan.h"

namespace stablert::plan {

// Microseconds per lowering phase, in the order they ran.
using LowerPhaseTimes = std::vector<std::pair<std::string, int64_t>>;

// Lowers the module's entry function to a plan: one or more kernel steps
// per op, constants copied into the plan, buffers assigned to arena offsets by liveness.
// The plan's parameters are the entry function's arguments, its results the function's
// results, in order.
//
// Fails (never at run time) with:
//   - Unimplemented for an op, dtype, attribute value or body the CPU plan does not
//     support yet,
//   - InvalidArgument for malformed input (missing or inconsistent attributes, shape
//     mismatches) and for calls and composites (other than those LowersCompositeItself
//     accepts) left in the entry: passes/inline_calls.h inlines them first,
// with a message "stablehlo.foo (<location>): <what>".
// With `partitions` > 0 the entry function is the program of one partition of that many
// (passes/sharding/partition.h): the plan runs once per partition, and collectives and partition_id
// lower as inside a manual region.
// Pure function of `module`; thread-safe for concurrent calls on the same module.
//
// `phase_times`, if given, receives the microseconds of each phase in order: "lower" (ops
// to steps), "fold_gather_scatter", "fold_dots", "dead_steps", "fold_views",
// "fuse_elementwise", "workspaces", "in_place" (plan passes)
// and "buffer_assignment".
StatusOr<ExecutionPlan> LowerToPlan(const ir::Module& module, int64_t partitions = 0,
                                    LowerPhaseTimes* phase_times = nullptr);

// True if the lowering has a kernel of its own for this stablehlo.composite (chlo.erf and
// kin on f32/f16/bf16), so call inlining should leave it in place
// (passes::InlineOptions::keep_composite). Pure; thread-safe.
bool LowersCompositeItself(const ir::Module& module, const ir::Operation& composite);

}  // namespace stablert::plan
