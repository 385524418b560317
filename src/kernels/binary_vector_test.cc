// The integer, half-precision and clamp vector loops (simd/binary_simd.h,
// simd/compare_select_simd.h) at every instruction-set level this CPU has, bit for bit
// against the scalar semantics of scalar_ops.h / half.h, in the floating-point mode the
// test runs in (denormals not flushed; the JAX tests cover the executor's flushing mode).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/half.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/binary_simd.h"
#include "kernels/simd/compare_select_simd.h"
#include "kernels/simd/dispatch.h"

namespace stablert::kernels {
namespace {

const env::Isa kLevels[] = {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest};

class BinaryVectorTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

template <typename T, class Op>
void CheckInt(simd::IntBinaryFn fn, const char* name, const std::vector<T>& a, const std::vector<T>& b,
              const std::string& target) {
  std::vector<T> out(a.size());
  simd::IntBinary(fn, a.data(), b.data(), out.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const T expected = static_cast<T>(Op::Apply(a[i], b[i]));
    ASSERT_EQ(out[i], expected) << name << " on " << sizeof(T) * 8 << "-bit " << (std::is_signed_v<T> ? "s" : "u")
                                << " at " << target << ": " << +a[i] << ", " << +b[i];
  }
}

template <typename T>
void CheckIntType(const std::string& target) {
  constexpr int kBits = sizeof(T) * 8;
  std::mt19937_64 random(7);
  const size_t n = 4099;  // no multiple of a vector
  std::vector<T> a(n), b(n), amounts(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(random());
    b[i] = static_cast<T>(random());
    // 0 .. width + 3, then -1 .. -5 as T's bits.
    const int64_t k = static_cast<int64_t>(i % (kBits + 9));
    amounts[i] = static_cast<T>(k <= kBits + 3 ? k : kBits + 3 - k);
  }
  a[0] = std::numeric_limits<T>::min(), a[1] = std::numeric_limits<T>::max();
  using F = simd::IntBinaryFn;
  CheckInt<T, ops::ShiftLeftOp>(F::kShiftLeft, "shift_left", a, amounts, target);
  CheckInt<T, ops::ShiftRightLogicalOp>(F::kShiftRightLogical, "shift_right_logical", a, amounts, target);
  CheckInt<T, ops::ShiftRightArithmeticOp>(F::kShiftRightArithmetic, "shift_right_arithmetic", a, amounts, target);
  CheckInt<T, ops::AddOp>(F::kAdd, "add", a, b, target);
  CheckInt<T, ops::SubtractOp>(F::kSub, "subtract", a, b, target);
  CheckInt<T, ops::AndOp>(F::kAnd, "and", a, b, target);
  CheckInt<T, ops::OrOp>(F::kOr, "or", a, b, target);
  CheckInt<T, ops::XorOp>(F::kXor, "xor", a, b, target);
  CheckInt<T, ops::MaxOp>(F::kMax, "maximum", a, b, target);
  CheckInt<T, ops::MinOp>(F::kMin, "minimum", a, b, target);
}

TEST_F(BinaryVectorTest, IntegerOpsAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    CheckIntType<int8_t>(target);
    CheckIntType<int16_t>(target);
    CheckIntType<int32_t>(target);
    CheckIntType<int64_t>(target);
    CheckIntType<uint8_t>(target);
    CheckIntType<uint16_t>(target);
    CheckIntType<uint32_t>(target);
    CheckIntType<uint64_t>(target);
  }
}

bool SameFloat(float x, float y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return std::memcmp(&x, &y, sizeof(float)) == 0;
}

template <bool kBF16, class Op>
void CheckHalf(simd::BinaryFn fn, const char* name, const std::string& target) {
  // Every bit pattern against a shuffled copy, so every class meets every other.
  std::vector<uint16_t> a(65536 + 7), b(a.size()), out(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(i);
  b = a;
  std::shuffle(b.begin(), b.end(), std::mt19937_64(3));
  if constexpr (kBF16) simd::BinaryBF16(fn, a.data(), b.data(), out.data(), a.size());
  else simd::BinaryF16(fn, a.data(), b.data(), out.data(), a.size());
  auto widen = [](uint16_t h) { return kBF16 ? BF16ToFloat(BF16{h}) : F16ToFloat(F16{h}); };
  auto narrow = [](float x) { return kBF16 ? FloatToBF16(x).bits : FloatToF16(x).bits; };
  for (size_t i = 0; i < a.size(); ++i) {
    const uint16_t expected = narrow(Op::Apply(widen(a[i]), widen(b[i])));
    // Bits exactly; of two NaN operands either payload may come out (the compiler may
    // commute the vector operation), as with the f32 kernels.
    if (std::isnan(widen(expected)) && std::isnan(widen(a[i])) && std::isnan(widen(b[i]))) {
      ASSERT_TRUE(std::isnan(widen(out[i]))) << name << " at " << target;
      continue;
    }
    ASSERT_EQ(out[i], expected) << name << (kBF16 ? " bf16" : " f16") << " at " << target << ": 0x" << std::hex
                                << a[i] << ", 0x" << b[i];
  }
}

TEST_F(BinaryVectorTest, HalfPrecisionOpsAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    using F = simd::BinaryFn;
    CheckHalf<true, ops::AddOp>(F::kAdd, "add", target);
    CheckHalf<true, ops::SubtractOp>(F::kSub, "subtract", target);
    CheckHalf<true, ops::MultiplyOp>(F::kMul, "multiply", target);
    CheckHalf<true, ops::DivideOp>(F::kDiv, "divide", target);
    CheckHalf<true, ops::MaxOp>(F::kMax, "maximum", target);
    CheckHalf<true, ops::MinOp>(F::kMin, "minimum", target);
    CheckHalf<false, ops::AddOp>(F::kAdd, "add", target);
    CheckHalf<false, ops::MultiplyOp>(F::kMul, "multiply", target);
    CheckHalf<false, ops::MaxOp>(F::kMax, "maximum", target);
    CheckHalf<false, ops::MinOp>(F::kMin, "minimum", target);
  }
}

TEST_F(BinaryVectorTest, ClampWithScalarBoundsAtEveryLevel) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float denormal = std::numeric_limits<float>::denorm_min() * 5;
  const float specials[] = {0.0f, -0.0f, nan, -nan, inf, -inf, denormal, -denormal, 0.5f, -0.5f, 1e-38f, 3.0f};
  std::vector<float> x(1031);
  std::mt19937 random(5);
  std::normal_distribution<float> normal;
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? specials[i / 3 % std::size(specials)] : normal(random);
  // Normal bounds, zero and denormal bounds, NaN bounds, reversed bounds.
  const float bounds[][2] = {{-0.5f, 0.5f}, {0.0f, 1.0f}, {-0.0f, 0.0f}, {denormal, 2.0f},
                             {nan, 0.5f},   {-0.5f, nan}, {1.0f, -1.0f}, {-inf, inf}};
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    for (const auto& bound : bounds) {
      std::vector<float> out(x.size());
      simd::Clamp(&bound[0], 0, x.data(), &bound[1], 0, out.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_TRUE(SameFloat(out[i], ops::ClampOne(bound[0], x[i], bound[1])))
            << "clamp(" << bound[0] << ", " << x[i] << ", " << bound[1] << ") at " << target << ": " << out[i];
    }
  }
}

}  // namespace
}  // namespace stablert::kernels
