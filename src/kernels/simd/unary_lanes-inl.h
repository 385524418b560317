// The vector forms of the unary functions of unary_simd.h that run on Highway's contrib math
// or special_math-inl.h, per Highway target: for each function its domain (the lanes the
// vector function computes exactly as documented in unary_simd.cc) and the vector function
// itself. unary_simd.cc maps arrays through them (VectorMap: lanes outside the domain go to
// the scalar op) and chain_simd.cc evaluates them inside fused chains, so both paths run the
// same code and give the same bits. Included inside the per-target block of those files
// (Highway's "-inl.h" convention: the guard toggles once per target). Pure functions; no state.
#if defined(STABLERT_KERNELS_SIMD_UNARY_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STABLERT_KERNELS_SIMD_UNARY_LANES_INL_H_
#undef STABLERT_KERNELS_SIMD_UNARY_LANES_INL_H_
#else
#define STABLERT_KERNELS_SIMD_UNARY_LANES_INL_H_
#endif

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/special_math-inl.h"
#include "kernels/simd/unary_simd.h"

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
template <class D, class V, typename T>
HWY_INLINE auto InRange(D d, V x, T lo, T hi) {
  return hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi)));
}

// UnaryLanes<fn, T>: ScalarOp (the op of the lanes outside the domain), kNaNToScalar (a lane
// whose vector result is NaN goes to the scalar op too), Domain(d, x) and Apply(d, x).
template <UnaryFn kFn, typename T> struct UnaryLanes;

template <typename T> struct UnaryLanes<UnaryFn::kExp, T> {
  using ScalarOp = ops::ExpOp;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) { return InRange(d, x, Limits<T>::kExpLo, Limits<T>::kExpHi); }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) { return hn::Exp(d, x); }
};

template <typename T> struct UnaryLanes<UnaryFn::kExpm1, T> {
  using ScalarOp = ops::Expm1Op;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) { return InRange(d, x, Limits<T>::kExpLo, Limits<T>::kExpHi); }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
    return hn::IfThenElse(IsTiny(d, x), x, hn::Expm1(d, x));
  }
};

template <typename T> struct UnaryLanes<UnaryFn::kLog, T> {
  using ScalarOp = ops::LogOp;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) {
    return hn::And(hn::Ge(x, hn::Set(d, std::numeric_limits<T>::min())), AbsAtMost(d, x, std::numeric_limits<T>::max()));
  }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) { return hn::Log(d, x); }
};

template <typename T> struct UnaryLanes<UnaryFn::kLog1p, T> {
  using ScalarOp = ops::Log1pOp;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) {
    return hn::And(hn::Gt(x, hn::Set(d, T(-1))), hn::Le(x, hn::Set(d, Limits<T>::kLog1pMax)));
  }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
    return hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), hn::Log1p(d, x));
  }
};

template <typename T> struct UnaryLanes<UnaryFn::kTanh, T> {
  using ScalarOp = ops::TanhOp;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) {
    return AbsAtMost(d, x, std::numeric_limits<T>::max());
  }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
    const auto one = hn::CopySign(hn::Set(d, T(1)), x);
    const auto tanh = [&] {
      using Full = hn::ScalableTag<T>;
      if constexpr (std::is_same_v<T, float> && special::kTanhByPieces<Full>) {
        if constexpr (hn::MaxLanes(D()) == 1) {
          // One element (MapOne): the same full-vector code, so it gets the bits
          // any lane of a full vector gives it.
          const Full df;
          return hn::Set(d, hn::GetLane(special::TanhF32(df, hn::Set(df, hn::GetLane(x)))));
        } else {
          return special::TanhF32(d, x);
        }
      } else if constexpr (std::is_same_v<T, float> && special::kHasF64Lanes)
        return special::InF64Lanes(d, x, [](auto dd, auto v) { return special::TanhForF32(dd, v); });
      else return hn::Tanh(d, x);
    }();
    using Full = hn::ScalableTag<T>;
    if constexpr (std::is_same_v<T, float> && special::kTanhByPieces<Full>) {
      (void)one;  // TanhF32 is already +-1 from kTanhRoundsToOne (< 20) on
      return hn::IfThenElse(IsTiny(d, x), x, tanh);
    } else {
      const auto y = hn::IfThenElse(hn::Gt(hn::Abs(x), hn::Set(d, T(20))), one, tanh);
      return hn::IfThenElse(IsTiny(d, x), x, y);
    }
  }
};

template <typename T> struct UnaryLanes<UnaryFn::kLogistic, T> {
  using ScalarOp = ops::LogisticOp;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) { return InRange(d, x, -Limits<T>::kExpHi, -Limits<T>::kExpLo); }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
    const auto one = hn::Set(d, T(1));
    return hn::Div(one, hn::Add(one, hn::Exp(d, hn::Neg(x))));
  }
};

template <typename T> struct UnaryLanes<UnaryFn::kSqrt, T> {
  using ScalarOp = ops::SqrtOp;
  static constexpr bool kNaNToScalar = false;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V) { return hn::FirstN(d, hn::Lanes(d)); }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
    return hn::Sqrt(hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), x));
  }
};

template <typename T> struct UnaryLanes<UnaryFn::kRsqrt, T> {
  using ScalarOp = ops::RsqrtOp;
  static constexpr bool kNaNToScalar = true;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V) { return hn::FirstN(d, hn::Lanes(d)); }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
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
  }
};

// erf: f32 lanes only (f64 erf is the scalar op); zeros and denormals give zeros of their
// sign (the flushed input's erf).
template <> struct UnaryLanes<UnaryFn::kErf, float> {
  using ScalarOp = ops::ErfOp;
  static constexpr bool kNaNToScalar = true;
  template <class D, class V> static HWY_INLINE auto Domain(D d, V x) {
    return AbsAtMost(d, x, std::numeric_limits<float>::max());
  }
  template <class D, class V> static HWY_INLINE V Apply(D d, V x) {
    return hn::IfThenElse(IsTiny(d, x), SignedZero(d, x), special::Erf(d, x));
  }
};

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
