// Removes `LayoutConstraint` custom calls (jax's with_layout_constraint and the layouts of
// with_sharding_constraint) from the entry function of a module: each one's result is its
// operand. StableRT computes on row-major arrays; the layouts the entry's parameters and
// results are given or take are applied at the executable's boundary
// (runtime/array_layout.h, which reads them from the program before this pass runs), and an
// intermediate value's layout changes nothing else. Left in place, the calls would hide
// their operand from sharding propagation and the partitioner.
// Pure function of the module; not thread-safe on the same module.
#pragma once

#include "ir/module.h"

namespace stablert::passes {

// Returns the number of calls removed.
int RemoveLayoutConstraints(ir::Module& module);

}  // namespace stablert::passes
