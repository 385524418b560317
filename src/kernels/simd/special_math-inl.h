// StableRT's own vector approximations of functions Highway's contrib math lacks (erf,
// erf^-1, lgamma, digamma, cbrt, tan, atan2, pow), per Highway target: included inside the
// per-target block of unary_simd.cc / binary_simd.cc (Highway's "-inl.h" convention: the
// guard toggles once per target).
//
// Each function takes f32 lanes and returns f32 lanes, and is accurate (docs/benchmarks.md,
// "Vector math") only on the normal, finite inputs of its domain; callers route everything
// else to the scalar op. Lanes that need the scalar op come back as NaN where noted.
//   - erf: f32 lanes, odd polynomial for |x| <= 1, 1 - erfc polynomial up to 4, ±1 beyond.
//   - the rest: computed in f64 lanes (InF64Lanes) and rounded once, so the f32 result is
//     within about 0.5 ulp plus the f64 approximation's error (below 1e-9 relative).
// Pure functions of their arguments; no state.
#if defined(STABLERT_KERNELS_SIMD_SPECIAL_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STABLERT_KERNELS_SIMD_SPECIAL_MATH_INL_H_
#undef STABLERT_KERNELS_SIMD_SPECIAL_MATH_INL_H_
#else
#define STABLERT_KERNELS_SIMD_SPECIAL_MATH_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <limits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/simd/special_math_coefficients.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace special {
namespace hn = hwy::HWY_NAMESPACE;
namespace k = ::stablert::kernels::coefficients;

// Whether f32 functions can be evaluated in f64 lanes on this target (not on the one-lane
// scalar target, where callers use the scalar op).
#if HWY_TARGET == HWY_SCALAR
inline constexpr bool kHasF64Lanes = false;
#else
inline constexpr bool kHasF64Lanes = true;
#endif

// Horner evaluation of sum c[i] t^i.
template <class D, class V, typename T, size_t N>
HWY_INLINE V Poly(D d, V t, const T (&c)[N]) {
  using L = hn::TFromD<D>;
  V r = hn::Set(d, static_cast<L>(c[N - 1]));
  for (size_t i = N - 1; i-- > 0;) r = hn::MulAdd(r, t, hn::Set(d, static_cast<L>(c[i])));
  return r;
}

// sin (kCos false) or cos of f64 lanes holding f32 values with |x| <= 39000, for rounding
// to f32: x - k pi/2 with pi/2 in two parts (the first product-difference is exact for these
// k and x, so r is within an f64 rounding of the true remainder), then the Taylor series of
// sin r to r^11 and cos r to r^12 on |r| <= pi/4 (truncation below 1e-11 relative), chosen
// and signed by k mod 4. The polynomials are evaluated in Estrin's scheme, which keeps the
// dependency chain short (one element in a scalar loop waits for all of it).
template <bool kCos, class D, class V>
HWY_INLINE V SinCosForF32(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, 0x1.8p52);  // adding it rounds to an integer held in the low bits
  const V shifted = hn::MulAdd(x, hn::Set(d, 0.63661977236758134308), magic);  // x 2/pi
  const V k = hn::Sub(shifted, magic);
  V r = hn::NegMulAdd(k, hn::Set(d, 0x1.921fb54442d18p0), x);  // pi/2, high part
  r = hn::NegMulAdd(k, hn::Set(d, 0x1.1a62633145c07p-54), r);    // pi/2, low part
  auto quadrant = hn::BitCast(di, shifted);                      // k mod 4 in its low bits
  if constexpr (kCos) quadrant = hn::Add(quadrant, hn::Set(di, 1));
  const V z = hn::Mul(r, r);
  const V z2 = hn::Mul(z, z);
  // sin r = r + r z (s1 + s2 z + z^2 (s3 + s4 z + s5 z^2))
  const V s_lo = hn::MulAdd(hn::Set(d, 1.0 / 120), z, hn::Set(d, -1.0 / 6));
  const V s_hi = hn::MulAdd(hn::Set(d, 1.0 / 362880), z, hn::Set(d, -1.0 / 5040));
  const V s_poly = hn::MulAdd(z2, hn::MulAdd(hn::Set(d, -1.0 / 39916800), z2, s_hi), s_lo);
  const V sin_r = hn::MulAdd(hn::Mul(r, z), s_poly, r);
  // cos r = 1 + z (c1 + c2 z + z^2 (c3 + c4 z + z^2 (c5 + c6 z)))
  const V c_lo = hn::MulAdd(hn::Set(d, 1.0 / 24), z, hn::Set(d, -0.5));
  const V c_mid = hn::MulAdd(hn::Set(d, 1.0 / 40320), z, hn::Set(d, -1.0 / 720));
  const V c_hi = hn::MulAdd(hn::Set(d, 1.0 / 479001600), z, hn::Set(d, -1.0 / 3628800));
  const V c_poly = hn::MulAdd(z2, hn::MulAdd(z2, c_hi, c_mid), c_lo);
  const V cos_r = hn::MulAdd(z, c_poly, hn::Set(d, 1.0));
  const auto odd = hn::RebindMask(d, hn::Ne(hn::And(quadrant, hn::Set(di, 1)), hn::Zero(di)));
  const auto negate = hn::RebindMask(d, hn::Ne(hn::And(quadrant, hn::Set(di, 2)), hn::Zero(di)));
  const V result = hn::IfThenElse(odd, cos_r, sin_r);
  return hn::IfThenElse(negate, hn::Neg(result), result);
}

// SinCosForF32 of one f32 value (|x| <= 39000), for code that computes one element at a
// time: the same operations on a one-lane vector (promoted to f64, rounded back once), so
// the bits are those the element gets in any lane of a full vector. Not on the one-lane
// scalar target (kHasF64Lanes).
template <bool kCos>
HWY_INLINE float SinCosForOneF32(float x) {
#if HWY_TARGET == HWY_SCALAR
  return x;
#else
  const hn::CappedTag<float, 1> d;
  const hn::Rebind<double, decltype(d)> dd;
  return hn::GetLane(hn::DemoteTo(d, SinCosForF32<kCos>(dd, hn::PromoteTo(dd, hn::Set(d, x)))));
#endif
}

// tanh of f64 lanes holding f32 values, for rounding to f32: x P(x^2) / Q(x^2) with x clamped
// to +-9.1 (coefficients.h; relative error 7.8e-9), so the f32 result is within 0.63 ulp.
// Measured alternatives (docs/benchmarks.md, "tanh"): Highway's f32 tanh (expm1 and a
// division) is 2.7 ulp and 13% slower; this rational in f32 lanes is twice as fast but 4.9 ulp,
// above XLA's 4.5; the quotient by a reciprocal estimate and Newton's step is slower than
// the division on AVX-512.
template <class D, class V>
HWY_INLINE V TanhForF32(D d, V x) {
  const V limit = hn::Set(d, k::kTanhLimit);
  const V clamped = hn::Min(hn::Max(x, hn::Neg(limit)), limit);
  const V t = hn::Mul(clamped, clamped);
  const V y = hn::Div(hn::Mul(clamped, Poly(d, t, k::kTanhNumerator)), Poly(d, t, k::kTanhDenominator));
  const V saturated = hn::CopySignToAbs(hn::Set(d, 1.0), x);
  return hn::IfThenElse(hn::Ge(hn::Abs(x), hn::Set(d, k::kTanhRoundsToOne)), saturated, y);
}

// Whether TanhF32 is used on this target: x86 with 16 f32 lanes (AVX-512), where a
// coefficient row of 16 entries is one permute (x86: TanhF32 relies on minps keeping NaN). With 8 lanes (several lookups
// and blends per coefficient) pieces measured slower than TanhForF32 (260 against 239 us per
// 262144 on AVX2).
template <class D>
inline constexpr bool kTanhByPieces = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 && hn::MaxLanes(D()) == 16;

// One coefficient row of kTanhPieces for each lane's interval (16-lane vectors: one vpermps,
// which reads the index's low 4 bits).
template <class D, class VI>
HWY_INLINE hn::Vec<D> TanhPiece(D d, const float (&row)[16], VI index) {
  return hn::TableLookupLanes(hn::LoadU(d, row), hn::IndicesFromVec(d, index));
}

// tanh of f32 lanes in f32 arithmetic (AVX-512, kTanhByPieces), for every input:
// a = min(|x|, kTanhRoundsToOne); adding 1.5 2^23 to a / w rounds it to the nearest integer i
// in the sum's low mantissa bits (no float-to-integer conversion, no clamp: i <= 15 for
// a <= 15.5 w); u = a - i w is exact but for one rounding (FMA). The interval's degree-7
// polynomial in u (kTanhPieces) by Horner, the sign copied back. From kTanhRoundsToOne on,
// a is that limit and the last polynomial gives exactly 1.0f there (checked by the fit tool
// and TanhF32IsExactlyOneWhereItRoundsToOne), so no select is needed.
// 1.30 ulp at most over every f32 (XLA: 4.5; 32 pieces of degree 6 reach 1.002 ulp but
// measured 11% slower: docs/decisions.md); zeros and denormals come back unchanged
// (decided on the bits, whatever the DAZ mode). NaN stays NaN: Min(limit, NaN) is its second
// operand on x86 (minps), so NaN flows through the polynomial. +-Inf gives +-1.
template <class D, class V>
HWY_INLINE V TanhF32(D d, V x) {
  static_assert(kTanhByPieces<D>, "TanhF32 needs AVX-512 (kTanhByPieces)");
  const hn::RebindToSigned<D> di;
  const V limit = hn::Set(d, k::kTanhRoundsToOne);
  const V a = hn::Min(limit, hn::Abs(x));  // NaN kept (second operand)
  const V magic = hn::Set(d, 0x1.8p23f);
  const V shifted = hn::MulAdd(a, hn::Set(d, 1.0f / k::kTanhPieceWidth), magic);
  const auto index = hn::And(hn::BitCast(di, shifted), hn::Set(di, k::kTanhPieceCount - 1));
  const V u = hn::NegMulAdd(hn::Sub(shifted, magic), hn::Set(d, k::kTanhPieceWidth), a);
  V y = TanhPiece(d, k::kTanhPieces[7], index);
  for (int c = 6; c >= 0; --c) y = hn::MulAdd(y, u, TanhPiece(d, k::kTanhPieces[c], index));
  const auto tiny = hn::RebindMask(d, hn::Lt(hn::BitCast(di, a), hn::Set(di, 0x00800000)));
  return hn::IfThenElse(tiny, x, hn::CopySignToAbs(y, x));
}

// f(dd, x) on f32 lanes evaluated in f64 lanes (both halves; a one-lane vector whole),
// rounded once to f32.
template <class D, class V, class Fn>
HWY_INLINE V InF64Lanes(D d, V x, Fn f) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  (void)f;
  return x;
#else
  if constexpr (hn::MaxLanes(D()) == 1) {
    const hn::Rebind<double, D> dd;
    return hn::DemoteTo(d, f(dd, hn::PromoteTo(dd, x)));
  } else {
    const hn::Half<D> dh;
    const hn::Repartition<double, D> dd;
    const auto lo = hn::DemoteTo(dh, f(dd, hn::PromoteTo(dd, hn::LowerHalf(dh, x))));
    const auto hi = hn::DemoteTo(dh, f(dd, hn::PromoteTo(dd, hn::UpperHalf(dh, x))));
    return hn::Combine(d, hi, lo);
  }
#endif
}
template <class D, class V, class Fn>
HWY_INLINE V InF64Lanes(D d, V a, V b, Fn f) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  (void)b;
  (void)f;
  return a;
#else
  const hn::Half<D> dh;
  const hn::Repartition<double, D> dd;
  const auto lo = hn::DemoteTo(
      dh, f(dd, hn::PromoteTo(dd, hn::LowerHalf(dh, a)), hn::PromoteTo(dd, hn::LowerHalf(dh, b))));
  const auto hi = hn::DemoteTo(
      dh, f(dd, hn::PromoteTo(dd, hn::UpperHalf(dh, a)), hn::PromoteTo(dd, hn::UpperHalf(dh, b))));
  return hn::Combine(d, hi, lo);
#endif
}

// erf on f32 lanes, finite x (zeros and denormals: callers decide): one rational for every
// |x| up to kErfLimit (special_math_coefficients.h), +-1 beyond, and 2x / sqrt(pi) below
// 2^-12 (there the next term, x^2 / 3 of it, is below f32 precision, and x / 4 of the
// rational's form would be denormal, i.e. flushed, for |x| < 2^-124).
template <class D, class V>
HWY_INLINE V Erf(D d, V x) {
  const V ax = hn::Abs(x);
  const V a = hn::Min(ax, hn::Set(d, k::kErfLimit));
  const V t = hn::Mul(a, a);
  const V ratio = hn::Div(Poly(d, t, k::kErfNumerator), Poly(d, t, k::kErfDenominator));
  V y = hn::MulAdd(a, ratio, hn::Mul(a, hn::Set(d, k::kErfShift)));
  y = hn::IfThenElse(hn::Ge(ax, hn::Set(d, k::kErfLimit)), hn::Set(d, 1.0f), y);
  y = hn::IfThenElse(hn::Lt(ax, hn::Set(d, 0x1p-12f)), hn::Mul(ax, hn::Set(d, k::kTwoOverSqrtPi)), y);
  return hn::CopySignToAbs(y, x);
}

// erf^-1 in f64 lanes for |x| < 1 (x an f32 value).
template <class D, class V>
HWY_INLINE V ErfInv(D d, V x) {
  const V one = hn::Set(d, 1.0);
  const V w = hn::Neg(hn::Log(d, hn::Mul(hn::Sub(one, x), hn::Add(one, x))));  // exact product
  const V central = hn::Mul(x, Poly(d, hn::Sub(w, hn::Set(d, 3.125)), k::kErfInvCentral));
  const auto in_central = hn::Lt(w, hn::Set(d, 6.25));
  if (hn::AllTrue(d, in_central)) return central;  // |x| <= 0.999 in every lane
  const V tail = Poly(d, hn::Sub(hn::Sqrt(w), hn::Set(d, 3.3)), k::kErfInvTail);
  return hn::IfThenElse(in_central, central, hn::CopySignToAbs(tail, x));
}

// x - round(x), in [-1/2, 1/2]: sin(pi x) and tan(pi x) up to sign from it, exactly reduced.
template <class D, class V>
HWY_INLINE V Frac(D d, V x) {
  (void)d;
  return hn::Sub(x, hn::Round(x));
}

// lgamma in f64 lanes for finite x that is not a pole (x > 0, or x < 0 not an integer).
template <class D, class V>
HWY_INLINE V Lgamma(D d, V x) {
  const V half = hn::Set(d, 0.5), one = hn::Set(d, 1.0), start = hn::Set(d, k::kSeriesStart);
  const auto reflect = hn::Lt(x, half);
  V z = hn::IfThenElse(reflect, hn::Sub(one, x), x);  // >= 1/2
  // lgamma(z) = lgamma(z + n) - log(z (z+1) ... (z+n-1)) with z + n >= 8.
  V product = one;
  for (int i = 0; i < 8; ++i) {
    const auto below = hn::Lt(z, start);
    product = hn::IfThenElse(below, hn::Mul(product, z), product);
    z = hn::IfThenElse(below, hn::Add(z, one), z);
  }
  const V iz = hn::Div(one, z);
  const V series = hn::Mul(iz, Poly(d, hn::Mul(iz, iz), k::kLgammaStirling));
  const V stirling = hn::Add(hn::MulSub(hn::Sub(z, half), hn::Log(d, z), z), hn::Set(d, k::kHalfLog2Pi));
  const V lg = hn::Sub(hn::Add(stirling, series), hn::Log(d, product));
  // lgamma(1) = lgamma(2) = 0 exactly (the series leaves ~1e-16 there).
  const auto zero = hn::Or(hn::Eq(x, one), hn::Eq(x, hn::Set(d, 2.0)));
  if (hn::AllFalse(d, reflect)) return hn::IfThenZeroElse(zero, lg);
  // x < 1/2: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x).
  const V s = hn::Abs(hn::Sin(d, hn::Mul(hn::Set(d, k::kPi), Frac(d, x))));
  const V reflected = hn::Sub(hn::Sub(hn::Set(d, k::kLogPi), hn::Log(d, s)), lg);
  return hn::IfThenZeroElse(zero, hn::IfThenElse(reflect, reflected, lg));
}

// digamma in f64 lanes for finite x that is not a pole (x > 0, or x < 0 not an integer).
template <class D, class V>
HWY_INLINE V Digamma(D d, V x) {
  const V half = hn::Set(d, 0.5), one = hn::Set(d, 1.0), start = hn::Set(d, k::kSeriesStart);
  const auto reflect = hn::Lt(x, half);
  V z = hn::IfThenElse(reflect, hn::Sub(one, x), x);  // >= 1/2
  // digamma(z) = digamma(z + n) - sum 1/(z+i), the sum kept as one fraction num/den.
  V num = hn::Zero(d), den = one;
  for (int i = 0; i < 8; ++i) {
    const auto below = hn::Lt(z, start);
    num = hn::IfThenElse(below, hn::MulAdd(num, z, den), num);
    den = hn::IfThenElse(below, hn::Mul(den, z), den);
    z = hn::IfThenElse(below, hn::Add(z, one), z);
  }
  const V iz = hn::Div(one, z);
  const V iz2 = hn::Mul(iz, iz);
  V psi = hn::Sub(hn::NegMulAdd(half, iz, hn::Log(d, z)), hn::Mul(iz2, Poly(d, iz2, k::kDigammaAsymptotic)));
  psi = hn::Sub(psi, hn::Div(num, den));
  if (hn::AllFalse(d, reflect)) return psi;
  // x < 1/2: digamma(x) = digamma(1 - x) - pi cos(pi x) / sin(pi x).
  const V t = hn::Mul(hn::Set(d, k::kPi), Frac(d, x));
  const V reflected = hn::Sub(psi, hn::Div(hn::Mul(hn::Set(d, k::kPi), hn::Cos(d, t)), hn::Sin(d, t)));
  return hn::IfThenElse(reflect, reflected, psi);
}

// cbrt in f64 lanes for finite nonzero x: a guess from the exponent bits (bits / 3 plus the
// bias correction), then three Halley steps (cubic convergence from a few percent).
template <class D, class V>
HWY_INLINE V Cbrt(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V a = hn::Abs(x);
  const auto third_bits = hn::ConvertTo(di, hn::Mul(hn::ConvertTo(d, hn::BitCast(di, a)), hn::Set(d, 1.0 / 3)));
  V y = hn::BitCast(d, hn::Add(third_bits, hn::Set(di, int64_t{682} << 52)));
  const V two = hn::Set(d, 2.0);
  for (int i = 0; i < 3; ++i) {
    const V y3 = hn::Mul(hn::Mul(y, y), y);
    y = hn::Mul(y, hn::Div(hn::MulAdd(two, a, y3), hn::MulAdd(two, y3, a)));
  }
  return hn::CopySignToAbs(y, x);
}

// tan in f64 lanes (|x| within Highway's sin/cos range).
template <class D, class V>
HWY_INLINE V Tan(D d, V x) {
  return hn::Div(hn::Sin(d, x), hn::Cos(d, x));
}

// atan2(y, x) in f64 lanes for finite nonzero y and x (f32 values: |y / x| stays finite).
template <class D, class V>
HWY_INLINE V Atan2(D d, V y, V x) {
  const V a = hn::Atan(d, hn::Div(hn::Abs(y), hn::Abs(x)));
  const V angle = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Sub(hn::Set(d, k::kPi), a), a);
  return hn::CopySignToAbs(angle, y);
}

// x^y in f64 lanes as exp(y log x) for x > 0 (f32 values); NaN where the f32 result would
// not be normal and finite (callers use the scalar op there). The f64 error of y log x is
// below 2e-14 absolute for those results, far below an f32 ulp.
template <class D, class V>
HWY_INLINE V Pow(D d, V x, V y) {
  const V z = hn::Mul(y, hn::Log(d, x));
  const auto normal = hn::And(hn::Ge(z, hn::Set(d, -87.3)), hn::Le(z, hn::Set(d, 88.7)));
  return hn::IfThenElse(normal, hn::Exp(d, z), hn::Set(d, std::numeric_limits<double>::quiet_NaN()));
}

}  // namespace special
}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // STABLERT_KERNELS_SIMD_SPECIAL_MATH_INL_H_
