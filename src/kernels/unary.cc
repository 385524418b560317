// Elementwise unary kernels: "<op>.<T>", out[i] = op(in[i]).
#include <bit>
#include <cmath>
#include <type_traits>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

// Each op maps a compute-typed value (float for f16/bf16) to the output's compute type.
struct NegateOp {
  template <typename C> static C Apply(C x) {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
    else return -x;
  }
};
struct AbsOp {
  template <typename C> static C Apply(C x) {
    if constexpr (std::is_unsigned_v<C>) return x;
    else if constexpr (std::is_integral_v<C>) return x < 0 ? NegateOp::Apply(x) : x;
    else return std::fabs(x);
  }
};
struct SignOp {
  template <typename C> static C Apply(C x) {
    if constexpr (std::is_unsigned_v<C>) return x != 0 ? 1 : 0;
    else if constexpr (std::is_integral_v<C>) return static_cast<C>((x > 0) - (x < 0));
    else return x > 0 ? C(1) : (x < 0 ? C(-1) : x);  // keeps +-0 and NaN
  }
};
struct NotOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(~x); }
};
struct NotPredOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(x ^ 1); }
};
struct PopcntOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(std::popcount(std::make_unsigned_t<C>(x))); }
};
struct ClzOp {
  template <typename C> static C Apply(C x) { return static_cast<C>(std::countl_zero(std::make_unsigned_t<C>(x))); }
};
#define STABLERT_FLOAT_UNARY(Name, expr) \
  struct Name {                          \
    template <typename C> static C Apply(C x) { return expr; } \
  };
STABLERT_FLOAT_UNARY(ExpOp, std::exp(x))
STABLERT_FLOAT_UNARY(Expm1Op, std::expm1(x))
STABLERT_FLOAT_UNARY(LogOp, std::log(x))
STABLERT_FLOAT_UNARY(Log1pOp, std::log1p(x))
STABLERT_FLOAT_UNARY(SqrtOp, std::sqrt(x))
STABLERT_FLOAT_UNARY(RsqrtOp, C(1) / std::sqrt(x))
STABLERT_FLOAT_UNARY(CbrtOp, std::cbrt(x))
STABLERT_FLOAT_UNARY(TanhOp, std::tanh(x))
STABLERT_FLOAT_UNARY(LogisticOp, C(1) / (C(1) + std::exp(-x)))
STABLERT_FLOAT_UNARY(SineOp, std::sin(x))
STABLERT_FLOAT_UNARY(CosineOp, std::cos(x))
STABLERT_FLOAT_UNARY(TanOp, std::tan(x))
STABLERT_FLOAT_UNARY(FloorOp, std::floor(x))
STABLERT_FLOAT_UNARY(CeilOp, std::ceil(x))
STABLERT_FLOAT_UNARY(RoundAfzOp, std::round(x))
STABLERT_FLOAT_UNARY(RoundEvenOp, std::nearbyint(x))
#undef STABLERT_FLOAT_UNARY

struct IsFiniteOp {
  template <typename C> static uint8_t Apply(C x) { return std::isfinite(x) ? 1 : 0; }
};

template <typename Op, DType D, DType Out>
Status UnaryKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  using O = Storage<Out>;
  const T* in = args.inputs[0].as<const T>();
  O* out = args.outputs[0].as<O>();
  const int64_t n = args.outputs[0].num_elements;
  if constexpr (kIsHalf<T> || kIsHalf<O>) {
    for (int64_t i = 0; i < n; ++i) out[i] = StoreAs<O>(Op::Apply(Load(in[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(Op::Apply(in[i]));
  }
  return OkStatus();
}

template <typename Op, bool kPredOut = false, DType... Ds>
Status Register(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() {
    constexpr DType kOut = kPredOut ? DType::kPred : D;
    return registry.Register(KernelKey(name, {D}), &UnaryKernel<Op, D, kOut>);
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
  return OkStatus();
}

}  // namespace stablert::kernels
