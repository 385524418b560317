// Builtin dialect attribute entries -> ir::Attribute (module attributes, discardable
// attribute dictionaries, and builtin values kept inside mixed artifacts).
//
// Mapping: ArrayAttr -> Array; DictionaryAttr -> Dictionary; StringAttr -> string;
// (Flat)SymbolRefAttr -> Symbol ("root::nested"); TypeAttr -> Type; UnitAttr -> Unit;
// IntegerAttr -> Integer (i1 -> bool); FloatAttr -> Float; dense elements and dense
// arrays -> Elements; dense string elements -> Array of strings; locations -> OpaqueValue
// with their printed form (operation locations are decoded by EntryDecoder::Location).
#include "ir/float_format.h"
#include "stablehlo/entry_decoder.h"

namespace stablert::stablehlo {
namespace {

constexpr uint64_t kMaxStringElements = uint64_t{1} << 20;

}  // namespace

StatusOr<ir::Attribute> EntryDecoder::DecodeBuiltinAttribute(Cursor& c, uint32_t index) {
  uint64_t code;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "builtin attribute kind"));
  switch (code) {
    case 0: {  // ArrayAttr
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
    case 1: {  // DictionaryAttr
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(2, &count, "dictionary size"));
      ir::Attribute::Dictionary dict;
      dict.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        uint32_t key;
        STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &key, "dictionary key"));
        STABLERT_ASSIGN_OR_RETURN(std::string name, String(key));
        STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* value, ReadAttr(c, "dictionary value"));
        dict.emplace_back(std::move(name), *value);
      }
      return ir::Attribute(std::move(dict));
    }
    case 2:
    case 3: {  // StringAttr (with type)
      STABLERT_ASSIGN_OR_RETURN(std::string_view s, ReadSharedString(c, "string"));
      if (code == 3) STABLERT_RETURN_IF_ERROR(ReadType(c, "string type").status());
      return ir::Attribute(std::string(s));
    }
    case 4:
    case 5: {  // FlatSymbolRefAttr, SymbolRefAttr
      uint32_t root;
      STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &root, "symbol root"));
      STABLERT_ASSIGN_OR_RETURN(std::string name, String(root));
      if (code == 5) {
        uint64_t count;
        STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "nested symbol count"));
        for (uint64_t i = 0; i < count; ++i) {
          STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* nested, ReadAttr(c, "nested symbol"));
          const auto* symbol = nested->get<ir::Attribute::Symbol>();
          if (!symbol) return c.Error("nested symbol reference is not a symbol");
          name += "::" + symbol->name;
        }
      }
      return ir::Attribute(ir::Attribute::Symbol{std::move(name)});
    }
    case 6: {  // TypeAttr
      STABLERT_ASSIGN_OR_RETURN(const DecodedType* type, ReadType(c, "type"));
      switch (type->kind) {
        case DecodedType::Kind::kValue: return ir::Attribute(type->value);
        case DecodedType::Kind::kElement:
          return ir::Attribute(ir::Type::Tensor(type->element, {}));
        case DecodedType::Kind::kNone: return ir::Attribute();
        case DecodedType::Kind::kFunction:
          return ir::Attribute(ir::OpaqueValue{"builtin", "function type"});
      }
      return ir::Attribute();
    }
    case 7:  // UnitAttr
      return ir::Attribute();
    case 8: {  // IntegerAttr
      STABLERT_ASSIGN_OR_RETURN(DType dtype, ReadElementType(c, "integer type"));
      if (dtype == DType::kPred) {
        uint64_t bits;
        STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, 1, &bits, "boolean value"));
        return ir::Attribute(bits != 0);
      }
      if (!IsInteger(dtype)) return c.Error("integer attribute of a non-integer type");
      int width = DTypeBitWidth(dtype);
      uint64_t bits;
      STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, width, &bits, "integer value"));
      int64_t v = DTypeKindOf(dtype) == DTypeKind::kSigned ? SignExtend(bits, width)
                                                            : static_cast<int64_t>(bits);
      return ir::Attribute(ir::Attribute::Integer{v, dtype});
    }
    case 9: {  // FloatAttr
      STABLERT_ASSIGN_OR_RETURN(DType dtype, ReadElementType(c, "float type"));
      if (!IsFloat(dtype)) return c.Error("float attribute of a non-float type");
      uint64_t bits;
      STABLERT_RETURN_IF_ERROR(ReadAPIntBits(c, DTypeBitWidth(dtype), &bits, "float value"));
      return ir::Attribute(ir::Attribute::Float{ir::FloatBitsToDouble(dtype, bits), dtype});
    }
    case 10: case 11: case 12: case 13: case 14: case 15: case 22: {  // locations
      STABLERT_ASSIGN_OR_RETURN(ir::Location loc, Location(index));
      STABLERT_RETURN_IF_ERROR(c.Skip(c.remaining(), "location"));
      return ir::Attribute(ir::OpaqueValue{"builtin", "loc(" + loc.ToString() + ")"});
    }
    case 16:
      return Unimplemented("dense resource constants (" + std::string(c.where()) +
                           ") are not supported");
    case 17: {  // DenseArrayAttr
      STABLERT_ASSIGN_OR_RETURN(DType dtype, ReadElementType(c, "dense array element type"));
      uint64_t size;
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&size, "dense array size"));
      if (size > (uint64_t{1} << 40)) return c.Error("dense array size is too large");
      Cursor at = c;
      std::string_view blob;
      STABLERT_RETURN_IF_ERROR(c.ReadBlob(&blob, "dense array data"));
      ir::Type type = ir::Type::Tensor(dtype, {static_cast<int64_t>(size)});
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute::Elements elements,
                                DenseElementsFromBlob(at, type, blob));
      return ir::Attribute(std::move(elements));
    }
    case 18: {  // DenseIntOrFPElementsAttr
      STABLERT_ASSIGN_OR_RETURN(ir::Type type, ReadValueType(c, "dense elements type"));
      Cursor at = c;
      std::string_view blob;
      STABLERT_RETURN_IF_ERROR(c.ReadBlob(&blob, "dense elements data"));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute::Elements elements,
                                DenseElementsFromBlob(at, type, blob));
      return ir::Attribute(std::move(elements));
    }
    case 19: {  // DenseStringElementsAttr
      STABLERT_ASSIGN_OR_RETURN(ir::Type type, ReadValueType(c, "dense strings type"));
      uint64_t splat;
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&splat, "dense strings splat flag"));
      uint64_t n = 1;
      for (int64_t d : type.dims) {
        if (d != 0 && n > kMaxStringElements / static_cast<uint64_t>(d)) {
          return c.Error("dense string elements are too many");
        }
        n *= static_cast<uint64_t>(d);
      }
      ir::Attribute::Array strings;
      uint64_t stored = splat ? 1 : n;
      if (stored > c.remaining()) return c.Error("dense string elements overrun the entry");
      for (uint64_t i = 0; i < stored; ++i) {
        STABLERT_ASSIGN_OR_RETURN(std::string_view s, ReadSharedString(c, "string element"));
        strings.emplace_back(std::string(s));
      }
      if (splat && n != 1) strings.assign(n, strings.empty() ? ir::Attribute() : strings[0]);
      return ir::Attribute(std::move(strings));
    }
    case 21: {  // DistinctAttr
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* inner, ReadAttr(c, "distinct attribute"));
      return *inner;
    }
    default:
      return Unimplemented("builtin attribute kind " + std::to_string(code) + " (" +
                           std::string(c.where()) + ") is not supported");
  }
}

}  // namespace stablert::stablehlo
