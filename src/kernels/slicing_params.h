// The parameters of "pad.<T>" and "reverse.<T>" (kernels/slicing.cc), built by
// plan/lower_slicing.cc. "dynamic_slice.<T>" and "dynamic_update_slice.<T>" take none: the
// slice's sizes are the output's (or the update's) dimensions. Dimension numbers count from
// 0, outermost first.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

// Per dimension d, input element i lands at output index low[d] + i * (interior[d] + 1);
// the other output elements hold the padding value (the second input). Negative low/high
// padding drops input elements.
struct PadParams {
  static constexpr std::string_view kFamily = "pad";
  std::vector<int64_t> low;       // edge padding before the first element, per dimension
  std::vector<int64_t> high;      // edge padding after the last element, per dimension
  std::vector<int64_t> interior;  // padding between two elements (>= 0), per dimension

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("low", low);
    visit("high", high);
    visit("interior", interior);
  }
};

// The input with the order of its elements reversed along each of `dimensions`.
struct ReverseParams {
  static constexpr std::string_view kFamily = "reverse";
  std::vector<int64_t> dimensions;  // the dimensions reversed (each at most once)

  template <typename Visit>
  void Fields(Visit&& visit) const { visit("dimensions", dimensions); }
};

}  // namespace stablert::kernels
