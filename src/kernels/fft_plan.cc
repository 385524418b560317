// Mixed-radix Stockham and Bluestein FFTs (see fft_plan.h).
//
// Stockham, decimation in frequency, autosort: a stage of radix r over the current length
// L = r * m with stride s (L * s = n * stride) reads a_t = x[q + s*(p + t*m)] (t < r) and
// writes y[q + s*(r*p + u)] = w_L^(p*u) * sum_t a_t w_r^(t*u) for p < m, q < s. After the
// stage the r outputs of each p form r interleaved sub-problems of length m and stride s*r;
// after the last stage the result is in natural order. Butterflies multiply only by real
// constants (and by +-i as swaps), and the twiddle of p == 0 (exactly 1) is skipped, so an
// infinite input yields infinities, not NaNs, where the exact transform has no 0*inf.
#include "kernels/fft_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

namespace stablert::kernels::fft {
namespace {

template <typename T>
struct Cx {
  T re, im;
};

template <typename T>
inline Cx<T> Add(Cx<T> a, Cx<T> b) { return {a.re + b.re, a.im + b.im}; }
template <typename T>
inline Cx<T> Sub(Cx<T> a, Cx<T> b) { return {a.re - b.re, a.im - b.im}; }
// a * w (forward) or a * conj(w) (inverse).
template <bool kInverse, typename T>
inline Cx<T> Twiddle(Cx<T> a, Cx<T> w) {
  if constexpr (kInverse) return {a.re * w.re + a.im * w.im, a.im * w.re - a.re * w.im};
  else return {a.re * w.re - a.im * w.im, a.re * w.im + a.im * w.re};
}
// -i * a (forward) or +i * a (inverse): the radix-4 rotation.
template <bool kInverse, typename T>
inline Cx<T> Rotate(Cx<T> a) {
  if constexpr (kInverse) return {-a.im, a.re};
  else return {a.im, -a.re};
}

template <bool kInverse, typename T>
void Radix2(int64_t m, int64_t s, const Cx<T>* tw, const Cx<T>* x, Cx<T>* y) {
  for (int64_t p = 0; p < m; ++p) {
    const Cx<T>* x0 = x + s * p;
    const Cx<T>* x1 = x + s * (p + m);
    Cx<T>* y0 = y + s * (2 * p);
    Cx<T>* y1 = y0 + s;
    if (p == 0) {
      for (int64_t q = 0; q < s; ++q) {
        const Cx<T> a = x0[q], b = x1[q];
        y0[q] = Add(a, b);
        y1[q] = Sub(a, b);
      }
    } else {
      const Cx<T> w = tw[p];
      for (int64_t q = 0; q < s; ++q) {
        const Cx<T> a = x0[q], b = x1[q];
        y0[q] = Add(a, b);
        y1[q] = Twiddle<kInverse>(Sub(a, b), w);
      }
    }
  }
}

template <bool kInverse, typename T>
void Radix4(int64_t m, int64_t s, const Cx<T>* tw, const Cx<T>* x, Cx<T>* y) {
  for (int64_t p = 0; p < m; ++p) {
    const Cx<T>* x0 = x + s * p;
    const Cx<T>* x1 = x0 + s * m;
    const Cx<T>* x2 = x1 + s * m;
    const Cx<T>* x3 = x2 + s * m;
    Cx<T>* y0 = y + s * (4 * p);
    Cx<T>* y1 = y0 + s;
    Cx<T>* y2 = y1 + s;
    Cx<T>* y3 = y2 + s;
    if (p == 0) {
      for (int64_t q = 0; q < s; ++q) {
        const Cx<T> a0 = x0[q], a1 = x1[q], a2 = x2[q], a3 = x3[q];
        const Cx<T> s02 = Add(a0, a2), d02 = Sub(a0, a2), s13 = Add(a1, a3);
        const Cx<T> r13 = Rotate<kInverse>(Sub(a1, a3));
        y0[q] = Add(s02, s13);
        y1[q] = Add(d02, r13);
        y2[q] = Sub(s02, s13);
        y3[q] = Sub(d02, r13);
      }
      continue;
    }
    const Cx<T> w1 = tw[3 * p], w2 = tw[3 * p + 1], w3 = tw[3 * p + 2];
    for (int64_t q = 0; q < s; ++q) {
      const Cx<T> a0 = x0[q], a1 = x1[q], a2 = x2[q], a3 = x3[q];
      const Cx<T> s02 = Add(a0, a2), d02 = Sub(a0, a2), s13 = Add(a1, a3);
      const Cx<T> r13 = Rotate<kInverse>(Sub(a1, a3));
      y0[q] = Add(s02, s13);
      y1[q] = Twiddle<kInverse>(Add(d02, r13), w1);
      y2[q] = Twiddle<kInverse>(Sub(s02, s13), w2);
      y3[q] = Twiddle<kInverse>(Sub(d02, r13), w3);
    }
  }
}

// Odd radix r: pairs t and r-t share their real cosine and sine factors.
template <bool kInverse, typename T>
void RadixOdd(int r, int64_t m, int64_t s, const Cx<T>* tw, const T* trig, const Cx<T>* x, Cx<T>* y) {
  const int h = (r - 1) / 2;
  Cx<T> a[kMaxDirectRadix], c[kMaxDirectRadix], sums[kMaxDirectRadix], diffs[kMaxDirectRadix];
  for (int64_t p = 0; p < m; ++p) {
    const Cx<T>* w = tw + (r - 1) * p;
    for (int64_t q = 0; q < s; ++q) {
      for (int t = 0; t < r; ++t) a[t] = x[q + s * (p + t * m)];
      Cx<T> c0 = a[0];
      for (int t = 1; t <= h; ++t) {
        sums[t] = Add(a[t], a[r - t]);
        diffs[t] = Sub(a[t], a[r - t]);
        c0 = Add(c0, sums[t]);
      }
      c[0] = c0;
      for (int u = 1; u <= h; ++u) {
        Cx<T> A = a[0], B = {0, 0};
        int k = 0;
        for (int t = 1; t <= h; ++t) {
          k += u;
          if (k >= r) k -= r;
          const T cs = trig[2 * k], sn = trig[2 * k + 1];
          A.re += cs * sums[t].re;
          A.im += cs * sums[t].im;
          B.re += sn * diffs[t].re;
          B.im += sn * diffs[t].im;
        }
        // Forward: c_u = A - iB, c_{r-u} = A + iB; inverse the other way round.
        const Cx<T> minus_ib = {A.re + B.im, A.im - B.re}, plus_ib = {A.re - B.im, A.im + B.re};
        c[u] = kInverse ? plus_ib : minus_ib;
        c[r - u] = kInverse ? minus_ib : plus_ib;
      }
      Cx<T>* out = y + q + s * (r * p);
      out[0] = c[0];
      for (int u = 1; u < r; ++u) out[s * u] = p == 0 ? c[u] : Twiddle<kInverse>(c[u], w[u - 1]);
    }
  }
}

// Odd radix R known at compile time: the same arithmetic as RadixOdd, unrolled, with the
// sequences (q) innermost so that the loop vectorizes.
template <int R, bool kInverse, bool kTwiddle, typename T>
inline void RadixOddFixedRow(int64_t m, int64_t s, const Cx<T>* w, const T (&cs)[R][R], const T (&sn)[R][R],
                             const Cx<T>* in, Cx<T>* out) {
  constexpr int h = (R - 1) / 2;
  for (int64_t q = 0; q < s; ++q) {
    Cx<T> sums[h + 1], diffs[h + 1];
    const Cx<T> a0 = in[q];
    Cx<T> c0 = a0;
    for (int t = 1; t <= h; ++t) {
      const Cx<T> at = in[q + s * m * t], bt = in[q + s * m * (R - t)];
      sums[t] = Add(at, bt);
      diffs[t] = Sub(at, bt);
      c0 = Add(c0, sums[t]);
    }
    out[q] = c0;
    for (int u = 1; u <= h; ++u) {
      Cx<T> A = a0, B = {0, 0};
      for (int t = 1; t <= h; ++t) {
        A.re += cs[u][t] * sums[t].re;
        A.im += cs[u][t] * sums[t].im;
        B.re += sn[u][t] * diffs[t].re;
        B.im += sn[u][t] * diffs[t].im;
      }
      const Cx<T> minus_ib = {A.re + B.im, A.im - B.re}, plus_ib = {A.re - B.im, A.im + B.re};
      const Cx<T> cu = kInverse ? plus_ib : minus_ib, cr = kInverse ? minus_ib : plus_ib;
      if constexpr (kTwiddle) {
        out[q + s * u] = Twiddle<kInverse>(cu, w[u - 1]);
        out[q + s * (R - u)] = Twiddle<kInverse>(cr, w[R - u - 1]);
      } else {
        out[q + s * u] = cu;
        out[q + s * (R - u)] = cr;
      }
    }
  }
}

// Odd radix R known at compile time: the same arithmetic as RadixOdd, unrolled, with the
// sequences (q) innermost so that the loop vectorizes.
template <int R, bool kInverse, typename T>
void RadixOddFixed(int64_t m, int64_t s, const Cx<T>* tw, const T* trig, const Cx<T>* x, Cx<T>* y) {
  constexpr int h = (R - 1) / 2;
  T cs[R][R] = {}, sn[R][R] = {};
  for (int u = 1; u <= h; ++u)
    for (int t = 1; t <= h; ++t) {
      const int k = (t * u) % R;
      cs[u][t] = trig[2 * k];
      sn[u][t] = trig[2 * k + 1];
    }
  for (int64_t p = 0; p < m; ++p) {
    const Cx<T>* w = tw + (R - 1) * p;
    if (p == 0) RadixOddFixedRow<R, kInverse, false>(m, s, w, cs, sn, x + s * p, y + s * (R * p));
    else RadixOddFixedRow<R, kInverse, true>(m, s, w, cs, sn, x + s * p, y + s * (R * p));
  }
}

std::complex<double> UnitRoot(int64_t k, int64_t n) {  // exp(-2*pi*i*k/n), k reduced mod n
  k %= n;
  const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

std::vector<int> Factor(int64_t n) {
  std::vector<int> radices;
  while (n % 4 == 0) {
    radices.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    radices.push_back(2);
    n /= 2;
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      radices.push_back(static_cast<int>(std::min<int64_t>(p, kMaxDirectRadix + 1)));
      n /= p;
    }
  }
  if (n > 1) radices.push_back(static_cast<int>(std::min<int64_t>(n, kMaxDirectRadix + 1)));
  return radices;
}

}  // namespace

template <typename T>
struct FftPlan<T>::Bluestein {
  int64_t m = 0;                          // power-of-two convolution length >= 2n - 1
  std::unique_ptr<FftPlan<T>> plan;       // of length m
  std::vector<std::complex<T>> chirp;     // exp(-pi*i*j^2/n), j < n
  std::vector<std::complex<T>> spectrum;  // FFT_m of the conjugate chirp, divided by m
};

template <typename T>
FftPlan<T>::FftPlan(int64_t n) : n_(n) {
  if (n <= 1) return;
  std::vector<int> radices = Factor(n);
  const bool direct = std::all_of(radices.begin(), radices.end(), [](int r) { return r <= kMaxDirectRadix; });
  if (direct) {
    int64_t length = n;
    for (int r : radices) {
      Stage stage{r, length / r, twiddles_.size(), trig_.size()};
      for (int64_t p = 0; p < stage.m; ++p)
        for (int u = 1; u < r; ++u) {
          const std::complex<double> w = UnitRoot(p * u, length);
          twiddles_.emplace_back(static_cast<T>(w.real()), static_cast<T>(w.imag()));
        }
      if (r % 2 == 1) {
        for (int k = 0; k < r; ++k) {
          // (cos, sin)(2*pi*k/r); the forward sign is applied in the butterfly.
          const std::complex<double> w = UnitRoot(k, r);
          trig_.push_back(static_cast<T>(w.real()));
          trig_.push_back(static_cast<T>(-w.imag()));
        }
      }
      stages_.push_back(stage);
      length /= r;
    }
    return;
  }
  bluestein_ = std::make_unique<Bluestein>();
  Bluestein& b = *bluestein_;
  b.m = 1;
  while (b.m < 2 * n - 1) b.m *= 2;
  b.plan = std::make_unique<FftPlan<T>>(b.m);
  b.chirp.resize(static_cast<size_t>(n));
  std::vector<std::complex<double>> kernel(static_cast<size_t>(b.m));
  const uint64_t period = 2 * static_cast<uint64_t>(n);
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t jj = (static_cast<uint64_t>(j) * static_cast<uint64_t>(j)) % period;
    const double angle = std::numbers::pi * static_cast<double>(jj) / static_cast<double>(n);
    b.chirp[static_cast<size_t>(j)] = {static_cast<T>(std::cos(angle)), static_cast<T>(-std::sin(angle))};
    const std::complex<double> conj_chirp(std::cos(angle), std::sin(angle));
    kernel[static_cast<size_t>(j)] = conj_chirp;
    if (j > 0) kernel[static_cast<size_t>(b.m - j)] = conj_chirp;
  }
  // The kernel's spectrum in double precision, whatever T is.
  FftPlan<double> exact(b.m);
  std::vector<std::complex<double>> scratch(static_cast<size_t>(exact.ScratchSize(1)));
  exact.Run(kernel.data(), scratch.data(), 1, false);
  b.spectrum.resize(static_cast<size_t>(b.m));
  for (int64_t k = 0; k < b.m; ++k) {
    const std::complex<double> v = kernel[static_cast<size_t>(k)] / static_cast<double>(b.m);
    b.spectrum[static_cast<size_t>(k)] = {static_cast<T>(v.real()), static_cast<T>(v.imag())};
  }
}

template <typename T>
FftPlan<T>::~FftPlan() = default;

template <typename T>
int64_t FftPlan<T>::ScratchSize(int64_t stride) const {
  if (bluestein_) return 2 * bluestein_->m;
  return n_ <= 1 ? 0 : n_ * stride;
}

template <typename T>
std::vector<int> FftPlan<T>::radices() const {
  std::vector<int> r;
  for (const Stage& stage : stages_) r.push_back(stage.radix);
  return r;
}

template <typename T>
void FftPlan<T>::Run(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const {
  if (n_ <= 1 || stride == 0) return;
  if (bluestein_) RunBluestein(data, scratch, stride, inverse);
  else RunStockham(data, scratch, stride, inverse);
}

template <typename T>
void FftPlan<T>::RunStockham(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const {
  auto* src = reinterpret_cast<Cx<T>*>(data);
  auto* dst = reinterpret_cast<Cx<T>*>(scratch);
  const auto* tw = reinterpret_cast<const Cx<T>*>(twiddles_.data());
  int64_t s = stride;
  for (const Stage& stage : stages_) {
    const Cx<T>* w = tw + stage.twiddle_offset;
    switch (stage.radix) {
      case 2:
        inverse ? Radix2<true>(stage.m, s, w, src, dst) : Radix2<false>(stage.m, s, w, src, dst);
        break;
      case 4:
        inverse ? Radix4<true>(stage.m, s, w, src, dst) : Radix4<false>(stage.m, s, w, src, dst);
        break;
      case 3: {
        const T* trig = trig_.data() + stage.trig_offset;
        inverse ? RadixOddFixed<3, true>(stage.m, s, w, trig, src, dst)
                : RadixOddFixed<3, false>(stage.m, s, w, trig, src, dst);
        break;
      }
      case 5: {
        const T* trig = trig_.data() + stage.trig_offset;
        inverse ? RadixOddFixed<5, true>(stage.m, s, w, trig, src, dst)
                : RadixOddFixed<5, false>(stage.m, s, w, trig, src, dst);
        break;
      }
      case 7: {
        const T* trig = trig_.data() + stage.trig_offset;
        inverse ? RadixOddFixed<7, true>(stage.m, s, w, trig, src, dst)
                : RadixOddFixed<7, false>(stage.m, s, w, trig, src, dst);
        break;
      }
      default: {
        const T* trig = trig_.data() + stage.trig_offset;
        inverse ? RadixOdd<true>(stage.radix, stage.m, s, w, trig, src, dst)
                : RadixOdd<false>(stage.radix, stage.m, s, w, trig, src, dst);
      }
    }
    std::swap(src, dst);
    s *= stage.radix;
  }
  if (reinterpret_cast<std::complex<T>*>(src) != data)
    std::memcpy(static_cast<void*>(data), src, static_cast<size_t>(n_ * stride) * sizeof(std::complex<T>));
}

template <typename T>
void FftPlan<T>::RunBluestein(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const {
  const Bluestein& b = *bluestein_;
  std::complex<T>* work = scratch;
  std::complex<T>* inner = scratch + b.m;
  // The inverse transform is conj(forward(conj(x))).
  for (int64_t q = 0; q < stride; ++q) {
    for (int64_t j = 0; j < n_; ++j) {
      std::complex<T> v = data[q + j * stride];
      if (inverse) v = std::conj(v);
      auto* w = reinterpret_cast<Cx<T>*>(work + j);
      *w = Twiddle<false>(Cx<T>{v.real(), v.imag()}, *reinterpret_cast<const Cx<T>*>(&b.chirp[static_cast<size_t>(j)]));
    }
    std::fill(work + n_, work + b.m, std::complex<T>(0, 0));
    b.plan->Run(work, inner, 1, false);
    for (int64_t k = 0; k < b.m; ++k) {
      auto* w = reinterpret_cast<Cx<T>*>(work + k);
      *w = Twiddle<false>(*w, *reinterpret_cast<const Cx<T>*>(&b.spectrum[static_cast<size_t>(k)]));
    }
    b.plan->Run(work, inner, 1, true);
    for (int64_t k = 0; k < n_; ++k) {
      const Cx<T> x = Twiddle<false>(*reinterpret_cast<const Cx<T>*>(work + k),
                                     *reinterpret_cast<const Cx<T>*>(&b.chirp[static_cast<size_t>(k)]));
      data[q + k * stride] = inverse ? std::complex<T>(x.re, -x.im) : std::complex<T>(x.re, x.im);
    }
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace stablert::kernels::fft
