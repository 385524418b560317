// "argminmax.<V>.<I>" (argminmax.h, argminmax_params.h: indices counted along the reduced
// dimension) against JAX's argmax/argmin body run by the body interpreter over an explicit
// iota, at every ISA level the CPU has, as 1, 2 or 3 calls of one step: rows, columns,
// middle dimensions and whole arrays, small and past the split threshold, with ties,
// signed zeros, infinities and NaN, both index types and any init values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include "kernels/argminmax_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/program_params.h"
#include "kernels/registry.h"
#include "kernels/simd/dispatch.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::ArrayOf;

const env::Isa kLevels[] = {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest};

class ArgMinMaxIotaTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// JAX's argmax (gt) or argmin (lt) body as the plan encodes it (scalar_program.h), with a
// redundant and(p, p) so that the recognizer leaves it to the body interpreter.
std::vector<int64_t> InterpretedArgBody(DType value, DType index, bool is_max) {
  const auto v = static_cast<int64_t>(value), i = static_cast<int64_t>(index), p = static_cast<int64_t>(DType::kPred);
  std::vector<int64_t> code = {1, 14, v, i, v, i, p, p, p, p, p, p, p, v, i, p, 4, 0, 10};
  code.insert(code.end(), {70, 4, 0, 2, 0, (is_max ? 3 : 5) * 8 + 1});  // v > w (v < w)
  code.insert(code.end(), {70, 5, 0, 0, 0, 1 * 8 + 1});                 // v != v
  code.insert(code.end(), {50, 6, 4, 5, 0, 0});
  code.insert(code.end(), {70, 7, 0, 2, 0, 0 * 8 + 1});  // v == w
  code.insert(code.end(), {70, 8, 1, 3, 0, 5 * 8 + 3});  // i < j (SIGNED)
  code.insert(code.end(), {49, 9, 7, 8, 0, 0});
  code.insert(code.end(), {50, 10, 6, 9, 0, 0});
  code.insert(code.end(), {49, 13, 10, 10, 0, 0});
  code.insert(code.end(), {71, 11, 6, 0, 2, 0});
  code.insert(code.end(), {71, 12, 13, 1, 3, 0});
  code.insert(code.end(), {2, 11, 12});
  return code;
}

void RunCalls(const std::string& key, const std::vector<const Array*>& inputs, const std::vector<Array*>& outputs,
              const KernelParams& params, int calls) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << key;
  ASSERT_TRUE(calls == 1 || entry->splittable) << key;
  std::vector<BufferView> in, out;
  for (const Array* a : inputs) in.push_back(a->View());
  for (Array* a : outputs) out.push_back(a->View());
  ASSERT_EQ(entry->params, params.type()) << key;
  KernelArgs args{in, out, params.get()};
  KernelState state;
  if (entry->prepare != nullptr) {
    auto prepared = entry->prepare(args);
    ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
    state = prepared->state;
    args.state = state.get();
  }
  for (int t = 0; t < calls; ++t) {
    const Status status = entry->fn(KernelContext{t, calls}, args);
    ASSERT_TRUE(status.ok()) << key << ": " << status.ToString();
  }
}

enum class Fill { kRandom, kTies, kZeros, kNaN, kAllNaN };

template <typename V, typename I>
void Check(DType vd, DType id, const std::vector<int64_t>& dims, int64_t dim, bool is_max, Fill fill) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::mt19937 rng(static_cast<uint32_t>(count * 7 + dim + static_cast<int>(fill)));
  std::vector<V> x(static_cast<size_t>(count));
  std::normal_distribution<double> normal;
  for (size_t k = 0; k < x.size(); ++k) {
    const uint32_t r = rng();
    switch (fill) {
      case Fill::kRandom: x[k] = static_cast<V>(normal(rng)); break;
      case Fill::kTies: x[k] = static_cast<V>(static_cast<int>(r % 5) - 2); break;
      case Fill::kZeros: x[k] = r % 3 == 0 ? V(0) : r % 3 == 1 ? -V(0) : V(-1); break;
      case Fill::kNaN:
        x[k] = static_cast<V>(static_cast<int>(r % 9) - 4);
        if (r % 997 == 0) x[k] = std::numeric_limits<V>::infinity();
        if (r % 1009 == 0) x[k] = -std::numeric_limits<V>::infinity();
        if (r % 4999 == 0) x[k] = std::numeric_limits<V>::quiet_NaN();
        break;
      case Fill::kAllNaN: x[k] = std::numeric_limits<V>::quiet_NaN(); break;
    }
  }
  // The iota the kernel replaces: element (..., r, ...)'s index is r.
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t rows = dims[static_cast<size_t>(dim)];
  std::vector<I> idx(x.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<I>((static_cast<int64_t>(k) / inner) % rows);
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (static_cast<int64_t>(d) != dim) out_dims.push_back(dims[d]);
  const Array xa = ArrayOf(vd, dims, x), ia = ArrayOf(id, dims, idx);
  const V inf = std::numeric_limits<V>::infinity();
  std::vector<std::pair<V, I>> inits = {{is_max ? -inf : inf, 0}, {V(0), 3}, {-V(0), -2}};
  if (count > 100000) inits.resize(1);  // JAX's init alone on the large arrays (the interpreter is slow)
  for (const auto& [init, init_index] : inits) {
    const Array init_v = ArrayOf(vd, {}, std::vector<V>{init}), init_i = ArrayOf(id, {}, std::vector<I>{init_index});
    Array want_v(vd, out_dims), want_i(id, out_dims);
    RunCalls("reduce_program", {&xa, &ia, &init_v, &init_i}, {&want_v, &want_i},
             ReduceProgramParams{.dimensions = {dim}, .body = InterpretedArgBody(vd, id, is_max)}, 1);
    for (int calls : {1, 2, 3}) {
      Array got_v(vd, out_dims), got_i(id, out_dims);
      RunCalls(KernelKey("argminmax", {vd, id}), {&xa, &init_v, &init_i}, {&got_v, &got_i},
               ArgMinMaxParams{.dimension = dim, .is_max = is_max}, calls);
      ASSERT_EQ(got_i.bytes, want_i.bytes) << "indices, calls " << calls << " init " << init;
      ASSERT_EQ(got_v.bytes, want_v.bytes) << "values, calls " << calls << " init " << init;
    }
  }
}

TEST_F(ArgMinMaxIotaTest, MatchesTheBodyOverAnIota) {
  struct Layout {
    std::vector<int64_t> dims;
    int64_t dim;
  };
  const std::vector<Layout> small = {{{4099}, 0}, {{37, 301}, 1}, {{301, 37}, 0}, {{5, 67, 41}, 1},
                                     {{3, 5, 131}, 2}, {{64, 1}, 0}, {{1, 7}, 1}, {{3}, 0}, {{6, 0}, 1}};
  // Past the split threshold (2^18 elements): whole array, rows, columns, middle dimension.
  const std::vector<Layout> large = {{{300007}, 0}, {{520, 611}, 1}, {{611, 1090}, 0}, {{3, 300, 301}, 1}};
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    for (const auto* layouts : {&small, &large}) {
      for (const Layout& layout : *layouts) {
        for (Fill fill : {Fill::kRandom, Fill::kTies, Fill::kZeros, Fill::kNaN, Fill::kAllNaN}) {
          if (layouts == &large && fill != Fill::kNaN && fill != Fill::kZeros) continue;
          for (bool is_max : {true, false}) {
            SCOPED_TRACE(target + (is_max ? " argmax" : " argmin") + " rank " + std::to_string(layout.dims.size()) +
                         " dim " + std::to_string(layout.dim) + " size " + std::to_string(layout.dims.back()) +
                         " fill " + std::to_string(static_cast<int>(fill)));
            Check<float, int32_t>(DType::kF32, DType::kS32, layout.dims, layout.dim, is_max, fill);
            Check<float, int64_t>(DType::kF32, DType::kS64, layout.dims, layout.dim, is_max, fill);
            Check<double, int64_t>(DType::kF64, DType::kS64, layout.dims, layout.dim, is_max, fill);
            Check<double, int32_t>(DType::kF64, DType::kS32, layout.dims, layout.dim, is_max, fill);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace stablert::kernels
