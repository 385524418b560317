// Array layouts of the Threefry and Philox generators (see rng_bits.h).
#include "kernels/rng_bits.h"

#include <cstring>

namespace stablert::kernels::rng {
namespace {

// Stores the low `width` bytes of `v` at element `i` of `out` (little-endian truncation).
inline void StoreLow(void* out, int64_t i, int width, uint64_t v) {
  std::memcpy(static_cast<uint8_t*>(out) + i * width, &v, static_cast<size_t>(width));
}

}  // namespace

uint64_t ThreefryFill(uint64_t key, uint64_t counter, std::span<const int64_t> dims, int width_bytes, void* out) {
  const std::array<uint32_t, 2> k = Split64(key);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (width_bytes == 8) {
    for (int64_t i = 0; i < n; ++i) {
      auto x = Threefry2x32(k, Split64(counter + static_cast<uint64_t>(i)));
      StoreLow(out, i, 8, Join64(x[0], x[1]));
    }
    return counter + static_cast<uint64_t>(n);
  }
  // Halve the shape along `split` (a scalar is treated as a vector of one element).
  int split = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) {
      split = static_cast<int>(i);
      break;
    }
  }
  if (split < 0) {
    for (size_t i = 0; i < dims.size(); ++i)
      if (split < 0 || dims[i] > dims[static_cast<size_t>(split)]) split = static_cast<int>(i);
  }
  int64_t outer = 1, length = 1, inner = 1;
  if (split >= 0) {
    for (int i = 0; i < split; ++i) outer *= dims[static_cast<size_t>(i)];
    length = dims[static_cast<size_t>(split)];
    for (size_t i = static_cast<size_t>(split) + 1; i < dims.size(); ++i) inner *= dims[i];
  }
  const int64_t half = (length + 1) / 2;
  uint64_t h = counter;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < half; ++j) {
      const bool has_second = 2 * j + 1 < length;
      const int64_t first = (o * length + 2 * j) * inner;
      for (int64_t i = 0; i < inner; ++i, ++h) {
        auto x = Threefry2x32(k, Split64(h));
        StoreLow(out, first + i, width_bytes, x[0]);
        if (has_second) StoreLow(out, first + inner + i, width_bytes, x[1]);
      }
    }
  }
  return counter + static_cast<uint64_t>(outer * half * inner);
}

U128 PhiloxFill(uint64_t key, U128 counter, int64_t num_elements, int width_bytes, void* out) {
  const std::array<uint32_t, 2> k = Split64(key);
  const int per_block = width_bytes == 8 ? 2 : 4;
  const int64_t blocks = (num_elements + per_block - 1) / per_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const U128 c = counter.Plus(static_cast<uint64_t>(b));
    const auto lo = Split64(c.lo), hi = Split64(c.hi);
    const auto x = Philox4x32(k, {lo[0], lo[1], hi[0], hi[1]});
    const int64_t first = b * per_block;
    if (width_bytes == 8) {
      StoreLow(out, first, 8, Join64(x[0], x[1]));
      if (first + 1 < num_elements) StoreLow(out, first + 1, 8, Join64(x[2], x[3]));
    } else {
      for (int w = 0; w < 4 && first + w < num_elements; ++w) StoreLow(out, first + w, width_bytes, x[w]);
    }
  }
  return counter.Plus(static_cast<uint64_t>(blocks));
}

}  // namespace stablert::kernels::rng
