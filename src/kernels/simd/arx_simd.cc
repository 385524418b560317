// Add-rotate-xor chains (arx_simd.h), compiled once per Highway target (dispatch.h).
//
// Four vectors of pairs go through the whole step list at a time, held in registers: a
// round is an add, a rotate (one vprold on AVX-512, two shifts and an or below) and a xor
// per vector, and the four vectors' rounds are independent, so the ALU ports stay busy while
// each one's add -> xor dependency resolves. The rotation is a template argument (the step's
// switch jumps to the instance of its amount). The tail of fewer than four vectors runs one
// vector at a time, the last partial vector through the scalar reference.
#include "kernels/simd/arx_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/arx_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <int R, int K, class V>
HWY_INLINE void Rounds(V (&x0)[K], V (&x1)[K]) {
  for (int k = 0; k < K; ++k) {
    x0[k] = hn::Add(x0[k], x1[k]);
    x1[k] = hn::Xor(hn::RotateRight<32 - R>(x1[k]), x0[k]);
  }
}

// The step list over K vectors of pairs held in registers.
template <int K, class D, class V = hn::Vec<D>>
HWY_INLINE void Chain(D d, const ArxStep* steps, size_t num_steps, V (&x0)[K], V (&x1)[K]) {
  for (size_t s = 0; s < num_steps; ++s) {
    const ArxStep step = steps[s];
    switch (step.kind) {
      case ArxKind::kAdd0: {
        const V c = hn::Set(d, step.value);
        for (int k = 0; k < K; ++k) x0[k] = hn::Add(x0[k], c);
        break;
      }
      case ArxKind::kAdd1: {
        const V c = hn::Set(d, step.value);
        for (int k = 0; k < K; ++k) x1[k] = hn::Add(x1[k], c);
        break;
      }
      case ArxKind::kRound:
        switch (step.value) {
#define STABLERT_ARX_ROUND(R) \
  case R:                     \
    Rounds<R, K>(x0, x1);     \
    break;
          STABLERT_ARX_ROUND(1) STABLERT_ARX_ROUND(2) STABLERT_ARX_ROUND(3) STABLERT_ARX_ROUND(4)
          STABLERT_ARX_ROUND(5) STABLERT_ARX_ROUND(6) STABLERT_ARX_ROUND(7) STABLERT_ARX_ROUND(8)
          STABLERT_ARX_ROUND(9) STABLERT_ARX_ROUND(10) STABLERT_ARX_ROUND(11) STABLERT_ARX_ROUND(12)
          STABLERT_ARX_ROUND(13) STABLERT_ARX_ROUND(14) STABLERT_ARX_ROUND(15) STABLERT_ARX_ROUND(16)
          STABLERT_ARX_ROUND(17) STABLERT_ARX_ROUND(18) STABLERT_ARX_ROUND(19) STABLERT_ARX_ROUND(20)
          STABLERT_ARX_ROUND(21) STABLERT_ARX_ROUND(22) STABLERT_ARX_ROUND(23) STABLERT_ARX_ROUND(24)
          STABLERT_ARX_ROUND(25) STABLERT_ARX_ROUND(26) STABLERT_ARX_ROUND(27) STABLERT_ARX_ROUND(28)
          STABLERT_ARX_ROUND(29) STABLERT_ARX_ROUND(30) STABLERT_ARX_ROUND(31)
#undef STABLERT_ARX_ROUND
          default:
            break;
        }
        break;
    }
  }
}

void ArxChainU32(const ArxStep* steps, size_t num_steps, const uint32_t* x0, const uint32_t* x1, uint32_t* y0,
                 uint32_t* y1, size_t n) {
  const hn::ScalableTag<uint32_t> d;
  using V = hn::Vec<decltype(d)>;
  const size_t lanes = hn::Lanes(d);
  constexpr int K = 4;
  size_t i = 0;
  for (; i + K * lanes <= n; i += K * lanes) {
    V a[K], b[K];
    for (int k = 0; k < K; ++k) {
      a[k] = hn::LoadU(d, x0 + i + k * lanes);
      b[k] = hn::LoadU(d, x1 + i + k * lanes);
    }
    Chain<K>(d, steps, num_steps, a, b);
    for (int k = 0; k < K; ++k) {
      hn::StoreU(a[k], d, y0 + i + k * lanes);
      hn::StoreU(b[k], d, y1 + i + k * lanes);
    }
  }
  for (; i + lanes <= n; i += lanes) {
    V a[1] = {hn::LoadU(d, x0 + i)}, b[1] = {hn::LoadU(d, x1 + i)};
    Chain<1>(d, steps, num_steps, a, b);
    hn::StoreU(a[0], d, y0 + i);
    hn::StoreU(b[0], d, y1 + i);
  }
  for (; i < n; ++i) {
    uint32_t a = x0[i], b = x1[i];
    ArxChainScalar(steps, num_steps, a, b);
    y0[i] = a, y1[i] = b;
  }
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(ArxChainU32);

void ArxChain(const ArxStep* steps, size_t num_steps, const uint32_t* x0, const uint32_t* x1, uint32_t* y0,
              uint32_t* y1, size_t n) {
  HWY_DYNAMIC_DISPATCH(ArxChainU32)(steps, num_steps, x0, x1, y0, y1, n);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
