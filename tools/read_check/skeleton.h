// The skeleton of an imported module: functions, ops with operand counts and result types,
// regions, block arguments and constant digests, one per line. It is the same text that
// tests/corpus/skeleton.py derives from StableHLO's own reader, so comparing the two checks
// that StableRT's import saw every op, type and constant exactly (see skeleton.py for the
// format and the digest). Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "ir/module.h"

namespace stablert::tools {

std::string Skeleton(const ir::Module& module);

// FNV-1a 64 over the elements of `data` as little-endian u64 words (see skeleton.py).
uint64_t ConstantDigest(const ir::ElementsData& data);

}  // namespace stablert::tools
