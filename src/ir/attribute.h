// Typed attributes attached to ops, functions, arguments and the module.
//
// An Attribute is an immutable value tree. Dense tensor data (constants, dimension lists
// stored as tensors) is held by shared, immutable storage so copies are cheap.
// Thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/type.h"

namespace stablert::ir {

class Attribute;
using NamedAttribute = std::pair<std::string, Attribute>;

// Dense array data: `type.dims` elements of `type.dtype`, row-major, each element stored in
// DTypeByteSize(dtype) bytes (booleans as 0/1 bytes, sub-byte integers one per byte,
// complex as (real, imag) pairs).
//
// A splat (`splat` true) holds one element in `bytes`, which every element equals: the
// reader keeps large splats (more than kCompactSplatBytes when expanded) in this form, so
// reading and lowering `dense<1.0> : tensor<1048576xf32>` costs the same as a scalar.
// Code that indexes `bytes` directly must handle splats (Element(), Expanded()); small
// attributes (dimension lists, paddings) are always expanded.
struct ElementsData {
  static constexpr int64_t kCompactSplatBytes = 4096;
  Type type;
  std::vector<uint8_t> bytes;
  bool splat = false;

  int64_t NumElements() const;
  // The bytes of element `i` (row-major); `i` must be in range.
  const uint8_t* Element(int64_t i) const;
  // All elements (a copy; materializes a splat).
  std::vector<uint8_t> Expanded() const;
  // Element `i` of an integer or boolean tensor as an int64 (sign- or zero-extended as its
  // type is; u64 keeps its bits); 0 for other element types.
  int64_t IntegerAt(int64_t i) const;
};

// Enumerations that StableHLO attributes carry, with the VHLO numbering of their values.
enum class EnumKind : uint8_t {
  kComparisonDirection,  // EQ=0 NE=1 GE=2 GT=3 LE=4 LT=5
  kComparisonType,       // NOTYPE=0 FLOAT=1 TOTALORDER=2 SIGNED=3 UNSIGNED=4
  kCustomCallApiVersion,
  kFftType,              // FFT=0 IFFT=1 RFFT=2 IRFFT=3
  kPrecision,            // DEFAULT=0 HIGH=1 HIGHEST=2
  kRngAlgorithm,         // DEFAULT=0 THREE_FRY=1 PHILOX=2
  kRngDistribution,      // UNIFORM=1 NORMAL=2
  kTranspose,            // INVALID=0 NO_TRANSPOSE=1 TRANSPOSE=2 ADJOINT=3
  kResultAccuracyMode,
  kChannelType,
};

struct EnumValue {
  EnumKind kind;
  int64_t value;
  bool operator==(const EnumValue&) const = default;
};

// An attribute from a dialect StableRT keeps but does not interpret (e.g. unknown sdy
// attributes): its dialect name and a printable form.
struct OpaqueValue {
  std::string dialect;
  std::string text;
  bool operator==(const OpaqueValue&) const = default;
};

class Attribute {
 public:
  struct Unit {
    bool operator==(const Unit&) const = default;
  };
  struct Integer {  // with its element type (i64, i32, ui8, ...)
    int64_t value;
    DType dtype;
    bool operator==(const Integer&) const = default;
  };
  struct Float {
    double value;
    DType dtype;
    bool operator==(const Float&) const = default;
  };
  struct Symbol {  // reference to a function or mesh by name (no '@')
    std::string name;
    bool operator==(const Symbol&) const = default;
  };
  using Array = std::vector<Attribute>;
  using Dictionary = std::vector<NamedAttribute>;
  using Elements = std::shared_ptr<const ElementsData>;

  using Value = std::variant<Unit, bool, Integer, Float, std::string, Symbol, Array, Dictionary,
                             Elements, Type, EnumValue, OpaqueValue>;

  Attribute() : value_(Unit{}) {}
  Attribute(Value value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  const Value& value() const { return value_; }
  template <typename T>
  const T* get() const { return std::get_if<T>(&value_); }

  // Convenience readers; nullopt when the attribute has another kind.
  std::optional<int64_t> AsInt() const;
  std::optional<bool> AsBool() const;
  std::optional<std::string_view> AsString() const;
  // An integer array from a 1-D integer Elements attribute or an Array of Integers.
  std::optional<std::vector<int64_t>> AsIntArray() const;
  // A bool array from a 1-D i1 Elements attribute or an Array of bools.
  std::optional<std::vector<bool>> AsBoolArray() const;

  bool operator==(const Attribute& other) const;

 private:
  Value value_;
};

// Finds `name` in a dictionary; nullptr if absent.
const Attribute* FindAttr(const Attribute::Dictionary& dict, std::string_view name);

std::string AttributeToString(const Attribute& attr);

}  // namespace stablert::ir
