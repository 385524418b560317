// The parameters of "reduce_precision.<T>" (kernels/reduce_precision.cc), built by
// plan/lower_elementwise.cc.
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::kernels {

// Every element rounded (to nearest, ties to even) to a float format with these field
// widths, overflowing to infinity and underflowing to zero, and stored back in T. Lowering
// caps both at T's own widths and drops the step when neither is below them.
struct ReducePrecisionParams {
  static constexpr std::string_view kFamily = "reduce_precision";
  int64_t exponent_bits = 0;  // >= 1, at most T's
  int64_t mantissa_bits = 0;  // >= 0, at most T's

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("exponent_bits", exponent_bits);
    visit("mantissa_bits", mantissa_bits);
  }
};

}  // namespace stablert::kernels
