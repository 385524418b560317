#include "kernels/scalar_program.h"

#include <gtest/gtest.h>

#include <random>

#include "kernels/kernel_test_util.h"

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

}  // namespace
}  // namespace stablert::kernels
