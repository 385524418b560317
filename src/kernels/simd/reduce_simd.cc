// Vector loops of the f32/f64 reduce kernels (reduce_simd.h), compiled once per Highway
// target (dispatch.h).
#include "kernels/simd/reduce_simd.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/accumulate.h"
#include "kernels/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/reduce_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/simd/max_min-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The pairwise sum asks for its input kPrefetchBytes ahead of the loads, one request per
// cache line: its loads alone left the memory idle between bursts (a 16M-element f32 sum
// ran at ~11 GB/s on one core with AVX2/AVX-512, 16-20 GB/s with the requests;
// docs/benchmarks.md, "Memory-bound kernels: matrix-vector rows, prefetched sums"). The
// max/min pass gained nothing from them. No request goes past the end of the input.
constexpr int64_t kPrefetchBytes = 4096;

// Requests the lines of [p + kPrefetchBytes, p + kPrefetchBytes + bytes) that lie before `end`.
template <typename T>
HWY_INLINE void PrefetchAhead(const T* p, int64_t bytes, const T* end) {
  const char* from = reinterpret_cast<const char*>(p) + kPrefetchBytes;
  const char* stop = reinterpret_cast<const char*>(end);
  for (int64_t b = 0; b < bytes && from + b < stop; b += 64) hwy::Prefetch(from + b);
}

// The lanes of v summed as a tree, p[j] += p[j + h] for h = lanes / 2, ..., 1: returns p[0].
template <class D>
HWY_INLINE hn::TFromD<D> LaneTree(D d, hn::Vec<D> v) {
  using T = hn::TFromD<D>;
#if HWY_TARGET != HWY_SCALAR  // (one lane there: no halves or shuffles)
  constexpr size_t kBytes = hn::MaxLanes(D()) * sizeof(T);
  if constexpr (kBytes > 16) {
    const hn::Half<D> dh;
    return LaneTree(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else if constexpr (kBytes == 16 && sizeof(T) == 4) {
    const auto t = hn::Add(v, hn::Shuffle1032(v));
    return hn::GetLane(hn::Add(t, hn::Shuffle2301(t)));
  } else if constexpr (kBytes == 16) {
    return hn::GetLane(hn::Add(v, hn::Shuffle01(v)));
  } else  // NOLINT: the partial vectors of emulated targets, in memory
#endif
  {
    constexpr int kN = static_cast<int>(hn::MaxLanes(D()));
    HWY_ALIGN T p[kN];
    hn::Store(v, d, p);
    for (int h = kN / 2; h >= 1; h /= 2)
      for (int j = 0; j < h; ++j) p[j] += p[j + h];
    return p[0];
  }
}

// pairwise::LaneSum<1> with each of its kLanes lanes in a vector lane: a block of
// kLanes * kPerLane elements is kLanes / L vectors of L lanes, each summed and carried
// independently, so every lane sees exactly the scalar definition's operations.
// Loads lanes of D's type from S elements: R itself, or bf16/f16 widened exactly to f32.
template <class D, typename S>
HWY_INLINE hn::Vec<D> LoadWide(D d, const S* p) {
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) {
    return hn::LoadU(d, p);
  } else if constexpr (std::is_same_v<S, hwy::bfloat16_t>) {
    const hn::RebindToUnsigned<D> du32;
    const hn::Rebind<uint16_t, D> du16;
    const auto bits = hn::PromoteTo(du32, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)));
    return hn::BitCast(d, hn::ShiftLeft<16>(bits));
  } else {
    const hn::Rebind<hwy::float16_t, D> dh;
    return hn::PromoteTo(d, hn::LoadU(dh, p));
  }
}

template <typename S>
S NegativeZeroOf() {
  if constexpr (std::is_floating_point_v<S>) {
    return S(-0.0);
  } else {
    const uint16_t bits = 0x8000;  // bf16 and f16 alike
    S zero;
    std::memcpy(&zero, &bits, sizeof(zero));
    return zero;
  }
}

// R = float or double; S = R, or bf16/f16 for an f32 sum of their exactly widened values
// (the same operations on the same f32 values as PairwiseSum of the widened array).
// `prefetch_end`: how far ahead the input may be requested (the end of x by default; the
// end of the last row when rows are summed one after another, so that the requests reach
// into the next row: rows of one 4 KB page each otherwise start without any in flight).
template <typename R, typename S = R>
R PairwiseSumImpl(const S* x, int64_t count, const S* prefetch_end = nullptr) {
  if (prefetch_end == nullptr) prefetch_end = x + count;
  constexpr int kLanes = static_cast<int>(64 / sizeof(R));
  constexpr int kPerLane = pairwise::kPerLane;
  constexpr int64_t kBlockSize = int64_t{kLanes} * kPerLane;
  const hn::CappedTag<R, kLanes> d;
  const int lanes = static_cast<int>(hn::Lanes(d));
  constexpr int kVecLanes = static_cast<int>(hn::MaxLanes(decltype(d)()));
  static_assert(kLanes % kVecLanes == 0);
  HWY_ALIGN R level[64][kLanes];
  uint64_t blocks = 0;
  int64_t i = 0;
  // Eight blocks at a time (a row of 1024 f32 in one go): their sums are independent chains
  // (a block's eight adds are a latency chain), so many loads are in flight. They enter the
  // cascade as one at a time would: `blocks` is a multiple of 8 here, so pushing block sums
  // b0..b7 leaves levels 0-2 empty and carries ((b0+b1)+(b2+b3))+((b4+b5)+(b6+b7)) from
  // level 3 on.
  constexpr int kGroup = 8;
  for (; i + kGroup * kBlockSize <= count; i += kGroup * kBlockSize) {
    PrefetchAhead(x + i, kGroup * kBlockSize * static_cast<int64_t>(sizeof(S)), prefetch_end);
    for (int c = 0; c < kLanes; c += lanes) {
      const S* block = x + i + c;
      hn::Vec<decltype(d)> v[kGroup];
      for (int g = 0; g < kGroup; ++g) v[g] = LoadWide(d, block + g * kBlockSize);
      for (int k = 1; k < kPerLane; ++k)
        for (int g = 0; g < kGroup; ++g) v[g] = hn::Add(v[g], LoadWide(d, block + g * kBlockSize + k * kLanes));
      auto sum = hn::Add(hn::Add(hn::Add(v[0], v[1]), hn::Add(v[2], v[3])),
                         hn::Add(hn::Add(v[4], v[5]), hn::Add(v[6], v[7])));
      int l = 3;
      for (; (blocks >> l) & 1; ++l) sum = hn::Add(hn::Load(d, &level[l][c]), sum);
      hn::Store(sum, d, &level[l][c]);
    }
    blocks += kGroup;
  }
  for (; i + kBlockSize <= count; i += kBlockSize) {
    for (int c = 0; c < kLanes; c += lanes) {
      const S* block = x + i + c;
      auto v = LoadWide(d, block);
      for (int k = 1; k < kPerLane; ++k) v = hn::Add(v, LoadWide(d, block + k * kLanes));
      int l = 0;
      for (; (blocks >> l) & 1; ++l) v = hn::Add(hn::Load(d, &level[l][c]), v);
      hn::Store(v, d, &level[l][c]);
    }
    ++blocks;
  }
  // The last partial block, then the levels from the lowest up, then the lanes as a tree,
  // in vectors: lane j of p[c] is the scalar definition's p[c * lanes + j]. A lane the last
  // partial block does not reach adds -0, which leaves every value's bits as they are.
  constexpr int kVecs = kLanes / kVecLanes;
  using V = hn::Vec<decltype(d)>;
  V p[kVecs];
  for (int c = 0; c < kVecs; ++c) p[c] = hn::Set(d, R(-0.0));
  for (; i + kLanes <= count; i += kLanes)
    for (int c = 0; c < kVecs; ++c) p[c] = hn::Add(p[c], LoadWide(d, x + i + c * kVecLanes));
  if (i < count) {
    S tail[kLanes];
    for (int j = 0; j < kLanes; ++j) tail[j] = i + j < count ? x[i + j] : NegativeZeroOf<S>();
    for (int c = 0; c < kVecs; ++c) p[c] = hn::Add(p[c], LoadWide(d, tail + c * kVecLanes));
  }
  for (int l = 0; l < 64 && (blocks >> l) != 0; ++l)
    if ((blocks >> l) & 1)
      for (int c = 0; c < kVecs; ++c) p[c] = hn::Add(hn::Load(d, &level[l][c * kVecLanes]), p[c]);
  for (int h = kVecs / 2; h >= 1; h /= 2)
    for (int c = 0; c < h; ++c) p[c] = hn::Add(p[c], p[c + h]);
  return LaneTree(d, p[0]);
}

// A strip of kV vectors of dst, accumulated down `count` rows (row r at rows + r * stride):
// the accumulators stay in registers and every row is read kV vectors at a time, which
// keeps enough cache lines in flight for strided rows (8 vectors: ~1.25x the throughput of
// 4 on L3-resident 2048x2048 f32 column sums).
constexpr int kStrip = 8;

template <typename T>
void AddRowsImpl(T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + kStrip * lanes <= width; i += kStrip * lanes) {
    V v[kStrip];
    for (int k = 0; k < kStrip; ++k) v[k] = hn::LoadU(d, dst + i + k * lanes);
    const T* row = rows + i;
    for (int64_t r = 0; r < count; ++r, row += stride)
      for (int k = 0; k < kStrip; ++k) v[k] = hn::Add(v[k], hn::LoadU(d, row + k * lanes));
    for (int k = 0; k < kStrip; ++k) hn::StoreU(v[k], d, dst + i + k * lanes);
  }
  for (; i + lanes <= width; i += lanes) {
    auto v = hn::LoadU(d, dst + i);
    for (int64_t r = 0; r < count; ++r) v = hn::Add(v, hn::LoadU(d, rows + r * stride + i));
    hn::StoreU(v, d, dst + i);
  }
  for (; i < width; ++i) {
    T v = dst[i];
    for (int64_t r = 0; r < count; ++r) v += rows[r * stride + i];
    dst[i] = v;
  }
}

// op(a, b) for a, b not NaN and already flushed: ops::MaxOp/MinOp's comparison.
template <ReduceOp kOp, class D, class V>
HWY_INLINE V Pick(D d, V a, V b) {
  const hn::RebindToSigned<D> di;
  const auto a_negative = hn::RebindMask(d, hn::Lt(hn::BitCast(di, a), hn::Zero(di)));
  if constexpr (kOp == ReduceOp::kMax) {
    return hn::IfThenElse(hn::Or(hn::Gt(a, b), hn::AndNot(a_negative, hn::Eq(a, b))), a, b);
  } else {
    return hn::IfThenElse(hn::Or(hn::Lt(a, b), hn::And(a_negative, hn::Eq(a, b))), a, b);
  }
}

template <ReduceOp kOp, typename T>
T Scalar(T a, T b) {
  if constexpr (kOp == ReduceOp::kMax) return ops::MaxOp::Apply(a, b);
  else return ops::MinOp::Apply(a, b);
}

// The machine max/min, exact where no operand is NaN, zero or denormal.
template <ReduceOp kOp, class V>
HWY_INLINE V Plain(V a, V b) {
  if constexpr (kOp == ReduceOp::kMax) return hn::Max(a, b);
  else return hn::Min(a, b);
}

// The fast pass: the machine max/min of x[0..n) (n >= 4 lanes) into *result; false (and
// *result unset) if x holds a NaN, a zero or a denormal, where it may differ from op.
template <ReduceOp kOp, typename T>
HWY_INLINE bool PlainRow(const T* x, int64_t n, T* result) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  auto m0 = hn::LoadU(d, x), m1 = hn::LoadU(d, x + lanes), m2 = hn::LoadU(d, x + 2 * lanes),
       m3 = hn::LoadU(d, x + 3 * lanes);
  // Smallest magnitude seen (NaN-free when `ordered` stays all true).
  auto small = hn::Min(hn::Min(hn::Abs(m0), hn::Abs(m1)), hn::Min(hn::Abs(m2), hn::Abs(m3)));
  auto ordered = hn::And(hn::And(hn::Eq(m0, m0), hn::Eq(m1, m1)), hn::And(hn::Eq(m2, m2), hn::Eq(m3, m3)));
  int64_t i = 4 * lanes;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const auto x0 = hn::LoadU(d, x + i), x1 = hn::LoadU(d, x + i + lanes);
    const auto x2 = hn::LoadU(d, x + i + 2 * lanes), x3 = hn::LoadU(d, x + i + 3 * lanes);
    ordered = hn::And(ordered, hn::And(hn::And(hn::Eq(x0, x0), hn::Eq(x1, x1)), hn::And(hn::Eq(x2, x2), hn::Eq(x3, x3))));
    small = hn::Min(small, hn::Min(hn::Min(hn::Abs(x0), hn::Abs(x1)), hn::Min(hn::Abs(x2), hn::Abs(x3))));
    m0 = Plain<kOp>(m0, x0);
    m1 = Plain<kOp>(m1, x1);
    m2 = Plain<kOp>(m2, x2);
    m3 = Plain<kOp>(m3, x3);
  }
  for (; i + lanes <= n; i += lanes) {
    const auto x0 = hn::LoadU(d, x + i);
    ordered = hn::And(ordered, hn::Eq(x0, x0));
    small = hn::Min(small, hn::Abs(x0));
    m0 = Plain<kOp>(m0, x0);
  }
  if (i < n) {  // the last (overlapping) vector
    const auto x0 = hn::LoadU(d, x + n - lanes);
    ordered = hn::And(ordered, hn::Eq(x0, x0));
    small = hn::Min(small, hn::Abs(x0));
    m0 = Plain<kOp>(m0, x0);
  }
  if (!hn::AllTrue(d, ordered) ||
      !hn::AllTrue(d, hn::Ge(small, hn::Set(d, std::numeric_limits<T>::min()))))
    return false;
  *result = hn::GetLane(
      (kOp == ReduceOp::kMax ? hn::MaxOfLanes(d, Plain<kOp>(Plain<kOp>(m0, m1), Plain<kOp>(m2, m3)))
                             : hn::MinOfLanes(d, Plain<kOp>(Plain<kOp>(m0, m1), Plain<kOp>(m2, m3)))));
  return true;
}

// Without NaNs op is associative and commutative (a total order on the flushed values,
// -0 < +0), so lanes may take any elements; a NaN anywhere sends the row to the scalar op.
// Rows without NaN, zero and denormal take the machine max/min (PlainRow) first.
template <ReduceOp kOp, typename T>
T ReduceRowImpl(T acc, const T* x, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n < 4 * lanes) {
    for (int64_t i = 0; i < n; ++i) acc = Scalar<kOp>(acc, x[i]);
    return acc;
  }
  T plain;
  if (PlainRow<kOp>(x, n, &plain)) return Scalar<kOp>(acc, plain);
  auto m0 = FlushDenormal(d, hn::LoadU(d, x)), m1 = FlushDenormal(d, hn::LoadU(d, x + lanes));
  auto m2 = FlushDenormal(d, hn::LoadU(d, x + 2 * lanes)), m3 = FlushDenormal(d, hn::LoadU(d, x + 3 * lanes));
  auto nan = hn::Or(hn::Or(hn::IsNaN(m0), hn::IsNaN(m1)), hn::Or(hn::IsNaN(m2), hn::IsNaN(m3)));
  int64_t i = 4 * lanes;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const auto x0 = FlushDenormal(d, hn::LoadU(d, x + i)), x1 = FlushDenormal(d, hn::LoadU(d, x + i + lanes));
    const auto x2 = FlushDenormal(d, hn::LoadU(d, x + i + 2 * lanes)), x3 = FlushDenormal(d, hn::LoadU(d, x + i + 3 * lanes));
    nan = hn::Or(nan, hn::Or(hn::Or(hn::IsNaN(x0), hn::IsNaN(x1)), hn::Or(hn::IsNaN(x2), hn::IsNaN(x3))));
    m0 = Pick<kOp>(d, m0, x0);
    m1 = Pick<kOp>(d, m1, x1);
    m2 = Pick<kOp>(d, m2, x2);
    m3 = Pick<kOp>(d, m3, x3);
  }
  if (!hn::AllFalse(d, nan)) {
    for (int64_t k = 0; k < n; ++k) acc = Scalar<kOp>(acc, x[k]);
    return acc;
  }
  m0 = Pick<kOp>(d, Pick<kOp>(d, m0, m1), Pick<kOp>(d, m2, m3));
  HWY_ALIGN T part[HWY_MAX_BYTES / sizeof(T)];
  hn::Store(m0, d, part);
  T m = part[0];
  for (int64_t j = 1; j < lanes; ++j) m = Scalar<kOp>(m, part[j]);
  for (; i < n; ++i) {
    if (x[i] != x[i]) {  // a NaN in the tail: the first NaN of the row is the result
      for (int64_t k = 0; k < n; ++k) acc = Scalar<kOp>(acc, x[k]);
      return acc;
    }
    m = Scalar<kOp>(m, x[i]);
  }
  return Scalar<kOp>(acc, m);
}

// op(a, b) elementwise with the NaN rules: a NaN a stays, else a NaN b is taken.
template <ReduceOp kOp, class D, class V>
HWY_INLINE V Step(D d, V a, V b) {
  const auto picked = Pick<kOp>(d, FlushDenormal(d, a), FlushDenormal(d, b));
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, picked));
}

// The unsigned bits of |x| minus those of the smallest normal: at most `kNormalRange` exactly
// when x is normal or infinite (zero and denormals wrap around, NaN lies above), so one
// unsigned running max tells whether the machine max/min is exact on every value seen.
template <typename T>
struct NormalBits {
  using U = hwy::MakeUnsigned<T>;
  static constexpr U kSign = U{1} << (sizeof(T) * 8 - 1);
  static constexpr U kMinNormal = static_cast<U>(sizeof(T) == 4 ? 0x00800000ull : 0x0010000000000000ull);
  static constexpr U kInf = static_cast<U>(sizeof(T) == 4 ? 0x7F800000ull : 0x7FF0000000000000ull);
  static constexpr U kNormalRange = kInf - kMinNormal;
};

template <class D, class V>
HWY_INLINE auto Offset(D d, V x) {
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::AndNot(hn::Set(du, NormalBits<T>::kSign), hn::BitCast(du, x));
  return hn::Sub(bits, hn::Set(du, NormalBits<T>::kMinNormal));
}

template <ReduceOp kOp, typename T>
void ReduceRowsImpl(T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  using V = hn::Vec<decltype(d)>;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + kStrip * lanes <= width; i += kStrip * lanes) {
    // The machine max/min while no operand is NaN, zero or denormal (then it equals op).
    V v[kStrip];
    auto offset = hn::Zero(du);
    for (int k = 0; k < kStrip; ++k) {
      v[k] = hn::LoadU(d, dst + i + k * lanes);
      offset = hn::Max(offset, Offset(d, v[k]));
    }
    const T* row = rows + i;
    for (int64_t r = 0; r < count; ++r, row += stride) {
      for (int k = 0; k < kStrip; ++k) {
        const V x = hn::LoadU(d, row + k * lanes);
        offset = hn::Max(offset, Offset(d, x));
        v[k] = Plain<kOp>(v[k], x);
      }
    }
    if (hn::AllFalse(du, hn::Lt(hn::Set(du, NormalBits<T>::kNormalRange), offset))) {
      for (int k = 0; k < kStrip; ++k) hn::StoreU(v[k], d, dst + i + k * lanes);
      continue;
    }
    for (int k = 0; k < kStrip; ++k) {
      auto w = hn::LoadU(d, dst + i + k * lanes);
      for (int64_t r = 0; r < count; ++r) w = Step<kOp>(d, w, hn::LoadU(d, rows + r * stride + i + k * lanes));
      hn::StoreU(w, d, dst + i + k * lanes);
    }
  }
  // Fewer whole vectors than a strip (narrow columns): the strip's accumulators take rows in
  // turn (`ways` rows at a time), so the chains through the accumulators overlap; where every
  // value is normal or infinite the machine max/min is exact in any order, else the rows are
  // folded again in order below.
  if (const int64_t vecs = (width - i) / lanes; vecs > 0 && count > 1) {
    const int64_t ways = kStrip / vecs;
    V v[kStrip];
    auto offset = hn::Zero(du);
    for (int64_t k = 0; k < vecs; ++k) {
      const V w = hn::LoadU(d, dst + i + k * lanes);
      offset = hn::Max(offset, Offset(d, w));
      for (int64_t j = 0; j < ways; ++j) v[j * vecs + k] = w;  // op(w, w) = w
    }
    int64_t r = 0;
    for (; r + ways <= count; r += ways) {
      for (int64_t j = 0; j < ways; ++j) {
        const T* row = rows + (r + j) * stride + i;
        for (int64_t k = 0; k < vecs; ++k) {
          const V x = hn::LoadU(d, row + k * lanes);
          offset = hn::Max(offset, Offset(d, x));
          v[j * vecs + k] = Plain<kOp>(v[j * vecs + k], x);
        }
      }
    }
    for (; r < count; ++r) {
      for (int64_t k = 0; k < vecs; ++k) {
        const V x = hn::LoadU(d, rows + r * stride + i + k * lanes);
        offset = hn::Max(offset, Offset(d, x));
        v[k] = Plain<kOp>(v[k], x);
      }
    }
    if (hn::AllFalse(du, hn::Lt(hn::Set(du, NormalBits<T>::kNormalRange), offset))) {
      for (int64_t k = 0; k < vecs; ++k) {
        V w = v[k];
        for (int64_t j = 1; j < ways; ++j) w = Plain<kOp>(w, v[j * vecs + k]);
        hn::StoreU(w, d, dst + i + k * lanes);
      }
      i += vecs * lanes;
    }
  }
  for (; i + lanes <= width; i += lanes) {
    auto w = hn::LoadU(d, dst + i);
    for (int64_t r = 0; r < count; ++r) w = Step<kOp>(d, w, hn::LoadU(d, rows + r * stride + i));
    hn::StoreU(w, d, dst + i);
  }
  for (; i < width; ++i) {
    T w = dst[i];
    for (int64_t r = 0; r < count; ++r) w = Scalar<kOp>(w, rows[r * stride + i]);
    dst[i] = w;
  }
}

// Integer add (wrapping), max and min: exact, so lanes may take any elements.
template <ReduceOp kOp, class V>
HWY_INLINE V IntOp(V a, V b) {
  if constexpr (kOp == ReduceOp::kAdd) return hn::Add(a, b);
  else if constexpr (kOp == ReduceOp::kMax) return hn::Max(a, b);
  else return hn::Min(a, b);
}

template <ReduceOp kOp, typename T>
T IntScalar(T a, T b) {
  if constexpr (kOp == ReduceOp::kAdd) return static_cast<T>(static_cast<hwy::MakeUnsigned<T>>(a) + static_cast<hwy::MakeUnsigned<T>>(b));
  else if constexpr (kOp == ReduceOp::kMax) return a < b ? b : a;
  else return b < a ? b : a;
}

template <ReduceOp kOp, typename T>
T IntRowImpl(T acc, const T* x, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (n >= 4 * lanes) {
    auto m0 = hn::LoadU(d, x), m1 = hn::LoadU(d, x + lanes), m2 = hn::LoadU(d, x + 2 * lanes),
         m3 = hn::LoadU(d, x + 3 * lanes);
    for (i = 4 * lanes; i + 4 * lanes <= n; i += 4 * lanes) {
      m0 = IntOp<kOp>(m0, hn::LoadU(d, x + i));
      m1 = IntOp<kOp>(m1, hn::LoadU(d, x + i + lanes));
      m2 = IntOp<kOp>(m2, hn::LoadU(d, x + i + 2 * lanes));
      m3 = IntOp<kOp>(m3, hn::LoadU(d, x + i + 3 * lanes));
    }
    m0 = IntOp<kOp>(IntOp<kOp>(m0, m1), IntOp<kOp>(m2, m3));
    HWY_ALIGN T part[HWY_MAX_BYTES / sizeof(T)];
    hn::Store(m0, d, part);
    for (int64_t j = 0; j < lanes; ++j) acc = IntScalar<kOp>(acc, part[j]);
  }
  for (; i < n; ++i) acc = IntScalar<kOp>(acc, x[i]);
  return acc;
}

template <ReduceOp kOp, typename T>
void IntRowsImpl(T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + kStrip * lanes <= width; i += kStrip * lanes) {
    V v[kStrip];
    for (int k = 0; k < kStrip; ++k) v[k] = hn::LoadU(d, dst + i + k * lanes);
    const T* row = rows + i;
    for (int64_t r = 0; r < count; ++r, row += stride)
      for (int k = 0; k < kStrip; ++k) v[k] = IntOp<kOp>(v[k], hn::LoadU(d, row + k * lanes));
    for (int k = 0; k < kStrip; ++k) hn::StoreU(v[k], d, dst + i + k * lanes);
  }
  for (; i + lanes <= width; i += lanes) {
    auto v = hn::LoadU(d, dst + i);
    for (int64_t r = 0; r < count; ++r) v = IntOp<kOp>(v, hn::LoadU(d, rows + r * stride + i));
    hn::StoreU(v, d, dst + i);
  }
  for (; i < width; ++i) {
    T v = dst[i];
    for (int64_t r = 0; r < count; ++r) v = IntScalar<kOp>(v, rows[r * stride + i]);
    dst[i] = v;
  }
}

template <typename T>
T IntRowDispatch(ReduceOp op, T acc, const T* x, int64_t n) {
  switch (op) {
    case ReduceOp::kAdd: return IntRowImpl<ReduceOp::kAdd>(acc, x, n);
    case ReduceOp::kMax: return IntRowImpl<ReduceOp::kMax>(acc, x, n);
    default: return IntRowImpl<ReduceOp::kMin>(acc, x, n);
  }
}

template <typename T>
void IntRowsDispatch(ReduceOp op, T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) {
  switch (op) {
    case ReduceOp::kAdd: return IntRowsImpl<ReduceOp::kAdd>(dst, rows, stride, count, width);
    case ReduceOp::kMax: return IntRowsImpl<ReduceOp::kMax>(dst, rows, stride, count, width);
    default: return IntRowsImpl<ReduceOp::kMin>(dst, rows, stride, count, width);
  }
}

#define STABLERT_INT_REDUCE(T, S)                                                               \
  T IntRow##S(ReduceOp op, T acc, const T* x, int64_t n) { return IntRowDispatch(op, acc, x, n); } \
  void IntRows##S(ReduceOp op, T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) { \
    IntRowsDispatch(op, dst, rows, stride, count, width);                                       \
  }
STABLERT_INT_REDUCE(int8_t, S8)
STABLERT_INT_REDUCE(uint8_t, U8)
STABLERT_INT_REDUCE(int16_t, S16)
STABLERT_INT_REDUCE(uint16_t, U16)
STABLERT_INT_REDUCE(int32_t, S32)
STABLERT_INT_REDUCE(uint32_t, U32)
STABLERT_INT_REDUCE(int64_t, S64)
STABLERT_INT_REDUCE(uint64_t, U64)
#undef STABLERT_INT_REDUCE

float PairwiseSumF32(const float* x, int64_t n) { return PairwiseSumImpl<float>(x, n); }
double PairwiseSumF64(const double* x, int64_t n) { return PairwiseSumImpl<double>(x, n); }
template <typename T>
void PairwiseSumRowsImpl(const T* x, int64_t rows, int64_t length, T* sums) {
  const T* end = x + rows * length;
  for (int64_t r = 0; r < rows; ++r) sums[r] = PairwiseSumImpl<T>(x + r * length, length, end);
}
void PairwiseSumRowsF32(const float* x, int64_t rows, int64_t length, float* sums) {
  PairwiseSumRowsImpl(x, rows, length, sums);
}
void PairwiseSumRowsF64(const double* x, int64_t rows, int64_t length, double* sums) {
  PairwiseSumRowsImpl(x, rows, length, sums);
}
float PairwiseSumBF16(const uint16_t* x, int64_t n) {
  return PairwiseSumImpl<float>(reinterpret_cast<const hwy::bfloat16_t*>(x), n);
}
float PairwiseSumF16(const uint16_t* x, int64_t n) {
  return PairwiseSumImpl<float>(reinterpret_cast<const hwy::float16_t*>(x), n);
}
void AddRowsF32(float* dst, const float* rows, int64_t stride, int64_t count, int64_t width) {
  AddRowsImpl(dst, rows, stride, count, width);
}
void AddRowsF64(double* dst, const double* rows, int64_t stride, int64_t count, int64_t width) {
  AddRowsImpl(dst, rows, stride, count, width);
}
float ReduceRowF32(ReduceOp op, float acc, const float* x, int64_t n) {
  return op == ReduceOp::kMax ? ReduceRowImpl<ReduceOp::kMax>(acc, x, n) : ReduceRowImpl<ReduceOp::kMin>(acc, x, n);
}
double ReduceRowF64(ReduceOp op, double acc, const double* x, int64_t n) {
  return op == ReduceOp::kMax ? ReduceRowImpl<ReduceOp::kMax>(acc, x, n) : ReduceRowImpl<ReduceOp::kMin>(acc, x, n);
}
void ReduceRowsF32(ReduceOp op, float* dst, const float* rows, int64_t stride, int64_t count, int64_t width) {
  if (op == ReduceOp::kMax) ReduceRowsImpl<ReduceOp::kMax>(dst, rows, stride, count, width);
  else ReduceRowsImpl<ReduceOp::kMin>(dst, rows, stride, count, width);
}
void ReduceRowsF64(ReduceOp op, double* dst, const double* rows, int64_t stride, int64_t count, int64_t width) {
  if (op == ReduceOp::kMax) ReduceRowsImpl<ReduceOp::kMax>(dst, rows, stride, count, width);
  else ReduceRowsImpl<ReduceOp::kMin>(dst, rows, stride, count, width);
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(PairwiseSumF32);
HWY_EXPORT(PairwiseSumF64);
HWY_EXPORT(PairwiseSumRowsF32);
HWY_EXPORT(PairwiseSumRowsF64);
HWY_EXPORT(PairwiseSumBF16);
HWY_EXPORT(PairwiseSumF16);
HWY_EXPORT(AddRowsF32);
HWY_EXPORT(AddRowsF64);
HWY_EXPORT(ReduceRowF32);
HWY_EXPORT(ReduceRowF64);
HWY_EXPORT(ReduceRowsF32);
HWY_EXPORT(ReduceRowsF64);

#define STABLERT_INT_REDUCE(T, S)                                                               \
  HWY_EXPORT(IntRow##S);                                                                        \
  HWY_EXPORT(IntRows##S);                                                                       \
  T ReduceRow(ReduceOp op, T acc, const T* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(IntRow##S)(op, acc, x, n); } \
  void ReduceRows(ReduceOp op, T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) { \
    HWY_DYNAMIC_DISPATCH(IntRows##S)(op, dst, rows, stride, count, width);                      \
  }
STABLERT_INT_REDUCE(int8_t, S8)
STABLERT_INT_REDUCE(uint8_t, U8)
STABLERT_INT_REDUCE(int16_t, S16)
STABLERT_INT_REDUCE(uint16_t, U16)
STABLERT_INT_REDUCE(int32_t, S32)
STABLERT_INT_REDUCE(uint32_t, U32)
STABLERT_INT_REDUCE(int64_t, S64)
STABLERT_INT_REDUCE(uint64_t, U64)
#undef STABLERT_INT_REDUCE

float PairwiseSum(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(PairwiseSumF32)(x, n); }
double PairwiseSum(const double* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(PairwiseSumF64)(x, n); }
void PairwiseSumRows(const float* x, int64_t rows, int64_t length, float* sums) {
  HWY_DYNAMIC_DISPATCH(PairwiseSumRowsF32)(x, rows, length, sums);
}
void PairwiseSumRows(const double* x, int64_t rows, int64_t length, double* sums) {
  HWY_DYNAMIC_DISPATCH(PairwiseSumRowsF64)(x, rows, length, sums);
}
float PairwiseSumWidened(bool bf16, const uint16_t* x, int64_t n) {
  return bf16 ? HWY_DYNAMIC_DISPATCH(PairwiseSumBF16)(x, n) : HWY_DYNAMIC_DISPATCH(PairwiseSumF16)(x, n);
}
void AddRows(float* dst, const float* rows, int64_t stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(AddRowsF32)(dst, rows, stride, count, width);
}
void AddRows(double* dst, const double* rows, int64_t stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(AddRowsF64)(dst, rows, stride, count, width);
}
float ReduceRow(ReduceOp op, float acc, const float* x, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(ReduceRowF32)(op, acc, x, n);
}
double ReduceRow(ReduceOp op, double acc, const double* x, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(ReduceRowF64)(op, acc, x, n);
}
void ReduceRows(ReduceOp op, float* dst, const float* rows, int64_t stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(ReduceRowsF32)(op, dst, rows, stride, count, width);
}
void ReduceRows(ReduceOp op, double* dst, const double* rows, int64_t stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(ReduceRowsF64)(op, dst, rows, stride, count, width);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
