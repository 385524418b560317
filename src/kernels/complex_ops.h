// Scalar semantics of the elementwise ops on complex values (complex<float>,
// complex<double>), shared by the vectorized loops, the reductions and the scalar-program
// interpreter. Each op computes on the real and imaginary parts with the formulas of XLA's
// CPU backend (its elemental IR emitter), so results, including at zeros, infinities and
// NaNs, match XLA's:
//   - multiply is the textbook formula (no C99 Annex G recovery of infinities);
//   - divide is Smith's algorithm with XLA's corrections for zero and infinite operands;
//   - abs is max * sqrt(1 + (min/max)^2) (min when that is NaN: 0/0, inf/inf, NaN);
//   - sqrt, rsqrt, log, pow go through abs and atan2 (polar form);
//   - sin, cos, tan, tanh, exp, expm1, log1p follow XLA's decompositions.
// Complex ops operate in the part type (float for complex64), as XLA does.
// Internal to kernels/; header-only, pure, thread-safe. Reusable by any kernel that needs
// complex arithmetic (reductions, dot, FFT).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace stablert::kernels::cx {

template <typename R>
using Complex = std::complex<R>;

// NaN-propagating maximum/minimum of two non-negative parts, as XLA's float max/min.
template <typename R>
inline R MaxNan(R a, R b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b); }
template <typename R>
inline R MinNan(R a, R b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b); }

template <typename R>
inline Complex<R> Add(Complex<R> a, Complex<R> b) { return {a.real() + b.real(), a.imag() + b.imag()}; }
template <typename R>
inline Complex<R> Subtract(Complex<R> a, Complex<R> b) { return {a.real() - b.real(), a.imag() - b.imag()}; }
// With XLA's fused multiply-adds: re = fma(ar, br, -(ai bi)), im = fma(ai, br, ar bi), so
// overflowing and cancelling products round as XLA's do.
template <typename R>
inline Complex<R> Multiply(Complex<R> a, Complex<R> b) {
  return {std::fma(a.real(), b.real(), -(a.imag() * b.imag())), std::fma(a.imag(), b.real(), a.real() * b.imag())};
}
template <typename R>
inline Complex<R> Negate(Complex<R> a) { return {-a.real(), -a.imag()}; }

template <typename R>
inline Complex<R> Divide(Complex<R> a, Complex<R> b) {
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const R inf = std::numeric_limits<R>::infinity();
  // Multiply-adds fused as XLA's compiled code fuses them.
  const R r_over_i = br / bi, r_over_i_denom = std::fma(r_over_i, br, bi);
  const R i_over_r = bi / br, i_over_r_denom = std::fma(i_over_r, bi, br);
  const R br_abs = std::fabs(br), bi_abs = std::fabs(bi);
  const bool r_lt_i = br_abs < bi_abs;
  const R cr = r_lt_i ? std::fma(r_over_i, ar, ai) / r_over_i_denom : std::fma(i_over_r, ai, ar) / i_over_r_denom;
  const R ci = r_lt_i ? std::fma(r_over_i, ai, -ar) / r_over_i_denom : std::fma(-i_over_r, ar, ai) / i_over_r_denom;
  if (!(std::isnan(cr) && std::isnan(ci))) return {cr, ci};
  // Corner cases when Smith's algorithm gives (NaN, NaN).
  if (br_abs == 0 && bi_abs == 0 && (!std::isnan(ar) || !std::isnan(ai))) {
    const R signed_inf = std::copysign(inf, br);
    return {signed_inf * ar, signed_inf * ai};
  }
  const R ar_abs = std::fabs(ar), ai_abs = std::fabs(ai);
  const bool ar_inf = ar_abs == inf, ai_inf = ai_abs == inf;
  const bool br_finite = br_abs != inf && !std::isnan(br), bi_finite = bi_abs != inf && !std::isnan(bi);
  if ((ar_inf || ai_inf) && br_finite && bi_finite) {
    const R sr = std::copysign(ar_inf ? R(1) : R(0), ar), si = std::copysign(ai_inf ? R(1) : R(0), ai);
    return {inf * (sr * br + si * bi), inf * (si * br - sr * bi)};
  }
  const bool ar_finite = ar_abs != inf && !std::isnan(ar), ai_finite = ai_abs != inf && !std::isnan(ai);
  const bool br_inf = br_abs == inf, bi_inf = bi_abs == inf;
  if ((br_inf || bi_inf) && ar_finite && ai_finite) {
    const R sr = std::copysign(br_inf ? R(1) : R(0), br), si = std::copysign(bi_inf ? R(1) : R(0), bi);
    return {R(0) * (ar * sr + ai * si), R(0) * (ai * sr - ar * si)};
  }
  return {cr, ci};
}

// min(|re|, |im|), max(|re|, |im|) and 1 + (min/max)^2 of (re, im).
template <typename R>
struct AbsParts {
  R min, max, one_plus_ratio_sq;
};
template <typename R>
inline AbsParts<R> AbsHelper(R re, R im) {
  const R a = std::fabs(re), b = std::fabs(im);
  const R max = MaxNan(a, b), min = MinNan(a, b);
  const R ratio = min / max;
  return {min, max, std::fma(ratio, ratio, R(1))};
}

template <typename R>
inline R Abs(Complex<R> x) {
  const AbsParts<R> p = AbsHelper(x.real(), x.imag());
  const R result = p.max * std::sqrt(p.one_plus_ratio_sq);
  return std::isnan(result) ? p.min : result;
}

template <typename R>
inline Complex<R> Sign(Complex<R> x) {
  const R abs = Abs(x);
  if (abs == 0) return {0, 0};
  return {x.real() / abs, x.imag() / abs};
}

template <typename R>
inline Complex<R> Sqrt(Complex<R> x) {
  const R a = x.real(), b = x.imag();
  const R inf = std::numeric_limits<R>::infinity();
  const AbsParts<R> p = AbsHelper(a, b);
  R r = std::sqrt(p.max) * std::pow(p.one_plus_ratio_sq, R(0.25));  // sqrt(|x|)
  if (std::isnan(r)) r = p.min;
  const R angle = std::atan2(b, a) * R(0.5);
  const R c = std::cos(angle), s = std::sin(angle);
  const R abs_b = std::fabs(b);
  if (r == 0) return {0, 0};
  const R re = (abs_b == inf || a == inf) ? inf : (a == -inf && abs_b != inf) ? R(0) : r * c;
  const R im = (abs_b == inf || a == -inf) ? std::copysign(inf, b)
               : std::isnan(r)             ? std::numeric_limits<R>::quiet_NaN()
               : s == 0                    ? s
                                           : r * s;
  return {re, im};
}

template <typename R>
inline Complex<R> Rsqrt(Complex<R> x) {
  const R a = x.real(), b = x.imag();
  const R inf = std::numeric_limits<R>::infinity();
  const AbsParts<R> p = AbsHelper(a, b);
  R r = (R(1) / std::sqrt(p.max)) * (R(1) / std::sqrt(std::sqrt(p.one_plus_ratio_sq)));
  if (std::isnan(r)) r = R(1) / std::sqrt(p.min);
  const R angle = std::atan2(b, a) * R(-0.5);
  const R c = std::cos(angle), s = std::sin(angle);
  if (a == 0 && b == 0) return {inf, std::numeric_limits<R>::quiet_NaN()};
  const R abs_a = std::fabs(a), abs_b = std::fabs(b);
  if ((abs_b == inf && std::isnan(a)) || abs_a == inf) return {std::copysign(R(0), a), -std::copysign(R(0), b)};
  return {r * c, r * s};
}

// A zero imaginary part stays exact: exp(inf + 0i) = inf + 0i (not inf * sin(0) = NaN).
template <typename R>
inline Complex<R> Exp(Complex<R> x) {
  const R e = std::exp(x.real());
  if (x.imag() == 0) return {e, x.imag()};
  return {e * std::cos(x.imag()), e * std::sin(x.imag())};
}

// cos(x) - 1 without cancellation near 0.
template <typename R>
inline R Cosm1(R x) {
  if (x * x > R(0.61685)) return std::cos(x) - R(1);
  const R s = std::sin(x * R(0.5));
  return R(-2) * s * s;
}

template <typename R>
inline Complex<R> Expm1(Complex<R> x) {
  const R a = x.real(), b = x.imag();
  const R expm1_a = std::expm1(a);
  const R exp_a = expm1_a + R(1);
  const R cos_b_m1 = Cosm1(b);
  const R cos_b = cos_b_m1 + R(1);
  return {expm1_a * cos_b + cos_b_m1, b == 0 ? R(0) : exp_a * std::sin(b)};
}

template <typename R>
inline Complex<R> Log(Complex<R> x) {
  return {std::log(Abs(x)), std::atan2(x.imag(), x.real())};
}

template <typename R>
inline Complex<R> Log1p(Complex<R> x) {
  const R a = x.real(), b = x.imag();
  const R a1 = a + R(1);
  const R abs_a1 = std::fabs(a1), abs_b = std::fabs(b);
  const R max = MaxNan(abs_a1, abs_b), min = MinNan(abs_a1, abs_b);
  const R max_minus_one = a1 > abs_b ? a : max - R(1);
  const R ratio = min / max;
  R re = R(0.5) * std::log1p(ratio * ratio) + std::log1p(max_minus_one);
  if (std::isnan(re)) re = min;
  return {re, std::atan2(b, a1)};
}

// sin (kCos = false) or cos (kCos = true) through exp of the imaginary part.
template <bool kCos, typename R>
inline Complex<R> SinCos(Complex<R> x) {
  const R exp_y = std::exp(x.imag());
  const R half_exp_y = R(0.5) * exp_y, half_exp_neg_y = R(0.5) / exp_y;
  const R sin_x = std::sin(x.real()), cos_x = std::cos(x.real());
  const R sinh_y = half_exp_y - half_exp_neg_y, cosh_y = half_exp_y + half_exp_neg_y;
  if constexpr (kCos) return {cos_x * cosh_y, -(sin_x * sinh_y)};
  else return {sin_x * cosh_y, cos_x * sinh_y};
}

// tanh (kTan = false) or tan(x) = -i tanh(i x) (kTan = true).
template <bool kTan, typename R>
inline Complex<R> TanTanh(Complex<R> x) {
  const R a = kTan ? -x.imag() : x.real();
  const R b = kTan ? x.real() : x.imag();
  const R inf = std::numeric_limits<R>::infinity();
  const R exp_2a_m1 = std::expm1(a + a), exp_neg_2a_m1 = std::expm1(-(a + a));
  const R real_numerator = exp_2a_m1 - exp_neg_2a_m1;
  const R cos_b = std::cos(b), sin_b = std::sin(b);
  const R imag_numerator = R(4) * (cos_b * sin_b);
  const R exp_sum_m2 = exp_2a_m1 + exp_neg_2a_m1;
  const R denom = exp_sum_m2 + cos_b * cos_b * R(4);
  R re = exp_sum_m2 == inf ? std::copysign(R(1), a) : real_numerator / denom;
  R im = imag_numerator / denom;
  const bool a_is_inf = std::fabs(a) == inf;
  const bool sin_2b_is_nan = std::isnan(imag_numerator);
  if (sin_2b_is_nan && !a_is_inf) re = std::numeric_limits<R>::quiet_NaN();
  if (b == 0 || (a_is_inf && sin_2b_is_nan)) im = 0;
  if constexpr (kTan) return {im, -re};
  else return {re, im};
}

template <typename R>
inline Complex<R> Power(Complex<R> x, Complex<R> y) {
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const R inf = std::numeric_limits<R>::infinity();
  if (a == inf && b == 0 && d == 0 && c < 0) return {0, 0};
  if (a == inf && b == 0 && d == 0 && c > 0) return {inf, 0};
  if (a == 1 && b == 0) return {1, 0};
  if (c == 0 && d == 0) return {1, 0};
  const R abs = Abs(x);
  if (abs == 0 && d == 0 && c >= 0) return {c == 0 ? R(1) : R(0), 0};
  const R arg = std::atan2(b, a);
  const R coeff = std::pow(abs, c) * std::exp(-d * arg);
  const R q = std::fma(d, std::log(abs), c * arg);
  return {coeff * std::cos(q), coeff * std::sin(q)};
}

// atan2 of complex operands: -i * log((x + i y) / sqrt(x^2 + y^2)).
template <typename R>
inline Complex<R> Atan2(Complex<R> y, Complex<R> x) {
  const Complex<R> sum = Add(Multiply(x, x), Multiply(y, y));
  const Complex<R> x_plus_iy = Add(x, Multiply(Complex<R>(0, 1), y));
  return Multiply(Complex<R>(0, -1), Log(Divide(x_plus_iy, Sqrt(sum))));
}

// 1 / (1 + exp(-x)).
template <typename R>
inline Complex<R> Logistic(Complex<R> x) {
  return Divide(Complex<R>(1, 0), Add(Complex<R>(1, 0), Exp(Negate(x))));
}

//===--- Op structs in the shape of scalar_ops.h (Apply on the storage type) ---===//

#define STABLERT_COMPLEX_UNARY(Name, fn) \
  struct Name {                          \
    template <typename C> static auto Apply(C x) { return fn(x); } \
  };
STABLERT_COMPLEX_UNARY(NegateOp, Negate)
STABLERT_COMPLEX_UNARY(AbsOp, Abs)
STABLERT_COMPLEX_UNARY(SignOp, Sign)
STABLERT_COMPLEX_UNARY(SqrtOp, Sqrt)
STABLERT_COMPLEX_UNARY(RsqrtOp, Rsqrt)
STABLERT_COMPLEX_UNARY(ExpOp, Exp)
STABLERT_COMPLEX_UNARY(Expm1Op, Expm1)
STABLERT_COMPLEX_UNARY(LogOp, Log)
STABLERT_COMPLEX_UNARY(Log1pOp, Log1p)
STABLERT_COMPLEX_UNARY(SineOp, (SinCos<false>))
STABLERT_COMPLEX_UNARY(CosineOp, (SinCos<true>))
STABLERT_COMPLEX_UNARY(TanOp, (TanTanh<true>))
STABLERT_COMPLEX_UNARY(TanhOp, (TanTanh<false>))
STABLERT_COMPLEX_UNARY(LogisticOp, Logistic)
#undef STABLERT_COMPLEX_UNARY
struct RealOp {
  template <typename C> static auto Apply(C x) { return x.real(); }
};
struct ImagOp {
  template <typename C> static auto Apply(C x) { return x.imag(); }
};

#define STABLERT_COMPLEX_BINARY(Name, fn) \
  struct Name {                           \
    template <typename C> static C Apply(C a, C b) { return fn(a, b); } \
  };
STABLERT_COMPLEX_BINARY(AddOp, Add)
STABLERT_COMPLEX_BINARY(SubtractOp, Subtract)
STABLERT_COMPLEX_BINARY(MultiplyOp, Multiply)
STABLERT_COMPLEX_BINARY(DivideOp, Divide)
STABLERT_COMPLEX_BINARY(PowerOp, Power)
STABLERT_COMPLEX_BINARY(Atan2Op, Atan2)
#undef STABLERT_COMPLEX_BINARY

// compare on complex values (VHLO numbering: EQ 0, NE 1, GE 2, GT 3, LE 4, LT 5): EQ is
// ordered on both parts, NE unordered on either, as XLA's; the orderings are the
// specification's lexicographic comparison of (real, imag) with IEEE comparisons on each
// part: a < b iff re a < re b, or re a == re b and im a < im b (a NaN part compares false).
template <typename R>
inline uint8_t CompareEqNe(Complex<R> a, Complex<R> b, int64_t direction) {
  const R ar = a.real(), br = b.real(), ai = a.imag(), bi = b.imag();
  switch (direction) {
    case 0: return ar == br && ai == bi;
    case 1: return !(ar == br) || !(ai == bi);
    case 2: return ar > br || (ar == br && ai >= bi);
    case 3: return ar > br || (ar == br && ai > bi);
    case 4: return ar < br || (ar == br && ai <= bi);
    default: return ar < br || (ar == br && ai < bi);
  }
}

// maximum/minimum of complex values as XLA's CPU backend computes them: by the real parts
// alone, the first operand on a tie or when the comparison is true, else the second
// (max: re a >= re b ? a : b; a NaN real part compares false). The specification asks for the
// lexicographic order of (real, imag); XLA's differs from it only on equal real parts, where
// it keeps the first operand (docs/decisions.md, "Complex maximum and minimum").
struct MaxOp {
  template <typename C> static C Apply(C a, C b) { return a.real() >= b.real() ? a : b; }
};
struct MinOp {
  template <typename C> static C Apply(C a, C b) { return a.real() <= b.real() ? a : b; }
};

}  // namespace stablert::kernels::cx
