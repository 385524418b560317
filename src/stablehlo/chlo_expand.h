// CHLO ops of StableHLO's MLIR text -> StableHLO ops of StableRT's IR.
//
// `jax.jit(f).lower(x).as_text()` keeps CHLO ops (chlo.erf_inv, chlo.lgamma, chlo.top_k, ...)
// that portable serialization would decompose. The text reader expands each one, as it is
// read, into the StableHLO ops MLIR's chlo-legalize-to-stablehlo produces for it (same
// algorithms, coefficients and special cases), so a program gives the same numbers whether
// it arrives as text or as a portable artifact. The complex asin, acos, atan, asinh,
// acosh and atanh are Kahan's formulas (the same branch cuts and signed zeros; a few ulps from
// MLIR's expansions). CHLO is not an IR dialect: ir/ops.def holds
// no CHLO row.
//
// Failure: Unimplemented naming the op (and element type) for CHLO ops or element types
// without an expansion; InvalidArgument for operand/result counts or types the op does not
// accept. Nothing is appended to the block on failure.
// Thread-safety: none; the caller owns the module and block.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::stablehlo {

// One CHLO op as the text spells it.
struct ChloOp {
  std::string_view name;               // "chlo.erf_inv"
  std::vector<ir::ValueId> operands;   // values of `module`
  std::vector<ir::Type> result_types;  // as the op's signature states
  ir::Attribute::Dictionary attrs;     // `k` of top_k, broadcast_dimensions, value, ...
  ir::LocationId location = 0;         // given to every op of the expansion
};

// True for names in the `chlo.` namespace.
bool IsChloName(std::string_view name);

// Appends the expansion of `op` to `block` (new values are added to `module`) and returns
// the values standing for the op's results, one per result type. The results of a
// multi-result op are allocated consecutively (the text binds `%r:2` to a run of values).
StatusOr<std::vector<ir::ValueId>> ExpandChlo(const ChloOp& op, ir::Module& module,
                                              ir::Block& block);

}  // namespace stablert::stablehlo
