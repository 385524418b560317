#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <set>

#include "kernels/kernel_test_util.h"
#include "kernels/rng_bits.h"
#include "kernels/rng_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

// Known-answer vectors of Random123 (threefry2x32_20, philox4x32_10).
TEST(RngBitsTest, ThreefryKnownAnswers) {
  EXPECT_EQ(rng::Threefry2x32({0, 0}, {0, 0}), (std::array<uint32_t, 2>{0x6b200159u, 0x99ba4efeu}));
  EXPECT_EQ(rng::Threefry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 2>{0x1cb996fcu, 0xbb002be7u}));
  EXPECT_EQ(rng::Threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}),
            (std::array<uint32_t, 2>{0xc4923a9cu, 0x483df7a0u}));
}

TEST(RngBitsTest, PhiloxKnownAnswers) {
  EXPECT_EQ(rng::Philox4x32({0, 0}, {0, 0, 0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(rng::Philox4x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(rng::Philox4x32({0xa4093822u, 0x299f31d0u}, {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

Array State(std::vector<uint64_t> words) {
  Array a(DType::kU64, {static_cast<int64_t>(words.size())});
  std::memcpy(a.bytes.data(), words.data(), words.size() * 8);
  return a;
}
uint64_t Word(const Array& a, int64_t i) { return static_cast<uint64_t>(GetInt(a, i)); }

// Threefry, 32-bit and narrower: the shape is halved along its first even dimension (or
// its largest), and block h feeds positions 2j, 2j+1 along it.
TEST(RngBitGeneratorTest, ThreefryNarrowLayout) {
  const uint64_t key = 0x0123456789abcdefull, counter = 0xfffffffffffffffeull;  // wraps
  for (Dims dims : std::vector<Dims>{{3, 5}, {3, 4}, {7}, {}, {5, 1, 3}, {0, 3}}) {
    for (DType dtype : {DType::kU8, DType::kU16, DType::kU32, DType::kS32}) {
      Array state = State({key, counter}), new_state(DType::kU64, {2}), bits(dtype, dims);
      RunKernel(Key("rng_bit_generator_three_fry", dtype), {&state}, {&new_state, &bits});
      int split = -1;
      for (size_t i = 0; i < dims.size() && split < 0; ++i)
        if (dims[i] % 2 == 0) split = static_cast<int>(i);
      for (size_t i = 0; i < dims.size() && split < 0; ++i) {
        bool largest = true;
        for (size_t k = 0; k < dims.size(); ++k) largest &= dims[k] < dims[i] || (dims[k] == dims[i] && k >= i);
        if (largest) split = static_cast<int>(i);
      }
      Dims half = dims.empty() ? Dims{1} : dims;
      if (!dims.empty()) half[static_cast<size_t>(split)] = (dims[static_cast<size_t>(split)] + 1) / 2;
      for (int64_t e = 0; e < bits.size(); ++e) {
        // Multi-index of e, then its block's linear index in the halved shape.
        Dims index(dims.size());
        for (int64_t rest = e, d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
          index[static_cast<size_t>(d)] = rest % dims[static_cast<size_t>(d)];
          rest /= dims[static_cast<size_t>(d)];
        }
        int word = 0;
        if (!dims.empty()) {
          word = static_cast<int>(index[static_cast<size_t>(split)] % 2);
          index[static_cast<size_t>(split)] /= 2;
        }
        int64_t h = 0;
        for (size_t d = 0; d < index.size(); ++d) h = h * half[d] + index[d];
        auto x = rng::Threefry2x32(rng::Split64(key), rng::Split64(counter + static_cast<uint64_t>(h)));
        const uint64_t mask = DTypeBitWidth(dtype) == 32 ? 0xffffffffull : (uint64_t{1} << DTypeBitWidth(dtype)) - 1;
        ASSERT_EQ(static_cast<uint64_t>(GetInt(bits, e)) & mask, x[static_cast<size_t>(word)] & mask)
            << DTypeName(dtype) << " element " << e;
      }
      EXPECT_EQ(Word(new_state, 0), key);
      EXPECT_EQ(Word(new_state, 1), counter + static_cast<uint64_t>(ElementCount(half)));
    }
  }
}

TEST(RngBitGeneratorTest, Threefry64BitsAreOneBlockPerElement) {
  Array state = State({7, 100}), new_state(DType::kU64, {2}), bits(DType::kU64, {3, 3});
  RunKernel("rng_bit_generator_three_fry.ui64", {&state}, {&new_state, &bits});
  for (int64_t e = 0; e < 9; ++e) {
    auto x = rng::Threefry2x32({7, 0}, rng::Split64(100 + static_cast<uint64_t>(e)));
    EXPECT_EQ(Word(bits, e), rng::Join64(x[0], x[1]));
  }
  EXPECT_EQ(Word(new_state, 1), 109u);
}

// Philox with a u64[2] state: counter (lo state[1], hi state[0]); only lo is written back.
TEST(RngBitGeneratorTest, PhiloxTwoWordState) {
  const uint64_t key = 0xfeedfacecafebeefull, lo = 0xfffffffffffffffeull;  // carries into hi
  Array state = State({key, lo}), new_state(DType::kU64, {2}), bits(DType::kU32, {11});
  RunKernel("rng_bit_generator_philox.ui32", {&state}, {&new_state, &bits});
  for (int64_t e = 0; e < 11; ++e) {
    rng::U128 c = rng::U128{lo, key}.Plus(static_cast<uint64_t>(e / 4));
    auto l = rng::Split64(c.lo), h = rng::Split64(c.hi);
    auto x = rng::Philox4x32(rng::Split64(key), {l[0], l[1], h[0], h[1]});
    EXPECT_EQ(Word(bits, e), x[static_cast<size_t>(e % 4)]) << e;
  }
  EXPECT_EQ(Word(new_state, 0), key);
  EXPECT_EQ(Word(new_state, 1), lo + 3);
}

TEST(RngBitGeneratorTest, PhiloxThreeWordState64Bits) {
  const uint64_t key = 5, lo = ~uint64_t{0}, hi = 9;
  Array state = State({key, lo, hi}), new_state(DType::kU64, {3}), bits(DType::kU64, {5});
  RunKernel("rng_bit_generator_philox.ui64", {&state}, {&new_state, &bits});
  for (int64_t e = 0; e < 5; ++e) {
    rng::U128 c = rng::U128{lo, hi}.Plus(static_cast<uint64_t>(e / 2));
    auto l = rng::Split64(c.lo), h = rng::Split64(c.hi);
    auto x = rng::Philox4x32(rng::Split64(key), {l[0], l[1], h[0], h[1]});
    EXPECT_EQ(Word(bits, e), e % 2 == 0 ? rng::Join64(x[0], x[1]) : rng::Join64(x[2], x[3])) << e;
  }
  EXPECT_EQ(Word(new_state, 1), lo + 3);
  EXPECT_EQ(Word(new_state, 2), hi + 1);
}

TEST(RngTest, UniformFloatsInRangeAndFreshPerCall) {
  for (DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    Array a(dtype, {}), b(dtype, {});
    SetDouble(a, 0, -2.0);
    SetDouble(b, 0, 5.0);
    const KernelRegistry::Entry* entry = CpuKernels().Lookup(Key("rng_uniform", dtype));
    ASSERT_NE(entry, nullptr);
    const RngParams params{.key = 1234};
    std::vector<BufferView> in = {a.View(), b.View()};
    Array out1(dtype, {1000}), out2(dtype, {1000});
    auto state = entry->prepare(testing::ArgsWith(in, {}, params));
    ASSERT_TRUE(state.ok());
    for (Array* out : {&out1, &out2}) {
      std::vector<BufferView> outs = {out->View()};
      KernelArgs args = testing::ArgsWith(in, outs, params);
      args.state = state->state.get();
      ASSERT_TRUE(entry->fn(KernelContext{}, args).ok());
    }
    std::set<double> distinct;
    for (int64_t i = 0; i < 1000; ++i) {
      double v = GetDouble(out1, i);
      // 16-bit results are drawn in f32 and rounded, so they may round up to b (as XLA's do).
      const bool narrow = dtype == DType::kF16 || dtype == DType::kBF16;
      ASSERT_TRUE(v >= -2.0 && (v < 5.0 || (narrow && v == 5.0))) << v;
      distinct.insert(v);
    }
    EXPECT_GT(distinct.size(), dtype == DType::kBF16 ? 100u : 500u) << DTypeName(dtype);
    EXPECT_NE(out1.bytes, out2.bytes);
  }
}

TEST(RngTest, UniformIntsCoverTheRange) {
  Array a(DType::kS32, {}), b(DType::kS32, {}), out(DType::kS32, {2000});
  SetInt(a, 0, -5);
  SetInt(b, 0, 5);
  RunKernel("rng_uniform.i32", {&a, &b}, {&out}, RngParams{.key = 99});
  std::set<int64_t> seen;
  for (int64_t i = 0; i < out.size(); ++i) seen.insert(GetInt(out, i));
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(*seen.begin(), -5);
  EXPECT_EQ(*seen.rbegin(), 4);
}

TEST(RngTest, NormalHasTheRequestedMoments) {
  Array mean(DType::kF64, {}), sigma(DType::kF64, {}), out(DType::kF64, {20001});
  SetDouble(mean, 0, 3.0);
  SetDouble(sigma, 0, 2.0);
  RunKernel("rng_normal.f64", {&mean, &sigma}, {&out}, RngParams{.key = 7});
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < out.size(); ++i) {
    sum += GetDouble(out, i);
    sq += GetDouble(out, i) * GetDouble(out, i);
  }
  const double m = sum / static_cast<double>(out.size());
  const double var = sq / static_cast<double>(out.size()) - m * m;
  EXPECT_NEAR(m, 3.0, 0.1);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.1);
}

}  // namespace
}  // namespace stablert::kernels
