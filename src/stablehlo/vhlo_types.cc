// VHLO type entries (codes from the VHLO bytecode table) and the builtin types that
// mixed artifacts carry.
#include <limits>

#include "stablehlo/entry_decoder.h"

namespace stablert::stablehlo {
namespace {

DecodedType Element(DType dtype) {
  DecodedType t;
  t.kind = DecodedType::Kind::kElement;
  t.element = dtype;
  return t;
}

DecodedType Value(ir::Type type) {
  DecodedType t;
  t.kind = DecodedType::Kind::kValue;
  t.value = std::move(type);
  return t;
}

Status ReadShape(Cursor& c, Dims* dims) {
  uint64_t rank;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &rank, "tensor rank"));
  dims->resize(rank);
  for (int64_t& d : *dims) STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&d, "tensor dimension"));
  return OkStatus();
}

Status CheckStatic(const Cursor& c, const Dims& dims, DType element) {
  for (int64_t d : dims) {
    if (d < 0) {
      std::string shape;
      for (int64_t x : dims) shape += (x < 0 ? std::string("?") : std::to_string(x)) + "x";
      return Unimplemented("dynamic tensor type tensor<" + shape + std::string(DTypeName(element)) +
                           "> (" + std::string(c.where()) +
                           ") is not supported: StableRT needs static shapes");
    }
  }
  return OkStatus();
}

StatusOr<DecodedType> FunctionType(EntryDecoder& d, Cursor& c) {
  DecodedType t;
  t.kind = DecodedType::Kind::kFunction;
  for (std::vector<ir::Type>* list : {&t.inputs, &t.outputs}) {
    uint64_t count;
    STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "function type arity"));
    list->reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      STABLERT_ASSIGN_OR_RETURN(ir::Type type, d.ReadValueType(c, "function type element"));
      list->push_back(std::move(type));
    }
  }
  return t;
}

StatusOr<DecodedType> TupleType(EntryDecoder& d, Cursor& c) {
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "tuple size"));
  std::vector<ir::Type> elements;
  elements.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    STABLERT_ASSIGN_OR_RETURN(ir::Type type, d.ReadValueType(c, "tuple element type"));
    elements.push_back(std::move(type));
  }
  return Value(ir::Type::Tuple(std::move(elements)));
}

StatusOr<DecodedType> RankedTensor(EntryDecoder& d, Cursor& c, bool with_encoding) {
  if (with_encoding) {
    // TypeExtensionsV1 bounds only matter for dynamic dimensions, which are rejected below.
    STABLERT_RETURN_IF_ERROR(d.ReadAttr(c, "tensor encoding").status());
  }
  Dims dims;
  STABLERT_RETURN_IF_ERROR(ReadShape(c, &dims));
  STABLERT_ASSIGN_OR_RETURN(DType element, d.ReadElementType(c, "tensor element type"));
  STABLERT_RETURN_IF_ERROR(CheckStatic(c, dims, element));
  return Value(ir::Type::Tensor(element, std::move(dims)));
}

StatusOr<DecodedType> Complex(EntryDecoder& d, Cursor& c) {
  STABLERT_ASSIGN_OR_RETURN(DType element, d.ReadElementType(c, "complex element type"));
  if (element == DType::kF32) return Element(DType::kC64);
  if (element == DType::kF64) return Element(DType::kC128);
  return Unimplemented("complex type of " + std::string(DTypeName(element)) + " (" +
                       std::string(c.where()) + ") is not supported");
}

}  // namespace

StatusOr<DecodedType> EntryDecoder::DecodeVhloType(Cursor& c) {
  uint64_t code;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "vhlo type kind"));
  switch (code) {
    case 0: return Element(DType::kPred);
    case 1: return Complex(*this, c);
    case 2: return Element(DType::kBF16);
    case 3: return Element(DType::kF16);
    case 4: return Element(DType::kF32);
    case 5: return Element(DType::kF64);
    case 6: return Element(DType::kF8E4M3FN);
    case 7: return Element(DType::kF8E5M2);
    case 8: return FunctionType(*this, c);
    case 9: return Element(DType::kS64);  // index: 64-bit
    case 10: return Element(DType::kS4);
    case 11: return Element(DType::kS8);
    case 12: return Element(DType::kS16);
    case 13: return Element(DType::kS32);
    case 14: return Element(DType::kS64);
    case 15: return Element(DType::kU4);
    case 16: return Element(DType::kU8);
    case 17: return Element(DType::kU16);
    case 18: return Element(DType::kU32);
    case 19: return Element(DType::kU64);
    case 20: return RankedTensor(*this, c, false);
    case 21: return RankedTensor(*this, c, true);
    case 22: return Value(ir::Type::Token());
    case 23: return TupleType(*this, c);
    case 24:
    case 30:
      return Unimplemented("quantized element type (" + std::string(c.where()) +
                           ") is not supported");
    case 25:
      return Unimplemented("unranked tensor type (" + std::string(c.where()) +
                           ") is not supported: StableRT needs static shapes");
    case 26: return Unimplemented("!vhlo.witness type (" + std::string(c.where()) +
                                  ") is not supported");
    case 27: return Element(DType::kF8E4M3FNUZ);
    case 28: return Element(DType::kF8E5M2FNUZ);
    case 29: return Element(DType::kF8E4M3B11FNUZ);
    case 31: return Element(DType::kS2);
    case 32: return Element(DType::kU2);
    case 33: {
      DecodedType t;
      t.kind = DecodedType::Kind::kNone;
      return t;
    }
    case 34: return Unimplemented("tf32 element type (" + std::string(c.where()) +
                                  ") is not supported");
    case 35: return Element(DType::kF8E4M3);
    case 36: return Element(DType::kF8E3M4);
    case 37: return Element(DType::kF4E2M1FN);
    case 38: return Element(DType::kF6E2M3FN);
    case 39: return Element(DType::kF6E3M2FN);
    case 40: return Element(DType::kF8E8M0FNU);
    case 41: return Unimplemented("!vhlo.buffer type (" + std::string(c.where()) +
                                  ") is not supported");
    case 42: return Unimplemented("!vhlo.future type (" + std::string(c.where()) +
                                  ") is not supported");
    default:
      return c.Error("unknown vhlo type kind " + std::to_string(code));
  }
}

StatusOr<DecodedType> EntryDecoder::DecodeBuiltinType(Cursor& c) {
  uint64_t code;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "builtin type kind"));
  switch (code) {
    case 0: {  // IntegerType: (width << 2) | signedness
      uint64_t packed;
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&packed, "integer type width"));
      uint64_t width = packed >> 2, signedness = packed & 3;
      if (width == 1 && signedness != 2) return Element(DType::kPred);
      bool is_unsigned = signedness == 2;
      switch (width) {
        case 2: return Element(is_unsigned ? DType::kU2 : DType::kS2);
        case 4: return Element(is_unsigned ? DType::kU4 : DType::kS4);
        case 8: return Element(is_unsigned ? DType::kU8 : DType::kS8);
        case 16: return Element(is_unsigned ? DType::kU16 : DType::kS16);
        case 32: return Element(is_unsigned ? DType::kU32 : DType::kS32);
        case 64: return Element(is_unsigned ? DType::kU64 : DType::kS64);
        default:
          return Unimplemented("integer type of width " + std::to_string(width) + " (" +
                               std::string(c.where()) + ") is not supported");
      }
    }
    case 1: return Element(DType::kS64);  // index
    case 2: return FunctionType(*this, c);
    case 3: return Element(DType::kBF16);
    case 4: return Element(DType::kF16);
    case 5: return Element(DType::kF32);
    case 6: return Element(DType::kF64);
    case 9: return Complex(*this, c);
    case 12: {
      DecodedType t;
      t.kind = DecodedType::Kind::kNone;
      return t;
    }
    case 13: return RankedTensor(*this, c, false);
    case 14: return RankedTensor(*this, c, true);
    case 15: return TupleType(*this, c);
    case 18:
      return Unimplemented("unranked tensor type (" + std::string(c.where()) +
                           ") is not supported: StableRT needs static shapes");
    case 22: return Element(DType::kF8E5M2);
    case 23: return Element(DType::kF8E4M3);
    case 24: return Element(DType::kF8E4M3FN);
    case 25: return Element(DType::kF8E5M2FNUZ);
    case 26: return Element(DType::kF8E4M3FNUZ);
    case 27: return Element(DType::kF8E4M3B11FNUZ);
    case 28: return Element(DType::kF8E3M4);
    case 29: return Element(DType::kF4E2M1FN);
    case 30: return Element(DType::kF6E2M3FN);
    case 31: return Element(DType::kF6E3M2FN);
    case 32: return Element(DType::kF8E8M0FNU);
    default:
      return Unimplemented("builtin type kind " + std::to_string(code) + " (" +
                           std::string(c.where()) + ") is not supported");
  }
}

}  // namespace stablert::stablehlo
