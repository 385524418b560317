// Cross-checks reduce and dot kernels against naive loops.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/dot_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT
using Int128 = __int128;
using UInt128 = unsigned __int128;

uint64_t Random64(std::mt19937& rng) { return (static_cast<uint64_t>(rng()) << 32) | rng(); }

// The value `v` takes once wrapped to `d` (for pred: 0 or 1 already).
Int128 Normalize(Int128 v, DType d) {
  Array a(d, {1});
  SetInt(a, 0, static_cast<int64_t>(static_cast<uint64_t>(static_cast<UInt128>(v))));
  int64_t raw = GetInt(a, 0);
  return DTypeKindOf(d) == DTypeKind::kSigned ? Int128(raw) : Int128(static_cast<uint64_t>(raw));
}

struct Body {
  const char* name;
  bool ints, floats, pred;
};
const Body kBodies[] = {{"add", true, true, true},  {"mul", true, true, true}, {"max", true, true, true},
                        {"min", true, true, true},  {"and", true, false, true}, {"or", true, false, true}};
const DType kTypes[] = {DType::kPred, DType::kS8,  DType::kS16, DType::kS32, DType::kS64, DType::kU8,  DType::kU16,
                        DType::kU32,  DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64};

double FloatBody(const std::string& body, double a, double b) {
  if (body == "add") return a + b;
  if (body == "mul") return a * b;
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (body == "max") return (a > b || (a == b && !std::signbit(a))) ? a : b;
  return (a < b || (a == b && std::signbit(a))) ? a : b;
}
Int128 IntBody(const std::string& body, Int128 a, Int128 b) {
  if (body == "add") return a + b;
  if (body == "mul") return static_cast<Int128>(static_cast<UInt128>(a) * static_cast<UInt128>(b));
  if (body == "max") return a > b ? a : b;
  if (body == "min") return a < b ? a : b;
  if (body == "and") return a & b;
  return a | b;
}

TEST(ReduceTest, EveryBodyAndDtypeOverRandomDims) {
  std::mt19937 rng(21);
  for (const Body& body : kBodies) {
    for (DType dtype : kTypes) {
      bool is_float = IsFloat(dtype);
      if ((is_float && !body.floats) || (dtype == DType::kPred && !body.pred) || (IsInteger(dtype) && !body.ints))
        continue;
      for (int trial = 0; trial < 25; ++trial) {
        int rank = static_cast<int>(rng() % 5);
        Dims dims(static_cast<size_t>(rank));
        for (int64_t& d : dims) d = static_cast<int64_t>(rng() % 5) + (rng() % 10 == 0 ? 0 : 1);
        std::vector<int64_t> reduced;
        Dims out_dims;
        for (int d = 0; d < rank; ++d) {
          if (rng() % 2) reduced.push_back(d);
          else out_dims.push_back(dims[static_cast<size_t>(d)]);
        }
        Array in(dtype, dims), init(dtype, {}), out(dtype, out_dims);
        for (int64_t i = 0; i < in.size(); ++i) {
          if (is_float) SetDouble(in, i, body.name == std::string("mul") ? 0.5 + (rng() % 100) / 64.0 : (rng() % 2001) / 100.0 - 10);
          else if (dtype == DType::kPred) SetInt(in, i, rng() % 4 != 0);
          else SetInt(in, i, static_cast<int64_t>(Random64(rng) >> (rng() % 64)));
        }
        if (is_float) SetDouble(init, 0, body.name == std::string("mul") ? 1.0 : body.name == std::string("add") ? 0.5 : -1e30);
        else SetInt(init, 0, body.name == std::string("and") || body.name == std::string("min") ? -1 : 1);
        std::string key = "reduce_" + std::string(body.name) + "." + std::string(DTypeName(dtype));
        RunKernel(key, {&in, &init}, {&out}, ReduceParams{.dimensions = reduced});

        // Naive: visit every input element, find its output position.
        std::vector<double> facc(static_cast<size_t>(out.size()), is_float ? GetDouble(init, 0) : 0);
        std::vector<double> fabs_sum(static_cast<size_t>(out.size()), 0);
        std::vector<Int128> iacc(static_cast<size_t>(out.size()));
        auto math = [&](const Array& a, int64_t i) -> Int128 {
          int64_t raw = GetInt(a, i);
          return DTypeKindOf(dtype) == DTypeKind::kSigned ? Int128(raw) : Int128(static_cast<uint64_t>(raw));
        };
        if (!is_float) for (auto& v : iacc) v = math(init, 0);
        Dims index(dims.size(), 0);
        for (int64_t i = 0; i < in.size(); ++i) {
          int64_t o = 0;
          for (size_t d = 0; d < dims.size(); ++d)
            if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end())
              o = o * dims[d] + index[d];
          if (is_float) {
            double next = FloatBody(body.name, facc[static_cast<size_t>(o)], GetDouble(in, i));
            if (dtype == DType::kF16 || dtype == DType::kBF16) {  // rounded after every step
              Array step(dtype, {1});
              SetDouble(step, 0, next);
              next = GetDouble(step, 0);
            }
            facc[static_cast<size_t>(o)] = next;
            fabs_sum[static_cast<size_t>(o)] += std::fabs(GetDouble(in, i));
          } else {
            Int128 v = math(in, i);
            if (dtype == DType::kPred && std::string(body.name) == "add") iacc[static_cast<size_t>(o)] |= v;
            else if (dtype == DType::kPred && std::string(body.name) == "mul") iacc[static_cast<size_t>(o)] &= v;
            else iacc[static_cast<size_t>(o)] = IntBody(body.name, iacc[static_cast<size_t>(o)], v);
            iacc[static_cast<size_t>(o)] = Normalize(iacc[static_cast<size_t>(o)], dtype);
          }
          for (size_t d = dims.size(); d-- > 0;) {
            if (++index[d] < dims[d]) break;
            index[d] = 0;
          }
        }
        for (int64_t o = 0; o < out.size(); ++o) {
          if (is_float) {
            double tolerance = Tolerance(dtype) * 4 * (fabs_sum[static_cast<size_t>(o)] + std::fabs(facc[static_cast<size_t>(o)]));
            Array expected(dtype, {1});
            SetDouble(expected, 0, facc[static_cast<size_t>(o)]);
            ASSERT_TRUE(FloatsMatch(GetDouble(out, o), GetDouble(expected, 0), Tolerance(dtype) * 4, tolerance))
                << key << " at " << o << ": " << GetDouble(out, o) << " vs " << GetDouble(expected, 0);
          } else {
            ASSERT_TRUE(math(out, o) == iacc[static_cast<size_t>(o)]) << key << " at " << o;
          }
        }
      }
    }
  }
}

TEST(ReduceTest, NanPropagatesThroughMaxAndZeroSizedReductionGivesInit) {
  Array in(DType::kF32, {2, 3}), init(DType::kF32, {}), out(DType::kF32, {2});
  for (int i = 0; i < 6; ++i) SetDouble(in, i, i);
  SetDouble(in, 4, NAN);
  SetDouble(init, 0, -INFINITY);
  RunKernel("reduce_max.f32", {&in, &init}, {&out}, ReduceParams{.dimensions = {1}});
  EXPECT_EQ(GetDouble(out, 0), 2.0);
  EXPECT_TRUE(std::isnan(GetDouble(out, 1)));
  Array empty(DType::kF32, {0, 3}), out3(DType::kF32, {3});
  SetDouble(init, 0, 7.0);
  RunKernel("reduce_add.f32", {&empty, &init}, {&out3}, ReduceParams{.dimensions = {0}});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(GetDouble(out3, i), 7.0);
}

TEST(DotTest, AllLayoutsMatchNaiveProduct) {
  std::mt19937 rng(31);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (int trial = 0; trial < 60; ++trial) {
      int64_t b = 1 + rng() % 3, m = rng() % 9, n = rng() % 9, k = rng() % 40;
      for (int lhs_bkm = 0; lhs_bkm < 2; ++lhs_bkm) {
        for (int rhs_bnk = 0; rhs_bnk < 2; ++rhs_bnk) {
          Array lhs(dtype, lhs_bkm ? Dims{b, k, m} : Dims{b, m, k});
          Array rhs(dtype, rhs_bnk ? Dims{b, n, k} : Dims{b, k, n});
          Array out(dtype, {b, m, n});
          for (int64_t i = 0; i < lhs.size(); ++i) SetDouble(lhs, i, (rng() % 200) / 10.0 - 10);
          for (int64_t i = 0; i < rhs.size(); ++i) SetDouble(rhs, i, (rng() % 200) / 10.0 - 10);
          RunKernel(Key("dot", dtype), {&lhs, &rhs}, {&out}, DotParams{.lhs_is_bkm = lhs_bkm != 0, .rhs_is_bnk = rhs_bnk != 0});
          for (int64_t bi = 0; bi < b; ++bi)
            for (int64_t mi = 0; mi < m; ++mi)
              for (int64_t ni = 0; ni < n; ++ni) {
                double sum = 0, magnitude = 0;
                for (int64_t ki = 0; ki < k; ++ki) {
                  double l = GetDouble(lhs, lhs_bkm ? (bi * k + ki) * m + mi : (bi * m + mi) * k + ki);
                  double r = GetDouble(rhs, rhs_bnk ? (bi * n + ni) * k + ki : (bi * k + ki) * n + ni);
                  sum += l * r;
                  magnitude += std::fabs(l * r);
                }
                double got = GetDouble(out, (bi * m + mi) * n + ni);
                ASSERT_NEAR(got, sum, (dtype == DType::kF32 || dtype == DType::kF64 ? Tolerance(dtype) * 4 * (magnitude + 1)
                                                                                   : Tolerance(dtype) * std::fabs(sum) + 1e-6 * (magnitude + 1)))
                    << DTypeName(dtype) << " lhs_bkm=" << lhs_bkm << " rhs_bnk=" << rhs_bnk;
              }
        }
      }
    }
  }
}

TEST(DotTest, IntegersWrap) {
  std::mt19937 rng(32);
  for (DType dtype : {DType::kS8, DType::kU8, DType::kS32, DType::kU64}) {
    Array lhs(dtype, {2, 3, 17}), rhs(dtype, {2, 17, 4}), out(dtype, {2, 3, 4});
    for (uint8_t& b : lhs.bytes) b = static_cast<uint8_t>(rng());
    for (uint8_t& b : rhs.bytes) b = static_cast<uint8_t>(rng());
    RunKernel(Key("dot", dtype), {&lhs, &rhs}, {&out}, DotParams{});
    for (int64_t bi = 0; bi < 2; ++bi)
      for (int64_t m = 0; m < 3; ++m)
        for (int64_t n = 0; n < 4; ++n) {
          unsigned __int128 sum = 0;
          for (int64_t k = 0; k < 17; ++k)
            sum += static_cast<unsigned __int128>(GetInt(lhs, (bi * 3 + m) * 17 + k)) *
                   static_cast<unsigned __int128>(GetInt(rhs, (bi * 17 + k) * 4 + n));
          Array want(dtype, {1});
          SetInt(want, 0, static_cast<int64_t>(static_cast<uint64_t>(sum)));
          ASSERT_EQ(GetInt(out, (bi * 3 + m) * 4 + n), GetInt(want, 0)) << DTypeName(dtype);
        }
  }
}

}  // namespace
}  // namespace stablert::kernels
