#include "passes/constant_elements.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

namespace stablert::passes {
namespace {

using ir::OpCode;

// --- f16 / bf16 storage: decoded to float, rounded back to nearest even ---

constexpr int HalfMantissaBits(bool bf16) { return bf16 ? 7 : 10; }
constexpr int HalfBias(bool bf16) { return bf16 ? 127 : 15; }
constexpr uint16_t HalfInfinity(bool bf16) { return bf16 ? 0x7f80 : 0x7c00; }

// NaN for NaN patterns; subnormals decode exactly (callers reject them).
float DecodeHalf(uint16_t bits, bool bf16) {
  if (bf16) return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0x1f) value = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL;
  else if (exponent == 0) value = std::ldexp(mantissa, -24);
  else value = std::ldexp(1024 + mantissa, exponent - 25);
  return static_cast<float>(negative ? -value : value);
}

// The f16/bf16 nearest to `v` (ties to even; past the largest finite value, infinity), or
// nullopt for NaN and for nonzero values below the format's smallest normal.
std::optional<uint16_t> EncodeHalf(float v, bool bf16) {
  if (std::isnan(v)) return std::nullopt;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0) return sign;
  if (std::isinf(a)) return static_cast<uint16_t>(sign | HalfInfinity(bf16));
  const int mantissa_bits = HalfMantissaBits(bf16);
  const int min_exponent = 1 - HalfBias(bf16);  // of the smallest normal, 2^min_exponent
  if (a < std::ldexp(1.0, min_exponent)) return std::nullopt;
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const double ulp = std::ldexp(1.0, e - 1 - mantissa_bits);
  const double q = std::nearbyint(a / ulp) * ulp;  // a / ulp is exact: a scaling by 2^n
  const int max_exponent = HalfBias(bf16);         // the largest finite is (2 - ulp) 2^max_exponent
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), max_exponent);
  if (q > max_finite) return static_cast<uint16_t>(sign | HalfInfinity(bf16));
  int qe;
  const double m = std::frexp(q, &qe);  // q = m 2^qe, m in [0.5, 1)
  const auto fraction = static_cast<uint32_t>(std::ldexp(2 * m - 1, mantissa_bits));
  const auto biased = static_cast<uint32_t>(qe - 1 + HalfBias(bf16));
  return static_cast<uint16_t>(sign | (biased << mantissa_bits) | fraction);
}

// True if a float value is one the executor would flush (denormal), as an operand.
template <typename F>
bool IsDenormal(F v) {
  return v != 0 && std::fabs(v) < std::numeric_limits<F>::min();
}
// True if a float result could be flushed by the executor: a nonzero result up to the
// smallest normal (the hardware's tininess detection decides the smallest normal itself).
template <typename F>
bool MayFlush(F v) {
  return v != 0 && std::fabs(v) <= std::numeric_limits<F>::min();
}

// --- element types: storage <-> compute values, and which values may be folded ---

template <typename T>
struct IntElem {
  using C = T;
  static constexpr bool kFloat = false, kHalf = false, kPred = false;
  static C Load(const uint8_t* p) {
    C v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static bool Usable(C) { return true; }
  static bool Store(C v, uint8_t* p) {
    std::memcpy(p, &v, sizeof v);
    return true;
  }
};
struct PredElem : IntElem<uint8_t> {
  static constexpr bool kPred = true;
  static C Load(const uint8_t* p) { return *p != 0 ? 1 : 0; }
};
template <typename T>
struct FloatElem {
  using C = T;
  static constexpr bool kFloat = true, kHalf = false, kPred = false;
  static C Load(const uint8_t* p) {
    C v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static bool Usable(C v) { return !IsDenormal(v); }
  static bool Store(C v, uint8_t* p) {
    if (MayFlush(v)) return false;
    std::memcpy(p, &v, sizeof v);
    return true;
  }
};
template <bool kBF16>
struct HalfElem {
  using C = float;
  static constexpr bool kFloat = true, kHalf = true, kPred = false;
  static C Load(const uint8_t* p) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return DecodeHalf(bits, kBF16);
  }
  static bool Usable(C v) {
    return !std::isnan(v) && !(v != 0 && std::fabs(v) < std::ldexp(1.0f, 1 - HalfBias(kBF16)));
  }
  static bool Store(C v, uint8_t* p) {
    if (MayFlush(v)) return false;  // the f32 result the kernel would round
    std::optional<uint16_t> bits = EncodeHalf(v, kBF16);
    if (!bits) return false;
    std::memcpy(p, &*bits, 2);
    return true;
  }
};

// Calls fn(Elem{}) with the element traits of `dtype`; false for types not folded.
template <typename Fn>
bool WithElem(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kPred: return fn(PredElem{});
    case DType::kS8: return fn(IntElem<int8_t>{});
    case DType::kS16: return fn(IntElem<int16_t>{});
    case DType::kS32: return fn(IntElem<int32_t>{});
    case DType::kS64: return fn(IntElem<int64_t>{});
    case DType::kU8: return fn(IntElem<uint8_t>{});
    case DType::kU16: return fn(IntElem<uint16_t>{});
    case DType::kU32: return fn(IntElem<uint32_t>{});
    case DType::kU64: return fn(IntElem<uint64_t>{});
    case DType::kF32: return fn(FloatElem<float>{});
    case DType::kF64: return fn(FloatElem<double>{});
    case DType::kF16: return fn(HalfElem<false>{});
    case DType::kBF16: return fn(HalfElem<true>{});
    default: return false;
  }
}

// --- the scalar rules ---

template <typename C>
std::optional<C> Unary(OpCode code, C x, bool pred) {
  if constexpr (std::is_integral_v<C>) {
    if (pred) return code == OpCode::kNot ? std::optional<C>(static_cast<C>(x ^ 1)) : std::nullopt;
    using U = std::make_unsigned_t<C>;
    switch (code) {
      case OpCode::kNegate: return static_cast<C>(U(0) - static_cast<U>(x));
      case OpCode::kAbs:
        if constexpr (std::is_signed_v<C>) return x < 0 ? static_cast<C>(U(0) - static_cast<U>(x)) : x;
        else return x;
      case OpCode::kSign:
        if constexpr (std::is_signed_v<C>) return static_cast<C>((x > 0) - (x < 0));
        else return static_cast<C>(x != 0 ? 1 : 0);
      case OpCode::kNot: return static_cast<C>(~x);
      case OpCode::kPopcnt: return static_cast<C>(std::popcount(static_cast<U>(x)));
      case OpCode::kCountLeadingZeros: return static_cast<C>(std::countl_zero(static_cast<U>(x)));
      default: return std::nullopt;
    }
  } else {
    switch (code) {
      case OpCode::kNegate: return -x;
      case OpCode::kAbs: return std::fabs(x);
      case OpCode::kSign: return x > 0 ? C(1) : (x < 0 ? C(-1) : x);  // keeps +-0 and NaN
      case OpCode::kSqrt: return std::sqrt(x);
      case OpCode::kFloor: return std::floor(x);
      case OpCode::kCeil: return std::ceil(x);
      case OpCode::kRoundNearestAfz: return std::round(x);
      case OpCode::kRoundNearestEven: return std::nearbyint(x);
      default: return std::nullopt;
    }
  }
}

template <typename C>
C Max(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return a > b ? a : b;
  } else {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    return (a > b || (a == b && !std::signbit(a))) ? a : b;
  }
}
template <typename C>
C Min(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return a < b ? a : b;
  } else {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    return (a < b || (a == b && std::signbit(a))) ? a : b;
  }
}

template <typename C>
std::optional<C> Binary(OpCode code, C a, C b, bool pred) {
  if constexpr (std::is_integral_v<C>) {
    if (pred) {
      switch (code) {
        case OpCode::kAnd: return static_cast<C>(a & b);
        case OpCode::kOr: return static_cast<C>(a | b);
        case OpCode::kXor: return static_cast<C>(a ^ b);
        case OpCode::kMaximum: return Max(a, b);
        case OpCode::kMinimum: return Min(a, b);
        default: return std::nullopt;
      }
    }
    using U = std::make_unsigned_t<C>;
    // Unsigned arithmetic at least as wide as int, so nothing promotes to a signed type.
    using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, U>;
    const W wa = static_cast<U>(a), wb = static_cast<U>(b);
    constexpr U kBits = sizeof(C) * 8;
    switch (code) {
      case OpCode::kAdd: return static_cast<C>(wa + wb);
      case OpCode::kSubtract: return static_cast<C>(wa - wb);
      case OpCode::kMultiply: return static_cast<C>(wa * wb);
      case OpCode::kDivide:
        if (b == 0) return static_cast<C>(-1);
        if constexpr (std::is_signed_v<C>)
          if (a == std::numeric_limits<C>::min() && b == -1) return a;
        return static_cast<C>(a / b);
      case OpCode::kRemainder:
        if (b == 0) return a;
        if constexpr (std::is_signed_v<C>)
          if (b == -1) return C(0);
        return static_cast<C>(a % b);
      case OpCode::kMaximum: return Max(a, b);
      case OpCode::kMinimum: return Min(a, b);
      case OpCode::kAnd: return static_cast<C>(a & b);
      case OpCode::kOr: return static_cast<C>(a | b);
      case OpCode::kXor: return static_cast<C>(a ^ b);
      case OpCode::kShiftLeft:
        if (static_cast<U>(b) >= kBits) return C(0);
        return static_cast<C>(wa << static_cast<U>(b));
      case OpCode::kShiftRightLogical:
        if (static_cast<U>(b) >= kBits) return C(0);
        return static_cast<C>(static_cast<U>(a) >> static_cast<U>(b));
      case OpCode::kShiftRightArithmetic: {
        using S = std::make_signed_t<C>;
        const auto value = static_cast<S>(a);
        if (static_cast<U>(b) >= kBits) return static_cast<C>(value < 0 ? S(-1) : S(0));
        return static_cast<C>(static_cast<S>(value >> static_cast<U>(b)));
      }
      case OpCode::kPower: {
        if constexpr (std::is_signed_v<C>) {
          if (b < 0) return a == 1 ? C(1) : a == -1 ? ((b & 1) ? C(-1) : C(1)) : C(0);
        }
        W result = 1, base = wa;
        for (U exponent = static_cast<U>(b); exponent != 0; exponent >>= 1) {
          if (exponent & 1) result = static_cast<U>(result * base);
          base = static_cast<U>(base * base);
        }
        return static_cast<C>(result);
      }
      default: return std::nullopt;
    }
  } else {
    switch (code) {
      case OpCode::kAdd: return a + b;
      case OpCode::kSubtract: return a - b;
      case OpCode::kMultiply: return a * b;
      case OpCode::kDivide: return a / b;
      case OpCode::kRemainder: return std::fmod(a, b);
      case OpCode::kMaximum: return Max(a, b);
      case OpCode::kMinimum: return Min(a, b);
      default: return std::nullopt;
    }
  }
}

// A signed integer ordered as the IEEE total order of the float value.
template <typename F>
auto TotalOrderKey(F v) {
  using I = std::conditional_t<sizeof(F) == 8, int64_t, int32_t>;
  using U = std::make_unsigned_t<I>;
  const I bits = std::bit_cast<I>(v);
  return static_cast<I>(bits ^ static_cast<I>(static_cast<U>(bits >> (sizeof(F) * 8 - 1)) >> 1));
}

// compare direction (VHLO numbering: EQ NE GE GT LE LT = 0..5).
template <typename T>
uint8_t Compare(T a, T b, int64_t direction) {
  switch (direction) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a >= b;
    case 3: return a > b;
    case 4: return a <= b;
    default: return a < b;
  }
}

const uint8_t* At(const ir::ElementsData* data, int64_t i) {
  return data->Element(data->NumElements() == 1 ? 0 : i);
}

int ElementSize(DType dtype) { return DTypeByteSize(dtype); }

// --- convert: decoded to one of three kinds of value, encoded to the result type ---

struct Value {
  enum class Kind { kSigned, kUnsigned, kFloat } kind;
  int64_t s = 0;
  uint64_t u = 0;
  double f = 0;
  bool from_f64 = false;
};

template <typename I>
I FloatToInt(double x) {
  if (std::isnan(x)) return 0;
  const auto lowest = static_cast<double>(std::numeric_limits<I>::min());
  const double max_plus_one = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  if (x <= lowest) return std::numeric_limits<I>::min();
  if (x >= max_plus_one) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

bool Convert(DType from, DType to, const uint8_t* in, uint8_t* out) {
  Value value{};
  const bool decoded = WithElem(from, [&]<typename E>(E) {
    const typename E::C x = E::Load(in);
    if (!E::Usable(x)) return false;
    if constexpr (E::kFloat) {
      value.kind = Value::Kind::kFloat;
      value.f = static_cast<double>(x);
      value.from_f64 = std::is_same_v<typename E::C, double>;
    } else if constexpr (std::is_signed_v<typename E::C>) {
      value.kind = Value::Kind::kSigned;
      value.s = x;
    } else {
      value.kind = Value::Kind::kUnsigned;
      value.u = x;
    }
    return true;
  });
  if (!decoded) return false;
  return WithElem(to, [&]<typename E>(E) {
    using C = typename E::C;
    if constexpr (E::kPred) {
      const bool nonzero = value.kind == Value::Kind::kFloat    ? value.f != 0
                           : value.kind == Value::Kind::kSigned ? value.s != 0
                                                                : value.u != 0;
      return E::Store(nonzero ? 1 : 0, out);
    } else if constexpr (!E::kFloat) {
      if (value.kind == Value::Kind::kFloat) return E::Store(FloatToInt<C>(value.f), out);
      return E::Store(value.kind == Value::Kind::kSigned ? static_cast<C>(value.s) : static_cast<C>(value.u), out);
    } else {
      // Integers convert in one rounding, straight from their own type; to f16/bf16 the
      // runtime goes through f32, which is exact only up to 2^24.
      C result;
      if (value.kind == Value::Kind::kSigned) {
        if (E::kHalf && (value.s > (1 << 24) || value.s < -(1 << 24))) return false;
        result = static_cast<C>(value.s);
      } else if (value.kind == Value::Kind::kUnsigned) {
        if (E::kHalf && value.u > (1u << 24)) return false;
        result = static_cast<C>(value.u);
      } else {
        if (E::kHalf && value.from_f64) return false;
        result = static_cast<C>(value.f);  // f32 <- f64 rounds once; the others are exact
      }
      return E::Store(result, out);
    }
  });
}

}  // namespace

bool ConvertElement(DType from, DType to, const uint8_t* in, uint8_t* out) { return Convert(from, to, in, out); }

namespace {

bool IsTotalOrder(const ir::Operation& op) {
  const ir::Attribute* type = op.attr("compare_type");
  const ir::EnumValue* value = type ? type->get<ir::EnumValue>() : nullptr;
  return value != nullptr && value->value == 2;
}

}  // namespace

bool EvaluateElementwise(const ir::Operation& op, const std::vector<const ir::ElementsData*>& operands,
                         DType result_dtype, int64_t count, std::vector<uint8_t>& out) {
  const int result_size = ElementSize(result_dtype);
  if (operands.empty() || result_size <= 0) return false;
  out.assign(static_cast<size_t>(count) * static_cast<size_t>(result_size), 0);
  auto out_at = [&](int64_t i) { return out.data() + static_cast<size_t>(i) * static_cast<size_t>(result_size); };
  const DType operand_dtype = operands[0]->type.dtype;
  switch (op.code) {
    case OpCode::kConvert:
      for (int64_t i = 0; i < count; ++i)
        if (!Convert(operand_dtype, result_dtype, At(operands[0], i), out_at(i))) return false;
      return true;
    case OpCode::kSelect: {
      if (operands.size() != 3 || operand_dtype != DType::kPred) return false;
      for (int64_t i = 0; i < count; ++i) {
        const ir::ElementsData* chosen = *At(operands[0], i) != 0 ? operands[1] : operands[2];
        if (chosen->type.dtype != result_dtype) return false;
        std::memcpy(out_at(i), At(chosen, i), static_cast<size_t>(result_size));
      }
      return true;
    }
    case OpCode::kCompare: {
      const ir::Attribute* attr = op.attr("comparison_direction");
      const ir::EnumValue* direction = attr ? attr->get<ir::EnumValue>() : nullptr;
      if (operands.size() != 2 || result_dtype != DType::kPred || direction == nullptr || direction->value < 0 ||
          direction->value > 5)
        return false;
      const bool total = IsTotalOrder(op);
      return WithElem(operand_dtype, [&]<typename E>(E) {
        for (int64_t i = 0; i < count; ++i) {
          const auto a = E::Load(At(operands[0], i)), b = E::Load(At(operands[1], i));
          if (!E::Usable(a) || !E::Usable(b)) return false;
          uint8_t r;
          if constexpr (E::kFloat) r = total ? Compare(TotalOrderKey(a), TotalOrderKey(b), direction->value)
                                             : Compare(a, b, direction->value);
          else r = Compare(a, b, direction->value);
          *out_at(i) = r;
        }
        return true;
      });
    }
    case OpCode::kIsFinite:
      if (result_dtype != DType::kPred) return false;
      return WithElem(operand_dtype, [&]<typename E>(E) {
        if constexpr (!E::kFloat) {
          return false;
        } else {
          for (int64_t i = 0; i < count; ++i) {
            const auto x = E::Load(At(operands[0], i));
            if (!E::Usable(x)) return false;
            *out_at(i) = std::isfinite(x) ? 1 : 0;
          }
          return true;
        }
      });
    case OpCode::kClamp:
      if (operands.size() != 3 || result_dtype == DType::kPred) return false;
      return WithElem(result_dtype, [&]<typename E>(E) {
        for (int64_t i = 0; i < count; ++i) {
          const auto lo = E::Load(At(operands[0], i)), x = E::Load(At(operands[1], i)),
                     hi = E::Load(At(operands[2], i));
          if (!E::Usable(lo) || !E::Usable(x) || !E::Usable(hi)) return false;
          if (!E::Store(Min(Max(x, lo), hi), out_at(i))) return false;
        }
        return true;
      });
    default:
      break;
  }
  const ir::OpClass op_class = ir::GetOpInfo(op.code).op_class;
  if (op_class != ir::OpClass::kUnary && op_class != ir::OpClass::kBinary) return false;
  for (const ir::ElementsData* operand : operands)
    if (operand->type.dtype != result_dtype) return false;
  return WithElem(result_dtype, [&]<typename E>(E) {
    for (int64_t i = 0; i < count; ++i) {
      std::optional<typename E::C> r;
      const auto a = E::Load(At(operands[0], i));
      if (!E::Usable(a)) return false;
      if (op_class == ir::OpClass::kUnary) {
        r = Unary(op.code, a, E::kPred);
      } else {
        const auto b = E::Load(At(operands[1], i));
        if (!E::Usable(b)) return false;
        r = Binary(op.code, a, b, E::kPred);
      }
      if (!r || !E::Store(*r, out_at(i))) return false;
    }
    return true;
  });
}

namespace {

// A finite nonzero float as m 2^k with m an odd integer: {bit width of m, k}.
template <typename F>
std::pair<int, int> OddMantissa(F v) {
  constexpr int kDigits = std::numeric_limits<F>::digits;
  int e;
  const double m = std::frexp(std::fabs(static_cast<double>(v)), &e);
  auto integer = static_cast<uint64_t>(std::ldexp(m, kDigits));
  const int zeros = std::countr_zero(integer);
  integer >>= zeros;
  return {static_cast<int>(std::bit_width(integer)), e - kDigits + zeros};
}

// True if every partial sum of the finite, normal values of each group (init +0 included)
// is exact whatever the order: all are integer multiples of one power of two 2^k no smaller
// than the smallest normal, and each group's sum of magnitudes stays below 2^digits 2^k.
template <typename F>
bool SumsExact(const std::vector<F>& values, const std::vector<int64_t>& group, int64_t outputs) {
  constexpr int kDigits = std::numeric_limits<F>::digits;
  int k = std::numeric_limits<int>::max();
  for (F v : values)
    if (v != 0) k = std::min(k, OddMantissa(v).second);
  if (k == std::numeric_limits<int>::max()) return true;  // all zeros
  if (k < std::numeric_limits<F>::min_exponent - 1 || k + kDigits > std::numeric_limits<F>::max_exponent) return false;
  std::vector<uint64_t> sums(static_cast<size_t>(outputs), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == 0) continue;
    const auto [width, exponent] = OddMantissa(values[i]);
    const int shift = exponent - k;
    if (width + shift > kDigits) return false;
    uint64_t& sum = sums[static_cast<size_t>(group[i])];
    sum += static_cast<uint64_t>(std::ldexp(std::fabs(static_cast<double>(values[i])), -k));
    if (sum >= (uint64_t{1} << kDigits)) return false;
  }
  return true;
}

// True if every partial product of each group is exact, finite and normal (or zero)
// whatever the order: the odd mantissas' widths add up to at most digits, the product of
// the factors below 1 stays at or above the smallest normal, that of the others below the
// overflow threshold.
template <typename F>
bool ProductsExact(const std::vector<F>& values, const std::vector<int64_t>& group, int64_t outputs) {
  constexpr int kDigits = std::numeric_limits<F>::digits;
  std::vector<int> widths(static_cast<size_t>(outputs), 0), low(static_cast<size_t>(outputs), 0),
      high(static_cast<size_t>(outputs), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == 0) continue;
    const auto g = static_cast<size_t>(group[i]);
    widths[g] += OddMantissa(values[i]).first;
    int e;
    std::frexp(static_cast<double>(values[i]), &e);  // |v| in [2^(e-1), 2^e)
    if (e <= 0) low[g] += e - 1;
    else high[g] += e;
    if (widths[g] > kDigits || low[g] < std::numeric_limits<F>::min_exponent - 1 ||
        high[g] > std::numeric_limits<F>::max_exponent)
      return false;
  }
  return true;
}

template <typename E>
bool ReduceTyped(OpCode body, const ir::ElementsData& input, const ir::ElementsData& init,
                 const std::vector<int64_t>& group, int64_t outputs, std::vector<uint8_t>& out) {
  using C = typename E::C;
  const C start = E::Load(init.Element(0));
  std::vector<C> values(static_cast<size_t>(input.NumElements()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = E::Load(input.Element(static_cast<int64_t>(i)));
  const bool idempotent = body == OpCode::kMaximum || body == OpCode::kMinimum || body == OpCode::kAnd ||
                          body == OpCode::kOr;
  if constexpr (E::kFloat) {
    // Finite, normal values only: NaN payloads and inf - inf would depend on the order.
    if (!std::isfinite(start) || !E::Usable(start)) return false;
    for (C v : values)
      if (!std::isfinite(v) || !E::Usable(v)) return false;
    if (body == OpCode::kAdd) {
      if (E::kHalf || std::bit_cast<std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>>(start) != 0 ||
          !SumsExact(values, group, outputs))
        return false;
    } else if (body == OpCode::kMultiply) {
      if (E::kHalf || start != 1 || !ProductsExact(values, group, outputs)) return false;
    } else if (body != OpCode::kMaximum && body != OpCode::kMinimum) {
      return false;
    }
  } else {
    using U = std::make_unsigned_t<C>;
    const U bits = static_cast<U>(start);
    const U ones = E::kPred ? U(1) : static_cast<U>(~U(0));
    const bool identity = (body == OpCode::kAdd && bits == 0) || (body == OpCode::kMultiply && bits == 1) ||
                          (body == OpCode::kAnd && bits == ones) || (body == OpCode::kOr && bits == 0);
    if (!identity && !idempotent) return false;
  }
  std::vector<C> acc(static_cast<size_t>(outputs), start);
  for (size_t i = 0; i < values.size(); ++i) {
    C& a = acc[static_cast<size_t>(group[i])];
    std::optional<C> r = Binary(body, a, values[i], E::kPred);
    if (!r) return false;
    a = *r;
  }
  const auto size = static_cast<size_t>(ElementSize(input.type.dtype));
  out.assign(static_cast<size_t>(outputs) * size, 0);
  for (size_t g = 0; g < acc.size(); ++g)
    if (!E::Store(acc[g], out.data() + g * size)) return false;
  return true;
}

}  // namespace

bool EvaluateReduce(OpCode body, const ir::ElementsData& input, const ir::ElementsData& init,
                    const std::vector<int64_t>& group, int64_t outputs, std::vector<uint8_t>& out) {
  if (input.type.dtype != init.type.dtype || init.NumElements() != 1 ||
      static_cast<int64_t>(group.size()) != input.NumElements())
    return false;
  switch (body) {
    case OpCode::kAdd: case OpCode::kMultiply: case OpCode::kMaximum: case OpCode::kMinimum:
    case OpCode::kAnd: case OpCode::kOr:
      break;
    default:
      return false;
  }
  return WithElem(input.type.dtype,
                  [&]<typename E>(E) { return ReduceTyped<E>(body, input, init, group, outputs, out); });
}

}  // namespace stablert::passes
