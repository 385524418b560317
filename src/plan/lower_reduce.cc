// Lowering of stablehlo.reduce (one recognized binary op as body: a dedicated kernel;
// any other body: a body program) and stablehlo.sort (a recognized order on the first
// operand: a sort on integer keys, plan/sort_comparator.h; any other comparator: a body program).
#include <cstdint>
#include <string>

#include "kernels/argminmax.h"
#include "kernels/argminmax_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/program_params.h"
#include "kernels/reduce_params.h"
#include "kernels/sort_params.h"
#include "plan/lowering.h"
#include "plan/sort_comparator.h"

namespace stablert::plan {

using ir::OpCode;

std::string MatchReductionBody(const Lowering& l, const ir::Region& region, DType dtype) {
  if (region.blocks.size() != 1) return "";
  const ir::Block& block = region.blocks[0];
  if (block.arguments.size() != 2 || block.ops.size() < 2 || block.ops.size() > 3) return "";
  const ir::Operation& body = block.ops[0];
  const ir::Operation& ret = block.ops.back();
  if (ret.code != OpCode::kReturn || ret.operands.size() != 1 || body.results.size() != 1 || body.operands.size() != 2)
    return "";
  ir::ValueId returned = ret.operands[0];
  if (block.ops.size() == 3) {
    // A sharding constraint on the result (JAX adds them in shard_map bodies) renames it.
    const ir::Operation& constraint = block.ops[1];
    if (constraint.code != OpCode::kSdyShardingConstraint || constraint.operands.size() != 1 ||
        constraint.results.size() != 1 || constraint.results[0] != returned)
      return "";
    returned = constraint.operands[0];
  }
  if (returned != body.results[0]) return "";
  const ir::ValueId a = block.arguments[0], b = block.arguments[1];
  if (!((body.operands[0] == a && body.operands[1] == b) || (body.operands[0] == b && body.operands[1] == a)))
    return "";
  const ir::Type scalar = ir::Type::Tensor(dtype, {});
  for (ir::ValueId v : {a, b, body.results[0]}) {
    if (v >= l.module().value_types.size() || l.IrType(v) != scalar) return "";
    // A narrow float body computed in its carrier rounds after every step: a body program.
    const DType own = l.module().value_types[v].dtype;
    if (IsFloat(own) && CarrierOf(own) != own) return "";
  }
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

// Whether `index` is computed by an iota step of the sequence being lowered whose indices
// count along `dimension` (and fit its type).
bool IsIotaAlong(Lowering& l, ValueId index, int64_t dimension) {
  const TensorType type = l.TypeOf(index);
  if (type.dtype != DType::kS32 && type.dtype != DType::kS64) return false;
  if (type.dtype == DType::kS32 && type.dims[static_cast<size_t>(dimension)] > INT32_MAX) return false;
  const std::vector<Step>& steps = l.current_sequence()->steps;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (it->kind != StepKind::kKernel || it->outputs.size() != 1 || it->outputs[0] != index) continue;
    const auto* iota = it->params.As<kernels::IotaParams>();
    return it->kernel.rfind("iota.", 0) == 0 && iota != nullptr && iota->dimension == dimension;
  }
  return false;
}

Status LowerReduce(Lowering& l, const ir::Operation& op) {
  const size_t n = op.results.size();
  if (n == 0 || op.operands.size() != 2 * n) return l.Invalid(op, "expected N operands, N init values and N results");
  if (op.regions.size() != 1) return l.Invalid(op, "expected one body region");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> dimensions, l.IntListAttr(op, "dimensions"));
  std::vector<ValueId> operands, inits;
  std::vector<TensorType> results;
  for (size_t i = 0; i < n; ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, i));
    STABLERT_ASSIGN_OR_RETURN(ValueId init, l.Operand(op, n + i));
    STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, i));
    operands.push_back(operand);
    inits.push_back(init);
    results.push_back(result);
  }
  const TensorType in = l.TypeOf(operands[0]);
  std::vector<bool> reduced(in.dims.size(), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(in.dims.size()) || reduced[static_cast<size_t>(d)])
      return l.Invalid(op, "dimensions " + DimsToString(dimensions) + " are out of range or repeated");
    reduced[static_cast<size_t>(d)] = true;
  }
  Dims expected;
  for (size_t i = 0; i < in.dims.size(); ++i)
    if (!reduced[i]) expected.push_back(in.dims[i]);
  for (size_t i = 0; i < n; ++i) {
    const TensorType type = l.TypeOf(operands[i]);
    if (type.dims != in.dims) return l.Invalid(op, "operands must have one shape");
    if (l.TypeOf(inits[i]) != TensorType{type.dtype, {}})
      return l.Invalid(op, "init value " + std::to_string(i) + " must be a scalar of its operand's type");
    if (results[i] != TensorType{type.dtype, expected})
      return l.Invalid(op, "result type " + TensorTypeToString(results[i]) + " does not match reducing " +
                               TensorTypeToString(type) + " over " + DimsToString(dimensions));
  }
  if (dimensions.empty()) {
    // Nothing reduced: XLA's CPU backend returns the operands unchanged (the init values
    // are taken to be the body's identity), e.g. -0.0 stays -0.0 under an add with init 0.
    for (size_t i = 0; i < n; ++i) l.Bind(op.results[i], operands[i]);
    return OkStatus();
  }

  std::vector<ValueId> outs;
  for (const TensorType& result : results) outs.push_back(l.NewValue(result));
  std::string body = n == 1 ? MatchReductionBody(l, op.regions[0], in.dtype) : "";
  if (!body.empty()) {
    l.Emit(op, "reduce_" + body + "." + std::string(DTypeName(in.dtype)), {operands[0], inits[0]}, outs,
           kernels::ReduceParams{.dimensions = dimensions});
  } else {
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> program, CompileBodyProgram(l, op, op.regions[0]));
    // JAX's argmax/argmin: values and an iota of their positions along the one reduced
    // dimension. The kernel counts the positions itself, so the iota is not read (and, read
    // by nothing else, dropped with the dead steps).
    const kernels::ArgKind kind = n == 2 && dimensions.size() == 1 ? kernels::MatchArgMinMaxBody(program)
                                                                    : kernels::ArgKind::kNone;
    if (kind != kernels::ArgKind::kNone && IsIotaAlong(l, operands[1], dimensions[0])) {
      l.Emit(op, "argminmax." + std::string(DTypeName(in.dtype)) + "." + std::string(DTypeName(l.TypeOf(operands[1]).dtype)),
             {operands[0], inits[0], inits[1]}, outs,
             kernels::ArgMinMaxParams{.dimension = dimensions[0], .is_max = kind == kernels::ArgKind::kArgMax});
      for (size_t i = 0; i < n; ++i) l.Bind(op.results[i], outs[i]);
      return OkStatus();
    }
    std::vector<ValueId> inputs = operands;
    inputs.insert(inputs.end(), inits.begin(), inits.end());
    l.Emit(op, "reduce_program", std::move(inputs), outs,
           kernels::ReduceProgramParams{.dimensions = dimensions, .body = std::move(program)});
  }
  for (size_t i = 0; i < n; ++i) l.Bind(op.results[i], outs[i]);
  return OkStatus();
}

Status LowerSort(Lowering& l, const ir::Operation& op) {
  const size_t n = op.results.size();
  if (n == 0 || op.operands.size() != n) return l.Invalid(op, "expected as many operands as results");
  if (op.regions.size() != 1) return l.Invalid(op, "expected one comparator region");
  STABLERT_ASSIGN_OR_RETURN(int64_t dimension, l.IntAttr(op, "dimension"));
  bool is_stable = false;
  if (const ir::Attribute* stable = op.attr("is_stable")) is_stable = stable->AsBool().value_or(false);
  std::vector<ValueId> operands;
  for (size_t i = 0; i < n; ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, i));
    STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, i));
    if (l.TypeOf(operand) != result) return l.Invalid(op, "operand and result types differ");
    if (i > 0 && result.dims != l.TypeOf(operands[0]).dims) return l.Invalid(op, "operands must have one shape");
    operands.push_back(operand);
  }
  const int64_t rank = static_cast<int64_t>(l.TypeOf(operands[0]).dims.size());
  if (dimension < 0) dimension += rank;
  if (dimension < 0 || dimension >= rank) return l.Invalid(op, "dimension is out of range");
  std::vector<ValueId> outs;
  for (ValueId operand : operands) outs.push_back(l.NewValue(l.TypeOf(operand)));
  // A comparator that orders by the first operand's values: a sort on integer keys, stable
  // whether or not is_stable asks for it (as the body program path).
  const TensorType key = l.TypeOf(operands[0]);
  const std::optional<SortComparatorOrder> order = MatchSortComparator(l, op.regions[0], n);
  if (order && op.regions[0].blocks[0].arguments.size() == 2 * n &&
      l.module().value_types[op.regions[0].blocks[0].arguments[0]].dtype == key.dtype &&
      key.dims[static_cast<size_t>(dimension)] < (int64_t{1} << 32)) {
    l.Emit(op, std::string(n == 1 ? "sort_keys." : "sort_by_key.") + std::string(DTypeName(key.dtype)),
           std::move(operands), outs,
           kernels::SortParams{.dimension = dimension, .order = order->order, .descending = order->descending});
    for (size_t i = 0; i < n; ++i) l.Bind(op.results[i], outs[i]);
    return OkStatus();
  }
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> program, CompileBodyProgram(l, op, op.regions[0]));
  l.Emit(op, "sort_program", std::move(operands), outs,
         kernels::SortProgramParams{.dimension = dimension, .is_stable = is_stable, .comparator = std::move(program)});
  for (size_t i = 0; i < n; ++i) l.Bind(op.results[i], outs[i]);
  return OkStatus();
}

}  // namespace stablert::plan
