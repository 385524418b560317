// In-register block transposes (transpose_simd.h), compiled once per Highway target
// (dispatch.h). A block is kN vectors of kN lanes, one per source row, transposed in
// registers by transpose_regs-inl.h.
#include "kernels/simd/transpose_simd.h"

#include <cstddef>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/transpose_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/transpose_regs-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
HWY_INLINE void TransposeScalar(T* dst, int64_t ldd, const T* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    T* d = dst + i * ldd;
    const T* s = src + i;
    for (int64_t j = 0; j < cols; ++j) d[j] = s[j * lds];
  }
}

// Lanes per vector row of a block: the widest vector up to 512 bits (256 for 2-byte
// elements, whose 32 rows of 512 bits would not fit the registers); 128 bits on targets with
// scalable vectors, whose width is not known at compile time. 0: no vector blocks.
template <typename T>
constexpr size_t kBlockLanes =
#if HWY_TARGET == HWY_SCALAR
    0;
#else
    (HWY_HAVE_SCALABLE ? 16 : ((sizeof(T) == 2 && HWY_MAX_BYTES > 32) ? 32 : HWY_MAX_BYTES)) / sizeof(T);
#endif

#if HWY_TARGET != HWY_SCALAR
// One kN x kN block: dst[i * ldd + j] = src[j * lds + i].
template <typename T, size_t kN>
HWY_INLINE void Block(T* HWY_RESTRICT dst, int64_t ldd, const T* HWY_RESTRICT src, int64_t lds, bool stream) {
  const hn::FixedTag<T, kN> d;
  hn::Vec<decltype(d)> r[kN];
#pragma GCC unroll 32
  for (size_t k = 0; k < kN; ++k) r[k] = hn::LoadU(d, src + static_cast<int64_t>(k) * lds);
  TransposeRegs<T, kN>(r);
  if (stream) {
#pragma GCC unroll 32
    for (size_t k = 0; k < kN; ++k) hn::Stream(r[k], d, dst + static_cast<int64_t>(k) * ldd);
  } else {
#pragma GCC unroll 32
    for (size_t k = 0; k < kN; ++k) hn::StoreU(r[k], d, dst + static_cast<int64_t>(k) * ldd);
  }
}

// Whole kN x kN blocks, then the right and bottom edges with half-width blocks (down to one
// 128-bit vector per row), then scalar copies.
template <typename T, size_t kN>
HWY_INLINE void Rect(T* dst, int64_t ldd, const T* src, int64_t lds, int64_t rows, int64_t cols, bool stream) {
  if constexpr (kN < 16 / sizeof(T)) {
    TransposeScalar(dst, ldd, src, lds, rows, cols);
  } else {
    constexpr auto n = static_cast<int64_t>(kN);
    const int64_t rows_n = rows - rows % n, cols_n = cols - cols % n;
    // Non-temporal stores need whole aligned vectors: every row of every block is aligned
    // when the first is and the row stride is a multiple of the vector.
    const auto bytes = static_cast<int64_t>(kN * sizeof(T));
    const bool aligned_stream = stream && (reinterpret_cast<uintptr_t>(dst) % static_cast<uintptr_t>(bytes) == 0) &&
                                (ldd * static_cast<int64_t>(sizeof(T))) % bytes == 0;
    for (int64_t i = 0; i < rows_n; i += n) {
      for (int64_t j = 0; j < cols_n; j += n) Block<T, kN>(dst + i * ldd + j, ldd, src + j * lds + i, lds, aligned_stream);
    }
    if (cols_n < cols && rows_n > 0) Rect<T, kN / 2>(dst + cols_n, ldd, src + cols_n * lds, lds, rows_n, cols - cols_n, false);
    if (rows_n < rows) Rect<T, kN / 2>(dst + rows_n * ldd, ldd, src + rows_n, lds, rows - rows_n, cols, false);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

template <typename T>
void TileImpl(T* dst, int64_t ldd, const T* src, int64_t lds, int64_t rows, int64_t cols, bool stream) {
#if HWY_TARGET == HWY_SCALAR
  (void)stream;
  TransposeScalar(dst, ldd, src, lds, rows, cols);
#else
  Rect<T, kBlockLanes<T>>(dst, ldd, src, lds, rows, cols, stream);
#endif
}

void Tile16(uint16_t* dst, int64_t ldd, const uint16_t* src, int64_t lds, int64_t rows, int64_t cols, bool stream) {
  TileImpl(dst, ldd, src, lds, rows, cols, stream);
}
void Tile32(uint32_t* dst, int64_t ldd, const uint32_t* src, int64_t lds, int64_t rows, int64_t cols, bool stream) {
  TileImpl(dst, ldd, src, lds, rows, cols, stream);
}
void Tile64(uint64_t* dst, int64_t ldd, const uint64_t* src, int64_t lds, int64_t rows, int64_t cols, bool stream) {
  TileImpl(dst, ldd, src, lds, rows, cols, stream);
}

int64_t BlockSide(int element_bytes) {
  switch (element_bytes) {
    case 2: return static_cast<int64_t>(kBlockLanes<uint16_t>);
    case 4: return static_cast<int64_t>(kBlockLanes<uint32_t>);
    case 8: return static_cast<int64_t>(kBlockLanes<uint64_t>);
    default: return 0;
  }
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "hwy/cache_control.h"

namespace stablert::kernels::simd {
HWY_EXPORT(Tile16);
HWY_EXPORT(Tile32);
HWY_EXPORT(Tile64);
HWY_EXPORT(BlockSide);

void TransposeTile(uint16_t* dst, int64_t ldd, const uint16_t* src, int64_t lds, int64_t rows, int64_t cols,
                   bool stream) {
  HWY_DYNAMIC_DISPATCH(Tile16)(dst, ldd, src, lds, rows, cols, stream);
}
void TransposeTile(uint32_t* dst, int64_t ldd, const uint32_t* src, int64_t lds, int64_t rows, int64_t cols,
                   bool stream) {
  HWY_DYNAMIC_DISPATCH(Tile32)(dst, ldd, src, lds, rows, cols, stream);
}
void TransposeTile(uint64_t* dst, int64_t ldd, const uint64_t* src, int64_t lds, int64_t rows, int64_t cols,
                   bool stream) {
  HWY_DYNAMIC_DISPATCH(Tile64)(dst, ldd, src, lds, rows, cols, stream);
}

void TransposeStreamFence() { hwy::FlushStream(); }

int64_t TransposeBlockSide(int element_bytes) { return HWY_DYNAMIC_DISPATCH(BlockSide)(element_bytes); }

}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
