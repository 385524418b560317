// Vector loops of the FFT plans (fft_simd.h), compiled once per Highway target (dispatch.h).
//
// A vector holds complex numbers of consecutive sequences q as (re, im) pairs. With
// alt = (-1, +1, ...) forward and (+1, -1, ...) inverse:
//   a * w (forward) or a * conj(w) (inverse), w broadcast:  a * wr + Reverse2(a) * (wi * alt)
//   -i * a (forward) or +i * a (inverse):                    Reverse2(a) * -alt
// so direction only changes the constant `alt`. Butterflies add, subtract, multiply by
// real constants and rotate by +-i; the twiddle of p == 0 (exactly 1) is skipped, as the
// scalar definition in fft_plan.cc does.
#include "kernels/simd/fft_simd.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/fft_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Complex arithmetic on one vector width, with the direction's constants.
template <class D>
struct Cx {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  D d;
  V alt, neg_alt, conj_sign, real_mask;

  Cx(D tag, bool inverse)
      : d(tag), alt(hn::Zero(tag)), neg_alt(hn::Zero(tag)), conj_sign(hn::Zero(tag)), real_mask(hn::Zero(tag)) {
    T pattern[64 / sizeof(T)];
    for (size_t i = 0; i < 64 / sizeof(T); ++i) pattern[i] = ((i % 2 == 0) != inverse) ? T(-1) : T(1);
    alt = hn::LoadU(d, pattern);
    neg_alt = hn::Neg(alt);
    for (size_t i = 0; i < 64 / sizeof(T); ++i) pattern[i] = i % 2 == 0 ? T(1) : T(-1);
    conj_sign = hn::LoadU(d, pattern);
    // All bits of the real parts, none of the imaginary ones (an And, so a NaN or infinite
    // imaginary part becomes an exact zero, which multiplying by 0 would not give).
    for (size_t i = 0; i < 64 / sizeof(T); ++i) {
      const hwy::MakeUnsigned<T> bits = i % 2 == 0 ? static_cast<hwy::MakeUnsigned<T>>(~0ull) : 0;
      std::memcpy(&pattern[i], &bits, sizeof(T));
    }
    real_mask = hn::LoadU(d, pattern);
  }
  HWY_INLINE int64_t Step() const { return static_cast<int64_t>(hn::Lanes(d)) / 2; }  // complex per vector
  HWY_INLINE V Load(const T* p) const { return hn::LoadU(d, p); }
  HWY_INLINE void Store(V v, T* p) const { hn::StoreU(v, d, p); }
  HWY_INLINE V Add(V a, V b) const { return hn::Add(a, b); }
  HWY_INLINE V Sub(V a, V b) const { return hn::Sub(a, b); }
  HWY_INLINE V Zero() const { return hn::Zero(d); }
  HWY_INLINE V MulAdd(T k, V a, V acc) const { return hn::MulAdd(hn::Set(d, k), a, acc); }
  HWY_INLINE V Scale(T k, V a) const { return hn::Mul(hn::Set(d, k), a); }
  HWY_INLINE V Conj(V a) const { return hn::Mul(a, conj_sign); }
  HWY_INLINE V RealPart(V a) const { return hn::And(a, real_mask); }  // imaginary parts zeroed
  HWY_INLINE V Rotate(V a) const { return hn::Mul(hn::Reverse2(d, a), neg_alt); }
  // The twiddle w broadcast as (wr, wr, ...) and (wi, wi, ...) * alt.
  HWY_INLINE V Re(const T* w) const { return hn::Set(d, w[0]); }
  HWY_INLINE V Im(const T* w) const { return hn::Mul(hn::Set(d, w[1]), alt); }
  HWY_INLINE V Twiddle(V a, V wr, V wi) const { return hn::MulAdd(hn::Reverse2(d, a), wi, hn::Mul(a, wr)); }
  // a * w elementwise (conjugated w when inverse).
  HWY_INLINE V Multiply(V a, V w) const { return Twiddle(a, hn::DupEven(w), hn::Mul(hn::DupOdd(w), alt)); }
};
#else
// The scalar target: one complex number at a time, the same arithmetic.
template <class D>
struct Cx {
  using T = hn::TFromD<D>;
  struct V {
    T re, im;
  };
  D d;
  bool inverse;

  Cx(D tag, bool inv) : d(tag), inverse(inv) {}
  int64_t Step() const { return 1; }
  V Load(const T* p) const { return {p[0], p[1]}; }
  void Store(V v, T* p) const { p[0] = v.re, p[1] = v.im; }
  V Add(V a, V b) const { return {a.re + b.re, a.im + b.im}; }
  V Sub(V a, V b) const { return {a.re - b.re, a.im - b.im}; }
  V Zero() const { return {T(0), T(0)}; }
  V MulAdd(T k, V a, V acc) const { return {k * a.re + acc.re, k * a.im + acc.im}; }
  V Scale(T k, V a) const { return {k * a.re, k * a.im}; }
  V Conj(V a) const { return {a.re, -a.im}; }
  V RealPart(V a) const { return {a.re, T(0)}; }
  V Rotate(V a) const { return inverse ? V{-a.im, a.re} : V{a.im, -a.re}; }
  V Re(const T* w) const { return {w[0], w[0]}; }
  V Im(const T* w) const { return {w[1], w[1]}; }
  V Twiddle(V a, V wr, V wi) const {
    return inverse ? V{a.re * wr.re + a.im * wi.re, a.im * wr.re - a.re * wi.re}
                   : V{a.re * wr.re - a.im * wi.re, a.re * wi.re + a.im * wr.re};
  }
  V Multiply(V a, V w) const { return Twiddle(a, V{w.re, w.re}, V{w.im, w.im}); }
};
#endif

// Runs range(d, begin, end) over [0, count) in full vectors, then in vectors of two and of
// one complex number (the tails).
template <typename T, typename Range>
void OverVectors(int64_t count, const Range& range) {
#if HWY_TARGET == HWY_SCALAR
  range(hn::ScalableTag<T>(), 0, count);
#else
  const hn::ScalableTag<T> full;
  const hn::CappedTag<T, 4> two;
  const hn::CappedTag<T, 2> one;
  const int64_t n_full = static_cast<int64_t>(hn::Lanes(full)) / 2;
  const int64_t n_two = static_cast<int64_t>(hn::Lanes(two)) / 2;
  int64_t q = 0;
  if (n_full > 1) {
    q = count / n_full * n_full;
    if (q > 0) range(full, 0, q);
  }
  if (n_two > 1 && count - q >= n_two) {
    const int64_t end = q + (count - q) / n_two * n_two;
    range(two, q, end);
    q = end;
  }
  if (q < count) range(one, q, count);
#endif
}

// Offsets below are in complex elements; pointers are to T (two per complex).
template <class D, typename T = hn::TFromD<D>>
void Radix2(const Cx<D>& c, int64_t m, int64_t s, int64_t q0, int64_t q1, const T* tw, const T* x, T* y) {
  const int64_t step = c.Step();
  for (int64_t p = 0; p < m; ++p) {
    const T* x0 = x + 2 * s * p;
    const T* x1 = x + 2 * s * (p + m);
    T* y0 = y + 2 * s * (2 * p);
    T* y1 = y0 + 2 * s;
    if (p == 0) {
      for (int64_t q = q0; q < q1; q += step) {
        const auto a = c.Load(x0 + 2 * q), b = c.Load(x1 + 2 * q);
        c.Store(c.Add(a, b), y0 + 2 * q);
        c.Store(c.Sub(a, b), y1 + 2 * q);
      }
      continue;
    }
    const auto wr = c.Re(tw + 2 * p), wi = c.Im(tw + 2 * p);
    for (int64_t q = q0; q < q1; q += step) {
      const auto a = c.Load(x0 + 2 * q), b = c.Load(x1 + 2 * q);
      c.Store(c.Add(a, b), y0 + 2 * q);
      c.Store(c.Twiddle(c.Sub(a, b), wr, wi), y1 + 2 * q);
    }
  }
}

template <class D, typename T = hn::TFromD<D>>
void Radix4(const Cx<D>& c, int64_t m, int64_t s, int64_t q0, int64_t q1, const T* tw, const T* x, T* y) {
  const int64_t step = c.Step();
  const int64_t in = 2 * s * m, out = 2 * s;
  for (int64_t p = 0; p < m; ++p) {
    const T* x0 = x + 2 * s * p;
    T* y0 = y + 2 * s * (4 * p);
    if (p == 0) {
      for (int64_t q = q0; q < q1; q += step) {
        const T* xq = x0 + 2 * q;
        const auto a0 = c.Load(xq), a1 = c.Load(xq + in), a2 = c.Load(xq + 2 * in), a3 = c.Load(xq + 3 * in);
        const auto s02 = c.Add(a0, a2), d02 = c.Sub(a0, a2), s13 = c.Add(a1, a3);
        const auto r13 = c.Rotate(c.Sub(a1, a3));
        T* yq = y0 + 2 * q;
        c.Store(c.Add(s02, s13), yq);
        c.Store(c.Add(d02, r13), yq + out);
        c.Store(c.Sub(s02, s13), yq + 2 * out);
        c.Store(c.Sub(d02, r13), yq + 3 * out);
      }
      continue;
    }
    const T* w = tw + 2 * 3 * p;
    const auto w1r = c.Re(w), w1i = c.Im(w), w2r = c.Re(w + 2), w2i = c.Im(w + 2), w3r = c.Re(w + 4),
               w3i = c.Im(w + 4);
    for (int64_t q = q0; q < q1; q += step) {
      const T* xq = x0 + 2 * q;
      const auto a0 = c.Load(xq), a1 = c.Load(xq + in), a2 = c.Load(xq + 2 * in), a3 = c.Load(xq + 3 * in);
      const auto s02 = c.Add(a0, a2), d02 = c.Sub(a0, a2), s13 = c.Add(a1, a3);
      const auto r13 = c.Rotate(c.Sub(a1, a3));
      T* yq = y0 + 2 * q;
      c.Store(c.Add(s02, s13), yq);
      c.Store(c.Twiddle(c.Add(d02, r13), w1r, w1i), yq + out);
      c.Store(c.Twiddle(c.Sub(s02, s13), w2r, w2i), yq + 2 * out);
      c.Store(c.Twiddle(c.Sub(d02, r13), w3r, w3i), yq + 3 * out);
    }
  }
}

// Odd radix r (kR when known at compile time, else `radix`): pairs t and r - t share their
// cosine and sine factors; c_u = A_u + rot(B_u), c_{r-u} = A_u - rot(B_u) with
// A_u = a_0 + sum_t cos(2 pi t u / r) (a_t + a_{r-t}), B_u = sum_t sin(2 pi t u / r) (a_t - a_{r-t}).
template <int kR, class D, typename T = hn::TFromD<D>>
void RadixOdd(const Cx<D>& c, int radix, int64_t m, int64_t s, int64_t q0, int64_t q1, const T* tw, const T* trig,
              const T* x, T* y) {
  const int r = kR ? kR : radix;
  const int h = (r - 1) / 2;
  T cs[32][32], sn[32][32];  // [u][t], r <= 63
  for (int u = 1; u <= h; ++u)
    for (int t = 1; t <= h; ++t) {
      const int k = (t * u) % r;
      cs[u][t] = trig[2 * k];
      sn[u][t] = trig[2 * k + 1];
    }
  const int64_t step = c.Step();
  const int64_t in = 2 * s * m, out = 2 * s;
  for (int64_t p = 0; p < m; ++p) {
    const T* xp = x + 2 * s * p;
    T* yp = y + 2 * s * (r * p);
    const T* w = tw + 2 * (r - 1) * p;
    for (int64_t q = q0; q < q1; q += step) {
      const T* xq = xp + 2 * q;
      T* yq = yp + 2 * q;
      const auto a0 = c.Load(xq);
      auto c0 = a0;
      for (int t = 1; t <= h; ++t) c0 = c.Add(c0, c.Add(c.Load(xq + t * in), c.Load(xq + (r - t) * in)));
      c.Store(c0, yq);
      for (int u = 1; u <= h; ++u) {
        auto A = a0, B = c.Zero();
        for (int t = 1; t <= h; ++t) {
          const auto at = c.Load(xq + t * in), bt = c.Load(xq + (r - t) * in);
          A = c.MulAdd(cs[u][t], c.Add(at, bt), A);
          B = c.MulAdd(sn[u][t], c.Sub(at, bt), B);
        }
        const auto rot = c.Rotate(B);
        const auto cu = c.Add(A, rot), cr = c.Sub(A, rot);
        if (p == 0) {
          c.Store(cu, yq + u * out);
          c.Store(cr, yq + (r - u) * out);
        } else {
          const T* wu = w + 2 * (u - 1);
          const T* wr = w + 2 * (r - u - 1);
          c.Store(c.Twiddle(cu, c.Re(wu), c.Im(wu)), yq + u * out);
          c.Store(c.Twiddle(cr, c.Re(wr), c.Im(wr)), yq + (r - u) * out);
        }
      }
    }
  }
}

template <class D, typename T = hn::TFromD<D>>
void StageRange(D d, const FftStageArgs& a, int64_t q0, int64_t q1, const T* tw, const T* trig, const T* x, T* y) {
  const Cx<D> c(d, a.inverse);
  switch (a.radix) {
    case 2: return Radix2(c, a.m, a.s, q0, q1, tw, x, y);
    case 4: return Radix4(c, a.m, a.s, q0, q1, tw, x, y);
    case 3: return RadixOdd<3>(c, 3, a.m, a.s, q0, q1, tw, trig, x, y);
    case 5: return RadixOdd<5>(c, 5, a.m, a.s, q0, q1, tw, trig, x, y);
    case 7: return RadixOdd<7>(c, 7, a.m, a.s, q0, q1, tw, trig, x, y);
    default: return RadixOdd<0>(c, a.radix, a.m, a.s, q0, q1, tw, trig, x, y);
  }
}

// The sequences q in full vectors, then in vectors of two and of one complex number.
template <typename T>
void StageImpl(const FftStageArgs& a, const T* tw, const T* trig, const T* x, T* y) {
  OverVectors<T>(a.s, [&](auto d, int64_t q0, int64_t q1) { StageRange(d, a, q0, q1, tw, trig, x, y); });
}

void FftStageF32(const FftStageArgs& a, const float* tw, const float* trig, const float* x, float* y) {
  StageImpl(a, tw, trig, x, y);
}
void FftStageF64(const FftStageArgs& a, const double* tw, const double* trig, const double* x, double* y) {
  StageImpl(a, tw, trig, x, y);
}

template <class D, typename T = hn::TFromD<D>>
int64_t MultiplyRange(D d, const T* a, const T* w, T* out, int64_t begin, int64_t count, bool conjugate) {
  const Cx<D> c(d, conjugate);
  const int64_t step = c.Step();
  int64_t i = begin;
  for (; i + step <= count; i += step) c.Store(c.Multiply(c.Load(a + 2 * i), c.Load(w + 2 * i)), out + 2 * i);
  return i;
}

template <typename T>
void MultiplyImpl(const T* a, const T* w, T* out, int64_t count, bool conjugate) {
  const int64_t i = MultiplyRange(hn::ScalableTag<T>(), a, w, out, 0, count, conjugate);
#if HWY_TARGET != HWY_SCALAR
  MultiplyRange(hn::CappedTag<T, 2>(), a, w, out, i, count, conjugate);
#else
  (void)i;
#endif
}

void MultiplyF32(const float* a, const float* w, float* out, int64_t count, bool conjugate) {
  MultiplyImpl(a, w, out, count, conjugate);
}
void MultiplyF64(const double* a, const double* w, double* out, int64_t count, bool conjugate) {
  MultiplyImpl(a, w, out, count, conjugate);
}

// Rows of few elements (interleaved sequences) are common, so the rows are the inner loop of
// each vector width.
template <typename T>
void MultiplyRowsImpl(const T* a, int64_t a_stride, const T* w, T* out, int64_t out_stride, int64_t rows,
                      int64_t width, bool conjugate) {
  OverVectors<T>(width, [&](auto d, int64_t i0, int64_t i1) {
    const Cx<decltype(d)> c(d, conjugate);
    const int64_t step = c.Step();
    for (int64_t r = 0; r < rows; ++r) {
      const T* ar = a + 2 * r * a_stride;
      T* outr = out + 2 * r * out_stride;
      const auto wr = c.Re(w + 2 * r), wi = c.Im(w + 2 * r);
      for (int64_t i = i0; i < i1; i += step) c.Store(c.Twiddle(c.Load(ar + 2 * i), wr, wi), outr + 2 * i);
    }
  });
}

// X_k = E_k + w^k O_k with E_k = (Z_k + conj(Z_(h-k))) / 2, O_k = -i (Z_k - conj(Z_(h-k))) / 2
// (Z_h = Z_0), for k <= h, each of g interleaved lines.
template <typename T>
void RealSpectrumImpl(const T* z, int64_t g, int64_t h, const T* w, T* out, int64_t k_begin, int64_t k_end) {
  OverVectors<T>(g, [&](auto d, int64_t l0, int64_t l1) {
    const Cx<decltype(d)> c(d, false);
    const int64_t step = c.Step();
    for (int64_t k = k_begin; k < k_end; ++k) {
      const T* zk = z + 2 * g * (k == h ? 0 : k);
      const T* zc = z + 2 * g * (k == 0 ? 0 : h - k);
      T* ok = out + 2 * g * k;
      const auto wr = c.Re(w + 2 * k), wi = c.Im(w + 2 * k);
      for (int64_t l = l0; l < l1; l += step) {
        const auto a = c.Load(zk + 2 * l), b = c.Conj(c.Load(zc + 2 * l));
        const auto e = c.Scale(T(0.5), c.Add(a, b));
        const auto o = c.Rotate(c.Scale(T(0.5), c.Sub(a, b)));
        c.Store(c.Add(e, c.Twiddle(o, wr, wi)), ok + 2 * l);
      }
    }
  });
}

// In place, rows k and h - k together: Z_k = E_k + i conj(w^k) D_k with
// E_k = (X_k + conj(X_(h-k))) / 2, D_k = (X_k - conj(X_(h-k))) / 2, the imaginary parts of
// X_0 and X_h dropped.
template <typename T>
void HalfSpectrumImpl(T* x, int64_t g, int64_t h, const T* w, int64_t k_begin, int64_t k_end) {
  OverVectors<T>(g, [&](auto d, int64_t l0, int64_t l1) {
    const Cx<decltype(d)> c(d, true);
    const int64_t step = c.Step();
    const auto one = [&](auto xk, auto xc, int64_t k) {  // xc = conj(X_(h-k)) already
      const auto e = c.Scale(T(0.5), c.Add(xk, xc));
      const auto o = c.Twiddle(c.Scale(T(0.5), c.Sub(xk, xc)), c.Re(w + 2 * k), c.Im(w + 2 * k));
      return c.Add(e, c.Rotate(o));
    };
    for (int64_t k = k_begin; k < k_end; ++k) {
      T* rk = x + 2 * g * k;
      T* rc = x + 2 * g * (h - k);
      for (int64_t l = l0; l < l1; l += step) {
        auto xk = c.Load(rk + 2 * l), xc = c.Load(rc + 2 * l);
        if (k == 0) {
          xk = c.RealPart(xk);
          xc = c.RealPart(xc);
        }
        const auto zk = one(xk, c.Conj(xc), k);
        if (k != 0 && 2 * k != h) c.Store(one(xc, c.Conj(xk), h - k), rc + 2 * l);
        c.Store(zk, rk + 2 * l);
      }
    }
  });
}

template <typename T>
void ScaleImpl(T* data, int64_t count, T factor) {
  OverVectors<T>(count, [&](auto d, int64_t i0, int64_t i1) {
    const Cx<decltype(d)> c(d, false);
    for (int64_t i = i0; i < i1; i += c.Step()) c.Store(c.Scale(factor, c.Load(data + 2 * i)), data + 2 * i);
  });
}

void MultiplyRowsF32(const float* a, int64_t a_stride, const float* w, float* out, int64_t out_stride, int64_t rows,
                     int64_t width, bool conjugate) {
  MultiplyRowsImpl(a, a_stride, w, out, out_stride, rows, width, conjugate);
}
void MultiplyRowsF64(const double* a, int64_t a_stride, const double* w, double* out, int64_t out_stride,
                     int64_t rows, int64_t width, bool conjugate) {
  MultiplyRowsImpl(a, a_stride, w, out, out_stride, rows, width, conjugate);
}

void RealSpectrumF32(const float* z, int64_t g, int64_t h, const float* w, float* out, int64_t k0, int64_t k1) {
  RealSpectrumImpl(z, g, h, w, out, k0, k1);
}
void RealSpectrumF64(const double* z, int64_t g, int64_t h, const double* w, double* out, int64_t k0, int64_t k1) {
  RealSpectrumImpl(z, g, h, w, out, k0, k1);
}
void HalfSpectrumF32(float* x, int64_t g, int64_t h, const float* w, int64_t k0, int64_t k1) {
  HalfSpectrumImpl(x, g, h, w, k0, k1);
}
void HalfSpectrumF64(double* x, int64_t g, int64_t h, const double* w, int64_t k0, int64_t k1) {
  HalfSpectrumImpl(x, g, h, w, k0, k1);
}
void ScaleF32(float* data, int64_t count, float factor) { ScaleImpl(data, count, factor); }
void ScaleF64(double* data, int64_t count, double factor) { ScaleImpl(data, count, factor); }

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(FftStageF32);
HWY_EXPORT(FftStageF64);
HWY_EXPORT(MultiplyF32);
HWY_EXPORT(MultiplyF64);
HWY_EXPORT(MultiplyRowsF32);
HWY_EXPORT(MultiplyRowsF64);
HWY_EXPORT(RealSpectrumF32);
HWY_EXPORT(RealSpectrumF64);
HWY_EXPORT(HalfSpectrumF32);
HWY_EXPORT(HalfSpectrumF64);
HWY_EXPORT(ScaleF32);
HWY_EXPORT(ScaleF64);

void FftStage(const FftStageArgs& a, const std::complex<float>* twiddles, const float* trig,
              const std::complex<float>* x, std::complex<float>* y) {
  HWY_DYNAMIC_DISPATCH(FftStageF32)(a, reinterpret_cast<const float*>(twiddles), trig,
                                    reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y));
}
void FftStage(const FftStageArgs& a, const std::complex<double>* twiddles, const double* trig,
              const std::complex<double>* x, std::complex<double>* y) {
  HWY_DYNAMIC_DISPATCH(FftStageF64)(a, reinterpret_cast<const double*>(twiddles), trig,
                                    reinterpret_cast<const double*>(x), reinterpret_cast<double*>(y));
}
void ComplexMultiply(const std::complex<float>* a, const std::complex<float>* w, std::complex<float>* out,
                     int64_t count, bool conjugate) {
  HWY_DYNAMIC_DISPATCH(MultiplyF32)(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(w),
                                    reinterpret_cast<float*>(out), count, conjugate);
}
void ComplexMultiply(const std::complex<double>* a, const std::complex<double>* w, std::complex<double>* out,
                     int64_t count, bool conjugate) {
  HWY_DYNAMIC_DISPATCH(MultiplyF64)(reinterpret_cast<const double*>(a), reinterpret_cast<const double*>(w),
                                    reinterpret_cast<double*>(out), count, conjugate);
}
void ComplexMultiplyRows(const std::complex<float>* a, int64_t a_stride, const std::complex<float>* w,
                         std::complex<float>* out, int64_t out_stride, int64_t rows, int64_t width, bool conjugate) {
  HWY_DYNAMIC_DISPATCH(MultiplyRowsF32)(reinterpret_cast<const float*>(a), a_stride, reinterpret_cast<const float*>(w),
                                        reinterpret_cast<float*>(out), out_stride, rows, width, conjugate);
}
void ComplexMultiplyRows(const std::complex<double>* a, int64_t a_stride, const std::complex<double>* w,
                         std::complex<double>* out, int64_t out_stride, int64_t rows, int64_t width, bool conjugate) {
  HWY_DYNAMIC_DISPATCH(MultiplyRowsF64)(reinterpret_cast<const double*>(a), a_stride,
                                        reinterpret_cast<const double*>(w), reinterpret_cast<double*>(out), out_stride,
                                        rows, width, conjugate);
}
void RealSpectrumFromHalf(const std::complex<float>* z, int64_t g, int64_t h, const std::complex<float>* w,
                          std::complex<float>* out, int64_t k_begin, int64_t k_end) {
  HWY_DYNAMIC_DISPATCH(RealSpectrumF32)(reinterpret_cast<const float*>(z), g, h, reinterpret_cast<const float*>(w),
                                        reinterpret_cast<float*>(out), k_begin, k_end);
}
void RealSpectrumFromHalf(const std::complex<double>* z, int64_t g, int64_t h, const std::complex<double>* w,
                          std::complex<double>* out, int64_t k_begin, int64_t k_end) {
  HWY_DYNAMIC_DISPATCH(RealSpectrumF64)(reinterpret_cast<const double*>(z), g, h, reinterpret_cast<const double*>(w),
                                        reinterpret_cast<double*>(out), k_begin, k_end);
}
void HalfFromRealSpectrum(std::complex<float>* x, int64_t g, int64_t h, const std::complex<float>* w, int64_t k_begin,
                          int64_t k_end) {
  HWY_DYNAMIC_DISPATCH(HalfSpectrumF32)(reinterpret_cast<float*>(x), g, h, reinterpret_cast<const float*>(w), k_begin,
                                        k_end);
}
void HalfFromRealSpectrum(std::complex<double>* x, int64_t g, int64_t h, const std::complex<double>* w, int64_t k_begin,
                          int64_t k_end) {
  HWY_DYNAMIC_DISPATCH(HalfSpectrumF64)(reinterpret_cast<double*>(x), g, h, reinterpret_cast<const double*>(w), k_begin,
                                        k_end);
}
void ScaleComplex(std::complex<float>* data, int64_t count, float factor) {
  HWY_DYNAMIC_DISPATCH(ScaleF32)(reinterpret_cast<float*>(data), count, factor);
}
void ScaleComplex(std::complex<double>* data, int64_t count, double factor) {
  HWY_DYNAMIC_DISPATCH(ScaleF64)(reinterpret_cast<double*>(data), count, factor);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
