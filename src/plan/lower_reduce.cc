// Lowering of stablehlo.reduce whose body is one recognized binary op.
#include <string>

#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

// The reduction a body computes: "add", "mul", "max", "min", "and", "or", or "" if the
// body is not `return op(arg0, arg1)` (either argument order) for one of those ops.
std::string MatchBody(const ir::Module& module, const ir::Region& region, DType dtype) {
  if (region.blocks.size() != 1) return "";
  const ir::Block& block = region.blocks[0];
  if (block.arguments.size() != 2 || block.ops.size() != 2) return "";
  const ir::Operation& body = block.ops[0];
  const ir::Operation& ret = block.ops[1];
  if (ret.code != OpCode::kReturn || ret.operands.size() != 1 || body.results.size() != 1 ||
      ret.operands[0] != body.results[0] || body.operands.size() != 2)
    return "";
  const ir::ValueId a = block.arguments[0], b = block.arguments[1];
  if (!((body.operands[0] == a && body.operands[1] == b) || (body.operands[0] == b && body.operands[1] == a)))
    return "";
  const ir::Type scalar = ir::Type::Tensor(dtype, {});
  for (ir::ValueId v : {a, b, body.results[0]})
    if (v >= module.value_types.size() || module.value_types[v] != scalar) return "";
  const bool is_float = IsFloat(dtype);
  switch (body.code) {
    case OpCode::kAdd: return "add";
    case OpCode::kMultiply: return "mul";
    case OpCode::kMaximum: return "max";
    case OpCode::kMinimum: return "min";
    case OpCode::kAnd: return is_float ? "" : "and";
    case OpCode::kOr: return is_float ? "" : "or";
    default: return "";
  }
}

}  // namespace

Status LowerReduce(Lowering& l, const ir::Operation& op) {
  if (op.operands.size() != 2 || op.results.size() != 1)
    return l.Unsupported(op, "reductions over " + std::to_string(op.operands.size() / 2) +
                                 " operands (variadic reduce) are not supported yet");
  if (op.regions.size() != 1) return l.Invalid(op, "expected one body region");
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId init, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> dimensions, l.IntListAttr(op, "dimensions"));
  const TensorType& in = l.TypeOf(operand);
  if (l.TypeOf(init) != TensorType{in.dtype, {}}) return l.Invalid(op, "init value must be a scalar of the operand type");
  if (result.dtype != in.dtype) return l.Invalid(op, "result element type differs from the operand's");

  std::vector<bool> reduced(in.dims.size(), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(in.dims.size()) || reduced[static_cast<size_t>(d)])
      return l.Invalid(op, "dimensions " + DimsToString(dimensions) + " are out of range or repeated");
    reduced[static_cast<size_t>(d)] = true;
  }
  Dims expected;
  for (size_t i = 0; i < in.dims.size(); ++i)
    if (!reduced[i]) expected.push_back(in.dims[i]);
  if (expected != result.dims)
    return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match reducing " +
                             TensorTypeToString(in) + " over " + DimsToString(dimensions));

  std::string body = MatchBody(l.module(), op.regions[0], in.dtype);
  if (body.empty())
    return l.Unsupported(op, "reduction body is not a single add/multiply/maximum/minimum/and/or of its arguments");
  if (!IsSupportedDType(in.dtype)) return l.Unsupported(op, "element type not supported");
  if (dimensions.empty()) {
    // Nothing reduced: XLA's CPU backend returns the operand unchanged (the init value is
    // taken to be the body's identity), e.g. -0.0 stays -0.0 under an add with init 0.
    l.Bind(op.results[0], operand);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, "reduce_" + body + "." + std::string(DTypeName(in.dtype)), {operand, init}, {out}, {dimensions});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace stablert::plan
