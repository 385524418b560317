#include "kernels/scalar_program.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/simd/dispatch.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

// (a, b) -> (a < b ? a : b, a + b) over f32, with a constant 2 multiplied in: r4 = b * 2.
std::vector<int64_t> SampleProgram() {
  const int64_t f32 = static_cast<int64_t>(DType::kF32), pred = static_cast<int64_t>(DType::kPred);
  float two = 2.0f;
  int64_t two_bits = 0;
  std::memcpy(&two_bits, &two, 4);
  return {1,
          6, f32, f32, pred, f32, f32, f32,  // r0 a, r1 b, r2 lt, r3 min, r4 2, r5 sum
          2,
          1, 4, two_bits,
          4,
          70, 2, 0, 1, 0, 5 * 8 + 1,  // r2 = a < b
          71, 3, 2, 0, 1, 0,          // r3 = select(r2, a, b)
          42, 4, 1, 4, 0, 0,          // r4 = b * 2
          40, 5, 0, 4, 0, 0,          // r5 = a + r4
          2, 3, 5};
}

TEST(ScalarProgramTest, DecodesAndRuns) {
  auto program = ScalarProgram::Decode(SampleProgram(), CpuKernels());
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<ScalarSlot> registers(static_cast<size_t>(program->num_registers()));
  program->Initialize(registers.data());
  SetSlot(registers[0], 3.0f);
  SetSlot(registers[1], 1.5f);
  program->Run(registers.data());
  EXPECT_EQ(GetSlot<float>(registers[static_cast<size_t>(program->outputs()[0])]), 1.5f);
  EXPECT_EQ(GetSlot<float>(registers[static_cast<size_t>(program->outputs()[1])]), 6.0f);
}

TEST(ScalarProgramTest, MalformedProgramsAreErrorsNotCrashes) {
  const std::vector<int64_t> good = SampleProgram();
  // Every truncation.
  for (size_t n = 0; n < good.size(); ++n) {
    auto program = ScalarProgram::Decode(std::span<const int64_t>(good.data(), n), CpuKernels());
    EXPECT_FALSE(program.ok()) << "prefix of " << n;
  }
  // Random corruption of one field.
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<int64_t> code = good;
    code[rng() % code.size()] = static_cast<int64_t>(rng() % 4 == 0 ? rng() : rng() % 80) - (trial % 3 == 0 ? 40 : 0);
    auto program = ScalarProgram::Decode(code, CpuKernels());
    if (program.ok()) {
      std::vector<ScalarSlot> registers(static_cast<size_t>(program->num_registers()));
      program->Initialize(registers.data());
      program->Run(registers.data());
    }
  }
  // Type mismatches are rejected.
  std::vector<int64_t> bad = good;
  bad[3] = static_cast<int64_t>(DType::kS32);  // r1 becomes i32: compare a, b types differ
  EXPECT_FALSE(ScalarProgram::Decode(bad, CpuKernels()).ok());
}

// A body program computes what the elementwise kernel computes, op by op.
TEST(ScalarProgramTest, MatchesElementwiseKernels) {
  const DType types[] = {DType::kS8, DType::kU16, DType::kS32, DType::kU64, DType::kF16, DType::kBF16, DType::kF32,
                         DType::kF64};
  const std::pair<int64_t, const char*> binary_ops[] = {{40, "add"}, {43, "divide"}, {44, "remainder"}, {45, "maximum"},
                                                        {47, "power"}, {41, "subtract"}};
  std::mt19937_64 rng(3);
  for (DType dtype : types) {
    for (const auto& [opcode, name] : binary_ops) {
      const int64_t t = static_cast<int64_t>(dtype);
      std::vector<int64_t> code = {1, 3, t, t, t, 2, 0, 1, opcode, 2, 0, 1, 0, 0, 1, 2};
      auto program = ScalarProgram::Decode(code, CpuKernels());
      ASSERT_TRUE(program.ok()) << name << " " << DTypeName(dtype) << ": " << program.status().ToString();
      Array a(dtype, {64}), b(dtype, {64}), want(dtype, {64});
      for (uint8_t& byte : a.bytes) byte = static_cast<uint8_t>(rng());
      for (uint8_t& byte : b.bytes) byte = static_cast<uint8_t>(rng());
      RunKernel(Key(name, dtype), {&a, &b}, {&want});
      const int size = DTypeByteSize(dtype);
      for (int64_t i = 0; i < 64; ++i) {
        ScalarSlot registers[3] = {};
        std::memcpy(&registers[0], &a.bytes[static_cast<size_t>(i * size)], size);
        std::memcpy(&registers[1], &b.bytes[static_cast<size_t>(i * size)], size);
        program->Run(registers);
        ASSERT_EQ(0, std::memcmp(&registers[2], &want.bytes[static_cast<size_t>(i * size)], size))
            << name << " " << DTypeName(dtype) << " at " << i;
      }
    }
  }
}

void CheckMathFunctions();

class ScalarFunctionOfTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// Every math function's scalar function gives, for one element, the bits its kernel gives
// that element inside a large array (where the vector code runs on full vectors), at every
// instruction-set level the CPU has.
TEST_F(ScalarFunctionOfTest, MathFunctionsGiveTheKernelsBits) {
  for (env::Isa level : {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest}) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    SCOPED_TRACE(simd::CurrentTarget());
    CheckMathFunctions();
  }
}

void CheckMathFunctions() {
  const DType types[] = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  const char* unary_ops[] = {"exponential", "exponential_minus_one", "log", "log_plus_one", "sqrt", "rsqrt",
                             "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil",
                             "round_nearest_afz", "round_nearest_even", "negate", "abs", "sign"};
  const char* binary_ops[] = {"power", "atan2", "add", "subtract", "multiply", "divide", "remainder", "maximum",
                              "minimum"};
  constexpr int64_t n = 1 << 14;
  std::mt19937_64 rng(11);
  for (DType dtype : types) {
    // Values across the functions' domains: special values, small and large magnitudes.
    std::vector<double> values = SpecialFloats(dtype);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    while (static_cast<int64_t>(values.size()) < n) {
      const double scale = std::pow(10.0, static_cast<double>(rng() % 12) - 4.0);
      values.push_back(unit(rng) * scale);
    }
    Array x(dtype, {n}), y(dtype, {n});
    for (int64_t i = 0; i < n; ++i) {
      SetDouble(x, i, values[static_cast<size_t>(i)]);
      SetDouble(y, i, values[static_cast<size_t>((i * 7919) % n)]);
    }
    const int size = DTypeByteSize(dtype);
    auto check = [&](const char* name, bool binary) {
      const std::string key = Key(name, dtype);
      const ScalarFn fn = ScalarFunctionOf(CpuKernels(), key);
      ASSERT_NE(fn, nullptr) << key;
      Array want(dtype, {n});
      if (binary) RunKernel(key, {&x, &y}, {&want});
      else RunKernel(key, {&x}, {&want});
      for (int64_t i = 0; i < n; ++i) {
        ScalarSlot registers[3] = {};
        std::memcpy(&registers[1], &x.bytes[static_cast<size_t>(i * size)], size);
        std::memcpy(&registers[2], &y.bytes[static_cast<size_t>(i * size)], size);
        fn(registers, ScalarInstruction{fn, 0, 1, 2, 0, 0});
        ASSERT_EQ(0, std::memcmp(&registers[0], &want.bytes[static_cast<size_t>(i * size)], size))
            << key << " of " << GetDouble(x, i) << (binary ? ", " + std::to_string(GetDouble(y, i)) : "");
      }
    };
    for (const char* name : unary_ops) check(name, false);
    for (const char* name : binary_ops) check(name, true);
  }
}

// sin and cos of f32 as plain functions (ScalarF32FunctionOf, the links of register
// chains) and as scalar functions give the kernel's bits at every level, on each edge of
// their decisions: NaN, infinities, zeros, denormals, the smallest normals, 2^-13 (cos
// rounds to 1 below), 39000 (the vector domain's end; libm beyond), large arguments.
TEST_F(ScalarFunctionOfTest, SinAndCosOfF32GiveTheKernelsBits) {
  std::vector<float> values = {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, -1e-40f, 0x1.fffffcp-127f,
                               std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                               0x1.000002p-126f, 0x1p-14f, 0x1.fffffep-14f, 0x1p-13f, -0x1p-13f, 0x1.000002p-13f,
                               1e-7f, 0.5f, 0.7853982f, 1.5707964f, -1.5707964f, 3.1415927f, 6.2831855f,
                               100.0f, 1000.5f, 38999.996f, 39000.0f, -39000.0f, 39000.004f, -39000.004f, 1e5f,
                               -1e5f, 123456.79f, 1e10f, 1e30f, std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                               -std::numeric_limits<float>::quiet_NaN()};
  uint32_t nan_payload = 0x7fa00001u;  // a signalling NaN's bits
  float snan;
  std::memcpy(&snan, &nan_payload, 4);
  values.push_back(snan);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  while (values.size() < (1u << 16))  // magnitudes 1e-6 .. 1e6, and random bit patterns
    values.push_back(values.size() % 4 == 0 ? std::bit_cast<float>(static_cast<uint32_t>(rng()))
                                            : unit(rng) * std::pow(10.0f, static_cast<float>(rng() % 13) - 6.0f));
  const int64_t n = static_cast<int64_t>(values.size());
  Array x(DType::kF32, {n});
  std::memcpy(x.bytes.data(), values.data(), values.size() * 4);
  for (env::Isa level : {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest}) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    SCOPED_TRACE(simd::CurrentTarget());
    for (const char* name : {"sine", "cosine"}) {
      const std::string key = Key(name, DType::kF32);
      const ScalarF32Fn f32 = ScalarF32FunctionOf(key);
      const ScalarFn fn = ScalarFunctionOf(CpuKernels(), key);
      ASSERT_NE(f32, nullptr);
      ASSERT_NE(fn, nullptr);
      Array want(DType::kF32, {n});
      RunKernel(key, {&x}, {&want});
      for (int64_t i = 0; i < n; ++i) {
        const float value = values[static_cast<size_t>(i)];
        uint32_t expected;
        std::memcpy(&expected, &want.bytes[static_cast<size_t>(i * 4)], 4);
        ASSERT_EQ(std::bit_cast<uint32_t>(f32(value)), expected) << key << " of " << value;
        ScalarSlot registers[2] = {};
        SetSlot(registers[1], value);
        fn(registers, ScalarInstruction{fn, 0, 1, 0, 0, 0});
        ASSERT_EQ(GetSlot<uint32_t>(registers[0]), expected) << key << " of " << value;
      }
    }
  }
  EXPECT_EQ(ScalarF32FunctionOf("sine.f64"), nullptr);
  EXPECT_EQ(ScalarF32FunctionOf("exponential.f32"), nullptr);
}

TEST_F(ScalarFunctionOfTest, OnlyOpsWithAnOpcode) {
  EXPECT_NE(ScalarFunctionOf(CpuKernels(), "select.f32"), nullptr);
  EXPECT_NE(ScalarFunctionOf(CpuKernels(), Key("copy", DType::kS64)), nullptr);
  EXPECT_NE(ScalarFunctionOf(CpuKernels(), Key("compare", DType::kS32)), nullptr);
  EXPECT_NE(ScalarFunctionOf(CpuKernels(), KernelKey("convert", {DType::kF32, DType::kS32})), nullptr);
  EXPECT_EQ(ScalarFunctionOf(CpuKernels(), "fused"), nullptr);
  EXPECT_EQ(ScalarFunctionOf(CpuKernels(), "erf.f32"), nullptr);  // no opcode (yet)
  EXPECT_EQ(ScalarFunctionOf(CpuKernels(), "dot.f32"), nullptr);
  EXPECT_EQ(ScalarFunctionOf(CpuKernels(), Key("sine", DType::kS32)), nullptr);
}

}  // namespace
}  // namespace stablert::kernels
