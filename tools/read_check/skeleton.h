// The skeleton of an imported module: functions, ops with operand counts and result types,
// regions, block arguments and constant digests, one per line. It is the same text that
// tests/corpus/skeleton.py derives from StableHLO's own reader, so comparing the two checks
// that StableRT's import saw every op, type and constant exactly (see skeleton.py for the
// format and the digest). Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"

namespace stablert::tools {

std::string Skeleton(const ir::Module& module);

// FNV-1a 64 over the elements of `data` as little-endian u64 words (see skeleton.py).
uint64_t ConstantDigest(const ir::ElementsData& data);

// The canonical text of an attribute value (the rules are in skeleton.py).
std::string CanonicalAttribute(const ir::Attribute& attr);

// Compares every op's attributes with the listing skeleton.py writes from the VHLO ops as
// MLIR decodes them (vhlo_attributes): ops in pre-order, each listed attribute present with
// the same canonical value. Attributes StableRT adds (upgrade defaults) are not listed and
// not checked; listed `?` values (other dialects) are skipped, and a listed `none` may be
// absent (VHLO's unset dot algorithm fields, which the import drops). Returns "" when they
// agree, else the first difference.
std::string CompareAttributes(const ir::Module& module, const std::string& expected);

}  // namespace stablert::tools
