// StableRT's IR written as an XLA HLO module (hlo/module.h): what the dumps hold as the
// program after StableRT's passes (`after_optimizations.txt` / `.hlo.pb`), in the form XLA's
// tools read.
//
// Every op maps to the HLO instruction(s) XLA gives it: elementwise ops one to one; ops with
// several results to one tuple-shaped instruction and a get-tuple-element per result; while
// loops and if/case branches to computations over one tuple parameter that carries the loop
// values and the values the regions use from outside; broadcast_in_dim's size-1 expansion
// to a reshape and a broadcast; select with a scalar predicate to a broadcast predicate;
// optimization_barrier to tuple/opt-barrier; func.call and composite ops to calls; Shardy's
// sharding constraints, reshards and barriers (which change no value) to their operands. The
// public function `main` is the entry computation; other functions become computations
// when called. Locations become metadata (op_name, source_file, source_line).
//
// Unimplemented, naming the op, for ops HLO has no form for here (dynamic-shape ops,
// quantization, sdy.manual_computation, the deprecated einsum forms, async pairs), and for reduction-
// like bodies (reduce, sort, scatter, ...) that use values defined outside them. Pure
// function; thread-safe for concurrent calls on distinct or shared (const) modules.
#pragma once

#include "base/status.h"
#include "hlo/module.h"
#include "ir/module.h"

namespace stablert::hlo {

StatusOr<Module> FromIr(const ir::Module& module);

}  // namespace stablert::hlo
