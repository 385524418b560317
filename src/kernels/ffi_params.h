// Parameters of the "ffi_call" kernel (kernels/ffi_call.cc): a custom call to a handler
// registered through XLA's FFI (kernels/ffi_registry.h), and the attribute tree the handler
// receives, as plan/lower_ffi.cc decodes it from the op's backend_config dictionary.
//
// The attribute tree travels in the plan as a printable encoding (hex of a compact binary
// form, EncodeFfiAttributes) so that FfiCallParams stays a plain parameter struct (printing,
// equality, serialization). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"

namespace stablert::kernels {

// One FFI attribute (XLA_FFI_AttrType): a scalar, a string, a flat array of scalars, or a
// dictionary of named attributes.
struct FfiAttribute {
  enum class Kind : uint8_t { kScalar, kString, kArray, kDictionary };
  Kind kind = Kind::kScalar;
  DType dtype = DType::kInvalid;  // scalar and array elements (booleans as pred, one byte)
  std::string bytes;              // scalar: one element; array: the elements; string: the text
  std::vector<std::string> names;     // dictionary: field names
  std::vector<FfiAttribute> fields;   // dictionary: field values, same order as `names`
};

// A dictionary of attributes (the call's top level).
struct FfiAttributes {
  std::vector<std::string> names;
  std::vector<FfiAttribute> values;
};

// The printable encoding of `attributes`, dictionaries sorted by name at every level (as
// XLA passes them to handlers).
std::string EncodeFfiAttributes(const FfiAttributes& attributes);
// The tree EncodeFfiAttributes encoded; InvalidArgument for anything else.
StatusOr<FfiAttributes> DecodeFfiAttributes(std::string_view encoded);

class KernelRegistry;
// Registers "ffi_call" (kernels/ffi_call.cc); called by RegisterCpuKernels. Declared here
// rather than in families.h to keep that widely included header unchanged.
Status RegisterFfiKernels(KernelRegistry& registry);

struct FfiCallParams {
  static constexpr std::string_view kFamily = "ffi_call";
  std::string target;      // the custom call target name, looked up in kernels/ffi_registry.h
  std::string attributes;  // EncodeFfiAttributes
  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("target", target);
    visit("attributes", attributes);
  }
};

}  // namespace stablert::kernels
