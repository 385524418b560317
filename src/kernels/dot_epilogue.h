// The elementwise ops of a "dot_epilogue.f32" step (dot_params.h) applied to a product
// (internal to kernels/): checked once per step against the step's inputs, then applied by
// oneDNN as post-ops (onednn_matmul.h; up to the first relu, see LibraryPrefix) or by
// Apply over the written product while its rows are in cache. Thread-safe; no exception.
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "kernels/dot_params.h"
#include "kernels/kernel.h"

namespace stablert::kernels::epilogue {

// What an op's input is, from its element count.
enum class Operand { kNone, kScalar, kRow, kFull };

struct Op {
  EpilogueOp op = EpilogueOp::kRelu;
  Operand operand = Operand::kNone;
  int input = -1;  // index into KernelArgs::inputs (kNone: -1)
};

// The ops of `params` against `args` (output [B,M,N] f32; inputs lhs, rhs, then one per
// binary op): InvalidArgument naming dot_epilogue.f32 if an op is unknown, an input is
// missing, extra, not f32, or neither 1, N nor B*M*N elements.
StatusOr<std::vector<Op>> Describe(const DotEpilogueParams& params, const KernelArgs& args);

// Applies `ops` to the dense output of `args`: rows [row_begin, row_end) of its B*M rows,
// columns [col_begin, col_end) of each (all: col_end = -1).
void Apply(std::span<const Op> ops, const KernelArgs& args, int64_t row_begin, int64_t row_end, int64_t col_begin = 0,
           int64_t col_end = -1);

// Where oneDNN takes over: the ops before the first relu or subtract-from run as post-ops.
// oneDNN's relu (and its max) turn NaN into 0 where XLA's maximum keeps NaN, and it has no
// y - x (its negation of x - y differs in the sign of a zero), so such an op and every op
// after it are applied by Apply to each tile as soon as oneDNN has written it.
size_t LibraryPrefix(std::span<const Op> ops);

}  // namespace stablert::kernels::epilogue
