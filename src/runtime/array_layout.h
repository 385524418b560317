// Array layouts: the order in which an array's dimensions lie in memory.
//
// A layout is a major_to_minor permutation of the array's dimensions (JAX's
// `Layout(major_to_minor=...)`; XLA's minor_to_major reversed). StableRT computes on dense
// row-major arrays (major_to_minor = 0, 1, ..., rank-1); a buffer may hold its bytes in
// another permutation, as the row-major array of its *physical* dims (dims[major_to_minor[0]],
// dims[major_to_minor[1]], ...). The empty permutation means row-major, and every function
// here normalizes a row-major permutation to empty, so that "no conversion" is one test.
//
// Executables take and give arrays in the layouts the program's entry function asks for
// (`mhlo.layout_mode` attributes, EntryLayouts); the executions convert between those and the
// row-major arrays the plan reads and writes with the transpose kernel (runtime/executable.cc),
// and do nothing for row-major ones.
//
// Pure functions; thread-safe. The copies split large arrays over the shared thread pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "ir/module.h"

namespace stablert::runtime {

// A major_to_minor permutation; empty: row-major.
using MajorToMinor = std::vector<int64_t>;

// `m2m` with a row-major permutation made empty.
MajorToMinor NormalizeLayout(MajorToMinor m2m);
// OK if `m2m` is empty or a permutation of 0..rank-1; else InvalidArgument naming `what`.
Status CheckLayout(const MajorToMinor& m2m, size_t rank, const std::string& what);
// The row-major dims the bytes of an array of `dims` in layout `m2m` form.
Dims PhysicalDims(const Dims& dims, const MajorToMinor& m2m);
// XLA's minor_to_major of `m2m` for an array of `rank` (row-major when empty).
std::vector<int64_t> MinorToMajor(const MajorToMinor& m2m, size_t rank);
// "{1,0}"-style text of a minor_to_major list, as XLA prints layouts.
std::string LayoutToString(const MajorToMinor& m2m, size_t rank);

// Copies `src`, an array of `dims` in layout `from`, into `dst` in layout `to`: one pass of
// the transpose kernel, a plain copy when the two are the same order. `dst` and `src` must
// not overlap; both layouts must be permutations of the rank (CheckLayout) or empty.
void CopyBetweenLayouts(const void* src, const Dims& dims, DType dtype, const MajorToMinor& from,
                        const MajorToMinor& to, void* dst);
// The row-major array `src` of `dims` into `dst` in layout `m2m` (CopyBetweenLayouts).
void CopyRowMajorToLayout(const void* src, const Dims& dims, DType dtype, const MajorToMinor& m2m, void* dst);
// The reverse: `src` holds an array of `dims` in layout `m2m`; `dst` receives it row-major.
void CopyLayoutToRowMajor(const void* src, const Dims& dims, DType dtype, const MajorToMinor& m2m, void* dst);

// The layouts the entry function of a program asks for, one per parameter and result
// (empty: row-major). From each argument's and result's `mhlo.layout_mode`: "default" or
// absent is row-major; "{...}" is a minor_to_major list; "auto" is row-major for parameters
// and, for results, the layout in which the result's bytes are those of what it is computed
// from when it is a transpose (of a parameter in its layout, or of a row-major value), or the
// layout a `LayoutConstraint` custom call producing it names; else row-major.
// InvalidArgument naming the argument or result for a malformed layout.
// `token_parameters`/`token_results`: which parameters and results are `!stablehlo.token`
// (the plan holds them as pred[0]; at the executable's boundary they are token buffers).
struct EntryLayouts {
  std::vector<MajorToMinor> parameters;
  std::vector<MajorToMinor> results;
  std::vector<bool> token_parameters;
  std::vector<bool> token_results;
};
StatusOr<EntryLayouts> ReadEntryLayouts(const ir::Module& module, const ir::Function& entry);

}  // namespace stablert::runtime
