#include "runtime/box_copy.h"

#include <cstring>

namespace stablert::runtime {

void CopyBox(const void* src, const Dims& src_dims, const Dims& src_start, void* dst, const Dims& dst_dims,
             const Dims& dst_start, const Dims& box, size_t element_size) {
  size_t rank = box.size();
  if (ElementCount(box) == 0) return;
  if (rank == 0) {
    std::memcpy(dst, src, element_size);
    return;
  }
  Dims src_strides = RowMajorStrides(src_dims), dst_strides = RowMajorStrides(dst_dims);
  size_t row_bytes = static_cast<size_t>(box[rank - 1]) * element_size;
  Dims index(rank - 1, 0);
  const char* in = static_cast<const char*>(src);
  char* out = static_cast<char*>(dst);
  for (;;) {
    int64_t src_offset = src_start[rank - 1], dst_offset = dst_start[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) {
      src_offset += (src_start[d] + index[d]) * src_strides[d];
      dst_offset += (dst_start[d] + index[d]) * dst_strides[d];
    }
    std::memcpy(out + dst_offset * element_size, in + src_offset * element_size, row_bytes);
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++index[d] < box[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (rank == 1) return;
  }
}

}  // namespace stablert::runtime
