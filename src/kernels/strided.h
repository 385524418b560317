// Strided element copies: the engine behind broadcast, transpose, slice and concatenate.
// Internal to kernels/. Pure functions over caller-provided memory; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/kernel.h"
#include "kernels/simd/movement_simd.h"

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

// Rows at least this long fill and gather with the host's widest vectors
// (simd/movement_simd.h); shorter ones stay inline, where the dispatch call would cost more
// than the loop.
constexpr int64_t kMinVectorRow = 64;

// The unsigned word of T's width for the vector row loops (void when there is none).
template <typename T>
using VectorRowWord = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t,
                       std::conditional_t<sizeof(T) == 4, uint32_t, std::conditional_t<sizeof(T) == 8, uint64_t, void>>>>;

// One row of a strided copy: d[i * dst_step] = s[i * src_step] for i < count, with the
// common forms (contiguous, fill, reversed, every second element, gather) as their own loops.
template <typename T>
inline void CopyRow(T* d, int64_t dst_step, const T* s, int64_t src_step, int64_t count) {
  using W = VectorRowWord<T>;
  if (dst_step == 1 && src_step == 1) {
    std::memcpy(static_cast<void*>(d), s, static_cast<size_t>(count) * sizeof(T));
  } else if (dst_step == 1 && src_step == 0) {
    if constexpr (!std::is_void_v<W>) {
      if (count >= kMinVectorRow) {
        W value;
        std::memcpy(&value, s, sizeof(W));
        simd::FillRow(reinterpret_cast<W*>(d), count, value);
        return;
      }
    }
    const T value = s[0];
    for (int64_t i = 0; i < count; ++i) d[i] = value;
  } else if (dst_step == 1 && src_step == -1) {
    // The source is read in ascending addresses (the direction prefetchers follow best) and
    // the destination written backwards: d[count - 1 - j] = first[j], first = s - (count - 1).
    const T* first = s - (count - 1);
    int64_t j = 0;
#if defined(__SSE2__)
    if constexpr (sizeof(T) == 4) {
      for (; j + 4 <= count; j += 4) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + j));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + count - 4 - j), _mm_shuffle_epi32(v, 0x1B));
      }
    } else if constexpr (sizeof(T) == 8) {
      for (; j + 2 <= count; j += 2) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + j));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + count - 2 - j), _mm_shuffle_epi32(v, 0x4E));
      }
    }
#endif
    for (; j < count; ++j) d[count - 1 - j] = first[j];
  } else if (dst_step == 1) {
    if constexpr (sizeof(T) >= 2 && !std::is_void_v<W>) {
      if (src_step == 2 && count >= kMinVectorRow) {
        simd::GatherEvenRow(reinterpret_cast<W*>(d), reinterpret_cast<const W*>(s), count);
        return;
      }
    }
    for (int64_t i = 0; i < count; ++i) d[i] = s[i * src_step];
  } else {
    for (int64_t i = 0; i < count; ++i) d[i * dst_step] = s[i * src_step];
  }
}

// Copies the array of shape `dims` read from `src` with element strides `src_strides` into
// `dst` with element strides `dst_strides`: the share of call `context` (kernel.h) of it,
// so that the calls of a split step together copy it once (rows of the merged shape split
// between the calls, or, when there are fewer rows than calls, the innermost run). Adjacent
// dimensions that are contiguous in both are merged first so the innermost loop is as
// long as possible. A destination stride of 0 is only allowed for a single call.
template <typename T>
void StridedCopyShare(const KernelContext& context, T* dst, std::span<const int64_t> dst_strides, const T* src,
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
    if (context.thread_index == 0) dst[0] = src[0];
    return;
  }
  int64_t inner = size[n - 1];
  const int64_t inner_ds = ds[n - 1];
  const int64_t inner_ss = ss[n - 1];
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < n; ++k) rows *= size[k];
  int64_t row_begin = 0, row_end = rows;
  if (rows >= context.thread_count) {
    std::tie(row_begin, row_end) = ShareOf(context, rows);
  } else {
    const auto [first, last] = ShareOf(context, inner);
    dst += first * inner_ds;
    src += first * inner_ss;
    inner = last - first;
  }
  if (row_begin >= row_end || inner <= 0) return;
  // The odometer over the outer dimensions, set to row_begin.
  DimVector index(n, 0);
  int64_t dst_offset = 0, src_offset = 0;
  for (size_t k = n - 1, rest = static_cast<size_t>(row_begin); k-- > 0;) {
    index[k] = static_cast<int64_t>(rest) % size[k];
    rest /= static_cast<size_t>(size[k]);
    dst_offset += index[k] * ds[k];
    src_offset += index[k] * ss[k];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    CopyRow(dst + dst_offset, inner_ds, src + src_offset, inner_ss, inner);
    // Advance the odometer over the outer dimensions.
    for (size_t dim = n - 1; dim-- > 0;) {
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

// The whole copy on one call (StridedCopyShare with a single call).
template <typename T>
void StridedCopy(T* dst, std::span<const int64_t> dst_strides, const T* src, std::span<const int64_t> src_strides,
                 std::span<const int64_t> dims) {
  StridedCopyShare(KernelContext{}, dst, dst_strides, src, src_strides, dims);
}

}  // namespace stablert::kernels
