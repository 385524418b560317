// Narrow element types in the plan: sub-byte integers (i4, ui4, i2, ui2) and narrow floats
// (the f8 family, f4E2M1FN). Kernels store them one per byte and only move and convert
// them; everything that computes on them runs in a carrier type (CarrierOf: i8/ui8, f16, or
// f32 for f8E8M0FNU, f64 for a few of its ops: CarrierFor): its operands are converted up,
// the op is lowered with its results and the values of its regions (reduction bodies,
// comparators) typed in the carrier, and its results are converted back (integers wrap into
// their range, floats round). This is XLA's CPU backend's own treatment (FloatNormalization
// for narrow floats; body programs round a narrow float to its type after every op,
// body_program.cc, as XLA's normalized bodies do). Wrapping once at the end equals wrapping
// after every step for the ring operations (add, multiply, ...), and comparisons, min/max, select and the bitwise ops are
// exact in the carrier; popcnt counts the carrier's bits, as XLA's CPU backend does, except
// on i2, where XLA counts the two bits alone (popcnt(-2 : i2) = 1, of i4 it counts the
// sign-extended byte: popcnt(-8 : i4) = 5). count_leading_zeros, shift_right_logical, (of
// unsigned types) shift_right_arithmetic and popcnt of i2 see only the narrow type's bits,
// as XLA computes them (LowerNarrowBitOp).
#include <algorithm>
#include <string>

#include "kernels/data_movement_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

bool IsNarrow(DType dtype) { return CarrierOf(dtype) != dtype; }

bool IsNarrowTensor(const ir::Type& type) { return type.is_tensor() && IsNarrow(type.dtype); }

// Ops that compute on element values (data movement, conversions and control flow handle
// narrow types themselves).
bool Computes(const ir::Operation& op) {
  const ir::OpClass op_class = ir::GetOpInfo(op.code).op_class;
  if (op_class == ir::OpClass::kUnary || op_class == ir::OpClass::kBinary) return true;
  switch (op.code) {
    case OpCode::kCompare: case OpCode::kSelect: case OpCode::kClamp: case OpCode::kIota:
    case OpCode::kReduce: case OpCode::kReduceWindow: case OpCode::kSelectAndScatter: case OpCode::kScatter:
    case OpCode::kSort: case OpCode::kDot: case OpCode::kDotGeneral: case OpCode::kConvolution:
      return true;
    default:
      return false;
  }
}

// The type `op` computes a `dtype` value in: CarrierOf(dtype), except f8E8M0FNU through
// ceil, sign and remainder, which compute in f64. In f32 the type's smallest value 2^-127
// is a denormal the kernels flush to 0 (0 is NaN in f8E8M0FNU), while XLA's CPU backend
// keeps it through these ops (ceil and sign: 1, remainder: 2^-127); in f64 it is a normal
// number, and every other value, and each result, is the same as in f32.
DType CarrierFor(const ir::Operation& op, DType dtype) {
  if (dtype == DType::kF8E8M0FNU &&
      (op.code == OpCode::kCeil || op.code == OpCode::kSign || op.code == OpCode::kRemainder))
    return DType::kF64;
  return CarrierOf(dtype);
}

// Every value defined in `op`'s regions (block arguments and op results), recursively.
template <typename Visit>
void ForEachRegionValue(const ir::Operation& op, Visit&& visit) {
  for (const ir::Region& region : op.regions)
    for (const ir::Block& block : region.blocks) {
      for (ir::ValueId argument : block.arguments) visit(argument);
      for (const ir::Operation& inner : block.ops) {
        for (ir::ValueId result : inner.results) visit(result);
        ForEachRegionValue(inner, visit);
      }
    }
}

}  // namespace

Status Lowering::LowerInCarrier(const ir::Operation& op, bool* handled) {
  *handled = false;
  if (carrier_op_ == &op || !Computes(op)) return OkStatus();
  bool narrow = false;
  DType narrow_dtype = DType::kInvalid;
  for (ir::ValueId operand : op.operands) {
    if (operand >= value_map_.size() || value_map_[operand] == kNone) continue;
    const DType dtype = TypeOf(value_map_[operand]).dtype;
    if (IsNarrow(dtype)) narrow = true, narrow_dtype = dtype;
  }
  for (ir::ValueId result : op.results)
    if (result < module_.value_types.size() && IsNarrowTensor(IrType(result)))
      narrow = true, narrow_dtype = IrType(result).dtype;
  ForEachRegionValue(op, [&](ir::ValueId v) {
    if (v < module_.value_types.size() && IsNarrowTensor(IrType(v))) narrow = true;
  });
  if (!narrow) return OkStatus();
  *handled = true;
  if (op.code == OpCode::kCountLeadingZeros || op.code == OpCode::kShiftRightLogical ||
      (op.code == OpCode::kShiftRightArithmetic && DTypeKindOf(narrow_dtype) == DTypeKind::kUnsigned) ||
      (op.code == OpCode::kPopcnt && narrow_dtype == DType::kS2))
    return LowerNarrowBitOp(op, narrow_dtype);

  // Operands up into the carrier (each value once), remembering their own bindings.
  std::vector<std::pair<ir::ValueId, ValueId>> own;
  for (ir::ValueId operand : op.operands) {
    if (operand >= value_map_.size() || value_map_[operand] == kNone) continue;
    if (std::any_of(own.begin(), own.end(), [&](const auto& entry) { return entry.first == operand; })) continue;
    const TensorType type = TypeOf(value_map_[operand]);
    if (!IsNarrow(type.dtype)) continue;
    const DType carrier = CarrierFor(op, type.dtype);
    const ValueId wide = NewValue(TensorType{carrier, type.dims});
    Emit(op, ConvertKeyFor(type.dtype, carrier), {value_map_[operand]}, {wide});
    own.emplace_back(operand, value_map_[operand]);
    value_map_[operand] = wide;
  }
  std::vector<ir::ValueId> retyped;
  auto retype = [&](ir::ValueId v) {
    if (v >= module_.value_types.size()) return;
    const ir::Type& type = IrType(v);
    if (!IsNarrowTensor(type)) return;
    ir::Type wide = type;
    wide.dtype = CarrierFor(op, type.dtype);
    type_override_[v] = wide;
    retyped.push_back(v);
  };
  for (ir::ValueId result : op.results) retype(result);
  ForEachRegionValue(op, retype);

  carrier_op_ = &op;
  Status status = LowerOp(op);
  carrier_op_ = nullptr;
  for (const auto& [operand, value] : own) value_map_[operand] = value;
  if (status.ok()) {
    // Results back into their own type: the conversion wraps them into its range.
    for (ir::ValueId result : op.results) {
      auto it = type_override_.find(result);
      if (it == type_override_.end()) continue;
      const ir::Type& type = module_.value_types[result];
      const ValueId back = NewValue(TensorType{type.dtype, type.dims});
      Emit(op, ConvertKeyFor(it->second.dtype, type.dtype), {value_map_[result]}, {back});
      Bind(result, back);
    }
  }
  for (ir::ValueId v : retyped) type_override_.erase(v);
  return status;
}

Status Lowering::LowerNarrowBitOp(const ir::Operation& op, DType narrow) {
  const DType carrier = CarrierOf(narrow);
  const int bits = DTypeBitWidth(narrow);
  STABLERT_ASSIGN_OR_RETURN(ValueId x, Operand(op, 0));
  const TensorType type = TypeOf(x);
  if (type.dtype != narrow) return Invalid(op, "operand and result types differ");
  auto wide = [&](ValueId v) {
    const TensorType t = TypeOf(v);
    const ValueId out = NewValue(TensorType{carrier, t.dims});
    Emit(op, ConvertKeyFor(t.dtype, carrier), {v}, {out});
    return out;
  };
  auto splat = [&](int64_t value) {
    const ValueId scalar = NewConstant(TensorType{carrier, {}}, {static_cast<uint8_t>(value)});
    const ValueId out = NewValue(TensorType{carrier, type.dims});
    Emit(op, KeyFor("broadcast_in_dim", carrier), {scalar}, {out}, kernels::BroadcastInDimParams{});
    return out;
  };
  auto binary = [&](std::string_view kernel, ValueId a, ValueId b) {
    const ValueId out = NewValue(TensorType{carrier, type.dims});
    Emit(op, KeyFor(kernel, carrier), {a, b}, {out});
    return out;
  };
  if (op.code == OpCode::kShiftRightArithmetic) {
    // Unsigned too: the narrow type's top bit is the sign that fills, as XLA computes it.
    const DType as_signed = bits == 4 ? DType::kS4 : DType::kS2;
    STABLERT_ASSIGN_OR_RETURN(ValueId amount, Operand(op, 1));
    if (TypeOf(amount) != type) return Invalid(op, "operand types differ");
    const ValueId signed_x = NewAlias(x, TensorType{as_signed, type.dims});
    const ValueId shifted = NewValue(TensorType{DType::kS8, type.dims});
    const ValueId amount_wide = wide(amount);
    const ValueId x_wide = NewValue(TensorType{DType::kS8, type.dims});
    Emit(op, ConvertKeyFor(as_signed, DType::kS8), {signed_x}, {x_wide});
    const ValueId amount_signed = NewValue(TensorType{DType::kS8, type.dims});
    Emit(op, ConvertKeyFor(carrier, DType::kS8), {amount_wide}, {amount_signed});
    Emit(op, KeyFor("shift_right_arithmetic", DType::kS8), {x_wide, amount_signed}, {shifted});
    STABLERT_ASSIGN_OR_RETURN(TensorType result_type, ResultType(op, 0));
    if (result_type != type) return Invalid(op, "result type differs from the operand's");
    const ValueId back = NewValue(type);
    Emit(op, ConvertKeyFor(DType::kS8, narrow), {shifted}, {back});
    Bind(op.results[0], back);
    return OkStatus();
  }
  // The narrow type's bits, zero-extended.
  const ValueId bits_only = binary("and", wide(x), splat((int64_t{1} << bits) - 1));
  ValueId result;
  if (op.code == OpCode::kPopcnt) {
    result = NewValue(TensorType{carrier, type.dims});
    Emit(op, KeyFor("popcnt", carrier), {bits_only}, {result});
  } else if (op.code == OpCode::kCountLeadingZeros) {
    const ValueId zeros = NewValue(TensorType{carrier, type.dims});
    Emit(op, KeyFor("count_leading_zeros", carrier), {bits_only}, {zeros});
    result = binary("subtract", zeros, splat(8 - bits));
  } else {
    // A shift by the narrow width or more gives 0 here too: the value has only `bits` bits,
    // and a negative amount is a large unsigned one in the carrier as in the narrow type.
    STABLERT_ASSIGN_OR_RETURN(ValueId amount, Operand(op, 1));
    if (TypeOf(amount) != type) return Invalid(op, "operand types differ");
    result = binary("shift_right_logical", bits_only, wide(amount));
  }
  STABLERT_ASSIGN_OR_RETURN(TensorType result_type, ResultType(op, 0));
  if (result_type != type) return Invalid(op, "result type differs from the operand's");
  const ValueId back = NewValue(type);
  Emit(op, ConvertKeyFor(carrier, narrow), {result}, {back});
  Bind(op.results[0], back);
  return OkStatus();
}

}  // namespace stablert::plan
