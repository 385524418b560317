// Lowering of dynamic_slice, dynamic_update_slice, pad, reverse and bitcast_convert.
#include <algorithm>
#include <string>

#include "kernels/slicing_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

// Start-index operands: one integer scalar per dimension of `rank`, from operand `first`.
StatusOr<std::vector<ValueId>> StartIndices(Lowering& l, const ir::Operation& op, size_t first, size_t rank) {
  if (op.operands.size() != first + rank)
    return l.Invalid(op, "expected " + std::to_string(rank) + " start indices, got " +
                             std::to_string(op.operands.size() >= first ? op.operands.size() - first : 0));
  std::vector<ValueId> indices;
  for (size_t i = first; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId index, l.Operand(op, i));
    const TensorType type = l.TypeOf(index);
    if (!type.dims.empty() || !IsInteger(type.dtype)) return l.Invalid(op, "start indices must be integer scalars");
    indices.push_back(index);
  }
  return indices;
}

Status LowerDynamicSlice(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, l.IntListAttr(op, "slice_sizes"));
  const TensorType in = l.TypeOf(operand);
  STABLERT_ASSIGN_OR_RETURN(std::vector<ValueId> indices, StartIndices(l, op, 1, in.dims.size()));
  if (in.dtype != result.dtype || sizes.size() != in.dims.size() || result.dims != sizes)
    return l.Invalid(op, "slice_sizes " + DimsToString(sizes) + " do not match " + TensorTypeToString(in) + " -> " +
                             TensorTypeToString(result));
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || sizes[d] > in.dims[d]) return l.Invalid(op, "slice_sizes exceed the operand");
  std::vector<ValueId> inputs = {operand};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("dynamic_slice", result.dtype), std::move(inputs), {out});  // the sizes are out's dims
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerDynamicUpdateSlice(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId update, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType in = l.TypeOf(operand), upd = l.TypeOf(update);
  STABLERT_ASSIGN_OR_RETURN(std::vector<ValueId> indices, StartIndices(l, op, 2, in.dims.size()));
  if (in != result || upd.dtype != in.dtype || upd.dims.size() != in.dims.size())
    return l.Invalid(op, "operand, update and result types do not fit");
  for (size_t d = 0; d < in.dims.size(); ++d)
    if (upd.dims[d] > in.dims[d]) return l.Invalid(op, "update is larger than the operand");
  std::vector<ValueId> inputs = {operand, update};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("dynamic_update_slice", result.dtype), std::move(inputs), {out});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerPad(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId padding, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> low, l.IntListAttr(op, "edge_padding_low"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> high, l.IntListAttr(op, "edge_padding_high"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> interior, l.IntListAttr(op, "interior_padding"));
  const TensorType in = l.TypeOf(operand);
  const size_t rank = in.dims.size();
  if (l.TypeOf(padding) != TensorType{in.dtype, {}} || result.dtype != in.dtype || low.size() != rank ||
      high.size() != rank || interior.size() != rank || result.dims.size() != rank)
    return l.Invalid(op, "padding attributes or types do not fit " + TensorTypeToString(in));
  for (size_t d = 0; d < rank; ++d) {
    if (interior[d] < 0) return l.Invalid(op, "interior_padding must be non-negative");
    int64_t size = low[d] + high[d] + in.dims[d] + (in.dims[d] > 0 ? (in.dims[d] - 1) * interior[d] : 0);
    if (size != result.dims[d])
      return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match the padding");
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("pad", result.dtype), {operand, padding}, {out},
         kernels::PadParams{.low = low, .high = high, .interior = interior});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerReverse(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, l.IntListAttr(op, "dimensions"));
  const TensorType in = l.TypeOf(operand);
  if (in != result) return l.Invalid(op, "operand and result types differ");
  std::vector<bool> seen(in.dims.size(), false);
  std::vector<int64_t> effective;
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(in.dims.size()) || seen[static_cast<size_t>(d)])
      return l.Invalid(op, "dimensions " + DimsToString(dims) + " are out of range or repeated");
    seen[static_cast<size_t>(d)] = true;
    if (in.dims[static_cast<size_t>(d)] > 1) effective.push_back(d);
  }
  if (effective.empty()) {
    l.Bind(op.results[0], operand);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("reverse", result.dtype), {operand}, {out}, kernels::ReverseParams{.dimensions = effective});
  l.Bind(op.results[0], out);
  return OkStatus();
}

// Same bits, other element type (specification C1; C2: complex only with complex): between widths, the narrower side has
// one trailing dim more, of size wide bits / narrow bits. Widths are the specification's, so
// i1 is 1 bit (tensor<...x8xi1> <-> tensor<...xui8>). Byte-sized types share the bytes (an
// alias); sub-byte types, i1 among them, take one byte per element, so to or from another
// width their bits are repacked ("bitcast_convert.<From>.<To>", kernels/bitcast.cc).
int SpecBits(DType dtype) { return dtype == DType::kPred ? 1 : DTypeBitWidth(dtype); }
bool IsSubByte(DType dtype) { return SpecBits(dtype) < 8; }

// Why `in` cannot be bitcast to `result` (what the element types or shapes must be), or "" if
// it can. Specification C2: complex only to and from complex, whatever the widths.
std::string BitcastTypeError(const TensorType& in, const TensorType& result) {
  if (IsComplex(in.dtype) != IsComplex(result.dtype))
    return "expected both element types complex or neither (specification C2: no bitcast between complex and "
           "non-complex types)";
  const int in_bits = SpecBits(in.dtype), out_bits = SpecBits(result.dtype);
  auto width = [](DType dtype, int bits) {
    return std::string(DTypeName(dtype)) + ": " + std::to_string(bits) + (bits == 1 ? " bit" : " bits");
  };
  const std::string widths = width(in.dtype, in_bits) + ", " + width(result.dtype, out_bits);
  if (in_bits == out_bits)
    return in.dims == result.dims ? "" : "expected the operand's shape " + DimsToString(in.dims) + " (" + widths + ")";
  const int narrow = std::min(in_bits, out_bits), wide = std::max(in_bits, out_bits);
  if (wide % narrow != 0) return "expected widths of which one divides the other (" + widths + ")";
  const int64_t ratio = wide / narrow;
  if (out_bits < in_bits) {
    Dims expected = in.dims;
    expected.push_back(ratio);
    return result.dims == expected ? "" : "expected the result shape " + DimsToString(expected) + " (" + widths + ")";
  }
  if (in.dims.empty() || in.dims.back() != ratio)
    return "expected an operand whose last dimension is " + std::to_string(ratio) + " (" + widths + ")";
  const Dims expected(in.dims.begin(), in.dims.end() - 1);
  return result.dims == expected ? "" : "expected the result shape " + DimsToString(expected) + " (" + widths + ")";
}

Status LowerBitcastConvert(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType in = l.TypeOf(operand);
  const int in_bits = SpecBits(in.dtype), out_bits = SpecBits(result.dtype);
  if (in_bits == 0 || out_bits == 0)
    return l.Invalid(op, "cannot bitcast " + TensorTypeToString(in) + " to " + TensorTypeToString(result));
  if (std::string why = BitcastTypeError(in, result); !why.empty())
    return l.Invalid(op, "cannot bitcast " + TensorTypeToString(in) + " to " + TensorTypeToString(result) + ": " + why);
  if (in_bits == out_bits || (!IsSubByte(in.dtype) && !IsSubByte(result.dtype))) {
    l.Bind(op.results[0], l.NewAlias(operand, result));
    return OkStatus();
  }
  // Kernels exist for 1-, 2- and 4-bit elements to and from every wider width up to 64 bits.
  const int narrow = std::min(in_bits, out_bits), wide = std::max(in_bits, out_bits);
  if (IsComplex(in.dtype) || IsComplex(result.dtype) || (narrow != 1 && narrow != 2 && narrow != 4) ||
      wide > 64 || (wide & (wide - 1)) != 0)
    return l.Unsupported(op, "bitcast_convert between " + std::string(DTypeName(in.dtype)) + " and " +
                                 std::string(DTypeName(result.dtype)) + " is not supported");
  ValueId out = l.NewValue(result);
  l.Emit(op, "bitcast_convert." + std::string(DTypeName(in.dtype)) + "." + std::string(DTypeName(result.dtype)),
         {operand}, {out});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace

Status LowerSlicingOp(Lowering& l, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::kDynamicSlice: return LowerDynamicSlice(l, op);
    case OpCode::kDynamicUpdateSlice: return LowerDynamicUpdateSlice(l, op);
    case OpCode::kPad: return LowerPad(l, op);
    case OpCode::kReverse: return LowerReverse(l, op);
    case OpCode::kBitcastConvert: return LowerBitcastConvert(l, op);
    default: return l.Unsupported(op, "op is not supported by the CPU plan yet");
  }
}

}  // namespace stablert::plan
