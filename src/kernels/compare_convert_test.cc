// Cross-checks compare, select, clamp and convert against scalar references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

#include "kernels/compare_params.h"
#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT
using Int128 = __int128;

const DType kAllTypes[] = {DType::kPred, DType::kS8,  DType::kS16, DType::kS32, DType::kS64,
                           DType::kU8,   DType::kU16, DType::kU32, DType::kU64, DType::kF16,
                           DType::kBF16, DType::kF32, DType::kF64};

// Every value of `dtype` this test uses, in one array.
Array Specials(DType dtype) {
  if (IsFloat(dtype)) {
    std::vector<double> values = SpecialFloats(dtype);
    for (double v : {2147483648.0, -2147483649.0, 4294967296.0, 9.3e18, -9.3e18, 1.9e19, 255.9, 256.0, -128.5, 127.5})
      values.push_back(v);
    Array a(dtype, {static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); ++i) SetDouble(a, static_cast<int64_t>(i), values[i]);
    return a;
  }
  if (dtype == DType::kPred) {
    Array a(dtype, {2});
    SetInt(a, 1, 1);
    return a;
  }
  std::vector<int64_t> values = SpecialInts(dtype);
  for (int64_t v : {int64_t{16777217}, int64_t{(1LL << 40) + (1LL << 32) + 1}, int64_t{-16777217}}) values.push_back(v);
  Array a(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) SetInt(a, static_cast<int64_t>(i), values[i]);
  return a;
}

// All pairs (a[i], a[j]).
std::pair<Array, Array> Pairs(const Array& values) {
  int64_t n = values.size();
  Array a(values.dtype, {n * n}), b(values.dtype, {n * n});
  int size = DTypeByteSize(values.dtype);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(&a.bytes[static_cast<size_t>((i * n + j) * size)], &values.bytes[static_cast<size_t>(i * size)], size);
      std::memcpy(&b.bytes[static_cast<size_t>((i * n + j) * size)], &values.bytes[static_cast<size_t>(j * size)], size);
    }
  return {a, b};
}

Int128 MathInt(const Array& a, int64_t i) {
  int64_t raw = GetInt(a, i);
  if (DTypeKindOf(a.dtype) == DTypeKind::kUnsigned) return static_cast<Int128>(static_cast<uint64_t>(raw));
  return raw;
}

// Total order: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN.
std::tuple<int, double, int> TotalKey(double x) {
  if (std::isnan(x)) return {std::signbit(x) ? -2 : 2, 0.0, 0};
  return {0, x, std::signbit(x) ? 0 : 1};
}

template <typename K>
bool Holds(int64_t direction, const K& a, const K& b) {
  switch (direction) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a >= b;
    case 3: return a > b;
    case 4: return a <= b;
    default: return a < b;
  }
}

TEST(CompareTest, AllDirectionsAndTypes) {
  for (DType dtype : kAllTypes) {
    auto [a, b] = Pairs(Specials(dtype));
    std::vector<int64_t> types = IsFloat(dtype) ? std::vector<int64_t>{1, 2}
                                 : DTypeKindOf(dtype) == DTypeKind::kSigned ? std::vector<int64_t>{3}
                                                                            : std::vector<int64_t>{4};
    for (int64_t type : types) {
      for (int64_t direction = 0; direction < 6; ++direction) {
        Array out(DType::kPred, a.dims);
        RunKernel(Key("compare", dtype), {&a, &b}, {&out},
                  CompareParams{.direction = static_cast<CompareDirection>(direction),
                                .type = static_cast<CompareType>(type)});
        for (int64_t i = 0; i < a.size(); ++i) {
          bool want;
          if (!IsFloat(dtype)) want = Holds(direction, MathInt(a, i), MathInt(b, i));
          else if (type == 2) want = Holds(direction, TotalKey(GetDouble(a, i)), TotalKey(GetDouble(b, i)));
          else want = Holds(direction, GetDouble(a, i), GetDouble(b, i));
          ASSERT_EQ(GetInt(out, i), want ? 1 : 0) << DTypeName(dtype) << " direction " << direction << " type " << type
                                                  << " at " << i;
        }
      }
    }
  }
}

TEST(SelectTest, ScalarAndShapedPredicates) {
  for (DType dtype : kAllTypes) {
    Array values = Specials(dtype);
    const int64_t n = values.size();
    Array other(dtype, {n});
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(&other.bytes[static_cast<size_t>(i * DTypeByteSize(dtype))],
                  &values.bytes[static_cast<size_t>((n - 1 - i) * DTypeByteSize(dtype))], DTypeByteSize(dtype));
    Array pred(DType::kPred, {n}), out(dtype, {n});
    for (int64_t i = 0; i < n; ++i) SetInt(pred, i, i % 3 == 0);
    RunKernel(Key("select", dtype), {&pred, &values, &other}, {&out});
    const int size = DTypeByteSize(dtype);
    for (int64_t i = 0; i < n; ++i) {
      const Array& want = i % 3 == 0 ? values : other;
      ASSERT_EQ(0, std::memcmp(&out.bytes[static_cast<size_t>(i * size)], &want.bytes[static_cast<size_t>(i * size)], size));
    }
    for (int64_t flag : {0, 1}) {
      Array scalar(DType::kPred, {});
      SetInt(scalar, 0, flag);
      RunKernel(Key("select", dtype), {&scalar, &values, &other}, {&out});
      EXPECT_EQ(out.bytes, flag ? values.bytes : other.bytes);
    }
  }
}

// Denormals count as signed zeros in maximum/minimum (flush-to-zero semantics).
double Flush(double x, DType dtype) {
  double smallest = dtype == DType::kF64 ? 2.2250738585072014e-308 : dtype == DType::kF16 ? 0.0 : 1.1754943508222875e-38;
  return std::fabs(x) < smallest ? std::copysign(0.0, x) : x;
}

double RefMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == 0 && b == 0) return std::signbit(a) && std::signbit(b) ? -0.0 : 0.0;
  return a > b ? a : b;
}
double RefMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == 0 && b == 0) return std::signbit(a) || std::signbit(b) ? -0.0 : 0.0;
  return a < b ? a : b;
}

TEST(ClampTest, ScalarAndShapedBounds) {
  for (DType dtype : kAllTypes) {
    if (dtype == DType::kPred) continue;
    Array values = Specials(dtype);
    auto [x, lo] = Pairs(values);
    Array hi = Pairs(values).first;  // hi = x: exercises equal bounds
    std::mt19937 rng(5);
    std::vector<int64_t> order(static_cast<size_t>(x.size()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>((i * 7919) % order.size());
    Array shuffled_hi(dtype, x.dims);
    const int size = DTypeByteSize(dtype);
    for (int64_t i = 0; i < x.size(); ++i)
      std::memcpy(&shuffled_hi.bytes[static_cast<size_t>(i * size)], &hi.bytes[static_cast<size_t>(order[i] * size)], size);
    Array out(dtype, x.dims);
    RunKernel(Key("clamp", dtype), {&lo, &x, &shuffled_hi}, {&out});
    for (int64_t i = 0; i < x.size(); ++i) {
      if (IsFloat(dtype)) {
        double want = RefMin(RefMax(Flush(GetDouble(x, i), dtype), Flush(GetDouble(lo, i), dtype)),
                             Flush(GetDouble(shuffled_hi, i), dtype));
        ASSERT_TRUE(FloatsMatch(GetDouble(out, i), want, 0)) << DTypeName(dtype) << " at " << i;
      } else {
        Int128 v = std::min(std::max(MathInt(x, i), MathInt(lo, i)), MathInt(shuffled_hi, i));
        ASSERT_TRUE(MathInt(out, i) == v) << DTypeName(dtype) << " at " << i;
      }
    }
    // Scalar bounds.
    Array slo(dtype, {}), shi(dtype, {});
    if (IsFloat(dtype)) SetDouble(slo, 0, -1.0), SetDouble(shi, 0, 2.0);
    else SetInt(slo, 0, 1), SetInt(shi, 0, 5);
    Array out2(dtype, values.dims);
    RunKernel(Key("clamp", dtype), {&slo, &values, &shi}, {&out2});
    for (int64_t i = 0; i < values.size(); ++i) {
      if (IsFloat(dtype)) {
        double want = RefMin(RefMax(Flush(GetDouble(values, i), dtype), -1.0), 2.0);
        ASSERT_TRUE(FloatsMatch(GetDouble(out2, i), want, 0)) << DTypeName(dtype) << " at " << i;
      } else {
        Int128 v = std::min<Int128>(std::max<Int128>(MathInt(values, i), 1), 5);
        ASSERT_TRUE(MathInt(out2, i) == v) << DTypeName(dtype) << " at " << i;
      }
    }
  }
}

// The result of converting element i of `in` to `to`, written into `out` at i.
void ReferenceConvert(const Array& in, int64_t i, Array& out) {
  const DType to = out.dtype;
  const bool to_float = IsFloat(to);
  if (in.dtype == DType::kPred || IsInteger(in.dtype)) {
    Int128 v = MathInt(in, i);
    if (to == DType::kPred) return SetInt(out, i, v != 0);
    if (!to_float) return SetInt(out, i, static_cast<int64_t>(static_cast<uint64_t>(v)));
    // Integers to float round once to f32/f64 (exactly via long double), f16/bf16 via f32.
    long double exact = static_cast<long double>(v);
    if (to == DType::kF64) return SetDouble(out, i, static_cast<double>(exact));
    return SetDouble(out, i, static_cast<double>(static_cast<float>(exact)));
  }
  double v = GetDouble(in, i);
  if (to == DType::kPred) return SetInt(out, i, v != 0 || std::isnan(v));  // f16/bf16: on the bits, same here
  if (to_float) return SetDouble(out, i, v);
  int bits = DTypeBitWidth(to);
  bool is_signed = DTypeKindOf(to) == DTypeKind::kSigned;
  Int128 min = is_signed ? -(Int128(1) << (bits - 1)) : 0;
  Int128 max = is_signed ? (Int128(1) << (bits - 1)) - 1 : (Int128(1) << bits) - 1;
  Int128 result;
  if (std::isnan(v)) result = 0;
  else if (v <= static_cast<double>(min)) result = min;
  else if (v >= static_cast<double>(max) + 1.0) result = max;
  else result = static_cast<Int128>(std::trunc(v));
  SetInt(out, i, static_cast<int64_t>(static_cast<uint64_t>(result)));
}

TEST(ConvertTest, EveryPairMatchesReference) {
  for (DType from : kAllTypes) {
    Array in = Specials(from);
    for (DType to : kAllTypes) {
      Array got(to, in.dims), want(to, in.dims);
      RunKernel(KernelKey("convert", {from, to}), {&in}, {&got});
      for (int64_t i = 0; i < in.size(); ++i) ReferenceConvert(in, i, want);
      for (int64_t i = 0; i < in.size(); ++i) {
        if (IsFloat(to)) {
          ASSERT_TRUE(FloatsMatch(GetDouble(got, i), GetDouble(want, i), 0))
              << DTypeName(from) << "->" << DTypeName(to) << " at " << i << ": " << GetDouble(got, i) << " vs "
              << GetDouble(want, i);
        } else {
          ASSERT_EQ(GetInt(got, i), GetInt(want, i)) << DTypeName(from) << "->" << DTypeName(to) << " at " << i;
        }
      }
    }
  }
}

// Values measured on JAX's CPU backend.
TEST(ConvertTest, FloatToIntSaturatesLikeXla) {
  const double nan = std::nan(""), inf = INFINITY;
  const double in_values[] = {nan, inf, -inf, 3.7, -3.7, 1e20, -1e20, 255.9, 256.0, -1.0, 2147483648.0, -2147484672.0};
  Array in(DType::kF32, {12});
  for (int i = 0; i < 12; ++i) SetDouble(in, i, in_values[i]);
  Array s8(DType::kS8, {12}), u8(DType::kU8, {12}), s32(DType::kS32, {12}), u32(DType::kU32, {12});
  RunKernel("convert.f32.i8", {&in}, {&s8});
  RunKernel("convert.f32.ui8", {&in}, {&u8});
  RunKernel("convert.f32.i32", {&in}, {&s32});
  RunKernel("convert.f32.ui32", {&in}, {&u32});
  const int64_t want_s8[] = {0, 127, -128, 3, -3, 127, -128, 127, 127, -1, 127, -128};
  const int64_t want_u8[] = {0, 255, 0, 3, 0, 255, 0, 255, 255, 0, 255, 0};
  const int64_t want_s32[] = {0, INT32_MAX, INT32_MIN, 3, -3, INT32_MAX, INT32_MIN, 255, 256, -1, INT32_MAX, INT32_MIN};
  const int64_t want_u32[] = {0, UINT32_MAX, 0, 3, 0, UINT32_MAX, 0, 255, 256, 0, 2147483648LL, 0};
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(GetInt(s8, i), want_s8[i]) << i;
    EXPECT_EQ(GetInt(u8, i), want_u8[i]) << i;
    EXPECT_EQ(GetInt(s32, i), want_s32[i]) << i;
    EXPECT_EQ(GetInt(u32, i) & 0xffffffffLL, want_u32[i]) << i;
  }
}

// XLA narrows f64 and integers to bf16/f16 through f32 (double rounding), measured.
TEST(ConvertTest, NarrowingToHalfGoesThroughF32) {
  Array in(DType::kF64, {2});
  SetDouble(in, 0, 1 + std::ldexp(1, -8) + std::ldexp(1, -30));
  SetDouble(in, 1, 1 + std::ldexp(1, -11) + std::ldexp(1, -40));
  Array bf(DType::kBF16, {2}), h(DType::kF16, {2});
  RunKernel("convert.f64.bf16", {&in}, {&bf});
  RunKernel("convert.f64.f16", {&in}, {&h});
  uint16_t bits;
  std::memcpy(&bits, bf.bytes.data(), 2);
  EXPECT_EQ(bits, 16256);  // 1.0
  std::memcpy(&bits, h.bytes.data() + 2, 2);
  EXPECT_EQ(bits, 15360);  // 1.0
  Array big(DType::kS64, {1});
  SetInt(big, 0, (1LL << 40) + (1LL << 32) + 1);
  Array big_bf(DType::kBF16, {1});  // the output has the input's shape, as every kernel expects
  RunKernel("convert.i64.bf16", {&big}, {&big_bf});
  std::memcpy(&bits, big_bf.bytes.data(), 2);
  EXPECT_EQ(bits, 21376);
}

}  // namespace
}  // namespace stablert::kernels
