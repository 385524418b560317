#include "ir/type.h"

namespace stablert::ir {

std::string TypeToString(const Type& type) {
  switch (type.kind) {
    case Type::Kind::kToken:
      return "!stablehlo.token";
    case Type::Kind::kTuple: {
      std::string out = "tuple<";
      for (size_t i = 0; i < type.elements.size(); ++i) {
        if (i) out += ", ";
        out += TypeToString(type.elements[i]);
      }
      return out + ">";
    }
    case Type::Kind::kTensor: {
      std::string out = "tensor<";
      for (int64_t d : type.dims) out += std::to_string(d) + "x";
      out += DTypeName(type.dtype);
      return out + ">";
    }
  }
  return "<invalid type>";
}

}  // namespace stablert::ir
