// Reader of StableHLO programs in MLIR's textual form -> ir::Module.
//
// Accepts what `jax.jit(f).lower(x).as_text()` prints (the pretty form of the stablehlo,
// func and sdy dialects, with `#loc` aliases, `#stablehlo.*`/`#sdy.*` attributes and
// dense literals in decimal, hex-string and splat form) and MLIR's generic operation form
// (`"stablehlo.add"(%0, %1) : (...) -> ...`, including generic `builtin.module` and
// `func.func`). The result is the ir::Module the bytecode reader (read_module.h) makes of
// the same program: the same op rows (ir/ops.def), the attributes in their flat VHLO
// form (text_normalize.h), values numbered in definition order, locations reduced to
// ir::Location. It is not yet verified: callers run ir::Verify next.
//
// Failure: never crashes; InvalidArgument "line:column: expected ..., found ..." for
// malformed text, Unimplemented for valid programs StableRT cannot represent (CHLO ops
// without an expansion in chlo_expand.h, dynamic shapes, quantized types). Nesting is
// bounded (kMaxTextNesting); time and memory are linear in the input. Thread-safe:
// concurrent calls share no state.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::stablehlo {

inline constexpr int kMaxTextNesting = 200;

StatusOr<std::unique_ptr<ir::Module>> ParseModuleText(std::string_view text);

}  // namespace stablert::stablehlo
