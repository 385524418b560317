// Checks the sub-byte bitcast kernels against a bit-by-bit reference: the narrow elements are
// the wide elements' bits from the lowest up, wide elements little-endian.
#include <gtest/gtest.h>

#include <random>

#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

std::string Key(DType from, DType to) { return KernelKey("bitcast_convert", {from, to}); }

// Bit `b` of the bit stream of `a` (elements of `bits` bits each, one byte per sub-byte element).
int BitOf(const Array& a, int bits, int64_t b) {
  if (bits < 8) return (a.bytes[static_cast<size_t>(b / bits)] >> (b % bits)) & 1;
  return (a.bytes[static_cast<size_t>(b / 8)] >> (b % 8)) & 1;
}

void CheckRoundTrip(DType narrow, int narrow_bits, DType wide, int wide_bits, int64_t wide_count) {
  SCOPED_TRACE(Key(narrow, wide));
  const int64_t ratio = wide_bits / narrow_bits;
  std::mt19937 rng(static_cast<unsigned>(wide_count + wide_bits * 7 + narrow_bits));
  // Narrow -> wide from random narrow bits (high bits of each byte zero, as stored).
  Array in(narrow, {wide_count, ratio});
  for (uint8_t& b : in.bytes) b = static_cast<uint8_t>(rng() & ((1u << narrow_bits) - 1));
  Array packed(wide, {wide_count});
  RunKernel(Key(narrow, wide), {&in}, {&packed});
  for (int64_t b = 0; b < wide_count * wide_bits; ++b)
    ASSERT_EQ(BitOf(packed, wide_bits, b), BitOf(in, narrow_bits, b)) << "bit " << b;
  // Wide -> narrow gives the narrow elements back, high bits zero.
  Array unpacked(narrow, {wide_count, ratio});
  RunKernel(Key(wide, narrow), {&packed}, {&unpacked});
  ASSERT_EQ(unpacked.bytes, in.bytes);
  // Wide -> narrow from random wide bits.
  for (uint8_t& b : packed.bytes) b = static_cast<uint8_t>(rng());
  RunKernel(Key(wide, narrow), {&packed}, {&unpacked});
  for (int64_t b = 0; b < wide_count * wide_bits; ++b)
    ASSERT_EQ(BitOf(unpacked, narrow_bits, b), BitOf(packed, wide_bits, b)) << "bit " << b;
  for (uint8_t byte : unpacked.bytes) ASSERT_EQ(byte >> narrow_bits, 0);
}

TEST(BitcastKernels, SubByteToAndFromEveryWidth) {
  const std::pair<DType, int> narrow[] = {
      {DType::kS4, 4}, {DType::kU4, 4}, {DType::kF4E2M1FN, 4}, {DType::kS2, 2}, {DType::kU2, 2}};
  const std::pair<DType, int> wide[] = {{DType::kU8, 8},   {DType::kF8E4M3FN, 8}, {DType::kS16, 16},
                                        {DType::kBF16, 16}, {DType::kF32, 32},     {DType::kS64, 64}};
  for (auto [n, nb] : narrow)
    for (auto [w, wb] : wide)
      for (int64_t count : {1, 7, 1000}) CheckRoundTrip(n, nb, w, wb, count);
  CheckRoundTrip(DType::kU2, 2, DType::kS4, 4, 333);
  CheckRoundTrip(DType::kS2, 2, DType::kF4E2M1FN, 4, 5);
}

TEST(BitcastKernels, XlaBitOrder) {
  // i4 [1, -2, 3, 4] -> f16 0x43E1 (element 0 in the lowest bits).
  Array in = ArrayOf<uint8_t>(DType::kS4, {4}, {0x1, 0xE, 0x3, 0x4});
  Array out(DType::kF16, {});
  RunKernel(Key(DType::kS4, DType::kF16), {&in}, {&out});
  EXPECT_EQ(ElementAt<uint16_t>(out, 0), 0x43E1);
}

}  // namespace
}  // namespace stablert::kernels
