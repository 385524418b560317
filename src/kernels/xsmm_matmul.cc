#include "kernels/xsmm_matmul.h"

#include <libxsmm.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "base/thread_pool.h"

namespace stablert::kernels::xsmm {
namespace {

struct SmallMatmul {
  libxsmm_smmfunction kernel = nullptr;
  int64_t batch = 0, m = 0, n = 0, k = 0;
  int parts = 1;  // pool parts the batches are spread over
};

void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { libxsmm_init(); });
}

}  // namespace

bool IsSmallProduct(const onednn::MatmulShape& shape) {
  const int64_t largest = std::max({shape.m, shape.n, shape.k});
  if (largest <= kMaxSmallDim) return true;
  const double macs = static_cast<double>(shape.batch) * static_cast<double>(shape.m) *
                      static_cast<double>(shape.n) * static_cast<double>(shape.k);
  return largest <= kMaxSkinnyDim && macs <= onednn::kMinSplitMacs;
}

StatusOr<KernelState> PrepareSmallMatmul(const onednn::MatmulShape& shape, int64_t max_dim) {
  if (shape.dtype != DType::kF32) return Unimplemented("libxsmm path: f32 only");
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  if (shape.batch <= 0 || m <= 0 || n <= 0 || k <= 0 || m > max_dim || n > max_dim || k > max_dim)
    return Unimplemented("libxsmm path: dimensions outside 1.." + std::to_string(max_dim));
  if (shape.rhs_bnk) return Unimplemented("libxsmm path: no kernel for a [N,K] rhs");
  InitOnce();
  // Column-major: C'(n x m) = A'(n x k) * B'(k x m), A' = rhs (ld n), B' = lhs (ld k, or
  // transposed with ld m when lhs is stored [K,M]), C' = out (ld n).
  const libxsmm_blasint mm = n, nn = m, kk = k, lda = n, ldb = shape.lhs_bkm ? m : k, ldc = n;
  const float alpha = 1.0f, beta = shape.accumulate ? 1.0f : 0.0f;  // out += product: out holds the addend
  const int flags = shape.lhs_bkm ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  const int prefetch = LIBXSMM_PREFETCH_NONE;
  libxsmm_smmfunction kernel = libxsmm_smmdispatch(mm, nn, kk, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  if (kernel == nullptr) return Unimplemented("libxsmm generates no kernel for this product on this CPU");
  auto state = std::make_shared<SmallMatmul>();
  state->kernel = kernel;
  state->batch = shape.batch;
  state->m = m;
  state->n = n;
  state->k = k;
  const double macs = static_cast<double>(shape.batch) * static_cast<double>(m * n * k);
  if (macs >= onednn::kMinSplitMacs) state->parts = static_cast<int>(std::min<int64_t>(shape.batch, CoreBudget()));
  return KernelState(std::move(state));
}

Status RunSmallMatmul(const void* state_ptr, const KernelArgs& args) {
  const auto& s = *static_cast<const SmallMatmul*>(state_ptr);
  const auto* lhs = args.inputs[0].as<const float>();
  const auto* rhs = args.inputs[1].as<const float>();
  auto* out = args.outputs[0].as<float>();
  const int64_t lhs_size = s.m * s.k, rhs_size = s.k * s.n, out_size = s.m * s.n;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) s.kernel(rhs + b * rhs_size, lhs + b * lhs_size, out + b * out_size);
  };
  if (s.parts <= 1) {
    run(0, s.batch);
  } else {
    ThreadPool::Shared().ParallelFor(s.parts, [&](int part) {
      run(s.batch * part / s.parts, s.batch * (part + 1) / s.parts);
    });
  }
  return OkStatus();
}

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
