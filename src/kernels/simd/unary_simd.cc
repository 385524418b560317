// Vector unary math (unary_simd.h), compiled once per Highway target (dispatch.h).
//
// Each function is Highway's contrib polynomial (hwy/contrib/math) on the inputs where it is
// accurate, with the scalar semantics of scalar_ops.h kept exactly elsewhere:
//   - a per-function domain (finite, within the polynomial's valid range, where the result is
//     neither overflowing nor denormal); a vector with a lane outside it is finished lane by
//     lane with the scalar op (libm), so NaN, ±Inf, overflow (exp(89) = inf), log(0) = -inf,
//     log(-1) = NaN and sin of huge arguments are exactly what they were;
//   - zero and denormal inputs are decided on the bits (independent of the DAZ mode): sin,
//     tanh and expm1 return them unchanged, log1p/sqrt give a zero of their sign;
//   - tanh saturates to ±1 for |x| > 20 (where tanh rounds to ±1 in f32 and f64); f32 tanh is
//     special_math-inl.h's: polynomials by pieces in f32 lanes on AVX-512 (TanhF32, which
//     gives every lane's result itself: WholeLanesMap), the rational in f64 lanes (TanhForF32)
//     on narrower vectors, not Highway's; f32 erf gives every lane's result itself too; cos is 1
//     for |x| < 2^-13 (f32) or 2^-27 (f64), where cos rounds to 1;
//   - for rsqrt and the approximations of special_math-inl.h, a lane whose vector result
//     is NaN goes to the scalar op too (they signal results they cannot give so).
// cbrt, tan, erf, erf_inv, lgamma and digamma are special_math-inl.h's on f32 and the
// scalar op on f64.
#include "kernels/simd/unary_simd.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/unary_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/simd/special_math-inl.h"
#include "kernels/simd/exp_f32-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Limits of the vector domains, per type.
template <typename T> struct Limits;
template <> struct Limits<float> {
  static constexpr float kExpLo = -87.3f, kExpHi = 88.7f;      // exp(x) normal and finite
  static constexpr float kTrigMax = 39000.0f;                   // Highway's sin/cos range
  static constexpr float kLog1pMax = 1e30f;
  static constexpr float kCosOne = 0x1p-13f;
};
template <> struct Limits<double> {
  static constexpr double kExpLo = -708.0, kExpHi = 706.0;
  static constexpr double kTrigMax = 39000.0;
  static constexpr double kLog1pMax = 1e300;
  static constexpr double kCosOne = 0x1p-27;
};

// |x| as a signed integer of the same width: orders non-NaN magnitudes; NaN above +Inf.
template <class D, class V>
HWY_INLINE auto AbsBits(D d, V x) {
  const hn::RebindToSigned<D> di;
  return hn::BitCast(di, hn::Abs(x));
}
template <class D, typename T>
HWY_INLINE auto BitsOf(D d, T value) {
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  I bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return hn::Set(di, bits);
}
// Zero or denormal (by its bits).
template <class D, class V>
HWY_INLINE auto IsTiny(D d, V x) {
  using T = hn::TFromD<D>;
  return hn::RebindMask(d, hn::Lt(AbsBits(d, x), BitsOf(d, std::numeric_limits<T>::min())));
}
// Finite and |x| <= limit.
template <class D, class V, typename T>
HWY_INLINE auto AbsAtMost(D d, V x, T limit) {
  return hn::RebindMask(d, hn::Not(hn::Gt(AbsBits(d, x), BitsOf(d, limit))));
}
template <class D, class V>
HWY_INLINE V SignedZero(D d, V x) {
  return hn::And(x, hn::SignBit(d));
}

// One element (the scalar functions of kernels/unary.cc call this for each element they
// compute): f on a one-lane vector. f's lanes are independent and each op rounds as it does
// on wider vectors, so the bits are those f gives the element in any lane of a full vector.
template <class ScalarOp, bool kNaNToScalar, typename T, class Domain, class Fn>
HWY_NOINLINE void MapOne(const T* in, T* out, Domain domain, Fn f) {
  const hn::CappedTag<T, 1> d;
  const auto x = hn::Set(d, in[0]);  // every lane the element
  const auto y = f(d, x);
  auto ok = domain(d, x);
  if constexpr (kNaNToScalar) ok = hn::AndNot(hn::IsNaN(y), ok);
  out[0] = hn::AllTrue(d, ok) ? hn::GetLane(y) : ScalarOp::Apply(in[0]);
}

// out[i] = f(in[i]) where domain(in[i]) (and, with kNaNToScalar, f(in[i]) is not NaN),
// else ScalarOp::Apply(in[i]).
template <class ScalarOp, bool kNaNToScalar = false, typename T, class Domain, class Fn>
HWY_INLINE void VectorMap(const T* in, T* out, size_t n, Domain domain, Fn f) {
  if (n == 1) return MapOne<ScalarOp, kNaNToScalar>(in, out, domain, f);
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  HWY_ALIGN T xs[HWY_MAX_BYTES / sizeof(T)] = {};
  HWY_ALIGN T ys[HWY_MAX_BYTES / sizeof(T)] = {};
  HWY_ALIGN T oks[HWY_MAX_BYTES / sizeof(T)] = {};
  auto block = [&](auto x, T* dst, size_t count) {
    const auto y = f(d, x);
    auto ok = domain(d, x);
    if constexpr (kNaNToScalar) ok = hn::AndNot(hn::IsNaN(y), ok);
    if (count == lanes && hn::AllTrue(d, ok)) {
      hn::StoreU(y, d, dst);
      return;
    }
    hn::Store(x, d, xs);
    hn::Store(y, d, ys);
    hn::Store(hn::VecFromMask(d, ok), d, oks);
    for (size_t j = 0; j < count; ++j) {
      uint8_t first;
      std::memcpy(&first, &oks[j], 1);
      dst[j] = first ? ys[j] : ScalarOp::Apply(xs[j]);
    }
  };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) block(hn::LoadU(d, in + i), out + i, lanes);
  if (i < n) {
    HWY_ALIGN T tail[HWY_MAX_BYTES / sizeof(T)] = {};
    for (size_t j = 0; j < lanes; ++j) tail[j] = i + j < n ? in[i + j] : T(1);
    block(hn::Load(d, tail), out + i, n - i);
  }
}

// out[i] = f(in[i]) for functions whose vector code gives every lane's result itself (NaN,
// +-Inf, zeros and denormals included), so no lane goes to a scalar op and no vector is
// tested; two independent vectors per iteration (their dependency chains overlap). The tail,
// and a single element, run the same code on a zero-padded copy, so an element gets the same
// bits wherever it sits. in == out is allowed.
template <class Fn>
HWY_INLINE void WholeLanesMap(const float* in, float* out, size_t n, Fn f) {
  const hn::ScalableTag<float> d;
  constexpr size_t kLanes = hn::MaxLanes(decltype(d)());
  size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const auto x0 = hn::LoadU(d, in + i);
    const auto x1 = hn::LoadU(d, in + i + kLanes);
    hn::StoreU(f(d, x0), d, out + i);
    hn::StoreU(f(d, x1), d, out + i + kLanes);
  }
  for (; i + kLanes <= n; i += kLanes) hn::StoreU(f(d, hn::LoadU(d, in + i)), d, out + i);
  if (i < n) {
    HWY_ALIGN float tail[kLanes] = {};
    std::memcpy(tail, in + i, (n - i) * sizeof(float));
    hn::Store(f(d, hn::Load(d, tail)), d, tail);
    std::memcpy(out + i, tail, (n - i) * sizeof(float));
  }
}

// f32 tanh by pieces (special::TanhF32, 16-lane vectors), every lane in vector code.
HWY_INLINE void TanhF32Map(const float* in, float* out, size_t n) {
  if constexpr (special::kTanhByPieces<hn::ScalableTag<float>>) {
    WholeLanesMap(in, out, n, [](auto d, auto x) { return special::TanhF32(d, x); });
  } else {
    (void)in, (void)out, (void)n;
  }
}

// sin and cos: Highway's f32 polynomials are within 2.5 ulp, XLA's within 0.56, so f32 is
// computed in f64 lanes (special::SinCosForF32, accurate to about 1e-11 relative) and
// rounded: within 0.5 ulp + 1e-4 ulp. f64 uses Highway's f64 polynomial (f64 sin and cos
// run on libm unless kVectorF64 says otherwise). Not on the one-lane scalar target (libm
// there).
template <typename T, bool kCos, class D, class V>
HWY_INLINE V Trig(D d, V x) {
  if constexpr (std::is_same_v<T, double>) {
    if constexpr (kCos) return hn::Cos(d, x);
    else return hn::Sin(d, x);
  } else {
    return special::InF64Lanes(d, x, [](auto dd, auto v) { return special::SinCosForF32<kCos>(dd, v); });
  }
}
template <class D, class V>
HWY_INLINE auto TrigDomain(D d, V x) {
  using T = hn::TFromD<D>;
#if HWY_TARGET == HWY_SCALAR
  if constexpr (std::is_same_v<T, float>) return hn::FirstN(d, 0);
#endif
  return AbsAtMost(d, x, Limits<T>::kTrigMax);
}

// Applies ScalarOp to every element (the f64 versions of the own f32 approximations).
template <class ScalarOp, typename T>
void ScalarMap(const T* in, T* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = ScalarOp::Apply(in[i]);
}

// Lanes of the own f32 approximations: finite, not zero or denormal, |x| <= limit; none on
// the one-lane scalar target (which lacks f64 lanes).
template <class D, class V>
HWY_INLINE auto SpecialDomain(D d, V x, float limit) {
  if constexpr (!special::kHasF64Lanes) return hn::FirstN(d, 0);
  return hn::AndNot(IsTiny(d, x), AbsAtMost(d, x, limit));
}
// x is not an integer <= 0 (the poles of lgamma and digamma).
template <class D, class V>
HWY_INLINE auto NotPole(D d, V x) {
  return hn::Or(hn::Gt(x, hn::Zero(d)), hn::Ne(hn::Round(x), x));
}

// f(d, x) of special_math-inl.h evaluated in f64 lanes.
#define STABLERT_IN_F64(Fn)                                                              \
  [](auto d, auto x) {                                                                   \
    return special::InF64Lanes(d, x, [](auto dd, auto v) { return special::Fn(dd, v); }); \
  }

void SpecialF32(UnaryFn fn, const float* in, float* out, size_t n) {
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kBelowOne = 0x1.fffffep-1f;
  constexpr float kLgammaMax = 1e36f;  // lgamma overflows f32 near 4e36
  auto up_to = [](float limit) { return [limit](auto d, auto x) { return SpecialDomain(d, x, limit); }; };
  auto up_to_not_pole = [](float limit) {
    return [limit](auto d, auto x) { return hn::And(SpecialDomain(d, x, limit), NotPole(d, x)); };
  };
  switch (fn) {
    case UnaryFn::kCbrt:
      return VectorMap<ops::CbrtOp, true>(in, out, n, up_to(kMax), STABLERT_IN_F64(Cbrt));
    case UnaryFn::kTan:
      return VectorMap<ops::TanOp, true>(in, out, n, up_to(Limits<float>::kTrigMax), STABLERT_IN_F64(Tan));
    case UnaryFn::kErf:
      // f32 lanes for every input: zeros and denormals give zeros of their sign (the flushed
      // input's erf), +-Inf +-1 (special::Erf clamps), NaN itself (quieted).
      return WholeLanesMap(in, out, n, [](auto d, auto x) {
        const auto y = hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), special::Erf(d, x));
        return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);
      });
    case UnaryFn::kErfInv:
      return VectorMap<ops::ErfInvOp, true>(in, out, n, up_to(kBelowOne), STABLERT_IN_F64(ErfInv));
    case UnaryFn::kLgamma:
      return VectorMap<ops::LgammaOp, true>(in, out, n, up_to_not_pole(kLgammaMax), STABLERT_IN_F64(Lgamma));
    case UnaryFn::kDigamma:
      return VectorMap<ops::DigammaOp, true>(in, out, n, up_to_not_pole(kMax), STABLERT_IN_F64(Digamma));
    default:
      return;
  }
}
#undef STABLERT_IN_F64

void SpecialF64(UnaryFn fn, const double* in, double* out, size_t n) {
  switch (fn) {
    case UnaryFn::kCbrt: return ScalarMap<ops::CbrtOp>(in, out, n);
    case UnaryFn::kTan: return ScalarMap<ops::TanOp>(in, out, n);
    case UnaryFn::kErf: return ScalarMap<ops::ErfOp>(in, out, n);
    case UnaryFn::kErfInv: return ScalarMap<ops::ErfInvOp>(in, out, n);
    case UnaryFn::kLgamma: return ScalarMap<ops::LgammaOp>(in, out, n);
    case UnaryFn::kDigamma: return ScalarMap<ops::DigammaOp>(in, out, n);
    default: return;
  }
}

template <typename T>
void UnaryImpl(UnaryFn fn, const T* in, T* out, size_t n) {
  using L = Limits<T>;
  auto always = [](auto d, auto) { return hn::FirstN(d, hn::Lanes(d)); };
  auto in_range = [](T lo, T hi) {
    return [lo, hi](auto d, auto x) { return hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi))); };
  };
  switch (fn) {
    case UnaryFn::kExp:
      // f32 with FMA: exp_f32-inl.h's (0.84 ulp); without FMA (SSE4) its separately rounded
      // steps reach 1.14 ulp, so Highway's (0.99 ulp) stays there.
      if constexpr (std::is_same_v<T, float> && HWY_NATIVE_FMA) {
        return VectorMap<ops::ExpOp>(in, out, n, in_range(exp_f32::kLo, exp_f32::kHi),
                                     [](auto d, auto x) { return exp_f32::Exp(d, x); });
      } else {
        return VectorMap<ops::ExpOp>(in, out, n, in_range(L::kExpLo, L::kExpHi),
                                     [](auto d, auto x) { return hn::Exp(d, x); });
      }
    case UnaryFn::kExpm1:
      return VectorMap<ops::Expm1Op>(in, out, n, in_range(L::kExpLo, L::kExpHi), [](auto d, auto x) {
        return hn::IfThenElse(IsTiny(d, x), x, hn::Expm1(d, x));
      });
    case UnaryFn::kLog:
      return VectorMap<ops::LogOp>(
          in, out, n,
          [](auto d, auto x) {
            return hn::And(hn::Ge(x, hn::Set(d, std::numeric_limits<T>::min())),
                           AbsAtMost(d, x, std::numeric_limits<T>::max()));
          },
          [](auto d, auto x) { return hn::Log(d, x); });
    case UnaryFn::kLog1p:
      return VectorMap<ops::Log1pOp>(
          in, out, n,
          [](auto d, auto x) { return hn::And(hn::Gt(x, hn::Set(d, T(-1))), hn::Le(x, hn::Set(d, L::kLog1pMax))); },
          [](auto d, auto x) { return hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), hn::Log1p(d, x)); });
    case UnaryFn::kTanh:
      if constexpr (std::is_same_v<T, float> && special::kTanhByPieces<hn::ScalableTag<float>>) {
        return TanhF32Map(in, out, n);
      } else {
        return VectorMap<ops::TanhOp>(
            in, out, n, [](auto d, auto x) { return AbsAtMost(d, x, std::numeric_limits<T>::max()); },
            [](auto d, auto x) {
              const auto one = hn::CopySign(hn::Set(d, T(1)), x);
              const auto tanh = [&] {
                if constexpr (std::is_same_v<T, float> && special::kHasF64Lanes)
                  return special::InF64Lanes(d, x, [](auto dd, auto v) { return special::TanhForF32(dd, v); });
                else return hn::Tanh(d, x);
              }();
              const auto y = hn::IfThenElse(hn::Gt(hn::Abs(x), hn::Set(d, T(20))), one, tanh);
              return hn::IfThenElse(IsTiny(d, x), x, y);
            });
      }
    case UnaryFn::kLogistic: {
      // 1 / (1 + exp(-x)) with the exp of kExp: exp_f32's for f32 on FMA targets, else Highway's.
      constexpr bool kOwnExp = std::is_same_v<T, float> && HWY_NATIVE_FMA;
      const T lo = kOwnExp ? T(-exp_f32::kHi) : -L::kExpHi, hi = kOwnExp ? T(-exp_f32::kLo) : -L::kExpLo;
      return VectorMap<ops::LogisticOp>(in, out, n, in_range(lo, hi), [](auto d, auto x) {
        const auto one = hn::Set(d, T(1));
        if constexpr (kOwnExp) return hn::Div(one, hn::Add(one, exp_f32::Exp(d, hn::Neg(x))));
        else return hn::Div(one, hn::Add(one, hn::Exp(d, hn::Neg(x))));
      });
    }
    case UnaryFn::kSin:
      return VectorMap<ops::SineOp>(
          in, out, n, [](auto d, auto x) { return TrigDomain(d, x); },
          [](auto d, auto x) { return hn::IfThenElse(IsTiny(d, x), x, Trig<T, false>(d, x)); });
    case UnaryFn::kCos:
      return VectorMap<ops::CosineOp>(
          in, out, n, [](auto d, auto x) { return TrigDomain(d, x); },
          [](auto d, auto x) {
            // cos rounds to 1 below kCosOne; Highway's polynomial gives 1 - ulp there in f64.
            return hn::IfThenElse(hn::Lt(hn::Abs(x), hn::Set(d, L::kCosOne)), hn::Set(d, T(1)),
                                  Trig<T, true>(d, x));
          });
    case UnaryFn::kSqrt:
      return VectorMap<ops::SqrtOp>(in, out, n, always, [](auto d, auto x) {
        return hn::Sqrt(hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), x));
      });
    case UnaryFn::kRsqrt:
      return VectorMap<ops::RsqrtOp, true>(in, out, n, always, [](auto d, auto x) {
        const auto xf = hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), x);
        const auto y = hn::Div(hn::Set(d, T(1)), hn::Sqrt(xf));
#if HWY_NATIVE_FMA
        // One Newton step on the residual e = 1 - x y^2, with x y split exactly by an FMA
        // (no underflow for any normal x): 1.48 ulp -> 0.5. Where y is 0 or Inf (x = Inf,
        // 0) the step gives NaN and the lane goes to the scalar op.
        const auto h = hn::Mul(xf, y);
        const auto h_lo = hn::MulSub(xf, y, h);
        const auto e = hn::Sub(hn::NegMulAdd(h, y, hn::Set(d, T(1))), hn::Mul(h_lo, y));
        return hn::MulAdd(hn::Mul(hn::Set(d, T(0.5)), y), e, y);
#else
        return y;
#endif
      });
    case UnaryFn::kCbrt:
    case UnaryFn::kTan:
    case UnaryFn::kErf:
    case UnaryFn::kErfInv:
    case UnaryFn::kLgamma:
    case UnaryFn::kDigamma:
      if constexpr (std::is_same_v<T, float>) return SpecialF32(fn, in, out, n);
      else return SpecialF64(fn, in, out, n);
  }
}

void UnaryF32(UnaryFn fn, const float* in, float* out, size_t n) { UnaryImpl<float>(fn, in, out, n); }
void UnaryF64(UnaryFn fn, const double* in, double* out, size_t n) { UnaryImpl<double>(fn, in, out, n); }

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(UnaryF32);
HWY_EXPORT(UnaryF64);

void Unary(UnaryFn fn, const float* in, float* out, size_t n) { HWY_DYNAMIC_DISPATCH(UnaryF32)(fn, in, out, n); }
void Unary(UnaryFn fn, const double* in, double* out, size_t n) { HWY_DYNAMIC_DISPATCH(UnaryF64)(fn, in, out, n); }
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
