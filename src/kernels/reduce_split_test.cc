// The threaded and vectorized f32/f64 reductions (reduce.cc, simd/reduce_simd.cc): split
// calls give the unsplit results (max/min exactly; row and column sums exactly; sums to one
// element within the pairwise bound), and the vector loops equal the scalar definitions
// (ops::MaxOp/MinOp folds, pairwise::Sum) bit for bit at every ISA level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/accumulate.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/dispatch.h"
#include "kernels/simd/reduce_simd.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

template <typename T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
std::vector<T> RandomValues(std::mt19937& rng, int64_t n, bool specials) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<T> x(static_cast<size_t>(n));
  for (T& v : x) v = static_cast<T>(normal(rng));
  if (specials) {
    const T nan_a = std::numeric_limits<T>::quiet_NaN();
    T nan_b = nan_a;
    unsigned char* bytes = reinterpret_cast<unsigned char*>(&nan_b);
    bytes[0] ^= 1;  // another payload
    const T values[] = {T(0), T(-0.0), std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), nan_a, nan_b};
    std::uniform_int_distribution<int64_t> pos(0, n - 1);
    for (int k = 0; k < 16; ++k) x[static_cast<size_t>(pos(rng))] = values[k % 8];
  }
  return x;
}

// Runs `key` as `parts` calls (KernelContext{i, parts}).
void RunSplit(const std::string& key, const Array& in, const Array& init, Array& out,
              const std::vector<int64_t>& dims, int parts) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << key;
  ASSERT_TRUE(entry->splittable) << key;
  std::vector<BufferView> inputs = {in.View(), init.View()}, outputs = {out.View()};
  const ReduceParams params{.dimensions = dims};
  const KernelArgs args = ArgsWith(inputs, outputs, params);
  for (int i = parts; i-- > 0;) ASSERT_TRUE(entry->fn(KernelContext{i, parts}, args).ok());
}

struct Case {
  Dims dims;
  std::vector<int64_t> reduced;
};

template <typename T>
void CheckSplitMatchesUnsplit(DType dtype) {
  std::mt19937 rng(11);
  const Case cases[] = {
      {{600, 1000}, {1}},      // rows
      {{1000, 600}, {0}},      // columns
      {{700001}, {0}},         // all
      {{512, 1024}, {0, 1}},   // all, two dimensions
      {{64, 80, 64}, {0, 2}},  // not split: the first call does it all
      {{3, 100000}, {1}},      // fewer rows than calls
  };
  for (const char* body : {"reduce_add", "reduce_max", "reduce_min"}) {
    const bool is_sum = std::string(body) == "reduce_add";
    for (const Case& c : cases) {
      int64_t n = 1;
      for (int64_t d : c.dims) n *= d;
      for (bool specials : {false, true}) {
        if (is_sum && specials) continue;
        const std::vector<T> x = RandomValues<T>(rng, n, specials);
        double magnitude = 0;
        for (T v : x) magnitude += std::fabs(static_cast<double>(v));
        Array in = ArrayOf(dtype, c.dims, x);
        Array init = ArrayOf<T>(dtype, {}, {is_sum ? T(0.5) : T(-0.0)});
        Dims out_dims;
        for (size_t d = 0; d < c.dims.size(); ++d)
          if (std::find(c.reduced.begin(), c.reduced.end(), static_cast<int64_t>(d)) == c.reduced.end())
            out_dims.push_back(c.dims[d]);
        Array whole(dtype, out_dims);
        RunKernel(Key(body, dtype), {&in, &init}, {&whole}, ReduceParams{.dimensions = c.reduced});
        const int64_t outputs = whole.size();
        for (int parts : {2, 3, 4, 7}) {
          Array split(dtype, out_dims);
          RunSplit(Key(body, dtype), in, init, split, c.reduced, parts);
          for (int64_t i = 0; i < outputs; ++i) {
            const T a = ElementAt<T>(whole, i), b = ElementAt<T>(split, i);
            if (is_sum && outputs == 1) {
              // Pairwise partials of pairwise sums: within the pairwise bound.
              const double u = std::numeric_limits<T>::epsilon() / 2;
              const double bound = 2 * (40 + std::log2(static_cast<double>(n))) * u * magnitude;
              EXPECT_LE(std::fabs(static_cast<double>(a) - static_cast<double>(b)), bound)
                  << body << " parts " << parts << " n " << n;
            } else {
              ASSERT_TRUE(SameBits(a, b)) << body << " " << c.dims.size() << "-d parts " << parts << " output " << i
                                          << ": " << a << " vs " << b;
            }
          }
        }
      }
    }
  }
}

TEST(ReduceSplitTest, SplitCallsMatchOneCallF32) { CheckSplitMatchesUnsplit<float>(DType::kF32); }
TEST(ReduceSplitTest, SplitCallsMatchOneCallF64) { CheckSplitMatchesUnsplit<double>(DType::kF64); }

const env::Isa kLevels[] = {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest};

class ReduceSimdTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

template <typename T>
void CheckVectorLoops(const std::string& target) {
  std::mt19937 rng(29);
  for (int64_t n : {0, 1, 5, 16, 63, 64, 127, 128, 129, 1000, 4096, 100003}) {
    for (bool specials : {false, true}) {
      if (specials && n < 16) continue;
      const std::vector<T> x = RandomValues<T>(rng, n, specials);
      if (!specials) {
        const T want = pairwise::Sum(x.data(), n), got = simd::PairwiseSum(x.data(), n);
        ASSERT_TRUE(SameBits(want, got)) << target << " sum n " << n << ": " << want << " vs " << got;
      }
      for (T init : {T(-0.0), T(0), std::numeric_limits<T>::quiet_NaN(), T(1e30)}) {
        T want_max = init, want_min = init;
        for (T v : x) {
          want_max = ops::MaxOp::Apply(want_max, v);
          want_min = ops::MinOp::Apply(want_min, v);
        }
        ASSERT_TRUE(SameBits(want_max, simd::ReduceRow(simd::ReduceOp::kMax, init, x.data(), n)))
            << target << " max n " << n;
        ASSERT_TRUE(SameBits(want_min, simd::ReduceRow(simd::ReduceOp::kMin, init, x.data(), n)))
            << target << " min n " << n;
      }
    }
  }
  // Rows into a vector: 37 rows of width 75 (stride 80), NaNs, zeros and denormals included.
  const int64_t rows = 37, width = 75, stride = 80;
  const std::vector<T> x = RandomValues<T>(rng, rows * stride, true);
  std::vector<T> start = RandomValues<T>(rng, width, true);
  for (simd::ReduceOp op : {simd::ReduceOp::kMax, simd::ReduceOp::kMin}) {
    std::vector<T> want = start, got = start;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < width; ++i) {
        const T v = x[static_cast<size_t>(r * stride + i)];
        T& w = want[static_cast<size_t>(i)];
        w = op == simd::ReduceOp::kMax ? ops::MaxOp::Apply(w, v) : ops::MinOp::Apply(w, v);
      }
    simd::ReduceRows(op, got.data(), x.data(), stride, rows, width);
    for (int64_t i = 0; i < width; ++i)
      ASSERT_TRUE(SameBits(want[static_cast<size_t>(i)], got[static_cast<size_t>(i)])) << target << " rows " << i;
  }
  const std::vector<T> y = RandomValues<T>(rng, rows * stride, false);
  std::vector<T> want(static_cast<size_t>(width), T(0.25)), got = want;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i) want[static_cast<size_t>(i)] += y[static_cast<size_t>(r * stride + i)];
  simd::AddRows(got.data(), y.data(), stride, rows, width);
  for (int64_t i = 0; i < width; ++i)
    ASSERT_TRUE(SameBits(want[static_cast<size_t>(i)], got[static_cast<size_t>(i)])) << target << " add rows " << i;
}

TEST_F(ReduceSimdTest, VectorLoopsEqualScalarAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    CheckVectorLoops<float>(target);
    CheckVectorLoops<double>(target);
  }
}

}  // namespace
}  // namespace stablert::kernels
