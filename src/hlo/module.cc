#include "hlo/module.h"

namespace stablert::hlo {

std::vector<int64_t> Shape::MinorToMajor() const {
  if (!minor_to_major.empty() || kind != Kind::kArray) return minor_to_major;
  std::vector<int64_t> order(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) order[i] = static_cast<int64_t>(dims.size() - 1 - i);
  return order;
}

std::string_view ElementTypeName(DType dtype) {
  switch (dtype) {
    case DType::kPred: return "pred";
    case DType::kS1: return "s1";
    case DType::kS2: return "s2";
    case DType::kS4: return "s4";
    case DType::kS8: return "s8";
    case DType::kS16: return "s16";
    case DType::kS32: return "s32";
    case DType::kS64: return "s64";
    case DType::kU1: return "u1";
    case DType::kU2: return "u2";
    case DType::kU4: return "u4";
    case DType::kU8: return "u8";
    case DType::kU16: return "u16";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kC64: return "c64";
    case DType::kC128: return "c128";
    case DType::kF8E5M2: return "f8e5m2";
    case DType::kF8E4M3: return "f8e4m3";
    case DType::kF8E4M3FN: return "f8e4m3fn";
    case DType::kF8E4M3B11FNUZ: return "f8e4m3b11fnuz";
    case DType::kF8E3M4: return "f8e3m4";
    case DType::kF8E5M2FNUZ: return "f8e5m2fnuz";
    case DType::kF8E4M3FNUZ: return "f8e4m3fnuz";
    case DType::kF8E8M0FNU: return "f8e8m0fnu";
    case DType::kF4E2M1FN: return "f4e2m1fn";
    case DType::kToken: return "token";
    default: return "";
  }
}

}  // namespace stablert::hlo
