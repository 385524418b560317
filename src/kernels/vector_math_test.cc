// The vector elementwise functions (kernels/simd/) at every instruction-set level this CPU
// has: accuracy in ulps against a higher-precision reference over the whole input range,
// and special values (NaN, ±Inf, ±0, denormals, overflow and underflow ranges) bit for bit
// equal to the scalar semantics of scalar_ops.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/binary_simd.h"
#include "kernels/simd/dispatch.h"
#include "kernels/simd/unary_simd.h"

namespace stablert::kernels {
namespace {

using simd::UnaryFn;

struct Function {
  const char* name;
  UnaryFn fn;
  long double (*reference)(long double);
  float (*scalar_f32)(float);
  double (*scalar_f64)(double);
  double max_ulp_f32, max_ulp_f64;  // bounds asserted below
  double lo, hi;                     // the typical range sampled densely
};

long double Logistic(long double x) { return 1.0L / (1.0L + expl(-x)); }
long double Rsqrt(long double x) { return 1.0L / sqrtl(x); }
long double Lgamma(long double x) {
  int sign;
  return lgammal_r(x, &sign);
}
// erf^-1 by Newton steps on erfl (erfcl near ±1) from the double-precision scalar op.
long double ErfInv(long double y) {
  if (!(fabsl(y) < 1)) return ops::ErfInvOp::Apply(static_cast<double>(y));
  long double x = ops::ErfInvOp::Apply(static_cast<double>(y));
  for (int i = 0; i < 3; ++i) {
    const long double residual = fabsl(y) < 0.5L ? erfl(x) - y : (y > 0 ? 1 : -1) * ((1 - fabsl(y)) - erfcl(fabsl(x)));
    x -= residual / (1.1283791670955125738961589031215452L * expl(-x * x));
  }
  return x;
}
// digamma: reflection below 1/2, the recurrence up to 30, then 7 terms of the asymptotic series.
long double Digamma(long double x) {
  if (x <= 0 && nearbyintl(x) == x) return std::numeric_limits<long double>::quiet_NaN();
  const long double pi = 3.1415926535897932384626433832795029L;
  long double reflection = 0;
  if (x < 0.5L) {
    reflection = -pi / tanl(pi * (x - nearbyintl(x)));
    x = 1 - x;
  }
  long double shift = 0;
  for (; x < 30; x += 1) shift -= 1 / x;
  const long double z2 = 1 / (x * x);
  const long double terms[] = {1.0L / 12, -1.0L / 120, 1.0L / 252, -1.0L / 240, 1.0L / 132, -691.0L / 32760, 1.0L / 12};
  long double series = 0;
  for (int i = 6; i >= 0; --i) series = series * z2 + terms[i];
  series *= z2;
  return logl(x) - 0.5L / x - series + shift + reflection;
}

template <typename Op>
float F32(float x) { return Op::Apply(x); }
template <typename Op>
double F64(double x) { return Op::Apply(x); }

const Function kFunctions[] = {
    {"exp", UnaryFn::kExp, expl, F32<ops::ExpOp>, F64<ops::ExpOp>, 1, 1, -100, 100},
    {"expm1", UnaryFn::kExpm1, expm1l, F32<ops::Expm1Op>, F64<ops::Expm1Op>, 4, 4, -10, 10},
    {"log", UnaryFn::kLog, logl, F32<ops::LogOp>, F64<ops::LogOp>, 1, 1, 0, 10},
    {"log1p", UnaryFn::kLog1p, log1pl, F32<ops::Log1pOp>, F64<ops::Log1pOp>, 2.5, 2.5, -1, 10},
    {"tanh", UnaryFn::kTanh, tanhl, F32<ops::TanhOp>, F64<ops::TanhOp>, 3, 3, -10, 10},
    {"logistic", UnaryFn::kLogistic, Logistic, F32<ops::LogisticOp>, F64<ops::LogisticOp>, 2.5, 2.5, -20, 20},
    {"sin", UnaryFn::kSin, sinl, F32<ops::SineOp>, F64<ops::SineOp>, 0.6, 3, -10, 10},
    {"cos", UnaryFn::kCos, cosl, F32<ops::CosineOp>, F64<ops::CosineOp>, 0.6, 3, -10, 10},
    {"sqrt", UnaryFn::kSqrt, sqrtl, F32<ops::SqrtOp>, F64<ops::SqrtOp>, 0.5, 0.5, 0, 10},
    {"rsqrt", UnaryFn::kRsqrt, Rsqrt, F32<ops::RsqrtOp>, F64<ops::RsqrtOp>, 1.5, 1.5, 0, 10},
    // Own f32 approximations (special_math-inl.h; f32 cbrt and tan: libm's 0.94 and 0.92 ulp
    // on the one-lane target and for |x| > 39000). Their f64 is the scalar op (-1: bound
    // not asserted, only the special values). erf: 2.4 ulp with FMA, 2.7-2.9 where the
    // multiply-adds round twice (SSE4, the one-lane target); XLA's is 5.1.
    {"cbrt", UnaryFn::kCbrt, cbrtl, F32<ops::CbrtOp>, F64<ops::CbrtOp>, 1, -1, -100, 100},
    {"tan", UnaryFn::kTan, tanl, F32<ops::TanOp>, F64<ops::TanOp>, 1, -1, -10, 10},
    {"erf", UnaryFn::kErf, erfl, F32<ops::ErfOp>, F64<ops::ErfOp>, 3, -1, -5, 5},
    {"erf_inv", UnaryFn::kErfInv, ErfInv, F32<ops::ErfInvOp>, F64<ops::ErfInvOp>, 0.51, -1, -1, 1},
    {"lgamma", UnaryFn::kLgamma, Lgamma, F32<ops::LgammaOp>, F64<ops::LgammaOp>, 0.51, -1, -10, 20},
    {"digamma", UnaryFn::kDigamma, Digamma, F32<ops::DigammaOp>, F64<ops::DigammaOp>, 0.51, -1, -10, 20},
};

const env::Isa kLevels[] = {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest};

// Restores the best level after each test.
class VectorMathTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// The error of `result` against `reference` in units of T's spacing at the reference.
template <typename T>
double UlpError(T result, long double reference) {
  const T rounded = static_cast<T>(reference);
  int exponent = std::ilogb(rounded == 0 ? std::numeric_limits<T>::min() : rounded);
  exponent = std::max(exponent, std::numeric_limits<T>::min_exponent - 1);
  const long double ulp = std::ldexp(1.0L, exponent - std::numeric_limits<T>::digits + 1);
  return static_cast<double>(std::fabs(static_cast<long double>(result) - reference) / ulp);
}

template <typename T>
bool SameValue(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Inputs: random bit patterns (the whole range, both signs), a dense sample of [lo, hi], and
// the special values.
template <typename T>
std::vector<T> Inputs(const Function& f) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::mt19937_64 random(42);
  std::vector<T> xs;
  for (int i = 0; i < 200000; ++i) {
    Bits bits = static_cast<Bits>(random());
    T x;
    std::memcpy(&x, &bits, sizeof x);
    xs.push_back(x);
  }
  std::uniform_real_distribution<double> typical(f.lo, f.hi);
  for (int i = 0; i < 200000; ++i) xs.push_back(static_cast<T>(typical(random)));
  using L = std::numeric_limits<T>;
  for (T x : {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), T(-0.0), L::denorm_min(),
              -L::denorm_min(), L::min(), -L::min(), L::max(), L::lowest(), T(1), T(-1), T(88.7), T(89), T(-87.5),
              T(-104), T(104), T(710), T(-745), T(39000), T(-39001), T(1e10), T(1e30), T(-1e30), T(20), T(-20),
              T(20.5), std::nextafter(T(-1), T(0)), T(1e-30), T(-1e-30), T(3e-8), T(-3e-8)})
    xs.push_back(x);
  return xs;
}

template <typename T>
void CheckUnary(const Function& f, const std::string& level) {
  const std::vector<T> xs = Inputs<T>(f);
  std::vector<T> out(xs.size());
  simd::Unary(f.fn, xs.data(), out.data(), xs.size());
  double max_ulp = 0, max_ulp_scalar = 0;
  T worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const T x = xs[i];
    const T scalar = sizeof(T) == 4 ? T(f.scalar_f32(static_cast<float>(x))) : T(f.scalar_f64(static_cast<double>(x)));
    const long double reference = f.reference(static_cast<long double>(x));
    const bool measurable = std::isfinite(reference) && std::isfinite(x) &&
                            std::fabs(reference) >= std::numeric_limits<T>::min() &&
                            std::fabs(reference) <= std::numeric_limits<T>::max() &&
                            std::fabs(x) >= std::numeric_limits<T>::min();
    if (!measurable) {
      // Special values and flushed ranges: exactly the scalar semantics.
      EXPECT_TRUE(SameValue(out[i], scalar)) << f.name << " at " << level << ": x=" << x << " vector " << out[i]
                                             << " scalar " << scalar;
      continue;
    }
    const double ulp = UlpError(out[i], reference);
    if (ulp > max_ulp) max_ulp = ulp, worst = x;
    max_ulp_scalar = std::max(max_ulp_scalar, UlpError(scalar, reference));
  }
  const double bound = sizeof(T) == 4 ? f.max_ulp_f32 : f.max_ulp_f64;
  if (bound >= 0) {
    EXPECT_LE(max_ulp, bound) << f.name << (sizeof(T) == 4 ? ".f32" : ".f64") << " at " << level << " worst x=" << worst;
  }
  std::printf("%-8s %s %-6s vector %.2f ulp (x=%.9g), libm %.2f ulp\n", f.name, sizeof(T) == 4 ? "f32" : "f64",
              level.c_str(), max_ulp, static_cast<double>(worst), max_ulp_scalar);
  // Lengths that are not a multiple of the vector, and in place.
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, size_t{17}, size_t{33}}) {
    std::vector<T> a(xs.end() - 40, xs.end() - 40 + n), b = a;
    simd::Unary(f.fn, a.data(), a.data(), n);
    simd::Unary(f.fn, b.data(), b.data(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(SameValue(a[i], b[i]));
  }
}

TEST_F(VectorMathTest, UnaryAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    for (const Function& f : kFunctions) {
      CheckUnary<float>(f, target);
      CheckUnary<double>(f, target);
    }
  }
}

TEST_F(VectorMathTest, LevelsSelectTheirTarget) {
  if (simd::CpuHas(env::Isa::kSse4)) {
    ASSERT_TRUE(simd::SetIsa(env::Isa::kSse4).ok());
    EXPECT_EQ(simd::CurrentTarget(), "SSE4");
  }
  if (simd::CpuHas(env::Isa::kAvx2)) {
    ASSERT_TRUE(simd::SetIsa(env::Isa::kAvx2).ok());
    EXPECT_EQ(simd::CurrentTarget(), "AVX2");
  }
  if (simd::CpuHas(env::Isa::kAvx512)) {
    ASSERT_TRUE(simd::SetIsa(env::Isa::kAvx512).ok());
    EXPECT_EQ(simd::CurrentTarget(), "AVX3");
  } else {
    Status status = simd::SetIsa(env::Isa::kAvx512);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("STABLERT_ISA='avx512': this CPU does not support avx512"), std::string::npos)
        << status.message();
  }
}

template <typename T, typename Op>
void CheckBinary(simd::BinaryFn fn, const char* name, const std::string& level) {
  using L = std::numeric_limits<T>;
  std::vector<T> specials = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), T(-0.0),
                             L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), L::lowest(),
                             T(1), T(-1), T(0.5), T(3)};
  std::vector<T> a, b;
  for (T x : specials)
    for (T y : specials) a.push_back(x), b.push_back(y);
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal(0, 100);
  for (int i = 0; i < 1001; ++i) a.push_back(T(normal(random))), b.push_back(T(normal(random)));
  std::vector<T> out(a.size());
  simd::Binary(fn, a.data(), b.data(), out.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(SameValue(out[i], Op::Apply(a[i], b[i])))
        << name << " at " << level << ": " << a[i] << ", " << b[i] << " -> " << out[i];
  simd::Binary(fn, a.data(), b.data(), a.data(), a.size());  // in place
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameValue(a[i], out[i]));
}

// power and atan2 on f32 (own approximations): every result either equals the scalar op's
// bit for bit (special values, the lanes handed to the scalar op) or is finite, normal and
// within `bound` ulps of the long double reference.
template <typename Op>
void CheckBinaryApprox(simd::BinaryFn fn, const char* name, long double (*reference)(long double, long double),
                       double bound, double lo_a, double hi_a, double lo_b, double hi_b, const std::string& level) {
  using L = std::numeric_limits<float>;
  std::vector<float> specials = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), 0.0f, -0.0f,
                                 L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), L::lowest(),
                                 1.0f, -1.0f, 0.5f, 3.0f, -3.0f, 2.5f, 1e-30f, 1e30f, 88.0f, -150.0f};
  std::vector<float> a, b;
  for (float x : specials)
    for (float y : specials) a.push_back(x), b.push_back(y);
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> ua(lo_a, hi_a), ub(lo_b, hi_b);
  for (int i = 0; i < 100001; ++i) a.push_back(float(ua(random))), b.push_back(float(ub(random)));
  for (int i = 0; i < 100000; ++i) {
    const uint32_t x = static_cast<uint32_t>(random()), y = static_cast<uint32_t>(random());
    a.push_back(std::bit_cast<float>(x)), b.push_back(std::bit_cast<float>(y));
  }
  std::vector<float> out(a.size());
  simd::Binary(fn, a.data(), b.data(), out.data(), a.size());
  double max_ulp = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float scalar = Op::Apply(a[i], b[i]);
    if (SameValue(out[i], scalar)) continue;
    const long double r = reference(a[i], b[i]);
    const bool measurable = std::isfinite(r) && fabsl(r) >= L::min() && fabsl(r) <= L::max();
    ASSERT_TRUE(measurable) << name << " at " << level << ": " << a[i] << ", " << b[i] << " -> " << out[i]
                            << " scalar " << scalar;
    max_ulp = std::max(max_ulp, UlpError(out[i], r));
  }
  EXPECT_LE(max_ulp, bound) << name << " at " << level;
  std::printf("%-8s f32 %-6s vector %.2f ulp\n", name, level.c_str(), max_ulp);
  simd::Binary(fn, a.data(), b.data(), a.data(), a.size());  // in place
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameValue(a[i], out[i]));
  for (size_t n : {size_t{1}, size_t{3}, size_t{7}, size_t{17}, size_t{33}}) {  // tails
    std::vector<float> tail(n);
    simd::Binary(fn, a.data() + 5, b.data() + 5, tail.data(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(SameValue(tail[i], out[i + 5]));
  }
}

long double Powl(long double a, long double b) { return powl(a, b); }
long double Atan2l(long double y, long double x) { return atan2l(y, x); }

TEST_F(VectorMathTest, PowerAndAtan2AtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    CheckBinaryApprox<ops::PowerOp>(simd::BinaryFn::kPow, "power", Powl, 0.51, 0, 10, -30, 30, target);
    CheckBinaryApprox<ops::Atan2Op>(simd::BinaryFn::kAtan2, "atan2", Atan2l, 0.51, -10, 10, -10, 10, target);
    // f64: the scalar op.
    CheckBinary<double, ops::PowerOp>(simd::BinaryFn::kPow, "power", target);
    CheckBinary<double, ops::Atan2Op>(simd::BinaryFn::kAtan2, "atan2", target);
  }
}

TEST_F(VectorMathTest, BinaryAtEveryLevelMatchesScalarSemantics) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    CheckBinary<float, ops::AddOp>(simd::BinaryFn::kAdd, "add", target);
    CheckBinary<float, ops::SubtractOp>(simd::BinaryFn::kSub, "subtract", target);
    CheckBinary<float, ops::MultiplyOp>(simd::BinaryFn::kMul, "multiply", target);
    CheckBinary<float, ops::DivideOp>(simd::BinaryFn::kDiv, "divide", target);
    CheckBinary<float, ops::MaxOp>(simd::BinaryFn::kMax, "maximum", target);
    CheckBinary<float, ops::MinOp>(simd::BinaryFn::kMin, "minimum", target);
    CheckBinary<double, ops::AddOp>(simd::BinaryFn::kAdd, "add", target);
    CheckBinary<double, ops::DivideOp>(simd::BinaryFn::kDiv, "divide", target);
    CheckBinary<double, ops::MaxOp>(simd::BinaryFn::kMax, "maximum", target);
    CheckBinary<double, ops::MinOp>(simd::BinaryFn::kMin, "minimum", target);
  }
}

// A CPU below every vector target (x86-64 without SSSE3) runs Highway's one-lane target.
// f32 tanh on the vector targets (by pieces on AVX-512, the f64-lane rational below it):
// every 97th f32 below 9.25 (11M values), both signs, within 1.3 ulp (every f32 measured: 1.30 at most on
// AVX-512, 0.69 on the others; XLA 4.5). Highway's tanh on the one-lane target is 2.3.
TEST_F(VectorMathTest, TanhF32WithinOnePointThreeUlp) {
  std::vector<float> xs;
  for (uint32_t bits = 0; bits < 0x41140000u; bits += 97) {  // 9.25
    const float x = std::bit_cast<float>(bits);
    xs.push_back(bits % 2 ? -x : x);
  }
  std::vector<float> out(xs.size());
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    simd::Unary(UnaryFn::kTanh, xs.data(), out.data(), xs.size());
    double max_ulp = 0;
    float worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (std::fabs(xs[i]) < std::numeric_limits<float>::min()) {
        EXPECT_TRUE(SameValue(out[i], xs[i])) << "tanh keeps zeros and denormals: " << xs[i];
        continue;
      }
      const double ulp = UlpError(out[i], tanhl(static_cast<long double>(xs[i])));
      if (ulp > max_ulp) max_ulp = ulp, worst = xs[i];
    }
    EXPECT_LE(max_ulp, 1.3) << "tanh.f32 at " << simd::CurrentTarget() << " worst x=" << worst;
    // One element at a time (as scalar loops call it) gives the same bits as in a vector.
    for (size_t i = 0; i < xs.size(); i += 1009) {
      float one = 0;
      simd::Unary(UnaryFn::kTanh, &xs[i], &one, 1);
      EXPECT_TRUE(SameValue(one, out[i])) << "tanh.f32 of one element at " << simd::CurrentTarget() << ": x=" << xs[i];
    }
    std::printf("tanh f32 %-6s %.3f ulp (x=%.9g), %zu inputs\n", simd::CurrentTarget().c_str(), max_ulp,
                static_cast<double>(worst), xs.size());
  }
}

// Where the correctly rounded f32 tanh is +-1 (from ln(2^26 - 1) / 2 = 9.0109133 on), every
// target gives exactly +-1, not the float below it: programs test saturation with ==.
TEST_F(VectorMathTest, TanhF32IsExactlyOneWhereItRoundsToOne) {
  const float first = 9.010913848876953f;
  std::vector<float> xs = {first, 9.5f, 10.0f, 20.0f, 88.0f, 1e30f, std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::infinity()};
  for (uint32_t bits = std::bit_cast<uint32_t>(first); bits < std::bit_cast<uint32_t>(12.0f); bits += 13)
    xs.push_back(std::bit_cast<float>(bits));
  const size_t positive = xs.size();
  for (size_t i = 0; i < positive; ++i) xs.push_back(-xs[i]);
  std::vector<float> out(xs.size());
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    simd::Unary(UnaryFn::kTanh, xs.data(), out.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      ASSERT_EQ(out[i], xs[i] > 0 ? 1.0f : -1.0f) << "tanh.f32 at " << simd::CurrentTarget() << ": x=" << xs[i];
    }
  }
}

// NaN, +-Inf, zeros and denormals in every lane position and in tails of every length (the
// AVX-512 form computes them in the vector code, with no scalar fallback), in place too.
TEST_F(VectorMathTest, TanhF32SpecialValuesInEveryLaneAndTail) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float denormal = std::numeric_limits<float>::denorm_min() * 7;
  const std::vector<float> specials = {nan, -nan, inf, -inf, 0.0f, -0.0f, denormal, -denormal,
                                       std::numeric_limits<float>::min(), -1e-30f, 0.29f, -4.5f};
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    float tanh_075 = 0.75f;
    simd::Unary(UnaryFn::kTanh, &tanh_075, &tanh_075, 1);
    EXPECT_LE(UlpError(tanh_075, tanhl(0.75L)), 1.3);
    for (size_t n = 1; n <= 40; ++n) {
      for (size_t s = 0; s < specials.size(); ++s) {
        std::vector<float> xs(n, 0.75f), out(n, 123.0f);
        const size_t at = (s * 7) % n;
        xs[at] = specials[s];
        simd::Unary(UnaryFn::kTanh, xs.data(), out.data(), n);
        const float x = specials[s];
        const std::string where = simd::CurrentTarget() + " n=" + std::to_string(n) + " x=" + std::to_string(x);
        if (std::isnan(x)) {
          EXPECT_TRUE(std::isnan(out[at])) << where;
        } else if (std::isinf(x)) {
          EXPECT_EQ(out[at], x > 0 ? 1.0f : -1.0f) << where;
        } else if (std::fabs(x) < std::numeric_limits<float>::min()) {
          EXPECT_TRUE(SameValue(out[at], x)) << where;
        } else {
          EXPECT_LE(UlpError(out[at], tanhl(static_cast<long double>(x))), 1.3) << where;
        }
        for (size_t j = 0; j < n; ++j) {
          if (j == at) continue;
          EXPECT_TRUE(SameValue(out[j], tanh_075)) << where << " lane " << j;
        }
        std::vector<float> in_place = xs;
        simd::Unary(UnaryFn::kTanh, in_place.data(), in_place.data(), n);
        for (size_t j = 0; j < n; ++j) EXPECT_TRUE(SameValue(in_place[j], out[j])) << where << " in place";
      }
    }
  }
}

TEST_F(VectorMathTest, UnaryOnTheScalarTarget) {
  ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok());  // reads the CPU's own targets first
  hwy::SetSupportedTargetsForTest(HWY_SCALAR);
  ASSERT_EQ(simd::CurrentTarget(), "SCALAR");
  for (const Function& f : kFunctions) {
    CheckUnary<float>(f, "SCALAR");
    CheckUnary<double>(f, "SCALAR");
  }
  CheckBinary<float, ops::MaxOp>(simd::BinaryFn::kMax, "maximum", "SCALAR");
  CheckBinary<double, ops::MinOp>(simd::BinaryFn::kMin, "minimum", "SCALAR");
  CheckBinary<float, ops::PowerOp>(simd::BinaryFn::kPow, "power", "SCALAR");
  CheckBinary<float, ops::Atan2Op>(simd::BinaryFn::kAtan2, "atan2", "SCALAR");
}

}  // namespace
}  // namespace stablert::kernels
