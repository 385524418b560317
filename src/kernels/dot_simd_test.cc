// The matrix-vector vector loops (simd/dot_simd.h) at every instruction-set level this CPU
// has: the summation order is fixed per call, so the levels with fused multiply-adds
// (AVX2, AVX-512) give the same bits; SSE4 (no FMA) stays within the products' rounding
// bound of the double-precision result. Lengths cover whole blocks, chunks of blocks,
// chunk cascades and tails shorter than a vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/simd/dispatch.h"
#include "kernels/simd/dot_simd.h"

namespace stablert::kernels {
namespace {

class DotSimdTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

struct Results {
  std::vector<float> dots, axpy;
};

constexpr int64_t kLengths[] = {1, 7, 16, 17, 255, 256, 257, 1000, 8192, 8193, 3 * 8192 + 5, 70001};
constexpr int64_t kCounts[] = {1, 3, 4, 9};

Results RunAll(const std::vector<float>& rows, const std::vector<float>& x, int64_t stride) {
  Results r;
  for (int64_t k : kLengths)
    for (int64_t count : kCounts) {
      std::vector<float> out(static_cast<size_t>(count), 99.0f);
      simd::DotRows(out.data(), rows.data(), stride, count, x.data(), k);
      r.dots.insert(r.dots.end(), out.begin(), out.end());
      // AxpyRows: `count` rows of width min(k, 5000) into a running sum.
      const int64_t width = std::min<int64_t>(k, 5000);
      std::vector<float> dst(static_cast<size_t>(width), 0.25f);
      simd::AxpyRows(dst.data(), x.data(), rows.data(), stride, count, width);
      r.axpy.insert(r.axpy.end(), dst.begin(), dst.end());
    }
  return r;
}

TEST_F(DotSimdTest, FmaLevelsAgreeBitForBitAndAllLevelsMatchDouble) {
  const int64_t stride = 70001 + 3;
  std::mt19937 rng(21);
  std::normal_distribution<float> normal;
  std::vector<float> rows(static_cast<size_t>(stride * 9)), x(static_cast<size_t>(stride));
  for (float& v : rows) v = normal(rng);
  for (float& v : x) v = normal(rng);
  // Double-precision references and the bound: each product goes through at most
  // kBlock / 16 + log2(k / kBlock) + 4 roundings (dot_simd.h); 64 covers every length here.
  std::vector<double> want, bound;
  for (int64_t k : kLengths)
    for (int64_t count : kCounts)
      for (int64_t r = 0; r < count; ++r) {
        double sum = 0.0, abs = 0.0;
        for (int64_t i = 0; i < k; ++i) {
          const double p = static_cast<double>(x[i]) * rows[r * stride + i];
          sum += p;
          abs += std::fabs(p);
        }
        want.push_back(sum);
        bound.push_back(64.0 * 0x1p-24 * abs + 1e-30);
      }

  const env::Isa levels[] = {env::Isa::kBest, env::Isa::kAvx512, env::Isa::kAvx2, env::Isa::kSse4};
  Results fma;
  bool have_fma = false;
  for (env::Isa level : levels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    const Results got = RunAll(rows, x, stride);
    ASSERT_EQ(got.dots.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got.dots[i], want[i], bound[i]) << "DotRows at " << target << ", result " << i;
    if (level == env::Isa::kSse4) continue;  // no fused multiply-add: other roundings
    if (!have_fma) {
      fma = got;
      have_fma = true;
      continue;
    }
    for (size_t i = 0; i < fma.dots.size(); ++i)
      ASSERT_EQ(std::memcmp(&got.dots[i], &fma.dots[i], sizeof(float)), 0)
          << "DotRows at " << target << ", result " << i << ": " << got.dots[i] << " vs " << fma.dots[i];
    for (size_t i = 0; i < fma.axpy.size(); ++i)
      ASSERT_EQ(std::memcmp(&got.axpy[i], &fma.axpy[i], sizeof(float)), 0)
          << "AxpyRows at " << target << ", element " << i;
  }
}

}  // namespace
}  // namespace stablert::kernels
