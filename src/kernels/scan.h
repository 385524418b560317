// Long scans (cumsum, cumprod, cummax, ... : a reduce_window whose one non-trivial
// dimension has window = length n, stride 1, no dilation, padding (n-1 or n, 0) forward or
// (0, n-1 or n) reverse) grouped exactly as XLA's CPU backend groups them, for window.cc.
//
// XLA rewrites such a scan longer than 16 into a two-level scan: tiles of 16 (the last one
// partial), each output folding its tile prefix (reverse: suffix, folded in ascending
// order), combined with the scan of the tile totals, itself rewritten the same way until
// at most 16 totals are left (that level is a plain tile scan). The grouping decides the
// rounding of float scans (every step for f16/bf16), so it is kept exactly:
//   S_0(i) = P(i) + E(tile of i),  E(t) = init for the first tile (reverse: last),
//            else S_1(t - 1) (reverse: S_1(t + 1)), S_1 the scan of the tile totals,
// where P(i) is ((init + x_b) + ...) + x_i for tile start b, and "+" is the body.
//
// ScanLines computes it in one pass over the data: the outputs of the totals' levels are
// produced as the tiles complete (TotalsScan), in processing order (reverse scans walk the
// line from its end), so each tile's E is known when the tile is folded and every output is
// written once. Lines whose scanned dimension is not contiguous (inner > 1) are folded as
// lanes, up to kLaneChunk lines at a time, read in place. Contiguous lines fold up to
// kTileChunk consecutive tiles at a time as lanes: a chunk is transposed into a
// [16][tiles] block, folded, carried and transposed back, and the chunk's tile totals
// (level 1) are scanned together as lanes too, so only levels 2 and up go through
// TotalsScan one value at a time. Contiguous max/min lines whose values make the body
// associative (integers; floats without NaNs) take one running fold instead (Steps::Running,
// simd::ScanRunning), which gives the same bits; contiguous lines of at least one level-1
// group with vector steps (Steps::Line, simd::ScanLine) fold lanes of tiles in registers
// instead of through the [16][tiles] block. Units of work (a line, or a chunk of lanes) are
// independent and split across the calls of a step.
//
// ReferenceScans is the definition written directly (lines as lanes of an [n][w] array);
// the variadic window kernel uses it (its body is a program on 16-byte slots) and the
// tests compare ScanLines with it.
// Thread-safety: reentrant; concurrent calls must write disjoint outputs. Failure: none
// (MatchScan decides whether a window is a scan; extents come from validated shapes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/simd/transpose_simd.h"
#include "kernels/window_params.h"

namespace stablert::kernels::scan {

constexpr int64_t kTile = 16;
constexpr int64_t kLaneChunk = 128;  // lines folded together when the scanned dim is not contiguous
constexpr int64_t kTileChunk = 128;  // tiles folded together along a contiguous line

// The shape of a scan: `outer` x n x `inner` elements (scanned dimension in the middle),
// out_n = n, or n + 1 for an exclusive scan (padding n: the first output (reverse: last)
// is init, the rest the inclusive scan shifted by one).
struct ScanForm {
  int64_t n = 0, outer = 1, inner = 1, out_n = 0;
  bool reverse = false, exclusive = false;
};

// Whether the window is a scan longer than 16 (shorter ones are one tile: the generic
// window code already folds them in order).
inline bool MatchScan(const WindowParams& params, std::span<const int64_t> in_dims, std::span<const int64_t> out_dims,
                      ScanForm* form) {
  const std::vector<int64_t>& window = params.window_dimensions;
  const std::vector<int64_t>& strides = params.window_strides;
  const std::vector<int64_t>& base = params.base_dilations;
  const std::vector<int64_t>& dilations = params.window_dilations;
  const std::vector<int64_t>& low = params.padding_low;
  const std::vector<int64_t>& high = params.padding_high;
  int64_t dim = -1;
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d] == 1 && strides[d] == 1 && base[d] == 1 && dilations[d] == 1 && low[d] == 0 && high[d] == 0)
      continue;
    if (dim >= 0) return false;
    dim = static_cast<int64_t>(d);
  }
  if (dim < 0) return false;
  const auto d = static_cast<size_t>(dim);
  const int64_t n = in_dims[d];
  if (n <= kTile || window[d] != n || strides[d] != 1 || base[d] != 1 || dilations[d] != 1) return false;
  const bool forward = (low[d] == n - 1 || low[d] == n) && high[d] == 0;
  const bool reverse = (high[d] == n - 1 || high[d] == n) && low[d] == 0;
  if (!forward && !reverse) return false;
  form->n = n;
  form->reverse = !forward;
  form->exclusive = forward ? low[d] == n : high[d] == n;
  form->outer = form->inner = 1;
  for (size_t i = 0; i < d; ++i) form->outer *= in_dims[i];
  for (size_t i = d + 1; i < in_dims.size(); ++i) form->inner *= in_dims[i];
  form->out_n = out_dims[d];
  return true;
}

// The definition: the inclusive scans (reverse: suffixes) of w lines at once, x and out
// [n][w] (element i of line k at i * w + k); combine(acc, v) is one rounded step.
template <typename V, typename Combine>
void ReferenceScans(const V* x, int64_t n, int64_t w, bool reverse, V* out, V init, const Combine& combine) {
  auto scan_tile = [&](const V* in, int64_t begin, int64_t end, V* dst) {
    if (!reverse) {
      for (int64_t k = 0; k < w; ++k) dst[begin * w + k] = combine(init, in[begin * w + k]);
      for (int64_t j = begin + 1; j < end; ++j)
        for (int64_t k = 0; k < w; ++k) dst[j * w + k] = combine(dst[(j - 1) * w + k], in[j * w + k]);
      return;
    }
    for (int64_t j = begin; j < end; ++j) {
      for (int64_t k = 0; k < w; ++k) dst[j * w + k] = combine(init, in[j * w + k]);
      for (int64_t i = j + 1; i < end; ++i)
        for (int64_t k = 0; k < w; ++k) dst[j * w + k] = combine(dst[j * w + k], in[i * w + k]);
    }
  };
  if (n <= kTile) return scan_tile(x, 0, n, out);
  const int64_t tiles = (n + kTile - 1) / kTile;
  std::vector<V> totals(static_cast<size_t>(tiles * w)), carried(totals.size());
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t begin = t * kTile, end = std::min(n, begin + kTile);
    scan_tile(x, begin, end, out);
    const int64_t from = reverse ? begin : end - 1;
    for (int64_t k = 0; k < w; ++k) totals[static_cast<size_t>(t * w + k)] = out[from * w + k];
  }
  ReferenceScans(totals.data(), tiles, w, reverse, carried.data(), init, combine);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t from = reverse ? t + 1 : t - 1;  // the exclusive scan of the totals
    const int64_t begin = t * kTile, end = std::min(n, begin + kTile);
    for (int64_t j = begin; j < end; ++j)
      for (int64_t k = 0; k < w; ++k)
        out[j * w + k] = combine(out[j * w + k], from < 0 || from >= tiles ? init : carried[static_cast<size_t>(from * w + k)]);
  }
}

// Scan steps for any element type: `combine(acc, v)` one rounded step of the body (the
// vector ones, for f32/f64/s32/s64 add/mul/max/min, are in window.cc over scan_simd.h).
// Tile and Carry are as simd::ScanTile / simd::ScanCarry.
template <typename V, typename Combine>
struct GenericScanSteps {
  const Combine& combine;
  V init;
  V One(V a, V b) const { return combine(a, b); }
  void Tile(bool reverse, const V* x, int64_t xs, V* y, int64_t ys, int64_t rows, int64_t w, const V* e,
            V* total) const {
    if (!reverse) {
      for (int64_t k = 0; k < w; ++k) {
        total[k] = combine(init, x[k]);
        y[k] = e != nullptr ? combine(total[k], e[k]) : total[k];
      }
      for (int64_t r = 1; r < rows; ++r)
        for (int64_t k = 0; k < w; ++k) {
          total[k] = combine(total[k], x[r * xs + k]);
          y[r * ys + k] = e != nullptr ? combine(total[k], e[k]) : total[k];
        }
      return;
    }
    for (int64_t k = 0; k < w; ++k)
      for (int64_t r = 0; r < rows; ++r) {
        V acc = combine(init, x[r * xs + k]);
        for (int64_t i = r + 1; i < rows; ++i) acc = combine(acc, x[i * xs + k]);
        if (r == 0) total[k] = acc;
        y[r * ys + k] = e != nullptr ? combine(acc, e[k]) : acc;
      }
  }
  void Carry(V* y, int64_t ys, int64_t rows, int64_t w, const V* e) const {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < w; ++k) y[r * ys + k] = combine(y[r * ys + k], e[k]);
  }
};

// The levels above the tiles of w lines, fed the tile totals in processing order
// (ascending tiles; reverse: descending). Push returns the scan output of the totals'
// level at that tile, which is the E of the next tile processed.
template <typename V, typename Steps>
class TotalsScan {
 public:
  TotalsScan(const Steps& steps, bool reverse) : steps_(steps), reverse_(reverse) {}

  // For lines of n0 elements (n0 > kTile), w lanes.
  void Reset(int64_t n0, int64_t w) {
    w_ = w;
    count_ = 0;
    for (int64_t n = n0; n > kTile;) {
      n = (n + kTile - 1) / kTile;
      if (count_ == levels_.size()) levels_.emplace_back();
      Level& level = levels_[count_++];
      level.n = n;
      level.top = n <= kTile;
      level.next = reverse_ ? n - 1 : 0;
      level.e.assign(static_cast<size_t>(w), steps_.init);
      level.run.resize(static_cast<size_t>(w));
      if (reverse_) level.buffer.resize(static_cast<size_t>(kTile * w));
    }
  }

  // total: the tile's w totals; s (w lanes, not total) receives the level's output.
  void Push(const V* total, V* s) { Push(0, total, s); }

 private:
  struct Level {
    int64_t n = 0, next = 0;
    bool top = false;
    std::vector<V> e, run, buffer;
  };

  void Push(size_t l, const V* t, V* s) {
    Level& level = levels_[l];
    const int64_t i = level.next;
    level.next += reverse_ ? -1 : 1;
    const int64_t pos = i % kTile;
    V* run = level.run.data();
    const V* e = level.e.data();
    if (!reverse_) {
      for (int64_t k = 0; k < w_; ++k) run[k] = steps_.One(pos == 0 ? steps_.init : run[k], t[k]);
    } else {
      const int64_t end = std::min(level.n - (i - pos), kTile);
      V* buffer = level.buffer.data();
      std::copy(t, t + w_, buffer + pos * w_);
      for (int64_t k = 0; k < w_; ++k) {
        V acc = steps_.One(steps_.init, buffer[pos * w_ + k]);
        for (int64_t q = pos + 1; q < end; ++q) acc = steps_.One(acc, buffer[q * w_ + k]);
        run[k] = acc;
      }
    }
    for (int64_t k = 0; k < w_; ++k) s[k] = level.top ? run[k] : steps_.One(run[k], e[k]);
    const bool group_done = reverse_ ? pos == 0 : pos == kTile - 1 || i == level.n - 1;
    if (!level.top && group_done) Push(l + 1, run, level.e.data());
  }

  const Steps& steps_;
  const bool reverse_;
  int64_t w_ = 0;
  size_t count_ = 0;
  std::vector<Level> levels_;
};

// Outputs of at least this many bytes are written with non-temporal stores where the
// scan writes through a transpose (contiguous lines), as the transpose kernel does: the
// output would not stay cached for the next step anyway, and streaming saves reading each
// output line before it is overwritten (docs/benchmarks.md, "Scans in one pass").
constexpr int64_t kMinBytesToStream = int64_t{16} << 20;

// dst[i * ldd + j] = src[j * lds + i] for i < rows, j < cols; `stream`: as
// simd::TransposeTile (the caller fences).
template <typename V>
void Transpose(V* dst, int64_t ldd, const V* src, int64_t lds, int64_t rows, int64_t cols, bool stream = false) {
  if constexpr (sizeof(V) == 2 || sizeof(V) == 4 || sizeof(V) == 8) {
    using U = std::conditional_t<sizeof(V) == 2, uint16_t, std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>>;
    simd::TransposeTile(reinterpret_cast<U*>(dst), ldd, reinterpret_cast<const U*>(src), lds, rows, cols, stream);
  } else {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) dst[i * ldd + j] = src[j * lds + i];
  }
}

// The number of independent units ScanLines splits the scan into.
inline int64_t ScanUnits(const ScanForm& form) {
  return form.inner == 1 ? form.outer : form.outer * ((form.inner + kLaneChunk - 1) / kLaneChunk);
}

// Scans units [first, last) of `form` from in (outer x n x inner) to out (outer x out_n x
// inner). Steps: GenericScanSteps or one with the same members.
template <typename V, typename Steps>
void ScanLines(const ScanForm& form, const V* in, V* out, const Steps& steps, int64_t first, int64_t last) {
  if (first >= last) return;
  const int64_t n = form.n, inner = form.inner, out_n = form.out_n;
  const bool reverse = form.reverse;
  const int64_t shift = form.exclusive && !reverse ? 1 : 0;
  const int64_t tiles = (n + kTile - 1) / kTile;
  TotalsScan<V, Steps> totals(steps, reverse);
  if (inner > 1) {
    const int64_t chunks = (inner + kLaneChunk - 1) / kLaneChunk;
    std::vector<V> e(static_cast<size_t>(kLaneChunk)), total(e.size());
    for (int64_t unit = first; unit < last; ++unit) {
      const int64_t o = unit / chunks, k0 = unit % chunks * kLaneChunk, w = std::min(kLaneChunk, inner - k0);
      const V* x = in + o * n * inner + k0;
      V* y = out + (o * out_n + shift) * inner + k0;
      if (form.exclusive) std::fill_n(out + (o * out_n + (reverse ? n : 0)) * inner + k0, w, steps.init);
      totals.Reset(n, w);
      std::fill_n(e.data(), w, steps.init);
      for (int64_t step = 0; step < tiles; ++step) {
        const int64_t t = reverse ? tiles - 1 - step : step;
        const int64_t b = t * kTile, rows = std::min(kTile, n - b);
        steps.Tile(reverse, x + b * inner, inner, y + b * inner, inner, rows, w, e.data(), total.data());
        if (step + 1 < tiles) totals.Push(total.data(), e.data());
      }
    }
    return;
  }
  // Contiguous lines: the tile totals (level 1) form a line of n1 = tiles values, taken in
  // chunks of kTileChunk (aligned to multiples of kTileChunk, so level-1 groups of 16 never
  // straddle two chunks). A chunk's full tiles are lanes of a [16][m] block (transposed in,
  // folded, carried, transposed out); the partial last tile is one lane of stride 1. Its
  // level-1 values are then scanned together: whole groups as lanes of a [16][groups]
  // block, the group totals fed to the levels above (TotalsScan, one lane), so each
  // tile's E comes from the chunk's level-1 outputs shifted by one.
  const int64_t full = n / kTile, rem = n % kTile, n1 = tiles;
  const bool stream = form.outer * out_n * static_cast<int64_t>(sizeof(V)) >= kMinBytesToStream;
  const bool level1_top = n1 <= kTile;
  const int64_t groups1 = (n1 + kTile - 1) / kTile;
  constexpr int64_t kGroups = kTileChunk / kTile;
  std::vector<V> block(static_cast<size_t>(kTile * kTileChunk)), level1(static_cast<size_t>(kTile * kGroups));
  std::vector<V> tot(kTileChunk), s1(kTileChunk), e0(kTileChunk), gtot(kGroups), e1(kGroups);
  V* const t1 = level1.data();  // [16][kGroups]
  // Reverse scans walk each line from its end, so lines are taken last first: the whole
  // call then reads and writes descending addresses, one stream the prefetchers follow.
  for (int64_t step = first; step < last; ++step) {
    const int64_t o = reverse ? first + last - 1 - step : step;
    const V* x = in + o * n;
    V* y = out + o * out_n + shift;
    if (form.exclusive) out[o * out_n + (reverse ? n : 0)] = steps.init;
    // Where the body is associative on these values (max/min of integers, or of floats
    // without NaNs: Steps::Running says), one running fold gives the grouped result.
    if constexpr (requires { steps.Running(reverse, x, y, n); }) {
      if (!(x < y + n && y < x + n) && steps.Running(reverse, x, y, n)) continue;
    }
    // Vector steps: whole lines of at least one level-1 group in registers (simd::ScanLine).
    // A reverse line may request input ahead down to the first line of this call's share.
    if constexpr (requires { steps.Line(reverse, x, y, n, stream, x); }) {
      if (n >= kTile * kTile) {
        steps.Line(reverse, x, y, n, stream, in + first * n);
        continue;
      }
    }
    if (!level1_top) totals.Reset(n1, 1);  // the levels from 2 up
    V carry = steps.init, carry1 = steps.init;
    auto chunk = [&](int64_t c0) {
      const int64_t c1 = std::min(n1, c0 + kTileChunk), mm = c1 - c0;
      const int64_t m = std::min(c1, full) - c0;  // full tiles; a partial tile follows if mm > m
      if (m > 0) {
        Transpose(block.data(), kTileChunk, x + c0 * kTile, kTile, kTile, m);
        steps.Tile(reverse, block.data(), kTileChunk, block.data(), kTileChunk, kTile, m, nullptr, tot.data());
      }
      if (mm > m)
        steps.Tile(reverse, x + full * kTile, 1, y + full * kTile, 1, rem, 1, nullptr, &tot[static_cast<size_t>(m)]);
      // Level 1 over tot[0, mm): s1 = its scan outputs.
      if (level1_top) {
        V top_total;
        steps.Tile(reverse, tot.data(), 1, s1.data(), 1, mm, 1, nullptr, &top_total);
      } else {
        const int64_t g_full = mm / kTile, part = mm % kTile, g_all = g_full + (part > 0);
        if (g_full > 0) {
          Transpose(t1, kGroups, tot.data(), kTile, kTile, g_full);
          steps.Tile(reverse, t1, kGroups, t1, kGroups, kTile, g_full, nullptr, gtot.data());
        }
        if (part > 0)
          steps.Tile(reverse, &tot[static_cast<size_t>(g_full * kTile)], 1, &s1[static_cast<size_t>(g_full * kTile)], 1,
                     part, 1, nullptr, &gtot[static_cast<size_t>(g_full)]);
        for (int64_t step = 0; step < g_all; ++step) {
          const int64_t g = reverse ? g_all - 1 - step : step, global = c0 / kTile + g;
          e1[static_cast<size_t>(g)] = carry1;
          if (reverse ? global > 0 : global + 1 < groups1) totals.Push(&gtot[static_cast<size_t>(g)], &carry1);
        }
        if (g_full > 0) {
          steps.Carry(t1, kGroups, kTile, g_full, e1.data());
          Transpose(s1.data(), kTile, t1, kGroups, g_full, kTile);
        }
        if (part > 0)
          steps.Carry(&s1[static_cast<size_t>(g_full * kTile)], 1, part, 1, &e1[static_cast<size_t>(g_full)]);
      }
      // Each tile's E: the level-1 output of the tile before it (reverse: after it).
      for (int64_t q = 0; q < mm; ++q) {
        const int64_t from = reverse ? q + 1 : q - 1;
        e0[static_cast<size_t>(q)] = from < 0 || from >= mm ? carry : s1[static_cast<size_t>(from)];
      }
      carry = s1[static_cast<size_t>(reverse ? 0 : mm - 1)];
      if (m > 0) {
        steps.Carry(block.data(), kTileChunk, kTile, m, e0.data());
        Transpose(y + c0 * kTile, kTile, block.data(), kTileChunk, m, kTile, stream);
      }
      if (mm > m) steps.Carry(y + full * kTile, 1, rem, 1, &e0[static_cast<size_t>(m)]);
    };
    if (!reverse) {
      for (int64_t c0 = 0; c0 < n1; c0 += kTileChunk) chunk(c0);
    } else {
      for (int64_t c0 = (n1 - 1) / kTileChunk * kTileChunk; c0 >= 0; c0 -= kTileChunk) chunk(c0);
    }
  }
  if (stream) simd::TransposeStreamFence();
}

}  // namespace stablert::kernels::scan
