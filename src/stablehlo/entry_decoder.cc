#include "stablehlo/entry_decoder.h"

#include <cstring>

#include "base/shape.h"
#include "stablehlo/ir_section.h"
#include "stablehlo/sdy_text.h"

namespace stablert::stablehlo {
namespace {

// Largest constant StableRT expands from a splat or packed encoding (1 GiB).
constexpr uint64_t kMaxElementsBytes = uint64_t{1} << 30;

// Builtin location attribute codes.
constexpr uint64_t kCallSiteLoc = 10;
constexpr uint64_t kFileLineColLoc = 11;
constexpr uint64_t kFusedLoc = 12;
constexpr uint64_t kFusedLocWithMetadata = 13;
constexpr uint64_t kNameLoc = 14;
constexpr uint64_t kUnknownLoc = 15;
constexpr uint64_t kFileLineColRange = 22;

// Builtin TypeAttr and vhlo TypeV1 codes.
constexpr uint64_t kBuiltinTypeAttr = 6;
constexpr uint64_t kVhloTypeV1 = 17;

}  // namespace

EntryDecoder::EntryDecoder(const BytecodeFile& file)
    : file_(file),
      attr_state_(file.attributes.size(), State::kPending),
      attrs_(file.attributes.size()),
      type_state_(file.types.size(), State::kPending),
      types_(file.types.size()) {}

std::string_view EntryDecoder::AttrDialect(uint32_t index) const {
  return file_.dialects[file_.attributes[index].dialect].name;
}

std::string EntryDecoder::DescribeAttr(uint32_t index) const {
  return std::string(AttrDialect(index)) + " attribute #" + std::to_string(index);
}

std::string EntryDecoder::DescribeType(uint32_t index) const {
  return std::string(file_.dialects[file_.types[index].dialect].name) + " type #" +
         std::to_string(index);
}

Cursor EntryDecoder::AttrCursor(uint32_t index, const std::string& where) const {
  const AttrTypeEntry& entry = file_.attributes[index];
  return Cursor(entry.data, entry.offset, where);
}

Cursor EntryDecoder::TypeCursor(uint32_t index, const std::string& where) const {
  const AttrTypeEntry& entry = file_.types[index];
  return Cursor(entry.data, entry.offset, where);
}

StatusOr<const ir::Attribute*> EntryDecoder::Attribute(uint32_t index) {
  if (index >= attrs_.size()) {
    return InvalidArgument("malformed bytecode: attribute #" + std::to_string(index) +
                           " is out of range");
  }
  switch (attr_state_[index]) {
    case State::kDone:
      return attrs_[index].get();
    case State::kInProgress:
      return InvalidArgument("malformed bytecode: " + DescribeAttr(index) + " refers to itself");
    case State::kPending:
      break;
  }
  if (depth_ >= kMaxNestingDepth) {
    return InvalidArgument("malformed bytecode: attributes nested deeper than " +
                           std::to_string(kMaxNestingDepth) + " at " + DescribeAttr(index));
  }
  attr_state_[index] = State::kInProgress;
  ++depth_;
  StatusOr<ir::Attribute> decoded = DecodeAttribute(index);
  --depth_;
  if (!decoded.ok()) {
    attr_state_[index] = State::kPending;
    return decoded.status();
  }
  attrs_[index] = std::make_unique<ir::Attribute>(std::move(decoded).value());
  attr_state_[index] = State::kDone;
  return attrs_[index].get();
}

StatusOr<const DecodedType*> EntryDecoder::Type(uint32_t index) {
  if (index >= types_.size()) {
    return InvalidArgument("malformed bytecode: type #" + std::to_string(index) +
                           " is out of range");
  }
  switch (type_state_[index]) {
    case State::kDone:
      return types_[index].get();
    case State::kInProgress:
      return InvalidArgument("malformed bytecode: " + DescribeType(index) + " refers to itself");
    case State::kPending:
      break;
  }
  if (depth_ >= kMaxNestingDepth) {
    return InvalidArgument("malformed bytecode: types nested deeper than " +
                           std::to_string(kMaxNestingDepth) + " at " + DescribeType(index));
  }
  type_state_[index] = State::kInProgress;
  ++depth_;
  StatusOr<DecodedType> decoded = DecodeType(index);
  --depth_;
  if (!decoded.ok()) {
    type_state_[index] = State::kPending;
    return decoded.status();
  }
  types_[index] = std::make_unique<DecodedType>(std::move(decoded).value());
  type_state_[index] = State::kDone;
  return types_[index].get();
}

StatusOr<ir::Type> EntryDecoder::ValueType(uint32_t index) {
  STABLERT_ASSIGN_OR_RETURN(const DecodedType* type, Type(index));
  if (type->kind != DecodedType::Kind::kValue) {
    return InvalidArgument(DescribeType(index) +
                           " is not a tensor, token or tuple type where a value type is expected");
  }
  return type->value;
}

StatusOr<ir::Attribute> EntryDecoder::DecodeAttribute(uint32_t index) {
  const AttrTypeEntry& entry = file_.attributes[index];
  std::string where = DescribeAttr(index);
  Cursor c(entry.data, entry.offset, where);
  std::string_view dialect = AttrDialect(index);
  if (!entry.custom) {
    std::string_view text;
    STABLERT_RETURN_IF_ERROR(c.ReadNullTerminated(&text, "textual attribute"));
    STABLERT_RETURN_IF_ERROR(c.ExpectEnd("the textual attribute"));
    if (dialect == "sdy") {
      StatusOr<ir::Attribute> parsed = ParseSdyText(text);
      if (parsed.ok()) return parsed;
    }
    return ir::Attribute(ir::OpaqueValue{std::string(dialect), std::string(text)});
  }
  if (dialect != "builtin" && dialect != "vhlo" && dialect != "sdy") {
    // Kept opaque: only an op that needs the value can tell whether it matters.
    return ir::Attribute(ir::OpaqueValue{std::string(dialect), where});
  }
  StatusOr<ir::Attribute> result = dialect == "builtin" ? DecodeBuiltinAttribute(c, index)
                                   : dialect == "vhlo"  ? DecodeVhloAttribute(c)
                                                        : DecodeSdyAttribute(c);
  if (!result.ok()) return result.status();
  STABLERT_RETURN_IF_ERROR(c.ExpectEnd("the attribute"));
  return result;
}

StatusOr<DecodedType> EntryDecoder::DecodeType(uint32_t index) {
  const AttrTypeEntry& entry = file_.types[index];
  std::string where = DescribeType(index);
  Cursor c(entry.data, entry.offset, where);
  std::string_view dialect = file_.dialects[entry.dialect].name;
  if (!entry.custom) {
    std::string_view text;
    STABLERT_RETURN_IF_ERROR(c.ReadNullTerminated(&text, "textual type"));
    STABLERT_RETURN_IF_ERROR(c.ExpectEnd("the textual type"));
    // Older writers emit the newer builtin float types as text.
    static constexpr std::pair<std::string_view, DType> kTextual[] = {
        {"f8E5M2", DType::kF8E5M2},         {"f8E4M3FN", DType::kF8E4M3FN},
        {"f8E4M3", DType::kF8E4M3},         {"f8E3M4", DType::kF8E3M4},
        {"f8E5M2FNUZ", DType::kF8E5M2FNUZ}, {"f8E4M3FNUZ", DType::kF8E4M3FNUZ},
        {"f8E4M3B11FNUZ", DType::kF8E4M3B11FNUZ}, {"f8E8M0FNU", DType::kF8E8M0FNU},
        {"f4E2M1FN", DType::kF4E2M1FN},     {"f6E2M3FN", DType::kF6E2M3FN},
        {"f6E3M2FN", DType::kF6E3M2FN}};
    if (dialect == "builtin") {
      for (const auto& [name, dtype] : kTextual) {
        if (text == name) {
          DecodedType t;
          t.kind = DecodedType::Kind::kElement;
          t.element = dtype;
          return t;
        }
      }
    }
    return Unimplemented("textual type '" + std::string(text) + "' (" + where +
                         ") is not supported");
  }
  StatusOr<DecodedType> result = InvalidArgument("unreachable");
  if (dialect == "builtin") {
    result = DecodeBuiltinType(c);
  } else if (dialect == "vhlo") {
    result = DecodeVhloType(c);
  } else if (dialect == "stablehlo") {
    // !stablehlo.token (StableHLO's bytecode type code 0): a token crossing a non-VHLO op
    // (sdy.manual_computation) in a mixed artifact, behind an unrealized_conversion_cast.
    uint64_t code;
    STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "stablehlo type kind"));
    if (code != 0)
      return Unimplemented("stablehlo type #" + std::to_string(code) + " (" + where + ") is not supported");
    DecodedType token;
    token.kind = DecodedType::Kind::kValue;
    token.value = ir::Type::Token();
    result = token;
  } else {
    return Unimplemented("types of dialect '" + std::string(dialect) + "' are not supported (" +
                         where + ")");
  }
  if (!result.ok()) return result.status();
  STABLERT_RETURN_IF_ERROR(c.ExpectEnd("the type"));
  return result;
}

StatusOr<const DecodedType*> EntryDecoder::TypeOfTypeAttr(uint32_t index) {
  if (index >= file_.attributes.size()) {
    return InvalidArgument("malformed bytecode: attribute #" + std::to_string(index) +
                           " is out of range");
  }
  const AttrTypeEntry& entry = file_.attributes[index];
  std::string where = DescribeAttr(index);
  Cursor c(entry.data, entry.offset, where);
  std::string_view dialect = AttrDialect(index);
  uint64_t code = 0;
  if (entry.custom) STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "attribute kind"));
  if (!entry.custom || !((dialect == "builtin" && code == kBuiltinTypeAttr) ||
                         (dialect == "vhlo" && code == kVhloTypeV1))) {
    return InvalidArgument(where + " is not a type attribute");
  }
  STABLERT_ASSIGN_OR_RETURN(const DecodedType* type, ReadType(c, "type"));
  STABLERT_RETURN_IF_ERROR(c.ExpectEnd("the type attribute"));
  return type;
}

Status EntryDecoder::DictionaryEntries(
    uint32_t index, std::vector<std::pair<std::string_view, uint32_t>>* entries) {
  if (index >= file_.attributes.size()) {
    return InvalidArgument("malformed bytecode: attribute #" + std::to_string(index) +
                           " is out of range");
  }
  const AttrTypeEntry& entry = file_.attributes[index];
  std::string where = DescribeAttr(index);
  std::string_view dialect = AttrDialect(index);
  Cursor c(entry.data, entry.offset, where);
  uint64_t code = 0;
  if (entry.custom) STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "attribute kind"));
  constexpr uint64_t kBuiltinDictionary = 1, kVhloDictionaryV1 = 6;
  if (!entry.custom || !((dialect == "builtin" && code == kBuiltinDictionary) ||
                         (dialect == "vhlo" && code == kVhloDictionaryV1))) {
    return InvalidArgument(where + " is not a dictionary");
  }
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(2, &count, "dictionary size"));
  entries->reserve(entries->size() + count);
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t key, value;
    STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &key, "dictionary key"));
    STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &value, "dictionary value"));
    STABLERT_ASSIGN_OR_RETURN(std::string_view name, StringView(key));
    entries->emplace_back(name, value);
  }
  return c.ExpectEnd("the dictionary");
}

StatusOr<std::string_view> EntryDecoder::StringView(uint32_t index) {
  STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* attr, Attribute(index));
  if (const auto* s = attr->get<std::string>()) return std::string_view(*s);
  return InvalidArgument(DescribeAttr(index) + " is not a string");
}

StatusOr<std::string> EntryDecoder::String(uint32_t index) {
  STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* attr, Attribute(index));
  if (const auto* s = attr->get<std::string>()) return *s;
  return InvalidArgument(DescribeAttr(index) + " is not a string");
}

StatusOr<ir::Location> EntryDecoder::Location(uint32_t index) {
  STABLERT_ASSIGN_OR_RETURN(const ir::Location* loc, DecodeLocation(index));
  return *loc;
}

StatusOr<const ir::Location*> EntryDecoder::DecodeLocation(uint32_t index) {
  if (index >= file_.attributes.size()) {
    return InvalidArgument("malformed bytecode: location attribute #" + std::to_string(index) +
                           " is out of range");
  }
  if (location_state_.empty()) {
    location_state_.assign(file_.attributes.size(), State::kPending);
    locations_.resize(file_.attributes.size());
  }
  switch (location_state_[index]) {
    case State::kDone:
      return locations_[index].get();
    case State::kInProgress:
      return InvalidArgument("malformed bytecode: " + DescribeAttr(index) +
                             " is a location that contains itself");
    case State::kPending:
      break;
  }
  if (depth_ >= kMaxNestingDepth) {
    return InvalidArgument("malformed bytecode: locations nested deeper than " +
                           std::to_string(kMaxNestingDepth));
  }
  location_state_[index] = State::kInProgress;
  ++depth_;
  StatusOr<ir::Location> loc = DecodeLocationEntry(index);
  --depth_;
  if (!loc.ok()) {
    location_state_[index] = State::kPending;
    return loc.status();
  }
  locations_[index] = std::make_unique<ir::Location>(std::move(loc).value());
  location_state_[index] = State::kDone;
  return locations_[index].get();
}

StatusOr<ir::Location> EntryDecoder::DecodeLocationEntry(uint32_t index) {
  const AttrTypeEntry& entry = file_.attributes[index];
  std::string where = DescribeAttr(index);
  if (AttrDialect(index) != "builtin" || !entry.custom) {
    return InvalidArgument(where + " is not a location");
  }
  Cursor c(entry.data, entry.offset, where);
  uint64_t code;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "location kind"));
  ir::Location out;
  uint32_t a, b;
  switch (code) {
    case kCallSiteLoc: {
      STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &a, "call site callee"));
      STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &b, "call site caller"));
      STABLERT_ASSIGN_OR_RETURN(const ir::Location* callee, DecodeLocation(a));
      out = *callee;
      STABLERT_ASSIGN_OR_RETURN(const ir::Location* caller, DecodeLocation(b));
      out.FillFrom(*caller);
      break;
    }
    case kFileLineColLoc:
    case kFileLineColRange: {
      STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &a, "location file name"));
      uint64_t numbers[4] = {0, 0, 0, 0};
      uint64_t count = 2;
      if (code == kFileLineColRange) {
        STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&count, "location range size"));
        if (count > 4) return c.Error("a file range location has at most 4 numbers");
      }
      for (uint64_t i = 0; i < count; ++i) {
        STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&numbers[i], "location line/column"));
      }
      STABLERT_ASSIGN_OR_RETURN(out.file, String(a));
      out.line = static_cast<int32_t>(numbers[0]);
      out.column = static_cast<int32_t>(numbers[1]);
      break;
    }
    case kFusedLoc:
    case kFusedLocWithMetadata: {
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "fused location count"));
      for (uint64_t i = 0; i < count; ++i) {
        STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &a, "fused location"));
        STABLERT_ASSIGN_OR_RETURN(const ir::Location* part, DecodeLocation(a));
        out.FillFrom(*part);
      }
      if (code == kFusedLocWithMetadata) {
        STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &a, "fused location metadata"));
      }
      break;
    }
    case kNameLoc: {
      STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &a, "name location name"));
      STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &b, "name location child"));
      STABLERT_ASSIGN_OR_RETURN(out.name, String(a));
      STABLERT_ASSIGN_OR_RETURN(const ir::Location* child, DecodeLocation(b));
      out.FillFrom(*child);
      break;
    }
    case kUnknownLoc:
      break;
    default:
      return InvalidArgument(where + " (builtin kind " + std::to_string(code) +
                             ") is not a location");
  }
  STABLERT_RETURN_IF_ERROR(c.ExpectEnd("the location"));
  return out;
}

//===--- Reference helpers ----------------------------------------------------------===//

Status EntryDecoder::ReadAttrIndex(Cursor& c, uint32_t* index, std::string_view what) {
  uint64_t value;
  STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.attributes.size(), &value, what));
  *index = static_cast<uint32_t>(value);
  return OkStatus();
}

StatusOr<const ir::Attribute*> EntryDecoder::ReadAttr(Cursor& c, std::string_view what) {
  uint32_t index;
  STABLERT_RETURN_IF_ERROR(ReadAttrIndex(c, &index, what));
  return Attribute(index);
}

StatusOr<const ir::Attribute*> EntryDecoder::ReadOptionalAttr(Cursor& c, std::string_view what) {
  uint64_t value;
  bool present;
  STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&value, &present, what));
  if (!present) return static_cast<const ir::Attribute*>(nullptr);
  if (value >= file_.attributes.size()) {
    return c.Error(std::string(what) + " attribute #" + std::to_string(value) +
                   " is out of range");
  }
  return Attribute(static_cast<uint32_t>(value));
}

StatusOr<const DecodedType*> EntryDecoder::ReadType(Cursor& c, std::string_view what) {
  uint64_t value;
  STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.types.size(), &value, what));
  return Type(static_cast<uint32_t>(value));
}

StatusOr<ir::Type> EntryDecoder::ReadValueType(Cursor& c, std::string_view what) {
  uint64_t value;
  STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.types.size(), &value, what));
  return ValueType(static_cast<uint32_t>(value));
}

StatusOr<DType> EntryDecoder::ReadElementType(Cursor& c, std::string_view what) {
  size_t at = c.offset();
  STABLERT_ASSIGN_OR_RETURN(const DecodedType* type, ReadType(c, what));
  if (type->kind != DecodedType::Kind::kElement) {
    return InvalidArgument("malformed bytecode: " + std::string(c.where()) + " at byte offset " +
                           std::to_string(at) + ": " + std::string(what) +
                           " is not a scalar element type");
  }
  return type->element;
}

StatusOr<std::string_view> EntryDecoder::ReadSharedString(Cursor& c, std::string_view what) {
  uint64_t value;
  STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.strings.size(), &value, what));
  return file_.strings[value];
}

//===--- Numbers and dense data -----------------------------------------------------===//

Status ReadAPIntBits(Cursor& c, int width, uint64_t* bits, std::string_view what) {
  if (width <= 8) {
    uint8_t byte;
    STABLERT_RETURN_IF_ERROR(c.ReadByte(&byte, what));
    *bits = width == 8 ? byte : (byte & ((1u << width) - 1));
    return OkStatus();
  }
  if (width <= 64) {
    int64_t value;
    STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&value, what));
    uint64_t raw = static_cast<uint64_t>(value);
    *bits = width == 64 ? raw : (raw & ((uint64_t{1} << width) - 1));
    return OkStatus();
  }
  return c.Error("integers wider than 64 bits are not supported");
}

int64_t SignExtend(uint64_t bits, int width) {
  if (width >= 64 || width <= 0) return static_cast<int64_t>(bits);
  uint64_t sign = uint64_t{1} << (width - 1);
  bits &= (sign << 1) - 1;
  return static_cast<int64_t>((bits ^ sign) - sign);
}

StatusOr<ir::Attribute::Elements> DenseElementsFromBlob(const Cursor& c, const ir::Type& type,
                                                        std::string_view blob) {
  if (!type.is_tensor()) return c.Error("dense elements need a tensor type");
  StatusOr<int64_t> count_or = CheckedElementCount(type.dims);
  if (!count_or.ok()) return c.Error("dense elements shape is invalid");
  const uint64_t n = static_cast<uint64_t>(*count_or);
  const int element_bytes = DTypeByteSize(type.dtype);
  if (element_bytes == 0) return c.Error("dense elements of a non-numeric element type");
  if (n > kMaxElementsBytes / element_bytes) {
    return ResourceExhausted("constant of type " + ir::TypeToString(type) +
                             " exceeds the 1 GiB limit for inline constants");
  }
  auto data = std::make_shared<ir::ElementsData>();
  data->type = type;
  const auto* in = reinterpret_cast<const uint8_t*>(blob.data());
  // A splat (one element for the whole tensor) stays one element when large
  // (ir::ElementsData::kCompactSplatBytes): nothing is done per element of a splat.
  auto compact = [&](uint8_t element) {
    data->splat = true;
    data->bytes.assign(1, element);
  };
  if (type.dtype == DType::kPred) {
    const uint64_t packed = (n + 7) / 8;
    const bool large = n > static_cast<uint64_t>(ir::ElementsData::kCompactSplatBytes);
    if (n == 0 && blob.size() <= 1) {
      // A splat of no elements.
    } else if (blob.size() == 1 && in[0] == 0xFF) {
      if (large) compact(1);
      else data->bytes.assign(n, 1);
    } else if (blob.size() == packed && blob.size() != n) {
      data->bytes.resize(n);
      for (uint64_t i = 0; i < n; ++i) data->bytes[i] = (in[i / 8] >> (i % 8)) & 1;
    } else if (blob.size() == n) {
      data->bytes.resize(n);
      for (uint64_t i = 0; i < n; ++i) data->bytes[i] = in[i] != 0;
    } else if (blob.size() == 1) {
      if (large) compact(in[0] != 0);
      else data->bytes.assign(n, in[0] != 0);
    } else {
      return c.Error("i1 dense data of " + std::to_string(blob.size()) +
                     " bytes does not match " + std::to_string(n) + " elements");
    }
    return ir::Attribute::Elements(std::move(data));
  }
  if (blob.size() == n * element_bytes) {
    data->bytes.assign(in, in + blob.size());
  } else if (blob.size() == static_cast<size_t>(element_bytes)) {
    // A splat: one element for the whole tensor (also of a zero-size tensor).
    if (n * element_bytes > static_cast<uint64_t>(ir::ElementsData::kCompactSplatBytes)) {
      data->splat = true;
      data->bytes.assign(in, in + element_bytes);
    } else {
      data->bytes.resize(n * element_bytes);
      for (uint64_t i = 0; i < n; ++i) std::memcpy(data->bytes.data() + i * element_bytes, in, element_bytes);
    }
  } else {
    return c.Error("dense data of " + std::to_string(blob.size()) + " bytes does not match " +
                   std::to_string(n) + " elements of " + std::string(DTypeName(type.dtype)));
  }
  int bits = DTypeBitWidth(type.dtype);
  uint8_t* out = data->bytes.data();
  const size_t stored = data->bytes.size();
  if (bits < 8 && DTypeKindOf(type.dtype) == DTypeKind::kSigned) {
    for (size_t i = 0; i < stored; ++i) out[i] = static_cast<uint8_t>(SignExtend(out[i], bits));
  } else if (bits < 8) {
    for (size_t i = 0; i < stored; ++i) out[i] &= static_cast<uint8_t>((1u << bits) - 1);
  }
  return ir::Attribute::Elements(std::move(data));
}

}  // namespace stablert::stablehlo
