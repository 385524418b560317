// f32 matrix products up to 512 per dimension on libxsmm's JIT kernels (internal to kernels/).
//
// A oneDNN primitive call costs about a microsecond however small the product, and
// StableRT's loops run a 16^3 product in about the same; libxsmm's generated kernels run it
// in ~0.04 us and 32^3 in ~0.25 us, and reach the core's FMA peak from 128^3 to 256^3
// (benchmarks/dot_kernel_benchmark.cc). So products whose M, N and K are all at most
// kMaxSmallDim, and larger ones up to kMaxMidDim per dimension, run here:
// PrepareSmallMatmul generates (or finds in libxsmm's registry) the kernels once per plan
// step; RunSmallMatmul calls them. Products of at least onednn::kMinSplitMacs multiply-adds
// are spread over StableRT's pool: by batch entries when there are at least as many as
// threads, otherwise in tiles of whole rows (or whole columns, whichever dimension is
// longer) of each entry, about kTilesPerThread per thread, handed out one at a time. A tile
// is one kernel call on offset pointers (same leading dimensions), so it costs nothing to
// set up, and a descheduled thread holds back one tile rather than half the product.
// A prepared epilogue (dot_epilogue.h) is applied to each tile right after it is written.
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

// Beyond kMaxSmallDim, f32 products whose dims are all at most kMaxMidDim run here too:
// those oneDNN would run on one thread (at most onednn::kMinSplitMacs multiply-adds), and
// larger ones whose rhs has at most kMaxMidRhsElements (each tile streams the whole rhs, so
// it must stay in the core's 1 MiB L2: at 512^3 libxsmm's kernel falls to ~220 GFLOP/s a
// core, oneDNN's blocked one stays at ~250) and is not stored [N,K] (no libxsmm kernel; the
// smaller such products are refused by PrepareSmallMatmul and go to oneDNN too). On one
// thread libxsmm's kernel beats oneDNN's primitive, most where one dim is small
// (16x128x128: 2.2 us against 3.6; 96^3: 6.9 against 8.2); in row tiles on the pool it
// also beats oneDNN's two tiles (docs/decisions.md, "Mid-size products on libxsmm tiles").
// Those larger ones only where oneDNN runs on brgemm (AVX-512): its gemm:jit driver beats
// libxsmm's AVX2 kernels there (onednn::F32OnGemmJit).
inline constexpr int64_t kMaxMidDim = 512;
inline constexpr int64_t kMaxMidRhsElements = 384 * 384;

// Tiles per thread of a split product, and the smallest tile (rows or columns).
inline constexpr int64_t kTilesPerThread = 4;
inline constexpr int64_t kMinTileRows = 32;

// Whether `shape` belongs on this path by the rules above (PrepareSmallMatmul may still
// answer Unimplemented for its layout or dtype).
bool IsSmallProduct(const onednn::MatmulShape& shape);

// Rows (a multiple of 16, at least kMinTileRows) per tile of shape.m rows for `threads`.
int64_t TileRows(const onednn::MatmulShape& shape, int threads, int64_t tiles_per_thread = kTilesPerThread);

// The kernels for `shape` (including its epilogue, applied per tile), split for `threads`
// threads (0: the process's core budget); Unimplemented unless it is f32 with M, N, K in
// 1..max_dim and libxsmm generates a kernel for its layout on this CPU. (Benchmarks pass a
// larger max_dim and other tile counts to measure the crossover and the tiling.)
StatusOr<KernelState> PrepareSmallMatmul(const onednn::MatmulShape& shape, int64_t max_dim = kMaxMidDim,
                                         int threads = 0, int64_t tiles_per_thread = kTilesPerThread);

// Runs the product with the state PrepareSmallMatmul returned, on the buffers of `args`
// (with an epilogue: its inputs are args.inputs[2...]).
Status RunSmallMatmul(const void* state, const KernelArgs& args);

// How many pool parts a prepared product runs as (1: on the calling thread).
int PreparedParts(const void* state);

// Caps the instruction set libxsmm generates code for (STABLERT_ISA); kBest leaves its own
// choice. Call before the first kernel is generated.
void CapIsa(env::Isa level);

}  // namespace stablert::kernels::xsmm
