// VHLO attribute entries -> ir::Attribute.
//
// Mapping: ArrayV1 -> Array; DictionaryV1 -> Dictionary (string keys); BooleanV1 -> bool;
// IntegerV1 -> Integer (sign per element type); FloatV1 -> Float; StringV1 -> string;
// TensorV1 -> Elements (full data); TypeV1 -> Type (NoneV1 -> Unit; an element type ->
// rank-0 tensor type of it); enum attributes -> EnumValue; structured attributes
// (OutputOperandAlias, ResultAccuracy, mesh/axis attributes, TypeExtensions) ->
// Dictionary with snake_case field names.
#include "ir/float_format.h"
#include "stablehlo/attr_util.h"
#include "stablehlo/entry_decoder.h"

namespace stablert::stablehlo {
namespace {

ir::Attribute Enum(ir::EnumKind kind, uint64_t value) {
  return ir::Attribute(ir::EnumValue{kind, static_cast<int64_t>(value)});
}

}  // namespace

StatusOr<ir::Attribute> EntryDecoder::DecodeVhloAttribute(Cursor& c) {
  uint64_t code;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "vhlo attribute kind"));
  uint64_t value;
  switch (code) {
    case 1: {  // ArrayV1
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "array size"));
      ir::Attribute::Array array;
      array.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* element, ReadAttr(c, "array element"));
        array.push_back(*element);
      }
      return ir::Attribute(std::move(array));
    }
    case 2: {  // BooleanV1
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&value, "boolean"));
      if (value > 1) return c.Error("boolean value " + std::to_string(value) + " is not 0 or 1");
      return ir::Attribute(value == 1);
    }
    case 3:
    case 4:
    case 5:
    case 7:
    case 11:
    case 12:
    case 13:
    case 16:
    case 19: {
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&value, "enum value"));
      ir::EnumKind kind = code == 3    ? ir::EnumKind::kComparisonDirection
                          : code == 4  ? ir::EnumKind::kComparisonType
                          : code == 5  ? ir::EnumKind::kCustomCallApiVersion
                          : code == 7  ? ir::EnumKind::kFftType
                          : code == 11 ? ir::EnumKind::kPrecision
                          : code == 12 ? ir::EnumKind::kRngAlgorithm
                          : code == 13 ? ir::EnumKind::kRngDistribution
                          : code == 16 ? ir::EnumKind::kTranspose
                                       : ir::EnumKind::kResultAccuracyMode;
      return Enum(kind, value);
    }
    case 6: {  // DictionaryV1
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(2, &count, "dictionary size"));
      ir::Attribute::Dictionary dict;
      dict.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        size_t at = c.offset();
        STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* key, ReadAttr(c, "dictionary key"));
        STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* entry, ReadAttr(c, "dictionary value"));
        const auto* name = key->get<std::string>();
        if (!name) {
          return InvalidArgument("malformed bytecode: " + std::string(c.where()) +
                                 " at byte offset " + std::to_string(at) +
                                 ": dictionary key is not a string");
        }
        dict.emplace_back(*name, *entry);
      }
      return ir::Attribute(std::move(dict));
    }
    case 8: {  // FloatV1
      STABLERT_ASSIGN_OR_RETURN(DType dtype, ReadElementType(c, "float type"));
      if (!IsFloat(dtype)) return c.Error("float attribute of a non-float type");
      uint64_t bits;
      STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, DTypeBitWidth(dtype), &bits, "float value"));
      return ir::Attribute(ir::Attribute::Float{ir::FloatBitsToDouble(dtype, bits), dtype});
    }
    case 9: {  // IntegerV1
      STABLERT_ASSIGN_OR_RETURN(DType dtype, ReadElementType(c, "integer type"));
      if (!IsInteger(dtype)) return c.Error("integer attribute of a non-integer type");
      int width = DTypeBitWidth(dtype);
      uint64_t bits;
      STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, width, &bits, "integer value"));
      int64_t v = DTypeKindOf(dtype) == DTypeKind::kSigned ? SignExtend(bits, width)
                                                            : static_cast<int64_t>(bits);
      return ir::Attribute(ir::Attribute::Integer{v, dtype});
    }
    case 10: {  // OutputOperandAliasV1
      std::vector<int64_t> output_indices, operand_indices;
      int64_t operand;
      STABLERT_RETURN_IF_ERROR(ReadSignedList(c, &output_indices, "output tuple indices"));
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&operand, "operand index"));
      STABLERT_RETURN_IF_ERROR(ReadSignedList(c, &operand_indices, "operand tuple indices"));
      return ir::Attribute(ir::Attribute::Dictionary{
          {"output_tuple_indices", I64Elements(output_indices)},
          {"operand_index", I64(operand)},
          {"operand_tuple_indices", I64Elements(operand_indices)}});
    }
    case 14: {  // StringV1
      STABLERT_ASSIGN_OR_RETURN(std::string_view s, ReadSharedString(c, "string"));
      return Text(std::string(s));
    }
    case 15: {  // TensorV1
      STABLERT_ASSIGN_OR_RETURN(ir::Type type, ReadValueType(c, "tensor type"));
      std::string_view blob;
      Cursor at = c;
      STABLERT_RETURN_IF_ERROR(c.ReadBlob(&blob, "tensor data"));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute::Elements elements,
                                DenseElementsFromBlob(at, type, blob));
      return ir::Attribute(std::move(elements));
    }
    case 17: {  // TypeV1
      STABLERT_ASSIGN_OR_RETURN(const DecodedType* type, ReadType(c, "type"));
      switch (type->kind) {
        case DecodedType::Kind::kValue: return ir::Attribute(type->value);
        case DecodedType::Kind::kElement:
          return ir::Attribute(ir::Type::Tensor(type->element, {}));
        case DecodedType::Kind::kNone: return ir::Attribute();
        case DecodedType::Kind::kFunction:
          return ir::Attribute(ir::OpaqueValue{"vhlo", "function type"});
      }
      return ir::Attribute();
    }
    case 18: {  // TypeExtensionsV1
      std::vector<int64_t> bounds;
      STABLERT_RETURN_IF_ERROR(ReadSignedList(c, &bounds, "type extension bounds"));
      return ir::Attribute(ir::Attribute::Dictionary{{"bounds", I64Elements(bounds)}});
    }
    case 20: {  // ResultAccuracyV1
      uint64_t atol, rtol;
      int64_t ulps;
      STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, 64, &atol, "result accuracy atol"));
      STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, 64, &rtol, "result accuracy rtol"));
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&ulps, "result accuracy ulps"));
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* mode, ReadAttr(c, "result accuracy mode"));
      return ir::Attribute(ir::Attribute::Dictionary{
          {"atol", ir::Attribute(ir::Attribute::Float{ir::FloatBitsToDouble(DType::kF64, atol),
                                                      DType::kF64})},
          {"rtol", ir::Attribute(ir::Attribute::Float{ir::FloatBitsToDouble(DType::kF64, rtol),
                                                      DType::kF64})},
          {"ulps", I64(ulps)},
          {"mode", *mode}});
    }
    case 21: {  // SubAxisInfoV1
      int64_t pre_size, size;
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&pre_size, "sub-axis pre-size"));
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&size, "sub-axis size"));
      return ir::Attribute(ir::Attribute::Dictionary{{"pre_size", I64(pre_size)},
                                                     {"size", I64(size)}});
    }
    case 22: {  // AxisRefV1
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* name, ReadAttr(c, "axis name"));
      ir::Attribute::Dictionary dict{{"name", *name}};
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&value, "axis sub-axis flag"));
      if (value > 1) return c.Error("axis sub-axis flag is not 0 or 1");
      if (value == 1) {
        STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* sub, ReadAttr(c, "sub-axis info"));
        dict.emplace_back("sub_axis_info", *sub);
      }
      return ir::Attribute(std::move(dict));
    }
    case 23: {  // ReplicaGroupMeshAxesV1
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* mesh, ReadAttr(c, "mesh"));
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* axes, ReadAttr(c, "mesh axes"));
      return ir::Attribute(ir::Attribute::Dictionary{{"mesh", *mesh}, {"axes", *axes}});
    }
    case 24: {  // MeshAxisV1
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* name, ReadAttr(c, "mesh axis name"));
      int64_t size;
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&size, "mesh axis size"));
      return ir::Attribute(ir::Attribute::Dictionary{{"name", *name}, {"size", I64(size)}});
    }
    case 25: {  // MeshV1
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* axes, ReadAttr(c, "mesh axes"));
      ir::Attribute::Dictionary dict{{"axes", *axes}};
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* ids, ReadOptionalAttr(c, "device ids"));
      if (ids) dict.emplace_back("device_ids", *ids);
      return ir::Attribute(std::move(dict));
    }
    case 0:
      return c.Error("vhlo attribute kind 0 (ArgResultAliasV1) was never emitted");
    default:
      return c.Error("unknown vhlo attribute kind " + std::to_string(code));
  }
}

}  // namespace stablert::stablehlo
