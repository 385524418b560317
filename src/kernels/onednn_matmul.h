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

// Large f32 products with a long contraction (k from kMinBlockedK, from kMinKBlockedMacs
// multiply-adds) run each tile as products over blocks of kKBlock values of k, each after the
// first adding to the output (a sum post-op; the epilogue's post-ops on the last), in four
// tiles per thread: a block's rows of rhs then stay in cache while the tile's rows go by.
// Measured on two cores (docs/benchmarks.md, 2026-12-02; alternating builds): 2048^3 40.1-44.5
// ms against 42.9-46.7 in four tiles over all of k; at 1024^3 blocking was no faster (5.2-5.7
// against 5.0-6.0 ms), so k must be longer. Not on the gemm:jit driver (OnGemmJit), which
// blocks k itself. Results differ from unblocked ones in rounding only (each block's sum is
// rounded once more).
inline constexpr int64_t kKBlock = 512;
inline constexpr int64_t kMinBlockedK = 2048;
inline constexpr double kMinKBlockedMacs = 1 << 30;

// Whether oneDNN runs a plain f32 matrix product on its gemm:jit driver here (CPUs or
// STABLERT_ISA caps below AVX-512; above, on its brgemm kernels). Probed once per process, at
// the first call, which must come after the ISA cap (CapIsa; applied at client creation,
// before any plan is built). Thread-safe.
bool F32OnGemmJit();

// Whether `shape` runs on oneDNN's gemm:jit driver: every f32 product where F32OnGemmJit, and
// on Intel CPUs where brgemm is oneDNN's own choice, single-matrix f32 products (batch 1) of at
// least kMinGemmJitMacs multiply-adds, taken from oneDNN's list of implementations for the
// product (oneDNN's first choice where gemm:jit is not in it). There gemm:jit is the
// faster of the two from 512^3 up (docs/decisions.md, "f32 products on gemm:jit on Intel
// CPUs"; an Intel Xeon, two threads: 2048^3 438 GFLOP/s against 398, 1024^3 414 against
// 391), on AMD's Zen 4 and 5 it is not. Thread-safe.
inline constexpr double kMinGemmJitMacs = 1 << 27;
bool OnGemmJit(const MatmulShape& shape);

// On gemm:jit, products of at least this many multiply-adds are cut along N whatever M is
// (each tile then packs all of lhs and its part of rhs): on the Intel Xeon, two threads,
// 1024^3 425 GFLOP/s against 410-415 in row tiles, 2048^3 432-435 either way, 512^3 430-432
// against 440-444 (hence the bound).
inline constexpr double kMinGemmJitNSplitMacs = 1 << 30;

// Whether oneDNN has a bf16 matmul other than its reference one here (AVX512_BF16 CPUs,
// uncapped). Probed once per process like F32OnGemmJit. Thread-safe.
bool Bf16MatmulNative();

// Below AVX-512 (a CPU without it, or STABLERT_ISA=avx2/sse4: F32OnGemmJit) oneDNN 2.6's
// gemm:jit driver reads a plain rhs whose rows are a multiple of kBadRhsRow elements apart at
// about half speed (512^3: 71 GFLOP/s on one core against 113 with rows
// 16 elements longer; a 256x1024x1024 tile 52 against 111). Such a product reads a copy of
// rhs with rows kRhsRowPad elements longer instead, made by each call in its workspace
// (RunMatmul). Whether a product does; then the copy's bytes, else 0. Not where gemm:jit runs
// large products on AVX-512 (OnGemmJit on Intel CPUs): there the copy cost more than it saved
// (512^3 378-385 GFLOP/s with it, 440-442 without).
inline constexpr int64_t kBadRhsRow = 512;
inline constexpr int64_t kRhsRowPad = 16;
int64_t PaddedRhsBytes(const MatmulShape& shape);

// How many tiles PrepareMatmul cuts `shape` into when `threads` threads are available.
int TileCount(const MatmulShape& shape, int threads);

// The length of the contraction blocks `shape`'s tiles run in; 0 when all of k runs at once.
int64_t ContractionBlock(const MatmulShape& shape);

// Creates the tiles and their primitives for `shape`, for `threads` threads (0: the process's
// core budget). Unimplemented if oneDNN has no implementation for the element type on this
// CPU other than its slow reference one, or if a dimension is zero (oneDNN does not accept
// empty products; the loops handle them). Also Unimplemented if oneDNN runs `shape`'s
// epilogue only in its reference implementation (the caller then applies it itself).
StatusOr<KernelState> PrepareMatmul(const MatmulShape& shape, int threads = 0);

// Runs the product with the state PrepareMatmul returned, on the buffers of `args`, its
// tiles spread over the shared pool. Thread-safe: calls may run concurrently on other buffers.
// A product with a padded rhs copy (PaddedRhsBytes) makes it in args.workspace when that
// is large enough (the plan declares it), else in a buffer of the calling thread.
Status RunMatmul(const void* state, const KernelArgs& args);

// The implementation oneDNN chose for a prepared product ("brg:avx512_core", ...).
const char* ImplementationName(const void* state);

// How many tiles a prepared product runs as.
int PreparedTileCount(const void* state);

}  // namespace stablert::kernels::onednn
