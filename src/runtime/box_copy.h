// Copies a rectangular block between two dense row-major arrays: used to assemble global
// arrays from per-device shards and to cut results into shards. Pure; thread-safe for
// disjoint destinations.
#pragma once

#include <cstddef>

#include "base/shape.h"

namespace stablert::runtime {

// Copies the block of extent `box` at `src_start` in `src` (dims `src_dims`) to `dst_start`
// in `dst` (dims `dst_dims`). All arrays have the same rank and element size; the block
// must lie inside both (the caller guarantees it).
void CopyBox(const void* src, const Dims& src_dims, const Dims& src_start, void* dst, const Dims& dst_dims,
             const Dims& dst_start, const Dims& box, size_t element_size);

}  // namespace stablert::runtime
