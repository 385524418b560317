// Vector row loops for the strided copies behind broadcast, slice, iota, concatenate, pad and
// reverse (kernels/strided.h, kernels/data_movement.cc), compiled once per Highway target
// (dispatch.h). The plugin itself is compiled for baseline x86-64, where the compiler's own
// loops store 16 bytes at a time; these store whole vectors of the target (64 bytes with
// AVX-512), which is what bounds filling or gathering into an L3-resident output.
// The element bytes are moved unchanged, so one width serves every dtype of that size.
// Thread-safety: reentrant; concurrent calls must write disjoint destination elements.
// Failure: none (the caller passes valid extents; count may be 0).
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

// dst[i] = value for i < count.
void FillRow(uint8_t* dst, int64_t count, uint8_t value);
void FillRow(uint16_t* dst, int64_t count, uint16_t value);
void FillRow(uint32_t* dst, int64_t count, uint32_t value);
void FillRow(uint64_t* dst, int64_t count, uint64_t value);

// dst[i] = src[2 * i] for i < count (reads src[0 .. 2 * count - 2]).
void GatherEvenRow(uint16_t* dst, const uint16_t* src, int64_t count);
void GatherEvenRow(uint32_t* dst, const uint32_t* src, int64_t count);
void GatherEvenRow(uint64_t* dst, const uint64_t* src, int64_t count);

// Copies `bytes` bytes, the destination's whole aligned vectors with non-temporal stores (they
// bypass the caches): for large outputs no one reads soon. The caller must call
// TransposeStreamFence() (transpose_simd.h) before anyone (another thread included) reads
// the destination. dst and src must not overlap.
void StreamCopy(void* dst, const void* src, int64_t bytes);

// dst[i] = first + i for i < count (int32 and int64 iota rows).
void IotaRow(int32_t* dst, int64_t count, int32_t first);
void IotaRow(int64_t* dst, int64_t count, int64_t first);

}  // namespace stablert::kernels::simd
