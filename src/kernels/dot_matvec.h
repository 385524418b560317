// f32 matrix-vector products of "dot.f32" steps (internal to kernels/): one operand is a
// single row or column (M == 1 or N == 1, not both), so the product reads each matrix
// element once and is bound by memory bandwidth. Both stored forms of the matrix stream it
// front to back (kernels/simd/dot_simd.h):
//   - the matrix's rows run along the output (x[1,K] . A[K,N], and A[K,M]^T . x[K,1]):
//     out += x[k] * A[k, :] for each k, k cut into contiguous blocks of whole pairwise
//     leaves, one block per thread, each summed pairwise into a row of its own, the rows
//     added in order (deterministic for a given core count);
//   - the matrix's rows run along k (A[M,K] . x[K,1], and x[1,K] . A[N,K]^T): one pairwise
//     dot product per output, the rows cut into one contiguous range per thread.
// A batch of such products runs batch by batch. Threads: PrepareMatVec decides the parts
// once per step; RunMatVec spreads them over ThreadPool::Shared(). Thread-safe; no
// exception; errors only for products it was not prepared for.
#pragma once

#include "base/status.h"
#include "kernels/kernel.h"
#include "kernels/onednn_matmul.h"

namespace stablert::kernels::matvec {

// Whether `shape` is a matrix-vector product this path takes (f32, exactly one of M and N
// equal to 1, no empty dimension).
bool IsMatVec(const onednn::MatmulShape& shape);

// Products with at least this many multiply-adds use every core.
inline constexpr double kMinSplitMacs = 1 << 20;

// The state for `shape` with `threads` threads (0: the process's core budget).
StatusOr<KernelState> PrepareMatVec(const onednn::MatmulShape& shape, int threads = 0);

// Writes the product (out = lhs . rhs; an accumulating step's addend is the caller's).
Status RunMatVec(const void* state, const KernelArgs& args);

// How many parts a prepared product runs as.
int PreparedParts(const void* state);

}  // namespace stablert::kernels::matvec
