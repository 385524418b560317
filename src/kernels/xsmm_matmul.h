// Small f32 matrix products on libxsmm's JIT kernels (internal to kernels/).
//
// A oneDNN primitive call costs about a microsecond however small the product, and
// StableRT's loops run a 16^3 product in about the same; libxsmm's generated kernels run it
// in ~0.04 us and 32^3 in ~0.25 us (benchmarks/dot_kernel_benchmark.cc). So products whose
// M, N and K are all at most kMaxSmallDim (or, for products oneDNN runs on one thread, at
// most kMaxSkinnyDim) run here: PrepareSmallMatmul generates (or finds in
// libxsmm's registry) the kernel once per plan step; RunSmallMatmul calls it per batch entry,
// spreading batches over StableRT's pool when there is enough work.
//
// libxsmm is column-major: the row-major product out = lhs * rhs is computed as
// out^T = rhs^T * lhs^T, which is the same memory. lhs stored [B,K,M] is libxsmm's
// transposed-B form; rhs stored [B,N,K] would need libxsmm's transposed-A form, which its
// JIT does not generate (PrepareSmallMatmul answers Unimplemented; the caller uses another
// path). Thread-safe; no exception leaves these functions.
#pragma once

#include "base/env.h"
#include "base/status.h"
#include "kernels/kernel.h"
#include "kernels/onednn_matmul.h"

namespace stablert::kernels::xsmm {

inline constexpr int64_t kMaxSmallDim = 64;

// Beyond kMaxSmallDim, products whose dims are at most kMaxSkinnyDim and which oneDNN would
// run on one thread (fewer than onednn::kMinSplitMacs multiply-adds in all) run here too:
// libxsmm's kernel beats oneDNN's single-threaded primitive on them, most where one dim is
// small (16x128x128: 2.2 us against 3.6; 16x128x512: 8.8 against 12.9; 96^3: 6.9 against
// 8.2; docs/decisions.md, "Loop bodies: ...").
inline constexpr int64_t kMaxSkinnyDim = 512;

// Whether `shape` belongs on this path by the rules above (PrepareSmallMatmul may still
// answer Unimplemented for its layout or dtype).
bool IsSmallProduct(const onednn::MatmulShape& shape);

// The kernel for `shape`; Unimplemented unless it is f32 with M, N, K in 1..max_dim and
// libxsmm generates a kernel for its layout on this CPU. (Benchmarks pass a larger max_dim
// to measure the crossover.)
StatusOr<KernelState> PrepareSmallMatmul(const onednn::MatmulShape& shape, int64_t max_dim = kMaxSkinnyDim);

// Runs the product with the state PrepareSmallMatmul returned, on the buffers of `args`.
Status RunSmallMatmul(const void* state, const KernelArgs& args);

// Caps the instruction set libxsmm generates code for (STABLERT_ISA); kBest leaves its own
// choice. Call before the first kernel is generated.
void CapIsa(env::Isa level);

}  // namespace stablert::kernels::xsmm
