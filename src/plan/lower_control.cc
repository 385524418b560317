// Lowering of control flow: while, if and case become control steps over nested
// sequences (plan.h StepKind).
//
// while: a carried value the body returns unchanged (loop-invariant: lax.scan's xs, a
// weight) is the operand itself, read in place by condition and body; it is no output of
// the step. Every other carried value lives in a fresh buffer, filled by a copy before the
// loop; the condition and body read it; the body ends with copies of its results into them
// (through temporaries when a result is another carried value, so the copies behave as one
// parallel assignment). The op's results are the carried buffers. Later passes remove most
// of these copies: plan/in_place.h makes the step computing a new carried value write the
// carried buffer directly, and buffer assignment drops the copy before the loop when the
// operand dies there.
// if/case: each branch ends with copies of its results into the op's result buffers.
#include <string>

#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

Status CheckReturned(Lowering& l, const ir::Operation& op, const std::vector<ValueId>& returned,
                     const std::vector<TensorType>& expected, std::string_view what) {
  if (returned.size() != expected.size())
    return l.Invalid(op, std::string(what) + " returns " + std::to_string(returned.size()) + " values, expected " +
                             std::to_string(expected.size()));
  for (size_t i = 0; i < returned.size(); ++i)
    if (l.TypeOf(returned[i]) != expected[i])
      return l.Invalid(op, std::string(what) + " result " + std::to_string(i) + " has type " +
                               TensorTypeToString(l.TypeOf(returned[i])) + ", expected " +
                               TensorTypeToString(expected[i]));
  return OkStatus();
}

StatusOr<std::vector<TensorType>> ResultTypes(Lowering& l, const ir::Operation& op) {
  std::vector<TensorType> types;
  for (size_t i = 0; i < op.results.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, i));
    types.push_back(std::move(type));
  }
  return types;
}

Status LowerWhile(Lowering& l, const ir::Operation& op) {
  if (op.regions.size() != 2) return l.Invalid(op, "expected a condition and a body region");
  if (op.operands.size() != op.results.size()) return l.Invalid(op, "operand and result counts differ");
  STABLERT_ASSIGN_OR_RETURN(std::vector<TensorType> types, ResultTypes(l, op));
  // Carried values the body returns as they came (its block argument i returned at i).
  std::vector<bool> invariant(op.operands.size(), false);
  if (op.regions[1].blocks.size() == 1) {
    const ir::Block& block = op.regions[1].blocks[0];
    if (!block.ops.empty() && block.ops.back().code == OpCode::kReturn) {
      const ir::Operation& ret = block.ops.back();
      for (size_t i = 0; i < invariant.size() && i < ret.operands.size() && i < block.arguments.size(); ++i)
        invariant[i] = ret.operands[i] == block.arguments[i];
    }
  }
  std::vector<ValueId> inits, carried;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId init, l.Operand(op, i));
    if (l.TypeOf(init) != types[i]) return l.Invalid(op, "operand " + std::to_string(i) + " type differs from its result");
    inits.push_back(init);
    carried.push_back(invariant[i] ? init : l.NewValue(types[i]));
  }

  Step step;
  step.kind = StepKind::kWhile;
  step.regions.resize(2);
  std::vector<ValueId> cond_returned;
  STABLERT_RETURN_IF_ERROR(l.LowerRegion(op, op.regions[0], carried, &step.regions[0], &cond_returned));
  if (cond_returned.size() != 1 || l.TypeOf(cond_returned[0]) != TensorType{DType::kPred, {}})
    return l.Invalid(op, "condition must return one i1 scalar");

  std::vector<ValueId> body_returned;
  STABLERT_RETURN_IF_ERROR(l.LowerRegion(op, op.regions[1], carried, &step.regions[1], &body_returned));
  STABLERT_RETURN_IF_ERROR(CheckReturned(l, op, body_returned, types, "body"));

  // Parallel assignment carried[i] = body_returned[i].
  std::vector<bool> reads_carried(carried.size(), false);
  for (size_t i = 0; i < carried.size(); ++i)
    for (size_t k = 0; k < carried.size(); ++k)
      if (k != i && !invariant[k] && l.Root(body_returned[i]) == l.Root(carried[k])) reads_carried[i] = true;
  std::vector<ValueId> sources = body_returned;
  // Emit into the body sequence: LowerRegion restored the outer sequence, so append here.
  auto emit_into_body = [&](ValueId from, ValueId to) {
    Step copy;
    copy.kernel = "copy." + std::string(DTypeName(l.TypeOf(to).dtype));
    copy.inputs = {from};
    copy.outputs = {to};
    copy.origin = l.Origin(op);
    step.regions[1].steps.push_back(std::move(copy));
  };
  for (size_t i = 0; i < carried.size(); ++i) {
    if (!reads_carried[i]) continue;
    ValueId temporary = l.NewValue(types[i]);
    emit_into_body(body_returned[i], temporary);
    sources[i] = temporary;
  }
  for (size_t i = 0; i < carried.size(); ++i)
    if (l.Root(sources[i]) != l.Root(carried[i])) emit_into_body(sources[i], carried[i]);

  // The buffers start as the operands (emitted here, after the regions were lowered into
  // their own sequences, so just before the loop).
  for (size_t i = 0; i < carried.size(); ++i)
    if (!invariant[i]) l.EmitCopy(op, inits[i], carried[i]);
  step.inputs = {cond_returned[0]};
  for (size_t i = 0; i < carried.size(); ++i)
    if (!invariant[i]) step.outputs.push_back(carried[i]);
  l.EmitControl(op, std::move(step));
  for (size_t i = 0; i < carried.size(); ++i) l.Bind(op.results[i], carried[i]);
  return OkStatus();
}

// if (regions: true, false) and case (regions: one per index).
Status LowerBranches(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId selector, l.Operand(op, 0));
  const bool is_if = op.code == OpCode::kIf;
  const TensorType expected_selector{is_if ? DType::kPred : DType::kS32, {}};
  if (l.TypeOf(selector) != expected_selector)
    return l.Invalid(op, std::string(is_if ? "predicate" : "index") + " must be a " +
                             TensorTypeToString(expected_selector) + " scalar");
  if (is_if ? op.regions.size() != 2 : op.regions.empty())
    return l.Invalid(op, "unexpected number of branches (" + std::to_string(op.regions.size()) + ")");
  STABLERT_ASSIGN_OR_RETURN(std::vector<TensorType> types, ResultTypes(l, op));
  std::vector<ValueId> results;
  for (const TensorType& type : types) results.push_back(l.NewValue(type));

  Step step;
  step.kind = is_if ? StepKind::kIf : StepKind::kCase;
  step.regions.resize(op.regions.size());
  for (size_t r = 0; r < op.regions.size(); ++r) {
    std::vector<ValueId> returned;
    STABLERT_RETURN_IF_ERROR(l.LowerRegion(op, op.regions[r], {}, &step.regions[r], &returned));
    STABLERT_RETURN_IF_ERROR(CheckReturned(l, op, returned, types, "branch " + std::to_string(r)));
    for (size_t i = 0; i < results.size(); ++i) {
      Step copy;
      copy.kernel = "copy." + std::string(DTypeName(types[i].dtype));
      copy.inputs = {returned[i]};
      copy.outputs = {results[i]};
      copy.origin = l.Origin(op);
      step.regions[r].steps.push_back(std::move(copy));
    }
  }
  step.inputs = {selector};
  step.outputs = results;
  l.EmitControl(op, std::move(step));
  for (size_t i = 0; i < results.size(); ++i) l.Bind(op.results[i], results[i]);
  return OkStatus();
}

}  // namespace

Status LowerControlFlow(Lowering& l, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::kWhile: return LowerWhile(l, op);
    case OpCode::kIf:
    case OpCode::kCase: return LowerBranches(l, op);
    default: return l.Unsupported(op, "op is not supported by the CPU plan yet");
  }
}

}  // namespace stablert::plan
