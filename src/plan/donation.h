// Donation analysis: which results of a plan may be written into the storage of which
// donated parameters.
//
// A caller that donates a parameter gives up its buffer; if a result of the same byte size
// can be written over the parameter's bytes without changing any value the plan still
// reads, the runtime hands the donated storage to that result instead of allocating a new
// one (runtime/executable.cc). The analysis runs on a finished plan (after buffer
// assignment): result `r`'s storage is every value with Storage::kResult index r, the
// parameter's every value with Storage::kParameter index p (views and aliases included).
//
// Writing result r into parameter p is safe when every read of p happens before the first
// write of r, where
//   - steps are numbered in program order, a control step taking one position before its
//     regions and one after; a control step's outputs count as written at its first
//     position and its inputs as read at its last;
//   - a read inside a control step's region counts as a read at the end of the outermost
//     control step enclosing it (loops revisit their regions);
//   - the results the executor copies at the end (results that are parameters, constants
//     or another result's value) count as reads and writes after every step;
// or when the one step that first writes r is also the last to read p and reads it in
// place: an elementwise kernel (one taking strided views, kernels/registry.h) reading p
// densely with the element size and count of its output. A result that is parameter p
// itself (returned unchanged) may take p's storage: its end copy becomes a no-op.
//
// Thread-safety: pure functions of their arguments. Failure: none (an unsafe or
// mismatched pair is simply not chosen).
#pragma once

#include <cstdint>
#include <vector>

#include "plan/plan.h"

namespace stablert::plan {

inline constexpr int64_t kNoDonor = -1;

// Whether result `result` may be written into the storage of parameter `parameter` (see
// above). False if either index is out of range or their byte sizes differ.
bool ResultMayOverwriteParameter(const ExecutionPlan& plan, size_t result, size_t parameter);

// For every result, the donatable parameter (donatable[p]) whose storage it is written
// into, or kNoDonor; each parameter backs at most one result. Results are matched in order:
// among the free donatable parameters of the same byte size whose storage is safe to write
// (ResultMayOverwriteParameter), one of the same type comes first, the k-th such result
// preferring the k-th parameter of its type (a pytree updated leaf by leaf), then one of
// another type. `local_parameter_bytes`/`local_result_bytes`, if not empty, replace the
// plan's byte sizes (per-device shards) for the size match.
// With `check_safety` false every same-size pair is taken: for callers that write the
// results only after the plan has run (a partitioned program run in the global view).
std::vector<int64_t> PlanDonation(const ExecutionPlan& plan, const std::vector<bool>& donatable,
                                  bool check_safety = true, const std::vector<int64_t>& local_parameter_bytes = {},
                                  const std::vector<int64_t>& local_result_bytes = {});

}  // namespace stablert::plan
