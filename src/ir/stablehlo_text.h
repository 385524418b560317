// MLIR text (StableHLO and func dialects, generic operation form) for an ir::Module, which
// MLIR's own parser accepts and XLA converts to HLO: what PJRT_Executable_OptimizedProgram
// shows of a partitioned program (frameworks print it as HLO text).
//
// Attributes are written in StableHLO's syntax from the IR's flat (VHLO) form: integer
// lists as `array<i64: ...>`, dimension numbers of dot_general/gather/scatter as their
// `#stablehlo.*<...>` structs, channel ids as channel handles, constants as hex data.
// Shardy ops and attributes have no place in it: ops fail, op annotations are left out.
// Pure function; thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::ir {

// Unimplemented naming the op or attribute that has no text form here.
StatusOr<std::string> PrintStablehloText(const Module& module);

// One attribute in MLIR's syntax (`{name = 1 : i64, flag = true}`, `"text"`, `[1, 2]`,
// `dense<...>`), as custom calls' backend_config dictionaries are written; Unimplemented
// naming `where` for kinds with no text form here.
StatusOr<std::string> StablehloAttributeText(const Attribute& attr, std::string_view where);

}  // namespace stablert::ir
