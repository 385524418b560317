// The parameters of "dot.<T>" (kernels/dot.cc; built by plan/lower_dot.cc) and of
// "dot_epilogue.<T>" (a product followed by elementwise ops; plan/fold_dot_epilogue.cc).
// The operands are [B,M,K] or [B,K,M] and [B,K,N] or [B,N,K]; the output is [B,M,N].
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

struct DotParams {
  static constexpr std::string_view kFamily = "dot";
  bool lhs_is_bkm = false;  // lhs stored [B,K,M] (else [B,M,K])
  bool rhs_is_bnk = false;  // rhs stored [B,N,K] (else [B,K,N])

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("lhs_is_bkm", lhs_is_bkm);
    visit("rhs_is_bnk", rhs_is_bnk);
  }
};

// One elementwise op applied to a product's every element x, in order. The binary ones
// take the step's next input (inputs 2, 3, ...) as y: a scalar (1 element), a row of N
// elements broadcast along the rows (a bias: y[n]), or the whole [B,M,N] output (dense).
enum class EpilogueOp : int64_t {
  kAdd = 1,       // x + y
  kMultiply = 2,  // x * y
  kDivide = 3,    // x / y
  kRelu = 4,      // max(x, 0) (no input; a NaN stays NaN)
  kSubtract = 5,  // x - y
  kSubtractFrom = 6,  // y - x
};

// "dot_epilogue.<T>": out = ops(lhs . rhs), the ops applied in order to each element.
struct DotEpilogueParams {
  static constexpr std::string_view kFamily = "dot_epilogue";
  DotParams dot;
  std::vector<int64_t> ops;  // EpilogueOp values

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("dot", dot);
    visit("ops", ops);
  }
};

}  // namespace stablert::kernels
