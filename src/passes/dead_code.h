// Dead-code removal: pure ops (ops.def's effect column, regions included) none of whose
// results is used are removed from the entry function, nested regions included, until none
// is left. Ops with effects, terminators and ops without results stay.
// Never fails. Deterministic; not thread-safe.
#pragma once

#include "ir/module.h"

namespace stablert::passes {

// Returns the number of ops removed.
int RemoveDeadCode(ir::Module& module);

}  // namespace stablert::passes
