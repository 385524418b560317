// Vector loops of the f32 matrix-vector products (kernels/dot_matvec.cc) on the host's ISA
// (dispatch.h). Both read the matrix once, front to back, in as many sequential streams as
// rows they handle at a time, so that a memory-bound product runs at the memory's speed.
// Products use fused multiply-adds where the ISA has them; the summation order is fixed
// per call (independent of the ISA's vector width), so results do not depend on threads.
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

// dst[i] += x[0] * rows[i] + x[1] * rows[stride + i] + ... + x[count-1] * rows[(count-1) * stride + i]
// for i < width, rows taken in order (four at a time into each element's running sum).
void AxpyRows(float* dst, const float* x, const float* rows, int64_t stride, int64_t count, int64_t width);

// out[r] = the pairwise dot product of rows[r * stride .. + k) and x[0 .. k), for r < count:
// products summed in 16 lanes, pairwise::kBlock products per block, the blocks' lane
// vectors combined pairwise (as pairwise::LaneSum, kernels/accumulate.h), the lanes by a
// tree at the end. Each product goes through at most kBlock / 16 + log2(k / kBlock) + 4
// roundings.
void DotRows(float* out, const float* rows, int64_t stride, int64_t count, const float* x, int64_t k);

}  // namespace stablert::kernels::simd
