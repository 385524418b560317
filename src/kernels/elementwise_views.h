// Elementwise kernels over strided input views.
//
// An elementwise kernel computes out[i] from in_k[i] for every input k (a rank-0 input may
// stand for all i where the kernel says so, e.g. select's predicate). Its dense form reads
// dense row-major inputs. ElementwiseOverViews<Dense> is the same kernel for inputs that are
// strided views (BufferView::strides: broadcasts with zero strides, transposes with permuted
// ones): it walks its share of the output in blocks of a few KB, gathers each strided
// input's block into a buffer on the stack (so the block stays in L1), and runs `Dense` on
// the block. Dense inputs are passed through at the block's offset; a call whose inputs are
// all dense is `Dense` itself. The output is always dense.
//
// Thread-safety: as `Dense` (reentrant). Failure: whatever `Dense` returns.
#pragma once

#include <cstdint>

#include "kernels/kernel.h"

namespace stablert::kernels {

// Copies elements [begin, begin + count) of `view` (in row-major order of its dims) into
// `dst`, densely. `view` may be strided (or dense).
void GatherViewElements(const BufferView& view, int64_t begin, int64_t count, void* dst);

// Runs the dense elementwise kernel `dense` over `args`, whose inputs may be strided.
Status RunElementwiseOverViews(KernelFn dense, const KernelContext& context, const KernelArgs& args);

template <KernelFn Dense>
Status ElementwiseOverViews(const KernelContext& context, const KernelArgs& args) {
  return RunElementwiseOverViews(Dense, context, args);
}

// Runs the tile function `tile` (kernel.h) over this call's share of dense `args`.
Status RunTileOverShare(TileFn tile, const KernelContext& context, const KernelArgs& args);

// The dense kernel of an elementwise op given by its tile function.
template <TileFn Tile>
Status DenseFromTile(const KernelContext& context, const KernelArgs& args) {
  return RunTileOverShare(Tile, context, args);
}

}  // namespace stablert::kernels
