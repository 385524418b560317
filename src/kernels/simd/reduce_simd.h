// Vector loops of the f32/f64 reduce kernels (kernels/reduce.cc) on the host's ISA
// (dispatch.h). Results are bit-identical to the scalar definitions at every ISA level:
//   - PairwiseSum is pairwise::Sum (kernels/accumulate.h): the same 16 (f32) or 8 (f64)
//     lanes, leaves, carry cascade and lane tree, each lane computed in a vector lane;
//   - AddRows adds rows into dst one after another, per element in row order;
//   - the max/min functions follow ops::MaxOp/MinOp (scalar_ops.h) exactly: NaN propagates
//     (the first NaN in order wins, payload kept), denormals flush to a zero of their sign,
//     -0 < +0. A row holding a NaN is finished by the scalar op;
//   - integer sums wrap, integer max/min are exact (any order gives the same result).
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

enum class ReduceOp : int { kMax, kMin, kAdd };  // kAdd: integer overloads only

float PairwiseSum(const float* x, int64_t n);
double PairwiseSum(const double* x, int64_t n);
// sums[r] = PairwiseSum(x + r * length, length) for r < rows (contiguous rows), with the
// input requested ahead across row boundaries.
void PairwiseSumRows(const float* x, int64_t rows, int64_t length, float* sums);
void PairwiseSumRows(const double* x, int64_t rows, int64_t length, double* sums);
// PairwiseSum of x's bf16 (bf16 true) or f16 values widened exactly to f32, without
// materializing them: the same bits as PairwiseSum of the widened array.
float PairwiseSumWidened(bool bf16, const uint16_t* x, int64_t n);

// dst[i] = dst[i] + rows[r * stride + i] for r = 0 .. count-1, i < width (in that order).
void AddRows(float* dst, const float* rows, int64_t stride, int64_t count, int64_t width);
void AddRows(double* dst, const double* rows, int64_t stride, int64_t count, int64_t width);

// acc op x[0] op ... op x[n-1], left to right (op: MaxOp or MinOp).
float ReduceRow(ReduceOp op, float acc, const float* x, int64_t n);
double ReduceRow(ReduceOp op, double acc, const double* x, int64_t n);

// dst[i] = op(dst[i], rows[r * stride + i]) for r = 0 .. count-1, i < width.
void ReduceRows(ReduceOp op, float* dst, const float* rows, int64_t stride, int64_t count, int64_t width);
void ReduceRows(ReduceOp op, double* dst, const double* rows, int64_t stride, int64_t count, int64_t width);

// Integer add (wrapping), max and min (any ReduceOp), exact in any order:
// acc op x[0] op ... op x[n-1], and dst[i] = op(dst[i], rows[r * stride + i]) for r < count.
#define STABLERT_INT_REDUCE(T)                                                                   \
  T ReduceRow(ReduceOp op, T acc, const T* x, int64_t n);                                        \
  void ReduceRows(ReduceOp op, T* dst, const T* rows, int64_t stride, int64_t count, int64_t width);
STABLERT_INT_REDUCE(int8_t)
STABLERT_INT_REDUCE(uint8_t)
STABLERT_INT_REDUCE(int16_t)
STABLERT_INT_REDUCE(uint16_t)
STABLERT_INT_REDUCE(int32_t)
STABLERT_INT_REDUCE(uint32_t)
STABLERT_INT_REDUCE(int64_t)
STABLERT_INT_REDUCE(uint64_t)
#undef STABLERT_INT_REDUCE

}  // namespace stablert::kernels::simd
