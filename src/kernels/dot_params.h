// The parameters of "dot.<T>" (kernels/dot.cc; built by plan/lower_dot.cc). The operands
// are [B,M,K] or [B,K,M] and [B,K,N] or [B,N,K]; the output is [B,M,N].
#pragma once

#include <string_view>

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

}  // namespace stablert::kernels
