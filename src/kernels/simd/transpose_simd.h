// In-register block transposes for the transpose kernel (kernels/data_movement.cc), compiled
// once per Highway target (dispatch.h): square blocks of one vector per row (16x16 of 4-byte
// and 8x8 of 8-byte elements with AVX-512, 8x8 / 4x4 with AVX2, 4x4 / 2x2 with SSE4, 16x16 of
// 2-byte elements with AVX2 and AVX-512, 8x8 with SSE4), loaded along source rows and stored
// along destination rows, with half-width blocks and then scalar copies for the edges.
// The element bytes are moved unchanged, so one width serves every dtype of that size.
// Thread-safety: reentrant; concurrent calls must write disjoint destination elements.
// Failure: none (the caller passes valid extents).
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

// dst[i * ldd + j] = src[j * lds + i] for i < rows, j < cols (strides in elements).
// `stream`: write whole destination vectors with non-temporal stores where they are aligned
// (the destination then bypasses the caches); the caller must call TransposeStreamFence()
// before the destination is read by anyone (including another thread).
void TransposeTile(uint16_t* dst, int64_t ldd, const uint16_t* src, int64_t lds, int64_t rows, int64_t cols,
                   bool stream);
void TransposeTile(uint32_t* dst, int64_t ldd, const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                   bool stream);
void TransposeTile(uint64_t* dst, int64_t ldd, const uint64_t* src, int64_t lds, int64_t rows, int64_t cols,
                   bool stream);

// Orders the non-temporal stores of this thread before its later stores (x86 sfence; no-op
// elsewhere). Call once after the last streaming TransposeTile of a kernel call.
void TransposeStreamFence();

// The block side (elements) TransposeTile uses for `element_bytes` (2, 4 or 8) on the target
// the dispatcher selects now; tiles whose sides are multiples of it have no scalar edges.
int64_t TransposeBlockSide(int element_bytes);

}  // namespace stablert::kernels::simd
