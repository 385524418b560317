// Compiles region bodies (reduce, sort comparators) into body programs: straight-line
// scalar code in the encoding kernels/scalar_program.h documents. The opcode numbers
// below mirror kernels::ScalarOp (a runtime test checks every one).
#include <array>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

constexpr int64_t kFormatVersion = 1;
constexpr int64_t kCompare = 70, kSelect = 71, kClamp = 72, kConvert = 73, kCopy = 74;

}  // namespace

int64_t BodyProgramOpcode(OpCode code) {
  switch (code) {
    case OpCode::kNegate: return 1;
    case OpCode::kAbs: return 2;
    case OpCode::kSign: return 3;
    case OpCode::kNot: return 4;
    case OpCode::kPopcnt: return 5;
    case OpCode::kCountLeadingZeros: return 6;
    case OpCode::kExponential: return 7;
    case OpCode::kExponentialMinusOne: return 8;
    case OpCode::kLog: return 9;
    case OpCode::kLogPlusOne: return 10;
    case OpCode::kSqrt: return 11;
    case OpCode::kRsqrt: return 12;
    case OpCode::kCbrt: return 13;
    case OpCode::kTanh: return 14;
    case OpCode::kLogistic: return 15;
    case OpCode::kSine: return 16;
    case OpCode::kCosine: return 17;
    case OpCode::kTan: return 18;
    case OpCode::kFloor: return 19;
    case OpCode::kCeil: return 20;
    case OpCode::kRoundNearestAfz: return 21;
    case OpCode::kRoundNearestEven: return 22;
    case OpCode::kIsFinite: return 23;
    case OpCode::kReal: return 24;
    case OpCode::kImag: return 25;
    case OpCode::kComplex: return 55;
    case OpCode::kAdd: return 40;
    case OpCode::kSubtract: return 41;
    case OpCode::kMultiply: return 42;
    case OpCode::kDivide: return 43;
    case OpCode::kRemainder: return 44;
    case OpCode::kMaximum: return 45;
    case OpCode::kMinimum: return 46;
    case OpCode::kPower: return 47;
    case OpCode::kAtan2: return 48;
    case OpCode::kAnd: return 49;
    case OpCode::kOr: return 50;
    case OpCode::kXor: return 51;
    case OpCode::kShiftLeft: return 52;
    case OpCode::kShiftRightLogical: return 53;
    case OpCode::kShiftRightArithmetic: return 54;
    case OpCode::kCompare: return kCompare;
    case OpCode::kSelect: return kSelect;
    case OpCode::kClamp: return kClamp;
    case OpCode::kConvert: return kConvert;
    default: return 0;
  }
}

StatusOr<std::vector<int64_t>> CompileBodyProgram(const Lowering& l, const ir::Operation& op, const ir::Region& region) {
  const ir::Module& module = l.module();
  if (region.blocks.size() != 1) return l.Unsupported(op, "bodies with more than one block are not supported");
  const ir::Block& block = region.blocks[0];

  std::vector<DType> dtypes;
  std::unordered_map<ir::ValueId, int64_t> registers;
  std::vector<std::pair<int64_t, int64_t>> constants;
  std::vector<std::pair<int64_t, int64_t>> high_constants;  // high 8 bytes of 16-byte constants
  std::vector<int64_t> code;
  int64_t instructions = 0;

  auto scalar_type = [&](ir::ValueId v) -> StatusOr<DType> {
    if (v >= module.value_types.size()) return l.Invalid(op, "body value without a type");
    const ir::Type& type = l.IrType(v);
    if (!type.is_tensor() || !type.dims.empty() || !IsSupportedDType(type.dtype) || CarrierOf(type.dtype) != type.dtype)
      return l.Unsupported(op, "body value of type " + ir::TypeToString(type) + " is not supported");
    return type.dtype;
  };
  auto define = [&](ir::ValueId v) -> StatusOr<int64_t> {
    STABLERT_ASSIGN_OR_RETURN(DType dtype, scalar_type(v));
    int64_t r = static_cast<int64_t>(dtypes.size());
    dtypes.push_back(dtype);
    registers[v] = r;
    return r;
  };
  // A constant scalar register holding `bytes`. A constant of a narrow type (computed in its
  // carrier type, plan/lower_narrow.cc) is held in its own type and converted.
  auto constant = [&](ir::ValueId v, const std::vector<uint8_t>& bytes) -> StatusOr<int64_t> {
    const ir::Type& own = v < module.value_types.size() ? module.value_types[v] : l.IrType(v);
    const bool narrow = own.is_tensor() && own.dims.empty() && IsSupportedDType(own.dtype) &&
                        CarrierOf(own.dtype) != own.dtype;
    int64_t held = 0, r = 0;
    if (narrow) {
      held = static_cast<int64_t>(dtypes.size());
      dtypes.push_back(own.dtype);
      r = static_cast<int64_t>(dtypes.size());
      dtypes.push_back(CarrierOf(own.dtype));
      registers[v] = r;
    } else {
      STABLERT_ASSIGN_OR_RETURN(r, define(v));
      held = r;
    }
    const DType held_type = dtypes[static_cast<size_t>(held)];
    if (bytes.size() != static_cast<size_t>(DTypeByteSize(held_type)))
      return l.Invalid(op, "body constant without a scalar value");
    int64_t bits[2] = {0, 0};
    std::memcpy(bits, bytes.data(), bytes.size());
    if (held_type == DType::kPred) bits[0] = bits[0] != 0;
    constants.emplace_back(held, bits[0]);
    if (bytes.size() > 8) high_constants.emplace_back(held, bits[1]);
    if (narrow) {
      code.insert(code.end(), {kConvert, r, held, 0, 0, 0});
      ++instructions;
    }
    return r;
  };
  // Values defined outside the body may be used if they are constants.
  auto use = [&](ir::ValueId v) -> StatusOr<int64_t> {
    auto it = registers.find(v);
    if (it != registers.end()) return it->second;
    if (const std::vector<uint8_t>* bytes = l.BoundConstant(v)) return constant(v, *bytes);
    return l.Unsupported(op, "body uses a non-constant value defined outside it");
  };

  for (ir::ValueId argument : block.arguments) STABLERT_RETURN_IF_ERROR(define(argument).status());
  const int64_t num_inputs = static_cast<int64_t>(block.arguments.size());

  std::vector<int64_t> outputs;
  bool returned = false;
  for (const ir::Operation& body_op : block.ops) {
    if (body_op.code == OpCode::kReturn) {
      for (ir::ValueId v : body_op.operands) {
        STABLERT_ASSIGN_OR_RETURN(int64_t r, use(v));
        outputs.push_back(r);
      }
      returned = true;
      break;
    }
    const std::string what = "body op " + std::string(ir::OpName(body_op.code));
    if (body_op.results.size() != 1) return l.Unsupported(op, what + " is not supported in a body program");
    if (body_op.code == OpCode::kConstant) {
      const ir::Attribute* attr = body_op.attr("value");
      const ir::Attribute::Elements* elements = attr ? attr->get<ir::Attribute::Elements>() : nullptr;
      if (elements == nullptr || *elements == nullptr) return l.Invalid(op, "body constant without a value");
      STABLERT_RETURN_IF_ERROR(constant(body_op.results[0], (*elements)->Expanded()).status());
      continue;
    }
    // Ops that only rename a value.
    if ((body_op.code == OpCode::kReshape || body_op.code == OpCode::kBroadcastInDim ||
         body_op.code == OpCode::kOptimizationBarrier || body_op.code == OpCode::kSdyShardingConstraint) &&
        body_op.operands.size() == 1) {
      STABLERT_ASSIGN_OR_RETURN(int64_t r, use(body_op.operands[0]));
      STABLERT_ASSIGN_OR_RETURN(DType dtype, scalar_type(body_op.results[0]));
      if (dtype != dtypes[static_cast<size_t>(r)]) return l.Invalid(op, what + " changes the element type");
      registers[body_op.results[0]] = r;
      continue;
    }
    const int64_t opcode = BodyProgramOpcode(body_op.code);
    if (opcode == 0) return l.Unsupported(op, what + " is not supported in a body program");
    std::vector<int64_t> operands;
    for (ir::ValueId v : body_op.operands) {
      STABLERT_ASSIGN_OR_RETURN(int64_t r, use(v));
      operands.push_back(r);
    }
    const size_t expected = opcode < 40 ? 1 : opcode < 70 ? 2 : opcode == kCompare ? 2 : opcode == kConvert ? 1 : 3;
    if (operands.size() != expected) return l.Invalid(op, what + " has the wrong number of operands");
    STABLERT_ASSIGN_OR_RETURN(int64_t dst, define(body_op.results[0]));
    const DType a = dtypes[static_cast<size_t>(operands[0])];
    int64_t attr = 0;
    // real/imag of a real operand have no scalar kernel (the elementwise lowering binds or
    // splats them); in a body they are refused by name.
    if (opcode < 70 && (!ElementwiseAccepts(body_op.code, a) ||
                        ((body_op.code == OpCode::kReal || body_op.code == OpCode::kImag) && !IsComplex(a))))
      return l.Unsupported(op, what + " on " + std::string(DTypeName(a)) + " is not supported");
    // Operand and result types as the kernels' decoder expects them.
    const DType result = dtypes[static_cast<size_t>(dst)];
    auto operand_type = [&](size_t i) { return dtypes[static_cast<size_t>(operands[i])]; };
    bool typed = true;
    if (body_op.code == OpCode::kComplex) {
      typed = operand_type(1) == a && result == (a == DType::kF32 ? DType::kC64 : DType::kC128);
    } else if (opcode < 70) {
      const bool to_part = IsComplex(a) && (body_op.code == OpCode::kAbs || body_op.code == OpCode::kReal ||
                                            body_op.code == OpCode::kImag);
      for (size_t i = 1; i < operands.size(); ++i) typed = typed && operand_type(i) == a;
      typed = typed && result == (body_op.code == OpCode::kIsFinite ? DType::kPred
                                  : to_part ? (a == DType::kC64 ? DType::kF32 : DType::kF64)
                                            : a);
    } else if (opcode == kCompare) {
      typed = operand_type(1) == a && result == DType::kPred;
    } else if (opcode == kSelect) {
      typed = a == DType::kPred && operand_type(1) == result && operand_type(2) == result;
    } else if (opcode == kClamp) {
      typed = operand_type(0) == result && operand_type(1) == result && operand_type(2) == result;
    }
    if (!typed) return l.Invalid(op, what + " has inconsistent operand and result types");
    if (opcode == kCompare) {
      const ir::Attribute* direction_attr = body_op.attr("comparison_direction");
      const ir::EnumValue* direction = direction_attr ? direction_attr->get<ir::EnumValue>() : nullptr;
      if (direction == nullptr || direction->value < 0 || direction->value > 5)
        return l.Invalid(op, what + " lacks a valid comparison_direction");
      int64_t type = 0;
      if (const ir::Attribute* type_attr = body_op.attr("compare_type"))
        if (const ir::EnumValue* value = type_attr->get<ir::EnumValue>()) type = value->value;
      if (type < 0 || type > 4) return l.Invalid(op, what + " has an invalid compare_type");
      const bool is_float = IsFloat(a) || IsComplex(a);
      if (type == 2 && !is_float) type = 0;
      if (type == 0 || (type != 2 && is_float)) type = is_float ? 1 : 0;
      attr = direction->value * 8 + type;
    }
    if (opcode == kClamp) {
      const DType x = dtypes[static_cast<size_t>(operands[1])];
      if (dtypes[static_cast<size_t>(operands[0])] != x || dtypes[static_cast<size_t>(operands[2])] != x ||
          x == DType::kPred)
        return l.Unsupported(op, what + " operand types are not supported");
    }
    while (operands.size() < 3) operands.push_back(0);
    code.insert(code.end(), {opcode, dst, operands[0], operands[1], operands[2], attr});
    ++instructions;
    // A narrow float computed in its carrier rounds to its own type after every op, as XLA
    // normalizes such bodies.
    const ir::Type& own = module.value_types[body_op.results[0]];
    if (own.is_tensor() && IsFloat(own.dtype) && CarrierOf(own.dtype) != own.dtype && result != own.dtype) {
      const int64_t rounded = static_cast<int64_t>(dtypes.size());
      dtypes.push_back(own.dtype);
      code.insert(code.end(), {kConvert, rounded, dst, 0, 0, 0, kConvert, dst, rounded, 0, 0, 0});
      instructions += 2;
    }
  }
  if (!returned) return l.Invalid(op, "body does not end with a return");

  std::vector<int64_t> program = {kFormatVersion, static_cast<int64_t>(dtypes.size())};
  for (DType dtype : dtypes) program.push_back(static_cast<int64_t>(dtype));
  program.push_back(num_inputs);
  program.push_back(static_cast<int64_t>(constants.size() + high_constants.size()));
  for (const auto& [r, bits] : constants) program.insert(program.end(), {r, bits});
  const auto num_registers = static_cast<int64_t>(dtypes.size());
  for (const auto& [r, bits] : high_constants) program.insert(program.end(), {num_registers + r, bits});
  program.push_back(instructions);
  program.insert(program.end(), code.begin(), code.end());
  program.push_back(static_cast<int64_t>(outputs.size()));
  program.insert(program.end(), outputs.begin(), outputs.end());
  return program;
}

namespace {

// Reads a body program's encoding (see kernels/scalar_program.h) into its sections.
struct ProgramParts {
  std::vector<int64_t> dtypes;
  int64_t num_inputs = 0;
  std::vector<std::pair<int64_t, int64_t>> constants;
  std::vector<std::array<int64_t, 6>> instructions;
  std::vector<int64_t> outputs;
};

std::optional<ProgramParts> ParseProgram(const std::vector<int64_t>& p) {
  ProgramParts parts;
  size_t i = 0;
  auto next = [&](int64_t& v) {
    if (i >= p.size()) return false;
    v = p[i++];
    return true;
  };
  int64_t version = 0, count = 0;
  if (!next(version) || version != 1 || !next(count) || count < 0) return std::nullopt;
  parts.dtypes.resize(static_cast<size_t>(count));
  for (int64_t& d : parts.dtypes)
    if (!next(d)) return std::nullopt;
  if (!next(parts.num_inputs) || !next(count) || count < 0) return std::nullopt;
  parts.constants.resize(static_cast<size_t>(count));
  for (auto& [reg, bits] : parts.constants)
    if (!next(reg) || !next(bits)) return std::nullopt;
  if (!next(count) || count < 0) return std::nullopt;
  parts.instructions.resize(static_cast<size_t>(count));
  for (auto& inst : parts.instructions)
    for (int64_t& field : inst)
      if (!next(field)) return std::nullopt;
  if (!next(count) || count < 0) return std::nullopt;
  parts.outputs.resize(static_cast<size_t>(count));
  for (int64_t& o : parts.outputs)
    if (!next(o)) return std::nullopt;
  if (i != p.size()) return std::nullopt;
  return parts;
}

// The reduce body (acc_value, acc_index, x_value, x_index) -> (value, index) that keeps
// the accumulator where comparator(acc_value, x_value, acc_index, x_index) holds.
}  // namespace

std::optional<std::vector<int64_t>> AccumulatorFromComparator(const std::vector<int64_t>& comparator) {
  std::optional<ProgramParts> c = ParseProgram(comparator);
  if (!c || c->num_inputs != 4 || c->outputs.size() != 1) return std::nullopt;
  constexpr int64_t kShift = 4;  // the accumulator's own argument registers come first
  const int64_t r = static_cast<int64_t>(c->dtypes.size());
  const int64_t out_value = kShift + r, out_index = kShift + r + 1;
  const int64_t value_dtype = c->dtypes[0], index_dtype = c->dtypes[2];
  std::vector<int64_t> dtypes = {value_dtype, index_dtype, value_dtype, index_dtype};
  dtypes.insert(dtypes.end(), c->dtypes.begin(), c->dtypes.end());
  dtypes.push_back(value_dtype);
  dtypes.push_back(index_dtype);
  const int64_t registers = static_cast<int64_t>(dtypes.size());

  std::vector<int64_t> p = {1, registers};
  p.insert(p.end(), dtypes.begin(), dtypes.end());
  p.push_back(4);  // arguments
  p.push_back(static_cast<int64_t>(c->constants.size()));
  for (auto [reg, bits] : c->constants) {
    // Entries past the register count address the high half of register (reg - count).
    p.push_back(reg < r ? reg + kShift : registers + (reg - r) + kShift);
    p.push_back(bits);
  }
  std::vector<std::array<int64_t, 6>> code;
  // The comparator's arguments (lhs, rhs, lhs_index, rhs_index) = (acc, x, acc_index, x_index).
  const int64_t from[4] = {0, 2, 1, 3};
  for (int64_t a = 0; a < 4; ++a) code.push_back({kCopy, kShift + a, from[a], 0, 0, 0});
  for (auto inst : c->instructions) {
    for (int f = 1; f <= 4; ++f) inst[f] += kShift;
    code.push_back(inst);
  }
  const int64_t keep = c->outputs[0] + kShift;
  code.push_back({kSelect, out_value, keep, 0, 2, 0});
  code.push_back({kSelect, out_index, keep, 1, 3, 0});
  p.push_back(static_cast<int64_t>(code.size()));
  for (const auto& inst : code) p.insert(p.end(), inst.begin(), inst.end());
  p.insert(p.end(), {2, out_value, out_index});
  return p;
}


}  // namespace stablert::plan
