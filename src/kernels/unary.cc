// Elementwise unary kernels: "<op>.<T>", out[i] = op(in[i]).
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/scalar_program.h"
#include "kernels/simd/convert_simd.h"
#include "kernels/simd/unary_simd.h"

namespace stablert::kernels {
namespace {

using namespace ops;  // NOLINT

template <typename Op, DType D, DType Out>
void UnaryTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  using O = Storage<Out>;
  const T* in = static_cast<const T*>(inputs[0]);
  O* out = static_cast<O*>(output);
  if constexpr (kIsHalf<T> || kIsHalf<O>) {
    for (int64_t i = 0; i < n; ++i) out[i] = StoreAs<O>(Op::Apply(Load(in[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(Op::Apply(in[i]));
  }
}

// The vector function of an op, where there is one (simd/unary_simd.h) and it is as
// accurate as XLA's CPU backend (docs/benchmarks.md, "Vector math"). f64 sin, cos and log
// stay on libm (Highway's: 2.5, 2.5 and 0.8 ulp; XLA's: 0.52, 0.51, 0.52), and so do the
// functions with only an f32 approximation of our own (cbrt, tan, erf, ...); see kVectorFor.
template <typename Op> constexpr int kVector = -1;
template <> constexpr int kVector<ExpOp> = static_cast<int>(simd::UnaryFn::kExp);
template <> constexpr int kVector<Expm1Op> = static_cast<int>(simd::UnaryFn::kExpm1);
template <> constexpr int kVector<LogOp> = static_cast<int>(simd::UnaryFn::kLog);
template <> constexpr int kVector<Log1pOp> = static_cast<int>(simd::UnaryFn::kLog1p);
template <> constexpr int kVector<TanhOp> = static_cast<int>(simd::UnaryFn::kTanh);
template <> constexpr int kVector<LogisticOp> = static_cast<int>(simd::UnaryFn::kLogistic);
template <> constexpr int kVector<SineOp> = static_cast<int>(simd::UnaryFn::kSin);
template <> constexpr int kVector<CosineOp> = static_cast<int>(simd::UnaryFn::kCos);
template <> constexpr int kVector<SqrtOp> = static_cast<int>(simd::UnaryFn::kSqrt);
template <> constexpr int kVector<RsqrtOp> = static_cast<int>(simd::UnaryFn::kRsqrt);
template <> constexpr int kVector<CbrtOp> = static_cast<int>(simd::UnaryFn::kCbrt);
template <> constexpr int kVector<TanOp> = static_cast<int>(simd::UnaryFn::kTan);
template <> constexpr int kVector<ErfOp> = static_cast<int>(simd::UnaryFn::kErf);
template <> constexpr int kVector<ErfInvOp> = static_cast<int>(simd::UnaryFn::kErfInv);
template <> constexpr int kVector<LgammaOp> = static_cast<int>(simd::UnaryFn::kLgamma);
template <> constexpr int kVector<DigammaOp> = static_cast<int>(simd::UnaryFn::kDigamma);

// Ops whose f64 vector function is used (the rest run the scalar op on f64).
template <typename Op>
constexpr bool kVectorF64 = kVector<Op> >= 0 && kVector<Op> < static_cast<int>(simd::UnaryFn::kCbrt) &&
                            !std::is_same_v<Op, LogOp> && !std::is_same_v<Op, SineOp> &&
                            !std::is_same_v<Op, CosineOp>;

template <typename Op, DType D>
constexpr bool kVectorFor = kVector<Op> >= 0 && (D == DType::kF32 || D == DType::kF16 || D == DType::kBF16 ||
                                                 (D == DType::kF64 && kVectorF64<Op>));

// Float ops with a vector function run on the host's vector ISA.
template <typename Op, DType D>
void UnaryVectorTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  const T* in = static_cast<const T*>(inputs[0]);
  T* out = static_cast<T*>(output);
  const auto fn = static_cast<simd::UnaryFn>(kVector<Op>);
  if constexpr (kIsHalf<T>) {
    // f16/bf16: computed in f32 lanes (as the scalar ops compute them in float), a block
    // at a time through a buffer that stays in L1, widened and rounded by the vector
    // conversions (bit-identical to Load / StoreAs).
    constexpr int64_t kBlock = 512;
    float buffer[kBlock];
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t count = std::min(kBlock, n - i);
      const auto* bits = reinterpret_cast<const uint16_t*>(in + i);
      auto* out_bits = reinterpret_cast<uint16_t*>(out + i);
      if constexpr (std::is_same_v<T, BF16>) simd::BF16ToF32(bits, buffer, count);
      else simd::F16ToF32(bits, buffer, count);
      simd::Unary(fn, buffer, buffer, static_cast<size_t>(count));
      if constexpr (std::is_same_v<T, BF16>) simd::F32ToBF16(buffer, out_bits, count);
      else simd::F32ToF16(buffer, out_bits, count);
    }
  } else if (n > 0) {
    simd::Unary(fn, in, out, static_cast<size_t>(n));
  }
}

// The scalar function computes what the kernel computes for one element: ops with a vector
// function call it on that element (its lanes are independent, so one element gives the
// bits it gets among others).
template <typename Op, DType D, DType Out>
void UnaryScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  using O = Storage<Out>;
  const T x = GetSlot<T>(r[i.a]);
  if constexpr (kVectorFor<Op, D>) {
    const auto fn = static_cast<simd::UnaryFn>(kVector<Op>);
    if constexpr (kIsHalf<T>) {
      float value = Load(x);
      simd::Unary(fn, &value, &value, 1);
      SetSlot(r[i.dst], StoreAs<T>(value));
    } else {
      T value = x;
      simd::Unary(fn, &value, &value, 1);
      SetSlot(r[i.dst], value);
    }
  } else if constexpr (kIsHalf<T> || kIsHalf<O>) {
    SetSlot(r[i.dst], StoreAs<O>(Op::Apply(Load(x))));
  } else {
    SetSlot(r[i.dst], static_cast<O>(Op::Apply(x)));
  }
}

template <typename Op, bool kPredOut = false, DType... Ds>
Status Register(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() {
    constexpr DType kOut = kPredOut ? DType::kPred : D;
    if constexpr (kVectorFor<Op, D>) {
      STABLERT_RETURN_IF_ERROR(registry.RegisterElementwiseTile<&UnaryVectorTile<Op, D>>(KernelKey(name, {D})));
    } else {
      STABLERT_RETURN_IF_ERROR(registry.RegisterElementwiseTile<&UnaryTile<Op, D, kOut>>(KernelKey(name, {D})));
    }
    return registry.RegisterScalar(KernelKey(name, {D}),
                                   reinterpret_cast<KernelRegistry::ScalarFnPtr>(&UnaryScalar<Op, D, kOut>));
  });
}

using IntAndFloatDTypes =
    DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
              DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;

}  // namespace

Status RegisterUnaryKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(Register<NegateOp>(r, "negate", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AbsOp>(r, "abs", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<SignOp>(r, "sign", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<NotOp>(r, "not", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<NotPredOp>(r, "not", DTypeList<DType::kPred>{}));
  STABLERT_RETURN_IF_ERROR(Register<PopcntOp>(r, "popcnt", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ClzOp>(r, "count_leading_zeros", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ExpOp>(r, "exponential", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<Expm1Op>(r, "exponential_minus_one", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<LogOp>(r, "log", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<Log1pOp>(r, "log_plus_one", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<SqrtOp>(r, "sqrt", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<RsqrtOp>(r, "rsqrt", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<CbrtOp>(r, "cbrt", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<TanhOp>(r, "tanh", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<LogisticOp>(r, "logistic", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<SineOp>(r, "sine", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<CosineOp>(r, "cosine", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<TanOp>(r, "tan", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<FloorOp>(r, "floor", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<CeilOp>(r, "ceil", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<RoundAfzOp>(r, "round_nearest_afz", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<RoundEvenOp>(r, "round_nearest_even", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<IsFiniteOp, true>(r, "is_finite", FloatDTypes{}));
  // chlo.erf, chlo.erf_inv, chlo.lgamma and chlo.digamma composites on these types
  // (plan/lower_elementwise.cc); f64 runs their decompositions, as XLA does.
  using F32AndHalf = DTypeList<DType::kF16, DType::kBF16, DType::kF32>;
  STABLERT_RETURN_IF_ERROR(Register<ErfOp>(r, "erf", F32AndHalf{}));
  STABLERT_RETURN_IF_ERROR(Register<ErfInvOp>(r, "erf_inv", F32AndHalf{}));
  STABLERT_RETURN_IF_ERROR(Register<LgammaOp>(r, "lgamma", F32AndHalf{}));
  STABLERT_RETURN_IF_ERROR(Register<DigammaOp>(r, "digamma", F32AndHalf{}));
  return OkStatus();
}

}  // namespace stablert::kernels
