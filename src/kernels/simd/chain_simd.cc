// The fused chains' evaluator (chain_simd.h), compiled once per Highway target (dispatch.h).
// A block is kChainBlockVectors vectors; each operand has a block of scratch: internal
// values live there, uniform values are broadcast into it once per call, and the last
// partial block's streams are copied through it (so no access leaves [0, n)).
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

static_assert(kChainBlockVectors == 4, "the block loops below are written for 4 vectors");
constexpr size_t kMaxBlock = kChainBlockVectors * HWY_MAX_BYTES / sizeof(float);

// o[v] = f(a[v], b[v]) for the block's 4 vectors: all loads, then the operations, then the
// stores (o never overlaps a or b).
template <class F>
HWY_INLINE void ZipBlock(const float* a, const float* b, float* o, F f) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto a0 = hn::LoadU(d, a), a1 = hn::LoadU(d, a + N), a2 = hn::LoadU(d, a + 2 * N), a3 = hn::LoadU(d, a + 3 * N);
  const auto b0 = hn::LoadU(d, b), b1 = hn::LoadU(d, b + N), b2 = hn::LoadU(d, b + 2 * N), b3 = hn::LoadU(d, b + 3 * N);
  hn::StoreU(f(d, a0, b0), d, o);
  hn::StoreU(f(d, a1, b1), d, o + N);
  hn::StoreU(f(d, a2, b2), d, o + 2 * N);
  hn::StoreU(f(d, a3, b3), d, o + 3 * N);
}

template <class F>
HWY_INLINE void MapBlock(const float* a, float* o, F f) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto a0 = hn::LoadU(d, a), a1 = hn::LoadU(d, a + N), a2 = hn::LoadU(d, a + 2 * N), a3 = hn::LoadU(d, a + 3 * N);
  hn::StoreU(f(d, a0), d, o);
  hn::StoreU(f(d, a1), d, o + N);
  hn::StoreU(f(d, a2), d, o + 2 * N);
  hn::StoreU(f(d, a3), d, o + 3 * N);
}

// A unary function of unary_lanes-inl.h over the block, a vector at a time as unary_simd.cc's
// VectorMap does: a vector with a lane outside the domain (or, with kNaNToScalar, a NaN
// result) is finished lane by lane, the scalar op taking those lanes.
template <UnaryFn kFn>
HWY_INLINE void MathBlock(const float* a, float* o) {
  using L = UnaryLanes<kFn, float>;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t v = 0; v < kChainBlockVectors; ++v) {
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

// One block: every instruction over the operands' current blocks `cur`.
HWY_INLINE void RunBlock(const ChainInstr* code, size_t num_code, float* const* cur) {
  for (size_t i = 0; i < num_code; ++i) {
    const ChainInstr& ins = code[i];
    const float* a = cur[ins.a];
    const float* b = cur[ins.b];
    float* o = cur[ins.dst];
    switch (ins.code) {
      case ChainCode::kAdd: ZipBlock(a, b, o, [](auto, auto x, auto y) { return hn::Add(x, y); }); break;
      case ChainCode::kSub: ZipBlock(a, b, o, [](auto, auto x, auto y) { return hn::Sub(x, y); }); break;
      case ChainCode::kMul: ZipBlock(a, b, o, [](auto, auto x, auto y) { return hn::Mul(x, y); }); break;
      case ChainCode::kDiv: ZipBlock(a, b, o, [](auto, auto x, auto y) { return hn::Div(x, y); }); break;
      case ChainCode::kMax: ZipBlock(a, b, o, [](auto dd, auto x, auto y) { return MaxMin<true>(dd, x, y); }); break;
      case ChainCode::kMin: ZipBlock(a, b, o, [](auto dd, auto x, auto y) { return MaxMin<false>(dd, x, y); }); break;
      case ChainCode::kNeg: MapBlock(a, o, [](auto, auto x) { return hn::Neg(x); }); break;
      case ChainCode::kAbs: MapBlock(a, o, [](auto, auto x) { return hn::Abs(x); }); break;
      case ChainCode::kExp: MathBlock<UnaryFn::kExp>(a, o); break;
      case ChainCode::kExpm1: MathBlock<UnaryFn::kExpm1>(a, o); break;
      case ChainCode::kLog: MathBlock<UnaryFn::kLog>(a, o); break;
      case ChainCode::kLog1p: MathBlock<UnaryFn::kLog1p>(a, o); break;
      case ChainCode::kTanh: MathBlock<UnaryFn::kTanh>(a, o); break;
      case ChainCode::kLogistic: MathBlock<UnaryFn::kLogistic>(a, o); break;
      case ChainCode::kSqrt: MathBlock<UnaryFn::kSqrt>(a, o); break;
      case ChainCode::kRsqrt: MathBlock<UnaryFn::kRsqrt>(a, o); break;
      case ChainCode::kErf: MathBlock<UnaryFn::kErf>(a, o); break;
    }
  }
}

void RunChainF32Impl(const ChainInstr* code, size_t num_code, const ChainOperand* kinds, void* const* data,
                     size_t operands, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t block = kChainBlockVectors * hn::Lanes(d);
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
      for (size_t j = 0; j < block; j += hn::Lanes(d)) hn::Store(value, d, region + j);
    }
  }
  size_t i = 0;
  for (; i + block <= n; i += block) {
    for (size_t s = 0; s < num_streams; ++s) cur[streams[s]] = static_cast<float*>(data[streams[s]]) + i;
    RunBlock(code, num_code, cur);
  }
  if (i == n) return;
  // The last partial block, on copies: read streams zero-padded, written ones copied out.
  const size_t rest = n - i;
  for (size_t s = 0; s < num_streams; ++s) {
    const size_t k = streams[s];
    float* region = scratch + k * kMaxBlock;
    cur[k] = region;
    if (!written[k]) {
      std::memcpy(region, static_cast<const float*>(data[k]) + i, rest * sizeof(float));
      std::fill(region + rest, region + block, 0.0f);
    }
  }
  RunBlock(code, num_code, cur);
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
                 size_t operands, size_t n) {
  HWY_DYNAMIC_DISPATCH(RunChainF32Impl)(code, num_code, kinds, data, operands, n);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
