// argmax/argmin as JAX emits them: a two-operand reduce (values, indices) whose body picks
// the larger (smaller) value, a NaN first, and the smaller index among equal values.
// The reduce_program kernel (program_kernels.cc) recognizes such a body once per plan step
// and then runs these loops instead of interpreting the body per element; plan/lower_reduce.cc
// uses MatchArgMinMaxBody to lower a reduce whose index operand is an iota along the reduced
// dimension to "argminmax.<V>.<I>" (argminmax_params.h), which counts the indices itself. Results are those of the body applied in row-major order of the reduced
// elements, bit for bit (NaN, signed zeros, index ties), for any index values.
// Thread-safety: pure functions over the caller's buffers.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/kernel.h"

namespace stablert::kernels {

enum class ArgKind : int { kNone = 0, kArgMax = 1, kArgMin = 2 };

// Whether the encoded body program (scalar_program.h; already decoded successfully) is
// JAX's argmax or argmin body over (float value, integer index) registers:
//   (v, i, w, j) -> (keep_v ? v : w, keep_i ? i : j) with
//   keep_v = v > w || v != v (argmin: v < w), keep_i = keep_v || (v == w && i < j),
// float compares of type FLOAT, the index compare SIGNED; operand order of the commutative
// parts (or, and, ==) and the spelling of > as a swapped < do not matter.
ArgKind MatchArgMinMaxBody(std::span<const int64_t> encoding);

// Runs reduce_program's call (inputs: values, indices, init value, init index; outputs:
// values, indices; the operands' reduced `dimensions`) for a body of `kind`. Sets *done to false (doing nothing) when the
// layout or dtypes are not covered; the caller then interprets the body. Honours
// `context`'s share: rows, columns or outer blocks are split across calls; layouts that
// do not split run on the first call alone.
Status RunArgMinMax(ArgKind kind, std::span<const int64_t> dimensions, const KernelContext& context,
                    const KernelArgs& args, bool* done);

}  // namespace stablert::kernels
