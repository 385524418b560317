// Small builders for the ir::Attribute forms the dialect decoders and the importer
// produce. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/attribute.h"
#include "stablehlo/encoding.h"

namespace stablert::stablehlo {

// A 1-D i64 Elements attribute (tensor<Nxi64>): the form of dimension lists.
ir::Attribute I64Elements(const std::vector<int64_t>& values);
// An i64 Elements attribute of the given shape, zero-filled.
ir::Attribute ZeroI64Elements(const Dims& dims);
ir::Attribute I64(int64_t value);
ir::Attribute Text(std::string value);

// Reads a list of signed VarInts (count, then values).
Status ReadSignedList(Cursor& c, std::vector<int64_t>* out, std::string_view what);

}  // namespace stablert::stablehlo
