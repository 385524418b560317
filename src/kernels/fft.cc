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
// Multi-dimensional transforms run axis by axis in place in the output (RFFT: the last
// axis first, IRFFT: the last axis last). Lines of the innermost axis run 16 at a time
// interleaved in a buffer (the plans' vector loops run across them); other axes run in
// place or in blocks of 16 columns. Groups, blocks and batch entries are split over the
// shared thread pool when the transform is large (fft_plan.h, ForEachPart), and a long
// single line splits itself (four-step plans). Normalization multiplies real and imaginary
// parts by a real factor.
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

#include "kernels/dtype_traits.h"
#include "kernels/fft_params.h"
#include "kernels/families.h"
#include "kernels/fft_plan.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

using fft::Buffer;
using fft::FftPlan;
using fft::ForEachPart;


// Lines (or columns) transformed together in a buffer.
constexpr int64_t kGroup = 16;

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

template <typename T>
struct FftPlans {
  std::vector<std::shared_ptr<const FftPlan<T>>> per_axis;  // one per length, shared by equal lengths
  // RFFT/IRFFT with an even last length n: a plan of length n/2 (the real line packed as
  // n/2 complex numbers) and its twiddles.
  std::shared_ptr<const FftPlan<T>> half;
  std::shared_ptr<const HalfTwiddles<T>> half_twiddles;
};

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
    if ((type_ == FftType::kRfft || type_ == FftType::kIrfft) && n >= 2 && n % 2 == 0) {
      plans_.half = SharedByLength<FftPlan<T>>(n / 2);
      plans_.half_twiddles = SharedByLength<HalfTwiddles<T>>(n);
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

// Transforms `lines` lines of length n through `plan` in groups of up to kGroup lines:
// load(first, g, buffer) fills buffer[j * g + l] with element j of line first + l (l < g),
// the plan runs over the g interleaved lines, and store(first, g, buffer) takes the result
// from the same layout. A plan that splits itself (four-step) runs one line at a time.
template <typename T, typename Load, typename Store>
void RunLineGroups(const FftPlan<T>& plan, int64_t n, int64_t lines, bool inverse, const Load& load,
                   const Store& store) {
  const int64_t group = plan.splits() ? 1 : std::min(kGroup, lines);
  const int64_t groups = (lines + group - 1) / group;
  ForEachPart(groups, n * lines, [&](int64_t begin, int64_t end) {
    Buffer<T> buffer(n * group + plan.ScratchSize(group));
    std::complex<T>* data = buffer.data();
    for (int64_t gi = begin; gi < end; ++gi) {
      const int64_t first = gi * group, g = std::min(group, lines - first);
      load(first, g, data);
      plan.Run(data, data + n * group, g, inverse);
      store(first, g, data);
    }
  });
}

// Transforms `data` (row-major `dims`) along axes [first, last) in place.
template <typename T>
void TransformAxes(std::complex<T>* data, const std::vector<int64_t>& dims, size_t first, size_t last,
                   const FftState<T>& state, bool inverse) {
  const size_t rank = dims.size();
  const size_t k = state.lengths().size();
  constexpr size_t kSize = sizeof(std::complex<T>);
  for (size_t axis = first; axis < last; ++axis) {
    const FftPlan<T>& plan = *state.plans().per_axis[axis - (rank - k)];
    const int64_t n = dims[axis];
    if (n <= 1) continue;
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < rank; ++i) inner *= dims[i];
    const int64_t total = outer * n * inner;
    if (inner == 1 && plan.splits()) {  // long lines: one at a time, each split over threads
      Buffer<T> scratch(plan.ScratchSize(1));
      for (int64_t o = 0; o < outer; ++o) plan.Run(data + o * n, scratch.data(), 1, inverse);
    } else if (inner == 1) {
      RunLineGroups(
          plan, n, outer, inverse,
          [&](int64_t f, int64_t g, std::complex<T>* buf) {
            for (int64_t l = 0; l < g; ++l)
              for (int64_t j = 0; j < n; ++j) buf[j * g + l] = data[(f + l) * n + j];
          },
          [&](int64_t f, int64_t g, const std::complex<T>* buf) {
            for (int64_t l = 0; l < g; ++l)
              for (int64_t j = 0; j < n; ++j) data[(f + l) * n + j] = buf[j * g + l];
          });
    } else if (inner <= 4 * kGroup || plan.splits() || plan.uses_bluestein()) {
      // Short rows or long columns: each batch entry in place (its sequences interleaved).
      ForEachPart(outer, total, [&](int64_t begin, int64_t end) {
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
          plan.Run(block, block + n * kGroup, w, inverse);
          for (int64_t j = 0; j < n; ++j) std::memcpy(static_cast<void*>(base + j * inner), block + j * w, w * kSize);
        }
      });
    }
  }
}

template <typename T>
void Scale(std::complex<T>* data, int64_t count, T factor) {
  T* v = reinterpret_cast<T*>(data);
  ForEachPart(2 * count, count, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) v[i] *= factor;
  });
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
  auto* y = out.as<std::complex<T>>();
  if (in.data != out.data)
    std::memcpy(static_cast<void*>(y), in.data, static_cast<size_t>(out.num_elements) * sizeof(std::complex<T>));
  const bool inverse = args.Params<FftParams>().type == FftType::kIfft;
  std::vector<int64_t> dims(out.dims.begin(), out.dims.end());
  TransformAxes(y, dims, dims.size() - state.lengths().size(), dims.size(), state, inverse);
  if (inverse) Scale(y, out.num_elements, InverseScale<T>(state.lengths()));
  return OkStatus();
}

// RFFT of contiguous real lines of length n into lines of n/2 + 1 complex numbers.
// Even n: z_j = x_2j + i x_2j+1, Z = FFT_h(z) (h = n/2); the spectra of the even and odd
// samples are E_k = (Z_k + conj(Z_h-k)) / 2 and O_k = (Z_k - conj(Z_h-k)) / 2i, and
// X_k = E_k + w^k O_k for k = 0..h. Odd n: the lines widened to complex.
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
        [&](int64_t f, int64_t g, const std::complex<T>* buf) {
          for (int64_t l = 0; l < g; ++l)
            for (int64_t k = 0; k < half; ++k) y[(f + l) * half + k] = buf[k * g + l];
        });
    return;
  }
  const int64_t h = n / 2;
  const std::complex<T>* w = plans.half_twiddles->w.data();
  RunLineGroups(
      *plans.half, h, lines, false,
      [&](int64_t f, int64_t g, std::complex<T>* buf) {
        if (g == 1) {
          std::memcpy(static_cast<void*>(buf), x + f * n, static_cast<size_t>(n) * sizeof(T));
          return;
        }
        for (int64_t l = 0; l < g; ++l) {
          const T* line = x + (f + l) * n;
          for (int64_t j = 0; j < h; ++j) buf[j * g + l] = std::complex<T>(line[2 * j], line[2 * j + 1]);
        }
      },
      [&](int64_t f, int64_t g, const std::complex<T>* buf) {
        ForEachPart(h + 1, g == 1 ? h : 0, [&](int64_t k_begin, int64_t k_end) {
          for (int64_t l = 0; l < g; ++l) {
            std::complex<T>* out = y + (f + l) * (h + 1);
            for (int64_t k = k_begin; k < k_end; ++k) {
              const std::complex<T> zk = buf[(k == h ? 0 : k) * g + l];
              const std::complex<T> zc = std::conj(buf[(k == 0 ? 0 : h - k) * g + l]);
              const std::complex<T> e((zk.real() + zc.real()) / 2, (zk.imag() + zc.imag()) / 2);
              const std::complex<T> o((zk.imag() - zc.imag()) / 2, (zc.real() - zk.real()) / 2);  // (zk - zc) / 2i
              const std::complex<T> wk = w[k];
              out[k] = std::complex<T>(e.real() + wk.real() * o.real() - wk.imag() * o.imag(),
                                       e.imag() + wk.real() * o.imag() + wk.imag() * o.real());
            }
          }
        });
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
  TransformAxes(y, dims, dims.size() - state.lengths().size(), dims.size() - 1, state, false);
  return OkStatus();
}

// IRFFT of lines of n/2 + 1 complex numbers into real lines of length n, scaled by `factor`.
// Even n (the inverse of RealFftLines): E_k = (X_k + conj(X_h-k)) / 2,
// O_k = conj(w^k) (X_k - conj(X_h-k)) / 2, z = IFFT_h(E + iO) = h (x_2j + i x_2j+1).
// Odd n: the Hermitian extension transformed as complex. The imaginary parts of X_0 and
// X_h are ignored.
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
        [&](int64_t f, int64_t g, const std::complex<T>* buf) {
          for (int64_t l = 0; l < g; ++l)
            for (int64_t j = 0; j < n; ++j) y[(f + l) * n + j] = buf[j * g + l].real() * factor;
        });
    return;
  }
  const int64_t h = n / 2;
  const std::complex<T>* w = plans.half_twiddles->w.data();
  const T scale = 2 * factor;  // the length-h inverse yields h * x, the full one n * x
  RunLineGroups(
      *plans.half, h, lines, true,
      [&](int64_t f, int64_t g, std::complex<T>* buf) {
        ForEachPart(h, g == 1 ? h : 0, [&](int64_t k_begin, int64_t k_end) {
          for (int64_t l = 0; l < g; ++l) {
            const std::complex<T>* z = spectrum + (f + l) * (h + 1);
            for (int64_t k = k_begin; k < k_end; ++k) {
              std::complex<T> xk = z[k], xc = std::conj(z[h - k]);
              if (k == 0) {
                xk.imag(0);
                xc.imag(0);
              }
              const std::complex<T> e((xk.real() + xc.real()) / 2, (xk.imag() + xc.imag()) / 2);
              const std::complex<T> d((xk.real() - xc.real()) / 2, (xk.imag() - xc.imag()) / 2);
              const std::complex<T> wk = w[k];  // O = conj(wk) * d
              const std::complex<T> o(wk.real() * d.real() + wk.imag() * d.imag(),
                                      wk.real() * d.imag() - wk.imag() * d.real());
              buf[k * g + l] = std::complex<T>(e.real() - o.imag(), e.imag() + o.real());
            }
          }
        });
      },
      [&](int64_t f, int64_t g, const std::complex<T>* buf) {
        ForEachPart(h, g == 1 ? h : 0, [&](int64_t j_begin, int64_t j_end) {
          for (int64_t l = 0; l < g; ++l) {
            T* line = y + (f + l) * n;
            for (int64_t j = j_begin; j < j_end; ++j) {
              const std::complex<T> v = buf[j * g + l];
              line[2 * j] = v.real() * scale;
              line[2 * j + 1] = v.imag() * scale;
            }
          }
        });
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
  // The complex axes first, on a copy of the input.
  Buffer<T> copy(state.lengths().size() > 1 ? in.num_elements : 0);
  if (state.lengths().size() > 1) {
    std::memcpy(static_cast<void*>(copy.data()), in.data,
                static_cast<size_t>(in.num_elements) * sizeof(std::complex<T>));
    std::vector<int64_t> dims(in.dims.begin(), in.dims.end());
    TransformAxes(copy.data(), dims, dims.size() - state.lengths().size(), dims.size() - 1, state, true);
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
