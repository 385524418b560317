// Vector loops of the argmax/argmin reduction (kernels/argminmax.h) on the host's ISA
// (dispatch.h), for f32 values with s32 indices and f64 values with s64 indices (rows also
// f32 values with s64 indices). Each folds
// elements (x, idx) into an accumulator (value, index) with exactly the results of JAX's
// argmax body applied in order (argmin: "<" for ">"):
//   keep_value = value > x || value is NaN
//   keep_index = keep_value || (value == x && index < idx)        (signed compare)
//   value = keep_value ? value : x;  index = keep_index ? index : idx
// Pure functions over caller memory; thread-safe.
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

// Folds x[0..n), idx[0..n) into (*value, *index). Without NaN the fold is associative (the
// largest value, the smallest index among the elements equal to it, the bits of the last
// of those), so lanes take any elements; a row holding a NaN is folded element by element.
void ArgRow(bool is_max, const float* x, const int32_t* idx, int64_t n, float* value, int32_t* index);
void ArgRow(bool is_max, const double* x, const int64_t* idx, int64_t n, double* value, int64_t* index);
// f32 values with s64 indices (JAX with x64 enabled): a vector max/min pass, then a pass
// over the vectors holding that value.
void ArgRow(bool is_max, const float* x, const int64_t* idx, int64_t n, float* value, int64_t* index);

// For c < width: folds x[r * stride + c], idx[r * stride + c] for r = 0 .. count-1, in that
// order, into (value[c], index[c]). Exact for every input, NaN included.
void ArgRows(bool is_max, float* value, int32_t* index, const float* x, const int32_t* idx, int64_t stride,
             int64_t count, int64_t width);
void ArgRows(bool is_max, double* value, int64_t* index, const double* x, const int64_t* idx, int64_t stride,
             int64_t count, int64_t width);

// The same fold when element k's index is k itself (JAX's iota operand, not read): folds
// x[0..n), 0 < n < 2^31, from its first element. *index gets the first NaN's position if
// there is a NaN (*value its bits), else the first position of the best value (*value the
// bits of the last element equal to it: they differ only for zeros). As the body would
// leave its accumulator after the n elements starting from (x[0], 0).
void ArgRowIota(bool is_max, const float* x, int64_t n, float* value, int64_t* index);
void ArgRowIota(bool is_max, const double* x, int64_t n, double* value, int64_t* index);

// Columns with r as element r's index: for c < width, folds x[r * stride + c] for
// r = 0 .. rows-1 (rows >= 1) in order, starting from (x[c], 0), exactly as the body does
// (NaN, signed zeros); the results go to value[c] and position[c].
void ArgColumnsIota(bool is_max, const float* x, int64_t stride, int64_t rows, int64_t width, float* value,
                    int32_t* position);
void ArgColumnsIota(bool is_max, const double* x, int64_t stride, int64_t rows, int64_t width, double* value,
                    int64_t* position);

}  // namespace stablert::kernels::simd
