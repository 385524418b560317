// In-register block transposes (transpose_simd.h), compiled once per Highway target
// (dispatch.h).
//
// A block of kN x kN elements is kN vectors of kN lanes, one per source row. Within each
// 128-bit block of lanes the rows are interleaved pairwise at doubling lane widths (16, 32,
// 64 bits), which transposes every L x L sub-block (L = lanes per 128 bits); then the 128-bit
// blocks themselves are transposed across the vectors (ConcatLowerLower/ConcatUpperUpper for
// two blocks per vector, with OddEvenBlocks/SwapAdjacentBlocks first for four).
#include "kernels/simd/transpose_simd.h"

#include <cstddef>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/transpose_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

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
// Interleaves lane pairs of a and b at the lane width of `dw` (within 128-bit blocks).
template <class DW, class D, class V>
HWY_INLINE void Zip(DW dw, D d, V a, V b, V& lower, V& upper) {
  lower = hn::BitCast(d, hn::InterleaveLower(dw, hn::BitCast(dw, a), hn::BitCast(dw, b)));
  upper = hn::BitCast(d, hn::InterleaveUpper(dw, hn::BitCast(dw, a), hn::BitCast(dw, b)));
}

// One kN x kN block: dst[i * ldd + j] = src[j * lds + i].
template <typename T, size_t kN>
HWY_INLINE void Block(T* HWY_RESTRICT dst, int64_t ldd, const T* HWY_RESTRICT src, int64_t lds, bool stream) {
  const hn::FixedTag<T, kN> d;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t kL = 16 / sizeof(T);  // lanes per 128-bit block
  constexpr size_t kK = kN / kL;         // 128-bit blocks per vector
  V r[kN], t[kN];
#pragma GCC unroll 32
  for (size_t k = 0; k < kN; ++k) r[k] = hn::LoadU(d, src + static_cast<int64_t>(k) * lds);
  // Within 128-bit blocks: afterwards t[kL * g + c] holds, in its 128-bit block b, column
  // kL * b + c of rows kL * g .. kL * g + kL - 1.
  if constexpr (sizeof(T) == 8) {
#pragma GCC unroll 32
    for (size_t g = 0; g < kN / 2; ++g) Zip(d, d, r[2 * g], r[2 * g + 1], t[2 * g], t[2 * g + 1]);
  } else if constexpr (sizeof(T) == 4) {
    const hn::Repartition<uint64_t, decltype(d)> d64;
#pragma GCC unroll 32
    for (size_t k = 0; k < kN / 2; ++k) Zip(d, d, r[2 * k], r[2 * k + 1], t[2 * k], t[2 * k + 1]);
#pragma GCC unroll 32
    for (size_t g = 0; g < kN / 4; ++g) {
      Zip(d64, d, t[4 * g], t[4 * g + 2], r[4 * g], r[4 * g + 1]);
      Zip(d64, d, t[4 * g + 1], t[4 * g + 3], r[4 * g + 2], r[4 * g + 3]);
    }
#pragma GCC unroll 32
    for (size_t k = 0; k < kN; ++k) t[k] = r[k];
  } else {
    static_assert(sizeof(T) == 2);
    const hn::Repartition<uint32_t, decltype(d)> d32;
    const hn::Repartition<uint64_t, decltype(d)> d64;
#pragma GCC unroll 32
    for (size_t k = 0; k < kN / 2; ++k) Zip(d, d, r[2 * k], r[2 * k + 1], t[2 * k], t[2 * k + 1]);
    // r[4q + m]: columns 2m and 2m + 1 of rows 4q .. 4q + 3, in each 128-bit block.
#pragma GCC unroll 32
    for (size_t q = 0; q < kN / 4; ++q) {  // rows 4q .. 4q + 3
      Zip(d32, d, t[4 * q], t[4 * q + 2], r[4 * q], r[4 * q + 1]);          // columns (0,1), (2,3)
      Zip(d32, d, t[4 * q + 1], t[4 * q + 3], r[4 * q + 2], r[4 * q + 3]);  // columns (4,5), (6,7)
    }
#pragma GCC unroll 32
    for (size_t g = 0; g < kN / 8; ++g) {  // rows 8g .. 8g + 7
#pragma GCC unroll 4
      for (size_t m = 0; m < 4; ++m)
        Zip(d64, d, r[8 * g + m], r[8 * g + 4 + m], t[8 * g + 2 * m], t[8 * g + 2 * m + 1]);
    }
  }
  // Across 128-bit blocks: out[kL * b + c] block g = t[kL * g + c] block b.
  if constexpr (kK == 2) {
#pragma GCC unroll 16
    for (size_t c = 0; c < kL; ++c) {
      r[c] = hn::ConcatLowerLower(d, t[kL + c], t[c]);
      r[kL + c] = hn::ConcatUpperUpper(d, t[kL + c], t[c]);
    }
  } else if constexpr (kK == 4) {
#pragma GCC unroll 16
    for (size_t c = 0; c < kL; ++c) {
      const V a = t[c], b = t[kL + c], e = t[2 * kL + c], f = t[3 * kL + c];
      const V p = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(b), a);  // a0 b0 a2 b2
      const V q = hn::OddEvenBlocks(b, hn::SwapAdjacentBlocks(a));  // a1 b1 a3 b3
      const V u = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(f), e);  // e0 f0 e2 f2
      const V w = hn::OddEvenBlocks(f, hn::SwapAdjacentBlocks(e));  // e1 f1 e3 f3
      r[c] = hn::ConcatLowerLower(d, u, p);
      r[kL + c] = hn::ConcatLowerLower(d, w, q);
      r[2 * kL + c] = hn::ConcatUpperUpper(d, u, p);
      r[3 * kL + c] = hn::ConcatUpperUpper(d, w, q);
    }
  } else {
    static_assert(kK == 1);
#pragma GCC unroll 32
    for (size_t k = 0; k < kN; ++k) r[k] = t[k];
  }
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
