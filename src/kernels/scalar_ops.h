// The scalar semantics of every elementwise op, shared by the vectorized loops and the
// scalar-program interpreter so both compute identical results. Each op maps values of
// a compute type (float for f16/bf16, the storage type otherwise) to a compute value.
// Internal to kernels/; header-only, pure.
//
// Integer semantics follow XLA's CPU backend: arithmetic wraps; x / 0 is -1 (all ones)
// and x % 0 is x; INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0; shifts by an amount
// outside [0, bits) give 0 (or the sign fill for arithmetic right shifts); a negative
// integer exponent gives 0 unless the base is 1 or -1. Float maximum/minimum propagate
// NaN, order -0 below +0 and treat denormals as signed zeros.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/simd/special_math_coefficients.h"

namespace stablert::kernels::ops {

// Each op maps a compute-typed value (float for f16/bf16) to the output's compute type.
// Denormal operands count as zeros of their sign, as under the flush-to-zero mode XLA's
// CPU backend (and StableRT's executor) runs in, where maximum/minimum are arithmetic.
template <typename C>
inline C FlushDenormal(C x) {
  return std::fabs(x) < std::numeric_limits<C>::min() ? std::copysign(C(0), x) : x;
}

struct NegateOp {
  template <typename C> static C Apply(C x) {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
    else return -x;
  }
};
struct AbsOp {
  template <typename C> static C Apply(C x) {
    if constexpr (std::is_unsigned_v<C>) return x;
    else if constexpr (std::is_integral_v<C>) return x < 0 ? NegateOp::Apply(x) : x;
    else return std::fabs(x);
  }
};
struct SignOp {
  template <typename C> static C Apply(C x) {
    if constexpr (std::is_unsigned_v<C>) return x != 0 ? 1 : 0;
    else if constexpr (std::is_integral_v<C>) return static_cast<C>((x > 0) - (x < 0));
    else {
      x = FlushDenormal(x);
      return x > 0 ? C(1) : (x < 0 ? C(-1) : x);  // keeps +-0 (denormals included) and NaN
    }
  }
};
struct NotOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(~x); }
};
struct NotPredOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(x ^ 1); }
};
struct PopcntOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(std::popcount(std::make_unsigned_t<C>(x))); }
};
struct ClzOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(std::countl_zero(std::make_unsigned_t<C>(x))); }
};
// Most math functions see denormal inputs as zeros of their sign, as XLA's (flush-to-zero)
// CPU backend computes them; sin, tan, tanh and expm1 return such inputs unchanged and
// log, pow and atan2 use them as they are, as XLA's do on f32. (XLA's own approximations are not uniform on denormal inputs; results on them
// may differ from XLA's in these functions.)
#define STABLERT_FLOAT_UNARY(Name, expr)    \
  struct Name {                             \
    template <typename C> static C Apply(C x) { \
      x = FlushDenormal(x);                 \
      return expr;                          \
    }                                       \
  };
STABLERT_FLOAT_UNARY(ExpOp, std::exp(x))
STABLERT_FLOAT_UNARY(Log1pOp, std::log1p(x))
STABLERT_FLOAT_UNARY(SqrtOp, std::sqrt(x))
STABLERT_FLOAT_UNARY(RsqrtOp, C(1) / std::sqrt(x))
STABLERT_FLOAT_UNARY(CbrtOp, std::cbrt(x))
STABLERT_FLOAT_UNARY(LogisticOp, C(1) / (C(1) + std::exp(-x)))
STABLERT_FLOAT_UNARY(CosineOp, std::cos(x))
STABLERT_FLOAT_UNARY(FloorOp, std::floor(x))
STABLERT_FLOAT_UNARY(CeilOp, std::ceil(x))
STABLERT_FLOAT_UNARY(RoundAfzOp, std::round(x))
STABLERT_FLOAT_UNARY(RoundEvenOp, std::nearbyint(x))
#define STABLERT_PASSTHROUGH_UNARY(Name, fn) \
  struct Name {                              \
    template <typename C> static C Apply(C x) { return std::fabs(x) < std::numeric_limits<C>::min() ? x : fn(x); } \
  };
STABLERT_PASSTHROUGH_UNARY(SineOp, std::sin)
STABLERT_PASSTHROUGH_UNARY(TanOp, std::tan)
STABLERT_PASSTHROUGH_UNARY(TanhOp, std::tanh)
STABLERT_PASSTHROUGH_UNARY(Expm1Op, std::expm1)
// log, like XLA's on f32, keeps denormal inputs.
struct LogOp {
  template <typename C> static C Apply(C x) { return std::log(x); }
};
#undef STABLERT_PASSTHROUGH_UNARY
#undef STABLERT_FLOAT_UNARY

// erf, erf^-1, lgamma and digamma (chlo.erf, chlo.erf_inv, chlo.lgamma, chlo.digamma) with
// the special values of XLA's CPU backend: denormal inputs count as zeros; erf(±Inf) = ±1;
// erf_inv(±1) = ±Inf and NaN outside [-1, 1]; lgamma is +Inf at its poles (0, negative
// integers, -Inf); digamma is NaN at its poles and at -Inf, +Inf at +Inf. Computed in double.
struct ErfOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(std::erf(static_cast<double>(FlushDenormal(x)))); }
};
template <size_t N>
inline double PolyAt(double t, const double (&c)[N]) {
  double r = c[N - 1];
  for (size_t i = N - 1; i-- > 0;) r = r * t + c[i];
  return r;
}
struct ErfInvOp {
  template <typename C> static C Apply(C x) {
    namespace k = coefficients;
    const double v = static_cast<double>(FlushDenormal(x));
    if (!(std::fabs(v) <= 1)) return std::numeric_limits<C>::quiet_NaN();
    if (std::fabs(v) == 1) return std::copysign(std::numeric_limits<C>::infinity(), x);
    if (v == 0) return static_cast<C>(v);
    const double w = -std::log((1 - v) * (1 + v));
    double y;
    if (w < 6.25) {
      y = v * PolyAt(w - 3.125, k::kErfInvCentral);
    } else if (w < 16.81) {
      y = std::copysign(PolyAt(std::sqrt(w) - 3.3, k::kErfInvTail), v);
    } else {  // past the f32 range: erfc(y) ~ exp(-y^2) / (y sqrt(pi)), within 1%
      const double y2 = w + 0.6931471805599453;
      y = std::copysign(std::sqrt(y2 - 0.5 * std::log(k::kPi * y2)), v);
    }
    // The polynomials are fitted for f32 results; Newton steps on erf make them accurate to
    // double (the f64 function) and refine the guess past the fitted range.
    for (int i = 0; i < 3 && std::isfinite(y); ++i) {
      const double residual = std::fabs(v) < 0.5 ? std::erf(y) - v
                                                 : (v > 0 ? 1 : -1) * ((1 - std::fabs(v)) - std::erfc(std::fabs(y)));
      y -= residual / (1.1283791670955126 * std::exp(-y * y));
    }
    return static_cast<C>(y);
  }
};
struct LgammaOp {
  template <typename C> static C Apply(C x) {
    int sign;
    return static_cast<C>(::lgamma_r(static_cast<double>(FlushDenormal(x)), &sign));
  }
};
struct DigammaOp {
  template <typename C> static C Apply(C x) {
    namespace k = coefficients;
    double v = static_cast<double>(FlushDenormal(x));
    if (std::isnan(v) || v == -std::numeric_limits<double>::infinity()) return std::numeric_limits<C>::quiet_NaN();
    if (v == std::numeric_limits<double>::infinity()) return static_cast<C>(v);
    if (v <= 0 && std::nearbyint(v) == v) return std::numeric_limits<C>::quiet_NaN();
    double reflection = 0;
    if (v < 0.5) {  // digamma(x) = digamma(1 - x) - pi / tan(pi x)
      reflection = -k::kPi / std::tan(k::kPi * (v - std::nearbyint(v)));
      v = 1 - v;
    }
    double shift = 0;
    for (; v < k::kSeriesStart; v += 1) shift -= 1 / v;
    const double iz2 = 1 / (v * v);
    return static_cast<C>(std::log(v) - 0.5 / v - iz2 * PolyAt(iz2, k::kDigammaAsymptotic) + shift + reflection);
  }
};

struct IsFiniteOp {
  template <typename C> static uint8_t Apply(C x) { return std::isfinite(x) ? 1 : 0; }
};


template <typename C>
using Unsigned = std::make_unsigned_t<C>;

struct AddOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(Unsigned<C>(a) + Unsigned<C>(b));
    else return a + b;
  }
};
struct SubtractOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(Unsigned<C>(a) - Unsigned<C>(b));
    else return a - b;
  }
};
struct MultiplyOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      // Multiply in an unsigned type at least as wide as int so nothing promotes to a
      // signed type that could overflow.
      using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, Unsigned<C>>;
      return static_cast<C>(static_cast<W>(static_cast<Unsigned<C>>(a)) * static_cast<W>(static_cast<Unsigned<C>>(b)));
    } else {
      return a * b;
    }
  }
};
struct DivideOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return a;
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
struct RemainderOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;
      }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(FlushDenormal(a), FlushDenormal(b));
    }
  }
};
struct MaxOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return a > b ? a : b;
    } else {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      a = FlushDenormal(a);
      b = FlushDenormal(b);
      return (a > b || (a == b && !std::signbit(a))) ? a : b;
    }
  }
};
struct MinOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return a < b ? a : b;
    } else {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      a = FlushDenormal(a);
      b = FlushDenormal(b);
      return (a < b || (a == b && std::signbit(a))) ? a : b;
    }
  }
};
struct PowerOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (b < 0) {
          if (a == 1) return 1;
          if (a == -1) return (b & 1) ? C(-1) : C(1);
          return 0;
        }
      }
      C result = 1;
      C base = a;
      auto exponent = static_cast<Unsigned<C>>(b);
      while (exponent != 0) {
        if (exponent & 1) result = MultiplyOp::Apply(result, base);
        base = MultiplyOp::Apply(base, base);
        exponent >>= 1;
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct Atan2Op {
  template <typename C> static C Apply(C a, C b) { return std::atan2(a, b); }
};
struct AndOp {
  template <typename C> static C Apply(C a, C b) { return static_cast<C>(a & b); }
};
struct OrOp {
  template <typename C> static C Apply(C a, C b) { return static_cast<C>(a | b); }
};
struct XorOp {
  template <typename C> static C Apply(C a, C b) { return static_cast<C>(a ^ b); }
};
struct ShiftLeftOp {
  template <typename C> static C Apply(C a, C b) {
    auto amount = static_cast<Unsigned<C>>(b);
    if (amount >= sizeof(C) * 8) return 0;
    return static_cast<C>(static_cast<Unsigned<C>>(static_cast<Unsigned<C>>(a) << amount));
  }
};
struct ShiftRightLogicalOp {
  template <typename C> static C Apply(C a, C b) {
    auto amount = static_cast<Unsigned<C>>(b);
    if (amount >= sizeof(C) * 8) return 0;
    return static_cast<C>(static_cast<Unsigned<C>>(a) >> amount);
  }
};
struct ShiftRightArithmeticOp {
  template <typename C> static C Apply(C a, C b) {
    using S = std::make_signed_t<C>;
    auto amount = static_cast<Unsigned<C>>(b);
    S value = static_cast<S>(a);
    if (amount >= sizeof(C) * 8) return static_cast<C>(value < 0 ? S(-1) : S(0));
    return static_cast<C>(static_cast<S>(value >> amount));
  }
};


// A signed integer whose order is the IEEE total order of the float with these bits:
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN.
template <typename T>
inline auto TotalOrderKey(T value) {
  if constexpr (std::is_same_v<T, double>) {
    int64_t bits = std::bit_cast<int64_t>(value);
    return bits ^ static_cast<int64_t>(static_cast<uint64_t>(bits >> 63) >> 1);
  } else if constexpr (std::is_same_v<T, float>) {
    int32_t bits = std::bit_cast<int32_t>(value);
    return bits ^ static_cast<int32_t>(static_cast<uint32_t>(bits >> 31) >> 1);
  } else {  // F16, BF16
    int16_t bits = static_cast<int16_t>(value.bits);
    return static_cast<int16_t>(bits ^ static_cast<int16_t>(static_cast<uint16_t>(bits >> 15) >> 1));
  }
}

// compare with a run-time direction (VHLO numbering: EQ NE GE GT LE LT = 0..5) on values
// of one storage type T; `total` selects the IEEE total order for floats.
template <typename T>
inline uint8_t CompareValues(T a, T b, int64_t direction, bool total) {
  auto compare = [direction](auto x, auto y) -> uint8_t {
    switch (direction) {
      case 0: return x == y;
      case 1: return x != y;
      case 2: return x >= y;
      case 3: return x > y;
      case 4: return x <= y;
      default: return x < y;
    }
  };
  if constexpr (std::is_same_v<T, F16> || std::is_same_v<T, BF16> || std::is_floating_point_v<T>) {
    if (total) return compare(TotalOrderKey(a), TotalOrderKey(b));
  }
  if constexpr (std::is_same_v<T, F16>) return compare(F16ToFloat(a), F16ToFloat(b));
  else if constexpr (std::is_same_v<T, BF16>) return compare(BF16ToFloat(a), BF16ToFloat(b));
  else return compare(a, b);
}

template <typename C>
inline C ClampOne(C lo, C x, C hi) {
  return MinOp::Apply(MaxOp::Apply(x, lo), hi);
}

}  // namespace stablert::kernels::ops
