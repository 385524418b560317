// IR value types: ranked static tensors, tokens and tuples.
// Value types with structural equality; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"

namespace stablert::ir {

struct Type {
  enum class Kind : uint8_t { kTensor, kToken, kTuple };

  Kind kind = Kind::kTensor;
  DType dtype = DType::kInvalid;  // kTensor only
  Dims dims;                      // kTensor only; all static (>= 0)
  std::vector<Type> elements;     // kTuple only

  static Type Tensor(DType dtype, Dims dims) { return Type{Kind::kTensor, dtype, std::move(dims), {}}; }
  static Type Token() { return Type{Kind::kToken, DType::kToken, {}, {}}; }
  static Type Tuple(std::vector<Type> elements) { return Type{Kind::kTuple, DType::kInvalid, {}, std::move(elements)}; }

  bool is_tensor() const { return kind == Kind::kTensor; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool operator==(const Type& other) const = default;
};

// "tensor<2x3xf32>", "tensor<f32>", "!stablehlo.token", "tuple<...>".
std::string TypeToString(const Type& type);

}  // namespace stablert::ir
