// Vector row updates of scatter's row forms (kernels/gather_scatter.cc) on f32/f64, with the
// scalar semantics of kernels/scalar_ops.h (binary_simd.h's BinaryFn: add, mul, and maximum/
// minimum that propagate NaN, order -0 below +0 and treat denormals as zeros of their sign).
// Rows are updated in order, so duplicates combine exactly as one scalar pass would.
// Thread-safety: reentrant; callers must not let two calls touch the same row elements.
#pragma once

#include <cstdint>

#include "kernels/simd/binary_simd.h"

namespace stablert::kernels::simd {

// For i in [0, count), in order: for c in [0, width):
//   r = block + rows[i] * row_stride, u = updates + positions[i] * update_stride:
//   r[c] = fn(r[c], u[c]).
// fn is kAdd, kMul, kMax or kMin. rows[i] >= 0 (callers drop skipped updates first).
void ScatterCombineRows(BinaryFn fn, float* block, int64_t row_stride, const int64_t* rows, const float* updates,
                        int64_t update_stride, const int64_t* positions, int64_t count, int64_t width);
void ScatterCombineRows(BinaryFn fn, double* block, int64_t row_stride, const int64_t* rows, const double* updates,
                        int64_t update_stride, const int64_t* positions, int64_t count, int64_t width);

// Rows named by int32 indices: for i in [0, count), v = indices[i], plus wrap when v < 0;
// v in [0, size) names row v, other values skip update i.
struct IndexedRows {
  const int32_t* indices;
  int64_t wrap;
  int64_t size;
};
// For i in [0, count) whose index names a row, in order: for c in [0, width):
//   r = block + v * row_stride, u = updates + i * update_stride: r[c] = fn(r[c], u[c]).
void ScatterCombineIndexed(BinaryFn fn, float* block, int64_t row_stride, const IndexedRows& rows,
                           const float* updates, int64_t update_stride, int64_t count, int64_t width);
void ScatterCombineIndexed(BinaryFn fn, double* block, int64_t row_stride, const IndexedRows& rows,
                           const double* updates, int64_t update_stride, int64_t count, int64_t width);

}  // namespace stablert::kernels::simd
