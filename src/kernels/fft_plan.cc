// Mixed-radix Stockham, four-step and Bluestein FFTs (see fft_plan.h).
//
// Stockham, decimation in frequency, autosort: a stage of radix r over the current length
// L = r * m with stride s (L * s = n * stride) reads a_t = x[q + s*(p + t*m)] (t < r) and
// writes y[q + s*(r*p + u)] = w_L^(p*u) * sum_t a_t w_r^(t*u) for p < m, q < s. After the
// stage the r outputs of each p form r interleaved sub-problems of length m and stride s*r;
// after the last stage the result is in natural order. The stages run in
// kernels/simd/fft_simd.cc, vectorized over q. Butterflies multiply only by real constants
// (and by +-i as swaps), and the twiddle of p == 0 (exactly 1) is skipped, so an infinite
// input yields infinities, not NaNs, where the exact transform has no 0*inf.
//
// Four-step (n = n1 * n2, j = j1 * n2 + j2, k = k1 + n1 * k2):
//   X[k1 + n1 k2] = sum_j2 w_n2^(j2 k2) [ w_n^(j2 k1) sum_j1 x[j1 n2 + j2] w_n1^(j1 k1) ]
// Step A transforms the columns (length n1) of the n1 x (n2 * stride) array in blocks of
// kBlock columns gathered into a buffer that stays in cache, multiplies by w_n^(j2 k1) and
// writes to scratch; step B transforms the rows (length n2), 16 rows interleaved at a time
// when stride == 1, and writes each result transposed to its natural place in `data`.
#include "kernels/fft_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "base/thread_pool.h"
#include "kernels/simd/fft_simd.h"
#include "kernels/simd/transpose_simd.h"

namespace stablert::kernels::fft {
namespace {

// Columns per block in step A, rows per group in step B, and sequences per chunk in
// Bluestein: 16 complex numbers are one to four full vectors.
constexpr int64_t kBlock = 16;
// Elements touched from which a call is split over the thread pool (a wake-up of sleeping
// workers costs ~15 us; 32K complex elements take about as long).
constexpr int64_t kParallelWork = int64_t{1} << 15;

std::complex<double> UnitRoot(int64_t k, int64_t n) {  // exp(-2*pi*i*k/n), k reduced mod n
  k %= n;
  const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// exp(-2*pi*i*e/n) for many e: the product of two table entries (e = hi * 2^shift + lo),
// each computed directly in double precision, so about 2 * sqrt(n) sines and cosines in all.
class UnitRoots {
 public:
  explicit UnitRoots(int64_t n) : n_(n) {
    while ((int64_t{1} << (2 * shift_)) < n) ++shift_;
    const int64_t fine = int64_t{1} << shift_;
    for (int64_t lo = 0; lo < fine; ++lo) fine_.push_back(UnitRoot(lo, n));
    for (int64_t hi = 0; hi * fine < n; ++hi) coarse_.push_back(UnitRoot(hi * fine, n));
  }
  std::complex<double> operator()(int64_t e) const {  // 0 <= e < n
    return coarse_[static_cast<size_t>(e >> shift_)] * fine_[static_cast<size_t>(e & ((int64_t{1} << shift_) - 1))];
  }

 private:
  int64_t n_;
  int shift_ = 0;
  std::vector<std::complex<double>> fine_, coarse_;
};

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

// The largest divisor of n not above sqrt(n), if it and n / it are both >= kBlock; else 0.
int64_t SplitFactor(int64_t n) {
  int64_t best = 0;
  for (int64_t d = kBlock; d * d <= n; ++d)
    if (n % d == 0) best = d;
  return best;
}

template <typename T>
std::complex<T> Round(std::complex<double> v) {
  return {static_cast<T>(v.real()), static_cast<T>(v.imag())};
}

}  // namespace

int64_t PartsFor(int64_t items, int64_t work) {
  const int64_t parts = work >= kParallelWork ? ThreadPool::Shared().parallelism() : 1;
  return std::max<int64_t>(1, std::min(parts, items));
}

void ForEachPart(int64_t items, int64_t work, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t parts = PartsFor(items, work);
  if (parts <= 1) {
    fn(0, items);
    return;
  }
  ThreadPool::Shared().ParallelFor(static_cast<int>(parts),
                                   [&](int part) { fn(items * part / parts, items * (part + 1) / parts); });
}

// A complex<float> is 8 bytes moved as one: the 64-bit in-register transposes serve.
void GatherLines(const std::complex<float>* src, int64_t line_stride, int64_t g, int64_t n, std::complex<float>* buf) {
  if (g == 1) {
    std::memcpy(static_cast<void*>(buf), src, static_cast<size_t>(n) * sizeof(*buf));
    return;
  }
  simd::TransposeTile(reinterpret_cast<uint64_t*>(buf), g, reinterpret_cast<const uint64_t*>(src), line_stride, n, g,
                      false);
}
void ScatterLines(const std::complex<float>* buf, int64_t g, int64_t n, std::complex<float>* dst, int64_t line_stride) {
  if (g == 1) {
    std::memcpy(static_cast<void*>(dst), buf, static_cast<size_t>(n) * sizeof(*buf));
    return;
  }
  simd::TransposeTile(reinterpret_cast<uint64_t*>(dst), line_stride, reinterpret_cast<const uint64_t*>(buf), g, g, n,
                      false);
}
// complex<double> (16 bytes) moves as one vector of two lanes; blocks of kLineBlock elements
// per line keep the written rows in L1.
constexpr int64_t kLineBlock = 8;

void GatherLines(const std::complex<double>* src, int64_t line_stride, int64_t g, int64_t n,
                 std::complex<double>* buf) {
  for (int64_t j0 = 0; j0 < n; j0 += kLineBlock) {
    const int64_t j1 = std::min(n, j0 + kLineBlock);
    for (int64_t l = 0; l < g; ++l)
      for (int64_t j = j0; j < j1; ++j) buf[j * g + l] = src[l * line_stride + j];
  }
}
void ScatterLines(const std::complex<double>* buf, int64_t g, int64_t n, std::complex<double>* dst,
                  int64_t line_stride) {
  for (int64_t j0 = 0; j0 < n; j0 += kLineBlock) {
    const int64_t j1 = std::min(n, j0 + kLineBlock);
    for (int64_t l = 0; l < g; ++l)
      for (int64_t j = j0; j < j1; ++j) dst[l * line_stride + j] = buf[j * g + l];
  }
}

template <typename T>
struct FftPlan<T>::Bluestein {
  int64_t m = 0;                          // power-of-two convolution length >= 2n - 1
  std::unique_ptr<FftPlan<T>> plan;       // of length m
  std::vector<std::complex<T>> chirp;     // exp(-pi*i*j^2/n), j < n
  std::vector<std::complex<T>> spectrum;  // FFT_m of the conjugate chirp, divided by m
};

template <typename T>
struct FftPlan<T>::Split {
  int64_t n1 = 0, n2 = 0;
  std::unique_ptr<FftPlan<T>> columns, rows;  // lengths n1 and n2
  std::vector<std::complex<T>> twiddles;      // [k1][j2] = w_n^(j2 k1)
};

template <typename T>
FftPlan<T>::FftPlan(int64_t n, bool allow_split) : n_(n) {
  if (n <= 1) return;
  std::vector<int> radices = Factor(n);
  const bool direct = std::all_of(radices.begin(), radices.end(), [](int r) { return r <= kMaxDirectRadix; });
  if (direct && allow_split && n >= kSplitLength) {
    if (const int64_t n1 = SplitFactor(n); n1 > 0) {
      split_ = std::make_unique<Split>();
      Split& sp = *split_;
      sp.n1 = n1;
      sp.n2 = n / n1;
      sp.columns.reset(new FftPlan<T>(sp.n1, false));
      sp.rows.reset(new FftPlan<T>(sp.n2, false));
      sp.twiddles.resize(static_cast<size_t>(n));
      const UnitRoots roots(n);
      for (int64_t k1 = 0; k1 < sp.n1; ++k1) {
        int64_t e = 0;
        std::complex<T>* row = sp.twiddles.data() + k1 * sp.n2;
        for (int64_t j2 = 0; j2 < sp.n2; ++j2) {
          row[j2] = Round<T>(roots(e));
          e += k1;
          if (e >= n) e -= n;
        }
      }
      return;
    }
  }
  if (direct) {
    int64_t length = n;
    for (int r : radices) {
      Stage stage{r, length / r, twiddles_.size(), trig_.size()};
      for (int64_t p = 0; p < stage.m; ++p)
        for (int u = 1; u < r; ++u) twiddles_.push_back(Round<T>(UnitRoot(p * u, length)));
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
  Buffer<double> scratch(exact.ScratchSize(1));
  exact.Run(kernel.data(), scratch.data(), 1, false);
  b.spectrum.resize(static_cast<size_t>(b.m));
  for (int64_t k = 0; k < b.m; ++k)
    b.spectrum[static_cast<size_t>(k)] = Round<T>(kernel[static_cast<size_t>(k)] / static_cast<double>(b.m));
}

template <typename T>
FftPlan<T>::~FftPlan() = default;

template <typename T>
int64_t FftPlan<T>::ScratchSize(int64_t stride) const {
  if (bluestein_) {
    const int64_t g = std::min(stride, kBlock);
    return bluestein_->m * g + bluestein_->plan->ScratchSize(g);
  }
  return n_ <= 1 ? 0 : n_ * stride;
}

template <typename T>
int64_t FftPlan<T>::WorkPerSequence() const {
  return bluestein_ ? 4 * bluestein_->m : n_;
}

template <typename T>
std::pair<int64_t, int64_t> FftPlan<T>::split_lengths() const {
  return split_ ? std::pair<int64_t, int64_t>{split_->n1, split_->n2} : std::pair<int64_t, int64_t>{0, 0};
}

template <typename T>
std::vector<int> FftPlan<T>::radices() const {
  std::vector<int> r;
  for (const Stage& stage : stages_) r.push_back(stage.radix);
  return r;
}

template <typename T>
void FftPlan<T>::Run(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const {
  std::complex<T>* result = RunAnywhere(data, scratch, stride, inverse);
  if (result != data)
    std::memcpy(static_cast<void*>(data), result, static_cast<size_t>(n_ * stride) * sizeof(std::complex<T>));
}

template <typename T>
std::complex<T>* FftPlan<T>::RunAnywhere(std::complex<T>* data, std::complex<T>* scratch, int64_t stride,
                                         bool inverse) const {
  if (n_ <= 1 || stride == 0) return data;
  if (bluestein_) RunBluestein(data, scratch, stride, inverse);
  else if (split_) RunSplit(data, scratch, stride, inverse);
  else return RunStockham(data, scratch, stride, inverse);
  return data;
}

template <typename T>
std::complex<T>* FftPlan<T>::RunStockham(std::complex<T>* data, std::complex<T>* scratch, int64_t stride,
                                         bool inverse) const {
  std::complex<T>* src = data;
  std::complex<T>* dst = scratch;
  int64_t s = stride;
  for (const Stage& stage : stages_) {
    simd::FftStage({stage.radix, stage.m, s, inverse}, twiddles_.data() + stage.twiddle_offset,
                   trig_.data() + stage.trig_offset, src, dst);
    std::swap(src, dst);
    s *= stage.radix;
  }
  return src;
}

template <typename T>
void FftPlan<T>::RunSplit(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const {
  const Split& sp = *split_;
  const int64_t n1 = sp.n1, n2 = sp.n2, width = n2 * stride, total = n_ * stride;
  std::complex<T>* temp = scratch;  // the n1 x width array between the steps
  constexpr size_t kSize = sizeof(std::complex<T>);
  // Step A: columns in blocks of kBlock.
  const int64_t blocks = (width + kBlock - 1) / kBlock;
  ForEachPart(blocks, total, [&](int64_t begin, int64_t end) {
    Buffer<T> buffer(n1 * kBlock + sp.columns->ScratchSize(kBlock) + kBlock);
    std::complex<T>* block = buffer.data();
    std::complex<T>* block_scratch = block + n1 * kBlock;
    std::complex<T>* row_twiddles = block_scratch + sp.columns->ScratchSize(kBlock);
    for (int64_t b = begin; b < end; ++b) {
      const int64_t c = b * kBlock, w = std::min(kBlock, width - c);
      for (int64_t j1 = 0; j1 < n1; ++j1) std::memcpy(static_cast<void*>(block + j1 * w), data + j1 * width + c, w * kSize);
      const std::complex<T>* columns = sp.columns->RunAnywhere(block, block_scratch, w, inverse);
      std::memcpy(static_cast<void*>(temp + c), columns, w * kSize);  // k1 = 0: twiddles are 1
      for (int64_t k1 = 1; k1 < n1; ++k1) {
        const std::complex<T>* tw = sp.twiddles.data() + k1 * n2;
        if (stride == 1) {
          tw += c;
        } else {
          for (int64_t i = 0; i < w; ++i) row_twiddles[i] = tw[(c + i) / stride];
          tw = row_twiddles;
        }
        simd::ComplexMultiply(columns + k1 * w, tw, temp + k1 * width + c, w, inverse);
      }
    }
  });
  // Step B: rows, written transposed: element (k1, k2, q) goes to data[q + stride * (k1 + n1 * k2)].
  if (stride == 1) {
    const int64_t groups = (n1 + kBlock - 1) / kBlock;
    ForEachPart(groups, total, [&](int64_t begin, int64_t end) {
      Buffer<T> buffer(n2 * kBlock + sp.rows->ScratchSize(kBlock));
      std::complex<T>* group = buffer.data();
      std::complex<T>* group_scratch = group + n2 * kBlock;
      for (int64_t gi = begin; gi < end; ++gi) {
        const int64_t r = gi * kBlock, g = std::min(kBlock, n1 - r);
        GatherLines(temp + r * n2, n2, g, n2, group);
        const std::complex<T>* rows = sp.rows->RunAnywhere(group, group_scratch, g, inverse);
        for (int64_t k2 = 0; k2 < n2; ++k2)
          std::memcpy(static_cast<void*>(data + k2 * n1 + r), rows + k2 * g, g * kSize);
      }
    });
    return;
  }
  ForEachPart(n1, total, [&](int64_t begin, int64_t end) {
    Buffer<T> row_scratch(sp.rows->ScratchSize(stride));
    for (int64_t k1 = begin; k1 < end; ++k1) {
      const std::complex<T>* row = sp.rows->RunAnywhere(temp + k1 * width, row_scratch.data(), stride, inverse);
      for (int64_t k2 = 0; k2 < n2; ++k2)
        std::memcpy(static_cast<void*>(data + stride * (k1 + n1 * k2)), row + k2 * stride, stride * kSize);
    }
  });
}

// X_k = c_k sum_j (x_j c_j) conj(c_(k-j)) with the chirp c_j = exp(-pi*i*j^2/n): a cyclic
// convolution of length m through the plan of length m. The inverse transform uses conj(c)
// throughout; since the kernel conj(c) is symmetric (b_(m-j) = b_j), its spectrum is then
// the conjugate of the stored one.
template <typename T>
void FftPlan<T>::RunBluestein(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const {
  const Bluestein& b = *bluestein_;
  const int64_t m = b.m;
  // Up to kBlock sequences at a time, interleaved in `work` so the inner plan runs over them
  // together.
  for (int64_t q0 = 0; q0 < stride; q0 += kBlock) {
    const int64_t g = std::min(kBlock, stride - q0);
    std::complex<T>* work = scratch;
    std::complex<T>* inner = scratch + m * g;
    if (stride == 1) simd::ComplexMultiply(data, b.chirp.data(), work, n_, inverse);
    else simd::ComplexMultiplyRows(data + q0, stride, b.chirp.data(), work, g, n_, g, inverse);
    std::fill(work + n_ * g, work + m * g, std::complex<T>(0, 0));
    const std::complex<T>* spectrum = b.plan->RunAnywhere(work, inner, g, false);
    if (g == 1) simd::ComplexMultiply(spectrum, b.spectrum.data(), work, m, inverse);
    else simd::ComplexMultiplyRows(spectrum, g, b.spectrum.data(), work, g, m, g, inverse);
    const std::complex<T>* product = b.plan->RunAnywhere(work, inner, g, true);
    if (stride == 1) simd::ComplexMultiply(product, b.chirp.data(), data, n_, inverse);
    else simd::ComplexMultiplyRows(product, g, b.chirp.data(), data + q0, stride, n_, g, inverse);
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace stablert::kernels::fft
