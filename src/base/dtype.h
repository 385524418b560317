// Element types. The numbering equals PJRT_Buffer_Type so the C API converts by value
// (capi/ static_asserts this); everything else refers to dtypes by name only.
// All functions here are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stablert {

#define STABLERT_DTYPES(X)                 \
  X(kInvalid, 0, "invalid", kOther, 0)     \
  X(kPred, 1, "i1", kBool, 8)              \
  X(kS8, 2, "i8", kSigned, 8)              \
  X(kS16, 3, "i16", kSigned, 16)           \
  X(kS32, 4, "i32", kSigned, 32)           \
  X(kS64, 5, "i64", kSigned, 64)           \
  X(kU8, 6, "ui8", kUnsigned, 8)           \
  X(kU16, 7, "ui16", kUnsigned, 16)        \
  X(kU32, 8, "ui32", kUnsigned, 32)        \
  X(kU64, 9, "ui64", kUnsigned, 64)        \
  X(kF16, 10, "f16", kFloat, 16)           \
  X(kF32, 11, "f32", kFloat, 32)           \
  X(kF64, 12, "f64", kFloat, 64)           \
  X(kBF16, 13, "bf16", kFloat, 16)         \
  X(kC64, 14, "complex<f32>", kComplex, 64) \
  X(kC128, 15, "complex<f64>", kComplex, 128) \
  X(kF8E5M2, 16, "f8E5M2", kFloat, 8)      \
  X(kF8E4M3FN, 17, "f8E4M3FN", kFloat, 8)  \
  X(kF8E4M3B11FNUZ, 18, "f8E4M3B11FNUZ", kFloat, 8) \
  X(kF8E5M2FNUZ, 19, "f8E5M2FNUZ", kFloat, 8) \
  X(kF8E4M3FNUZ, 20, "f8E4M3FNUZ", kFloat, 8) \
  X(kS4, 21, "i4", kSigned, 4)             \
  X(kU4, 22, "ui4", kUnsigned, 4)          \
  X(kToken, 23, "token", kOther, 0)        \
  X(kS2, 24, "i2", kSigned, 2)             \
  X(kU2, 25, "ui2", kUnsigned, 2)          \
  X(kF8E4M3, 26, "f8E4M3", kFloat, 8)      \
  X(kF8E3M4, 27, "f8E3M4", kFloat, 8)      \
  X(kF8E8M0FNU, 28, "f8E8M0FNU", kFloat, 8) \
  X(kF4E2M1FN, 29, "f4E2M1FN", kFloat, 4)  \
  X(kS1, 30, "si1", kSigned, 1)            \
  X(kU1, 31, "ui1", kUnsigned, 1)          \
  X(kF6E2M3FN, 32, "f6E2M3FN", kFloat, 6)  \
  X(kF6E3M2FN, 33, "f6E3M2FN", kFloat, 6)

enum class DType : uint8_t {
#define STABLERT_DTYPE_ENUM(name, value, text, kind, bits) name = value,
  STABLERT_DTYPES(STABLERT_DTYPE_ENUM)
#undef STABLERT_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 34;

enum class DTypeKind : uint8_t { kOther, kBool, kSigned, kUnsigned, kFloat, kComplex };

// Name as StableHLO prints it ("f32", "ui8", "i1", "complex<f32>").
std::string_view DTypeName(DType dtype);
DTypeKind DTypeKindOf(DType dtype);
// Width of one element in bits as stored logically (i4 = 4, pred = 8).
int DTypeBitWidth(DType dtype);
// Bytes one element occupies in a dense, unpacked StableRT buffer: sub-byte types take one
// byte per element (as XLA's CPU backend and JAX's host arrays do). 0 for token/invalid.
int DTypeByteSize(DType dtype);
// The dtype with this PJRT_Buffer_Type ordinal, if any.
std::optional<DType> DTypeFromOrdinal(int ordinal);
bool IsFloat(DType dtype);
bool IsInteger(DType dtype);  // signed or unsigned, not bool
bool IsComplex(DType dtype);

}  // namespace stablert
