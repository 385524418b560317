// Elementwise binary kernels: "<op>.<T>", out[i] = op(a[i], b[i]).
//
// Integer semantics follow XLA's CPU backend: arithmetic wraps; x / 0 is -1 (all ones)
// and x % 0 is x; INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0; shifts by an amount
// outside [0, bits) give 0 (or the sign fill for arithmetic right shifts); a negative
// integer exponent gives 0 unless the base is 1 or -1. Float maximum/minimum propagate
// NaN and order -0 below +0. On i1, add/maximum are "or" and multiply/minimum "and".
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

template <typename C>
using Unsigned = std::make_unsigned_t<C>;

struct AddOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(Unsigned<C>(a) + Unsigned<C>(b));
    else return a + b;
  }
};
struct SubtractOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(Unsigned<C>(a) - Unsigned<C>(b));
    else return a - b;
  }
};
struct MultiplyOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      // Multiply in an unsigned type at least as wide as int so nothing promotes to a
      // signed type that could overflow.
      using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, Unsigned<C>>;
      return static_cast<C>(static_cast<W>(static_cast<Unsigned<C>>(a)) * static_cast<W>(static_cast<Unsigned<C>>(b)));
    } else {
      return a * b;
    }
  }
};
struct DivideOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return a;
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
struct RemainderOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;
      }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct MaxOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return a > b ? a : b;
    } else {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return (a > b || (a == b && !std::signbit(a))) ? a : b;
    }
  }
};
struct MinOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      return a < b ? a : b;
    } else {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return (a < b || (a == b && std::signbit(a))) ? a : b;
    }
  }
};
struct PowerOp {
  template <typename C> static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (b < 0) {
          if (a == 1) return 1;
          if (a == -1) return (b & 1) ? C(-1) : C(1);
          return 0;
        }
      }
      C result = 1;
      C base = a;
      auto exponent = static_cast<Unsigned<C>>(b);
      while (exponent != 0) {
        if (exponent & 1) result = MultiplyOp::Apply(result, base);
        base = MultiplyOp::Apply(base, base);
        exponent >>= 1;
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct Atan2Op {
  template <typename C> static C Apply(C a, C b) { return std::atan2(a, b); }
};
struct AndOp {
  template <typename C> static C Apply(C a, C b) { return static_cast<C>(a & b); }
};
struct OrOp {
  template <typename C> static C Apply(C a, C b) { return static_cast<C>(a | b); }
};
struct XorOp {
  template <typename C> static C Apply(C a, C b) { return static_cast<C>(a ^ b); }
};
struct ShiftLeftOp {
  template <typename C> static C Apply(C a, C b) {
    auto amount = static_cast<Unsigned<C>>(b);
    if (amount >= sizeof(C) * 8) return 0;
    return static_cast<C>(static_cast<Unsigned<C>>(static_cast<Unsigned<C>>(a) << amount));
  }
};
struct ShiftRightLogicalOp {
  template <typename C> static C Apply(C a, C b) {
    auto amount = static_cast<Unsigned<C>>(b);
    if (amount >= sizeof(C) * 8) return 0;
    return static_cast<C>(static_cast<Unsigned<C>>(a) >> amount);
  }
};
struct ShiftRightArithmeticOp {
  template <typename C> static C Apply(C a, C b) {
    using S = std::make_signed_t<C>;
    auto amount = static_cast<Unsigned<C>>(b);
    S value = static_cast<S>(a);
    if (amount >= sizeof(C) * 8) return static_cast<C>(value < 0 ? S(-1) : S(0));
    return static_cast<C>(static_cast<S>(value >> amount));
  }
};

template <typename Op, DType D>
Status BinaryKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const T* a = args.inputs[0].as<const T>();
  const T* b = args.inputs[1].as<const T>();
  T* out = args.outputs[0].as<T>();
  const int64_t n = args.outputs[0].num_elements;
  if constexpr (kIsHalf<T>) {
    for (int64_t i = 0; i < n; ++i) out[i] = StoreAs<T>(Op::Apply(Load(a[i]), Load(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], b[i]);
  }
  return OkStatus();
}

template <typename Op, DType... Ds>
Status Register(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() { return registry.Register(KernelKey(name, {D}), &BinaryKernel<Op, D>); });
}

using Pred = DTypeList<DType::kPred>;
using IntAndFloatDTypes =
    DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
              DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;
using IntAndPredDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8,
                                   DType::kU16, DType::kU32, DType::kU64>;

}  // namespace

Status RegisterBinaryKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(Register<AddOp>(r, "add", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrOp>(r, "add", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<SubtractOp>(r, "subtract", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MultiplyOp>(r, "multiply", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndOp>(r, "multiply", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<DivideOp>(r, "divide", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<RemainderOp>(r, "remainder", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MaxOp>(r, "maximum", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MinOp>(r, "minimum", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<PowerOp>(r, "power", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<Atan2Op>(r, "atan2", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndOp>(r, "and", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrOp>(r, "or", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<XorOp>(r, "xor", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ShiftLeftOp>(r, "shift_left", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ShiftRightLogicalOp>(r, "shift_right_logical", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ShiftRightArithmeticOp>(r, "shift_right_arithmetic", IntDTypes{}));
  return OkStatus();
}

}  // namespace stablert::kernels
