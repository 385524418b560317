// The parameters of "reduce_<body>.<T>" (kernels/reduce.cc), built by plan/lower_reduce.cc
// and matched by plan/fold_gather_scatter.cc; the reduce_window kernels (window.cc) run
// windows that cover whole dimensions as such a reduce.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

// The output is the input without `dimensions`, each element the body folded over the
// elements reduced into it (starting from the init scalar).
struct ReduceParams {
  static constexpr std::string_view kFamily = "reduce";
  std::vector<int64_t> dimensions;  // the input dimensions reduced, ascending, from 0

  template <typename Visit>
  void Fields(Visit&& visit) const { visit("dimensions", dimensions); }
};

}  // namespace stablert::kernels
