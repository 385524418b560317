#include "ir/verifier.h"

#include <string>
#include <vector>

namespace stablert::ir {
namespace {

std::string TypeList(const Module& module, const std::vector<ValueId>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += TypeToString(module.type_of(values[i]));
  }
  return out + ")";
}

std::string TypeList(const std::vector<Type>& types) {
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) out += ", ";
    out += TypeToString(types[i]);
  }
  return out + ")";
}

bool ValidType(const Type& type) {
  switch (type.kind) {
    case Type::Kind::kToken: return true;
    case Type::Kind::kTuple:
      for (const Type& element : type.elements)
        if (!ValidType(element)) return false;
      return true;
    case Type::Kind::kTensor:
      if (type.dtype == DType::kInvalid || type.dtype == DType::kToken) return false;
      for (int64_t d : type.dims)
        if (d < 0) return false;
      return true;
  }
  return false;
}

class Verifier {
 public:
  explicit Verifier(const Module& module)
      : module_(module), state_(module.value_types.size(), kUndefined) {}

  Status Run() {
    for (size_t i = 0; i < module_.value_types.size(); ++i) {
      if (!ValidType(module_.value_types[i])) {
        return Fail("value %" + std::to_string(i) + " has an invalid type " +
                    TypeToString(module_.value_types[i]));
      }
      // Sizes derived from program types (buffers, plans) must not wrap.
      if (module_.value_types[i].is_tensor()) {
        auto bytes = CheckedByteSize(module_.value_types[i].dims, DTypeByteSize(module_.value_types[i].dtype));
        if (!bytes.ok())
          return Fail("value %" + std::to_string(i) + " of type " + TypeToString(module_.value_types[i]) + ": " +
                      std::string(bytes.status().message()));
      }
    }
    for (size_t i = 0; i < module_.functions.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (module_.functions[i].name == module_.functions[j].name) {
          return Fail("function @" + module_.functions[i].name + " is defined twice");
        }
      }
    }
    for (const Function& f : module_.functions) STABLERT_RETURN_IF_ERROR(VerifyFunction(f));
    return OkStatus();
  }

 private:
  static constexpr uint8_t kUndefined = 0, kVisible = 1, kDead = 2;

  Status Fail(const std::string& message) const {
    std::string text = "verifier: ";
    if (function_) text += "in @" + function_->name + ": ";
    return InvalidArgument(text + message);
  }

  Status FailOp(const Operation& op, const std::string& message) const {
    std::string where(OpName(op.code));
    if (op.location != 0 && op.location < module_.locations.size()) {
      where += " (at " + module_.locations[op.location].ToString() + ")";
    }
    return Fail(where + ": " + message);
  }

  Status Define(ValueId id, const Operation* op) {
    if (id >= state_.size()) {
      std::string message = "value %" + std::to_string(id) + " has no type";
      return op ? FailOp(*op, message) : Fail(message);
    }
    if (state_[id] != kUndefined) {
      std::string message = "value %" + std::to_string(id) + " is defined more than once";
      return op ? FailOp(*op, message) : Fail(message);
    }
    state_[id] = kVisible;
    scope_.push_back(id);
    return OkStatus();
  }

  void CloseScope(size_t mark) {
    while (scope_.size() > mark) {
      state_[scope_.back()] = kDead;
      scope_.pop_back();
    }
  }

  Status VerifyFunction(const Function& f) {
    function_ = &f;
    size_t mark = scope_.size();
    if (f.body.blocks.empty()) return Fail("function body has no block");
    const Block& entry = f.body.blocks.front();
    if (entry.arguments.size() != f.argument_types.size()) {
      return Fail("entry block has " + std::to_string(entry.arguments.size()) +
                  " arguments, expected " + std::to_string(f.argument_types.size()) +
                  " from the signature");
    }
    for (size_t i = 0; i < entry.arguments.size(); ++i) {
      ValueId id = entry.arguments[i];
      if (id < module_.value_types.size() && !(module_.type_of(id) == f.argument_types[i])) {
        return Fail("argument " + std::to_string(i) + " has type " +
                    TypeToString(module_.type_of(id)) + ", expected " +
                    TypeToString(f.argument_types[i]) + " from the signature");
      }
    }
    if (f.argument_attrs.size() != f.argument_types.size() ||
        f.result_attrs.size() != f.result_types.size()) {
      return Fail("argument/result attribute lists do not match the signature");
    }
    STABLERT_RETURN_IF_ERROR(VerifyRegion(f.body, /*function_level=*/true));
    CloseScope(mark);
    function_ = nullptr;
    return OkStatus();
  }

  Status VerifyRegion(const Region& region, bool function_level) {
    size_t mark = scope_.size();
    // Block arguments of every block are visible in the region (successor-free CFG).
    for (const Block& block : region.blocks) {
      for (ValueId id : block.arguments) STABLERT_RETURN_IF_ERROR(Define(id, nullptr));
    }
    for (const Block& block : region.blocks) {
      if (block.ops.empty()) return Fail("a block has no operations (missing terminator)");
      for (size_t i = 0; i < block.ops.size(); ++i) {
        const Operation& op = block.ops[i];
        bool terminator = GetOpInfo(op.code).op_class == OpClass::kTerminator;
        bool last = i + 1 == block.ops.size();
        if (terminator && !last) return FailOp(op, "terminator is not the last op of its block");
        if (!terminator && last) {
          return FailOp(op, "the block does not end with a terminator (stablehlo.return)");
        }
        STABLERT_RETURN_IF_ERROR(VerifyOp(op));
        if (terminator && function_level && op.code == OpCode::kReturn) {
          STABLERT_RETURN_IF_ERROR(CheckTypes(op, op.operands, function_->result_types,
                                              "returned values", "the function's results"));
        }
      }
    }
    CloseScope(mark);
    return OkStatus();
  }

  Status CheckTypes(const Operation& op, const std::vector<ValueId>& values,
                    const std::vector<Type>& expected, const char* what, const char* against) {
    bool match = values.size() == expected.size();
    for (size_t i = 0; match && i < values.size(); ++i) {
      match = module_.type_of(values[i]) == expected[i];
    }
    if (!match) {
      return FailOp(op, std::string(what) + " have types " + TypeList(module_, values) +
                            ", expected " + TypeList(expected) + " from " + against);
    }
    return OkStatus();
  }

  Status CheckCount(const Operation& op, int expected, size_t actual, const char* what) {
    if (expected >= 0 && static_cast<size_t>(expected) != actual) {
      return FailOp(op, "has " + std::to_string(actual) + " " + what + ", expected " +
                            std::to_string(expected));
    }
    return OkStatus();
  }

  Status VerifyOp(const Operation& op) {
    const OpInfo& info = GetOpInfo(op.code);
    STABLERT_RETURN_IF_ERROR(CheckCount(op, info.num_operands, op.operands.size(), "operands"));
    STABLERT_RETURN_IF_ERROR(CheckCount(op, info.num_results, op.results.size(), "results"));
    STABLERT_RETURN_IF_ERROR(CheckCount(op, info.num_regions, op.regions.size(), "regions"));
    for (size_t i = 0; i < op.operands.size(); ++i) {
      ValueId id = op.operands[i];
      if (id >= state_.size() || state_[id] != kVisible) {
        return FailOp(op, "operand " + std::to_string(i) + " (%" + std::to_string(id) +
                              ") is not defined before its use");
      }
    }
    for (const Region& region : op.regions) {
      if (region.blocks.empty()) return FailOp(op, "has an empty region");
      STABLERT_RETURN_IF_ERROR(VerifyRegion(region, /*function_level=*/false));
    }
    for (ValueId id : op.results) STABLERT_RETURN_IF_ERROR(Define(id, &op));
    return VerifySemantics(op, info);
  }

  Status VerifySemantics(const Operation& op, const OpInfo& info) {
    if (info.op_class == OpClass::kUnary || info.op_class == OpClass::kBinary) {
      const Type& result = module_.type_of(op.results[0]);
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const Type& operand = module_.type_of(op.operands[i]);
        if (!operand.is_tensor() || !result.is_tensor() || operand.dims != result.dims) {
          return FailOp(op, "operand " + std::to_string(i) + " has type " +
                                TypeToString(operand) + ", expected the shape of the result " +
                                TypeToString(result));
        }
      }
      if (info.op_class == OpClass::kBinary) {
        DType lhs = module_.type_of(op.operands[0]).dtype;
        DType rhs = module_.type_of(op.operands[1]).dtype;
        if (lhs != rhs) {
          return FailOp(op, "operands have element types " + std::string(DTypeName(lhs)) +
                                " and " + std::string(DTypeName(rhs)) + ", expected equal");
        }
        if (op.code != OpCode::kComplex && result.dtype != lhs) {
          return FailOp(op, "result element type " + std::string(DTypeName(result.dtype)) +
                                " differs from the operands' " + std::string(DTypeName(lhs)));
        }
      }
    }
    switch (op.code) {
      case OpCode::kCompare:
      case OpCode::kConvert:
      case OpCode::kSelect:
      case OpCode::kClamp:
        return VerifyElementwiseShapes(op);
      case OpCode::kIf:
      case OpCode::kCase:
        for (const Region& branch : op.regions) {
          STABLERT_RETURN_IF_ERROR(CheckRegionResults(op, branch, op.results, "branch"));
        }
        break;
      case OpCode::kWhile:
        STABLERT_RETURN_IF_ERROR(CheckRegionResults(op, op.regions[1], op.operands, "body"));
        STABLERT_RETURN_IF_ERROR(CheckRegionResults(op, op.regions[1], op.results, "body"));
        break;
      case OpCode::kConstant: {
        const Attribute* value = op.attr("value");
        const auto* elements = value ? value->get<Attribute::Elements>() : nullptr;
        if (!elements || !*elements) return FailOp(op, "lacks a dense 'value' attribute");
        const Type& result = module_.type_of(op.results[0]);
        if (!((*elements)->type == result)) {
          return FailOp(op, "value of type " + TypeToString((*elements)->type) +
                                " does not match the result type " + TypeToString(result));
        }
        break;
      }
      case OpCode::kCall: {
        const Attribute* callee = op.attr("callee");
        const auto* symbol = callee ? callee->get<Attribute::Symbol>() : nullptr;
        if (!symbol) return FailOp(op, "lacks a 'callee' symbol attribute");
        const Function* target = module_.FindFunction(symbol->name);
        if (!target) return FailOp(op, "calls @" + symbol->name + ", which is not defined");
        STABLERT_RETURN_IF_ERROR(CheckTypes(op, op.operands, target->argument_types, "operands",
                                            ("the signature of @" + symbol->name).c_str()));
        STABLERT_RETURN_IF_ERROR(CheckTypes(op, op.results, target->result_types, "results",
                                            ("the signature of @" + symbol->name).c_str()));
        break;
      }
      default:
        break;
    }
    return OkStatus();
  }

  // compare/convert/select/clamp: every tensor operand has the result's shape, except
  // that select's predicate and clamp's bounds may be scalars.
  Status VerifyElementwiseShapes(const Operation& op) {
    const Type& result = module_.type_of(op.results[0]);
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Type& operand = module_.type_of(op.operands[i]);
      bool may_be_scalar = (op.code == OpCode::kSelect && i == 0) ||
                           (op.code == OpCode::kClamp && i != 1);
      if (!operand.is_tensor() || !result.is_tensor()) {
        return FailOp(op, "operand " + std::to_string(i) + " must be a tensor");
      }
      if (operand.dims != result.dims && !(may_be_scalar && operand.dims.empty())) {
        return FailOp(op, "operand " + std::to_string(i) + " has type " +
                              TypeToString(operand) + ", expected the shape of the result " +
                              TypeToString(result));
      }
    }
    if (op.code == OpCode::kCompare && result.dtype != DType::kPred) {
      return FailOp(op, "result must have element type i1, not " +
                            std::string(DTypeName(result.dtype)));
    }
    return OkStatus();
  }

  // The values returned by every block of `region` must have the types of `values`.
  Status CheckRegionResults(const Operation& op, const Region& region,
                            const std::vector<ValueId>& values, const char* what) {
    std::vector<Type> expected;
    expected.reserve(values.size());
    for (ValueId id : values) expected.push_back(module_.type_of(id));
    for (const Block& block : region.blocks) {
      const Operation& terminator = block.ops.back();
      if (terminator.code != OpCode::kReturn) continue;
      STABLERT_RETURN_IF_ERROR(CheckTypes(op, terminator.operands, expected,
                                          (std::string(what) + " results").c_str(),
                                          ("the " + std::string(OpName(op.code)) +
                                           " signature").c_str()));
    }
    return OkStatus();
  }

  const Module& module_;
  std::vector<uint8_t> state_;
  std::vector<ValueId> scope_;
  const Function* function_ = nullptr;
};

}  // namespace

Status Verify(const Module& module) { return Verifier(module).Run(); }

}  // namespace stablert::ir
