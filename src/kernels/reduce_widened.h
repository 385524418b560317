// Sums of f16/bf16 values widened to f32: the form jnp.sum takes for half types (convert to
// f32, reduce_add.f32, convert back). A fused step (kernels/fused.cc) that is exactly such a
// convert feeding its reduction, over a dense input, runs SumWidenedRows instead of widening
// tile by tile. Part of the reduce kernels (reduce.cc); internal to kernels/.
#pragma once

#include <cstdint>

#include "kernels/kernel.h"

namespace stablert::kernels {

// src viewed as [rows, length] bf16 (bf16 true) or f16 values, each row cut into `segments`
// equal runs (the last shorter): out[row * segments + s] = start + the pairwise sum
// (simd::PairwiseSum) of run s's values widened exactly to f32; the same bits as
// reduce_add.f32 of the widened rows when segments is 1. Each call of a split step does its
// share of the rows x segments outputs. Cannot fail; thread-safe on distinct outputs.
void SumWidenedRows(const KernelContext& context, bool bf16, const uint16_t* src, int64_t rows, int64_t length,
                    int64_t segments, float start, float* out);

}  // namespace stablert::kernels
