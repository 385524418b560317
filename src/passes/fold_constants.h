// Constant folding, bounded in size, in the entry function (nested regions included): an
// op whose operands are all constants becomes a constant holding its result, when that
// result is small and computing it at compile time gives exactly what the kernels compute
// when the program runs.
//
// Folded ops:
//   - elementwise: negate, abs, sign, not, popcnt, count_leading_zeros, sqrt, floor, ceil,
//     round_nearest_even/afz, is_finite, add, subtract, multiply, divide, remainder,
//     maximum, minimum, and, or, xor, the three shifts, power (integers), compare, select,
//     clamp, convert, on i1, signed and unsigned 8-64-bit integers, f16, bf16, f32, f64,
//     with the rules of constant_elements.h (which also lists what is never folded:
//     transcendental functions, denormal floats, ...);
//   - data movement: reshape, transpose, slice, reverse, concatenate;
//   - reduce of one operand whose body is one add, multiply, maximum, minimum, and or or of
//     its two arguments (float sums and products only when exact in every order).
//
// The bound: a result is materialized only if it has at most kMaxFoldedElements elements
// (a reduce also reads at most that many). Large splat constants stay splats: an
// elementwise op or a reshape, transpose, slice or reverse of splats is computed once and
// kept as a splat, whatever its size. iota and broadcast_in_dim are never replaced by
// constants: they stay symbolic for fusion; their small results (within the bound) are
// computed only to fold the ops that use them. Nothing that draws random bits, has an
// effect, calls out or holds a region other than a reduce body is folded.
//
// A folded op becomes a stablehlo.constant in place (same result value, its location
// kept); the constants and iotas it read are left for RemoveDeadCode.
// Never fails. Deterministic; not thread-safe.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace stablert::passes {

// At most 256 elements (2 KiB of f64) per materialized result: enough for the scalars,
// shapes, index tables and masks a program computes from constants, small enough that a
// fold costs microseconds and its result stays in L1. Larger arrays derived from iotas or
// broadcasts are cheaper generated tile by tile in a fused step than stored and loaded,
// and compile work must not grow with the size of the data (tests/jax/test_compile_time.py
// compares programs over 1K and 1M elements).
inline constexpr int64_t kMaxFoldedElements = 256;

// Returns the number of ops replaced by constants.
int FoldConstants(ir::Module& module);

}  // namespace stablert::passes
