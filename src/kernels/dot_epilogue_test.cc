// "dot_epilogue.f32" (a product followed by elementwise ops) on every product path --
// the loops, libxsmm, the matrix-vector loops and oneDNN (tiled, in both operand layouts)
// -- against the plain product with the ops applied afterwards; oneDNN takes the ops as
// post-ops; malformed steps are errors naming the kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/dot.h"
#include "kernels/dot_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::ArgsWith;
using testing::GetDouble;
using testing::SetDouble;

struct Shape {
  int64_t b, m, k, n;
};

Array Random(Dims dims, std::mt19937& rng) {
  Array a(DType::kF32, std::move(dims));
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < a.size(); ++i) SetDouble(a, i, u(rng));
  return a;
}

std::vector<BufferView> Views(const std::vector<const Array*>& arrays) {
  std::vector<BufferView> views;
  for (const Array* a : arrays) views.push_back(a->View());
  return views;
}

TEST(DotEpilogueTest, MatchesProductThenOpsOnEveryPath) {
  std::mt19937 rng(5);
  const KernelRegistry::Entry* plain = CpuKernels().Lookup("dot.f32");
  const KernelRegistry::Entry* fused = CpuKernels().Lookup("dot_epilogue.f32");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->in_place, InPlace::kNone);
  struct Case {
    Shape s;
    bool rhs_bnk;
    DotPath path;
  };
  const Case cases[] = {{{1, 4, 4, 4}, true, DotPath::kLoops},          {{1, 4, 4, 4}, false, DotPath::kSmall},
                        {{2, 32, 48, 40}, false, DotPath::kSmall},
                        {{1, 1, 3000, 700}, false, DotPath::kMatVec},   {{1, 900, 500, 1}, false, DotPath::kMatVec},
                        {{1, 256, 512, 1024}, false, DotPath::kOneDnn}, {{1, 300, 200, 520}, true, DotPath::kOneDnn},
                        {{3, 64, 128, 200}, false, DotPath::kSmall},    {{1, 1024, 1024, 1024}, false, DotPath::kOneDnn},
                        {{1, 256, 256, 256}, false, DotPath::kSmall},   {{1, 100, 128, 300}, false, DotPath::kSmall},
                        {{1, 600, 64, 64}, false, DotPath::kOneDnn}};
  using E = EpilogueOp;
  struct Chain {
    std::vector<E> ops;
    std::vector<char> operands;  // per binary op: 's'calar, 'r'ow, 'f'ull
  };
  const Chain chains[] = {{{E::kAdd, E::kRelu}, {'r'}},
                          {{E::kRelu}, {}},
                          {{E::kDivide, E::kAdd, E::kMultiply}, {'s', 'f', 'r'}},
                          {{E::kMultiply, E::kAdd, E::kRelu, E::kAdd}, {'s', 'r', 'f'}},
                          {{E::kMultiply, E::kSubtractFrom}, {'s', 'f'}},
                          {{E::kSubtract, E::kSubtractFrom, E::kAdd}, {'r', 's', 'f'}}};
  for (const Case& c : cases)
    for (const Chain& chain : chains) {
      const Shape& s = c.s;
      Array lhs = Random({s.b, s.m, s.k}, rng);
      Array rhs = Random(c.rhs_bnk ? Dims{s.b, s.n, s.k} : Dims{s.b, s.k, s.n}, rng);
      Array product(DType::kF32, {s.b, s.m, s.n}), out(DType::kF32, {s.b, s.m, s.n});
      std::vector<Array> operands;
      for (char kind : chain.operands) {
        operands.push_back(Random(kind == 's' ? Dims{} : kind == 'r' ? Dims{s.n} : Dims{s.b, s.m, s.n}, rng));
        if (kind == 's') SetDouble(operands.back(), 0, 1.7);
      }
      DotEpilogueParams params{.dot = {.rhs_is_bnk = c.rhs_bnk}};
      for (E op : chain.ops) params.ops.push_back(static_cast<int64_t>(op));
      std::vector<const Array*> in_arrays = {&lhs, &rhs};
      for (const Array& a : operands) in_arrays.push_back(&a);
      std::vector<BufferView> in = Views(in_arrays), outs = Views({&out});
      std::vector<BufferView> plain_in = Views({&lhs, &rhs}), plain_out = Views({&product});
      ASSERT_TRUE(plain->fn(KernelContext{}, ArgsWith(plain_in, plain_out, params.dot)).ok());
      auto prepared = fused->prepare(ArgsWith(in, outs, params));
      ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
      KernelArgs args = ArgsWith(in, outs, params);
      args.state = prepared->state.get();
      ASSERT_TRUE(fused->fn(KernelContext{}, args).ok());
      // oneDNN as post-ops, libxsmm on each tile (row or column tiles on the pool here).
      EXPECT_EQ(PreparedEpilogueByLibrary(args.state), c.path == DotPath::kOneDnn || c.path == DotPath::kSmall)
          << s.m << "x" << s.k << "x" << s.n;
      for (int64_t i = 0; i < out.size(); ++i) {
        float x = static_cast<float>(GetDouble(product, i));
        size_t next = 0;
        for (E op : chain.ops) {
          if (op == E::kRelu) {
            x = x < 0 ? 0.0f : x;
            continue;
          }
          const Array& y = operands[next];
          const char kind = chain.operands[next++];
          const auto v = static_cast<float>(GetDouble(y, kind == 's' ? 0 : kind == 'r' ? i % s.n : i));
          switch (op) {
            case E::kAdd: x = x + v; break;
            case E::kMultiply: x = x * v; break;
            case E::kDivide: x = x / v; break;
            case E::kSubtract: x = x - v; break;
            case E::kSubtractFrom: x = v - x; break;
            case E::kRelu: break;
          }
        }
        ASSERT_NEAR(GetDouble(out, i), x, 2e-5 * (1.0 + std::fabs(x)) + 1e-6 * static_cast<double>(s.k))
            << s.b << "x" << s.m << "x" << s.k << "x" << s.n << " chain " << chain.ops.size() << " at " << i;
        if (x == 0.0f && chain.ops.back() == E::kRelu) ASSERT_EQ(GetDouble(out, i), 0.0);
      }
    }
}

// A NaN in the product stays NaN through the relu on every path (XLA's maximum keeps it;
// oneDNN's relu post-op would give 0, so the relu runs after oneDNN's tile).
TEST(DotEpilogueTest, ReluKeepsNaN) {
  std::mt19937 rng(9);
  const KernelRegistry::Entry* fused = CpuKernels().Lookup("dot_epilogue.f32");
  const Shape shapes[] = {{1, 4, 4, 4}, {1, 16, 64, 64}, {1, 1, 2000, 600}, {1, 512, 256, 512}};
  for (const Shape& s : shapes) {
    Array lhs = Random({s.b, s.m, s.k}, rng), rhs = Random({s.b, s.k, s.n}, rng);
    Array bias = Random({s.n}, rng), out(DType::kF32, {s.b, s.m, s.n});
    SetDouble(lhs, 0, std::nan(""));  // row 0 of the product is NaN
    DotEpilogueParams params{.ops = {static_cast<int64_t>(EpilogueOp::kAdd), static_cast<int64_t>(EpilogueOp::kRelu)}};
    std::vector<BufferView> in = Views({&lhs, &rhs, &bias}), outs = Views({&out});
    auto prepared = fused->prepare(ArgsWith(in, outs, params));
    ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
    KernelArgs args = ArgsWith(in, outs, params);
    args.state = prepared->state.get();
    ASSERT_TRUE(fused->fn(KernelContext{}, args).ok());
    for (int64_t n = 0; n < s.n; ++n) ASSERT_TRUE(std::isnan(GetDouble(out, n))) << s.m << "x" << s.k << "x" << s.n;
    for (int64_t i = s.n; i < out.size(); ++i) ASSERT_GE(GetDouble(out, i), 0.0);
  }
}

TEST(DotEpilogueTest, MalformedStepsAreErrors) {
  const KernelRegistry::Entry* fused = CpuKernels().Lookup("dot_epilogue.f32");
  Array lhs(DType::kF32, {1, 8, 8}), rhs(DType::kF32, {1, 8, 8}), out(DType::kF32, {1, 8, 8});
  Array wrong(DType::kF32, {5}), row(DType::kF32, {8});
  struct Bad {
    std::vector<int64_t> ops;
    std::vector<const Array*> operands;
  };
  const Bad bad[] = {{{1}, {&wrong}}, {{1}, {}}, {{4}, {&row}}, {{9}, {}}};
  for (const Bad& b : bad) {
    std::vector<const Array*> in_arrays = {&lhs, &rhs};
    in_arrays.insert(in_arrays.end(), b.operands.begin(), b.operands.end());
    std::vector<BufferView> in = Views(in_arrays), outs = Views({&out});
    DotEpilogueParams params{.ops = b.ops};
    auto prepared = fused->prepare(ArgsWith(in, outs, params));
    ASSERT_FALSE(prepared.ok());
    EXPECT_NE(prepared.status().ToString().find("dot_epilogue.f32"), std::string::npos) << prepared.status().ToString();
  }
}

}  // namespace
}  // namespace stablert::kernels
