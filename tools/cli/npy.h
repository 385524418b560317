// NumPy .npy files (format 1.0-3.0) to and from host Literals, for `stablert run --in/--out`.
//
// Reads little-endian arrays of bool, signed/unsigned integers, f16/f32/f64 and
// complex64/128, in C order (a dense row-major Literal) or Fortran order (a Literal holding
// the column-major bytes as they are, with their byte_strides: the plugin receives a
// column-major host array); anything else (big-endian, objects, structured types) is
// InvalidArgument naming the file and what it holds. Writes version 1.0, C order. Pure functions.
#pragma once

#include <string>

#include "base/status.h"
#include "host/buffer.h"

namespace stablert::cli {

StatusOr<host::Literal> ReadNpy(const std::string& path);
Status WriteNpy(const std::string& path, const host::Literal& literal);

}  // namespace stablert::cli
