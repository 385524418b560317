// Compile-time mapping from DType to the C++ types kernels store and compute with, and
// helpers to register one kernel template for a list of dtypes. Internal to kernels/.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "base/dtype.h"
#include "base/status.h"
#include "kernels/half.h"
#include "kernels/kernel.h"
#include "kernels/minifloat.h"

namespace stablert::kernels {

template <DType D>
struct StorageOf;
template <> struct StorageOf<DType::kPred> { using type = uint8_t; };  // 0 or 1
template <> struct StorageOf<DType::kS8> { using type = int8_t; };
template <> struct StorageOf<DType::kS16> { using type = int16_t; };
template <> struct StorageOf<DType::kS32> { using type = int32_t; };
template <> struct StorageOf<DType::kS64> { using type = int64_t; };
template <> struct StorageOf<DType::kU8> { using type = uint8_t; };
template <> struct StorageOf<DType::kU16> { using type = uint16_t; };
template <> struct StorageOf<DType::kU32> { using type = uint32_t; };
template <> struct StorageOf<DType::kU64> { using type = uint64_t; };
template <> struct StorageOf<DType::kF16> { using type = F16; };
template <> struct StorageOf<DType::kBF16> { using type = BF16; };
template <> struct StorageOf<DType::kF32> { using type = float; };
template <> struct StorageOf<DType::kF64> { using type = double; };
// Complex values are stored as (real, imaginary) pairs, the layout of std::complex. Kernels
// compute on the parts with the formulas of kernels/complex_ops.h, never with std::complex's
// own operators (whose NaN/inf handling differs from XLA's).
template <> struct StorageOf<DType::kC64> { using type = std::complex<float>; };
template <> struct StorageOf<DType::kC128> { using type = std::complex<double>; };
// Sub-byte integers take one byte per element holding their two's complement bits in the
// low bits, the others zero (as ml_dtypes stores them). Kernels only move and convert them;
// the plan computes on them in i8/ui8 (plan/lower_narrow.cc).
template <> struct StorageOf<DType::kS4> { using type = int8_t; };
template <> struct StorageOf<DType::kU4> { using type = uint8_t; };
template <> struct StorageOf<DType::kS2> { using type = int8_t; };
template <> struct StorageOf<DType::kU2> { using type = uint8_t; };

// The narrow floats (kernels/minifloat.h): one code per byte. Kernels move and convert
// them; the plan computes on them in f16/f32 (plan/lower_narrow.cc).
template <DType D>
struct Minifloat {
  uint8_t bits;
};
template <> struct StorageOf<DType::kF8E5M2> { using type = Minifloat<DType::kF8E5M2>; };
template <> struct StorageOf<DType::kF8E4M3FN> { using type = Minifloat<DType::kF8E4M3FN>; };
template <> struct StorageOf<DType::kF8E4M3B11FNUZ> { using type = Minifloat<DType::kF8E4M3B11FNUZ>; };
template <> struct StorageOf<DType::kF8E5M2FNUZ> { using type = Minifloat<DType::kF8E5M2FNUZ>; };
template <> struct StorageOf<DType::kF8E4M3FNUZ> { using type = Minifloat<DType::kF8E4M3FNUZ>; };
template <> struct StorageOf<DType::kF8E4M3> { using type = Minifloat<DType::kF8E4M3>; };
template <> struct StorageOf<DType::kF8E3M4> { using type = Minifloat<DType::kF8E3M4>; };
template <> struct StorageOf<DType::kF8E8M0FNU> { using type = Minifloat<DType::kF8E8M0FNU>; };
template <> struct StorageOf<DType::kF4E2M1FN> { using type = Minifloat<DType::kF4E2M1FN>; };

template <typename T>
inline constexpr bool kIsMinifloat = false;
template <DType D>
inline constexpr bool kIsMinifloat<Minifloat<D>> = true;
template <typename T>
inline constexpr DType MinifloatDType = DType::kInvalid;
template <DType D>
inline constexpr DType MinifloatDType<Minifloat<D>> = D;

// Sub-byte integer types: their bit width and signedness (0 bits for other types).
template <DType D>
inline constexpr int kNarrowIntBits = D == DType::kS4 || D == DType::kU4 ? 4 : D == DType::kS2 || D == DType::kU2 ? 2 : 0;
template <DType D>
inline constexpr bool kNarrowIntSigned = D == DType::kS4 || D == DType::kS2;

template <DType D>
using Storage = typename StorageOf<D>::type;

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;

template <typename T>
inline constexpr bool kIsComplex = false;
template <typename R>
inline constexpr bool kIsComplex<std::complex<R>> = true;

// The part type of a complex storage type (float for complex<float>), T itself otherwise.
template <typename T>
struct PartOf {
  using type = T;
};
template <typename R>
struct PartOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using Part = typename PartOf<T>::type;

template <typename T>
constexpr bool IsFloatStorage() {
  return kIsHalf<T> || kIsMinifloat<T> || std::is_floating_point_v<T>;
}

// The type arithmetic is done in: float for the 16-bit and narrower floats, the storage
// type otherwise.
template <typename T>
using Compute = std::conditional_t<kIsHalf<T> || kIsMinifloat<T>, float, T>;

template <DType D>
inline float MinifloatValue(Minifloat<D> value) {
  static const std::array<float, 256> kTable = [] {
    std::array<float, 256> table{};
    for (int code = 0; code < 256; ++code)
      table[static_cast<size_t>(code)] = MinifloatToFloat(MinifloatFormatOf(D), static_cast<uint8_t>(code));
    return table;
  }();
  return kTable[value.bits];
}

template <typename T>
inline Compute<T> Load(T value) {
  if constexpr (std::is_same_v<T, F16>) return F16ToFloat(value);
  else if constexpr (std::is_same_v<T, BF16>) return BF16ToFloat(value);
  else if constexpr (kIsMinifloat<T>) return MinifloatValue(value);
  else return value;
}

template <typename T>
inline T StoreAs(Compute<T> value) {
  if constexpr (std::is_same_v<T, F16>) return FloatToF16(value);
  else if constexpr (std::is_same_v<T, BF16>) return FloatToBF16(value);
  else if constexpr (kIsMinifloat<T>) return T{MinifloatFromDouble(MinifloatFormatOf(MinifloatDType<T>), value)};
  else return value;
}

// An unsigned word of N bytes, for kernels that only move elements (1, 2, 4, 8 or 16).
struct Word128 {
  uint64_t low, high;
};
template <int kBytes>
struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };
template <> struct WordOf<16> { using type = Word128; };
template <int kBytes>
using WordType = typename WordOf<kBytes>::type;

template <DType... Ds>
struct DTypeList {};

using IntDTypes = DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8,
                            DType::kU16, DType::kU32, DType::kU64>;
using SignedDTypes = DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64>;
using FloatDTypes = DTypeList<DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;
using AllDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64,
                            DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kF16,
                            DType::kBF16, DType::kF32, DType::kF64>;
using ComplexDTypes = DTypeList<DType::kC64, DType::kC128>;
// Every dtype with a storage type: for kernels that only move or compare bytes.
using MovableDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64,
                                DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kF16,
                                DType::kBF16, DType::kF32, DType::kF64, DType::kC64, DType::kC128,
                                DType::kS4, DType::kU4, DType::kS2, DType::kU2, DType::kF8E5M2,
                                DType::kF8E4M3FN, DType::kF8E4M3B11FNUZ, DType::kF8E5M2FNUZ,
                                DType::kF8E4M3FNUZ, DType::kF8E4M3, DType::kF8E3M4, DType::kF8E8M0FNU,
                                DType::kF4E2M1FN>;

// Calls fn.template operator()<D>() for each D in the list, stopping at the first error.
template <typename Fn, DType... Ds>
Status ForEachDType(DTypeList<Ds...>, Fn&& fn) {
  Status status;
  ((status.ok() ? (void)(status = fn.template operator()<Ds>()) : (void)0), ...);
  return status;
}

}  // namespace stablert::kernels
