// The threaded and vectorized reductions (reduce.cc, simd/reduce_simd.cc): split calls give
// the unsplit results (max/min and integer bodies exactly; row sums, and column and
// middle-dimension sums split by columns, exactly; f32/f64 sums to one element and column
// sums split by rows within the pairwise bound of each output), the row, column and
// middle layouts give their definitions' bits (ops folds in order, sums in leaves of 32 rows
// combined pairwise), and the vector loops equal the scalar definitions (ops::MaxOp/MinOp
// folds, pairwise::Sum, integer folds) bit for bit at every ISA level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/accumulate.h"
#include "kernels/half.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"
#include "kernels/reduce_widened.h"
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
      {{40, 70, 200}, {1}},    // a middle dimension
      {{3, 300, 700}, {1}},    // a middle dimension, fewer slabs than calls
      {{3, 100000}, {1}},      // fewer rows than calls
      {{200000, 16}, {0}},     // columns, fewer column chunks than calls: split by rows
      {{2, 70000, 24}, {1}},   // a middle dimension, split by rows
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
        // The magnitude sum |x| reaching each output, for the sums' bound.
        std::vector<double> abs_x(x.size());
        for (size_t i = 0; i < x.size(); ++i) abs_x[i] = std::fabs(static_cast<double>(x[i]));
        Array abs_in = ArrayOf(DType::kF64, c.dims, abs_x), zero = ArrayOf<double>(DType::kF64, {}, {0.0});
        Array magnitudes(DType::kF64, out_dims);
        RunKernel(Key("reduce_add", DType::kF64), {&abs_in, &zero}, {&magnitudes}, ReduceParams{.dimensions = c.reduced});
        // Column and middle-dimension layouts ([K, R, I], one reduced run before the last
        // dimension) split by rows when they have fewer column chunks (512 bytes) than calls.
        const bool column_layout = c.reduced.size() == 1 && c.reduced[0] + 1 < static_cast<int64_t>(c.dims.size());
        int64_t slabs = 1;
        for (int64_t d = 0; d < (column_layout ? c.reduced[0] : 0); ++d) slabs *= c.dims[static_cast<size_t>(d)];
        const int64_t chunk = 512 / static_cast<int64_t>(sizeof(T));
        const int64_t column_units = column_layout ? slabs * ((c.dims.back() + chunk - 1) / chunk) : 0;
        for (int parts : {2, 3, 4, 7}) {
          Array split(dtype, out_dims);
          RunSplit(Key(body, dtype), in, init, split, c.reduced, parts);
          for (int64_t i = 0; i < outputs; ++i) {
            const T a = ElementAt<T>(whole, i), b = ElementAt<T>(split, i);
            const bool by_rows = column_layout && column_units < parts;
            if (is_sum && (outputs == 1 || by_rows)) {
              // Pairwise partials of pairwise sums: within the pairwise bound.
              const double u = std::numeric_limits<T>::epsilon() / 2;
              const double bound = 2 * (40 + std::log2(static_cast<double>(n))) * u * ElementAt<double>(magnitudes, i);
              EXPECT_LE(std::fabs(static_cast<double>(a) - static_cast<double>(b)), bound)
                  << body << " parts " << parts << " n " << n << " output " << i;
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
  // Consecutive rows summed one after another (requests reaching into the next row):
  // each row's bits are PairwiseSum's, for lengths around the 128/1024-element groups.
  for (int64_t length : {1, 17, 128, 1000, 1024, 1031, 4096}) {
    const int64_t rows = 7;
    const std::vector<T> x = RandomValues<T>(rng, rows * length, false);
    std::vector<T> sums(static_cast<size_t>(rows));
    simd::PairwiseSumRows(x.data(), rows, length, sums.data());
    for (int64_t r = 0; r < rows; ++r)
      ASSERT_TRUE(SameBits(pairwise::Sum(x.data() + r * length, length), sums[static_cast<size_t>(r)]))
          << target << " rows of " << length << ", row " << r;
  }
  // simd::ReduceRows of `rows` rows (stride `stride`) into `start`, max and min, against the
  // scalar ops folded in row order, bit for bit.
  const auto check_rows = [&](const std::vector<T>& x, const std::vector<T>& start, int64_t rows, int64_t width,
                              int64_t stride, const std::string& what) {
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
        ASSERT_TRUE(SameBits(want[static_cast<size_t>(i)], got[static_cast<size_t>(i)]))
            << target << " " << what << ", column " << i;
    }
  };
  // Rows into a vector: 37 rows of width 300 (stride 320: whole strips of 8 vectors and a
  // tail at every level), NaNs, zeros and denormals included (in some strips only).
  const int64_t rows = 37, width = 300, stride = 320;
  check_rows(RandomValues<T>(rng, rows * stride, true), RandomValues<T>(rng, width, true), rows, width, stride, "rows");
  // Narrow columns (fewer whole vectors than a strip, rows taken in turn by the strip's
  // accumulators), with and without NaNs, zeros and denormals.
  for (int64_t narrow : {4, 8, 16, 24, 40, 100}) {
    for (bool specials : {false, true}) {
      const int64_t narrow_rows = 67;
      check_rows(RandomValues<T>(rng, narrow_rows * narrow, specials), RandomValues<T>(rng, narrow, false),
                 narrow_rows, narrow, narrow,
                 "narrow rows of " + std::to_string(narrow) + (specials ? " with specials" : ""));
    }
  }
  const std::vector<T> y = RandomValues<T>(rng, rows * stride, false);
  std::vector<T> want(static_cast<size_t>(width), T(0.25)), got = want;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i) want[static_cast<size_t>(i)] += y[static_cast<size_t>(r * stride + i)];
  simd::AddRows(got.data(), y.data(), stride, rows, width);
  for (int64_t i = 0; i < width; ++i)
    ASSERT_TRUE(SameBits(want[static_cast<size_t>(i)], got[static_cast<size_t>(i)])) << target << " add rows " << i;
}

template <typename T>
T IntFold(simd::ReduceOp op, T a, T b) {
  if (op == simd::ReduceOp::kAdd) return ops::AddOp::Apply(a, b);
  return op == simd::ReduceOp::kMax ? ops::MaxOp::Apply(a, b) : ops::MinOp::Apply(a, b);
}

template <typename T>
void CheckIntLoops(const std::string& target) {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int64_t> bits(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  for (simd::ReduceOp op : {simd::ReduceOp::kAdd, simd::ReduceOp::kMax, simd::ReduceOp::kMin}) {
    for (int64_t n : {0, 1, 7, 64, 129, 1000, 4099}) {
      std::vector<T> x(static_cast<size_t>(n));
      for (T& v : x) v = static_cast<T>(bits(rng));
      const T init = static_cast<T>(bits(rng));
      T want = init;
      for (T v : x) want = IntFold(op, want, v);
      ASSERT_EQ(want, simd::ReduceRow(op, init, x.data(), n)) << target << " row n " << n;
    }
    const int64_t rows = 37, width = 1100, stride = 1111;
    std::vector<T> x(static_cast<size_t>(rows * stride)), want(static_cast<size_t>(width));
    for (T& v : x) v = static_cast<T>(bits(rng));
    for (T& v : want) v = static_cast<T>(bits(rng));
    std::vector<T> got = want;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < width; ++i)
        want[static_cast<size_t>(i)] = IntFold(op, want[static_cast<size_t>(i)], x[static_cast<size_t>(r * stride + i)]);
    simd::ReduceRows(op, got.data(), x.data(), stride, rows, width);
    ASSERT_EQ(want, got) << target << " rows, op " << static_cast<int>(op);
  }
}

// Sums of bf16/f16 values widened on the fly: the bits of the f32 sum of the widened array.
TEST_F(ReduceSimdTest, WidenedHalfSumsEqualSumsOfWidenedValues) {
  std::mt19937 rng(41);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (int64_t n : {0, 1, 15, 16, 17, 127, 128, 1000, 1024, 2048, 3000, 65537}) {
      std::vector<uint16_t> bf(static_cast<size_t>(n)), hf(static_cast<size_t>(n));
      std::vector<float> wide_bf(static_cast<size_t>(n)), wide_hf(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const float v = normal(rng);
        bf[static_cast<size_t>(i)] = FloatToBF16(v).bits;
        hf[static_cast<size_t>(i)] = FloatToF16(i % 97 == 0 ? v * 1e-6f : v).bits;  // some f16 denormals
        wide_bf[static_cast<size_t>(i)] = BF16ToFloat(BF16{bf[static_cast<size_t>(i)]});
        wide_hf[static_cast<size_t>(i)] = F16ToFloat(F16{hf[static_cast<size_t>(i)]});
      }
      ASSERT_TRUE(SameBits(simd::PairwiseSum(wide_bf.data(), n), simd::PairwiseSumWidened(true, bf.data(), n)))
          << simd::CurrentTarget() << " bf16 n " << n;
      ASSERT_TRUE(SameBits(simd::PairwiseSum(wide_hf.data(), n), simd::PairwiseSumWidened(false, hf.data(), n)))
          << simd::CurrentTarget() << " f16 n " << n;
    }
  }
}

// Rows cut into segments, split across calls: each output is start + the widened pairwise
// sum of its run (the last run shorter).
TEST(ReduceSplitTest, WidenedRowsAndSegments) {
  std::mt19937 rng(43);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 5, length = 10001;
  std::vector<uint16_t> x(static_cast<size_t>(rows * length));
  for (uint16_t& v : x) v = FloatToBF16(normal(rng)).bits;
  for (int64_t segments : {1, 3}) {
    const int64_t per = (length + segments - 1) / segments;
    const float start = segments == 1 ? 0.5f : -0.0f;
    for (int parts : {1, 2, 3}) {
      std::vector<float> out(static_cast<size_t>(rows * segments), 7.0f);
      for (int i = 0; i < parts; ++i)
        SumWidenedRows(KernelContext{i, parts}, true, x.data(), rows, length, segments, start, out.data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t s = 0; s < segments; ++s) {
          const int64_t a = std::min(length, s * per), b = std::min(length, a + per);
          std::vector<float> wide;
          for (int64_t k = a; k < b; ++k) wide.push_back(BF16ToFloat(BF16{x[static_cast<size_t>(r * length + k)]}));
          const float want = start + simd::PairwiseSum(wide.data(), b - a);
          ASSERT_TRUE(SameBits(want, out[static_cast<size_t>(r * segments + s)])) << segments << " " << parts;
        }
    }
  }
}

TEST_F(ReduceSimdTest, IntegerLoopsEqualScalarAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    CheckIntLoops<int8_t>(target);
    CheckIntLoops<uint8_t>(target);
    CheckIntLoops<int16_t>(target);
    CheckIntLoops<uint16_t>(target);
    CheckIntLoops<int32_t>(target);
    CheckIntLoops<uint32_t>(target);
    CheckIntLoops<int64_t>(target);
    CheckIntLoops<uint64_t>(target);
  }
}

// Integer reductions: one call and split calls equal the in-order fold, for every body.
template <typename T>
void CheckIntegerReductions(DType dtype) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int64_t> bits(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  const Case cases[] = {{{600, 1000}, {1}}, {{1000, 600}, {0}}, {{700001}, {0}}, {{40, 70, 200}, {1}}, {{64, 80, 64}, {0, 2}}};
  for (const char* body : {"reduce_add", "reduce_max", "reduce_min", "reduce_mul", "reduce_and", "reduce_or"}) {
    const std::string name = body;
    auto fold = [&](T a, T b) -> T {
      if (name == "reduce_add") return ops::AddOp::Apply(a, b);
      if (name == "reduce_max") return ops::MaxOp::Apply(a, b);
      if (name == "reduce_min") return ops::MinOp::Apply(a, b);
      if (name == "reduce_mul") return ops::MultiplyOp::Apply(a, b);
      if (name == "reduce_and") return ops::AndOp::Apply(a, b);
      return ops::OrOp::Apply(a, b);
    };
    for (const Case& c : cases) {
      int64_t n = 1;
      for (int64_t d : c.dims) n *= d;
      std::vector<T> x(static_cast<size_t>(n));
      // Products of random values are 0 after a few dozen factors: mostly odd small values.
      for (T& v : x) v = name == "reduce_mul" ? static_cast<T>(2 * (bits(rng) & 3) + 1) : static_cast<T>(bits(rng));
      const T init_value = name == "reduce_mul" ? T(1) : static_cast<T>(bits(rng));
      Array in = ArrayOf(dtype, c.dims, x);
      Array init = ArrayOf<T>(dtype, {}, {init_value});
      Dims out_dims;
      std::vector<int64_t> out_of(static_cast<size_t>(n)), strides(c.dims.size());
      int64_t stride = 1;
      for (size_t d = c.dims.size(); d-- > 0;) {
        if (std::find(c.reduced.begin(), c.reduced.end(), static_cast<int64_t>(d)) != c.reduced.end()) continue;
        strides[d] = stride;
        stride *= c.dims[d];
      }
      for (size_t d = 0; d < c.dims.size(); ++d)
        if (std::find(c.reduced.begin(), c.reduced.end(), static_cast<int64_t>(d)) == c.reduced.end())
          out_dims.push_back(c.dims[d]);
      std::vector<T> want(static_cast<size_t>(stride), init_value);
      for (int64_t i = 0; i < n; ++i) {
        int64_t rest = i, o = 0;
        for (size_t d = c.dims.size(); d-- > 0;) {
          o += (rest % c.dims[d]) * strides[d];
          rest /= c.dims[d];
        }
        want[static_cast<size_t>(o)] = fold(want[static_cast<size_t>(o)], x[static_cast<size_t>(i)]);
      }
      Array whole(dtype, out_dims);
      RunKernel(Key(body, dtype), {&in, &init}, {&whole}, ReduceParams{.dimensions = c.reduced});
      for (int64_t i = 0; i < stride; ++i) ASSERT_EQ(want[static_cast<size_t>(i)], ElementAt<T>(whole, i)) << body << " " << i;
      for (int parts : {2, 3}) {
        Array split(dtype, out_dims);
        RunSplit(Key(body, dtype), in, init, split, c.reduced, parts);
        for (int64_t i = 0; i < stride; ++i)
          ASSERT_EQ(want[static_cast<size_t>(i)], ElementAt<T>(split, i)) << body << " parts " << parts << " " << i;
      }
    }
  }
}

TEST(ReduceSplitTest, IntegerReductionsS32) { CheckIntegerReductions<int32_t>(DType::kS32); }
TEST(ReduceSplitTest, IntegerReductionsU8) { CheckIntegerReductions<uint8_t>(DType::kU8); }
TEST(ReduceSplitTest, IntegerReductionsS64) { CheckIntegerReductions<int64_t>(DType::kS64); }

// Column and middle-dimension sums are their definition: per output, init, then rows in
// leaves of 32 (the first leaf starting from init) combined pairwise (ScalarCascade).
TEST(ReduceSplitTest, MiddleAndColumnSumsAreLeavesCombinedPairwise) {
  std::mt19937 rng(5);
  const Case cases[] = {{{1000, 600}, {0}}, {{40, 70, 200}, {1}}, {{3, 300, 700}, {1}}, {{2, 33, 5}, {1}}};
  for (const Case& c : cases) {
    const int64_t slabs = c.dims.size() == 3 ? c.dims[0] : 1, rows = c.dims[c.dims.size() - 2],
                  width = c.dims.back();
    const std::vector<float> x = RandomValues<float>(rng, slabs * rows * width, false);
    Array in = ArrayOf(DType::kF32, c.dims, x);
    Array init = ArrayOf<float>(DType::kF32, {}, {0.5f});
    Dims out_dims = c.dims.size() == 3 ? Dims{slabs, width} : Dims{width};
    Array whole(DType::kF32, out_dims), split(DType::kF32, out_dims);
    RunKernel(Key("reduce_add", DType::kF32), {&in, &init}, {&whole}, ReduceParams{.dimensions = c.reduced});
    RunSplit(Key("reduce_add", DType::kF32), in, init, split, c.reduced, 2);
    for (int64_t s = 0; s < slabs; ++s)
      for (int64_t i = 0; i < width; ++i) {
        pairwise::ScalarCascade<float> cascade(pairwise::kLeafRows, 0.5f);
        for (int64_t r = 0; r < rows; ++r) cascade.Push(x[static_cast<size_t>((s * rows + r) * width + i)]);
        const float want = cascade.Result();
        ASSERT_TRUE(SameBits(want, ElementAt<float>(whole, s * width + i))) << s << " " << i;
        ASSERT_TRUE(SameBits(want, ElementAt<float>(split, s * width + i))) << s << " " << i;
      }
  }
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
