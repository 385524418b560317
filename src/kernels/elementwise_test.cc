// Cross-checks every unary and binary kernel against slow scalar references written
// from the semantics (XLA's CPU backend for integers, double-precision math for floats).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>

#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT
using Int128 = __int128;
using UInt128 = unsigned __int128;

const DType kAllTypes[] = {DType::kPred, DType::kS8,  DType::kS16, DType::kS32, DType::kS64,
                           DType::kU8,   DType::kU16, DType::kU32, DType::kU64, DType::kF16,
                           DType::kBF16, DType::kF32, DType::kF64};

bool IsSignedInt(DType d) { return DTypeKindOf(d) == DTypeKind::kSigned; }
bool IsUnsignedInt(DType d) { return DTypeKindOf(d) == DTypeKind::kUnsigned; }

// Two's-complement wrap of a wide integer to `dtype`, returned as GetInt would read it.
int64_t Wrap(UInt128 value, DType dtype) {
  int bits = DTypeBitWidth(dtype);
  uint64_t low = static_cast<uint64_t>(value);
  if (bits < 64) low &= (uint64_t{1} << bits) - 1;
  if (IsSignedInt(dtype) && bits < 64 && (low >> (bits - 1)) & 1) low |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(low);
}
// The mathematical value of an element read by GetInt.
Int128 Math(int64_t raw, DType dtype) {
  if (IsUnsignedInt(dtype) || dtype == DType::kPred) {
    uint64_t u = static_cast<uint64_t>(raw);
    return static_cast<Int128>(u);
  }
  return raw;
}
Int128 MinOf(DType d) { return IsSignedInt(d) ? -(Int128(1) << (DTypeBitWidth(d) - 1)) : 0; }

Array Inputs(DType dtype, int64_t count, uint32_t seed, int operand, int operands) {
  std::mt19937_64 rng(seed);
  Array a(dtype, {count});
  if (IsFloat(dtype)) {
    std::vector<double> specials = SpecialFloats(dtype);
    std::uniform_real_distribution<double> uniform(-10, 10);
    for (int64_t i = 0; i < count; ++i) {
      int64_t s = static_cast<int64_t>(specials.size());
      double v;
      if (operands == 2 && i < s * s) v = specials[static_cast<size_t>(operand == 0 ? i / s : i % s)];
      else if (operands == 1 && i < s) v = specials[static_cast<size_t>(i)];
      else v = uniform(rng);
      SetDouble(a, i, v);
    }
  } else if (dtype == DType::kPred) {
    for (int64_t i = 0; i < count; ++i) SetInt(a, i, operand == 0 ? (i & 1) : ((i >> 1) & 1));
  } else {
    std::vector<int64_t> specials = SpecialInts(dtype);
    int64_t s = static_cast<int64_t>(specials.size());
    for (int64_t i = 0; i < count; ++i) {
      int64_t v;
      if (operands == 2 && i < s * s) v = specials[static_cast<size_t>(operand == 0 ? i / s : i % s)];
      else if (operands == 1 && i < s) v = specials[static_cast<size_t>(i)];
      else v = static_cast<int64_t>(rng() >> (rng() % 64));
      SetInt(a, i, v);
    }
  }
  return a;
}

// Denormals count as signed zeros in maximum/minimum (flush-to-zero semantics).
double Flush(double x, DType dtype) {
  double smallest = dtype == DType::kF64 ? 2.2250738585072014e-308 : dtype == DType::kF16 ? 0.0 : 1.1754943508222875e-38;
  return std::fabs(x) < smallest ? std::copysign(0.0, x) : x;
}

//===--- Unary ---===//

struct UnaryCase {
  const char* name;
  std::function<bool(DType)> accepts;
  std::function<double(double)> float_ref;              // for float dtypes
  std::function<int64_t(Int128, DType)> int_ref;        // for integer and bool dtypes
  bool pred_result = false;
};

bool AnyFloat(DType d) { return IsFloat(d); }
bool AnyInt(DType d) { return IsInteger(d); }
bool Numeric(DType d) { return IsFloat(d) || IsInteger(d); }

std::vector<UnaryCase> UnaryCases() {
  auto f = [](const char* name, std::function<double(double)> ref) {
    return UnaryCase{name, AnyFloat, std::move(ref), nullptr};
  };
  return {
      {"negate", Numeric, [](double x) { return -x; }, [](Int128 x, DType d) { return Wrap(static_cast<UInt128>(-x), d); }},
      {"abs", Numeric, [](double x) { return std::fabs(x); },
       [](Int128 x, DType d) { return Wrap(static_cast<UInt128>(x < 0 ? -x : x), d); }},
      {"sign", Numeric, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; },
       [](Int128 x, DType d) { return Wrap(static_cast<UInt128>(x > 0 ? 1 : x < 0 ? -1 : 0), d); }},
      {"not", [](DType d) { return IsInteger(d) || d == DType::kPred; }, nullptr,
       [](Int128 x, DType d) { return d == DType::kPred ? int64_t(x == 0) : Wrap(~static_cast<UInt128>(x), d); }},
      {"popcnt", AnyInt, nullptr,
       [](Int128 x, DType d) {
         uint64_t bits = static_cast<uint64_t>(Wrap(static_cast<UInt128>(x), DType::kU64));
         int width = DTypeBitWidth(d);
         int count = 0;
         for (int i = 0; i < width; ++i) count += (bits >> i) & 1;
         return int64_t(count);
       }},
      {"count_leading_zeros", AnyInt, nullptr,
       [](Int128 x, DType d) {
         uint64_t bits = static_cast<uint64_t>(Wrap(static_cast<UInt128>(x), DType::kU64));
         int width = DTypeBitWidth(d);
         int count = 0;
         for (int i = width - 1; i >= 0 && !((bits >> i) & 1); --i) ++count;
         return int64_t(count);
       }},
      f("exponential", [](double x) { return std::exp(x); }),
      f("exponential_minus_one", [](double x) { return std::expm1(x); }),
      f("log", [](double x) { return std::log(x); }),
      f("log_plus_one", [](double x) { return std::log1p(x); }),
      f("sqrt", [](double x) { return std::sqrt(x); }),
      f("rsqrt", [](double x) { return 1 / std::sqrt(x); }),
      f("cbrt", [](double x) { return std::cbrt(x); }),
      f("tanh", [](double x) { return std::tanh(x); }),
      f("logistic", [](double x) { return 1 / (1 + std::exp(-x)); }),
      f("sine", [](double x) { return std::sin(x); }),
      f("cosine", [](double x) { return std::cos(x); }),
      f("tan", [](double x) { return std::tan(x); }),
      f("floor", [](double x) { return std::floor(x); }),
      f("ceil", [](double x) { return std::ceil(x); }),
      f("round_nearest_afz", [](double x) { return std::round(x); }),
      f("round_nearest_even", [](double x) {
        double r = std::floor(x);
        double diff = x - r;
        if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
        return r == 0 ? std::copysign(0.0, x) : r;
      }),
      {"is_finite", AnyFloat, [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }, nullptr, true},
  };
}

// Smallest normal magnitude: differences below it are ignored (flushing differences of
// intermediate results).
double AbsTolerance(DType d) {
  switch (d) {
    case DType::kF16: return 6.2e-5;
    case DType::kBF16: case DType::kF32: return 1.2e-38;
    default: return 2.3e-308;
  }
}

TEST(ElementwiseTest, UnaryKernelsMatchReference) {
  constexpr int64_t kCount = 300;
  for (const UnaryCase& c : UnaryCases()) {
    for (DType dtype : kAllTypes) {
      std::string key = Key(c.name, dtype);
      bool registered = CpuKernels().Find(key) != nullptr;
      if (!c.accepts(dtype)) continue;
      ASSERT_TRUE(registered) << key;
      Array x = Inputs(dtype, kCount, 1, 0, 1);
      Array y(c.pred_result ? DType::kPred : dtype, {kCount});
      RunKernel(key, {&x}, {&y});
      for (int64_t i = 0; i < kCount; ++i) {
        if (c.pred_result) {
          ASSERT_EQ(GetInt(y, i), static_cast<int64_t>(c.float_ref(GetDouble(x, i)))) << key << " at " << GetDouble(x, i);
        } else if (IsFloat(dtype)) {
          double xv = GetDouble(x, i);
          const std::string name = c.name;
          // Math functions see denormal inputs as signed zeros; sin/tan/tanh/expm1 return them.
          const bool bitwise = name == "negate" || name == "abs" || name == "log";
          const bool passthrough =
              (name == "tanh" || name == "exponential_minus_one" || name == "sine" || name == "tan") && Flush(xv, dtype) != xv;
          Array expected(dtype, {1});
          SetDouble(expected, 0, passthrough ? xv : c.float_ref(bitwise ? xv : Flush(xv, dtype)));
          double want = GetDouble(expected, 0), got = GetDouble(y, i);
          ASSERT_TRUE(FloatsMatch(got, want, Tolerance(dtype), AbsTolerance(dtype)))
              << key << "(" << xv << ") = " << got << ", want " << want;
        } else {
          int64_t xv = GetInt(x, i);
          ASSERT_EQ(GetInt(y, i), c.int_ref(Math(xv, dtype), dtype)) << key << "(" << xv << ")";
        }
      }
    }
  }
}

//===--- Binary ---===//

struct BinaryCase {
  const char* name;
  std::function<bool(DType)> accepts;
  std::function<double(double, double)> float_ref;
  std::function<int64_t(Int128, Int128, DType)> int_ref;
};

int64_t IntPower(Int128 base, Int128 exponent, DType d) {
  if (exponent < 0) {
    if (base == 1) return Wrap(1, d);
    if (base == -1) return Wrap(static_cast<UInt128>(exponent % 2 != 0 ? -1 : 1), d);
    return 0;
  }
  // Repeated squaring modulo 2^128 (enough, results are then wrapped to <= 64 bits).
  UInt128 result = 1, b = static_cast<UInt128>(base);
  auto e = static_cast<UInt128>(exponent);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return Wrap(result, d);
}

double FloatMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) && std::signbit(b) ? -0.0 : 0.0;
  return a > b ? a : b;
}
double FloatMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) || std::signbit(b) ? -0.0 : 0.0;
  return a < b ? a : b;
}

std::vector<BinaryCase> BinaryCases() {
  auto int_or_bool = [](DType d) { return IsInteger(d) || d == DType::kPred; };
  auto all = [](DType) { return true; };
  auto shift_amount = [](Int128 b, DType d) -> std::optional<int> {
    uint64_t amount = static_cast<uint64_t>(b) & (DTypeBitWidth(d) == 64 ? ~uint64_t{0} : (uint64_t{1} << DTypeBitWidth(d)) - 1);
    if (amount >= static_cast<uint64_t>(DTypeBitWidth(d))) return std::nullopt;
    return static_cast<int>(amount);
  };
  return {
      {"add", all, [](double a, double b) { return a + b; },
       [](Int128 a, Int128 b, DType d) { return d == DType::kPred ? int64_t(a || b) : Wrap(static_cast<UInt128>(a + b), d); }},
      {"subtract", Numeric, [](double a, double b) { return a - b; },
       [](Int128 a, Int128 b, DType d) { return Wrap(static_cast<UInt128>(a - b), d); }},
      {"multiply", all, [](double a, double b) { return a * b; },
       [](Int128 a, Int128 b, DType d) {
         return d == DType::kPred ? int64_t(a && b) : Wrap(static_cast<UInt128>(a) * static_cast<UInt128>(b), d);
       }},
      {"divide", Numeric, [](double a, double b) { return a / b; },
       [](Int128 a, Int128 b, DType d) {
         if (b == 0) return Wrap(static_cast<UInt128>(-1), d);
         if (a == MinOf(d) && b == -1 && IsSignedInt(d)) return Wrap(static_cast<UInt128>(a), d);
         return Wrap(static_cast<UInt128>(a / b), d);
       }},
      {"remainder", Numeric, [](double a, double b) { return std::fmod(a, b); },
       [](Int128 a, Int128 b, DType d) {
         if (b == 0) return Wrap(static_cast<UInt128>(a), d);
         return Wrap(static_cast<UInt128>(a % b), d);
       }},
      {"maximum", all, FloatMax, [](Int128 a, Int128 b, DType d) { return Wrap(static_cast<UInt128>(a > b ? a : b), d); }},
      {"minimum", all, FloatMin, [](Int128 a, Int128 b, DType d) { return Wrap(static_cast<UInt128>(a < b ? a : b), d); }},
      {"power", Numeric, [](double a, double b) { return std::pow(a, b); }, IntPower},
      {"atan2", AnyFloat, [](double a, double b) { return std::atan2(a, b); }, nullptr},
      {"and", int_or_bool, nullptr, [](Int128 a, Int128 b, DType d) { return Wrap(static_cast<UInt128>(a & b), d); }},
      {"or", int_or_bool, nullptr, [](Int128 a, Int128 b, DType d) { return Wrap(static_cast<UInt128>(a | b), d); }},
      {"xor", int_or_bool, nullptr, [](Int128 a, Int128 b, DType d) { return Wrap(static_cast<UInt128>(a ^ b), d); }},
      {"shift_left", AnyInt, nullptr,
       [=](Int128 a, Int128 b, DType d) {
         auto amount = shift_amount(b, d);
         return amount ? Wrap(static_cast<UInt128>(a) << *amount, d) : 0;
       }},
      {"shift_right_logical", AnyInt, nullptr,
       [=](Int128 a, Int128 b, DType d) {
         auto amount = shift_amount(b, d);
         uint64_t bits = static_cast<uint64_t>(Wrap(static_cast<UInt128>(a), d));
         int width = DTypeBitWidth(d);
         if (width < 64) bits &= (uint64_t{1} << width) - 1;
         return amount ? Wrap(bits >> *amount, d) : 0;
       }},
      {"shift_right_arithmetic", AnyInt, nullptr,
       [=](Int128 a, Int128 b, DType d) {
         auto amount = shift_amount(b, d);
         // Interpret the bits as signed, whatever the dtype's signedness.
         int width = DTypeBitWidth(d);
         uint64_t bits = static_cast<uint64_t>(Wrap(static_cast<UInt128>(a), d));
         if (width < 64) bits &= (uint64_t{1} << width) - 1;
         bool negative = (bits >> (width - 1)) & 1;
         if (!amount) return negative ? Wrap(static_cast<UInt128>(-1), d) : 0;
         Int128 value = negative ? static_cast<Int128>(bits) - (Int128(1) << width) : static_cast<Int128>(bits);
         Int128 shifted = value >= 0 ? value >> *amount : -((-value - 1) >> *amount) - 1;
         return Wrap(static_cast<UInt128>(shifted), d);
       }},
  };
}

TEST(ElementwiseTest, BinaryKernelsMatchReference) {
  constexpr int64_t kCount = 1500;
  for (const BinaryCase& c : BinaryCases()) {
    for (DType dtype : kAllTypes) {
      if (!c.accepts(dtype)) continue;
      std::string key = Key(c.name, dtype);
      if (dtype == DType::kPred && !c.int_ref) continue;
      ASSERT_NE(CpuKernels().Find(key), nullptr) << key;
      Array a = Inputs(dtype, kCount, 2, 0, 2);
      Array b = Inputs(dtype, kCount, 3, 1, 2);
      Array y(dtype, {kCount});
      RunKernel(key, {&a, &b}, {&y});
      for (int64_t i = 0; i < kCount; ++i) {
        if (IsFloat(dtype)) {
          double av = GetDouble(a, i), bv = GetDouble(b, i);
          const std::string name = c.name;
          const bool flushes = name == "maximum" || name == "minimum" || name == "remainder";
          Array expected(dtype, {1});
          SetDouble(expected, 0, flushes ? c.float_ref(Flush(av, dtype), Flush(bv, dtype)) : c.float_ref(av, bv));
          double want = GetDouble(expected, 0), got = GetDouble(y, i);
          ASSERT_TRUE(FloatsMatch(got, want, Tolerance(dtype), AbsTolerance(dtype)))
              << key << "(" << av << ", " << bv << ") = " << got << ", want " << want;
        } else {
          int64_t av = GetInt(a, i), bv = GetInt(b, i);
          ASSERT_EQ(GetInt(y, i), c.int_ref(Math(av, dtype), Math(bv, dtype), dtype))
              << key << "(" << av << ", " << bv << ")";
        }
      }
    }
  }
}

// Values checked against JAX's CPU backend (XLA) directly.
TEST(ElementwiseTest, IntegerEdgeCasesMatchXla) {
  Array a(DType::kS32, {6}), b(DType::kS32, {6}), q(DType::kS32, {6}), r(DType::kS32, {6});
  const int64_t as[] = {7, -7, INT32_MIN, INT32_MAX, 0, 5}, bs[] = {0, 0, -1, 0, 0, 3};
  for (int i = 0; i < 6; ++i) SetInt(a, i, as[i]), SetInt(b, i, bs[i]);
  RunKernel("divide.i32", {&a, &b}, {&q});
  RunKernel("remainder.i32", {&a, &b}, {&r});
  const int64_t want_q[] = {-1, -1, INT32_MIN, -1, -1, 1}, want_r[] = {7, -7, 0, INT32_MAX, 0, 2};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(GetInt(q, i), want_q[i]) << i;
    EXPECT_EQ(GetInt(r, i), want_r[i]) << i;
  }
  Array u(DType::kU8, {2}), z(DType::kU8, {2}), uq(DType::kU8, {2});
  SetInt(u, 0, 7), SetInt(u, 1, 200);
  RunKernel("divide.ui8", {&u, &z}, {&uq});
  EXPECT_EQ(GetInt(uq, 0), 255);
  EXPECT_EQ(GetInt(uq, 1), 255);
  // power on i8: (-1)^-4 = 1, (-1)^127 = -1, 0^0 = 1, 2^-128 = 0.
  Array pa(DType::kS8, {4}), pb(DType::kS8, {4}), pr(DType::kS8, {4});
  const int64_t bases[] = {-1, -1, 0, 2}, exps[] = {-4, 127, 0, -128}, want_p[] = {1, -1, 1, 0};
  for (int i = 0; i < 4; ++i) SetInt(pa, i, bases[i]), SetInt(pb, i, exps[i]);
  RunKernel("power.i8", {&pa, &pb}, {&pr});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(GetInt(pr, i), want_p[i]) << i;
  // shift_right_arithmetic on ui8 treats the bits as signed: 200 >> 1 = 228, 200 >> 9 = 255.
  Array sa(DType::kU8, {3}), sb(DType::kU8, {3}), sr(DType::kU8, {3});
  const int64_t sv[] = {200, 200, 100}, sh[] = {1, 9, 1}, want_s[] = {228, 255, 50};
  for (int i = 0; i < 3; ++i) SetInt(sa, i, sv[i]), SetInt(sb, i, sh[i]);
  RunKernel("shift_right_arithmetic.ui8", {&sa, &sb}, {&sr});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(GetInt(sr, i), want_s[i]) << i;
}

TEST(ElementwiseTest, FloatMaxMinPropagateNanAndOrderZeros) {
  Array a(DType::kF32, {4}), b(DType::kF32, {4}), mx(DType::kF32, {4}), mn(DType::kF32, {4});
  const double nan = std::nan("");
  const double as[] = {nan, 1.0, 0.0, -0.0}, bs[] = {1.0, nan, -0.0, 0.0};
  for (int i = 0; i < 4; ++i) SetDouble(a, i, as[i]), SetDouble(b, i, bs[i]);
  RunKernel("maximum.f32", {&a, &b}, {&mx});
  RunKernel("minimum.f32", {&a, &b}, {&mn});
  EXPECT_TRUE(std::isnan(GetDouble(mx, 0)) && std::isnan(GetDouble(mx, 1)));
  EXPECT_TRUE(std::isnan(GetDouble(mn, 0)) && std::isnan(GetDouble(mn, 1)));
  EXPECT_FALSE(std::signbit(GetDouble(mx, 2)));
  EXPECT_FALSE(std::signbit(GetDouble(mx, 3)));
  EXPECT_TRUE(std::signbit(GetDouble(mn, 2)));
  EXPECT_TRUE(std::signbit(GetDouble(mn, 3)));
}

TEST(ElementwiseTest, ZeroSizedArraysAreNoOps) {
  Array a(DType::kF32, {0, 3}), b(DType::kF32, {0, 3}), y(DType::kF32, {0, 3});
  RunKernel("add.f32", {&a, &b}, {&y});
  RunKernel("exponential.f32", {&a}, {&y});
  EXPECT_EQ(y.size(), 0);
}

}  // namespace
}  // namespace stablert::kernels
