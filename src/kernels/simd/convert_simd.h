// Vector loops of the convert kernels (kernels/convert.cc) on the host's ISA (dispatch.h),
// bit-identical to the scalar conversions (kernels/half.h, convert.cc's ConvertOne):
//   - f32 -> bf16/f16: round to nearest even; NaN stays a quiet NaN with its payload's top
//     bits; f16 overflows to infinity and has subnormals;
//   - bf16/f16 -> f32: exact (an f16 NaN keeps its payload bits as they are);
//   - f32 -> s32: truncation toward zero, saturation at the range, NaN -> 0;
//   - s32 -> f32, f64 -> f32: round to nearest even (the hardware conversion); f32 -> f64 exact.
// Pure functions over caller memory; thread-safe.
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

void F32ToBF16(const float* in, uint16_t* out, int64_t n);
void BF16ToF32(const uint16_t* in, float* out, int64_t n);
void F32ToF16(const float* in, uint16_t* out, int64_t n);
void F16ToF32(const uint16_t* in, float* out, int64_t n);
void F32ToS32(const float* in, int32_t* out, int64_t n);
void S32ToF32(const int32_t* in, float* out, int64_t n);
void F64ToF32(const double* in, float* out, int64_t n);
void F32ToF64(const float* in, double* out, int64_t n);

}  // namespace stablert::kernels::simd
