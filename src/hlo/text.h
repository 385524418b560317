// XLA HLO text for an hlo::Module, in the syntax XLA's HLO parser reads and recent XLA
// versions print:
//   HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[]}
//
//   region_0.2 {
//     Arg_0.3 = f32[] parameter(0)
//     Arg_1.4 = f32[] parameter(1)
//     ROOT add.5 = f32[] add(Arg_0.3, Arg_1.4)
//   }
//
//   ENTRY main.6 {
//     Arg_0.1 = f32[3]{0} parameter(0)
//     constant.2 = f32[] constant(0)
//     ROOT reduce.3 = f32[] reduce(Arg_0.1, constant.2), dimensions={0}, to_apply=region_0.2
//   }
// Computations print in module order (the entry last, marked ENTRY), instructions in
// their given order; shapes carry their layouts; operands and called computations print by
// name. Attributes print in XLA's order, and those at their default value are left out as
// XLA leaves them out (e.g. a compare's type when it is the default for the operands'
// element type). Constants print every element, floats in the shortest form that reads
// back to the same value.
// Pure function; thread-safe.
#pragma once

#include <string>

#include "hlo/module.h"

namespace stablert::hlo {

std::string ToText(const Module& module);

}  // namespace stablert::hlo
