// Call inlining: every func.call in the entry function (nested regions included) is
// replaced by the callee's body, its values renamed fresh, so later passes, the partitioner
// and the lowering see one function. Composites are inlined too (their decomposition),
// except those `keep_composite` accepts (the lowering has a kernel of its own for them).
// Functions no op refers to any more are removed from the module.
//
// Failure: InvalidArgument naming the call for an unknown callee, a callee that is not one
// block, or operand/result counts or types that differ from the callee's; Unimplemented for
// a recursive call or calls nested deeper than kMaxCallDepth. The module is unchanged on
// failure only up to the failing call (callers discard it). Deterministic; not thread-safe.
#pragma once

#include <functional>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::passes {

inline constexpr int kMaxCallDepth = 64;

struct InlineOptions {
  // Composites (stablehlo.composite) to leave in place; null: inline them all.
  std::function<bool(const ir::Operation& composite)> keep_composite;
};

// Returns the number of calls and composites inlined.
StatusOr<int> InlineCalls(ir::Module& module, const InlineOptions& options = {});

}  // namespace stablert::passes
