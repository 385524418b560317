// The parameters of stablehlo.rng's kernels "rng_uniform.<T>" and "rng_normal.<T>"
// (kernels/rng.cc), built by plan/lower_rng.cc. The rng_bit_generator kernels take none
// (their key and counter are the state operand).
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::kernels {

struct RngParams {
  static constexpr std::string_view kFamily = "rng";
  // The Philox key of the step's stream: fixed per op at compile time; each step keeps its
  // own counter, so repeated executions continue the stream.
  uint64_t key = 0;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("key", key);
  }
};

}  // namespace stablert::kernels
