// One-dimensional complex FFT plans for the fft kernels (fft.cc).
//
// A plan transforms sequences of one length n (any n >= 1), unnormalized, in either
// direction (forward: exponent -2*pi*i*j*k/n; inverse: +). Lengths whose prime factors are
// all <= kMaxDirectRadix run as a mixed-radix Stockham autosort FFT (radix 4, 2, then odd
// radices) on the host's vector ISA (kernels/simd/fft_simd.h); long ones (n >= kSplitLength)
// as a four-step FFT n = n1 * n2 over two such plans (columns in cache-sized blocks, one
// twiddle pass, rows, transposed on the way out), split over the shared thread pool when
// large. Any other length runs Bluestein's algorithm over a power-of-two plan.
// Twiddle factors are computed in double precision and rounded once to T.
//
// A plan transforms `stride` interleaved sequences at once: element j of sequence q is at
// data[q + j * stride] (q < stride). This is how an axis of a row-major array is laid out
// (stride = product of the dimensions after it), so no transposition is needed; the vector
// loops run over q, so a stride of 16 or more runs at full vector width.
//
// Plans are immutable once built and may be shared and run concurrently; each call brings
// its own scratch memory (Run allocates per-thread block buffers of its own for long
// lengths). Construction cannot fail (lengths must be >= 0).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <vector>

namespace stablert::kernels::fft {

inline constexpr int kMaxDirectRadix = 61;
// Direct lengths from this one up run as four-step FFTs.
inline constexpr int64_t kSplitLength = 4096;

template <typename T>
class FftPlan {
 public:
  explicit FftPlan(int64_t n) : FftPlan(n, true) {}
  // allow_split = false: never a four-step plan (for lines run in interleaved groups that
  // fit the cache, where the direct stages are faster).
  FftPlan(int64_t n, bool allow_split);
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;

  int64_t size() const { return n_; }
  // Complex elements of scratch that Run needs for `stride` interleaved sequences.
  int64_t ScratchSize(int64_t stride) const;
  // Transforms data[0 .. n*stride) in place (see above). `scratch` holds ScratchSize(stride)
  // elements and must not overlap `data`.
  void Run(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;
  // As Run, but the result may be left in the first n*stride elements of `scratch` instead
  // of `data`; returns where it is. For callers that move the result anyway (saves a copy).
  std::complex<T>* RunAnywhere(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;

  bool uses_bluestein() const { return bluestein_ != nullptr; }
  // The work of transforming one sequence, in the units of ForEachPart's `work` (elements
  // touched): n, or for Bluestein about the four passes over its convolution length.
  int64_t WorkPerSequence() const;
  // Whether the plan runs as a four-step FFT, and its (n1, n2); for tests.
  bool splits() const { return split_ != nullptr; }
  std::pair<int64_t, int64_t> split_lengths() const;
  // The radices of the Stockham stages, or empty for Bluestein, four-step and n == 1; for tests.
  std::vector<int> radices() const;

 private:
  struct Stage {
    int radix;
    int64_t m;              // sub-length after this stage (n_current / radix)
    size_t twiddle_offset;  // into twiddles_: m * (radix - 1) entries, [p][u-1] = w^(p*u)
    size_t trig_offset;     // odd radices: into trig_: (cos, sin)(2*pi*k/radix), k < radix
  };
  struct Bluestein;
  struct Split;

  // Returns the buffer holding the result (data or scratch).
  std::complex<T>* RunStockham(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;
  void RunBluestein(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;
  void RunSplit(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;

  int64_t n_;
  std::vector<Stage> stages_;
  std::vector<std::complex<T>> twiddles_;
  std::vector<T> trig_;
  std::unique_ptr<Bluestein> bluestein_;
  std::unique_ptr<Split> split_;
};

// Uninitialized complex storage, 64-byte aligned (no zeroing of large scratch memory).
template <typename T>
class Buffer {
 public:
  explicit Buffer(int64_t size)
      : data_(size > 0 ? static_cast<std::complex<T>*>(::operator new(static_cast<size_t>(size) * sizeof(std::complex<T>),
                                                                       std::align_val_t{64}))
                       : nullptr) {}
  ~Buffer() {
    if (data_) ::operator delete(data_, std::align_val_t{64});
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::complex<T>* data() const { return data_; }

 private:
  std::complex<T>* data_;
};

// Runs fn(begin, end) over a split of [0, items) into contiguous parts: one part unless
// `work` (elements touched) is large enough to pay for waking the shared thread pool
// (base/thread_pool.h), then one part per pool thread. fn must be safe to run concurrently
// on disjoint ranges.
void ForEachPart(int64_t items, int64_t work, const std::function<void(int64_t, int64_t)>& fn);
// The number of parts ForEachPart(items, work, ...) runs.
int64_t PartsFor(int64_t items, int64_t work);

// buf[j * g + l] = src[l * line_stride + j] for l < g, j < n: g lines gathered interleaved,
// the layout a plan runs with stride g (an in-register transpose for complex<float>).
void GatherLines(const std::complex<float>* src, int64_t line_stride, int64_t g, int64_t n, std::complex<float>* buf);
void GatherLines(const std::complex<double>* src, int64_t line_stride, int64_t g, int64_t n,
                 std::complex<double>* buf);
// dst[l * line_stride + j] = buf[j * g + l]: the interleaved lines put back.
void ScatterLines(const std::complex<float>* buf, int64_t g, int64_t n, std::complex<float>* dst, int64_t line_stride);
void ScatterLines(const std::complex<double>* buf, int64_t g, int64_t n, std::complex<double>* dst,
                  int64_t line_stride);

extern template class FftPlan<float>;
extern template class FftPlan<double>;

}  // namespace stablert::kernels::fft
