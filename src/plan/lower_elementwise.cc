// Lowering of elementwise ops: unary, binary, compare, select, clamp, convert.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/compare_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/reduce_precision_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

enum KindMask : uint8_t { kBool = 1, kSigned = 2, kUnsigned = 4, kFloat = 8, kComplex = 16 };
constexpr uint8_t kInt = kSigned | kUnsigned;
constexpr uint8_t kNumeric = kInt | kFloat;
constexpr uint8_t kAny = kBool | kNumeric;

uint8_t KindBit(DType dtype) {
  switch (DTypeKindOf(dtype)) {
    case DTypeKind::kBool: return kBool;
    case DTypeKind::kSigned: return kSigned;
    case DTypeKind::kUnsigned: return kUnsigned;
    case DTypeKind::kFloat: return kFloat;
    case DTypeKind::kComplex: return kComplex;
    default: return 0;
  }
}

// Element kinds each unary/binary op accepts (0: not supported yet).
uint8_t AllowedKinds(OpCode code) {
  switch (code) {
    case OpCode::kAbs: case OpCode::kSign:
      return kSigned | kFloat | kComplex;
    case OpCode::kNegate:
      return kNumeric | kComplex;
    case OpCode::kReal: case OpCode::kImag:
      return kFloat | kComplex;
    case OpCode::kComplex:
      return kFloat;
    case OpCode::kNot:
      return kBool | kInt;
    case OpCode::kPopcnt: case OpCode::kCountLeadingZeros:
      return kInt;
    case OpCode::kCbrt: case OpCode::kCeil: case OpCode::kFloor: case OpCode::kIsFinite:
    case OpCode::kRoundNearestAfz: case OpCode::kRoundNearestEven:
      return kFloat;
    case OpCode::kCosine: case OpCode::kExponential: case OpCode::kExponentialMinusOne: case OpCode::kLog:
    case OpCode::kLogPlusOne: case OpCode::kLogistic: case OpCode::kRsqrt: case OpCode::kSine: case OpCode::kSqrt:
    case OpCode::kTan: case OpCode::kTanh:
      return kFloat | kComplex;
    case OpCode::kAdd: case OpCode::kMultiply:
      return kAny | kComplex;
    case OpCode::kMaximum: case OpCode::kMinimum:
      return kAny | kComplex;  // complex: by the real parts, as XLA's (complex_ops.h)
    case OpCode::kSubtract: case OpCode::kDivide: case OpCode::kPower:
      return kNumeric | kComplex;
    case OpCode::kRemainder:
      return kNumeric;
    case OpCode::kAtan2:
      return kFloat | kComplex;
    case OpCode::kAnd: case OpCode::kOr: case OpCode::kXor:
      return kBool | kInt;
    case OpCode::kShiftLeft: case OpCode::kShiftRightArithmetic: case OpCode::kShiftRightLogical:
      return kInt;
    default:
      return 0;
  }
}


// The result element type of unary/binary op `code` on `operand`: i1 for is_finite, the
// part type for abs/real/imag of a complex operand, the complex type for complex (only of
// f32/f64; kInvalid otherwise), the operand type for every other op.
DType ResultDType(OpCode code, DType operand) {
  const bool complex = IsComplex(operand);
  const DType part = operand == DType::kC64 ? DType::kF32 : DType::kF64;
  switch (code) {
    case OpCode::kIsFinite: return DType::kPred;
    case OpCode::kAbs: return complex ? part : operand;
    case OpCode::kReal: case OpCode::kImag: return complex ? part : operand;
    case OpCode::kComplex:
      return operand == DType::kF32 ? DType::kC64 : operand == DType::kF64 ? DType::kC128 : DType::kInvalid;
    default: return operand;
  }
}

// "stablehlo.add" -> "add".
std::string ShortName(OpCode code) {
  std::string_view name = ir::OpName(code);
  size_t dot = name.find('.');
  return std::string(dot == std::string_view::npos ? name : name.substr(dot + 1));
}


Status CheckKind(Lowering& l, const ir::Operation& op, DType dtype, uint8_t allowed) {
  if (IsSupportedDType(dtype) && (KindBit(dtype) & allowed)) return OkStatus();
  return l.Unsupported(op, "element type " + std::string(DTypeName(dtype)) + " is not supported for this op");
}

Status LowerUnaryOrBinary(Lowering& l, const ir::Operation& op) {
  const uint8_t allowed = AllowedKinds(op.code);
  if (allowed == 0) return l.Unsupported(op, "op is not supported by the CPU plan yet");
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, i));
    inputs.push_back(value);
  }
  const TensorType& operand = l.TypeOf(inputs[0]);
  for (ValueId input : inputs)
    if (l.TypeOf(input) != operand) return l.Invalid(op, "operands have different types");
  STABLERT_RETURN_IF_ERROR(CheckKind(l, op, operand.dtype, allowed));
  DType expected_result = ResultDType(op.code, operand.dtype);
  if (expected_result == DType::kInvalid)
    return l.Unsupported(op, "element type " + std::string(DTypeName(operand.dtype)) + " is not supported for this op");
  if (result.dims != operand.dims || result.dtype != expected_result)
    return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match operand type " +
                             TensorTypeToString(operand));
  if ((op.code == OpCode::kReal || op.code == OpCode::kImag) && !IsComplex(operand.dtype)) {
    // The specification's real and imag of a floating-point operand: the operand itself,
    // and zeros of its type (as XLA computes them).
    if (op.code == OpCode::kReal) {
      l.Bind(op.results[0], inputs[0]);
      return OkStatus();
    }
    const ValueId zero = l.NewConstant(TensorType{operand.dtype, {}},
                                       std::vector<uint8_t>(static_cast<size_t>(DTypeByteSize(operand.dtype)), 0));
    ValueId out = l.NewValue(result);
    l.Emit(op, KeyFor("broadcast_in_dim", operand.dtype), {zero}, {out}, kernels::BroadcastInDimParams{});
    l.Bind(op.results[0], out);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor(ShortName(op.code), operand.dtype), std::move(inputs), {out});
  l.Bind(op.results[0], out);
  return OkStatus();
}

// VHLO numbering (ir/attribute.h).
enum : int64_t { kNoType = 0, kFloatCompare = 1, kTotalOrder = 2, kSignedCompare = 3, kUnsignedCompare = 4 };

Status LowerCompare(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId lhs, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId rhs, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType& operand = l.TypeOf(lhs);
  if (l.TypeOf(rhs) != operand) return l.Invalid(op, "operands have different types");
  if (result.dtype != DType::kPred || result.dims != operand.dims)
    return l.Invalid(op, "result type must be i1" + DimsToString(operand.dims));
  STABLERT_RETURN_IF_ERROR(CheckKind(l, op, operand.dtype, kAny | kComplex));

  const ir::Attribute* direction_attr = op.attr("comparison_direction");
  const ir::EnumValue* direction = direction_attr ? direction_attr->get<ir::EnumValue>() : nullptr;
  if (direction == nullptr || direction->kind != ir::EnumKind::kComparisonDirection || direction->value < 0 ||
      direction->value > 5)
    return l.Invalid(op, "missing or invalid attribute 'comparison_direction'");
  int64_t type = kNoType;
  if (const ir::Attribute* type_attr = op.attr("compare_type")) {
    const ir::EnumValue* value = type_attr->get<ir::EnumValue>();
    if (value == nullptr || value->kind != ir::EnumKind::kComparisonType || value->value < 0 || value->value > 4)
      return l.Invalid(op, "invalid attribute 'compare_type'");
    type = value->value;
  }
  if (IsComplex(operand.dtype)) {
    // EQ and NE compare both parts; GE, GT, LE and LT are the specification's lexicographic
    // order of (real, imag), as XLA computes them (compare_type FLOAT or none).
    if (type != kNoType && type != kFloatCompare)
      return l.Invalid(op, "compare_type " + std::to_string(type) + " does not fit a complex element type");
    ValueId out = l.NewValue(result);
    l.Emit(op, KeyFor("compare", operand.dtype), {lhs, rhs}, {out},
           kernels::CompareParams{.direction = static_cast<kernels::CompareDirection>(direction->value),
                                  .type = kernels::CompareType::kFloat});
    l.Bind(op.results[0], out);
    return OkStatus();
  }
  const bool is_float = IsFloat(operand.dtype);
  const bool is_signed = DTypeKindOf(operand.dtype) == DTypeKind::kSigned;
  if (type == kNoType) type = is_float ? kFloatCompare : is_signed ? kSignedCompare : kUnsignedCompare;
  const bool consistent = is_float ? (type == kFloatCompare || type == kTotalOrder)
                                   : (type == (is_signed ? kSignedCompare : kUnsignedCompare));
  if (!consistent)
    return l.Invalid(op, "compare_type " + std::to_string(type) + " does not fit element type " +
                             std::string(DTypeName(operand.dtype)));
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("compare", operand.dtype), {lhs, rhs}, {out},
         kernels::CompareParams{.direction = static_cast<kernels::CompareDirection>(direction->value),
                                .type = static_cast<kernels::CompareType>(type)});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerSelect(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId pred, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId on_true, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(ValueId on_false, l.Operand(op, 2));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  if (l.TypeOf(on_true) != result || l.TypeOf(on_false) != result)
    return l.Invalid(op, "on_true, on_false and the result must have one type");
  const TensorType& pred_type = l.TypeOf(pred);
  if (pred_type.dtype != DType::kPred || (!pred_type.dims.empty() && pred_type.dims != result.dims))
    return l.Invalid(op, "pred must be i1, scalar or shaped like the result");
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("select", result.dtype), {pred, on_true, on_false}, {out});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerClamp(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId min, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(ValueId max, l.Operand(op, 2));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  if (l.TypeOf(operand) != result) return l.Invalid(op, "operand and result types differ");
  for (ValueId bound : {min, max}) {
    const TensorType& type = l.TypeOf(bound);
    if (type.dtype != result.dtype || (!type.dims.empty() && type.dims != result.dims))
      return l.Invalid(op, "min and max must be scalars or shaped like the operand, of its element type");
  }
  STABLERT_RETURN_IF_ERROR(CheckKind(l, op, result.dtype, kAny | kComplex));
  if (result.dtype == DType::kPred) {
    // On booleans: maximum is OR and minimum AND, so clamp = (x | min) & max.
    const ValueId at_least = l.NewValue(result);
    ValueId lo = min, hi = max;
    auto shaped = [&](ValueId bound) {
      if (l.TypeOf(bound).dims == result.dims) return bound;
      const ValueId full = l.NewValue(result);
      l.Emit(op, KeyFor("broadcast_in_dim", DType::kPred), {bound}, {full}, kernels::BroadcastInDimParams{});
      return full;
    };
    lo = shaped(lo);
    hi = shaped(hi);
    l.Emit(op, KeyFor("or", DType::kPred), {operand, lo}, {at_least});
    ValueId out = l.NewValue(result);
    l.Emit(op, KeyFor("and", DType::kPred), {at_least, hi}, {out});
    l.Bind(op.results[0], out);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("clamp", result.dtype), {min, operand, max}, {out});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerConvert(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType& from = l.TypeOf(operand);
  if (from.dims != result.dims) return l.Invalid(op, "operand and result shapes differ");
  if (from.dtype == result.dtype) {
    l.Bind(op.results[0], operand);
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, ConvertKeyFor(from.dtype, result.dtype), {operand},
         {out});
  l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerReducePrecision(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(int64_t exponent_bits, l.IntAttr(op, "exponent_bits"));
  STABLERT_ASSIGN_OR_RETURN(int64_t mantissa_bits, l.IntAttr(op, "mantissa_bits"));
  if (l.TypeOf(operand) != result) return l.Invalid(op, "operand and result types differ");
  STABLERT_RETURN_IF_ERROR(CheckKind(l, op, result.dtype, kFloat));
  if (exponent_bits < 1 || mantissa_bits < 0) return l.Invalid(op, "exponent_bits must be >= 1 and mantissa_bits >= 0");
  const int64_t own_exponent = result.dtype == DType::kF16 ? 5 : result.dtype == DType::kF64 ? 11 : 8;
  const int64_t own_mantissa =
      result.dtype == DType::kF16 ? 10 : result.dtype == DType::kBF16 ? 7 : result.dtype == DType::kF32 ? 23 : 52;
  if (exponent_bits >= own_exponent && mantissa_bits >= own_mantissa) {
    l.Bind(op.results[0], operand);  // nothing to reduce
    return OkStatus();
  }
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor("reduce_precision", result.dtype), {operand}, {out},
         kernels::ReducePrecisionParams{.exponent_bits = std::min(exponent_bits, own_exponent),
                                        .mantissa_bits = std::min(mantissa_bits, own_mantissa)});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace

namespace {

// The kernel ("erf", ...) of a chlo composite the lowering runs itself, or "".
std::string_view OwnCompositeKernel(const ir::Module& module, const ir::Operation& op) {
  // The chlo composites with an elementwise kernel of their own ("<kernel>.<T>"), on f32,
  // f16 and bf16 (XLA computes the latter two in f32 too). f64 keeps the decomposition.
  static constexpr std::pair<std::string_view, std::string_view> kKernels[] = {
      {"chlo.erf", "erf"}, {"chlo.erf_inv", "erf_inv"}, {"chlo.lgamma", "lgamma"}, {"chlo.digamma", "digamma"}};
  const ir::Attribute* name_attr = op.attr("name");
  const auto name = name_attr ? name_attr->AsString() : std::nullopt;
  if (!name || op.code != ir::OpCode::kComposite || op.operands.size() != 1 || op.results.size() != 1) return {};
  const ir::Type& operand = module.type_of(op.operands[0]);
  if (!operand.is_tensor() || operand != module.type_of(op.results[0])) return {};
  if (operand.dtype != DType::kF32 && operand.dtype != DType::kF16 && operand.dtype != DType::kBF16) return {};
  for (const auto& [composite, kernel] : kKernels)
    if (*name == composite) return kernel;
  return {};
}

}  // namespace

bool LowersCompositeItself(const ir::Module& module, const ir::Operation& composite) {
  return !OwnCompositeKernel(module, composite).empty();
}

Status LowerMathComposite(Lowering& l, const ir::Operation& op, bool* lowered) {
  *lowered = false;
  const std::string_view kernel = OwnCompositeKernel(l.module(), op);
  if (kernel.empty()) return OkStatus();
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  ValueId out = l.NewValue(result);
  l.Emit(op, KeyFor(kernel, l.TypeOf(operand).dtype), {operand}, {out});
  l.Bind(op.results[0], out);
  *lowered = true;
  return OkStatus();
}

bool ElementwiseAccepts(ir::OpCode code, DType dtype) {
  return IsSupportedDType(dtype) && (KindBit(dtype) & AllowedKinds(code)) != 0;
}

Status LowerElementwise(Lowering& l, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::kCompare: return LowerCompare(l, op);
    case OpCode::kSelect: return LowerSelect(l, op);
    case OpCode::kClamp: return LowerClamp(l, op);
    case OpCode::kConvert: return LowerConvert(l, op);
    case OpCode::kReducePrecision: return LowerReducePrecision(l, op);
    default: return LowerUnaryOrBinary(l, op);
  }
}

}  // namespace stablert::plan
