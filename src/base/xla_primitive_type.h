// XLA's element-type numbering (xla.PrimitiveType in xla_data.proto, which XLA's FFI
// XLA_FFI_DataType repeats), as opposed to PJRT_Buffer_Type's, which DType follows.
// Serialized XLA protos (ShapeProto) and FFI call frames speak this numbering.
// Pure and thread-safe.
#pragma once

#include <optional>

#include "base/dtype.h"

namespace stablert {

// The xla.PrimitiveType number of `dtype`, or nullopt for kInvalid and for types whose
// number StableRT does not know (the 6-bit floats).
std::optional<int> XlaPrimitiveType(DType dtype);

// The DType of an xla.PrimitiveType number, or nullopt if it has none here.
std::optional<DType> DTypeOfXlaPrimitiveType(int primitive_type);

}  // namespace stablert
