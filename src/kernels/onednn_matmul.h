// Batched matrix products on oneDNN's matmul primitive (internal to kernels/).
//
// PrepareMatmul, run once per plan step (from the dot kernel's prepare function), cuts the
// step's product into tiles -- slices of the batch, of M or of N, enough to occupy the
// process's cores (base/thread_pool.h) when the product is large enough to pay for a split --
// and creates one primitive per distinct tile size. RunMatmul runs the tiles on
// ThreadPool::Shared(), each primitive on one thread (onednn_common.h: no OpenMP team), the
// tiles handed to whichever thread is free. Transposed operands and tiles are expressed
// through memory-descriptor strides and offsets, so no operand is copied. oneDNN's
// exceptions never leave these functions; they become Status errors.
#pragma once

#include <cstdint>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "kernels/dot_epilogue.h"
#include "kernels/kernel.h"

namespace stablert::kernels::onednn {

// The product of one "dot.<T>" step: out[b] = lhs[b] (M x K) * rhs[b] (K x N).
struct MatmulShape {
  DType dtype = DType::kInvalid;
  int64_t batch = 0, m = 0, n = 0, k = 0;
  bool lhs_bkm = false;  // lhs stored [B,K,M]
  bool rhs_bnk = false;  // rhs stored [B,N,K]
  bool accumulate = false;  // out += product (out already holds the addend)
  std::vector<epilogue::Op> epilogue;  // then these ops, as post-ops (their inputs: args.inputs)
};

// The shape of the dot step `args` describes (kernel ABI of "dot.<T>", registry.h).
MatmulShape DotShape(const KernelArgs& args);

// Products with fewer multiply-adds run as one tile on the calling thread: below it a
// split's hand-off to another thread costs more than it saves.
inline constexpr double kMinSplitMacs = 1 << 20;

// How many tiles PrepareMatmul cuts `shape` into when `threads` threads are available.
int TileCount(const MatmulShape& shape, int threads);

// Creates the tiles and their primitives for `shape`, for `threads` threads (0: the process's
// core budget). Unimplemented if oneDNN has no implementation for the element type on this
// CPU other than its slow reference one, or if a dimension is zero (oneDNN does not accept
// empty products; the loops handle them). Also Unimplemented if oneDNN runs `shape`'s
// epilogue only in its reference implementation (the caller then applies it itself).
StatusOr<KernelState> PrepareMatmul(const MatmulShape& shape, int threads = 0);

// Runs the product with the state PrepareMatmul returned, on the buffers of `args`, its
// tiles spread over the shared pool. Thread-safe: calls may run concurrently on other buffers.
Status RunMatmul(const void* state, const KernelArgs& args);

// The implementation oneDNN chose for a prepared product ("brg:avx512_core", ...).
const char* ImplementationName(const void* state);

// How many tiles a prepared product runs as.
int PreparedTileCount(const void* state);

}  // namespace stablert::kernels::onednn
