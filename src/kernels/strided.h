// Strided element copies: the engine behind broadcast, transpose, slice and concatenate.
// Internal to kernels/. Pure functions over caller-provided memory; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace stablert::kernels {

// A short list of int64 kept inline for the common ranks (no allocation up to 8 dims).
class DimVector {
 public:
  explicit DimVector(size_t size, int64_t fill = 0) : size_(size) {
    if (size > kInline) heap_.assign(size, fill);
    else for (size_t i = 0; i < size; ++i) inline_[i] = fill;
  }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  size_t size() const { return size_; }
  int64_t* data() { return size_ > kInline ? heap_.data() : inline_; }
  const int64_t* data() const { return size_ > kInline ? heap_.data() : inline_; }

 private:
  static constexpr size_t kInline = 8;
  size_t size_;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
};

// Row-major strides (in elements) of `dims`.
inline DimVector DenseStrides(std::span<const int64_t> dims) {
  DimVector strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

// Copies the array of shape `dims` read from `src` with element strides `src_strides` into
// `dst` with element strides `dst_strides`. Adjacent dimensions that are contiguous in both
// are merged first so the innermost loop is as long as possible.
template <typename T>
void StridedCopy(T* dst, std::span<const int64_t> dst_strides, const T* src,
                 std::span<const int64_t> src_strides, std::span<const int64_t> dims) {
  const size_t rank = dims.size();
  for (int64_t d : dims)
    if (d == 0) return;
  // Merge dims: drop size-1 dims, fold dim i into i+1 when both strides allow it.
  DimVector size(rank), ds(rank), ss(rank);
  size_t n = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] == 1) continue;
    if (n > 0 && ds[n - 1] == dst_strides[i] * dims[i] && ss[n - 1] == src_strides[i] * dims[i]) {
      size[n - 1] *= dims[i];
      ds[n - 1] = dst_strides[i];
      ss[n - 1] = src_strides[i];
      continue;
    }
    size[n] = dims[i];
    ds[n] = dst_strides[i];
    ss[n] = src_strides[i];
    ++n;
  }
  if (n == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t inner = size[n - 1];
  const int64_t inner_ds = ds[n - 1];
  const int64_t inner_ss = ss[n - 1];
  DimVector index(n, 0);
  int64_t dst_offset = 0, src_offset = 0;
  while (true) {
    T* d = dst + dst_offset;
    const T* s = src + src_offset;
    if (inner_ds == 1 && inner_ss == 1) {
      std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(T));
    } else if (inner_ds == 1 && inner_ss == 0) {
      const T value = s[0];
      for (int64_t i = 0; i < inner; ++i) d[i] = value;
    } else if (inner_ds == 1) {
      for (int64_t i = 0; i < inner; ++i) d[i] = s[i * inner_ss];
    } else {
      for (int64_t i = 0; i < inner; ++i) d[i * inner_ds] = s[i * inner_ss];
    }
    // Advance the odometer over the outer dimensions.
    size_t dim = n - 1;
    while (true) {
      if (dim == 0) return;
      --dim;
      if (++index[dim] < size[dim]) {
        dst_offset += ds[dim];
        src_offset += ss[dim];
        break;
      }
      dst_offset -= ds[dim] * (size[dim] - 1);
      src_offset -= ss[dim] * (size[dim] - 1);
      index[dim] = 0;
    }
  }
}

}  // namespace stablert::kernels
