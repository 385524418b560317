// Checks the sub-byte bitcast kernels (i1 as 1 bit, 2- and 4-bit types) against a bit-by-bit
// reference: the narrow elements are the wide elements' bits from the lowest up, wide elements
// little-endian.
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

TEST(BitcastKernels, I1ToAndFromEveryWidth) {
  const std::pair<DType, int> other[] = {
      {DType::kU2, 2},       {DType::kS2, 2},   {DType::kS4, 4},   {DType::kU4, 4},
      {DType::kF4E2M1FN, 4}, {DType::kU8, 8},   {DType::kS8, 8},   {DType::kF8E5M2, 8},
      {DType::kF8E8M0FNU, 8}, {DType::kS16, 16}, {DType::kF16, 16}, {DType::kBF16, 16},
      {DType::kU32, 32},     {DType::kF32, 32}, {DType::kU64, 64}, {DType::kF64, 64}};
  for (auto [t, bits] : other)
    for (int64_t count : {1, 7, 1000}) CheckRoundTrip(DType::kPred, 1, t, bits, count);
}

TEST(BitcastKernels, I1BitOrderIsTheSpecifications) {
  // Element 0 is the lowest bit of the wide element, whose bytes are little-endian (the
  // StableHLO reference interpreter's order; numpy's packbits(..., bitorder="little")).
  Array bits = ArrayOf<uint8_t>(DType::kPred, {2, 8}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1});
  Array bytes(DType::kU8, {2});
  RunKernel(Key(DType::kPred, DType::kU8), {&bits}, {&bytes});
  EXPECT_EQ(ElementAt<uint8_t>(bytes, 0), 0x01);
  EXPECT_EQ(ElementAt<uint8_t>(bytes, 1), 0x86);
  // u16 0x0102: bit 1 (of the low byte 0x02) and bit 8 (the low bit of the high byte 0x01).
  Array word = ArrayOf<uint16_t>(DType::kU16, {1}, {0x0102});
  Array unpacked(DType::kPred, {1, 16});
  RunKernel(Key(DType::kU16, DType::kPred), {&word}, {&unpacked});
  for (int i = 0; i < 16; ++i) EXPECT_EQ(unpacked.bytes[static_cast<size_t>(i)], i == 1 || i == 8 ? 1 : 0) << i;
  // i1 -> i4: element 0 in the i4's lowest bit; the i4's byte keeps its high bits zero.
  Array four = ArrayOf<uint8_t>(DType::kPred, {1, 4}, {0, 1, 1, 1});
  Array nibble(DType::kS4, {1});
  RunKernel(Key(DType::kPred, DType::kS4), {&four}, {&nibble});
  EXPECT_EQ(nibble.bytes[0], 0xE);
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
