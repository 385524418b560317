// Vector loops of the compare, select and clamp kernels (kernels/compare_select.cc) on the
// host's ISA (dispatch.h). Results are bit-identical to the scalar definitions:
//   - Compare is IEEE comparison (direction in VHLO numbering: EQ NE GE GT LE LT = 0..5;
//     NaN compares unordered), results 0 or 1 per byte;
//   - Select takes on_true where pred's byte is non-zero, on_false elsewhere; elements are
//     moved as raw bits of their width;
//   - Clamp is ops::ClampOne: minimum(maximum(x, lo), hi) with NaN propagation, -0 < +0 and
//     denormals as zeros of their sign.
// Pure functions over caller memory; thread-safe.
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

void Compare(int direction, const float* a, const float* b, uint8_t* out, int64_t n);
void Compare(int direction, const double* a, const double* b, uint8_t* out, int64_t n);
void Compare(int direction, const int32_t* a, const int32_t* b, uint8_t* out, int64_t n);

// out[i] = pred[i] ? on_true[i] : on_false[i].
void Select(const uint8_t* pred, const uint8_t* on_true, const uint8_t* on_false, uint8_t* out, int64_t n);
void Select(const uint8_t* pred, const uint16_t* on_true, const uint16_t* on_false, uint16_t* out, int64_t n);
void Select(const uint8_t* pred, const uint32_t* on_true, const uint32_t* on_false, uint32_t* out, int64_t n);
void Select(const uint8_t* pred, const uint64_t* on_true, const uint64_t* on_false, uint64_t* out, int64_t n);

// out[i] = ClampOne(lo[i * lo_step], x[i], hi[i * hi_step]); steps are 0 (scalar) or 1.
void Clamp(const float* lo, int64_t lo_step, const float* x, const float* hi, int64_t hi_step, float* out, int64_t n);
void Clamp(const double* lo, int64_t lo_step, const double* x, const double* hi, int64_t hi_step, double* out,
           int64_t n);

}  // namespace stablert::kernels::simd
