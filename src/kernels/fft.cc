// stablehlo.fft over the innermost 1 to 3 dimensions (any batch in front).
//
//   "fft.<C>"   (C: complex<f32>, complex<f64>)  in: x (C)  out: y (C, same shape)
//               params: [[type], [lengths]]  type 0 = FFT, 1 = IFFT (scaled by 1/prod(lengths))
//   "rfft.<R>"  (R: f32, f64)   in: x (R, [..., n1, .., nk])  out: C [..., n1, .., nk/2 + 1]
//               params: [[2], [lengths]]
//   "irfft.<C>" in: x (C, [..., n1, .., nk/2 + 1])  out: R [..., n1, .., nk]
//               params: [[3], [lengths]]; the imaginary parts of the terms a real signal's
//               spectrum has real (k = 0 and k = nk/2) are ignored, as the transform of a
//               Hermitian-symmetric extension of the input does.
// The one-dimensional plans (fft_plan.h) are built once per step by the prepare function.
// Multi-dimensional transforms run axis by axis in place in the output (RFFT: the last
// axis first, IRFFT: the last axis last), each axis as interleaved sequences (no
// transposes). Normalization multiplies real and imaginary parts by a real factor.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <numbers>
#include <vector>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/fft_plan.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

enum FftType : int64_t { kFft = 0, kIfft = 1, kRfft = 2, kIrfft = 3 };

template <typename T>
struct FftState {
  std::vector<int64_t> lengths;
  std::vector<std::shared_ptr<const fft::FftPlan<T>>> plans;  // one per length, shared by equal lengths
  // RFFT/IRFFT with an even last length n: a plan of length n/2 (the real line packed as
  // n/2 complex numbers) and w^k = exp(-2*pi*i*k/n) for k <= n/2.
  std::shared_ptr<const fft::FftPlan<T>> half_plan;
  std::vector<std::complex<T>> half_twiddles;
};

template <typename T>
StatusOr<PreparedStep> PrepareFft(const KernelArgs& args) {
  if (args.params.size() != 2 || args.params[0].size() != 1 || args.params[1].empty() || args.params[1].size() > 3)
    return InvalidArgument("fft kernels take params [[type], [lengths (1 to 3)]]");
  auto state = std::make_shared<FftState<T>>();
  state->lengths = args.params[1];
  std::map<int64_t, std::shared_ptr<const fft::FftPlan<T>>> by_length;
  for (int64_t n : state->lengths) {
    if (n < 0) return InvalidArgument("fft length must not be negative");
    auto& plan = by_length[n];
    if (!plan) plan = std::make_shared<const fft::FftPlan<T>>(n);
    state->plans.push_back(plan);
  }
  const int64_t type = args.params[0][0], n = state->lengths.back();
  if ((type == 2 || type == 3) && n >= 2 && n % 2 == 0) {
    state->half_plan = std::make_shared<const fft::FftPlan<T>>(n / 2);
    for (int64_t k = 0; k <= n / 2; ++k) {
      const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      state->half_twiddles.emplace_back(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
    }
  }
  return KernelState(std::move(state));
}

// Scratch memory of one call: up to 1 MiB comes from a buffer kept per thread (no
// allocation per call for small transforms); larger requests are allocated and freed with
// the call, so no thread keeps the memory of its largest transform. At most one instance per
// thread is alive at a time.
template <typename T>
class Scratch {
 public:
  explicit Scratch(size_t size) {
    thread_local std::vector<std::complex<T>> cached;
    if (size * sizeof(std::complex<T>) <= (size_t{1} << 20)) {
      if (cached.size() < size) cached.resize(size);
      data_ = cached.data();
    } else {
      owned_.resize(size);
      data_ = owned_.data();
    }
  }
  std::complex<T>* data() { return data_; }

 private:
  std::complex<T>* data_ = nullptr;
  std::vector<std::complex<T>> owned_;
};

// Transforms `lines` contiguous sequences of length n: groups of up to kGroup lines are
// interleaved into a buffer (element j of line g at g + j * group), transformed together
// (the plan's inner loops then run over the group), and written back.
// Lines of the innermost axis transformed together (interleaved), see RunContiguousLines.
constexpr int64_t kGroup = 16;

template <typename T>
void RunContiguousLines(const fft::FftPlan<T>& plan, std::complex<T>* data, int64_t n, int64_t lines, bool inverse) {
  Scratch<T> buffer(static_cast<size_t>(n * kGroup + plan.ScratchSize(kGroup)));
  std::complex<T>* group_data = buffer.data();
  std::complex<T>* scratch = buffer.data() + n * kGroup;
  for (int64_t first = 0; first < lines; first += kGroup) {
    const int64_t g = std::min(kGroup, lines - first);
    const std::complex<T>* src = data + first * n;
    for (int64_t l = 0; l < g; ++l)
      for (int64_t j = 0; j < n; ++j) group_data[l + j * g] = src[l * n + j];
    plan.Run(group_data, scratch, g, inverse);
    std::complex<T>* dst = data + first * n;
    for (int64_t l = 0; l < g; ++l)
      for (int64_t j = 0; j < n; ++j) dst[l * n + j] = group_data[l + j * g];
  }
}

// Transforms `data` (row-major `dims`) along axes [first, last) in place.
template <typename T>
void TransformAxes(std::complex<T>* data, const std::vector<int64_t>& dims, size_t first, size_t last,
                   const FftState<T>& state, bool inverse) {
  const size_t rank = dims.size();
  const size_t k = state.lengths.size();
  for (size_t axis = first; axis < last; ++axis) {
    const fft::FftPlan<T>& plan = *state.plans[axis - (rank - k)];
    const int64_t n = dims[axis];
    if (n <= 1) continue;
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < rank; ++i) inner *= dims[i];
    if (inner == 1 && outer > 1 && !plan.uses_bluestein()) {
      RunContiguousLines(plan, data, n, outer, inverse);
      continue;
    }
    Scratch<T> scratch(static_cast<size_t>(plan.ScratchSize(inner)));
    for (int64_t o = 0; o < outer; ++o) plan.Run(data + o * n * inner, scratch.data(), inner, inverse);
  }
}

template <typename T>
void Scale(std::complex<T>* data, int64_t count, const std::vector<int64_t>& lengths) {
  double total = 1;
  for (int64_t n : lengths) total *= static_cast<double>(n);
  const T factor = static_cast<T>(1.0 / total);
  T* v = reinterpret_cast<T*>(data);
  for (int64_t i = 0; i < 2 * count; ++i) v[i] *= factor;
}

template <typename T>
void RealFftLines(const fft::FftPlan<T>& plan, const T* x, std::complex<T>* y, int64_t n, int64_t lines);
template <typename T>
void RealFftEvenLines(const FftState<T>& state, const T* x, std::complex<T>* y, int64_t n, int64_t lines);

// IRFFT of lines of even length n through a plan of length h = n/2 (the inverse of
// RealFftEvenLines): E_k = (X_k + conj(X_h-k)) / 2, O_k = conj(w^k) (X_k - conj(X_h-k)) / 2,
// z = IFFT_h(E + iO) = h (x_2j + i x_2j+1). The imaginary parts of X_0 and X_h are ignored.
template <typename T>
void InverseRealFftEvenLines(const FftState<T>& state, const std::complex<T>* spectrum, T* y, int64_t n,
                             int64_t lines, T factor) {
  const fft::FftPlan<T>& plan = *state.half_plan;
  const int64_t h = n / 2;
  const std::complex<T>* w = state.half_twiddles.data();
  const int64_t group = plan.uses_bluestein() ? 1 : kGroup;
  std::vector<std::complex<T>> buffer(static_cast<size_t>(h * group));
  std::vector<std::complex<T>> scratch(static_cast<size_t>(plan.ScratchSize(group)));
  const T scale = 2 * factor;  // the length-h inverse yields h * x, the full one n * x
  for (int64_t first = 0; first < lines; first += group) {
    const int64_t g = std::min(group, lines - first);
    for (int64_t l = 0; l < g; ++l) {
      const std::complex<T>* z = spectrum + (first + l) * (h + 1);
      for (int64_t k = 0; k < h; ++k) {
        std::complex<T> xk = z[k], xc = std::conj(z[h - k]);
        if (k == 0) {
          xk.imag(0);
          xc.imag(0);
        }
        const std::complex<T> e((xk.real() + xc.real()) / 2, (xk.imag() + xc.imag()) / 2);
        const std::complex<T> d((xk.real() - xc.real()) / 2, (xk.imag() - xc.imag()) / 2);
        const std::complex<T> wk = w[k];  // O = conj(wk) * d
        const std::complex<T> o(wk.real() * d.real() + wk.imag() * d.imag(), wk.real() * d.imag() - wk.imag() * d.real());
        buffer[static_cast<size_t>(l + k * g)] = std::complex<T>(e.real() - o.imag(), e.imag() + o.real());
      }
    }
    plan.Run(buffer.data(), scratch.data(), g, true);
    for (int64_t l = 0; l < g; ++l) {
      T* line = y + (first + l) * n;
      for (int64_t j = 0; j < h; ++j) {
        const std::complex<T> v = buffer[static_cast<size_t>(l + j * g)];
        line[2 * j] = v.real() * scale;
        line[2 * j + 1] = v.imag() * scale;
      }
    }
  }
}

template <typename T>
Status ComplexFftKernel(const KernelContext&, const KernelArgs& args) {
  const auto& state = *static_cast<const FftState<T>*>(args.state);
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  auto* y = out.as<std::complex<T>>();
  if (in.data != out.data)
    std::memcpy(static_cast<void*>(y), in.data, static_cast<size_t>(out.num_elements) * sizeof(std::complex<T>));
  const bool inverse = args.params[0][0] == kIfft;
  std::vector<int64_t> dims(out.dims.begin(), out.dims.end());
  TransformAxes(y, dims, dims.size() - state.lengths.size(), dims.size(), state, inverse);
  if (inverse) Scale(y, out.num_elements, state.lengths);
  return OkStatus();
}

template <typename T>
Status RealFftKernel(const KernelContext&, const KernelArgs& args) {
  const auto& state = *static_cast<const FftState<T>*>(args.state);
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const int64_t n = state.lengths.back();
  const int64_t half = out.dims.back();
  const int64_t lines = out.num_elements / half;
  const T* x = in.as<const T>();
  auto* y = out.as<std::complex<T>>();
  if (state.half_plan) {
    RealFftEvenLines(state, x, y, n, lines);
  } else {
    RealFftLines(*state.plans.back(), x, y, n, lines);
  }
  std::vector<int64_t> dims(out.dims.begin(), out.dims.end());
  TransformAxes(y, dims, dims.size() - state.lengths.size(), dims.size() - 1, state, false);
  return OkStatus();
}

// RFFT of contiguous real lines through a full-length complex plan (any n).
template <typename T>
void RealFftLines(const fft::FftPlan<T>& plan, const T* x, std::complex<T>* y, int64_t n, int64_t lines) {
  const int64_t half = n / 2 + 1;
  // Lines in interleaved groups (see RunContiguousLines), widened to complex.
  const int64_t group = plan.uses_bluestein() ? 1 : kGroup;
  std::vector<std::complex<T>> buffer(static_cast<size_t>(n * group));
  std::vector<std::complex<T>> scratch(static_cast<size_t>(plan.ScratchSize(group)));
  for (int64_t first = 0; first < lines; first += group) {
    const int64_t g = std::min(group, lines - first);
    for (int64_t l = 0; l < g; ++l)
      for (int64_t j = 0; j < n; ++j) buffer[static_cast<size_t>(l + j * g)] = std::complex<T>(x[(first + l) * n + j], 0);
    plan.Run(buffer.data(), scratch.data(), g, false);
    for (int64_t l = 0; l < g; ++l)
      for (int64_t k = 0; k < half; ++k) y[(first + l) * half + k] = buffer[static_cast<size_t>(l + k * g)];
  }
}

// RFFT of lines of even length n through a plan of length h = n/2: z_j = x_2j + i x_2j+1,
// Z = FFT(z); the spectra of the even and odd samples are E_k = (Z_k + conj(Z_h-k)) / 2 and
// O_k = (Z_k - conj(Z_h-k)) / 2i, and X_k = E_k + w^k O_k for k = 0..h.
template <typename T>
void RealFftEvenLines(const FftState<T>& state, const T* x, std::complex<T>* y, int64_t n, int64_t lines) {
  const fft::FftPlan<T>& plan = *state.half_plan;
  const int64_t h = n / 2;
  const std::complex<T>* w = state.half_twiddles.data();
  const int64_t group = plan.uses_bluestein() ? 1 : kGroup;
  std::vector<std::complex<T>> buffer(static_cast<size_t>(h * group));
  std::vector<std::complex<T>> scratch(static_cast<size_t>(plan.ScratchSize(group)));
  for (int64_t first = 0; first < lines; first += group) {
    const int64_t g = std::min(group, lines - first);
    for (int64_t l = 0; l < g; ++l) {
      const T* line = x + (first + l) * n;
      for (int64_t j = 0; j < h; ++j) buffer[static_cast<size_t>(l + j * g)] = std::complex<T>(line[2 * j], line[2 * j + 1]);
    }
    plan.Run(buffer.data(), scratch.data(), g, false);
    for (int64_t l = 0; l < g; ++l) {
      std::complex<T>* out = y + (first + l) * (h + 1);
      for (int64_t k = 0; k <= h; ++k) {
        const std::complex<T> zk = buffer[static_cast<size_t>(l + (k == h ? 0 : k) * g)];
        const std::complex<T> zc = std::conj(buffer[static_cast<size_t>(l + (k == 0 ? 0 : h - k) * g)]);
        const std::complex<T> e((zk.real() + zc.real()) / 2, (zk.imag() + zc.imag()) / 2);
        const std::complex<T> o((zk.imag() - zc.imag()) / 2, (zc.real() - zk.real()) / 2);  // (zk - zc) / 2i
        const std::complex<T> wk = w[k];
        out[k] = std::complex<T>(e.real() + wk.real() * o.real() - wk.imag() * o.imag(),
                                 e.imag() + wk.real() * o.imag() + wk.imag() * o.real());
      }
    }
  }
}

template <typename T>
Status InverseRealFftKernel(const KernelContext&, const KernelArgs& args) {
  const auto& state = *static_cast<const FftState<T>*>(args.state);
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const int64_t n = state.lengths.back();
  const int64_t half = in.dims.back();
  const int64_t lines = out.num_elements / n;
  // The complex axes first, on a copy of the input.
  std::vector<std::complex<T>> spectrum(static_cast<size_t>(in.num_elements));
  std::memcpy(static_cast<void*>(spectrum.data()), in.data,
              static_cast<size_t>(in.num_elements) * sizeof(std::complex<T>));
  std::vector<int64_t> dims(in.dims.begin(), in.dims.end());
  TransformAxes(spectrum.data(), dims, dims.size() - state.lengths.size(), dims.size() - 1, state, true);
  double total = 1;
  for (int64_t len : state.lengths) total *= static_cast<double>(len);
  const T factor = static_cast<T>(1.0 / total);
  T* y = out.as<T>();
  if (state.half_plan) {
    InverseRealFftEvenLines(state, spectrum.data(), y, n, lines, factor);
    return OkStatus();
  }
  const fft::FftPlan<T>& plan = *state.plans.back();
  const int64_t group = plan.uses_bluestein() ? 1 : kGroup;
  std::vector<std::complex<T>> buffer(static_cast<size_t>(n * group));
  std::vector<std::complex<T>> scratch(static_cast<size_t>(plan.ScratchSize(group)));
  for (int64_t first = 0; first < lines; first += group) {
    const int64_t g = std::min(group, lines - first);
    for (int64_t l = 0; l < g; ++l) {
      const std::complex<T>* z = spectrum.data() + (first + l) * half;
      for (int64_t k = 0; k < n; ++k)
        buffer[static_cast<size_t>(l + k * g)] = k < half ? z[k] : std::conj(z[n - k]);
    }
    plan.Run(buffer.data(), scratch.data(), g, true);
    for (int64_t l = 0; l < g; ++l)
      for (int64_t j = 0; j < n; ++j) y[(first + l) * n + j] = buffer[static_cast<size_t>(l + j * g)].real() * factor;
  }
  return OkStatus();
}

}  // namespace

Status RegisterFftKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("fft", {DType::kC64}), &ComplexFftKernel<float>, &PrepareFft<float>));
  STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("fft", {DType::kC128}), &ComplexFftKernel<double>, &PrepareFft<double>));
  STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("rfft", {DType::kF32}), &RealFftKernel<float>, &PrepareFft<float>));
  STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("rfft", {DType::kF64}), &RealFftKernel<double>, &PrepareFft<double>));
  STABLERT_RETURN_IF_ERROR(
      r.Register(KernelKey("irfft", {DType::kC64}), &InverseRealFftKernel<float>, &PrepareFft<float>));
  return r.Register(KernelKey("irfft", {DType::kC128}), &InverseRealFftKernel<double>, &PrepareFft<double>);
}

}  // namespace stablert::kernels
