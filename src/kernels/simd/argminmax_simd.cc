// Vector argmax/argmin folds (argminmax_simd.h), compiled once per Highway target
// (dispatch.h).
#include "kernels/simd/argminmax_simd.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/argminmax_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One step of the body on scalars (the definition).
template <bool kMax, typename V, typename I>
HWY_INLINE void StepOne(V& value, I& index, V x, I idx) {
  const bool keep_value = (kMax ? value > x : value < x) || std::isnan(value);
  const bool keep_index = keep_value || (value == x && index < idx);
  if (!keep_value) value = x;
  if (!keep_index) index = idx;
}

// x strictly better than m.
template <bool kMax, class V>
HWY_INLINE auto Better(V x, V m) {
  if constexpr (kMax) return hn::Gt(x, m);
  else return hn::Lt(x, m);
}

template <bool kMax, typename V, typename I>
void ArgRowImpl(const V* x, const I* idx, int64_t n, V* value, I* index) {
  const hn::ScalableTag<V> d;
  const hn::RebindToSigned<decltype(d)> di;
  static_assert(sizeof(V) == sizeof(I));
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  V m_value = *value;
  I m_index = *index;
  auto fold_all = [&] {
    for (int64_t k = 0; k < n; ++k) StepOne<kMax>(m_value, m_index, x[k], idx[k]);
    *value = m_value;
    *index = m_index;
  };
  if (n < 2 * lanes || std::isnan(m_value)) return fold_all();
  auto m0 = hn::Set(d, m_value), m1 = m0;
  auto i0 = hn::Set(di, m_index), i1 = i0;
  auto nan = hn::IsNaN(m0);
  int64_t k = 0;
  for (; k + 2 * lanes <= n; k += 2 * lanes) {
    const auto x0 = hn::LoadU(d, x + k), x1 = hn::LoadU(d, x + k + lanes);
    const auto j0 = hn::LoadU(di, idx + k), j1 = hn::LoadU(di, idx + k + lanes);
    nan = hn::Or(nan, hn::Or(hn::IsNaN(x0), hn::IsNaN(x1)));
    const auto b0 = Better<kMax>(x0, m0), b1 = Better<kMax>(x1, m1);
    const auto e0 = hn::RebindMask(di, hn::Eq(x0, m0)), e1 = hn::RebindMask(di, hn::Eq(x1, m1));
    i0 = hn::IfThenElse(hn::RebindMask(di, b0), j0, hn::IfThenElse(e0, hn::Min(i0, j0), i0));
    i1 = hn::IfThenElse(hn::RebindMask(di, b1), j1, hn::IfThenElse(e1, hn::Min(i1, j1), i1));
    m0 = hn::IfThenElse(b0, x0, m0);
    m1 = hn::IfThenElse(b1, x1, m1);
  }
  if (!hn::AllFalse(d, nan)) return fold_all();
  HWY_ALIGN V mv[2 * HWY_MAX_BYTES / sizeof(V)];
  HWY_ALIGN I iv[2 * HWY_MAX_BYTES / sizeof(V)];
  hn::Store(m0, d, mv);
  hn::Store(m1, d, mv + lanes);
  hn::Store(i0, di, iv);
  hn::Store(i1, di, iv + lanes);
  // Without NaN: the best value and the smallest index among the elements equal to it.
  V best = mv[0];
  I best_index = iv[0];
  auto merge = [&](V v, I i) {
    if (kMax ? v > best : v < best) {
      best = v;
      best_index = i;
    } else if (v == best && i < best_index) {
      best_index = i;
    }
  };
  for (int64_t l = 1; l < 2 * lanes; ++l) merge(mv[l], iv[l]);
  for (; k < n; ++k) {
    if (std::isnan(x[k])) return fold_all();
    merge(x[k], idx[k]);
  }
  // The value is the last element equal to the best one (the bits differ only for zeros).
  if (best == V(0)) {
    for (int64_t j = n; j-- > 0;) {
      if (x[j] == V(0)) {
        best = x[j];
        break;
      }
      if (j == 0) best = m_value;
    }
  }
  *value = best;
  *index = best_index;
}

// Values and indices of different widths (f32 values, s64 indices): the best value first
// (a vector max/min, with the NaN check), then the smallest index among the elements equal
// to it and the last of those (its bits), visiting only the vectors holding one.
template <bool kMax, typename V, typename I>
void ArgRowTwoPassImpl(const V* x, const I* idx, int64_t n, V* value, I* index) {
  const hn::ScalableTag<V> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  V m_value = *value;
  I m_index = *index;
  auto fold_all = [&] {
    for (int64_t k = 0; k < n; ++k) StepOne<kMax>(m_value, m_index, x[k], idx[k]);
    *value = m_value;
    *index = m_index;
  };
  if (n < 2 * lanes || std::isnan(m_value)) return fold_all();
  auto b0 = hn::Set(d, m_value), b1 = b0;
  auto nan = hn::IsNaN(b0);
  int64_t k = 0;
  for (; k + 2 * lanes <= n; k += 2 * lanes) {
    const auto x0 = hn::LoadU(d, x + k), x1 = hn::LoadU(d, x + k + lanes);
    nan = hn::Or(nan, hn::Or(hn::IsNaN(x0), hn::IsNaN(x1)));
    b0 = kMax ? hn::Max(b0, x0) : hn::Min(b0, x0);
    b1 = kMax ? hn::Max(b1, x1) : hn::Min(b1, x1);
  }
  if (!hn::AllFalse(d, nan)) return fold_all();
  V best = hn::GetLane(kMax ? hn::MaxOfLanes(d, hn::Max(b0, b1)) : hn::MinOfLanes(d, hn::Min(b0, b1)));
  for (int64_t j = k; j < n; ++j) {
    if (std::isnan(x[j])) return fold_all();
    if (kMax ? x[j] > best : x[j] < best) best = x[j];
  }
  bool found = m_value == best;
  I best_index = m_index;
  V last = m_value;
  auto visit = [&](int64_t j) {
    if (x[j] != best) return;
    if (!found || idx[j] < best_index) best_index = idx[j];
    found = true;
    last = x[j];
  };
  const auto target = hn::Set(d, best);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes)
    if (!hn::AllFalse(d, hn::Eq(hn::LoadU(d, x + j), target)))
      for (int64_t l = 0; l < lanes; ++l) visit(j + l);
  for (; j < n; ++j) visit(j);
  *value = last;
  *index = best_index;
}

template <bool kMax, typename V, typename I>
void ArgRowsImpl(V* value, I* index, const V* x, const I* idx, int64_t stride, int64_t count, int64_t width) {
  const hn::ScalableTag<V> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t kRowBlock = 64;  // rows per pass over the columns (the state stays in cache)
  for (int64_t first = 0; first < count; first += kRowBlock) {
    const int64_t last = first + kRowBlock < count ? first + kRowBlock : count;
    int64_t c = 0;
    for (; c + lanes <= width; c += lanes) {
      auto v = hn::LoadU(d, value + c);
      auto i = hn::LoadU(di, index + c);
      for (int64_t r = first; r < last; ++r) {
        const auto w = hn::LoadU(d, x + r * stride + c);
        const auto j = hn::LoadU(di, idx + r * stride + c);
        const auto keep_value = hn::Or(Better<kMax>(v, w), hn::IsNaN(v));
        const auto keep_index =
            hn::Or(hn::RebindMask(di, keep_value), hn::And(hn::RebindMask(di, hn::Eq(v, w)), hn::Lt(i, j)));
        v = hn::IfThenElse(keep_value, v, w);
        i = hn::IfThenElse(keep_index, i, j);
      }
      hn::StoreU(v, d, value + c);
      hn::StoreU(i, di, index + c);
    }
    for (; c < width; ++c)
      for (int64_t r = first; r < last; ++r) StepOne<kMax>(value[c], index[c], x[r * stride + c], idx[r * stride + c]);
  }
}

// Rows whose indices are the positions (ArgRowIota). Four vector accumulators of the best
// value and the block start where each lane last improved strictly (the first position of
// the lane's best); NaN only flagged, a row holding one is searched for its first NaN.
template <bool kMax, typename V>
void ArgRowIotaImpl(const V* x, int64_t n, V* value, int64_t* index) {
  const hn::ScalableTag<V> d;
  const hn::RebindToSigned<decltype(d)> di;
  using P = hn::TFromD<decltype(di)>;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  auto first_nan = [&](int64_t from) {
    for (int64_t k = from; k < n; ++k)
      if (std::isnan(x[k])) {
        *value = x[k];
        *index = k;
        return true;
      }
    return false;
  };
  // The bits of the last element equal to `best` (only zeros have two spellings).
  auto finish = [&](V best, int64_t best_index) {
    if (best == V(0))
      for (int64_t k = n; k-- > best_index;)
        if (x[k] == V(0)) {
          best = x[k];
          break;
        }
    *value = best;
    *index = best_index;
  };
  V best = x[0];
  int64_t best_index = 0;
  int64_t k = 0;
  if (n >= 4 * lanes) {
    auto m0 = hn::LoadU(d, x), m1 = hn::LoadU(d, x + lanes), m2 = hn::LoadU(d, x + 2 * lanes),
         m3 = hn::LoadU(d, x + 3 * lanes);
    auto p0 = hn::Zero(di), p1 = p0, p2 = p0, p3 = p0;
    auto nan = hn::Or(hn::Or(hn::IsNaN(m0), hn::IsNaN(m1)), hn::Or(hn::IsNaN(m2), hn::IsNaN(m3)));
    auto at = hn::Set(di, static_cast<P>(4 * lanes));
    const auto step = hn::Set(di, static_cast<P>(4 * lanes));
    for (k = 4 * lanes; k + 4 * lanes <= n; k += 4 * lanes) {
      const auto x0 = hn::LoadU(d, x + k), x1 = hn::LoadU(d, x + k + lanes);
      const auto x2 = hn::LoadU(d, x + k + 2 * lanes), x3 = hn::LoadU(d, x + k + 3 * lanes);
      const auto b0 = Better<kMax>(x0, m0), b1 = Better<kMax>(x1, m1);
      const auto b2 = Better<kMax>(x2, m2), b3 = Better<kMax>(x3, m3);
      nan = hn::Or(nan, hn::Or(hn::Or(hn::IsNaN(x0), hn::IsNaN(x1)), hn::Or(hn::IsNaN(x2), hn::IsNaN(x3))));
      m0 = hn::IfThenElse(b0, x0, m0);
      m1 = hn::IfThenElse(b1, x1, m1);
      m2 = hn::IfThenElse(b2, x2, m2);
      m3 = hn::IfThenElse(b3, x3, m3);
      p0 = hn::IfThenElse(hn::RebindMask(di, b0), at, p0);
      p1 = hn::IfThenElse(hn::RebindMask(di, b1), at, p1);
      p2 = hn::IfThenElse(hn::RebindMask(di, b2), at, p2);
      p3 = hn::IfThenElse(hn::RebindMask(di, b3), at, p3);
      at = hn::Add(at, step);
    }
    if (!hn::AllFalse(d, nan)) {
      first_nan(0);
      return;
    }
    // Lane positions (block start + offset), then the four accumulators merged in vectors
    // and the lanes reduced: the best value, the smallest position holding it.
    p0 = hn::Add(p0, hn::Iota(di, 0));
    p1 = hn::Add(p1, hn::Iota(di, static_cast<P>(lanes)));
    p2 = hn::Add(p2, hn::Iota(di, static_cast<P>(2 * lanes)));
    p3 = hn::Add(p3, hn::Iota(di, static_cast<P>(3 * lanes)));
    auto merge = [&](auto& m, auto& p, auto mb, auto pb) {
      const auto take = hn::Or(hn::RebindMask(di, Better<kMax>(mb, m)),
                               hn::And(hn::RebindMask(di, hn::Eq(mb, m)), hn::Lt(pb, p)));
      m = hn::IfThenElse(hn::RebindMask(d, take), mb, m);
      p = hn::IfThenElse(take, pb, p);
    };
    merge(m0, p0, m1, p1);
    merge(m2, p2, m3, p3);
    merge(m0, p0, m2, p2);
    const auto top = kMax ? hn::MaxOfLanes(d, m0) : hn::MinOfLanes(d, m0);
    best = hn::GetLane(top);
    const auto at_best = hn::IfThenElse(hn::RebindMask(di, hn::Eq(m0, top)), p0,
                                        hn::Set(di, std::numeric_limits<P>::max()));
    best_index = static_cast<int64_t>(hn::GetLane(hn::MinOfLanes(di, at_best)));
  } else {
    k = 1;
    if (std::isnan(x[0])) {
      *value = x[0];
      *index = 0;
      return;
    }
  }
  for (; k < n; ++k) {
    if (std::isnan(x[k])) {
      first_nan(k);
      return;
    }
    if (kMax ? x[k] > best : x[k] < best) {
      best = x[k];
      best_index = k;
    }
  }
  finish(best, best_index);
}

// One step of a column fold with the element w of a later row r (an index larger than any
// before): keep the accumulator if it is better or NaN, else take w, and r unless the two
// are equal.
template <bool kMax, class DI, class V, class VI>
HWY_INLINE void ColumnStep(DI di, V w, VI r, V& v, VI& p) {
  const auto keep = hn::Or(Better<kMax>(v, w), hn::IsNaN(v));
  p = hn::IfThenElse(hn::RebindMask(di, hn::Or(keep, hn::Eq(v, w))), p, r);
  v = hn::IfThenElse(keep, v, w);
}

// A NaN-free column step: take the position where w is strictly better, the value where
// w is better or equal. hn::Max/Min (x86 max/min) return their second operand for equal
// operands, so equal zeros leave the bits of the later element, as the body does.
template <bool kMax, class DI, class V, class VI, class M>
HWY_INLINE void CleanColumnStep(DI di, V w, VI r, V& v, VI& p, M& nan) {
  p = hn::IfThenElse(hn::RebindMask(di, Better<kMax>(w, v)), r, p);
  v = kMax ? hn::Max(v, w) : hn::Min(v, w);
  nan = hn::Or(nan, hn::IsNaN(w));
}

// Columns whose indices are the row numbers (ArgColumnsIota): the accumulators of a strip
// of columns stay in value/position (L1) while four rows at a time stream through. First
// with the NaN-free step (flagging NaN); a strip holding a NaN is folded again with the
// body's full rule.
template <bool kMax, bool kExact, typename V, typename P>
bool ArgColumnsPass(const V* x, int64_t stride, int64_t rows, int64_t width, V* value, P* position) {
  const hn::ScalableTag<V> d;
  const hn::RebindToSigned<decltype(d)> di;
  static_assert(sizeof(P) == sizeof(V));
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = 0; c < width; ++c) {
    value[c] = x[c];
    position[c] = 0;
  }
  auto nan = hn::Lt(hn::Zero(d), hn::Zero(d));  // all false
  bool scalar_nan = false;
  auto step = [&](auto w, auto r, auto& v, auto& p) {
    if constexpr (kExact) ColumnStep<kMax>(di, w, r, v, p);
    else CleanColumnStep<kMax>(di, w, r, v, p, nan);
  };
  auto step_one = [&](int64_t c, V w, int64_t r) {
    int64_t i = position[c];
    scalar_nan = scalar_nan || std::isnan(w);
    StepOne<kMax>(value[c], i, w, r);
    position[c] = static_cast<P>(i);
  };
  for (int64_t c = 0; c < width; ++c) scalar_nan = scalar_nan || std::isnan(x[c]);
  int64_t r = 1;
  for (; r + 4 <= rows; r += 4) {
    const V* x0 = x + r * stride;
    const auto r0 = hn::Set(di, static_cast<P>(r)), r1 = hn::Set(di, static_cast<P>(r + 1));
    const auto r2 = hn::Set(di, static_cast<P>(r + 2)), r3 = hn::Set(di, static_cast<P>(r + 3));
    int64_t c = 0;
    for (; c + lanes <= width; c += lanes) {
      auto v = hn::LoadU(d, value + c);
      auto p = hn::LoadU(di, position + c);
      step(hn::LoadU(d, x0 + c), r0, v, p);
      step(hn::LoadU(d, x0 + stride + c), r1, v, p);
      step(hn::LoadU(d, x0 + 2 * stride + c), r2, v, p);
      step(hn::LoadU(d, x0 + 3 * stride + c), r3, v, p);
      hn::StoreU(v, d, value + c);
      hn::StoreU(p, di, position + c);
    }
    for (; c < width; ++c)
      for (int64_t j = 0; j < 4; ++j) step_one(c, x0[j * stride + c], r + j);
  }
  for (; r < rows; ++r) {
    const V* x0 = x + r * stride;
    const auto rv = hn::Set(di, static_cast<P>(r));
    int64_t c = 0;
    for (; c + lanes <= width; c += lanes) {
      auto v = hn::LoadU(d, value + c);
      auto p = hn::LoadU(di, position + c);
      step(hn::LoadU(d, x0 + c), rv, v, p);
      hn::StoreU(v, d, value + c);
      hn::StoreU(p, di, position + c);
    }
    for (; c < width; ++c) step_one(c, x0[c], r);
  }
  return !scalar_nan && hn::AllFalse(d, nan);
}

template <bool kMax, typename V, typename P>
void ArgColumnsIotaImpl(const V* x, int64_t stride, int64_t rows, int64_t width, V* value, P* position) {
  if (!ArgColumnsPass<kMax, false>(x, stride, rows, width, value, position))
    ArgColumnsPass<kMax, true>(x, stride, rows, width, value, position);
}

void ArgRowIotaF32(bool is_max, const float* x, int64_t n, float* value, int64_t* index) {
  if (is_max) ArgRowIotaImpl<true>(x, n, value, index);
  else ArgRowIotaImpl<false>(x, n, value, index);
}
void ArgRowIotaF64(bool is_max, const double* x, int64_t n, double* value, int64_t* index) {
  if (is_max) ArgRowIotaImpl<true>(x, n, value, index);
  else ArgRowIotaImpl<false>(x, n, value, index);
}
void ArgColumnsIotaF32(bool is_max, const float* x, int64_t stride, int64_t rows, int64_t width, float* value,
                       int32_t* position) {
  if (is_max) ArgColumnsIotaImpl<true>(x, stride, rows, width, value, position);
  else ArgColumnsIotaImpl<false>(x, stride, rows, width, value, position);
}
void ArgColumnsIotaF64(bool is_max, const double* x, int64_t stride, int64_t rows, int64_t width, double* value,
                       int64_t* position) {
  if (is_max) ArgColumnsIotaImpl<true>(x, stride, rows, width, value, position);
  else ArgColumnsIotaImpl<false>(x, stride, rows, width, value, position);
}

void ArgRowF32(bool is_max, const float* x, const int32_t* idx, int64_t n, float* value, int32_t* index) {
  if (is_max) ArgRowImpl<true>(x, idx, n, value, index);
  else ArgRowImpl<false>(x, idx, n, value, index);
}
void ArgRowF64(bool is_max, const double* x, const int64_t* idx, int64_t n, double* value, int64_t* index) {
  if (is_max) ArgRowImpl<true>(x, idx, n, value, index);
  else ArgRowImpl<false>(x, idx, n, value, index);
}
void ArgRowF32S64(bool is_max, const float* x, const int64_t* idx, int64_t n, float* value, int64_t* index) {
  if (is_max) ArgRowTwoPassImpl<true>(x, idx, n, value, index);
  else ArgRowTwoPassImpl<false>(x, idx, n, value, index);
}
void ArgRowsF32(bool is_max, float* value, int32_t* index, const float* x, const int32_t* idx, int64_t stride,
                int64_t count, int64_t width) {
  if (is_max) ArgRowsImpl<true>(value, index, x, idx, stride, count, width);
  else ArgRowsImpl<false>(value, index, x, idx, stride, count, width);
}
void ArgRowsF64(bool is_max, double* value, int64_t* index, const double* x, const int64_t* idx, int64_t stride,
                int64_t count, int64_t width) {
  if (is_max) ArgRowsImpl<true>(value, index, x, idx, stride, count, width);
  else ArgRowsImpl<false>(value, index, x, idx, stride, count, width);
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(ArgRowF32);
HWY_EXPORT(ArgRowF64);
HWY_EXPORT(ArgRowF32S64);
HWY_EXPORT(ArgRowsF32);
HWY_EXPORT(ArgRowsF64);
HWY_EXPORT(ArgRowIotaF32);
HWY_EXPORT(ArgRowIotaF64);
HWY_EXPORT(ArgColumnsIotaF32);
HWY_EXPORT(ArgColumnsIotaF64);

void ArgRowIota(bool is_max, const float* x, int64_t n, float* value, int64_t* index) {
  HWY_DYNAMIC_DISPATCH(ArgRowIotaF32)(is_max, x, n, value, index);
}
void ArgRowIota(bool is_max, const double* x, int64_t n, double* value, int64_t* index) {
  HWY_DYNAMIC_DISPATCH(ArgRowIotaF64)(is_max, x, n, value, index);
}
void ArgColumnsIota(bool is_max, const float* x, int64_t stride, int64_t rows, int64_t width, float* value,
                    int32_t* position) {
  HWY_DYNAMIC_DISPATCH(ArgColumnsIotaF32)(is_max, x, stride, rows, width, value, position);
}
void ArgColumnsIota(bool is_max, const double* x, int64_t stride, int64_t rows, int64_t width, double* value,
                    int64_t* position) {
  HWY_DYNAMIC_DISPATCH(ArgColumnsIotaF64)(is_max, x, stride, rows, width, value, position);
}

void ArgRow(bool is_max, const float* x, const int32_t* idx, int64_t n, float* value, int32_t* index) {
  HWY_DYNAMIC_DISPATCH(ArgRowF32)(is_max, x, idx, n, value, index);
}
void ArgRow(bool is_max, const double* x, const int64_t* idx, int64_t n, double* value, int64_t* index) {
  HWY_DYNAMIC_DISPATCH(ArgRowF64)(is_max, x, idx, n, value, index);
}
void ArgRow(bool is_max, const float* x, const int64_t* idx, int64_t n, float* value, int64_t* index) {
  HWY_DYNAMIC_DISPATCH(ArgRowF32S64)(is_max, x, idx, n, value, index);
}
void ArgRows(bool is_max, float* value, int32_t* index, const float* x, const int32_t* idx, int64_t stride,
             int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(ArgRowsF32)(is_max, value, index, x, idx, stride, count, width);
}
void ArgRows(bool is_max, double* value, int64_t* index, const double* x, const int64_t* idx, int64_t stride,
             int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(ArgRowsF64)(is_max, value, index, x, idx, stride, count, width);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
