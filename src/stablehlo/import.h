// Import of a decoded VHLO portable artifact into an ir::Module.
//
// Conventions (relied on by verification, passes and plan lowering):
//  * `vhlo.X_vN` becomes the op row `stablehlo.X` for every N; older versions are upgraded
//    to the newest version's attribute set (missing attributes get their VHLO defaults,
//    e.g. gather_v1 gains empty batching dims, *_v1 transcendental ops a default
//    result_accuracy). dot_general algorithm attributes holding `none` are omitted.
//  * `vhlo.func_v1` becomes an ir::Function; `vhlo.call_v1` an OpCode::kCall with
//    attribute "callee" as Attribute::Symbol; every `vhlo.return_v1` an OpCode::kReturn.
//  * sdy ops become the kSdy* rows; `sdy.mesh` becomes an entry of Module::meshes.
//    `builtin.unrealized_conversion_cast` between identical types is folded away.
//  * Op attributes (properties and discardable attributes) are stored in
//    Operation::attrs by name, sorted by name; symbol-valued attributes (callee,
//    decomposition, called_computations) become Attribute::Symbol.
//  * Values are numbered module-wide with Module::AddValue in definition order.
//
// Failure: InvalidArgument/Unimplemented naming the op (and its location) and what was
// unexpected. Not thread-safe; the BytecodeFile's buffer must outlive the call.
#pragma once

#include <memory>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "stablehlo/bytecode_reader.h"

namespace stablert::stablehlo {

struct ImportOptions {
  // Diagnostics: leave out functions that fail with Unimplemented (valid StableHLO that
  // StableRT cannot represent) instead of failing, and append their errors here.
  std::vector<Status>* skipped_functions = nullptr;
};

StatusOr<std::unique_ptr<ir::Module>> ImportModule(const BytecodeFile& file,
                                                   const ImportOptions& options = {});

}  // namespace stablert::stablehlo
