// reduce_precision: "reduce_precision.<T>" for f16, bf16, f32, f64.
//   params: ReducePrecisionParams (exponent_bits, mantissa_bits)
// Rounds each value to the nearest value (ties to even) with that many mantissa bits, then
// to infinity if its exponent exceeds the reduced range and to a signed zero if it falls
// below the reduced range's normal numbers, computed on the value's own bits as XLA does.
// NaN stays NaN (as XLA keeps it, even with no mantissa bits).
#include <cstring>
#include <type_traits>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/reduce_precision_params.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

template <typename Bits, int kExponent, int kMantissa>
Bits Reduce(Bits x, int exponent_bits, int mantissa_bits) {
  constexpr int kWidth = static_cast<int>(sizeof(Bits) * 8);
  constexpr Bits kExponentMask = static_cast<Bits>(((Bits{1} << kExponent) - 1) << kMantissa);
  constexpr Bits kMantissaMask = static_cast<Bits>((Bits{1} << kMantissa) - 1);
  const bool is_nan = (x & kExponentMask) == kExponentMask && (x & kMantissaMask) != 0;
  Bits rounded = x;
  if (mantissa_bits < kMantissa) {
    const int shift = kMantissa - mantissa_bits;
    const Bits last_bit_mask = static_cast<Bits>(Bits{1} << shift);
    const Bits base_bias = static_cast<Bits>((last_bit_mask >> 1) - 1);
    const Bits last_bit = static_cast<Bits>((rounded & last_bit_mask) >> shift);
    const Bits truncation_mask = static_cast<Bits>(~(last_bit_mask - 1));
    rounded = static_cast<Bits>((rounded + last_bit + base_bias) & truncation_mask);
  }
  if (exponent_bits < kExponent) {
    const Bits sign_mask = static_cast<Bits>(Bits{1} << (kWidth - 1));
    const int64_t bias = (int64_t{1} << (kExponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const Bits max_exponent = static_cast<Bits>(static_cast<Bits>(bias + reduced_bias) << kMantissa);
    const Bits min_exponent = static_cast<Bits>(static_cast<Bits>(bias - reduced_bias) << kMantissa);
    const Bits exponent = static_cast<Bits>(rounded & kExponentMask);
    const Bits signed_zero = static_cast<Bits>(rounded & sign_mask);
    if (exponent > max_exponent) rounded = static_cast<Bits>(signed_zero | kExponentMask);
    else if (exponent <= min_exponent) rounded = signed_zero;
  }
  if (is_nan) return x;
  return rounded;
}

template <DType D>
Status ReducePrecisionKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  constexpr int kExponent = D == DType::kF16 ? 5 : D == DType::kF64 ? 11 : 8;
  constexpr int kMantissa = D == DType::kF16 ? 10 : D == DType::kBF16 ? 7 : D == DType::kF32 ? 23 : 52;
  const ReducePrecisionParams& params = args.Params<ReducePrecisionParams>();
  const int exponent_bits = static_cast<int>(params.exponent_bits);
  const int mantissa_bits = static_cast<int>(params.mantissa_bits);
  const auto* in = static_cast<const uint8_t*>(args.inputs[0].data);
  auto* out = static_cast<uint8_t*>(args.outputs[0].data);
  for (int64_t i = 0; i < args.outputs[0].num_elements; ++i) {
    Bits x;
    std::memcpy(&x, in + i * sizeof(Bits), sizeof(Bits));
    x = Reduce<Bits, kExponent, kMantissa>(x, exponent_bits, mantissa_bits);
    std::memcpy(out + i * sizeof(Bits), &x, sizeof(Bits));
  }
  return OkStatus();
}

}  // namespace

Status RegisterReducePrecisionKernels(KernelRegistry& r) {
  return ForEachDType(FloatDTypes{}, [&]<DType D>() {
    return r.Register<ReducePrecisionParams>(KernelKey("reduce_precision", {D}), &ReducePrecisionKernel<D>);
  });
}

}  // namespace stablert::kernels
