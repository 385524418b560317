#include "kernels/xsmm_matmul.h"

#include <libxsmm.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/thread_pool.h"

namespace stablert::kernels::xsmm {
namespace {

// How a product is cut into pool parts: whole batch entries, or tiles of rows or columns
// of every batch entry's output.
enum class Split { kBatch, kRows, kColumns };

struct SmallMatmul {
  int64_t batch = 0, m = 0, n = 0, k = 0;
  bool lhs_bkm = false;
  Split split = Split::kBatch;
  int64_t chunk = 0;            // rows or columns per tile (the last one per batch entry may be shorter)
  int64_t tiles_per_batch = 1;  // kRows, kColumns
  int parts = 1;                // pool parts (kBatch: ranges of batch entries; else tiles)
  libxsmm_smmfunction kernel = nullptr;  // kBatch: the whole matrix; else a tile of `chunk`
  libxsmm_smmfunction tail = nullptr;    // the last, shorter tile of a batch entry (if any)
  std::vector<epilogue::Op> epilogue;    // applied to each tile right after it is written
};

void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { libxsmm_init(); });
}

double Macs(const onednn::MatmulShape& s) {
  return static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.n) *
         static_cast<double>(s.k);
}

// libxsmm's kernel for the column-major C'(mm x nn) = A'(mm x k) * B'(k x nn) with the
// row-major product's leading dimensions (out^T = rhs^T * lhs^T; see the header).
StatusOr<libxsmm_smmfunction> Dispatch(const onednn::MatmulShape& s, int64_t mm, int64_t nn) {
  const libxsmm_blasint m = mm, n = nn, k = s.k, lda = s.n, ldb = s.lhs_bkm ? s.m : s.k, ldc = s.n;
  const float alpha = 1.0f, beta = s.accumulate ? 1.0f : 0.0f;  // out += product: out holds the addend
  const int flags = s.lhs_bkm ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  const int prefetch = LIBXSMM_PREFETCH_NONE;
  libxsmm_smmfunction kernel = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  if (kernel == nullptr) return Unimplemented("libxsmm generates no kernel for this product on this CPU");
  return kernel;
}

}  // namespace

int64_t TileRows(const onednn::MatmulShape& shape, int threads, int64_t tiles_per_thread) {
  // Each thread gets about tiles_per_thread tiles of whole rows: a multiple of 16 rows, at
  // least kMinTileRows. Tiles are handed out one at a time, so a descheduled thread holds
  // back one tile, not half the product.
  const int64_t wanted = static_cast<int64_t>(threads) * std::max<int64_t>(1, tiles_per_thread);
  int64_t rows = (shape.m + wanted - 1) / wanted;
  rows = (rows + 15) / 16 * 16;
  return std::max(rows, kMinTileRows);
}

bool IsSmallProduct(const onednn::MatmulShape& shape) {
  const int64_t largest = std::max({shape.m, shape.n, shape.k});
  if (largest <= kMaxSmallDim) return true;
  if (largest > kMaxMidDim) return false;
  if (Macs(shape) <= onednn::kMinSplitMacs) return true;
  // Below AVX-512 libxsmm's kernels fall behind oneDNN's gemm:jit beyond that (one thread,
  // STABLERT_ISA=avx2: 128^3 91 GFLOP/s against 104, 256^3 90 against 111, 64x512x512 69
  // against 100; docs/decisions.md "Matrix products below AVX-512").
  if (onednn::F32OnGemmJit()) return false;
  // Larger ones while every tile can keep the whole rhs in the core's L2 (libxsmm's kernel
  // streams it once per tile; it has no blocking of its own over k).
  return !shape.rhs_bnk && shape.k * shape.n <= kMaxMidRhsElements;
}

StatusOr<KernelState> PrepareSmallMatmul(const onednn::MatmulShape& shape, int64_t max_dim, int threads,
                                         int64_t tiles_per_thread) {
  if (shape.dtype != DType::kF32) return Unimplemented("libxsmm path: f32 only");
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  if (shape.batch <= 0 || m <= 0 || n <= 0 || k <= 0 || m > max_dim || n > max_dim || k > max_dim)
    return Unimplemented("libxsmm path: dimensions outside 1.." + std::to_string(max_dim));
  if (shape.rhs_bnk) return Unimplemented("libxsmm path: no kernel for a [N,K] rhs");
  InitOnce();
  if (threads <= 0) threads = CoreBudget();
  auto state = std::make_shared<SmallMatmul>();
  state->batch = shape.batch;
  state->m = m;
  state->n = n;
  state->k = k;
  state->lhs_bkm = shape.lhs_bkm;
  state->epilogue = shape.epilogue;
  const bool split = threads > 1 && Macs(shape) >= onednn::kMinSplitMacs;
  if (!split || shape.batch >= threads) {
    state->split = Split::kBatch;
    state->parts = split ? static_cast<int>(std::min<int64_t>(shape.batch, threads)) : 1;
    STABLERT_ASSIGN_OR_RETURN(state->kernel, Dispatch(shape, n, m));
    return KernelState(std::move(state));
  }
  // Tiles of whole rows, or of whole columns when there are more of those (libxsmm's
  // vectors run along a row of the output: a tile of columns keeps them full too, its width
  // being a multiple of 16).
  if (m >= n) {
    state->split = Split::kRows;
    state->chunk = std::min(m, TileRows(shape, threads, tiles_per_thread));
  } else {
    state->split = Split::kColumns;
    onednn::MatmulShape columns = shape;
    columns.m = n;
    state->chunk = std::min(n, TileRows(columns, threads, tiles_per_thread));
  }
  const int64_t extent = state->split == Split::kRows ? m : n;
  state->tiles_per_batch = (extent + state->chunk - 1) / state->chunk;
  state->parts = static_cast<int>(shape.batch * state->tiles_per_batch);
  const int64_t last = extent - (state->tiles_per_batch - 1) * state->chunk;
  if (state->split == Split::kRows) {
    STABLERT_ASSIGN_OR_RETURN(state->kernel, Dispatch(shape, n, state->chunk));
    if (last != state->chunk) {
      STABLERT_ASSIGN_OR_RETURN(state->tail, Dispatch(shape, n, last));
    }
  } else {
    STABLERT_ASSIGN_OR_RETURN(state->kernel, Dispatch(shape, state->chunk, m));
    if (last != state->chunk) {
      STABLERT_ASSIGN_OR_RETURN(state->tail, Dispatch(shape, last, m));
    }
  }
  return KernelState(std::move(state));
}

Status RunSmallMatmul(const void* state_ptr, const KernelArgs& args) {
  const auto& s = *static_cast<const SmallMatmul*>(state_ptr);
  const auto* lhs = args.inputs[0].as<const float>();
  const auto* rhs = args.inputs[1].as<const float>();
  auto* out = args.outputs[0].as<float>();
  const int64_t lhs_size = s.m * s.k, rhs_size = s.k * s.n, out_size = s.m * s.n;
  const auto finish = [&](int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end) {
    if (!s.epilogue.empty()) epilogue::Apply(s.epilogue, args, row_begin, row_end, col_begin, col_end);
  };
  const auto run_part = [&](int part) {
    if (s.split == Split::kBatch) {
      const int64_t begin = s.batch * part / s.parts, end = s.batch * (part + 1) / s.parts;
      for (int64_t b = begin; b < end; ++b) {
        s.kernel(rhs + b * rhs_size, lhs + b * lhs_size, out + b * out_size);
        finish(b * s.m, (b + 1) * s.m, 0, s.n);
      }
      return;
    }
    const int64_t b = part / s.tiles_per_batch, tile = part % s.tiles_per_batch;
    const int64_t begin = tile * s.chunk;
    const bool is_tail = tile == s.tiles_per_batch - 1 && s.tail != nullptr;
    const libxsmm_smmfunction kernel = is_tail ? s.tail : s.kernel;
    const float* l = lhs + b * lhs_size;
    const float* r = rhs + b * rhs_size;
    float* o = out + b * out_size;
    if (s.split == Split::kRows) {
      const int64_t end = std::min(s.m, begin + s.chunk);
      kernel(r, l + (s.lhs_bkm ? begin : begin * s.k), o + begin * s.n);
      finish(b * s.m + begin, b * s.m + end, 0, s.n);
    } else {
      const int64_t end = std::min(s.n, begin + s.chunk);
      kernel(r + begin, l, o + begin);
      finish(b * s.m, (b + 1) * s.m, begin, end);
    }
  };
  if (s.parts <= 1) {
    run_part(0);
  } else {
    ThreadPool::Shared().ParallelFor(s.parts, run_part);
  }
  return OkStatus();
}

int PreparedParts(const void* state) { return static_cast<const SmallMatmul*>(state)->parts; }

void CapIsa(env::Isa level) {
  InitOnce();
  int cap = 0;
  switch (level) {
    case env::Isa::kBest: return;
    case env::Isa::kAvx512: cap = LIBXSMM_X86_AVX512_CORE; break;
    case env::Isa::kAvx2: cap = LIBXSMM_X86_AVX2; break;
    case env::Isa::kSse4: cap = LIBXSMM_X86_SSE4; break;
  }
  // Only ever lower: libxsmm would generate code the CPU lacks if raised.
  if (libxsmm_get_target_archid() > cap) libxsmm_set_target_archid(cap);
}

}  // namespace stablert::kernels::xsmm
