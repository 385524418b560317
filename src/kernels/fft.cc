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
#include <complex>
#include <cstring>
#include <map>
#include <memory>
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
};

template <typename T>
StatusOr<KernelState> PrepareFft(const KernelArgs& args) {
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
  return KernelState(std::move(state));
}

template <typename T>
std::vector<std::complex<T>>& Scratch(size_t size) {
  thread_local std::vector<std::complex<T>> scratch;
  if (scratch.size() < size) scratch.resize(size);
  return scratch;
}

// Transforms `lines` contiguous sequences of length n: groups of up to kGroup lines are
// interleaved into a buffer (element j of line g at g + j * group), transformed together
// (the plan's inner loops then run over the group), and written back.
// Lines of the innermost axis transformed together (interleaved), see RunContiguousLines.
constexpr int64_t kGroup = 16;

template <typename T>
void RunContiguousLines(const fft::FftPlan<T>& plan, std::complex<T>* data, int64_t n, int64_t lines, bool inverse) {
  std::vector<std::complex<T>>& buffer = Scratch<T>(static_cast<size_t>(n * kGroup + plan.ScratchSize(kGroup)));
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
    std::vector<std::complex<T>>& scratch = Scratch<T>(static_cast<size_t>(plan.ScratchSize(inner)));
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
  const fft::FftPlan<T>& plan = *state.plans.back();
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
  std::vector<int64_t> dims(out.dims.begin(), out.dims.end());
  TransformAxes(y, dims, dims.size() - state.lengths.size(), dims.size() - 1, state, false);
  return OkStatus();
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
  const fft::FftPlan<T>& plan = *state.plans.back();
  const int64_t group = plan.uses_bluestein() ? 1 : kGroup;
  std::vector<std::complex<T>> buffer(static_cast<size_t>(n * group));
  std::vector<std::complex<T>> scratch(static_cast<size_t>(plan.ScratchSize(group)));
  double total = 1;
  for (int64_t len : state.lengths) total *= static_cast<double>(len);
  const T factor = static_cast<T>(1.0 / total);
  T* y = out.as<T>();
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
