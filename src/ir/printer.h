// Readable StableHLO-like text for an ir::Module, for dumps, golden tests and messages.
//
// Format (stable enough for golden files; not a parseable MLIR dialect):
//   module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
//     func.func public @main(%0: tensor<2xf32>, %1: tensor<2xf32>) -> (tensor<2xf32>) {
//       %2 = stablehlo.add %0, %1 : tensor<2xf32>
//       stablehlo.return %2 : tensor<2xf32>
//     }
//   }
// Values print as %<ValueId>. An op prints as
//   [%results =] mnemonic [operands] [{attributes}] [({regions})] [: types] [loc(...)]
// where types is the single shared type when all operands and results have it, else
// (operand types) -> result type(s). Regions print their blocks with ^bbN(args) headers.
// Pure functions of their input; thread-safe for concurrent calls.
#pragma once

#include <string>

#include "ir/module.h"

namespace stablert::ir {

struct PrintOptions {
  bool locations = false;  // append loc("name" at file:line:col) to ops and functions
  // Constants with more elements print as dense_resource<__elided__>.
  int64_t max_elements = 1024;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
// One op (and its regions), without a trailing newline.
std::string PrintOperation(const Module& module, const Operation& op,
                           const PrintOptions& options = {});
// `text` as an MLIR string literal: quoted, with quotes, backslashes and non-printable
// bytes escaped (\XX).
std::string QuotedString(std::string_view text);
// The name of an enum value, e.g. "LT" for comparison_direction 5; "?" if unknown.
std::string EnumValueName(const EnumValue& value);

}  // namespace stablert::ir
