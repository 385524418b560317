// Vector loops of the FFT plans (kernels/fft_plan.cc) on the host's ISA (dispatch.h).
//
// Complex numbers are interleaved (re, im) as std::complex stores them; a vector holds
// Lanes/2 complex numbers of consecutive sequences q, so every loop runs over the q of a
// Stockham stage (sequences interleaved with stride s) and needs s >= 1 only (a partial
// tail of q runs on narrower vectors). Stateless and thread-safe; nothing fails.
#pragma once

#include <complex>
#include <cstdint>

namespace stablert::kernels::simd {

// One Stockham stage of radix r (2, 4, or odd <= 61) over the current length L = r * m with
// s interleaved sequences (see fft_plan.cc for the formula):
//   reads x[q + s*(p + t*m)], writes y[q + s*(r*p + u)] for p < m, q < s, t, u < r.
// `twiddles` holds m * (r - 1) entries [p][u-1] = exp(-2*pi*i*p*u/L) (conjugated when
// `inverse`); `trig` (odd r) holds (cos, sin)(2*pi*k/r) for k < r. x and y must not overlap.
struct FftStageArgs {
  int radix;
  int64_t m;
  int64_t s;
  bool inverse;
};
void FftStage(const FftStageArgs& a, const std::complex<float>* twiddles, const float* trig,
              const std::complex<float>* x, std::complex<float>* y);
void FftStage(const FftStageArgs& a, const std::complex<double>* twiddles, const double* trig,
              const std::complex<double>* x, std::complex<double>* y);

// out[i] = a[i] * w[i] (or a[i] * conj(w[i]) when `conjugate`) for i < count; out may be a.
void ComplexMultiply(const std::complex<float>* a, const std::complex<float>* w, std::complex<float>* out,
                     int64_t count, bool conjugate);
void ComplexMultiply(const std::complex<double>* a, const std::complex<double>* w, std::complex<double>* out,
                     int64_t count, bool conjugate);

// out[r * out_stride + i] = a[r * a_stride + i] * w[r] (or * conj(w[r]) when `conjugate`)
// for r < rows, i < width: each row scaled by its own complex factor. out may be a (with
// equal strides).
void ComplexMultiplyRows(const std::complex<float>* a, int64_t a_stride, const std::complex<float>* w,
                         std::complex<float>* out, int64_t out_stride, int64_t rows, int64_t width, bool conjugate);
void ComplexMultiplyRows(const std::complex<double>* a, int64_t a_stride, const std::complex<double>* w,
                         std::complex<double>* out, int64_t out_stride, int64_t rows, int64_t width, bool conjugate);

// The spectrum of g real lines of even length 2h from the FFT of the lines packed as h
// complex numbers (z[k * g + l], element k of line l, k < h): out[k * g + l] for
// k_begin <= k < k_end (the whole spectrum: 0 to h + 1). w holds exp(-2*pi*i*k/(2h)) for
// k <= h. out must not overlap z.
void RealSpectrumFromHalf(const std::complex<float>* z, int64_t g, int64_t h, const std::complex<float>* w,
                          std::complex<float>* out, int64_t k_begin, int64_t k_end);
void RealSpectrumFromHalf(const std::complex<double>* z, int64_t g, int64_t h, const std::complex<double>* w,
                          std::complex<double>* out, int64_t k_begin, int64_t k_end);
// The inverse, in place: from the half spectra x[k * g + l] (k <= h; the imaginary parts of
// rows 0 and h are ignored) the h complex numbers whose inverse FFT is h times the real lines
// packed in pairs, in rows k < h. Rows k and h - k are computed together, for
// k_begin <= k < k_end (all of them: 0 to h / 2 + 1); concurrent calls on disjoint ranges are safe.
void HalfFromRealSpectrum(std::complex<float>* x, int64_t g, int64_t h, const std::complex<float>* w, int64_t k_begin,
                          int64_t k_end);
void HalfFromRealSpectrum(std::complex<double>* x, int64_t g, int64_t h, const std::complex<double>* w,
                          int64_t k_begin, int64_t k_end);

// data[i] *= factor for i < count.
void ScaleComplex(std::complex<float>* data, int64_t count, float factor);
void ScaleComplex(std::complex<double>* data, int64_t count, double factor);

}  // namespace stablert::kernels::simd
