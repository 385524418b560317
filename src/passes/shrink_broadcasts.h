// Computes on what is broadcast instead of on broadcasts, in the entry function (nested
// regions included):
//   - an elementwise op whose tensor operands are all broadcast_in_dim results, of operands
//     of one shape with the same broadcast_dimensions, or of rank-0 values
//         op(broadcast(a), broadcast(b), broadcast(scalar))
//           -> broadcast(op(a, b, broadcast(scalar to a's shape)))
//     Exact: every element of the result is the same op on the same values.
//   - a reduce of one broadcast_in_dim result (body one op on its two arguments) runs on the
//     broadcast's operand, over the dimensions of the operand it reduces:
//         reduce(broadcast(x), D) -> broadcast(reduce(x, D restricted to x's dimensions))
//     Exact when no dimension the broadcast created or expanded from size 1 is reduced, and
//     for max, min, and, or bodies (idempotent) whatever is reduced.
//   - the same with body add over such dimensions, f32/f64 or integer elements, and a splat
//     zero init: the sum of N copies of a value becomes one product by N
//         reduce(broadcast(x), D) -> broadcast(reduce(x, D restricted to x) * N)
//     Exact for integers (both wrap modulo 2^bits). For floats the product is rounded once
//     where a summation rounds at each step: it differs from a sum computed element by
//     element in the last bits only (as XLA's CPU backend computes it). Signed zeros and
//     NaN/Inf propagate as in the sum.
// The rewritten op keeps its result value (it becomes the broadcast), so no use changes;
// broadcasts left without users are left for RemoveDeadCode, identity broadcasts for
// Simplify. Never fails. Deterministic; not thread-safe.
#pragma once

#include "ir/module.h"

namespace stablert::passes {

// Returns the number of rewrites.
int ShrinkBroadcasts(ir::Module& module);

}  // namespace stablert::passes
