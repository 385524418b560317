#include "base/dtype.h"

namespace stablert {
namespace {

struct DTypeInfo {
  std::string_view name;
  DTypeKind kind;
  int bits;
};

constexpr DTypeInfo kInfo[] = {
#define STABLERT_DTYPE_INFO(name, value, text, kind, bits) {text, DTypeKind::kind, bits},
    STABLERT_DTYPES(STABLERT_DTYPE_INFO)
#undef STABLERT_DTYPE_INFO
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == kNumDTypes, "dtype table incomplete");

#define STABLERT_DTYPE_ORDER(name, value, text, kind, bits) \
  static_assert(static_cast<int>(DType::name) == value);
STABLERT_DTYPES(STABLERT_DTYPE_ORDER)
#undef STABLERT_DTYPE_ORDER

const DTypeInfo& Info(DType dtype) {
  int index = static_cast<int>(dtype);
  return kInfo[index < kNumDTypes ? index : 0];
}

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
DTypeKind DTypeKindOf(DType dtype) { return Info(dtype).kind; }
int DTypeBitWidth(DType dtype) { return Info(dtype).bits; }

int DTypeByteSize(DType dtype) {
  int bits = Info(dtype).bits;
  if (bits == 0) return 0;
  return bits < 8 ? 1 : bits / 8;
}

std::optional<DType> DTypeFromOrdinal(int ordinal) {
  if (ordinal <= 0 || ordinal >= kNumDTypes) return std::nullopt;
  return static_cast<DType>(ordinal);
}

bool IsFloat(DType dtype) { return DTypeKindOf(dtype) == DTypeKind::kFloat; }
bool IsInteger(DType dtype) {
  DTypeKind kind = DTypeKindOf(dtype);
  return kind == DTypeKind::kSigned || kind == DTypeKind::kUnsigned;
}
bool IsComplex(DType dtype) { return DTypeKindOf(dtype) == DTypeKind::kComplex; }

}  // namespace stablert
