// The logistic kernel gives, bit for bit, what the chain JAX lowers lax.logistic to gives
// when its ops run as kernels one after another: divide(1, add(1, exponential(negate(x)))).
// passes/simplify.cc rewrites that chain into one logistic op on this promise, for f32 and
// f64, so it is checked at every instruction-set level the CPU has (the exp differs between
// levels), over special values, the ends of exp's range and random inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/simd/dispatch.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

template <typename T>
std::vector<T> Inputs() {
  using Lim = std::numeric_limits<T>;
  std::vector<T> x = {T(0), -T(0), Lim::denorm_min(), -Lim::denorm_min(), Lim::min(), -Lim::min(), T(1), T(-1),
                      T(87.5), T(-87.5), T(88.8), T(-88.8), T(103.9), T(-103.9), T(104), T(-104), T(709), T(-709),
                      T(746), T(-746), Lim::max(), Lim::lowest(), Lim::infinity(), -Lim::infinity(),
                      Lim::quiet_NaN(), -Lim::quiet_NaN()};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> wide(0.0, 40.0);
  std::uniform_real_distribution<double> near(-20.0, 20.0);
  for (int i = 0; i < 40000; ++i) x.push_back(static_cast<T>(i % 2 ? wide(rng) : near(rng)));
  return x;
}

template <DType D, typename T>
void CheckChain() {
  const std::vector<T> values = Inputs<T>();
  const Dims dims = {static_cast<int64_t>(values.size())};
  const Array x = ArrayOf(D, dims, values);
  const Array ones = ArrayOf(D, dims, std::vector<T>(values.size(), T(1)));
  Array negated(D, dims), exp(D, dims), sum(D, dims), chain(D, dims), logistic(D, dims);
  RunKernel(Key("negate", D), {&x}, {&negated});
  RunKernel(Key("exponential", D), {&negated}, {&exp});
  RunKernel(Key("add", D), {&ones, &exp}, {&sum});
  RunKernel(Key("divide", D), {&ones, &sum}, {&chain});
  RunKernel(Key("logistic", D), {&x}, {&logistic});
  for (size_t i = 0; i < values.size(); ++i) {
    const T a = ElementAt<T>(chain, static_cast<int64_t>(i)), b = ElementAt<T>(logistic, static_cast<int64_t>(i));
    if (a != a && b != b) continue;  // NaN either way (payloads are not part of the promise)
    ASSERT_EQ(std::memcmp(&a, &b, sizeof(T)), 0)
        << "x = " << values[i] << ": chain " << a << ", logistic " << b << " on " << simd::CurrentTarget();
  }
}

TEST(LogisticChainTest, SameBitsAsTheChainAtEveryLevel) {
  for (env::Isa level : {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest}) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    CheckChain<DType::kF32, float>();
    CheckChain<DType::kF64, double>();
  }
  ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok());
}

}  // namespace
}  // namespace stablert::kernels
