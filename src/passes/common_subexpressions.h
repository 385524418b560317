// Common-subexpression elimination: a pure op (ops.def's effect column) identical to one
// that dominates it — same opcode, operands, attributes and result types, earlier in the same
// block or in an enclosing block of a while, if or case (whose regions read enclosing values;
// other ops' regions are isolated and only merge within themselves) — is removed and its
// results replaced by the earlier op's. Ops with isolated regions (reduce, sort, scatter, ...)
// are identical when their regions compute the same ops on corresponding values; while, if
// and case never merge. Works on the entry function, nested regions included. Constants with
// equal types and bytes merge too.
// Never fails. Deterministic; not thread-safe.
#pragma once

#include "ir/module.h"

namespace stablert::passes {

// Returns the number of ops removed.
int EliminateCommonSubexpressions(ir::Module& module);

}  // namespace stablert::passes
