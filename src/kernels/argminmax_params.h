// The parameters of "argminmax.<V>.<I>" (kernels/argminmax.cc), built by
// plan/lower_reduce.cc: JAX's argmax/argmin, a two-operand reduce whose index operand is an
// iota along the one reduced dimension, run without that operand (each element's index is
// its position along the dimension, so the iota is neither computed nor read).
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::kernels {

struct ArgMinMaxParams {
  static constexpr std::string_view kFamily = "argminmax";
  int64_t dimension = 0;  // the reduced dimension, along which the indices count
  bool is_max = true;     // argmax (else argmin)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("dimension", dimension);
    visit("is_max", is_max);
  }
};

}  // namespace stablert::kernels
