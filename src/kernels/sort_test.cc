#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/simd/dispatch.h"
#include "kernels/simd/sort_simd.h"
#include "kernels/sort_keys.h"
#include "kernels/sort_params.h"

namespace stablert::kernels {
namespace {

using sort::KeyMap;
using sort::Order;
using testing::Array;
using testing::Key;
using testing::RunKernel;

// IEEE total order written from the definition: sign, then magnitude (reversed if negative).
template <typename U>
bool TotalLess(U a, U b, U sign) {
  const bool na = (a & sign) != 0, nb = (b & sign) != 0;
  if (na != nb) return na;
  const U ma = a & ~sign, mb = b & ~sign;
  return na ? ma > mb : ma < mb;
}

template <typename U>
KeyMap<U> Map(Order order, U inf, bool descending = false) {
  KeyMap<U> map;
  map.order = order;
  map.inf = inf;
  map.descending = descending;
  return map;
}

// Every f16 and bf16 pattern, all pairs: keys order as the total order, and round trip.
TEST(SortKeysTest, EveryHalfPatternOrdersInTotalOrder) {
  for (uint16_t inf : {uint16_t{0x7c00}, uint16_t{0x7f80}}) {
    for (bool descending : {false, true}) {
      const KeyMap<uint16_t> map = Map<uint16_t>(Order::kTotalOrder, inf, descending);
      std::vector<uint16_t> all(0x10000);
      std::iota(all.begin(), all.end(), uint16_t{0});
      for (uint16_t bits : all) ASSERT_EQ(map.FromKey(map.ToKey(bits)), bits);
      std::vector<uint16_t> by_key = all, by_order = all;
      std::sort(by_key.begin(), by_key.end(), [&](uint16_t a, uint16_t b) { return map.ToKey(a) < map.ToKey(b); });
      std::sort(by_order.begin(), by_order.end(), [](uint16_t a, uint16_t b) { return TotalLess<uint16_t>(a, b, 0x8000); });
      if (descending) std::reverse(by_order.begin(), by_order.end());
      EXPECT_EQ(by_key, by_order);
    }
  }
}

TEST(SortKeysTest, FloatClassesInTotalOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float denorm = std::numeric_limits<float>::denorm_min();
  // Ascending in total order.
  const std::vector<uint32_t> ordered = {
      0xffc00001u, std::bit_cast<uint32_t>(-nan), 0xff800001u /* -sNaN */, std::bit_cast<uint32_t>(-inf),
      std::bit_cast<uint32_t>(-3.5f), std::bit_cast<uint32_t>(-denorm), std::bit_cast<uint32_t>(-0.0f),
      std::bit_cast<uint32_t>(0.0f), std::bit_cast<uint32_t>(denorm), std::bit_cast<uint32_t>(1.0f),
      std::bit_cast<uint32_t>(inf), 0x7f800001u /* sNaN */, std::bit_cast<uint32_t>(nan), 0x7fffffffu};
  const KeyMap<uint32_t> map = Map<uint32_t>(Order::kTotalOrder, 0x7f800000u);
  for (size_t i = 0; i + 1 < ordered.size(); ++i) EXPECT_LT(map.ToKey(ordered[i]), map.ToKey(ordered[i + 1])) << i;
  for (uint32_t bits : ordered) EXPECT_EQ(map.FromKey(map.ToKey(bits)), bits);
}

TEST(SortKeysTest, CanonicalTakesZerosAndNaNsAsOneValueEach) {
  const KeyMap<uint32_t> map = Map<uint32_t>(Order::kCanonical, 0x7f800000u);
  const uint32_t qnan = 0x7fc00000u, inf = 0x7f800000u;
  EXPECT_EQ(map.QuietNaN(), qnan);
  for (uint32_t n : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    EXPECT_EQ(map.ToKey(n), map.ToKey(qnan));
    EXPECT_GT(map.ToKey(n), map.ToKey(inf));
    EXPECT_EQ(map.FromKey(map.ToKey(n)), qnan);
    EXPECT_EQ(map.IsNonCanonical(n), n != qnan);
  }
  EXPECT_EQ(map.ToKey(0x80000000u), map.ToKey(0u));
  EXPECT_TRUE(map.IsNonCanonical(0x80000000u));
  EXPECT_LT(map.ToKey(std::bit_cast<uint32_t>(-1e-45f)), map.ToKey(0u));
  EXPECT_LT(map.ToKey(0xff800000u), map.ToKey(std::bit_cast<uint32_t>(-1e38f)));  // -inf lowest
  EXPECT_EQ(Map<uint64_t>(Order::kCanonical, 0x7ff0000000000000u).QuietNaN(), 0x7ff8000000000000u);
  EXPECT_EQ(Map<uint16_t>(Order::kCanonical, 0x7c00).QuietNaN(), 0x7e00);
  EXPECT_EQ(Map<uint16_t>(Order::kCanonical, 0x7f80).QuietNaN(), 0x7fc0);
}

TEST(SortKeysTest, IntegersRoundTripInOrder) {
  KeyMap<uint8_t> s8;
  s8.is_signed = true;
  for (int a = -128; a < 127; ++a) {
    const auto bits = static_cast<uint8_t>(a), next = static_cast<uint8_t>(a + 1);
    EXPECT_LT(s8.ToKey(bits), s8.ToKey(next));
    EXPECT_EQ(s8.FromKey(s8.ToKey(bits)), bits);
  }
  KeyMap<uint64_t> s64;
  s64.is_signed = true;
  s64.descending = true;
  const int64_t values[] = {std::numeric_limits<int64_t>::min(), -1, 0, 1, std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i + 1 < std::size(values); ++i) {
    EXPECT_GT(s64.ToKey(static_cast<uint64_t>(values[i])), s64.ToKey(static_cast<uint64_t>(values[i + 1])));
    EXPECT_EQ(s64.FromKey(s64.ToKey(static_cast<uint64_t>(values[i]))), static_cast<uint64_t>(values[i]));
  }
}

// The kernels against std::stable_sort with the same comparator.
TEST(SortKernelTest, CanonicalF32RowsMatchStableSort) {
  std::mt19937 rng(3);
  const std::vector<uint32_t> specials = {0x80000000u, 0u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
                                          0x7f800000u, 0xff800000u, 0x3f800000u, 0xbf800000u};
  for (bool descending : {false, true}) {
    for (int64_t dim : {0, 1}) {
      Array in(DType::kF32, {37, 29}), out(DType::kF32, {37, 29});
      auto* x = reinterpret_cast<uint32_t*>(in.bytes.data());
      for (int64_t i = 0; i < in.size(); ++i) x[i] = specials[rng() % specials.size()];
      RunKernel(Key("sort_keys", DType::kF32), {&in}, {&out},
                SortParams{.dimension = dim, .order = Order::kCanonical, .descending = descending});
      KeyMap<uint32_t> map = Map<uint32_t>(Order::kCanonical, 0x7f800000u, descending);
      const int64_t rows = 37 * 29 / in.dims[dim], n = in.dims[dim];
      const int64_t stride = dim == 0 ? 29 : 1;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t start = dim == 0 ? r : r * 29;
        std::vector<uint32_t> want;
        for (int64_t i = 0; i < n; ++i) want.push_back(x[start + i * stride]);
        std::stable_sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) { return map.ToKey(a) < map.ToKey(b); });
        const auto* y = reinterpret_cast<const uint32_t*>(out.bytes.data());
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[start + i * stride], want[static_cast<size_t>(i)]) << r << " " << i;
      }
    }
  }
}

double ValueAt(const Array& a, int64_t i) {
  return IsFloat(a.dtype) ? testing::GetDouble(a, i) : static_cast<double>(testing::GetInt(a, i));
}

TEST(SortKernelTest, ByKeyIsStableAndGathersEveryOperand) {
  const int64_t n = 1000;
  for (DType dtype : {DType::kU8, DType::kS32, DType::kF64}) {
    Array key(dtype, {n}), index(DType::kS32, {n}), key_out(dtype, {n}), index_out(DType::kS32, {n});
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == DType::kF64) testing::SetDouble(key, i, static_cast<double>((i * 7) % 5) - 2.0);
      else testing::SetInt(key, i, (i * 7) % 5);
      testing::SetInt(index, i, i);
    }
    RunKernel(Key("sort_by_key", dtype), {&key, &index}, {&key_out, &index_out},
              SortParams{.dimension = 0, .order = dtype == DType::kF64 ? Order::kCanonical : Order::kInteger});
    for (int64_t i = 1; i < n; ++i) {
      const double a = ValueAt(key_out, i - 1), b = ValueAt(key_out, i);
      ASSERT_LE(a, b);
      if (a == b) {
        ASSERT_LT(testing::GetInt(index_out, i - 1), testing::GetInt(index_out, i));
      }
      ASSERT_EQ(ValueAt(key, testing::GetInt(index_out, i)), b);
    }
  }
}


std::vector<env::Isa> Levels() {
  std::vector<env::Isa> levels;
  for (env::Isa level : {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest})
    if (simd::CpuHas(level)) levels.push_back(level);
  return levels;
}

class SortIsaTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// Pseudo-random keys with many repeats and the extremes, n of them.
template <typename U>
std::vector<U> RandomKeys(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<U> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    keys[i] = i % 7 == 0 ? static_cast<U>(r % 5) : i % 11 == 0 ? static_cast<U>(~U{0} - r % 3) : static_cast<U>(r);
  }
  return keys;
}

// The vector sort at every level, for every key type, at sizes below and above the size
// from which the AVX-512/AVX2 choice applies and at 1M keys: the same as std::sort.
TEST_F(SortIsaTest, VectorSortMatchesStdSortAtEveryLevel) {
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    SCOPED_TRACE(simd::SortTargetName(32) + " " + simd::SortTargetName(64));
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{17}, size_t{255}, size_t{256}, size_t{4099},
                     size_t{1} << 20}) {
      std::vector<uint16_t> u16 = RandomKeys<uint16_t>(n, 1);
      std::vector<uint32_t> u32 = RandomKeys<uint32_t>(n, 2);
      std::vector<uint64_t> u64 = RandomKeys<uint64_t>(n, 3), hi = RandomKeys<uint64_t>(n, 4), lo = RandomKeys<uint64_t>(n, 5);
      std::vector<simd::SortKey128> u128(n);
      for (size_t i = 0; i < n; ++i) u128[i] = {lo[i], hi[i] % 3};  // many equal high halves
      std::vector<uint16_t> w16 = u16;
      std::vector<uint32_t> w32 = u32;
      std::vector<uint64_t> w64 = u64;
      std::vector<simd::SortKey128> w128 = u128;
      std::sort(w16.begin(), w16.end());
      std::sort(w32.begin(), w32.end());
      std::sort(w64.begin(), w64.end());
      std::sort(w128.begin(), w128.end(), [](const simd::SortKey128& a, const simd::SortKey128& b) {
        return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
      });
      simd::SortAscending(u16.data(), n);
      simd::SortAscending(u32.data(), n);
      simd::SortAscending(u64.data(), n);
      simd::SortAscending(u128.data(), n);
      ASSERT_EQ(u16, w16) << n;
      ASSERT_EQ(u32, w32) << n;
      ASSERT_EQ(u64, w64) << n;
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(u128[i].lo == w128[i].lo && u128[i].hi == w128[i].hi) << n << " " << i;
    }
  }
}

// The sort target follows the level cap, and AVX-512 gives way to AVX2 exactly for the key
// types whose probe found AVX-512 vqsort slower.
TEST_F(SortIsaTest, TargetFollowsTheCapAndTheProbe) {
  for (int bits : {16, 32, 64, 128}) {
    SCOPED_TRACE(bits);
    if (simd::CpuHas(env::Isa::kSse4)) {
      ASSERT_TRUE(simd::SetIsa(env::Isa::kSse4).ok());
      EXPECT_EQ(simd::SortTargetName(bits), "SSE4");
    }
    if (simd::CpuHas(env::Isa::kAvx2)) {
      ASSERT_TRUE(simd::SetIsa(env::Isa::kAvx2).ok());
      EXPECT_EQ(simd::SortTargetName(bits), "AVX2");
    }
    if (simd::CpuHas(env::Isa::kAvx512)) {
      ASSERT_TRUE(simd::SetIsa(env::Isa::kAvx512).ok());
      EXPECT_EQ(simd::SortTargetName(bits), simd::AvxSortIsSlowerThanAvx2(bits) ? "AVX2" : "AVX3");
    } else {
      EXPECT_FALSE(simd::AvxSortIsSlowerThanAvx2(bits));
    }
  }
}

// The kernels at every level on rows long enough for the partitioning sort: 256K-element
// f32 rows (sort_keys) and a key + value sort of f32, s16 and f64 keys (64-bit pairs, and
// 128-bit pairs for 8-byte keys), against std::stable_sort of the same keys.
TEST_F(SortIsaTest, LongRowsMatchStableSortAtEveryLevel) {
  const int64_t n = int64_t{1} << 18;
  std::mt19937 rng(7);
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (DType dtype : {DType::kF32, DType::kS16, DType::kF64}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + simd::SortTargetName(64));
      Array key(dtype, {n}), value(DType::kS32, {n}), key_out(dtype, {n}), value_out(DType::kS32, {n});
      for (int64_t i = 0; i < n; ++i) {
        const double v = i % 13 == 0 ? static_cast<double>(rng() % 4) : static_cast<double>(rng() % 60000) - 30000.0;
        if (dtype == DType::kS16) testing::SetInt(key, i, static_cast<int64_t>(v) / 2);
        else testing::SetDouble(key, i, v / 7.0);
        testing::SetInt(value, i, i);
      }
      const Order order = dtype == DType::kS16 ? Order::kInteger : Order::kCanonical;
      std::vector<int64_t> want(static_cast<size_t>(n));
      std::iota(want.begin(), want.end(), int64_t{0});
      std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) { return ValueAt(key, a) < ValueAt(key, b); });
      RunKernel(Key("sort_by_key", dtype), {&key, &value}, {&key_out, &value_out}, SortParams{.order = order});
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(testing::GetInt(value_out, i), want[static_cast<size_t>(i)]) << i;
        ASSERT_EQ(ValueAt(key_out, i), ValueAt(key, want[static_cast<size_t>(i)])) << i;
      }
      RunKernel(Key("sort_keys", dtype), {&key}, {&key_out}, SortParams{.order = order});
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(ValueAt(key_out, i), ValueAt(key, want[static_cast<size_t>(i)])) << i;
    }
  }
}

}  // namespace
}  // namespace stablert::kernels
