// Upgrades the attributes of an imported VHLO op to the canonical (newest-version)
// attribute set StableRT's passes and lowering read, and converts symbol-valued
// attributes to Attribute::Symbol. See import.h for the conventions.
// Pure function of its inputs; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::stablehlo {

// `vhlo_name` is the versioned op name without dialect ("gather_v1").
Status UpgradeVhloAttributes(std::string_view vhlo_name, ir::Operation& op);

}  // namespace stablert::stablehlo
