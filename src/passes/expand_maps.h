// Replaces every stablehlo.map (in every function, nested regions included) by ops the
// lowering runs, so no map reaches plan/:
//   - a body of scalar elementwise ops (unary, binary, compare, select, clamp, convert,
//     reduce_precision, bitcast_convert of equal widths), constants, and reshapes or
//     broadcasts of one scalar to a scalar is inlined over the whole operands: each block
//     argument becomes its operand, each op the same op on tensors of the result's shape,
//     each constant (and each rank-0 value from outside the body) a broadcast_in_dim of it.
//     The ops then fuse like any elementwise chain;
//         map(a, b) { ^bb0(x, y): return x * y + 1 } -> a * b + broadcast(1)
//   - any other body (control flow, reductions, custom calls, ... on scalars) runs once per
//     element: a stablehlo.while over the row-major element index i (s64) slices element i
//     of every operand (reshaped to one dimension), runs the body on those scalars and
//     writes its result into element i of the result (dynamic_update_slice), which starts as
//     zeros and is reshaped to the result's shape at the end.
// Both compute every element with the body's own ops, so the results are those of the body
// applied element by element.
// A map that breaks the specification's constraints (operands and result of one shape;
// `dimensions` = [0, ..., rank - 1]; a one-block body taking one rank-0 tensor of each
// operand's element type and returning one rank-0 tensor of the result's element type) is
// InvalidArgument naming stablehlo.map, its location and what was expected; the module must
// then be discarded (the pass stops part way).
// Runs after InlineCalls (bodies that call functions are inlined first). Uses of a map's
// result are renamed to the value that replaces it. Deterministic; not thread-safe.
#pragma once

#include "base/status.h"
#include "ir/module.h"

namespace stablert::passes {

// Returns the number of maps replaced.
StatusOr<int> ExpandMaps(ir::Module& module);

}  // namespace stablert::passes
