// Structural and type verification of an ir::Module, run once after import (and after
// passes in debug and test builds).
//
// Checks: operand/result/region counts against the op table; every value defined
// before use (in its block or an enclosing region of the same function), defined once
// and typed with a valid type; every block non-empty and ending in a terminator, with
// terminators only last; function signatures match the entry block arguments and every
// function-level return; elementwise ops' shapes (and binary ops' operand element types)
// agree; constants match their result type; call targets exist with matching types;
// function names are unique.
//
// Failure: InvalidArgument naming the function, the op, its location and what was
// expected. Pure function of the module; thread-safe for concurrent calls.
#pragma once

#include "base/status.h"
#include "ir/module.h"

namespace stablert::ir {

Status Verify(const Module& module);

}  // namespace stablert::ir
