// The parameters of "compare.<T>" (kernels/compare_select.cc for real and integer types,
// kernels/complex_elementwise.cc for complex ones), built by plan/lower_elementwise.cc and
// matched by plan/fold_gather_scatter.cc.
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::kernels {

// StableHLO's comparison_direction, in VHLO's numbering (the printed value).
enum class CompareDirection : int64_t { kEq = 0, kNe = 1, kGe = 2, kGt = 3, kLe = 4, kLt = 5 };

// StableHLO's compare_type, in VHLO's numbering. Lowering always resolves NOTYPE to the
// type the element type implies, so a step carries FLOAT, TOTALORDER, SIGNED or UNSIGNED
// (complex values: FLOAT).
enum class CompareType : int64_t { kNoType = 0, kFloat = 1, kTotalOrder = 2, kSigned = 3, kUnsigned = 4 };

struct CompareParams {
  static constexpr std::string_view kFamily = "compare";
  CompareDirection direction = CompareDirection::kEq;  // out = a <direction> b
  CompareType type = CompareType::kFloat;              // how a and b are ordered
  // Complex operands: only kEq and kNe (plan/lower_elementwise.cc rejects the others).

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("direction", direction);
    visit("type", type);
  }
};

}  // namespace stablert::kernels
