// Comparing two plugins' outputs of one program: dtype-aware tolerances and a readable report.
//
// Floats agree when |a - b| <= atol + rtol * |b| element by element (NaN equals NaN, infinities
// must match), with per-type defaults (f16 1e-3, bf16 1e-2, f8 and narrower 1e-1, f32 1e-5,
// f64 1e-12, complex as their parts) that --rtol/--atol override; integers and booleans must
// be equal. Pure functions.
#pragma once

#include <optional>
#include <string>

#include "host/buffer.h"

namespace stablert::cli {

struct Tolerance {
  std::optional<double> rtol;  // unset: the type's default
  std::optional<double> atol;
};

struct Comparison {
  bool agree = true;
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;  // element index
  double max_abs_diff = 0;
  std::string detail;  // one line: shapes, counts, the first mismatch's values
};

Comparison CompareLiterals(const host::Literal& a, const host::Literal& b, const Tolerance& tolerance);

}  // namespace stablert::cli
