// Vector steps of the scan kernels (scan_simd.h), compiled once per Highway target
// (dispatch.h).
#include "kernels/simd/scan_simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <cstdint>
#include <type_traits>

#include "kernels/scalar_ops.h"
#include "kernels/scan.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/scan_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/simd/max_min-inl.h"
#include "kernels/simd/transpose_regs-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Requests the cache line `bytes` from `p` (either side of it): the address is computed as an
// integer, so it may lie outside the array (a prefetch never faults).
HWY_INLINE void PrefetchFrom(const void* p, int64_t bytes) {
  hwy::Prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes)));
}

// One step of the body on vectors and on scalars (the definition, scalar_ops.h).
// Float max/min: `a` must be a result of an earlier step or an init passed through Prepare
// (flushed, or NaN), which every accumulator and carry here is; then max_min-inl.h's
// MaxMin reduces to flushing b, and a NaN b needs no test of its own (it is not flushed
// and compares false, so b is picked).
template <ScanBody kBody, class D, class V>
HWY_INLINE V Step(D d, V a, V b) {
  using T = hn::TFromD<D>;
  if constexpr (kBody == ScanBody::kAdd) {
    return hn::Add(a, b);
  } else if constexpr (kBody == ScanBody::kMul) {
    return hn::Mul(a, b);
  } else if constexpr (std::is_floating_point_v<T>) {
    const hn::RebindToSigned<D> di;
    const V fb = FlushDenormal(d, b);
    const auto a_negative = hn::RebindMask(d, hn::Lt(hn::BitCast(di, a), hn::Zero(di)));
    const auto equal = hn::Eq(a, fb);
    const auto pick_a = kBody == ScanBody::kMax ? hn::Or(hn::Gt(a, fb), hn::AndNot(a_negative, equal))
                                                : hn::Or(hn::Lt(a, fb), hn::And(a_negative, equal));
    return hn::IfThenElse(hn::Or(pick_a, hn::IsNaN(a)), a, fb);
  } else if constexpr (kBody == ScanBody::kMax) {
    return hn::Max(a, b);
  } else {
    return hn::Min(a, b);
  }
}

// The init as a vector `a` of Step: flushed for float max/min (which flush it anyway).
template <ScanBody kBody, class D>
HWY_INLINE hn::Vec<D> Prepare(D d, hn::TFromD<D> init) {
  if constexpr ((kBody == ScanBody::kMax || kBody == ScanBody::kMin) && std::is_floating_point_v<hn::TFromD<D>>)
    return FlushDenormal(d, hn::Set(d, init));
  else
    return hn::Set(d, init);
}

template <ScanBody kBody, typename T>
HWY_INLINE T StepOne(T a, T b) {
  if constexpr (kBody == ScanBody::kAdd) return ops::AddOp::Apply(a, b);
  else if constexpr (kBody == ScanBody::kMul) return ops::MultiplyOp::Apply(a, b);
  else if constexpr (kBody == ScanBody::kMax) return ops::MaxOp::Apply(a, b);
  else return ops::MinOp::Apply(a, b);
}

// Lanes [k, ...) of a tile in whole vectors of d; returns the first lane not done.
template <ScanBody kBody, class D>
HWY_INLINE int64_t TileVectors(D d, bool reverse, const hn::TFromD<D>* x, int64_t xs, hn::TFromD<D>* y, int64_t ys,
                               int64_t rows, int64_t k, int64_t w, hn::TFromD<D> init, const hn::TFromD<D>* e,
                               hn::TFromD<D>* total) {
  constexpr bool kMaxMin = kBody == ScanBody::kMax || kBody == ScanBody::kMin;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vinit = Prepare<kBody>(d, init);
  auto out = [&](auto v, auto ev, int64_t r) {
    hn::StoreU(e != nullptr ? Step<kBody>(d, v, ev) : v, d, y + r * ys + k);
  };
  for (; k + lanes <= w; k += lanes) {
    const auto ev = e != nullptr ? hn::LoadU(d, e + k) : vinit;  // (unused without e)
    if (!reverse) {
      auto p = Step<kBody>(d, vinit, hn::LoadU(d, x + k));
      out(p, ev, 0);
      for (int64_t r = 1; r < rows; ++r) {
        p = Step<kBody>(d, p, hn::LoadU(d, x + r * xs + k));
        out(p, ev, r);
      }
      hn::StoreU(p, d, total + k);
    } else if constexpr (kMaxMin) {
      // A max/min suffix folded in ascending order, init first, is init combined with the
      // suffix folded from its end with the newer element first: both keep the first NaN
      // of (init, x_r, ..., x_last) and otherwise the largest (smallest) flushed value,
      // +0 above -0. So one running fold from the end serves every row.
      auto u = hn::LoadU(d, x + (rows - 1) * xs + k);
      auto q = Step<kBody>(d, vinit, u);
      out(q, ev, rows - 1);
      for (int64_t r = rows - 2; r >= 0; --r) {
        const auto xr = hn::LoadU(d, x + r * xs + k);
        if constexpr (std::is_floating_point_v<hn::TFromD<D>>) u = MaxMin<kBody == ScanBody::kMax>(d, xr, u);
        else u = Step<kBody>(d, xr, u);
        q = Step<kBody>(d, vinit, u);
        out(q, ev, r);
      }
      hn::StoreU(q, d, total + k);
    } else {
      // Every suffix folded anew in ascending order, four at a time (independent chains);
      // row r is written after every suffix that reads it, so y may be x.
      for (int64_t r = 0; r < rows; r += 4) {
        const int64_t count = std::min<int64_t>(4, rows - r);
        auto a0 = Step<kBody>(d, vinit, hn::LoadU(d, x + r * xs + k));
        auto a1 = count > 1 ? Step<kBody>(d, vinit, hn::LoadU(d, x + (r + 1) * xs + k)) : a0;
        auto a2 = count > 2 ? Step<kBody>(d, vinit, hn::LoadU(d, x + (r + 2) * xs + k)) : a0;
        auto a3 = count > 3 ? Step<kBody>(d, vinit, hn::LoadU(d, x + (r + 3) * xs + k)) : a0;
        for (int64_t i = r + 1; i < rows; ++i) {
          const auto xi = hn::LoadU(d, x + i * xs + k);
          a0 = Step<kBody>(d, a0, xi);
          if (i > r + 1) a1 = Step<kBody>(d, a1, xi);
          if (i > r + 2) a2 = Step<kBody>(d, a2, xi);
          if (i > r + 3) a3 = Step<kBody>(d, a3, xi);
        }
        if (r == 0) hn::StoreU(a0, d, total + k);
        out(a0, ev, r);
        if (count > 1) out(a1, ev, r + 1);
        if (count > 2) out(a2, ev, r + 2);
        if (count > 3) out(a3, ev, r + 3);
      }
    }
  }
  return k;
}

template <ScanBody kBody, class D>
HWY_INLINE int64_t CarryVectors(D d, hn::TFromD<D>* y, int64_t ys, int64_t rows, int64_t k, int64_t w,
                                const hn::TFromD<D>* e) {
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  for (; k + lanes <= w; k += lanes) {
    const auto ev = hn::LoadU(d, e + k);
    for (int64_t r = 0; r < rows; ++r) hn::StoreU(Step<kBody>(d, hn::LoadU(d, y + r * ys + k), ev), d, y + r * ys + k);
  }
  return k;
}

// Vectors of d, then of half and a quarter of its width (narrow blocks: the totals' levels),
// then single lanes.
template <ScanBody kBody, typename T>
void TileImpl(bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, T init, const T* e,
              T* total) {
  const hn::ScalableTag<T> d;
  int64_t k = TileVectors<kBody>(d, reverse, x, xs, y, ys, rows, 0, w, init, e, total);
#if HWY_TARGET != HWY_SCALAR
  if constexpr (hn::MaxLanes(d) >= 4) {
    const hn::Half<decltype(d)> d2;
    const hn::Half<decltype(d2)> d4;
    k = TileVectors<kBody>(d2, reverse, x, xs, y, ys, rows, k, w, init, e, total);
    k = TileVectors<kBody>(d4, reverse, x, xs, y, ys, rows, k, w, init, e, total);
  }
#endif
  for (; k < w; ++k) {
    if (!reverse) {
      T p = StepOne<kBody>(init, x[k]);
      y[k] = e != nullptr ? StepOne<kBody>(p, e[k]) : p;
      for (int64_t r = 1; r < rows; ++r) {
        p = StepOne<kBody>(p, x[r * xs + k]);
        y[r * ys + k] = e != nullptr ? StepOne<kBody>(p, e[k]) : p;
      }
      total[k] = p;
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) {
      T acc = StepOne<kBody>(init, x[r * xs + k]);
      for (int64_t i = r + 1; i < rows; ++i) acc = StepOne<kBody>(acc, x[i * xs + k]);
      if (r == 0) total[k] = acc;
      y[r * ys + k] = e != nullptr ? StepOne<kBody>(acc, e[k]) : acc;
    }
  }
}

template <ScanBody kBody, typename T>
void CarryImpl(T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {
  const hn::ScalableTag<T> d;
  int64_t k = CarryVectors<kBody>(d, y, ys, rows, 0, w, e);
#if HWY_TARGET != HWY_SCALAR
  if constexpr (hn::MaxLanes(d) >= 4) {
    const hn::Half<decltype(d)> d2;
    const hn::Half<decltype(d2)> d4;
    k = CarryVectors<kBody>(d2, y, ys, rows, k, w, e);
    k = CarryVectors<kBody>(d4, y, ys, rows, k, w, e);
  }
#endif
  for (; k < w; ++k)
    for (int64_t r = 0; r < rows; ++r) y[r * ys + k] = StepOne<kBody>(y[r * ys + k], e[k]);
}

template <typename T>
void Tile(ScanBody body, bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, T init,
          const T* e, T* total) {
  switch (body) {
    case ScanBody::kAdd: return TileImpl<ScanBody::kAdd>(reverse, x, xs, y, ys, rows, w, init, e, total);
    case ScanBody::kMul:
      if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) return;  // not offered (scan_simd.h)
      else return TileImpl<ScanBody::kMul>(reverse, x, xs, y, ys, rows, w, init, e, total);
    case ScanBody::kMax: return TileImpl<ScanBody::kMax>(reverse, x, xs, y, ys, rows, w, init, e, total);
    case ScanBody::kMin: return TileImpl<ScanBody::kMin>(reverse, x, xs, y, ys, rows, w, init, e, total);
  }
}

template <typename T>
void Carry(ScanBody body, T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {
  switch (body) {
    case ScanBody::kAdd: return CarryImpl<ScanBody::kAdd>(y, ys, rows, w, e);
    case ScanBody::kMul:
      if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) return;
      else return CarryImpl<ScanBody::kMul>(y, ys, rows, w, e);
    case ScanBody::kMax: return CarryImpl<ScanBody::kMax>(y, ys, rows, w, e);
    case ScanBody::kMin: return CarryImpl<ScanBody::kMin>(y, ys, rows, w, e);
  }
}

// ------------------------------ Running max/min of one contiguous line
// Max and min are associative and commutative on integers, and on floats without NaNs
// (flushed values in the order -0 < +0: ops::MaxOp/MinOp's result then does not depend
// on the grouping), so there XLA's tiled grouping gives the same bits as one running fold.
// Values are compared as order-preserving signed integers: a float's bits with the
// magnitude bits inverted when negative (total order; -0 below +0), after flushing.

template <typename T>
using KeyOf = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;

template <typename T>
HWY_INLINE KeyOf<T> ScalarKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using K = KeyOf<T>;
    K bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return static_cast<K>(bits ^ ((bits >> (8 * sizeof(K) - 1)) & std::numeric_limits<K>::max()));
  } else {
    return v;
  }
}
template <typename T>
HWY_INLINE T ScalarValue(KeyOf<T> key) {
  if constexpr (std::is_floating_point_v<T>) {
    using K = KeyOf<T>;
    const K bits = static_cast<K>(key ^ ((key >> (8 * sizeof(K) - 1)) & std::numeric_limits<K>::max()));
    T v;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  } else {
    return key;
  }
}

// Writes y for one line (see ScanRunning in scan_simd.h); false at the first NaN (floats).
template <ScanBody kBody, typename T>
bool RunningImpl(bool reverse, const T* x, T* y, int64_t n, T init) {
  constexpr bool kMax = kBody == ScanBody::kMax;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  using K = KeyOf<T>;
  if constexpr (kFloat) {
    if (std::isnan(init)) return false;
  }
  auto flush = [](T v) {
    if constexpr (kFloat) return ops::FlushDenormal(v);
    else return v;
  };
  auto pick = [](K a, K b) { return kMax ? std::max(a, b) : std::min(a, b); };
  K acc = ScalarKey(flush(init));
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  // Lane j takes lanes j-s (reverse: j+s), clamped to the vector: log2(lanes) steps give
  // every lane the max/min of its prefix (suffix); repeats do not change a max/min.
  constexpr int64_t kMaxLanes = static_cast<int64_t>(hn::MaxLanes(d));
  HWY_ALIGN K idx[5][kMaxLanes];
  int steps = 0;
  for (int64_t s = 1; s < lanes; s *= 2, ++steps)
    for (int64_t j = 0; j < lanes; ++j)
      idx[steps][j] = static_cast<K>(reverse ? std::min(j + s, lanes - 1) : std::max<int64_t>(j - s, 0));
  // Every lane takes the last lane (the carry forward) or the first (reverse).
  HWY_ALIGN K first[kMaxLanes], last[kMaxLanes];
  for (int64_t j = 0; j < lanes; ++j) {
    first[j] = 0;
    last[j] = static_cast<K>(lanes - 1);
  }
  auto key = [&](hn::Vec<decltype(d)> v) {
    if constexpr (kFloat) {
      const auto b = hn::BitCast(di, FlushDenormal(d, v));
      return hn::Xor(b, hn::And(hn::ShiftRight<8 * sizeof(K) - 1>(b), hn::Set(di, std::numeric_limits<K>::max())));
    } else {
      return v;
    }
  };
  auto value = [&](hn::Vec<decltype(di)> k) {
    if constexpr (kFloat)
      return hn::BitCast(d, hn::Xor(k, hn::And(hn::ShiftRight<8 * sizeof(K) - 1>(k),
                                               hn::Set(di, std::numeric_limits<K>::max()))));
    else
      return k;
  };
  auto vpick = [](auto a, auto b) { return kMax ? hn::Max(a, b) : hn::Min(a, b); };
  // Outputs of a long line go out with non-temporal stores where every vector store is
  // aligned (as the grouped path's, scan::kMinBytesToStream): a cached store first reads the
  // line it overwrites, a third of the traffic. Fenced before returning. The stores fall at
  // y + multiples of lanes, reverse ones at y + n - multiples of lanes.
  const bool stream = n * static_cast<int64_t>(sizeof(T)) >= scan::kMinBytesToStream &&
                      reinterpret_cast<uintptr_t>(y) % (static_cast<uintptr_t>(lanes) * sizeof(T)) == 0 &&
                      (!reverse || n % lanes == 0);
  auto store = [&](hn::Vec<decltype(d)> v, T* to) {
    if (stream) hn::Stream(v, d, to);
    else hn::StoreU(v, d, to);
  };
  // Blocks of kBlock elements: checked for NaN first, then written, so that y is written
  // only where the result is final.
  constexpr int64_t kBlock = 2048;
  // The NaN check reads each block first: it requests the input 4 KiB ahead in the direction
  // of the walk (a prefetch never faults, so the line's ends need no care).
  constexpr int64_t kAhead = 4096;  // bytes
  auto block = [&](int64_t b0, int64_t b1) -> bool {
    if constexpr (kFloat) {
      // In the direction of the walk (descending for reverse scans): the hardware
      // prefetchers then see one stream in one direction.
      auto nan = hn::FirstN(d, 0);
      if (!reverse) {
        int64_t i = b0;
        for (; i + lanes <= b1; i += lanes) {
          PrefetchFrom(x + i, kAhead);
          nan = hn::Or(nan, hn::IsNaN(hn::LoadU(d, x + i)));
        }
        for (; i < b1; ++i)
          if (std::isnan(x[i])) return false;
      } else {
        int64_t i = b1;
        for (; i - lanes >= b0; i -= lanes) {
          PrefetchFrom(x + i - lanes, -kAhead);
          nan = hn::Or(nan, hn::IsNaN(hn::LoadU(d, x + i - lanes)));
        }
        for (; i > b0; --i)
          if (std::isnan(x[i - 1])) return false;
      }
      if (!hn::AllFalse(d, nan)) return false;
    }
    auto carry = hn::Set(di, acc);
    if (!reverse) {
      int64_t i = b0;
      for (; i + lanes <= b1; i += lanes) {
        auto k = key(hn::LoadU(d, x + i));
        for (int t = 0; t < steps; ++t) k = vpick(k, hn::TableLookupLanes(k, hn::SetTableIndices(di, idx[t])));
        k = vpick(k, carry);
        store(value(k), y + i);
        carry = hn::TableLookupLanes(k, hn::SetTableIndices(di, last));
      }
      acc = hn::GetLane(carry);
      for (; i < b1; ++i) {
        acc = pick(acc, ScalarKey(flush(x[i])));
        y[i] = ScalarValue<T>(acc);
      }
    } else {
      int64_t i = b1;
      for (; i - lanes >= b0; i -= lanes) {
        auto k = key(hn::LoadU(d, x + i - lanes));
        for (int t = 0; t < steps; ++t) k = vpick(k, hn::TableLookupLanes(k, hn::SetTableIndices(di, idx[t])));
        k = vpick(k, carry);
        store(value(k), y + i - lanes);
        carry = hn::TableLookupLanes(k, hn::SetTableIndices(di, first));
      }
      acc = hn::GetLane(carry);
      for (; i > b0; --i) {
        acc = pick(acc, ScalarKey(flush(x[i - 1])));
        y[i - 1] = ScalarValue<T>(acc);
      }
    }
    return true;
  };
  bool done = true;
  if (!reverse) {
    for (int64_t b0 = 0; b0 < n && done; b0 += kBlock) done = block(b0, std::min(n, b0 + kBlock));
  } else {
    for (int64_t b1 = n; b1 > 0 && done; b1 -= kBlock) done = block(std::max<int64_t>(0, b1 - kBlock), b1);
  }
  if (stream) TransposeStreamFence();
  return done;
}

template <typename T>
bool Running(ScanBody body, bool reverse, const T* x, T* y, int64_t n, T init) {
  switch (body) {
    case ScanBody::kMax: return RunningImpl<ScanBody::kMax>(reverse, x, y, n, init);
    case ScanBody::kMin: return RunningImpl<ScanBody::kMin>(reverse, x, y, n, init);
    default: return false;
  }
}

// ------------------------------ Whole contiguous lines, kN tiles at a time in registers
// The grouped scan of scan.h for one contiguous line (ScanLine in scan_simd.h): kN
// consecutive tiles (kN = lanes, at most 16) are loaded as 16 / kN vectors each, transposed
// in registers so that vector r holds element r of every tile, folded (the tile prefixes, or
// every suffix folded anew), carried and transposed back; the kN tile totals go through the
// level-1 step in lanes (level1_forward; reverse: suffixes by sliding lanes), the elements
// after the whole groups one value at a time (level1), and the levels from 2 up through
// scan::TotalsScan. Every output is the same operations in the same order as ScanLines'
// chunks: the same bits. The elements after the last whole group of 16 tiles run the same
// steps one value at a time.

// r[k] lane j becomes r[j] lane k (kN x kN; transpose_regs-inl.h, shared with the
// transpose kernel's blocks).
template <typename T, size_t kN>
HWY_INLINE void TransposeTiles(hn::Vec<hn::FixedTag<T, kN>>* r) {
#if HWY_TARGET == HWY_SCALAR
  (void)r;  // kN == 1
#else
  if constexpr (kN > 1) TransposeRegs<T, kN>(r);
#endif
}

// One body step on scalars, as scan.h's Steps::One (for TotalsScan).
template <ScanBody kBody, typename T>
struct ScalarSteps {
  T init;
  T One(T a, T b) const { return StepOne<kBody>(a, b); }
};

template <ScanBody kBody, typename T>
void LineImpl(bool reverse, const T* x, T* y, int64_t n, T init, bool stream, const T* floor, int64_t begin = 0,
              int64_t end = -1) {
#if HWY_TARGET == HWY_SCALAR
  constexpr size_t kN = 1;
#else
  constexpr size_t kN = std::min<size_t>(16, HWY_MAX_BYTES / sizeof(T));
#endif
  constexpr int64_t kTile = scan::kTile;
  constexpr size_t kRows = static_cast<size_t>(kTile);
  constexpr size_t kB = kRows / kN;  // vectors per tile
  const hn::FixedTag<T, kN> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t tiles = (n + kTile - 1) / kTile;
  // Level 1 (the tile totals, groups of 16) one tile at a time in processing order, as
  // ScanLines' chunks do; returns the tile's E (its carry).
  const bool top = tiles <= kTile;
  const ScalarSteps<kBody, T> steps{init};
  scan::TotalsScan<T, ScalarSteps<kBody, T>> levels(steps, reverse);
  if (!top) levels.Reset(tiles, 1);
  T carry = init, e1 = init, run1 = init;
  T buffer[kRows];  // reverse: the group's totals from the current tile on
  auto level1 = [&](int64_t t, T total) -> T {
    const int64_t pos = t % kTile, group = t / kTile;
    if (!reverse) {
      run1 = StepOne<kBody>(pos == 0 ? init : run1, total);
    } else {
      const int64_t end = std::min(kTile, tiles - group * kTile);
      buffer[pos] = total;
      run1 = StepOne<kBody>(init, buffer[pos]);
      for (int64_t q = pos + 1; q < end; ++q) run1 = StepOne<kBody>(run1, buffer[q]);
    }
    const T e0 = carry;
    carry = top ? run1 : StepOne<kBody>(run1, e1);
    if (!top && (reverse ? pos == 0 && group > 0 : pos == kTile - 1 && t + 1 < tiles)) levels.Push(&run1, &e1);
    return e0;
  };
  // Non-temporal stores need whole aligned vectors (each store is a multiple of kN
  // elements from y).
  const bool aligned_stream = stream && reinterpret_cast<uintptr_t>(y) % (kN * sizeof(T)) == 0;
  const V vinit = Prepare<kBody>(d, init);
  constexpr int64_t kPrefetchTiles = 4096 / static_cast<int64_t>(kRows * sizeof(T));
  HWY_ALIGN T totals[kN], carries[kN];
  // Lane tables, built at compile time (a row scan calls this once per row). slide[i]: lane
  // j takes lane j + i (clamped; those lanes are masked off). up_one: lane j takes lane
  // j - 1 (lane 0 takes itself; replaced).
  using K = KeyOf<T>;
  struct LaneTables {
    alignas(64) K slide[kN][kN];
    alignas(64) K up_one[kN];
  };
  static constexpr LaneTables kLanes = [] {
    LaneTables t{};
    for (size_t i = 0; i < kN; ++i)
      for (size_t j = 0; j < kN; ++j) t.slide[i][j] = static_cast<K>(std::min(j + i, kN - 1));
    for (size_t j = 0; j < kN; ++j) t.up_one[j] = static_cast<K>(j == 0 ? 0 : j - 1);
    return t;
  }();
  [[maybe_unused]] const auto& slide = kLanes.slide;
  [[maybe_unused]] const auto& up_one = kLanes.up_one;
  // c[r]: lane k holds element r of tile k of the kN whole tiles at xs (transposed in
  // registers, kN x kN at a time).
  auto load_tiles = [&](const T* xs, V (&c)[kRows]) {
#pragma GCC unroll 16
    for (size_t b = 0; b < kB; ++b) {
      V v[kN];
#pragma GCC unroll 16
      for (size_t k = 0; k < kN; ++k) v[k] = hn::LoadU(d, xs + k * kRows + b * kN);
      TransposeTiles<T, kN>(v);
#pragma GCC unroll 16
      for (size_t j = 0; j < kN; ++j) c[b * kN + j] = v[j];
    }
  };
  // Forward level 1 of the kN whole tiles from t0 (lane k: the total of tile t0 + k), in
  // lanes: the same steps as level1(t0 + k, total k) for k = 0, 1, ..., in that order (lane k
  // folds the start and totals 0..k one after another), leaving the same state; returns the
  // tiles' E. Scalar level1 calls, each reading one lane of a stored vector, made the
  // forward walk 2-4x slower than the reverse one on an AMD EPYC (docs/decisions.md).
  auto level1_forward = [&](int64_t t0, V tv) -> V {
#if HWY_TARGET == HWY_SCALAR
    return hn::Set(d, level1(t0, hn::GetLane(tv)));
#else
    const hn::RebindToSigned<decltype(d)> di;
    const int64_t pos0 = t0 % kTile;
    auto lane = [&](V v, size_t i) {  // lane i of v in every lane
      return hn::TableLookupLanes(v, hn::IndicesFromVec(d, hn::Set(di, static_cast<K>(i))));
    };
    V run = Step<kBody>(d, hn::Set(d, pos0 == 0 ? init : run1), lane(tv, 0));
#pragma GCC unroll 16
    for (size_t i = 1; i < kN; ++i) run = hn::IfThenElse(hn::FirstN(d, i), run, Step<kBody>(d, run, lane(tv, i)));
    const V s1 = top ? run : Step<kBody>(d, run, hn::Set(d, e1));
    // E of lane k: the carry before the first tile, then the level-1 output of the tile before.
    const V before = hn::TableLookupLanes(s1, hn::SetTableIndices(d, up_one));
    const V e = hn::IfThenElse(hn::FirstN(d, 1), hn::Set(d, carry), before);
    run1 = hn::GetLane(lane(run, kN - 1));
    carry = hn::GetLane(lane(s1, kN - 1));
    const int64_t last = t0 + static_cast<int64_t>(kN) - 1;
    if (!top && pos0 + static_cast<int64_t>(kN) == kTile && last + 1 < tiles) levels.Push(&run1, &e1);
    return e;
#endif
  };
  // kN whole tiles from tile t0.
  auto lanes = [&](int64_t t0) {
    const T* xs = x + t0 * kTile;
    T* ys = y + t0 * kTile;
    if (reverse && xs - floor >= kPrefetchTiles * kTile) {
      // The descending walk: request the input kPrefetchTiles tiles ahead, a line at a time
      // (into the line before this one where the caller allows it).
      const char* ahead = reinterpret_cast<const char*>(xs - kPrefetchTiles * kTile);
      for (size_t b = 0; b < kN * kRows * sizeof(T); b += 64) hwy::Prefetch(ahead + b);
    } else if (!reverse) {
      // The ascending walk, likewise: without it the loads stalled whenever the hardware
      // prefetchers fell behind (rows of 2048 f32 one after another: 2.8-2.9 ms against
      // 1.1 ms; a 4M line with the other core busy: 2.1-2.6 ms against 1.0-1.1). Past the
      // line's end it requests the next line's start, or nothing: a prefetch never faults.
      const int64_t ahead = kPrefetchTiles * kTile * static_cast<int64_t>(sizeof(T));
      for (int64_t b = 0; b < static_cast<int64_t>(kN * kRows * sizeof(T)); b += 64) PrefetchFrom(xs, ahead + b);
    }
    V c[kRows];
    load_tiles(xs, c);
    V forward_e = vinit;
    if (!reverse) {
      c[0] = Step<kBody>(d, vinit, c[0]);
#pragma GCC unroll 16
      for (size_t r = 1; r < kRows; ++r) c[r] = Step<kBody>(d, c[r - 1], c[r]);
      forward_e = level1_forward(t0, c[kRows - 1]);
    } else {
      // Every suffix folded anew in ascending order; row r is replaced once no later
      // suffix reads it.
#pragma GCC unroll 16
      for (size_t r = 0; r < kRows; ++r) {
        V acc = Step<kBody>(d, vinit, c[r]);
#pragma GCC unroll 16
        for (size_t i = r + 1; i < kRows; ++i) acc = Step<kBody>(d, acc, c[i]);
        c[r] = acc;
      }
      // Level 1 for the kN tiles at once: lane j's suffix folded from init over the totals
      // of tiles j, j + 1, ... to the group's end (the later ones stored in `buffer`).
      const V tv = c[0];
      V acc = Step<kBody>(d, vinit, tv);
#if HWY_TARGET != HWY_SCALAR
#pragma GCC unroll 16
      for (size_t i = 1; i < kN; ++i) {
        const auto next = hn::TableLookupLanes(tv, hn::SetTableIndices(d, slide[i]));
        acc = hn::IfThenElse(hn::FirstN(d, kN - i), Step<kBody>(d, acc, next), acc);
      }
#endif
      const int64_t pos0 = t0 % kTile, group = t0 / kTile;
      for (int64_t q = pos0 + static_cast<int64_t>(kN); q < kTile; ++q) acc = Step<kBody>(d, acc, hn::Set(d, buffer[q]));
      hn::StoreU(tv, d, buffer + pos0);
      const V s1 = top ? acc : Step<kBody>(d, acc, hn::Set(d, e1));
      hn::Store(s1, d, totals);
      // Tile j's E is the level-1 output of tile j + 1; the last lane's, of the tile after
      // these (processed before them).
#pragma GCC unroll 16
      for (size_t k = 0; k + 1 < kN; ++k) carries[k] = totals[k + 1];
      carries[kN - 1] = carry;
      carry = totals[0];
      if (!top && pos0 == 0 && group > 0) {
        T group_total = hn::GetLane(acc);
        levels.Push(&group_total, &e1);
      }
    }
    const V e = reverse ? hn::Load(d, carries) : forward_e;
#pragma GCC unroll 16
    for (size_t r = 0; r < kRows; ++r) c[r] = Step<kBody>(d, c[r], e);
    // o[i] holds elements [i * kN, (i + 1) * kN) of the kN tiles (vector k of block b goes
    // to i = k * kB + b).
    V o[kRows];
#pragma GCC unroll 16
    for (size_t b = 0; b < kB; ++b) {
      V v[kN];
#pragma GCC unroll 16
      for (size_t j = 0; j < kN; ++j) v[j] = c[b * kN + j];
      TransposeTiles<T, kN>(v);
#pragma GCC unroll 16
      for (size_t k = 0; k < kN; ++k) o[k * kB + b] = v[k];
    }
    // Stored in the direction of the walk: a reverse scan writes descending addresses
    // within the kN tiles too. Cached stores that ascend inside blocks taken in descending
    // order make every block's first store miss ahead of the prefetchers (2-3x slower where
    // the output cannot be streamed, i.e. is not aligned to the vector).
    if (aligned_stream) {
#pragma GCC unroll 16
      for (size_t i = 0; i < kRows; ++i) {
        const size_t j = reverse ? kRows - 1 - i : i;
        hn::Stream(o[j], d, ys + j * kN);
      }
    } else {
#pragma GCC unroll 16
      for (size_t i = 0; i < kRows; ++i) {
        const size_t j = reverse ? kRows - 1 - i : i;
        hn::StoreU(o[j], d, ys + j * kN);
      }
    }
  };
  // Forward parts: only the totals of kN whole tiles from t0 (the same steps as `lanes`),
  // through level 1, so that the state after them is the one `lanes` leaves.
  auto totals_only = [&](int64_t t0) {
    const T* xs = x + t0 * kTile;
    V c[kRows];
    load_tiles(xs, c);
    V p = Step<kBody>(d, vinit, c[0]);
#pragma GCC unroll 16
    for (size_t r = 1; r < kRows; ++r) p = Step<kBody>(d, p, c[r]);
    (void)level1_forward(t0, p);
  };
  // One tile of `rows` elements, one value at a time.
  auto single = [&](int64_t t) {
    const int64_t b = t * kTile, rows = std::min(kTile, n - b);
    T total;
    if (!reverse) {
      T p = StepOne<kBody>(init, x[b]);
      y[b] = p;
      for (int64_t r = 1; r < rows; ++r) y[b + r] = p = StepOne<kBody>(p, x[b + r]);
      total = p;
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        T acc = StepOne<kBody>(init, x[b + r]);
        for (int64_t i = r + 1; i < rows; ++i) acc = StepOne<kBody>(acc, x[b + i]);
        y[b + r] = acc;  // x[b + r] is not read again (y may be x)
      }
      total = y[b];
    }
    const T e0 = level1(t, total);
    for (int64_t r = 0; r < rows; ++r) y[b + r] = StepOne<kBody>(y[b + r], e0);
  };
  // Whole groups of 16 tiles in lanes of kN tiles; the tiles after them one at a time.
  const int64_t lane_tiles = n / (kTile * kTile) * kTile;
  if (!reverse) {
    // A part [begin, end) (scan_simd.h: ScanLinePart): the tiles before it only folded.
    const int64_t t_begin = begin / kTile, t_end = end < 0 || end >= n ? tiles : end / kTile;
    for (int64_t t0 = 0; t0 < t_begin; t0 += static_cast<int64_t>(kN)) totals_only(t0);
    for (int64_t t0 = t_begin; t0 < std::min(lane_tiles, t_end); t0 += static_cast<int64_t>(kN)) lanes(t0);
    for (int64_t t = std::max(lane_tiles, t_begin); t < t_end; ++t) single(t);
  } else {
    for (int64_t t = tiles - 1; t >= lane_tiles; --t) single(t);
    for (int64_t t0 = lane_tiles - static_cast<int64_t>(kN); t0 >= 0; t0 -= static_cast<int64_t>(kN)) lanes(t0);
  }
}

template <typename T>
void LinePart(ScanBody body, const T* x, T* y, int64_t n, T init, bool stream, int64_t begin, int64_t end) {
  switch (body) {
    case ScanBody::kAdd: return LineImpl<ScanBody::kAdd>(false, x, y, n, init, stream, x, begin, end);
    case ScanBody::kMul:
      if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) return;  // not offered (scan_simd.h)
      else return LineImpl<ScanBody::kMul>(false, x, y, n, init, stream, x, begin, end);
    case ScanBody::kMax: return LineImpl<ScanBody::kMax>(false, x, y, n, init, stream, x, begin, end);
    case ScanBody::kMin: return LineImpl<ScanBody::kMin>(false, x, y, n, init, stream, x, begin, end);
  }
}

template <typename T>
void Line(ScanBody body, bool reverse, const T* x, T* y, int64_t n, T init, bool stream, const T* floor) {
  switch (body) {
    case ScanBody::kAdd: return LineImpl<ScanBody::kAdd>(reverse, x, y, n, init, stream, floor);
    case ScanBody::kMul:
      if constexpr (sizeof(T) == 8 && !std::is_floating_point_v<T>) return;  // not offered (scan_simd.h)
      else return LineImpl<ScanBody::kMul>(reverse, x, y, n, init, stream, floor);
    case ScanBody::kMax: return LineImpl<ScanBody::kMax>(reverse, x, y, n, init, stream, floor);
    case ScanBody::kMin: return LineImpl<ScanBody::kMin>(reverse, x, y, n, init, stream, floor);
  }
}

#define STABLERT_SCAN_TYPE(Name, T)                                                                             \
  void ScanTile##Name(ScanBody body, bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows,     \
                      int64_t w, T init, const T* e, T* total) {                                               \
    Tile(body, reverse, x, xs, y, ys, rows, w, init, e, total);                                                \
  }                                                                                                             \
  void ScanCarry##Name(ScanBody body, T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {                 \
    Carry(body, y, ys, rows, w, e);                                                                             \
  }                                                                                                             \
  bool ScanRunning##Name(ScanBody body, bool reverse, const T* x, T* y, int64_t n, T init) {                   \
    return Running(body, reverse, x, y, n, init);                                                               \
  }                                                                                                             \
  void ScanLine##Name(ScanBody body, bool reverse, const T* x, T* y, int64_t n, T init, bool stream,          \
                      const T* floor) {                                                                        \
    Line(body, reverse, x, y, n, init, stream, floor);                                                          \
  }                                                                                                             \
  void ScanLinePart##Name(ScanBody body, const T* x, T* y, int64_t n, T init, bool stream, int64_t begin,       \
                          int64_t end) {                                                                        \
    LinePart(body, x, y, n, init, stream, begin, end);                                                          \
  }
STABLERT_SCAN_TYPE(F32, float)
STABLERT_SCAN_TYPE(F64, double)
STABLERT_SCAN_TYPE(S32, int32_t)
STABLERT_SCAN_TYPE(S64, int64_t)
#undef STABLERT_SCAN_TYPE

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {

#define STABLERT_SCAN_EXPORT(Name, T)                                                                          \
  HWY_EXPORT(ScanTile##Name);                                                                                  \
  HWY_EXPORT(ScanCarry##Name);                                                                                 \
  HWY_EXPORT(ScanRunning##Name);                                                                               \
  HWY_EXPORT(ScanLine##Name);                                                                                  \
  HWY_EXPORT(ScanLinePart##Name);                                                                              \
  void ScanLinePart(ScanBody body, const T* x, T* y, int64_t n, T init, bool stream, int64_t begin,             \
                    int64_t end) {                                                                              \
    HWY_DYNAMIC_DISPATCH(ScanLinePart##Name)(body, x, y, n, init, stream, begin, end);                          \
  }                                                                                                             \
  void ScanTile(ScanBody body, bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, \
                T init, const T* e, T* total) {                                                                \
    HWY_DYNAMIC_DISPATCH(ScanTile##Name)(body, reverse, x, xs, y, ys, rows, w, init, e, total);                 \
  }                                                                                                             \
  void ScanCarry(ScanBody body, T* y, int64_t ys, int64_t rows, int64_t w, const T* e) {                       \
    HWY_DYNAMIC_DISPATCH(ScanCarry##Name)(body, y, ys, rows, w, e);                                            \
  }                                                                                                             \
  bool ScanRunning(ScanBody body, bool reverse, const T* x, T* y, int64_t n, T init) {                         \
    return HWY_DYNAMIC_DISPATCH(ScanRunning##Name)(body, reverse, x, y, n, init);                              \
  }                                                                                                             \
  void ScanLine(ScanBody body, bool reverse, const T* x, T* y, int64_t n, T init, bool stream, const T* floor) { \
    HWY_DYNAMIC_DISPATCH(ScanLine##Name)(body, reverse, x, y, n, init, stream, floor == nullptr ? x : floor);   \
  }
STABLERT_SCAN_EXPORT(F32, float)
STABLERT_SCAN_EXPORT(F64, double)
STABLERT_SCAN_EXPORT(S32, int32_t)
STABLERT_SCAN_EXPORT(S64, int64_t)
#undef STABLERT_SCAN_EXPORT

}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
