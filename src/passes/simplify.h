// Canonicalization and algebraic simplification of the entry function (nested regions
// included). Every rule is exact (bit for bit, NaNs and signed zeros included):
//   - identities: convert, reshape or broadcast_in_dim to the operand's own type (broadcast
//     with dimensions 0..n-1), transpose by the identity permutation, slice of everything
//     with unit strides, pad by nothing, reverse of no dimension          -> the operand
//   - involutions: negate(negate(x)), not(not(x))                          -> x
//   - compositions: reshape(reshape(x)) -> reshape(x); transpose(transpose(x)) -> one transpose
//   - neutral elements, through broadcasts of splat constants: x * 1, 1 * x (integers and
//     floats), x + 0, 0 + x, x - 0, x | 0, x ^ 0 (integers), x & all-ones (integers, bools)
//                                                                          -> x
//   - select(splat constant predicate, a, b)                              -> a or b
//   - f32/f64 divide(1, add(1, exponential(negate(x))))  (JAX's lowering of lax.logistic,
//     the add either way round)                                            -> logistic(x)
//     exact because StableRT's logistic kernel is defined as that chain: the same exp as
//     the exponential kernel, then an add and a divide rounded as theirs
//     (kernels/simd/unary_simd.cc; kernels/unary_logistic_test.cc checks the bits). Not
//     f16/bf16, where the chain rounds after every op and logistic once.
// Rewritten ops whose results are no longer used are left for RemoveDeadCode.
// Never fails. Deterministic; not thread-safe.
#pragma once

#include "ir/module.h"

namespace stablert::passes {

// Returns the number of rewrites.
int Simplify(ir::Module& module);

}  // namespace stablert::passes
