// convert kernels: "convert.<From>.<To>" for every pair of supported dtypes.
//
// Semantics follow XLA's CPU backend: float -> integer truncates toward zero, saturates at
// the target's range and maps NaN to 0; anything -> i1 is "!= 0" (NaN -> true); i1 -> x is
// 0 or 1; integer -> integer wraps (to sub-byte types too, which floats saturate at their
// range like other integers); conversions to f16/bf16 go through f32 (as XLA does)
// and round to nearest even. Complex: a real value becomes (value, 0); a complex value
// converts to a real type through its real part (as JAX's convert_element_type does);
// complex -> complex converts each part.
//
// The kernels are splittable (each call of a split step converts its ShareOf the elements);
// f32 <-> bf16/f16/s32/f64 and f64 -> f32 run on the host's vector ISA
// (simd/convert_simd.h, bit-identical to ConvertOne).
//
// An i1 element is stored as a byte that holds 0 or 1 unless the buffer came from the host
// holding other bytes (numpy bool arrays made by viewing other data). i1 -> ui8 copies the
// byte, as XLA's CPU backend does: JAX lowers `x.view(...)` of a bool array to this convert
// followed by bitcast_convert, so the view shows the stored bytes, as numpy's view does.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_program.h"
#include "kernels/simd/convert_simd.h"

namespace stablert::kernels {
namespace {

template <typename I, typename F>
inline I FloatToInt(F x) {
  if (std::isnan(x)) return 0;
  // The limits as F: min is a power of two (exact); max + 1 is a power of two (exact).
  constexpr F kMin = static_cast<F>(std::numeric_limits<I>::min());
  constexpr F kMaxPlusOne = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
  if (x <= kMin) return std::numeric_limits<I>::min();
  if (x >= kMaxPlusOne) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

template <DType D>
constexpr DType PartDType() {
  return D == DType::kC64 ? DType::kF32 : DType::kF64;
}

// A sub-byte integer's byte holds its two's complement bits in the low bits, the others
// zero (as ml_dtypes stores them); readers ignore the high bits.
template <DType D>
inline Storage<D> WrapToNarrow(uint64_t bits) {
  return static_cast<Storage<D>>(bits & ((uint64_t{1} << kNarrowIntBits<D>) - 1));
}

// The value of a sub-byte integer's byte: its low bits, sign-extended if D is signed.
template <DType D>
inline int64_t DecodeNarrow(Storage<D> x) {
  constexpr int kBits = kNarrowIntBits<D>;
  const uint64_t low = static_cast<uint64_t>(static_cast<uint8_t>(x)) & ((uint64_t{1} << kBits) - 1);
  if constexpr (kNarrowIntSigned<D>) {
    const uint64_t sign = uint64_t{1} << (kBits - 1);
    return static_cast<int64_t>(low ^ sign) - static_cast<int64_t>(sign);
  } else {
    return static_cast<int64_t>(low);
  }
}

template <DType From, DType To>
inline Storage<To> ConvertOne(Storage<From> x) {
  using S = Storage<From>;
  using T = Storage<To>;
  if constexpr (kNarrowIntBits<From> > 0) {
    constexpr DType kWide = kNarrowIntSigned<From> ? DType::kS8 : DType::kU8;
    return ConvertOne<kWide, To>(static_cast<Storage<kWide>>(DecodeNarrow<From>(x)));
  } else if constexpr (kNarrowIntBits<To> > 0) {
    // To a sub-byte integer: floats truncate and saturate at its range (NaN -> 0), as for
    // the other integer types; integers wrap.
    constexpr int kBits = kNarrowIntBits<To>;
    constexpr int64_t kMin = kNarrowIntSigned<To> ? -(int64_t{1} << (kBits - 1)) : 0;
    constexpr int64_t kMax = kNarrowIntSigned<To> ? (int64_t{1} << (kBits - 1)) - 1 : (int64_t{1} << kBits) - 1;
    if constexpr (kIsComplex<S>) {
      return ConvertOne<PartDType<From>(), To>(x.real());
    } else if constexpr (From == DType::kPred) {
      return static_cast<T>(x != 0 ? 1 : 0);
    } else if constexpr (kIsMinifloat<S>) {
      // Saturating at the narrow range as the narrow float rounds its limits (XLA).
      const MinifloatFormat format = MinifloatFormatOf(From);
      const float value = Load(x);
      if (std::isnan(value)) return static_cast<T>(0);
      const float high = MinifloatToFloat(format, MinifloatFromDouble(format, static_cast<double>(kMax)));
      const float low = MinifloatToFloat(format, MinifloatFromDouble(format, static_cast<double>(kMin)));
      const int64_t v = !std::isnan(high) && value >= high ? kMax
                        : !std::isnan(low) && value <= low ? kMin
                                                           : static_cast<int64_t>(value);
      return WrapToNarrow<To>(static_cast<uint64_t>(v < kMin ? kMin : v > kMax ? kMax : v));
    } else if constexpr (IsFloatStorage<S>()) {
      const int64_t v = FloatToInt<int64_t>(Load(x));
      return WrapToNarrow<To>(static_cast<uint64_t>(v < kMin ? kMin : v > kMax ? kMax : v));
    } else {
      return WrapToNarrow<To>(static_cast<uint64_t>(x));
    }
  } else if constexpr (kIsMinifloat<T> && !kIsComplex<S>) {
    // Rounded once, from the source's exact value.
    if constexpr (From == DType::kPred) return StoreAs<T>(x != 0 ? 1.0f : 0.0f);
    else if constexpr (std::is_same_v<S, double>) return T{MinifloatFromDouble(MinifloatFormatOf(To), x)};
    else if constexpr (IsFloatStorage<S>())
      return T{MinifloatFromDouble(MinifloatFormatOf(To), ExactDouble(Load(x)), /*e8m0_underflow=*/0)};
    else return T{MinifloatFromDouble(MinifloatFormatOf(To), static_cast<double>(x), /*e8m0_underflow=*/0)};
  } else if constexpr (kIsMinifloat<S> && std::is_integral_v<T> && From != DType::kPred && To != DType::kPred) {
    return MinifloatToInt<T>(MinifloatFormatOf(From), Load(x));
  } else if constexpr (kIsComplex<S> && kIsComplex<T>) {
    return T(static_cast<Part<T>>(x.real()), static_cast<Part<T>>(x.imag()));
  } else if constexpr (kIsComplex<S>) {
    return ConvertOne<PartDType<From>(), To>(x.real());
  } else if constexpr (kIsComplex<T>) {
    return T(ConvertOne<From, PartDType<To>()>(x), Part<T>(0));
  } else if constexpr (To == DType::kPred && kIsHalf<S>) {
    return (x.bits & 0x7fffu) != 0 ? 1 : 0;  // on the bits, as XLA does: denormals count
  } else if constexpr (To == DType::kPred) {
    return Load(x) != 0 ? 1 : 0;
  } else if constexpr (From == DType::kPred && To == DType::kU8) {
    return x;  // the stored byte (see the header)
  } else if constexpr (From == DType::kPred) {
    return StoreAs<T>(static_cast<Compute<T>>(x != 0 ? 1 : 0));
  } else if constexpr (IsFloatStorage<S>() && std::is_integral_v<T>) {
    return FloatToInt<T>(Load(x));
  } else if constexpr (kIsHalf<T>) {
    return StoreAs<T>(static_cast<float>(Load(x)));
  } else if constexpr (kIsMinifloat<S> && std::is_same_v<T, double>) {
    return ExactDouble(Load(x));  // f8E8M0FNU's 2^-127 is a subnormal float
  } else {
    return static_cast<T>(Load(x));
  }
}

// The vector conversion of (From, To), if there is one: converts n elements, returns true.
template <DType From, DType To>
inline bool VectorConvert(const Storage<From>* in, Storage<To>* out, int64_t n) {
  constexpr DType F32 = DType::kF32;
  if constexpr (From == F32 && To == DType::kBF16) simd::F32ToBF16(in, &out->bits, n);
  else if constexpr (From == DType::kBF16 && To == F32) simd::BF16ToF32(&in->bits, out, n);
  else if constexpr (From == F32 && To == DType::kF16) simd::F32ToF16(in, &out->bits, n);
  else if constexpr (From == DType::kF16 && To == F32) simd::F16ToF32(&in->bits, out, n);
  else if constexpr (From == F32 && To == DType::kS32) simd::F32ToS32(in, out, n);
  else if constexpr (From == DType::kS32 && To == F32) simd::S32ToF32(in, out, n);
  else if constexpr (From == DType::kF64 && To == F32) simd::F64ToF32(in, out, n);
  else if constexpr (From == F32 && To == DType::kF64) simd::F32ToF64(in, out, n);
  else return false;
  return true;
}

template <DType From, DType To>
void ConvertTile(const void* const* inputs, void* output, int64_t n, const void*) {
  const auto* in = static_cast<const Storage<From>*>(inputs[0]);
  auto* out = static_cast<Storage<To>*>(output);
  if (n <= 0 || VectorConvert<From, To>(in, out, n)) return;
  for (int64_t i = 0; i < n; ++i) out[i] = ConvertOne<From, To>(in[i]);
}

template <DType From, DType To>
void ConvertScalar(ScalarSlot* r, const ScalarInstruction& i) {
  SetSlot(r[i.dst], ConvertOne<From, To>(GetSlot<Storage<From>>(r[i.a])));
}

}  // namespace

Status RegisterConvertKernels(KernelRegistry& r) {
  return ForEachDType(MovableDTypes{}, [&]<DType From>() {
    return ForEachDType(MovableDTypes{}, [&]<DType To>() {
      STABLERT_RETURN_IF_ERROR(r.RegisterElementwiseTile<&ConvertTile<From, To>>(KernelKey("convert", {From, To})));
      return r.RegisterScalar(KernelKey("convert", {From, To}),
                              reinterpret_cast<KernelRegistry::ScalarFnPtr>(&ConvertScalar<From, To>));
    });
  });
}

}  // namespace stablert::kernels
