// The VHLO op table: every versioned VHLO op name the reader accepts, the StableRT op row
// it maps to, and its attribute names in property (sorted) order.
// Pure data; thread-safe.
#pragma once

#include <string_view>

#include "ir/op_table.h"

namespace stablert::stablehlo {

struct VhloOpInfo {
  std::string_view name;        // without the dialect prefix, e.g. "gather_v2"
  ir::OpCode code;              // the StableRT op row
  std::string_view properties;  // comma-separated attribute names, sorted by name
};

// The VHLO op `name` ("add_v1"); nullptr if unknown. vhlo.func_v1 maps to kCall's row
// only nominally: the importer turns it into an ir::Function.
const VhloOpInfo* FindVhloOp(std::string_view name);

// Shardy ops StableRT imports, with their property order (optional attributes are marked
// with a trailing '?').
struct SdyOpInfo {
  std::string_view name;  // "sharding_constraint"
  ir::OpCode code;
  std::string_view properties;
};
const SdyOpInfo* FindSdyOp(std::string_view name);

}  // namespace stablert::stablehlo
