// Add-rotate-xor chains inside a fused step (kernels/fused.cc), found when the step is
// prepared: runs of u32 sub-ops that are rounds
//     a = add(x0, x1); l = shift_left(x1, r); h = shift_right_logical(x1, 32 - r);
//     o = or(l, h); x1' = xor(a, o)          (x0' = a; the first three in any order,
//                                             operands of add/or/xor in either order)
// with plan-constant splat amounts r in 1..31, and additions of a value repeating one
// element (a splat, constant or not, or a rank-0 scalar) to the current x0 or x1. This is
// how JAX lowers Threefry-2x32 (jax.random's default PRNG): 20 rounds and 5 key
// injections, ~120 sub-ops. A matched run becomes one sub-op evaluated by
// simd::ArxChain (kernels/simd/arx_simd.h) with the pair in registers, instead of one pass
// over the tile per sub-op; the addends are read from their slots on every tile, so keys
// known only at run time are fine.
//
// A run is kept only if it is a contiguous stretch of the step's sub-ops with at least two
// rounds, and every value it computes other than its final x0 and x1 is read by its own
// sub-ops only (no other sub-op, no step output, no fused reduction). Its final values may
// be step outputs. Pure function of its arguments; no failure modes (no match: no chains).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/fused_params.h"
#include "kernels/simd/arx_simd.h"

namespace stablert::kernels {

// What the matcher needs to know of a slot.
struct ArxSlot {
  bool uniform = false;      // every element is the same (splat, constant splat, scalar)
  bool constant = false;     // uniform with a value known now (a plan constant)
  uint32_t value = 0;        // that value (u32 slots)
  bool scalar = false;       // a rank-0 input: one element, never a whole tile
  bool external = false;     // read outside the sub-ops: a step output or the reduced slot
};

struct ArxChainOp {
  size_t first_op = 0, last_op = 0;  // the sub-ops [first_op, last_op] it replaces
  int64_t x0_in = -1, x1_in = -1;    // slots of the pair it starts from
  int64_t x0_out = -1, x1_out = -1;  // slots of the final pair (written at last_op)
  // The steps; an add's value is filled per tile from `addend_slot` (same index), a
  // round's rotation is final.
  std::vector<simd::ArxStep> steps;
  std::vector<int64_t> addend_slot;  // per step: the slot added (-1 for rounds)
};

// The chains of `params`'s sub-ops, in op order, non-overlapping. `slots` has one entry
// per slot.
std::vector<ArxChainOp> FindArxChains(const FusedParams& params, std::span<const ArxSlot> slots);

}  // namespace stablert::kernels
