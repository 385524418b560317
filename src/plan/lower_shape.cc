// Lowering of constants and shape/data-movement ops.
#include <string>

#include "kernels/data_movement_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

std::string ListToString(const std::vector<int64_t>& list) { return DimsToString(list); }

// Whether placing operand dim i at position map[i] keeps the order of the operand's
// non-unit dims, so that a broadcast inserting only unit dims, or a transpose moving only
// unit dims, leaves every element at its row-major position.
bool IsOrderPreserving(const std::vector<int64_t>& map, const Dims& operand_dims) {
  int64_t last = -1;
  for (size_t i = 0; i < map.size(); ++i) {
    if (operand_dims[i] == 1) continue;
    if (map[i] <= last) return false;
    last = map[i];
  }
  return true;
}

Status LowerConstant(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const ir::Attribute* attr = op.attr("value");
  const ir::Attribute::Elements* elements = attr ? attr->get<ir::Attribute::Elements>() : nullptr;
  if (elements == nullptr || *elements == nullptr) return l.Invalid(op, "missing dense attribute 'value'");
  const ir::ElementsData& data = **elements;
  if (data.type.dtype != result.dtype || data.type.dims != result.dims)
    return l.Invalid(op, "value of type " + ir::TypeToString(data.type) + " does not match the result type " +
                             TensorTypeToString(result));
  if (data.splat) {
    // A large splat: one scalar constant broadcast when the program runs (a stride-0 view
    // for the readers fold_views.cc reaches), never a full-size copy at compile time.
    if (static_cast<int64_t>(data.bytes.size()) != DTypeByteSize(result.dtype))
      return l.Invalid(op, "splat value holds " + std::to_string(data.bytes.size()) + " bytes, expected one element");
    std::vector<uint8_t> element = data.bytes;
    if (result.dtype == DType::kPred) element[0] = element[0] != 0;
    ValueId scalar = l.NewConstant(TensorType{result.dtype, {}}, std::move(element));
    ValueId out = l.NewValue(result);
    l.Emit(op, KeyFor("broadcast_in_dim", result.dtype), {scalar}, {out},
           kernels::BroadcastInDimParams{.dimensions = {}});
    l.Bind(op.results[0], out);
    return OkStatus();
  }
  if (static_cast<int64_t>(data.bytes.size()) != ByteSize(result))
    return l.Invalid(op, "value holds " + std::to_string(data.bytes.size()) + " bytes, expected " +
                             std::to_string(ByteSize(result)));
  std::vector<uint8_t> bytes = data.bytes;
  if (result.dtype == DType::kPred)
    for (uint8_t& byte : bytes) byte = byte != 0;
  ValueId value = l.NewConstant(result, std::move(bytes));
  l.Bind(op.results[0], value);
  return OkStatus();
}

// broadcast_in_dim, and the older broadcast (new leading dims).
Status LowerBroadcast(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType& in = l.TypeOf(operand);
  std::vector<int64_t> dims;
  if (op.code == OpCode::kBroadcast) {
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, l.IntListAttr(op, "broadcast_sizes"));
    for (size_t i = 0; i < in.dims.size(); ++i) dims.push_back(static_cast<int64_t>(sizes.size() + i));
  } else {
    STABLERT_ASSIGN_OR_RETURN(dims, l.IntListAttr(op, "broadcast_dimensions"));
  }
  if (result.dtype != in.dtype) return l.Invalid(op, "operand and result element types differ");
  if (dims.size() != in.dims.size())
    return l.Invalid(op, "broadcast_dimensions " + ListToString(dims) + " must have one entry per operand dimension");
  std::vector<bool> used(result.dims.size(), false);
  bool identity = in.dims.size() == result.dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= static_cast<int64_t>(result.dims.size()) || used[static_cast<size_t>(d)])
      return l.Invalid(op, "broadcast_dimensions " + ListToString(dims) + " are out of range or repeated");
    used[static_cast<size_t>(d)] = true;
    if (in.dims[i] != 1 && in.dims[i] != result.dims[static_cast<size_t>(d)])
      return l.Invalid(op, "operand dimension " + std::to_string(i) + " of size " + std::to_string(in.dims[i]) +
                               " cannot broadcast to size " + std::to_string(result.dims[static_cast<size_t>(d)]));
    if (d != static_cast<int64_t>(i)) identity = false;
  }
  if (identity && in.dims == result.dims) {
    l.Bind(op.results[0], operand);
    return OkStatus();
  }
  // Only unit dims inserted (same elements, same order): the same bytes under other dims.
  if (ElementCount(in.dims) == ElementCount(result.dims) && IsOrderPreserving(dims, in.dims)) {
    l.Bind(op.results[0], l.NewAlias(operand, result));
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("broadcast_in_dim", result.dtype), {operand}, {out}, kernels::BroadcastInDimParams{.dimensions = dims});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerReshape(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType& in = l.TypeOf(operand);
  if (in.dtype != result.dtype || ElementCount(in.dims) != ElementCount(result.dims))
    return l.Invalid(op, "cannot reshape " + TensorTypeToString(in) + " to " + TensorTypeToString(result));
  l.Bind(op.results[0], in.dims == result.dims ? operand : l.NewAlias(operand, result));
  return OkStatus();
}

Status LowerTranspose(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> permutation, l.IntListAttr(op, "permutation"));
  const TensorType& in = l.TypeOf(operand);
  if (in.dtype != result.dtype || permutation.size() != in.dims.size() || result.dims.size() != in.dims.size())
    return l.Invalid(op, "permutation " + ListToString(permutation) + " does not fit " + TensorTypeToString(in) +
                             " -> " + TensorTypeToString(result));
  std::vector<bool> seen(in.dims.size(), false);
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) {
    int64_t p = permutation[i];
    if (p < 0 || p >= static_cast<int64_t>(in.dims.size()) || seen[static_cast<size_t>(p)])
      return l.Invalid(op, "permutation " + ListToString(permutation) + " is not a permutation");
    seen[static_cast<size_t>(p)] = true;
    if (result.dims[i] != in.dims[static_cast<size_t>(p)])
      return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match the permuted operand");
    if (p != static_cast<int64_t>(i)) identity = false;
  }
  if (identity) {
    l.Bind(op.results[0], operand);
    return OkStatus();
  }
  // Only unit dims move (the others keep their order): the same bytes under other dims.
  std::vector<int64_t> position(permutation.size());  // where each operand dim goes
  for (size_t i = 0; i < permutation.size(); ++i)
    position[static_cast<size_t>(permutation[i])] = static_cast<int64_t>(i);
  if (IsOrderPreserving(position, in.dims)) {
    l.Bind(op.results[0], l.NewAlias(operand, result));
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("transpose", result.dtype), {operand}, {out}, kernels::TransposeParams{.permutation = permutation});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerSlice(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> start, l.IntListAttr(op, "start_indices"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> limit, l.IntListAttr(op, "limit_indices"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, l.IntListAttr(op, "strides"));
  const TensorType& in = l.TypeOf(operand);
  const size_t rank = in.dims.size();
  if (in.dtype != result.dtype || start.size() != rank || limit.size() != rank || strides.size() != rank ||
      result.dims.size() != rank)
    return l.Invalid(op, "start/limit/strides must have one entry per dimension of " + TensorTypeToString(in));
  for (size_t i = 0; i < rank; ++i) {
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > in.dims[i] || strides[i] <= 0)
      return l.Invalid(op, "slice [" + std::to_string(start[i]) + ":" + std::to_string(limit[i]) + ":" +
                               std::to_string(strides[i]) + "] is out of range for dimension " + std::to_string(i) +
                               " of " + TensorTypeToString(in));
    int64_t size = (limit[i] - start[i] + strides[i] - 1) / strides[i];
    if (size != result.dims[i])
      return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match the slice");
  }
  if (result.dims == in.dims) {
    l.Bind(op.results[0], operand);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("slice", result.dtype), {operand}, {out},
         kernels::SliceParams{.start = start, .limit = limit, .stride = strides});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerConcatenate(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(int64_t dimension, l.IntAttr(op, "dimension"));
  if (op.operands.empty()) return l.Invalid(op, "needs at least one operand");
  if (dimension < 0 || dimension >= static_cast<int64_t>(result.dims.size()))
    return l.Invalid(op, "dimension " + std::to_string(dimension) + " is out of range");
  const size_t dim = static_cast<size_t>(dimension);
  std::vector<ValueId> inputs;
  int64_t total = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, i));
    const TensorType& type = l.TypeOf(value);
    if (type.dtype != result.dtype || type.dims.size() != result.dims.size())
      return l.Invalid(op, "operand " + std::to_string(i) + " type " + TensorTypeToString(type) + " does not fit");
    for (size_t d = 0; d < type.dims.size(); ++d)
      if (d != dim && type.dims[d] != result.dims[d])
        return l.Invalid(op, "operand " + std::to_string(i) + " type " + TensorTypeToString(type) + " does not fit");
    total += type.dims[dim];
    inputs.push_back(value);
  }
  if (total != result.dims[dim]) return l.Invalid(op, "operand sizes along the dimension do not add up to the result");
  if (inputs.size() == 1) {
    l.Bind(op.results[0], inputs[0]);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("concatenate", result.dtype), std::move(inputs), {out},
         kernels::ConcatenateParams{.dimension = dimension});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerIota(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(int64_t dimension, l.IntAttr(op, "iota_dimension"));
  if (dimension < 0 || dimension >= static_cast<int64_t>(result.dims.size()))
    return l.Invalid(op, "iota_dimension " + std::to_string(dimension) + " is out of range");
  if (result.dtype == DType::kPred) return l.Unsupported(op, "iota of i1 is not supported");
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("iota", result.dtype), {}, {out}, kernels::IotaParams{.dimension = dimension});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace

Status LowerShapeOp(Lowering& l, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::kConstant: return LowerConstant(l, op);
    case OpCode::kBroadcast:
    case OpCode::kBroadcastInDim: return LowerBroadcast(l, op);
    case OpCode::kReshape: return LowerReshape(l, op);
    case OpCode::kTranspose: return LowerTranspose(l, op);
    case OpCode::kSlice: return LowerSlice(l, op);
    case OpCode::kConcatenate: return LowerConcatenate(l, op);
    case OpCode::kIota: return LowerIota(l, op);
    default: return l.Unsupported(op, "op is not supported by the CPU plan yet");
  }
}

}  // namespace stablert::plan
