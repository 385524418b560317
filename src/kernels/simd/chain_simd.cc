// The fused chains' evaluator (chain_simd.h), compiled once per Highway target (dispatch.h).
// A block is `block_vectors` vectors (the whole vectors left make one more block); each
// operand has kChainBlockVectors vectors of scratch: internal values live there, uniform
// values are broadcast into it once per call, and the last partial vector's streams are
// copied through it (so no access leaves [0, n)).
#include "kernels/simd/chain_simd.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/chain_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/max_min-inl.h"
#include "kernels/simd/unary_lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(kChainBlockVectors % 4 == 0, "the block loops below go 4 vectors at a time");
constexpr size_t kMaxBlock = kChainBlockVectors * HWY_MAX_BYTES / sizeof(float);

// o[v] = f(a[v], b[v]) for the block's `nv` vectors, 4 at a time: loads, then the
// operations, then the stores (o never overlaps a or b).
template <class F>
HWY_INLINE void ZipBlock(const float* a, const float* b, float* o, size_t nv, F f) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + 4 * N <= nv * N; i += 4 * N) {
    const auto a0 = hn::LoadU(d, a + i), a1 = hn::LoadU(d, a + i + N), a2 = hn::LoadU(d, a + i + 2 * N),
               a3 = hn::LoadU(d, a + i + 3 * N);
    const auto b0 = hn::LoadU(d, b + i), b1 = hn::LoadU(d, b + i + N), b2 = hn::LoadU(d, b + i + 2 * N),
               b3 = hn::LoadU(d, b + i + 3 * N);
    hn::StoreU(f(d, a0, b0), d, o + i);
    hn::StoreU(f(d, a1, b1), d, o + i + N);
    hn::StoreU(f(d, a2, b2), d, o + i + 2 * N);
    hn::StoreU(f(d, a3, b3), d, o + i + 3 * N);
  }
  for (; i < nv * N; i += N) hn::StoreU(f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, o + i);
}

template <class F>
HWY_INLINE void MapBlock(const float* a, float* o, size_t nv, F f) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + 4 * N <= nv * N; i += 4 * N) {
    const auto a0 = hn::LoadU(d, a + i), a1 = hn::LoadU(d, a + i + N), a2 = hn::LoadU(d, a + i + 2 * N),
               a3 = hn::LoadU(d, a + i + 3 * N);
    hn::StoreU(f(d, a0), d, o + i);
    hn::StoreU(f(d, a1), d, o + i + N);
    hn::StoreU(f(d, a2), d, o + i + 2 * N);
    hn::StoreU(f(d, a3), d, o + i + 3 * N);
  }
  for (; i < nv * N; i += N) hn::StoreU(f(d, hn::LoadU(d, a + i)), d, o + i);
}

// A unary function of unary_lanes-inl.h over the block's `nv` vectors, a vector at a time as
// unary_simd.cc's VectorMap does: a vector with a lane outside the domain (or, with
// kNaNToScalar, a NaN result) is finished lane by lane, the scalar op taking those lanes.
template <UnaryFn kFn>
HWY_INLINE void MathBlock(const float* a, float* o, size_t nv) {
  using L = UnaryLanes<kFn, float>;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t v = 0; v < nv; ++v) {
    const auto x = hn::LoadU(d, a + v * N);
    const auto y = L::Apply(d, x);
    auto ok = L::Domain(d, x);
    if constexpr (L::kNaNToScalar) ok = hn::AndNot(hn::IsNaN(y), ok);
    if (HWY_LIKELY(hn::AllTrue(d, ok))) {
      hn::StoreU(y, d, o + v * N);
      continue;
    }
    HWY_ALIGN float xs[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN float ys[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN float oks[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(x, d, xs);
    hn::Store(y, d, ys);
    hn::Store(hn::VecFromMask(d, ok), d, oks);
    for (size_t j = 0; j < N; ++j) {
      uint8_t first;
      std::memcpy(&first, &oks[j], 1);
      o[v * N + j] = first ? ys[j] : L::ScalarOp::Apply(xs[j]);
    }
  }
}

// One block of `nv` vectors: every instruction over the operands' current blocks `cur`.
HWY_INLINE void RunBlock(const ChainInstr* code, size_t num_code, float* const* cur, size_t nv) {
  for (size_t i = 0; i < num_code; ++i) {
    const ChainInstr& ins = code[i];
    const float* a = cur[ins.a];
    const float* b = cur[ins.b];
    float* o = cur[ins.dst];
    switch (ins.code) {
      case ChainCode::kAdd: ZipBlock(a, b, o, nv, [](auto, auto x, auto y) { return hn::Add(x, y); }); break;
      case ChainCode::kSub: ZipBlock(a, b, o, nv, [](auto, auto x, auto y) { return hn::Sub(x, y); }); break;
      case ChainCode::kMul: ZipBlock(a, b, o, nv, [](auto, auto x, auto y) { return hn::Mul(x, y); }); break;
      case ChainCode::kDiv: ZipBlock(a, b, o, nv, [](auto, auto x, auto y) { return hn::Div(x, y); }); break;
      case ChainCode::kMax: ZipBlock(a, b, o, nv, [](auto dd, auto x, auto y) { return MaxMin<true>(dd, x, y); }); break;
      case ChainCode::kMin: ZipBlock(a, b, o, nv, [](auto dd, auto x, auto y) { return MaxMin<false>(dd, x, y); }); break;
      case ChainCode::kNeg: MapBlock(a, o, nv, [](auto, auto x) { return hn::Neg(x); }); break;
      case ChainCode::kAbs: MapBlock(a, o, nv, [](auto, auto x) { return hn::Abs(x); }); break;
      case ChainCode::kExp: MathBlock<UnaryFn::kExp>(a, o, nv); break;
      case ChainCode::kExpm1: MathBlock<UnaryFn::kExpm1>(a, o, nv); break;
      case ChainCode::kLog: MathBlock<UnaryFn::kLog>(a, o, nv); break;
      case ChainCode::kLog1p: MathBlock<UnaryFn::kLog1p>(a, o, nv); break;
      case ChainCode::kTanh: MathBlock<UnaryFn::kTanh>(a, o, nv); break;
      case ChainCode::kLogistic: MathBlock<UnaryFn::kLogistic>(a, o, nv); break;
      case ChainCode::kSqrt: MathBlock<UnaryFn::kSqrt>(a, o, nv); break;
      case ChainCode::kRsqrt: MathBlock<UnaryFn::kRsqrt>(a, o, nv); break;
      case ChainCode::kErf: MathBlock<UnaryFn::kErf>(a, o, nv); break;
    }
  }
}

void RunChainF32Impl(const ChainInstr* code, size_t num_code, const ChainOperand* kinds, void* const* data,
                     size_t operands, size_t n, size_t block_vectors) {
  const hn::ScalableTag<float> d;
  block_vectors = std::clamp<size_t>(block_vectors, 1, kChainBlockVectors);
  const size_t block = block_vectors * hn::Lanes(d);
  const size_t fill = std::min(block, (n + hn::Lanes(d) - 1) / hn::Lanes(d) * hn::Lanes(d));  // uniforms' lanes read
  HWY_ALIGN float scratch[kMaxChainOperands * kMaxBlock];
  float* cur[kMaxChainOperands];
  uint8_t streams[kMaxChainOperands];
  bool written[kMaxChainOperands] = {};
  size_t num_streams = 0;
  operands = std::min(operands, kMaxChainOperands);
  for (size_t i = 0; i < num_code; ++i) written[code[i].dst] = true;
  for (size_t k = 0; k < operands; ++k) {
    float* region = scratch + k * kMaxBlock;
    cur[k] = region;
    if (kinds[k] == ChainOperand::kStream) {
      streams[num_streams++] = static_cast<uint8_t>(k);
    } else if (kinds[k] == ChainOperand::kUniform) {
      const auto value = hn::Set(d, *static_cast<const float*>(data[k]));
      for (size_t j = 0; j < fill; j += hn::Lanes(d)) hn::Store(value, d, region + j);
    }
  }
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  auto run_in_place = [&](size_t nv) {
    for (size_t s = 0; s < num_streams; ++s) cur[streams[s]] = static_cast<float*>(data[streams[s]]) + i;
    RunBlock(code, num_code, cur, nv);
    i += nv * N;
  };
  while (i + block <= n) run_in_place(block_vectors);
  if (i + N <= n) run_in_place((n - i) / N);  // the whole vectors left
  if (i == n) return;
  // The last partial vector, on copies: read streams zero-padded, written ones copied out.
  const size_t rest = n - i;
  for (size_t s = 0; s < num_streams; ++s) {
    const size_t k = streams[s];
    float* region = scratch + k * kMaxBlock;
    cur[k] = region;
    if (!written[k]) {
      std::memcpy(region, static_cast<const float*>(data[k]) + i, rest * sizeof(float));
      std::fill(region + rest, region + N, 0.0f);
    }
  }
  RunBlock(code, num_code, cur, 1);
  for (size_t s = 0; s < num_streams; ++s) {
    const size_t k = streams[s];
    if (written[k]) std::memcpy(static_cast<float*>(data[k]) + i, scratch + k * kMaxBlock, rest * sizeof(float));
  }
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(RunChainF32Impl);

void RunChainF32(const ChainInstr* code, size_t num_code, const ChainOperand* kinds, void* const* data,
                 size_t operands, size_t n, size_t block_vectors) {
  HWY_DYNAMIC_DISPATCH(RunChainF32Impl)(code, num_code, kinds, data, operands, n, block_vectors);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
