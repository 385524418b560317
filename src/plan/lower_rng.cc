// Lowering of stablehlo.rng_bit_generator and stablehlo.rng to the kernels of
// kernels/rng.cc.
//
// rng_bit_generator: DEFAULT is PHILOX, as on XLA's CPU backend. The state must be u64[2]
// (THREE_FRY) or u64[2] / u64[3] (PHILOX), the shapes XLA accepts; the bits any 8..64-bit
// integer type.
// rng: UNIFORM over f16, bf16, f32, f64, s32, u32, s64, u64 and NORMAL over the floats;
// bounds are scalars of the result type. Each op gets its own Philox key, derived from the
// op's position in the program.
#include <string>

#include "kernels/rng_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

const ir::EnumValue* EnumAttr(const ir::Operation& op, std::string_view name, ir::EnumKind kind) {
  const ir::Attribute* attr = op.attr(name);
  const ir::EnumValue* value = attr ? attr->get<ir::EnumValue>() : nullptr;
  return value != nullptr && value->kind == kind ? value : nullptr;
}

bool IsBitsType(DType dtype) {
  const DTypeKind kind = DTypeKindOf(dtype);
  return (kind == DTypeKind::kSigned || kind == DTypeKind::kUnsigned) && DTypeBitWidth(dtype) >= 8;
}

Status LowerRngBitGenerator(Lowering& l, const ir::Operation& op) {
  const ir::EnumValue* algorithm = EnumAttr(op, "rng_algorithm", ir::EnumKind::kRngAlgorithm);
  if (algorithm == nullptr || algorithm->value < 0 || algorithm->value > 2)
    return l.Invalid(op, "expected attribute 'rng_algorithm' (DEFAULT, THREE_FRY or PHILOX)");
  const bool three_fry = algorithm->value == 1;
  STABLERT_ASSIGN_OR_RETURN(ValueId state, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType state_out, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType bits, l.ResultType(op, 1));
  const TensorType state_in = l.TypeOf(state);
  if (state_out != state_in) return l.Invalid(op, "output state type must equal the initial state type");
  const bool shape_ok = state_in.dims.size() == 1 &&
                        (state_in.dims[0] == 2 || (!three_fry && state_in.dims[0] == 3));
  if (state_in.dtype != DType::kU64 || !shape_ok)
    return l.Unsupported(op, std::string("initial state ") + TensorTypeToString(state_in) + " is not supported; " +
                                 (three_fry ? "THREE_FRY takes tensor<2xui64>"
                                            : "PHILOX (and DEFAULT) take tensor<2xui64> or tensor<3xui64>"));
  if (!IsBitsType(bits.dtype))
    return l.Unsupported(op, "output element type " + std::string(DTypeName(bits.dtype)) +
                                 " is not supported; expected an 8- to 64-bit integer type");
  ValueId new_state = l.NewValue(state_out);
  ValueId out = l.NewValue(bits);
  l.Emit(op, std::string(three_fry ? "rng_bit_generator_three_fry." : "rng_bit_generator_philox.") +
                 std::string(DTypeName(bits.dtype)),
         {state}, {new_state, out});
  l.Bind(op.results[0], new_state);
  l.Bind(op.results[1], out);
  return OkStatus();
}

Status LowerRngDistribution(Lowering& l, const ir::Operation& op) {
  const ir::EnumValue* distribution = EnumAttr(op, "rng_distribution", ir::EnumKind::kRngDistribution);
  if (distribution == nullptr || (distribution->value != 1 && distribution->value != 2))
    return l.Invalid(op, "expected attribute 'rng_distribution' (UNIFORM or NORMAL)");
  const bool normal = distribution->value == 2;
  STABLERT_ASSIGN_OR_RETURN(ValueId a, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId b, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(ValueId shape, l.Operand(op, 2));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType ta = l.TypeOf(a), tb = l.TypeOf(b), ts = l.TypeOf(shape);
  if (!ta.dims.empty() || !tb.dims.empty() || ta.dtype != result.dtype || tb.dtype != result.dtype)
    return l.Invalid(op, "operands a and b must be scalars of the result's element type " +
                             std::string(DTypeName(result.dtype)));
  if (ts.dims.size() != 1 || ts.dims[0] != static_cast<int64_t>(result.dims.size()))
    return l.Invalid(op, "shape operand must be a 1-D tensor with one entry per result dimension");
  const DType d = result.dtype;
  const bool is_float = d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64;
  const bool is_wide_int = d == DType::kS32 || d == DType::kU32 || d == DType::kS64 || d == DType::kU64;
  if (normal ? !is_float : !(is_float || is_wide_int))
    return l.Unsupported(op, std::string(normal ? "NORMAL" : "UNIFORM") + " over element type " +
                                 std::string(DTypeName(d)) + " is not supported; expected " +
                                 (normal ? "f16, bf16, f32 or f64" : "a float or a 32/64-bit integer type"));
  // A per-op key: the op's first result id, mixed (splitmix64 finalizer).
  uint64_t key = 0x9E3779B97F4A7C15ull * (uint64_t{op.results[0]} + 1);
  key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
  key ^= key >> 31;
  ValueId out = l.NewValue(result);
  l.Emit(op, std::string(normal ? "rng_normal." : "rng_uniform.") + std::string(DTypeName(d)), {a, b}, {out},
         kernels::RngParams{.key = key});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace

Status LowerRng(Lowering& l, const ir::Operation& op) {
  if (op.code == ir::OpCode::kRngBitGenerator) return LowerRngBitGenerator(l, op);
  return LowerRngDistribution(l, op);
}

}  // namespace stablert::plan
