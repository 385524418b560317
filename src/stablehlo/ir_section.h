// The IR section of MLIR bytecode: operations, regions, blocks and value numbering.
//
// Internal to the container reader (bytecode_reader.cc calls it once the string, dialect,
// property and attribute/type tables are read). Appends the decoded tree to `file`.
// Failure and allocation behaviour as for ReadBytecode.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/status.h"
#include "stablehlo/bytecode_reader.h"

namespace stablert::stablehlo {

// Maximum nesting of regions (and of attribute entries) the reader follows; deeper input
// is rejected rather than risking the stack.
inline constexpr int kMaxNestingDepth = 200;

Status ReadIrSection(std::string_view data, size_t offset, BytecodeFile& file);

}  // namespace stablert::stablehlo
