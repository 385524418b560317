// stablehlo.fft over the innermost 1 to 3 dimensions (any batch in front).
//
//   "fft.<C>"   (C: complex<f32>, complex<f64>)  in: x (C)  out: y (C, same shape)
//               params: FftParams (fft_params.h), type FFT or IFFT (scaled by 1/prod(lengths))
//   "rfft.<R>"  (R: f32, f64)   in: x (R, [..., n1, .., nk])  out: C [..., n1, .., nk/2 + 1]
//               params: FftParams, type RFFT
//   "irfft.<C>" in: x (C, [..., n1, .., nk/2 + 1])  out: R [..., n1, .., nk]
//               params: FftParams, type IRFFT; the imaginary parts of the terms a real signal's
//               spectrum has real (k = 0 and k = nk/2) are ignored, as the transform of a
//               Hermitian-symmetric extension of the input does.
// The prepare function only checks the parameters; the one-dimensional plans (fft_plan.h)
// are built on the first execution of the step (once, under std::call_once, so concurrent
// first executions are safe) and kept with the step, so compilation never pays for them;
// plans and twiddle tables of one length are shared across steps and executables
// (SharedByLength).
// Multi-dimensional transforms run axis by axis, innermost first, into the output (the
// first pass reads the input; RFFT: the last axis first, IRFFT: the last axis last). Lines
// of the innermost axis run up to 16 at a time interleaved in a buffer (the plans' vector
// loops run across them; gathered and put back by in-register transposes), a batch of
// four-step lengths through a direct plan while a group fits the L2; other axes run in place
// or in blocks of 16 columns. Groups, blocks and batch entries are split over the shared
// thread pool when the transform is large (fft_plan.h, ForEachPart), and a long single line
// splits itself (four-step plans). Normalization multiplies real and imaginary parts by a
// real factor, in the last pass over lines where there is one.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <vector>

#include "base/cpu_caches.h"
#include "kernels/dtype_traits.h"
#include "kernels/fft_params.h"
#include "kernels/families.h"
#include "kernels/fft_plan.h"
#include "kernels/registry.h"
#include "kernels/simd/fft_simd.h"

namespace stablert::kernels {
namespace {

using fft::Buffer;
using fft::FftPlan;
using fft::ForEachPart;
using fft::GatherLines;
using fft::PartsFor;
using fft::ScatterLines;


// Lines (or columns) transformed together in a buffer.
constexpr int64_t kGroup = 16;
// The smallest group when groups are made smaller to occupy every thread.
constexpr int64_t kMinGroup = 4;

// The object of length `n` (a plan, a twiddle table), shared by every step and executable of
// the process that uses it: a program compiled again (JAX re-jits often) or two transforms of
// one length build their tables once (an FFT convolution's two RFFTs and its IRFFT of 1M
// points share 12 MB this way). Objects are immutable; the cache holds them weakly, so one
// lives as long as some step uses it. Thread-safe.
template <typename Object>
std::shared_ptr<const Object> SharedByLength(int64_t n) {
  static std::mutex mutex;
  static std::map<int64_t, std::weak_ptr<const Object>> objects;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto object = objects[n].lock()) return object;
  }
  auto object = std::make_shared<const Object>(n);  // built outside the lock
  std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = objects[n].lock()) return existing;
  for (auto it = objects.begin(); it != objects.end();) it = it->second.expired() ? objects.erase(it) : std::next(it);
  objects[n] = object;
  return object;
}

// w^k = exp(-2*pi*i*k/n) for k <= n/2: the twiddles that pack a real line of even length n
// as n/2 complex numbers (RFFT) and unpack it (IRFFT).
template <typename T>
struct HalfTwiddles {
  explicit HalfTwiddles(int64_t n) {
    w.reserve(static_cast<size_t>(n / 2 + 1));
    for (int64_t k = 0; k <= n / 2; ++k) {
      const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      w.emplace_back(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
    }
  }
  std::vector<std::complex<T>> w;
};

// A plan that never splits itself (four-step), cached apart from the ordinary plans.
template <typename T>
struct DirectFftPlan : FftPlan<T> {
  explicit DirectFftPlan(int64_t n) : FftPlan<T>(n, false) {}
};

template <typename T>
struct FftPlans {
  std::vector<std::shared_ptr<const FftPlan<T>>> per_axis;  // one per length, shared by equal lengths
  // RFFT/IRFFT with an even last length n: a plan of length n/2 (the real line packed as
  // n/2 complex numbers) and its twiddles.
  std::shared_ptr<const FftPlan<T>> half;
  std::shared_ptr<const HalfTwiddles<T>> half_twiddles;
  // Direct plans of the innermost length and of the half length, where their plans split:
  // batches of such lines run in interleaved groups when a group fits the L2 (LinesPlan).
  std::shared_ptr<const FftPlan<T>> innermost_direct, half_direct;
};

// Bytes of a group of g interleaved lines of length n with the plan's scratch.
template <typename T>
int64_t GroupBytes(int64_t n, int64_t g) {
  return 2 * g * n * static_cast<int64_t>(sizeof(std::complex<T>));
}

// The plan that transforms `lines` lines of length n best: `direct` (when there is one) for a
// batch whose groups of kMinGroup lines fit the L2, else `plan`.
template <typename T>
const FftPlan<T>& LinesPlan(const FftPlan<T>& plan, const std::shared_ptr<const FftPlan<T>>& direct, int64_t n,
                            int64_t lines) {
  if (direct && lines >= 2 && GroupBytes<T>(n, kMinGroup) <= L2CacheBytes()) return *direct;
  return plan;
}

template <typename T>
class FftState {
 public:
  FftState(FftType type, std::vector<int64_t> lengths) : type_(type), lengths_(std::move(lengths)) {}
  const std::vector<int64_t>& lengths() const { return lengths_; }
  // The plans, built by the first caller; thread-safe.
  const FftPlans<T>& plans() const {
    std::call_once(once_, [this] { Build(); });
    return plans_;
  }

 private:
  void Build() const {
    std::map<int64_t, std::shared_ptr<const FftPlan<T>>> by_length;
    for (int64_t n : lengths_) {
      auto& plan = by_length[n];
      if (!plan) plan = SharedByLength<FftPlan<T>>(n);
      plans_.per_axis.push_back(plan);
    }
    const int64_t n = lengths_.back();
    if (plans_.per_axis.back()->splits()) plans_.innermost_direct = SharedByLength<DirectFftPlan<T>>(n);
    if ((type_ == FftType::kRfft || type_ == FftType::kIrfft) && n >= 2 && n % 2 == 0) {
      plans_.half = SharedByLength<FftPlan<T>>(n / 2);
      plans_.half_twiddles = SharedByLength<HalfTwiddles<T>>(n);
      if (plans_.half->splits()) plans_.half_direct = SharedByLength<DirectFftPlan<T>>(n / 2);
    }
  }

  FftType type_;
  std::vector<int64_t> lengths_;
  mutable std::once_flag once_;
  mutable FftPlans<T> plans_;
};

template <typename T>
StatusOr<PreparedStep> PrepareFft(const KernelArgs& args) {
  const FftParams& params = args.Params<FftParams>();
  if (params.lengths.empty() || params.lengths.size() > 3)
    return InvalidArgument("fft kernels transform 1 to 3 dimensions, got " + std::to_string(params.lengths.size()));
  for (int64_t n : params.lengths)
    if (n < 0) return InvalidArgument("fft length must not be negative");
  if (params.type < FftType::kFft || params.type > FftType::kIrfft)
    return InvalidArgument("fft type must be 0 to 3 (FFT, IFFT, RFFT, IRFFT)");
  return KernelState(std::make_shared<const FftState<T>>(params.type, params.lengths));
}

// Transforms `lines` lines of length n through `plan` in groups of up to kGroup lines
// (smaller groups when that lets every pool thread take one, or when 16 would not fit the
// L2): load(first, g, buffer) fills buffer[j * g + l] with element j of line first + l
// (l < g), the plan runs over the g interleaved lines, and store(first, g, result, spare)
// takes the result from the same layout; `spare` is free memory of at least (n + 1) * g
// elements. A plan that splits itself (four-step) runs one line at a time.
template <typename T, typename Load, typename Store>
void RunLineGroups(const FftPlan<T>& plan, int64_t n, int64_t lines, bool inverse, const Load& load,
                   const Store& store) {
  // Lines of a split plan run in parallel only when one line alone does not.
  const int64_t work = plan.splits() && PartsFor(1, n) > 1 ? 0 : plan.WorkPerSequence() * lines;
  const int64_t parts = PartsFor(lines, work);
  const int64_t fitting = std::max(kMinGroup, L2CacheBytes() / GroupBytes<T>(n, 1));
  const int64_t group =
      plan.splits() ? 1 : std::min({lines, fitting, std::clamp((lines + parts - 1) / parts, kMinGroup, kGroup)});
  const int64_t groups = (lines + group - 1) / group;
  const int64_t size = (n + 1) * group;
  ForEachPart(groups, work, [&](int64_t begin, int64_t end) {
    Buffer<T> buffer(size + std::max(plan.ScratchSize(group), size));
    std::complex<T>* data = buffer.data();
    std::complex<T>* scratch = data + size;
    for (int64_t gi = begin; gi < end; ++gi) {
      const int64_t first = gi * group, g = std::min(group, lines - first);
      load(first, g, data);
      std::complex<T>* result = plan.RunAnywhere(data, scratch, g, inverse);
      store(first, g, result, result == data ? scratch : data);
    }
  });
}

template <typename T>
void Scale(std::complex<T>* data, int64_t count, T factor) {
  ForEachPart(count, count, [&](int64_t begin, int64_t end) { simd::ScaleComplex(data + begin, end - begin, factor); });
}

// Transforms row-major `dims` along axes [first, last), innermost first, from `src` into
// `data` (src may be data; otherwise the first pass reads src, or src is copied first), and
// multiplies the result by `factor` (1: not at all), in the last pass over lines when it is
// one, else in a pass of its own.
template <typename T>
void TransformAxes(const std::complex<T>* src, std::complex<T>* data, const std::vector<int64_t>& dims, size_t first,
                   size_t last, const FftState<T>& state, bool inverse, T factor) {
  const size_t rank = dims.size();
  const size_t k = state.lengths().size();
  constexpr size_t kSize = sizeof(std::complex<T>);
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  const std::complex<T>* from = src;  // where the next pass reads
  bool scaled = factor == T(1);
  const auto copy_input = [&] {
    if (from != data) std::memcpy(static_cast<void*>(data), from, static_cast<size_t>(total) * kSize);
    from = data;
  };
  for (size_t axis = last; axis-- > first;) {
    const int64_t n = dims[axis];
    if (n <= 1) continue;
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < rank; ++i) inner *= dims[i];
    const FftPlan<T>& axis_plan = *state.plans().per_axis[axis - (rank - k)];
    const FftPlan<T>& plan =
        axis + 1 == rank ? LinesPlan(axis_plan, state.plans().innermost_direct, n, outer) : axis_plan;
    if (inner == 1 && !plan.splits()) {
      const bool scale_here = axis == first && !scaled;
      const std::complex<T>* lines_in = from;
      RunLineGroups(
          plan, n, outer, inverse,
          [&](int64_t f, int64_t g, std::complex<T>* buf) { GatherLines(lines_in + f * n, n, g, n, buf); },
          [&](int64_t f, int64_t g, std::complex<T>* result, std::complex<T>*) {
            if (scale_here) simd::ScaleComplex(result, n * g, factor);
            ScatterLines(result, g, n, data + f * n, n);
          });
      from = data;
      scaled = scaled || scale_here;
      continue;
    }
    copy_input();
    if (inner == 1) {  // long lines, each split over the threads or, if too short for that, lines in parallel
      ForEachPart(outer, PartsFor(1, n) > 1 ? 0 : total, [&](int64_t begin, int64_t end) {
        Buffer<T> scratch(plan.ScratchSize(1));
        for (int64_t o = begin; o < end; ++o) plan.Run(data + o * n, scratch.data(), 1, inverse);
      });
    } else if (inner <= 4 * kGroup || plan.splits() || plan.uses_bluestein()) {
      // Short rows or long columns: each batch entry in place (its sequences interleaved).
      ForEachPart(outer, outer * inner * plan.WorkPerSequence(), [&](int64_t begin, int64_t end) {
        Buffer<T> scratch(plan.ScratchSize(inner));
        for (int64_t o = begin; o < end; ++o) plan.Run(data + o * n * inner, scratch.data(), inner, inverse);
      });
    } else {
      // Blocks of kGroup columns gathered into a buffer that stays in cache.
      const int64_t blocks = (inner + kGroup - 1) / kGroup;
      ForEachPart(outer * blocks, total, [&](int64_t begin, int64_t end) {
        Buffer<T> buffer(n * kGroup + plan.ScratchSize(kGroup));
        std::complex<T>* block = buffer.data();
        for (int64_t i = begin; i < end; ++i) {
          const int64_t o = i / blocks, c = (i % blocks) * kGroup, w = std::min(kGroup, inner - c);
          std::complex<T>* base = data + o * n * inner + c;
          for (int64_t j = 0; j < n; ++j) std::memcpy(static_cast<void*>(block + j * w), base + j * inner, w * kSize);
          const std::complex<T>* result = plan.RunAnywhere(block, block + n * kGroup, w, inverse);
          for (int64_t j = 0; j < n; ++j) std::memcpy(static_cast<void*>(base + j * inner), result + j * w, w * kSize);
        }
      });
    }
  }
  copy_input();
  if (!scaled) Scale(data, total, factor);
}

template <typename T>
T InverseScale(const std::vector<int64_t>& lengths) {
  double total = 1;
  for (int64_t n : lengths) total *= static_cast<double>(n);
  return static_cast<T>(1.0 / total);
}

template <typename T>
Status ComplexFftKernel(const KernelContext&, const KernelArgs& args) {
  const auto& state = *static_cast<const FftState<T>*>(args.state);
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const bool inverse = args.Params<FftParams>().type == FftType::kIfft;
  std::vector<int64_t> dims(out.dims.begin(), out.dims.end());
  TransformAxes(in.as<const std::complex<T>>(), out.as<std::complex<T>>(), dims, dims.size() - state.lengths().size(),
                dims.size(), state, inverse, inverse ? InverseScale<T>(state.lengths()) : T(1));
  return OkStatus();
}

// RFFT of contiguous real lines of length n into lines of n/2 + 1 complex numbers.
// Even n: z_j = x_2j + i x_2j+1, Z = FFT_h(z) (h = n/2); the spectra of the even and odd
// samples are E_k = (Z_k + conj(Z_h-k)) / 2 and O_k = (Z_k - conj(Z_h-k)) / 2i, and
// X_k = E_k + w^k O_k for k = 0..h (simd::RealSpectrumFromHalf). Odd n: the lines widened
// to complex.
template <typename T>
void RealFftLines(const FftPlans<T>& plans, const T* x, std::complex<T>* y, int64_t n, int64_t lines) {
  const int64_t half = n / 2 + 1;
  if (!plans.half) {
    RunLineGroups(
        *plans.per_axis.back(), n, lines, false,
        [&](int64_t f, int64_t g, std::complex<T>* buf) {
          for (int64_t l = 0; l < g; ++l)
            for (int64_t j = 0; j < n; ++j) buf[j * g + l] = std::complex<T>(x[(f + l) * n + j], 0);
        },
        [&](int64_t f, int64_t g, const std::complex<T>* result, std::complex<T>*) {
          ScatterLines(result, g, half, y + f * half, half);
        });
    return;
  }
  const int64_t h = n / 2;
  const std::complex<T>* w = plans.half_twiddles->w.data();
  const auto* packed = reinterpret_cast<const std::complex<T>*>(x);  // a line is h (re, im) pairs
  RunLineGroups(
      LinesPlan(*plans.half, plans.half_direct, h, lines), h, lines, false,
      [&](int64_t f, int64_t g, std::complex<T>* buf) { GatherLines(packed + f * h, h, g, h, buf); },
      [&](int64_t f, int64_t g, const std::complex<T>* result, std::complex<T>* spare) {
        // One long line: its rows split over the threads.
        ForEachPart(h + 1, g == 1 ? h : 0, [&](int64_t k_begin, int64_t k_end) {
          simd::RealSpectrumFromHalf(result, g, h, w, spare, k_begin, k_end);
        });
        ScatterLines(spare, g, h + 1, y + f * (h + 1), h + 1);
      });
}

template <typename T>
Status RealFftKernel(const KernelContext&, const KernelArgs& args) {
  const auto& state = *static_cast<const FftState<T>*>(args.state);
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const int64_t n = state.lengths().back();
  const int64_t lines = out.num_elements / out.dims.back();
  auto* y = out.as<std::complex<T>>();
  RealFftLines(state.plans(), in.as<const T>(), y, n, lines);
  std::vector<int64_t> dims(out.dims.begin(), out.dims.end());
  TransformAxes<T>(y, y, dims, dims.size() - state.lengths().size(), dims.size() - 1, state, false, T(1));
  return OkStatus();
}

// IRFFT of lines of n/2 + 1 complex numbers into real lines of length n, scaled by `factor`.
// Even n (the inverse of RealFftLines): E_k = (X_k + conj(X_h-k)) / 2,
// O_k = conj(w^k) (X_k - conj(X_h-k)) / 2, z = IFFT_h(E + iO) = h (x_2j + i x_2j+1)
// (simd::HalfFromRealSpectrum). Odd n: the Hermitian extension transformed as complex. The
// imaginary parts of X_0 and X_h are ignored.
template <typename T>
void InverseRealFftLines(const FftPlans<T>& plans, const std::complex<T>* spectrum, T* y, int64_t n, int64_t lines,
                         T factor) {
  const int64_t half = n / 2 + 1;
  if (!plans.half) {
    RunLineGroups(
        *plans.per_axis.back(), n, lines, true,
        [&](int64_t f, int64_t g, std::complex<T>* buf) {
          for (int64_t l = 0; l < g; ++l) {
            const std::complex<T>* z = spectrum + (f + l) * half;
            for (int64_t k = 0; k < n; ++k) buf[k * g + l] = k < half ? z[k] : std::conj(z[n - k]);
          }
        },
        [&](int64_t f, int64_t g, const std::complex<T>* buf, std::complex<T>*) {
          for (int64_t l = 0; l < g; ++l)
            for (int64_t j = 0; j < n; ++j) y[(f + l) * n + j] = buf[j * g + l].real() * factor;
        });
    return;
  }
  const int64_t h = n / 2;
  const std::complex<T>* w = plans.half_twiddles->w.data();
  const T scale = 2 * factor;  // the length-h inverse yields h * x, the full one n * x
  auto* packed = reinterpret_cast<std::complex<T>*>(y);  // a line is h (re, im) pairs
  RunLineGroups(
      LinesPlan(*plans.half, plans.half_direct, h, lines), h, lines, true,
      [&](int64_t f, int64_t g, std::complex<T>* buf) {
        GatherLines(spectrum + f * (h + 1), h + 1, g, h + 1, buf);
        // One long line: its row pairs (k, h - k) split over the threads.
        ForEachPart(h / 2 + 1, g == 1 ? h : 0, [&](int64_t k_begin, int64_t k_end) {
          simd::HalfFromRealSpectrum(buf, g, h, w, k_begin, k_end);
        });
      },
      [&](int64_t f, int64_t g, std::complex<T>* result, std::complex<T>*) {
        ForEachPart(h * g, g == 1 ? h : 0,
                    [&](int64_t begin, int64_t end) { simd::ScaleComplex(result + begin, end - begin, scale); });
        ScatterLines(result, g, h, packed + f * h, h);
      });
}

template <typename T>
Status InverseRealFftKernel(const KernelContext&, const KernelArgs& args) {
  const auto& state = *static_cast<const FftState<T>*>(args.state);
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const int64_t n = state.lengths().back();
  const int64_t lines = out.num_elements / n;
  const std::complex<T>* spectrum = in.as<const std::complex<T>>();
  // The complex axes first, into a copy of the input.
  Buffer<T> copy(state.lengths().size() > 1 ? in.num_elements : 0);
  if (state.lengths().size() > 1) {
    std::vector<int64_t> dims(in.dims.begin(), in.dims.end());
    TransformAxes(spectrum, copy.data(), dims, dims.size() - state.lengths().size(), dims.size() - 1, state, true,
                  T(1));
    spectrum = copy.data();
  }
  InverseRealFftLines(state.plans(), spectrum, out.as<T>(), n, lines, InverseScale<T>(state.lengths()));
  return OkStatus();
}

}  // namespace

Status RegisterFftKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(
      r.Register<FftParams>(KernelKey("fft", {DType::kC64}), &ComplexFftKernel<float>, &PrepareFft<float>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<FftParams>(KernelKey("fft", {DType::kC128}), &ComplexFftKernel<double>, &PrepareFft<double>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<FftParams>(KernelKey("rfft", {DType::kF32}), &RealFftKernel<float>, &PrepareFft<float>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<FftParams>(KernelKey("rfft", {DType::kF64}), &RealFftKernel<double>, &PrepareFft<double>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<FftParams>(KernelKey("irfft", {DType::kC64}), &InverseRealFftKernel<float>, &PrepareFft<float>));
  return r.Register<FftParams>(KernelKey("irfft", {DType::kC128}), &InverseRealFftKernel<double>,
                               &PrepareFft<double>);
}

}  // namespace stablert::kernels
