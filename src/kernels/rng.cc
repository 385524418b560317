// Random numbers.
//
// "rng_bit_generator_three_fry.<T>", "rng_bit_generator_philox.<T>" (T: any 8..64-bit
// integer type; only the width matters):
//   in: state (u64[2], or u64[3] for philox)   out: new state (same type), bits (T)
//   params: none
//   Bit-identical with XLA's CPU backend, which expands the op the same way:
//   three_fry: key = state[0], 64-bit counter = state[1]; new state [key, counter + used].
//   philox:    key = state[0], 128-bit counter = (lo: state[1], hi: state[0]) for u64[2],
//              (lo: state[1], hi: state[2]) for u64[3]; new state [key, lo'] or
//              [key, lo', hi'].
//   The element layouts are in rng_bits.h.
//
// "rng_uniform.<T>" (T: f16, bf16, f32, f64, s32, u32, s64, u64), "rng_normal.<T>" (floats):
//   in: a, b (scalars of T: bounds [a, b), or mean and standard deviation)   out: T
//   params: RngParams (rng_params.h)
//   stablehlo.rng's values are implementation-defined. Each step draws Philox bits from
//   `key` and a counter private to the step (kept in the prepared state, advanced
//   atomically by every call, so repeated executions give fresh numbers), and maps them as
//   XLA does: floats take the top mantissa-width bits as a fraction in [0, 1) scaled to
//   [a, b) (16-bit floats computed in f32 and rounded, so they may round up to b, as on
//   XLA); integers take bits mod (b - a) added to a;
//   normals use the Box-Muller transform of pairs of uniforms.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>
#include <type_traits>
#include <vector>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/rng_bits.h"
#include "kernels/rng_params.h"

namespace stablert::kernels {
namespace {

uint64_t LoadU64(const BufferView& view, int64_t i) {
  uint64_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(view.data) + i * 8, 8);
  return v;
}
void StoreU64(const BufferView& view, int64_t i, uint64_t v) {
  std::memcpy(static_cast<uint8_t*>(view.data) + i * 8, &v, 8);
}

Status ThreeFryKernel(const KernelContext&, const KernelArgs& args) {
  const uint64_t key = LoadU64(args.inputs[0], 0);
  const uint64_t counter = LoadU64(args.inputs[0], 1);
  const BufferView& bits = args.outputs[1];
  const uint64_t next = rng::ThreefryFill(key, counter, bits.dims, DTypeByteSize(bits.dtype), bits.data);
  StoreU64(args.outputs[0], 0, key);
  StoreU64(args.outputs[0], 1, next);
  return OkStatus();
}

Status PhiloxKernel(const KernelContext&, const KernelArgs& args) {
  const BufferView& state = args.inputs[0];
  const uint64_t key = LoadU64(state, 0);
  const bool wide = state.num_elements >= 3;
  rng::U128 counter{LoadU64(state, 1), wide ? LoadU64(state, 2) : key};
  const BufferView& bits = args.outputs[1];
  const rng::U128 next = rng::PhiloxFill(key, counter, bits.num_elements, DTypeByteSize(bits.dtype), bits.data);
  StoreU64(args.outputs[0], 0, key);
  StoreU64(args.outputs[0], 1, next.lo);
  if (wide) StoreU64(args.outputs[0], 2, next.hi);
  return OkStatus();
}

//===--- stablehlo.rng ---===//

struct RngStepState {
  mutable std::atomic<uint64_t> next_block{0};
};

StatusOr<PreparedStep> PrepareRng(const KernelArgs&) {
  return KernelState(std::make_shared<RngStepState>());
}

// Philox bits of width sizeof(Bits) for `n` elements from the step's key and counter.
template <typename Bits>
std::vector<Bits> DrawBits(const KernelArgs& args, int64_t n) {
  const auto* state = static_cast<const RngStepState*>(args.state);
  const int64_t per_block = sizeof(Bits) == 8 ? 2 : 4;
  const uint64_t blocks = static_cast<uint64_t>((n + per_block - 1) / per_block);
  const uint64_t first = state->next_block.fetch_add(blocks, std::memory_order_relaxed);
  std::vector<Bits> bits(static_cast<size_t>(n));
  rng::PhiloxFill(args.Params<RngParams>().key, rng::U128{first, 0}, n, sizeof(Bits), bits.data());
  return bits;
}

// Uniform numbers in [0, 1) of type F (float or double) from the top mantissa bits.
template <typename F>
std::vector<F> DrawUnitUniform(const KernelArgs& args, int64_t n) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr int kMantissa = std::numeric_limits<F>::digits - 1;
  std::vector<Bits> bits = DrawBits<Bits>(args, n);
  std::vector<F> unit(static_cast<size_t>(n));
  const F scale = std::ldexp(F(1), -kMantissa);
  for (int64_t i = 0; i < n; ++i)
    unit[static_cast<size_t>(i)] = static_cast<F>(bits[static_cast<size_t>(i)] >> (sizeof(Bits) * 8 - kMantissa)) * scale;
  return unit;
}

template <DType D>
Status UniformKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const T a = *args.inputs[0].as<const T>();
  const T b = *args.inputs[1].as<const T>();
  T* out = args.outputs[0].as<T>();
  const int64_t n = args.outputs[0].num_elements;
  if constexpr (IsFloatStorage<T>()) {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const F lo = static_cast<F>(Load(a)), hi = static_cast<F>(Load(b));
    std::vector<F> unit = DrawUnitUniform<F>(args, n);
    for (int64_t i = 0; i < n; ++i) out[i] = StoreAs<T>(unit[static_cast<size_t>(i)] * (hi - lo) + lo);
  } else {
    using U = std::make_unsigned_t<T>;
    std::vector<U> bits = DrawBits<U>(args, n);
    const U range = static_cast<U>(static_cast<U>(b) - static_cast<U>(a));
    for (int64_t i = 0; i < n; ++i) {
      const U x = bits[static_cast<size_t>(i)];
      const U dist = range == 0 ? x : static_cast<U>(x % range);  // x % 0 is x, as on XLA:CPU
      const U half = static_cast<U>(dist >> 1);
      out[i] = static_cast<T>(static_cast<U>(static_cast<U>(a) + half + static_cast<U>(dist - half)));
    }
  }
  return OkStatus();
}

template <DType D>
Status NormalKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const F mean = static_cast<F>(Load(*args.inputs[0].as<const T>()));
  const F sigma = static_cast<F>(Load(*args.inputs[1].as<const T>()));
  T* out = args.outputs[0].as<T>();
  const int64_t n = args.outputs[0].num_elements;
  const int64_t pairs = (n + 1) / 2;
  std::vector<F> unit = DrawUnitUniform<F>(args, 2 * pairs);
  for (int64_t p = 0; p < pairs; ++p) {
    const F u1 = std::max(unit[static_cast<size_t>(2 * p)], F(1.0e-7f));
    const F v = F(2 * std::numbers::pi) * unit[static_cast<size_t>(2 * p + 1)];
    const F radius = std::sqrt(F(-2) * std::log(u1));
    out[2 * p] = StoreAs<T>(mean + sigma * (std::sin(v) * radius));
    if (2 * p + 1 < n) out[2 * p + 1] = StoreAs<T>(mean + sigma * (std::cos(v) * radius));
  }
  return OkStatus();
}

}  // namespace

Status RegisterRngKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(ForEachDType(IntDTypes{}, [&]<DType D>() {
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("rng_bit_generator_three_fry", {D}), &ThreeFryKernel));
    return r.Register(KernelKey("rng_bit_generator_philox", {D}), &PhiloxKernel);
  }));
  using UniformDTypes = DTypeList<DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kS32, DType::kU32,
                                  DType::kS64, DType::kU64>;
  STABLERT_RETURN_IF_ERROR(ForEachDType(UniformDTypes{}, [&]<DType D>() {
    return r.Register<RngParams>(KernelKey("rng_uniform", {D}), &UniformKernel<D>, &PrepareRng);
  }));
  return ForEachDType(FloatDTypes{}, [&]<DType D>() {
    return r.Register<RngParams>(KernelKey("rng_normal", {D}), &NormalKernel<D>, &PrepareRng);
  });
}

}  // namespace stablert::kernels
