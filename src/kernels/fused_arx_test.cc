// Add-rotate-xor chains in fused steps: the Threefry-2x32 chain as JAX lowers it is found as
// one chain and gives kernels/rng_bits.h's Threefry2x32 bit for bit (every ISA level, tails,
// thread splits, run-time keys); chains whose inner values are read elsewhere are not
// taken, and those steps still compute the sub-ops' results.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "base/env.h"
#include "kernels/fused_arx.h"
#include "kernels/fused_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/registry.h"
#include "kernels/rng_bits.h"
#include "kernels/simd/arx_simd.h"
#include "kernels/simd/dispatch.h"

namespace stablert::kernels {
namespace {

using testing::Array;

constexpr int64_t kU32 = static_cast<int64_t>(DType::kU32);

FusedOp Op(std::string kernel, std::vector<int64_t> in, int64_t out) {
  return FusedOp{std::move(kernel), std::move(in), out, {}, ""};
}

// The Threefry-2x32 chain in JAX's op order (jax._src.prng threefry2x32 lowering, unrolled):
// slots 0, 1 the counter words, 2, 3 the key words, 4 the third key word (k0 ^ k1 ^ C),
// then constant splats (rotation amounts, 32 - amounts, injection counts 1..5) and the
// computed values. Outputs: the final x0, x1.
struct ThreefryChain {
  FusedParams params;
  std::vector<uint32_t> constants;  // constant slot k (from 5) holds constants[k - 5]
  std::vector<int64_t> outputs;
  int64_t first_constant = 5;
  std::vector<size_t> round_add_ops;  // the op index of each round's add
};

ThreefryChain BuildThreefry(int64_t n) {
  ThreefryChain c;
  FusedParams& p = c.params;
  p.num_elements = n;
  p.slot_dtypes.assign(5, kU32);
  std::map<uint32_t, int64_t> constant_slot;
  auto constant = [&](uint32_t v) {
    auto it = constant_slot.find(v);
    if (it != constant_slot.end()) return it->second;
    c.constants.push_back(v);
    p.slot_dtypes.push_back(kU32);
    return constant_slot[v] = static_cast<int64_t>(p.slot_dtypes.size()) - 1;
  };
  const uint32_t rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  for (auto& group : rotations)
    for (uint32_t r : group) constant(r), constant(32 - r);
  for (uint32_t i = 1; i <= 5; ++i) constant(i);
  auto value = [&]() {
    p.slot_dtypes.push_back(kU32);
    return static_cast<int64_t>(p.slot_dtypes.size()) - 1;
  };
  auto op = [&](const char* kernel, int64_t a, int64_t b) {
    const int64_t out = value();
    p.ops.push_back(Op(kernel, {a, b}, out));
    return out;
  };
  const int64_t ks[3] = {2, 3, 4};
  int64_t x0 = op("add.ui32", 0, ks[0]);
  int64_t x1 = op("add.ui32", 1, ks[1]);
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      const uint32_t rot = rotations[group % 2][r];
      c.round_add_ops.push_back(p.ops.size());
      x0 = op("add.ui32", x0, x1);
      const int64_t l = op("shift_left.ui32", x1, constant(rot));
      const int64_t h = op("shift_right_logical.ui32", x1, constant(32 - rot));
      x1 = op("xor.ui32", x0, op("or.ui32", l, h));
    }
    x0 = op("add.ui32", x0, ks[(group + 1) % 3]);
    x1 = op("add.ui32", op("add.ui32", x1, ks[(group + 2) % 3]), constant(static_cast<uint32_t>(group + 1)));
  }
  p.output_slots = {x0, x1};
  c.outputs = {x0, x1};
  return c;
}

std::vector<ArxSlot> Slots(const ThreefryChain& c) {
  std::vector<ArxSlot> slots(c.params.slot_dtypes.size());
  for (int64_t s = 2; s < 5; ++s) slots[s].uniform = true;
  for (size_t k = 0; k < c.constants.size(); ++k) {
    ArxSlot& s = slots[c.first_constant + k];
    s.uniform = s.constant = true;
    s.value = c.constants[k];
  }
  for (int64_t s : c.params.output_slots) slots[s].external = true;
  return slots;
}

TEST(FusedArxTest, FindsJaxThreefryAsOneChain) {
  const ThreefryChain c = BuildThreefry(100);
  const auto chains = FindArxChains(c.params, Slots(c));
  ASSERT_EQ(chains.size(), 1u);
  const ArxChainOp& chain = chains[0];
  EXPECT_EQ(chain.first_op, 0u);
  EXPECT_EQ(chain.last_op, c.params.ops.size() - 1);
  EXPECT_EQ(chain.x0_in, 0);
  EXPECT_EQ(chain.x1_in, 1);
  EXPECT_EQ(chain.x0_out, c.outputs[0]);
  EXPECT_EQ(chain.x1_out, c.outputs[1]);
  int rounds = 0;
  for (const auto& step : chain.steps) rounds += step.kind == simd::ArxKind::kRound;
  EXPECT_EQ(rounds, 20);
  EXPECT_EQ(chain.steps.size(), 2u + 20u + 15u);
}

TEST(FusedArxTest, RotationsMustBeConstantAndSumToTheWidth) {
  ThreefryChain c = BuildThreefry(100);
  std::vector<ArxSlot> slots = Slots(c);
  slots[c.first_constant].value += 1;  // 13 -> 14: 14 + 19 != 32, the rounds using it break the chain
  auto chains = FindArxChains(c.params, slots);
  for (const auto& chain : chains)
    for (size_t i = chain.first_op; i <= chain.last_op; ++i)
      EXPECT_NE(c.params.ops[i].inputs[1], c.first_constant) << "op " << i;
  slots = Slots(c);
  for (size_t k = 0; k < c.constants.size(); ++k) slots[c.first_constant + k].constant = false;
  EXPECT_TRUE(FindArxChains(c.params, slots).empty());
}

TEST(FusedArxTest, ValuesReadOutsideTheChainEndIt) {
  ThreefryChain c = BuildThreefry(100);
  // A round's add (an inner x0) is also a step output: no chain may contain its round.
  const size_t add_op = c.round_add_ops[10];
  c.params.output_slots.push_back(c.params.ops[add_op].output);
  std::vector<ArxSlot> slots = Slots(c);
  slots[static_cast<size_t>(c.params.ops[add_op].output)].external = true;
  EXPECT_GE(FindArxChains(c.params, slots).size(), 2u);  // the rounds before and after still chain
  const int64_t read = c.params.ops[add_op].output;
  for (const auto& chain : FindArxChains(c.params, slots)) {
    for (size_t i = chain.first_op; i <= chain.last_op; ++i) {
      if (c.params.ops[i].output == read) {
        EXPECT_TRUE(read == chain.x0_out || read == chain.x1_out);
      }
    }
  }
}

// The fused kernel on the chain equals Threefry2x32, for run-time keys.
void CheckFusedThreefry(int64_t n, int threads, uint32_t k0, uint32_t k1, bool inner_output) {
  ThreefryChain c = BuildThreefry(n);
  if (inner_output) c.params.output_slots.push_back(c.params.ops[c.round_add_ops[7]].output);
  std::vector<uint32_t> hi(n), lo(n);
  std::mt19937 rng(static_cast<uint32_t>(n));
  for (int64_t i = 0; i < n; ++i) hi[i] = rng(), lo[i] = static_cast<uint32_t>(i);
  const uint32_t ks2 = k0 ^ k1 ^ 0x1BD11BDAu;
  const Dims dims = {n};
  const std::vector<int64_t> splat = {0};
  Array a_hi = testing::ArrayOf(DType::kU32, dims, hi), a_lo = testing::ArrayOf(DType::kU32, dims, lo);
  std::vector<Array> scalars;
  scalars.push_back(testing::ArrayOf(DType::kU32, {1}, std::vector<uint32_t>{k0}));
  scalars.push_back(testing::ArrayOf(DType::kU32, {1}, std::vector<uint32_t>{k1}));
  scalars.push_back(testing::ArrayOf(DType::kU32, {1}, std::vector<uint32_t>{ks2}));
  for (uint32_t v : c.constants) scalars.push_back(testing::ArrayOf(DType::kU32, {1}, std::vector<uint32_t>{v}));
  std::vector<BufferView> inputs = {a_hi.View(), a_lo.View()};
  for (size_t k = 0; k < scalars.size(); ++k) {
    BufferView v = scalars[k].View();
    v.dims = dims, v.num_elements = n, v.strides = splat;
    inputs.push_back(v);
  }
  // Keys are run-time values: at prepare time their data is unknown.
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("fused");
  ASSERT_NE(entry, nullptr);
  std::vector<Array> outs(c.params.output_slots.size(), Array(DType::kU32, dims));
  std::vector<BufferView> out_views;
  for (Array& a : outs) out_views.push_back(a.View());
  std::vector<BufferView> prepare_inputs = inputs;
  for (size_t k = 0; k < 5; ++k) prepare_inputs[k].data = nullptr;
  KernelArgs args{prepare_inputs, out_views, &c.params};
  auto prepared = entry->prepare(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  args.inputs = inputs;
  args.state = prepared->state.get();
  const auto bytes = static_cast<size_t>(entry->workspace(args));
  for (int t = 0; t < threads; ++t) {
    std::vector<std::byte> workspace(bytes + 64);
    KernelArgs call = args;
    call.workspace = std::span<std::byte>(workspace.data(), bytes);
    ASSERT_TRUE(entry->fn(KernelContext{t, threads}, call).ok());
  }
  for (int64_t i = 0; i < n; ++i) {
    const auto want = rng::Threefry2x32({k0, k1}, {hi[i], lo[i]});
    uint32_t got0, got1;
    std::memcpy(&got0, outs[0].bytes.data() + 4 * i, 4);
    std::memcpy(&got1, outs[1].bytes.data() + 4 * i, 4);
    ASSERT_EQ(got0, want[0]) << "element " << i;
    ASSERT_EQ(got1, want[1]) << "element " << i;
  }
}

class FusedArxIsaTest : public ::testing::TestWithParam<env::Isa> {
 protected:
  void SetUp() override {
    if (!simd::CpuHas(GetParam())) GTEST_SKIP() << "the CPU lacks this ISA level";
    ASSERT_TRUE(simd::SetIsa(GetParam()).ok());
  }
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

TEST_P(FusedArxIsaTest, FusedThreefryEqualsReference) {
  for (int64_t n : {1, 15, 64, 1000, 4099, 70001})
    for (int threads : {1, 3}) {
      SCOPED_TRACE("n " + std::to_string(n) + " threads " + std::to_string(threads));
      CheckFusedThreefry(n, threads, 0, 42, false);
      CheckFusedThreefry(n, threads, 0xDEADBEEFu, 0x12345678u, false);
    }
  CheckFusedThreefry(5000, 2, 7, 9, true);  // an inner value is an output: split chains
}

TEST_P(FusedArxIsaTest, VectorChainEqualsScalar) {
  std::mt19937 rng(5);
  std::vector<simd::ArxStep> steps;
  for (uint32_t r = 1; r <= 31; ++r) {
    steps.push_back({simd::ArxKind::kRound, r});
    steps.push_back({r % 2 ? simd::ArxKind::kAdd0 : simd::ArxKind::kAdd1, static_cast<uint32_t>(rng())});
  }
  const size_t n = 1037;
  std::vector<uint32_t> x0(n), x1(n), y0(n), y1(n);
  for (size_t i = 0; i < n; ++i) x0[i] = rng(), x1[i] = rng();
  simd::ArxChain(steps.data(), steps.size(), x0.data(), x1.data(), y0.data(), y1.data(), n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t a = x0[i], b = x1[i];
    simd::ArxChainScalar(steps.data(), steps.size(), a, b);
    ASSERT_EQ(y0[i], a) << i;
    ASSERT_EQ(y1[i], b) << i;
  }
  // In place, outputs swapped onto the inputs.
  std::vector<uint32_t> p = x0, q = x1;
  simd::ArxChain(steps.data(), steps.size(), p.data(), q.data(), q.data(), p.data(), n);
  EXPECT_EQ(q, y0);
  EXPECT_EQ(p, y1);
}

INSTANTIATE_TEST_SUITE_P(Levels, FusedArxIsaTest,
                         ::testing::Values(env::Isa::kBest, env::Isa::kAvx512, env::Isa::kAvx2, env::Isa::kSse4));

}  // namespace
}  // namespace stablert::kernels
