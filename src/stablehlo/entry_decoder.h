// Lazy, memoized decoding of the attribute and type entries of a bytecode file.
//
// Dispatches each entry on its dialect: `builtin` (builtin_dialect.cc), `vhlo`
// (vhlo_attributes.cc, vhlo_types.cc) and `sdy` (sdy_attributes.cc). Types decode to
// DecodedType (element types, value types, function types, none); attributes decode to
// ir::Attribute (see vhlo_attributes.cc for the mapping); locations decode to
// ir::Location. Textual entries and attributes of other dialects become OpaqueValue.
//
// Entries may reference each other in any order; references are followed recursively up
// to kMaxNestingDepth and cycles are rejected. Every entry must be consumed exactly.
// Failure: InvalidArgument (malformed entry: names the entry, its dialect and byte
// offset) or Unimplemented (a valid kind StableRT cannot represent, e.g. dynamic or
// quantized tensor types). Borrows the BytecodeFile, which must outlive it. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/attribute.h"
#include "ir/module.h"
#include "ir/type.h"
#include "stablehlo/bytecode_reader.h"
#include "stablehlo/encoding.h"

namespace stablert::stablehlo {

struct DecodedType {
  enum class Kind : uint8_t {
    kElement,   // a scalar element type (integer, float, complex, bool, index)
    kValue,     // a tensor, token or tuple type
    kFunction,  // inputs -> outputs
    kNone,      // vhlo NoneV1 / builtin none
  };
  Kind kind = Kind::kValue;
  DType element = DType::kInvalid;  // kElement
  ir::Type value;                   // kValue
  std::vector<ir::Type> inputs;     // kFunction
  std::vector<ir::Type> outputs;    // kFunction
};

class EntryDecoder {
 public:
  explicit EntryDecoder(const BytecodeFile& file);

  // The decoded type entry `index`. The pointer stays valid for the decoder's lifetime.
  StatusOr<const DecodedType*> Type(uint32_t index);
  // Type entry `index`, which must be a value (tensor/token/tuple) type.
  StatusOr<ir::Type> ValueType(uint32_t index);
  // The decoded attribute entry `index`; valid for the decoder's lifetime.
  StatusOr<const ir::Attribute*> Attribute(uint32_t index);
  // The type held by a TypeAttr / vhlo TypeV1 attribute.
  StatusOr<const DecodedType*> TypeOfTypeAttr(uint32_t index);
  // Attribute `index` as a string (builtin StringAttr or vhlo StringV1).
  StatusOr<std::string> String(uint32_t index);
  // Attribute `index` as a location (builtin location attributes), with JAX's name stack
  // in `name` and the innermost file position found.
  StatusOr<ir::Location> Location(uint32_t index);

  // Appends the (name, value attribute index) pairs of a builtin DictionaryAttr or vhlo
  // DictionaryV1 entry, without decoding the values. Names stay valid for the decoder's
  // lifetime.
  Status DictionaryEntries(uint32_t index,
                           std::vector<std::pair<std::string_view, uint32_t>>* entries);
  // Attribute `index` as a string, viewing the decoder's memoized copy.
  StatusOr<std::string_view> StringView(uint32_t index);

  std::string_view AttrDialect(uint32_t index) const;
  // "vhlo attribute #12" style description for messages.
  std::string DescribeAttr(uint32_t index) const;
  std::string DescribeType(uint32_t index) const;
  const BytecodeFile& file() const { return file_; }

  //===--- Used by the dialect decoders -----------------------------------------------===//

  Cursor AttrCursor(uint32_t index, const std::string& where) const;
  Cursor TypeCursor(uint32_t index, const std::string& where) const;
  // Reads an attribute/type reference and decodes it.
  StatusOr<const ir::Attribute*> ReadAttr(Cursor& c, std::string_view what);
  Status ReadAttrIndex(Cursor& c, uint32_t* index, std::string_view what);
  StatusOr<const DecodedType*> ReadType(Cursor& c, std::string_view what);
  StatusOr<ir::Type> ReadValueType(Cursor& c, std::string_view what);
  StatusOr<DType> ReadElementType(Cursor& c, std::string_view what);
  // Optional attribute reference: VarInt-with-flag; returns nullptr when absent.
  StatusOr<const ir::Attribute*> ReadOptionalAttr(Cursor& c, std::string_view what);
  StatusOr<std::string_view> ReadSharedString(Cursor& c, std::string_view what);

 private:
  enum class State : uint8_t { kPending, kInProgress, kDone };

  StatusOr<ir::Attribute> DecodeAttribute(uint32_t index);
  StatusOr<DecodedType> DecodeType(uint32_t index);
  // Dialect decoders; `c` starts at the entry's kind code.
  StatusOr<ir::Attribute> DecodeBuiltinAttribute(Cursor& c, uint32_t index);
  StatusOr<DecodedType> DecodeBuiltinType(Cursor& c);
  StatusOr<ir::Attribute> DecodeVhloAttribute(Cursor& c);
  StatusOr<DecodedType> DecodeVhloType(Cursor& c);
  StatusOr<ir::Attribute> DecodeSdyAttribute(Cursor& c);
  // Locations combine compositionally (the outermost name, the first file position in
  // callee-before-caller order), so each entry is decoded once.
  StatusOr<const ir::Location*> DecodeLocation(uint32_t index);
  StatusOr<ir::Location> DecodeLocationEntry(uint32_t index);

  const BytecodeFile& file_;
  std::vector<State> attr_state_;
  std::vector<std::unique_ptr<ir::Attribute>> attrs_;
  std::vector<State> type_state_;
  std::vector<std::unique_ptr<DecodedType>> types_;
  std::vector<State> location_state_;
  std::vector<std::unique_ptr<ir::Location>> locations_;
  int depth_ = 0;
};

// Reads an APInt of bit width `width` (<= 64): a raw byte for <= 8 bits, else a signed
// VarInt of the zero-extended pattern. Returns the low `width` bits.
Status ReadAPIntBits(Cursor& c, int width, uint64_t* bits, std::string_view what);
// Sign-extends the low `width` bits of `bits`.
int64_t SignExtend(uint64_t bits, int width);

// Dense element data of `type` (a static tensor type) from a raw MLIR dense blob:
// splats are expanded, i1 data unpacked to one byte per element, sub-byte signed
// integers sign-extended. `c` locates errors.
StatusOr<ir::Attribute::Elements> DenseElementsFromBlob(const Cursor& c, const ir::Type& type,
                                                        std::string_view blob);

}  // namespace stablert::stablehlo
