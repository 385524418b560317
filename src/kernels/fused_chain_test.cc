// Fused steps whose f32 sub-ops run as one chain program (simd/chain_simd.h): byte for byte
// the sub-ops run one by one (what the per-op tile path computes), at every vector level the
// CPU has, with NaN, signed zeros, infinities, denormals and out-of-domain values among the
// inputs, at lengths that end in partial blocks and tiles, over several calls (threads), with
// uniform operands (splats, rank-0 scalars, row broadcasts within and across rows), internal
// values, outputs read by later sub-ops and a fused reduction after the chain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "base/env.h"
#include "kernels/fused_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"
#include "kernels/simd/dispatch.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::RunKernel;

constexpr env::Isa kLevels[] = {env::Isa::kAvx512, env::Isa::kAvx2, env::Isa::kSse4};

class FusedChainTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// Values in [-6, 6] with every 7th element (from seed % 7) a special value. Arrays of
// different seeds % 7 never hold NaN at the same element: a binary op of two NaNs returns
// one of them, and which one is the compiler's choice of operand order (x86 returns the
// first source's NaN; add, multiply, maximum and minimum may be commuted), in the per-op
// loops as in the chain; one NaN operand gives that NaN (quieted) on every path.
Array Values(Dims dims, uint32_t seed) {
  static const float kSpecials[] = {std::numeric_limits<float>::quiet_NaN(),
                                    -std::numeric_limits<float>::quiet_NaN(),
                                    0.0f,
                                    -0.0f,
                                    std::numeric_limits<float>::infinity(),
                                    -std::numeric_limits<float>::infinity(),
                                    1e-40f,
                                    -3e-39f,
                                    std::numeric_limits<float>::min(),
                                    std::numeric_limits<float>::max(),
                                    -std::numeric_limits<float>::max(),
                                    100.0f,
                                    -100.0f,
                                    88.9f,
                                    -90.0f,
                                    1.0f,
                                    -1.0f,
                                    0.999999f,
                                    25.0f,
                                    1e-30f};
  Array a(DType::kF32, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-6, 6);
  std::uniform_int_distribution<size_t> pick(0, std::size(kSpecials) - 1);
  auto* x = reinterpret_cast<float*>(a.bytes.data());
  for (int64_t i = 0; i < a.size(); ++i) x[i] = i % 7 == seed % 7 ? kSpecials[pick(rng)] : real(rng);
  return a;
}

// The first element where two f32 arrays' bytes differ, described ("" if none).
std::string FirstDifference(const Array& got, const Array& want, const Array* input = nullptr) {
  const auto* g = reinterpret_cast<const uint32_t*>(got.bytes.data());
  const auto* w = reinterpret_cast<const uint32_t*>(want.bytes.data());
  for (int64_t i = 0; i < want.size(); ++i) {
    if (g[i] == w[i]) continue;
    float gf, wf;
    std::memcpy(&gf, &g[i], 4);
    std::memcpy(&wf, &w[i], 4);
    std::string text = "element " + std::to_string(i) + " of " + std::to_string(want.size()) + ": " +
                       std::to_string(gf) + " (" + std::to_string(g[i]) + ") vs " + std::to_string(wf) + " (" +
                       std::to_string(w[i]) + ")";
    if (input != nullptr) text += " input " + std::to_string(reinterpret_cast<const float*>(input->bytes.data())[i]);
    return text;
  }
  return "";
}

void RunFused(const FusedParams& params, const std::vector<BufferView>& inputs, const std::vector<Array*>& outputs,
              int threads) {
  testing::RunKernelSplit("fused", &params, inputs, outputs, threads);
}

FusedOp Op(std::string kernel, std::vector<int64_t> in, int64_t out) {
  return FusedOp{std::move(kernel), std::move(in), out, {}, ""};
}

const char* const kUnary[] = {"negate", "abs", "exponential", "exponential_minus_one", "log", "log_plus_one",
                              "tanh", "logistic", "sqrt", "rsqrt", "erf"};
const char* const kBinary[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};

// Every covered op, on raw inputs (specials included) and on internal values: slots 0 x,
// 1 y (dense), 2 s (a splat view), 3 r (a row broadcast [rows, length], strides [1, 0]),
// 4 t = x * y (internal); per unary op u(x) and u(t + s); per binary op b(x, y), b(s, x),
// b(x, r) and b(r, t). Outputs: every computed slot but t.
void CheckAllOps(int64_t rows, int64_t length, const std::string& target) {
  SCOPED_TRACE(target + " rows " + std::to_string(rows) + " length " + std::to_string(length));
  const int64_t n = rows * length;
  const Dims dims = {rows, length};
  Array x = Values(dims, 1), y = Values(dims, 2), one = Values({1}, 3), per_row = Values({rows}, 4);
  reinterpret_cast<float*>(one.bytes.data())[0] = -0.75f;
  for (int64_t i = 0; i < rows; ++i) {  // a NaN row would meet x's NaNs
    float& v = reinterpret_cast<float*>(per_row.bytes.data())[i];
    if (std::isnan(v)) v = 2.0f;
  }
  const std::vector<int64_t> splat_strides = {0, 0}, row_strides = {1, 0};
  BufferView s_view = one.View(), r_view = per_row.View();
  s_view.dims = dims, s_view.num_elements = n, s_view.strides = splat_strides;
  r_view.dims = dims, r_view.num_elements = n, r_view.strides = row_strides;
  Array s(DType::kF32, dims), r(DType::kF32, dims);
  GatherViewElements(s_view, 0, n, s.bytes.data());
  GatherViewElements(r_view, 0, n, r.bytes.data());

  FusedParams params;
  params.num_elements = n;
  std::vector<Array> ref;  // the sub-ops one by one, slot by slot from 4
  ref.reserve(64);
  std::vector<const Array*> slot = {&x, &y, &s, &r};
  auto add = [&](const std::string& name, std::vector<int64_t> in) {
    const int64_t out = static_cast<int64_t>(slot.size());
    params.ops.push_back(Op(name + ".f32", in, out));
    ref.emplace_back(DType::kF32, dims);
    std::vector<const Array*> args;
    for (int64_t k : in) args.push_back(slot[static_cast<size_t>(k)]);
    RunKernel(name + ".f32", args, {&ref.back()});
    slot.push_back(&ref.back());
    return out;
  };
  const int64_t t = add("multiply", {0, 1});
  const int64_t ts = add("add", {t, 2});
  for (const char* u : kUnary) {
    add(u, {0});
    add(u, {ts});
  }
  for (const char* b : kBinary) {
    add(b, {0, 1});
    add(b, {2, 0});
    add(b, {0, 3});
  }
  ASSERT_LE(slot.size(), 48u);
  params.slot_dtypes.assign(slot.size(), static_cast<int64_t>(DType::kF32));
  for (int64_t k = t + 1; k < static_cast<int64_t>(slot.size()); ++k) params.output_slots.push_back(k);
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<Array> got;
    got.reserve(slot.size());
    std::vector<Array*> outs;
    for (size_t k = 0; k < params.output_slots.size(); ++k) outs.push_back(&got.emplace_back(DType::kF32, dims));
    RunFused(params, {x.View(), y.View(), s_view, r_view}, outs, threads);
    for (size_t k = 0; k < params.output_slots.size(); ++k) {
      const auto& op = params.ops[static_cast<size_t>(params.output_slots[k] - 4)];
      EXPECT_EQ(FirstDifference(got[k], *slot[static_cast<size_t>(params.output_slots[k])],
                                slot[static_cast<size_t>(op.inputs[0])]), "")
          << op.kernel << " of slots " << op.inputs[0] << ", " << op.inputs.back();
    }
  }
}

TEST_F(FusedChainTest, EveryOpEqualsSubOpsOneByOneAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    // One element; partial blocks; rows shorter than a tile (row broadcasts filled) and
    // longer (one value per tile); a step of 1 KiB tiles (>= 2^18 elements).
    for (auto [rows, length] : {std::pair<int64_t, int64_t>{1, 1}, {1, 5}, {3, 67}, {5, 1029}, {2, 3001},
                                {1, (int64_t{1} << 18) + 77}})
      CheckAllOps(rows, length, target);
  }
}

// tanh(a * b + c), a * b also an output and read on, a splat operand, and a sum of the
// chain's last value fused after it (the reduced slot is stored for the reduction); the same
// step with one sub-op the evaluator lacks (sign) runs on the per-op tile path.
TEST_F(FusedChainTest, TanhChainWithOutputReadOnAndReductionAtEveryLevel) {
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    SCOPED_TRACE(simd::CurrentTarget());
    for (int64_t length : {int64_t{3}, int64_t{250}, int64_t{4099}}) {
      const int64_t rows = 7, n = rows * length;
      const Dims dims = {rows, length};
      Array a = Values(dims, 11), b = Values(dims, 12), c = Values(dims, 13), k = Values({1}, 14), init(DType::kF32, {});
      reinterpret_cast<float*>(k.bytes.data())[0] = 0.5f;
      const std::vector<int64_t> splat_strides = {0, 0};
      BufferView k_view = k.View();
      k_view.dims = dims, k_view.num_elements = n, k_view.strides = splat_strides;
      std::memset(init.bytes.data(), 0, 4);
      Array kk(DType::kF32, dims);
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(kk.bytes.data())[i] = 0.5f;
      Array ab(DType::kF32, dims), abc(DType::kF32, dims), th(DType::kF32, dims), sc(DType::kF32, dims),
          sum(DType::kF32, {rows});
      RunKernel("multiply.f32", {&a, &b}, {&ab});
      RunKernel("add.f32", {&ab, &c}, {&abc});
      RunKernel("tanh.f32", {&abc}, {&th});
      RunKernel("multiply.f32", {&th, &kk}, {&sc});
      FusedParams params;
      params.num_elements = n;
      params.slot_dtypes.assign(8, static_cast<int64_t>(DType::kF32));
      params.ops = {Op("multiply.f32", {0, 1}, 4), Op("add.f32", {4, 2}, 5), Op("tanh.f32", {5}, 6),
                    Op("multiply.f32", {6, 3}, 7)};
      params.output_slots = {4, 6};
      params.reduce = {FusedReduce{"reduce_add.f32", 7, rows, length, 1}};
      Array got_ab(DType::kF32, dims), got_th(DType::kF32, dims), got_sum(DType::kF32, {rows});
      RunFused(params, {a.View(), b.View(), c.View(), k_view, init.View()}, {&got_ab, &got_th, &got_sum}, 2);
      EXPECT_EQ(FirstDifference(got_ab, ab), "");
      EXPECT_EQ(FirstDifference(got_th, th, &abc), "");
      // The sum as the fused reduction computes it on the tile path (fused_test.cc checks that
      // against the reduce kernel); here: the same bytes with and without the chain.
      FusedParams tile_params = params;
      tile_params.ops.push_back(Op("sign.f32", {7}, 8));  // not covered: the whole step on tiles
      tile_params.slot_dtypes.push_back(static_cast<int64_t>(DType::kF32));
      tile_params.output_slots.push_back(8);
      Array tile_ab(DType::kF32, dims), tile_th(DType::kF32, dims), tile_sign(DType::kF32, dims),
          tile_sum(DType::kF32, {rows});
      RunFused(tile_params, {a.View(), b.View(), c.View(), k_view, init.View()},
               {&tile_ab, &tile_th, &tile_sign, &tile_sum}, 2);
      EXPECT_EQ(FirstDifference(tile_th, th, &abc), "");
      Array want_sum(DType::kF32, {rows});
      RunKernel("reduce_add.f32", {&sc, &init}, {&want_sum}, ReduceParams{{1}});
      if (length <= 256) {  // a row within one tile: summed as the reduce kernel sums it
        EXPECT_EQ(FirstDifference(got_sum, want_sum), "");
        EXPECT_EQ(FirstDifference(tile_sum, want_sum), "");
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const float have = reinterpret_cast<const float*>(got_sum.bytes.data())[r];
          const float want = reinterpret_cast<const float*>(want_sum.bytes.data())[r];
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(have)) << r;
          else EXPECT_NEAR(have, want, 1e-3 * (1 + std::abs(want))) << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace stablert::kernels
