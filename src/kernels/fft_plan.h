// One-dimensional complex FFT plans for the fft kernels (fft.cc).
//
// A plan transforms sequences of one length n (any n >= 1), unnormalized, in either
// direction (forward: exponent -2*pi*i*j*k/n; inverse: +). Lengths whose prime factors are
// all <= kMaxDirectRadix run as a mixed-radix Stockham autosort FFT (radix 4, 2, then odd
// radices); any other length runs Bluestein's algorithm over a power-of-two plan.
// Twiddle factors are computed in double precision and rounded once to T.
//
// A plan transforms `stride` interleaved sequences at once: element j of sequence q is at
// data[q + j * stride] (q < stride). This is how an axis of a row-major array is laid out
// (stride = product of the dimensions after it), so no transposition is needed.
//
// Plans are immutable once built and may be shared and run concurrently; each call brings
// its own scratch memory.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace stablert::kernels::fft {

inline constexpr int kMaxDirectRadix = 61;

template <typename T>
class FftPlan {
 public:
  explicit FftPlan(int64_t n);
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;

  int64_t size() const { return n_; }
  // Complex elements of scratch that Run needs for `stride` interleaved sequences.
  int64_t ScratchSize(int64_t stride) const;
  // Transforms data[0 .. n*stride) in place (see above). `scratch` holds ScratchSize(stride)
  // elements and must not overlap `data`.
  void Run(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;

  bool uses_bluestein() const { return bluestein_ != nullptr; }
  // The radices of the Stockham stages, or empty for Bluestein (and n == 1); for tests.
  std::vector<int> radices() const;

 private:
  struct Stage {
    int radix;
    int64_t m;              // sub-length after this stage (n_current / radix)
    size_t twiddle_offset;  // into twiddles_: m * (radix - 1) entries, [p][u-1] = w^(p*u)
    size_t trig_offset;     // odd radices: into trig_: (cos, sin)(2*pi*k/radix), k < radix
  };
  struct Bluestein;

  void RunStockham(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;
  void RunBluestein(std::complex<T>* data, std::complex<T>* scratch, int64_t stride, bool inverse) const;

  int64_t n_;
  std::vector<Stage> stages_;
  std::vector<std::complex<T>> twiddles_;
  std::vector<T> trig_;
  std::unique_ptr<Bluestein> bluestein_;
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;

}  // namespace stablert::kernels::fft
