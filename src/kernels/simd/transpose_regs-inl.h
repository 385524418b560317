// The in-register block transpose, per Highway target: included inside the per-target block
// of the simd/*.cc files that need it (Highway's "-inl.h" convention: the guard toggles once
// per target). Used by the transpose kernel's blocks (transpose_simd.cc) and by the scans'
// tiles in lanes (scan_simd.cc). Pure functions on registers; no state, no memory access.
//
// A block of kN x kN elements is kN vectors of kN lanes, one per row. Within each 128-bit
// block of lanes the rows are interleaved pairwise at doubling lane widths (16, 32, 64 bits),
// which transposes every L x L sub-block (L = lanes per 128 bits); then the 128-bit blocks
// themselves are transposed across the vectors (ConcatLowerLower/ConcatUpperUpper for two
// blocks per vector, with OddEvenBlocks/SwapAdjacentBlocks first for four). Elements are
// moved, never computed on: the bits are the input's.
#if defined(STABLERT_KERNELS_SIMD_TRANSPOSE_REGS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STABLERT_KERNELS_SIMD_TRANSPOSE_REGS_INL_H_
#undef STABLERT_KERNELS_SIMD_TRANSPOSE_REGS_INL_H_
#else
#define STABLERT_KERNELS_SIMD_TRANSPOSE_REGS_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Interleaves lane pairs of a and b at the lane width of `dw` (within 128-bit blocks).
template <class DW, class D, class V>
HWY_INLINE void ZipLanes(DW dw, D d, V a, V b, V& lower, V& upper) {
  lower = hn::BitCast(d, hn::InterleaveLower(dw, hn::BitCast(dw, a), hn::BitCast(dw, b)));
  upper = hn::BitCast(d, hn::InterleaveUpper(dw, hn::BitCast(dw, a), hn::BitCast(dw, b)));
}

// r[k] lane j becomes r[j] lane k, for kN vectors of kN lanes of T (2, 4 or 8 bytes; kN a
// multiple of the lanes per 128 bits, at most four 128-bit blocks per vector).
template <typename T, size_t kN>
HWY_INLINE void TransposeRegs(hn::Vec<hn::FixedTag<T, kN>>* r) {
  const hn::FixedTag<T, kN> d;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t kL = 16 / sizeof(T);  // lanes per 128-bit block
  constexpr size_t kK = kN / kL;         // 128-bit blocks per vector
  static_assert(kK * kL == kN && (kK == 1 || kK == 2 || kK == 4));
  V t[kN];
  // Within 128-bit blocks: afterwards t[kL * g + c] holds, in its 128-bit block b, column
  // kL * b + c of rows kL * g .. kL * g + kL - 1.
  if constexpr (sizeof(T) == 8) {
#pragma GCC unroll 32
    for (size_t g = 0; g < kN / 2; ++g) ZipLanes(d, d, r[2 * g], r[2 * g + 1], t[2 * g], t[2 * g + 1]);
  } else if constexpr (sizeof(T) == 4) {
    const hn::Repartition<uint64_t, decltype(d)> d64;
#pragma GCC unroll 32
    for (size_t k = 0; k < kN / 2; ++k) ZipLanes(d, d, r[2 * k], r[2 * k + 1], t[2 * k], t[2 * k + 1]);
#pragma GCC unroll 32
    for (size_t g = 0; g < kN / 4; ++g) {
      ZipLanes(d64, d, t[4 * g], t[4 * g + 2], r[4 * g], r[4 * g + 1]);
      ZipLanes(d64, d, t[4 * g + 1], t[4 * g + 3], r[4 * g + 2], r[4 * g + 3]);
    }
#pragma GCC unroll 32
    for (size_t k = 0; k < kN; ++k) t[k] = r[k];
  } else {
    static_assert(sizeof(T) == 2);
    const hn::Repartition<uint32_t, decltype(d)> d32;
    const hn::Repartition<uint64_t, decltype(d)> d64;
#pragma GCC unroll 32
    for (size_t k = 0; k < kN / 2; ++k) ZipLanes(d, d, r[2 * k], r[2 * k + 1], t[2 * k], t[2 * k + 1]);
    // r[4q + m]: columns 2m and 2m + 1 of rows 4q .. 4q + 3, in each 128-bit block.
#pragma GCC unroll 32
    for (size_t q = 0; q < kN / 4; ++q) {  // rows 4q .. 4q + 3
      ZipLanes(d32, d, t[4 * q], t[4 * q + 2], r[4 * q], r[4 * q + 1]);          // columns (0,1), (2,3)
      ZipLanes(d32, d, t[4 * q + 1], t[4 * q + 3], r[4 * q + 2], r[4 * q + 3]);  // columns (4,5), (6,7)
    }
#pragma GCC unroll 32
    for (size_t g = 0; g < kN / 8; ++g) {  // rows 8g .. 8g + 7
#pragma GCC unroll 4
      for (size_t m = 0; m < 4; ++m)
        ZipLanes(d64, d, r[8 * g + m], r[8 * g + 4 + m], t[8 * g + 2 * m], t[8 * g + 2 * m + 1]);
    }
  }
  // Across 128-bit blocks: r[kL * b + c] block g = t[kL * g + c] block b.
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
#pragma GCC unroll 32
    for (size_t k = 0; k < kN; ++k) r[k] = t[k];
  }
}
#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // STABLERT_KERNELS_SIMD_TRANSPOSE_REGS_INL_H_ toggle
