// Vector element gathers of gather's row forms (kernels/gather_scatter.cc) for 4-byte
// elements (single or in rows of 32 and 64 bytes) and int32 indices: x[i] and jnp.take of single elements, one hardware gather per
// vector of indices (AVX2/AVX-512 gather instructions; plain loads on targets without them).
// Thread-safety: reentrant; reads `src` and `indices`, writes only `out`.
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

// For i in [0, count): v = indices[i]; v += wrap when v < 0 (wrap 0: no wrap); then
//   out[i] = (fills && (v < lo || v > hi)) ? fill : src[clamp(v, 0, size - 1)].
// Requires 1 <= size <= INT32_MAX and 0 <= wrap <= INT32_MAX (v + wrap then fits int32).
struct ElementGather {
  const uint32_t* src;
  int64_t size;
  int32_t wrap;
  bool fills;
  int32_t lo, hi;
  uint32_t fill;
};
void GatherElements32(const ElementGather& g, const int32_t* indices, uint32_t* out, int64_t count);
// The same for rows of `words` (8 or 16) 4-byte words: `src` holds `size` rows, out[i] is
// row i of the result (all `words` of it the fill value when filled).
void GatherRowsOfWords32(const ElementGather& g, int64_t words, const int32_t* indices, uint32_t* out,
                         int64_t count);

}  // namespace stablert::kernels::simd
