// Public entry point of the StableHLO reader: portable artifact bytes or MLIR text ->
// ir::Module.
//
// ReadModule dispatches on content: input that starts with MLIR bytecode's magic bytes
// ("ML\xEFR"), or is a prefix of them, is read as a portable artifact; anything else as MLIR text (text_parser.h:
// the pretty or generic form JAX and MLIR print), which yields the same ir::Module as the
// bytecode of the same program. For bytecode, ReadModule checks that the bytes are MLIR bytecode written by StableHLO
// ("StableHLO_vX.Y.Z" producer) for a version in [kMinimumVersion, kCurrentVersion]
// (version.h), reads the container, decodes VHLO/builtin/sdy attributes and types, and
// imports the ops (conventions in import.h). The result is not yet verified: callers run
// ir::Verify next.
//
// Ownership: the returned Module owns all its data (nothing points into `bytes`).
// Failure: never crashes on malformed input; returns InvalidArgument (malformed,
// truncated or out-of-range-version input; messages name the section, byte offset or
// op) or Unimplemented (valid StableHLO StableRT cannot represent, e.g. dynamic shapes).
// Thread-safe: concurrent calls share no state.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace stablert::stablehlo {

StatusOr<std::unique_ptr<ir::Module>> ReadModule(std::string_view bytes);

// True if `bytes` start with MLIR bytecode's magic bytes (or are a prefix of them).
bool IsBytecode(std::string_view bytes);

// Reads the file at `path` and calls ReadModule. NotFound if the file cannot be read.
StatusOr<std::unique_ptr<ir::Module>> ReadModuleFromFile(const std::string& path);

}  // namespace stablert::stablehlo
