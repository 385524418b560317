#include "kernels/scalar_program.h"

#include <string>

#include "kernels/registry.h"
#include "kernels/simd/trig_one.h"

namespace stablert::kernels {
namespace {

template <float (*kFn)(float)>
void UnaryF32Scalar(ScalarSlot* r, const ScalarInstruction& i) {
  SetSlot(r[i.dst], kFn(GetSlot<float>(r[i.a])));
}

// The registry's scalar function of `key`, or a faster one computing the same bits.
ScalarFn FindScalarFunction(const KernelRegistry& registry, std::string_view key) {
  if (key == "sine.f32") return &UnaryF32Scalar<&simd::SinOneF32>;
  if (key == "cosine.f32") return &UnaryF32Scalar<&simd::CosOneF32>;
  return reinterpret_cast<ScalarFn>(registry.FindScalar(key));
}

void SelectScalar(ScalarSlot* r, const ScalarInstruction& i) {
  r[i.dst] = GetSlot<uint8_t>(r[i.a]) ? r[i.b] : r[i.c];
}
void CopyScalar(ScalarSlot* r, const ScalarInstruction& i) { r[i.dst] = r[i.a]; }

bool IsRegisterDType(DType dtype) {
  switch (dtype) {
    case DType::kPred: case DType::kS8: case DType::kS16: case DType::kS32: case DType::kS64:
    case DType::kU8: case DType::kU16: case DType::kU32: case DType::kU64:
    case DType::kF16: case DType::kBF16: case DType::kF32: case DType::kF64:
    case DType::kC64: case DType::kC128:
    // Narrow types hold body constants, converted to their carrier type (plan/lower_narrow.cc).
    case DType::kS4: case DType::kU4: case DType::kS2: case DType::kU2:
    case DType::kF8E5M2: case DType::kF8E4M3FN: case DType::kF8E4M3B11FNUZ: case DType::kF8E5M2FNUZ:
    case DType::kF8E4M3FNUZ: case DType::kF8E4M3: case DType::kF8E3M4: case DType::kF8E8M0FNU:
    case DType::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}

class Reader {
 public:
  explicit Reader(std::span<const int64_t> code) : code_(code) {}
  bool Next(int64_t* value) {
    if (position_ >= code_.size()) return false;
    *value = code_[position_++];
    return true;
  }
  bool done() const { return position_ == code_.size(); }

 private:
  std::span<const int64_t> code_;
  size_t position_ = 0;
};

}  // namespace

std::string_view ScalarOpName(int64_t op) {
  switch (static_cast<ScalarOp>(op)) {
    case ScalarOp::kNegate: return "negate";
    case ScalarOp::kAbs: return "abs";
    case ScalarOp::kSign: return "sign";
    case ScalarOp::kNot: return "not";
    case ScalarOp::kPopcnt: return "popcnt";
    case ScalarOp::kCountLeadingZeros: return "count_leading_zeros";
    case ScalarOp::kExponential: return "exponential";
    case ScalarOp::kExponentialMinusOne: return "exponential_minus_one";
    case ScalarOp::kLog: return "log";
    case ScalarOp::kLogPlusOne: return "log_plus_one";
    case ScalarOp::kSqrt: return "sqrt";
    case ScalarOp::kRsqrt: return "rsqrt";
    case ScalarOp::kCbrt: return "cbrt";
    case ScalarOp::kTanh: return "tanh";
    case ScalarOp::kLogistic: return "logistic";
    case ScalarOp::kSine: return "sine";
    case ScalarOp::kCosine: return "cosine";
    case ScalarOp::kTan: return "tan";
    case ScalarOp::kFloor: return "floor";
    case ScalarOp::kCeil: return "ceil";
    case ScalarOp::kRoundNearestAfz: return "round_nearest_afz";
    case ScalarOp::kRoundNearestEven: return "round_nearest_even";
    case ScalarOp::kIsFinite: return "is_finite";
    case ScalarOp::kReal: return "real";
    case ScalarOp::kImag: return "imag";
    case ScalarOp::kComplex: return "complex";
    case ScalarOp::kAdd: return "add";
    case ScalarOp::kSubtract: return "subtract";
    case ScalarOp::kMultiply: return "multiply";
    case ScalarOp::kDivide: return "divide";
    case ScalarOp::kRemainder: return "remainder";
    case ScalarOp::kMaximum: return "maximum";
    case ScalarOp::kMinimum: return "minimum";
    case ScalarOp::kPower: return "power";
    case ScalarOp::kAtan2: return "atan2";
    case ScalarOp::kAnd: return "and";
    case ScalarOp::kOr: return "or";
    case ScalarOp::kXor: return "xor";
    case ScalarOp::kShiftLeft: return "shift_left";
    case ScalarOp::kShiftRightLogical: return "shift_right_logical";
    case ScalarOp::kShiftRightArithmetic: return "shift_right_arithmetic";
    case ScalarOp::kCompare: return "compare";
    case ScalarOp::kSelect: return "select";
    case ScalarOp::kClamp: return "clamp";
    case ScalarOp::kConvert: return "convert";
    case ScalarOp::kCopy: return "copy";
  }
  return "";
}

ScalarFn ScalarFunctionOf(const KernelRegistry& registry, std::string_view kernel_key) {
  const std::string_view op = kernel_key.substr(0, kernel_key.find('.'));
  if (op == "select") return &SelectScalar;
  if (op == "copy") return &CopyScalar;
  bool known = false;
  for (int64_t code = 1; code <= static_cast<int64_t>(ScalarOp::kCopy) && !known; ++code)
    known = ScalarOpName(code) == op;
  if (!known) return nullptr;
  return FindScalarFunction(registry, kernel_key);
}

ScalarF32Fn ScalarF32FunctionOf(std::string_view kernel_key) {
  if (kernel_key == "sine.f32") return simd::SinOneF32Function();
  if (kernel_key == "cosine.f32") return simd::CosOneF32Function();
  return nullptr;
}

StatusOr<ScalarProgram> ScalarProgram::Decode(std::span<const int64_t> code, const KernelRegistry& registry) {
  constexpr int64_t kMaxRegisters = 1 << 16;
  constexpr int64_t kMaxInstructions = 1 << 20;
  auto malformed = [](std::string what) { return InvalidArgument("malformed body program: " + what); };
  Reader reader(code);
  ScalarProgram program;
  int64_t version, count;
  if (!reader.Next(&version) || version != 1) return malformed("unknown format version");
  if (!reader.Next(&count) || count <= 0 || count > kMaxRegisters) return malformed("bad register count");
  for (int64_t i = 0; i < count; ++i) {
    int64_t ordinal;
    if (!reader.Next(&ordinal)) return malformed("truncated register types");
    auto dtype = DTypeFromOrdinal(static_cast<int>(ordinal));
    if (ordinal < 0 || ordinal > 255 || !dtype || !IsRegisterDType(*dtype)) return malformed("bad register type");
    program.dtypes_.push_back(*dtype);
  }
  const int64_t registers = count;
  auto valid = [registers](int64_t r) { return r >= 0 && r < registers; };
  int64_t inputs;
  if (!reader.Next(&inputs) || inputs < 0 || inputs > registers) return malformed("bad input count");
  program.num_inputs_ = static_cast<int>(inputs);
  if (!reader.Next(&count) || count < 0 || count > 2 * registers) return malformed("bad constant count");
  for (int64_t i = 0; i < count; ++i) {
    int64_t r, bits;
    if (!reader.Next(&r) || !reader.Next(&bits) || r < 0 || r >= 2 * registers) return malformed("bad constant");
    program.constants_.emplace_back(static_cast<int32_t>(r), static_cast<uint64_t>(bits));
  }
  if (!reader.Next(&count) || count < 0 || count > kMaxInstructions) return malformed("bad instruction count");
  for (int64_t n = 0; n < count; ++n) {
    int64_t f[6];
    for (int64_t& field : f)
      if (!reader.Next(&field)) return malformed("truncated instruction");
    const int64_t op = f[0];
    if (!valid(f[1]) || !valid(f[2]) || !valid(f[3]) || !valid(f[4])) return malformed("bad register index");
    ScalarInstruction instruction{nullptr, static_cast<int32_t>(f[1]), static_cast<int32_t>(f[2]),
                                  static_cast<int32_t>(f[3]), static_cast<int32_t>(f[4]), f[5]};
    const DType dst = program.dtypes_[f[1]], a = program.dtypes_[f[2]], b = program.dtypes_[f[3]],
                c = program.dtypes_[f[4]];
    const std::string_view name = ScalarOpName(op);
    if (name.empty()) return malformed("unknown opcode " + std::to_string(op));
    std::string key;
    bool types_ok;
    if (op >= 1 && op <= 25) {  // unary
      const bool to_part = IsComplex(a) && (op == static_cast<int64_t>(ScalarOp::kAbs) ||
                                            op == static_cast<int64_t>(ScalarOp::kReal) ||
                                            op == static_cast<int64_t>(ScalarOp::kImag));
      const DType expected = op == static_cast<int64_t>(ScalarOp::kIsFinite) ? DType::kPred
                             : to_part ? (a == DType::kC64 ? DType::kF32 : DType::kF64)
                                       : a;
      types_ok = dst == expected;
      key = KernelKey(name, {a});
    } else if (op == static_cast<int64_t>(ScalarOp::kComplex)) {
      types_ok = a == b && ((a == DType::kF32 && dst == DType::kC64) || (a == DType::kF64 && dst == DType::kC128));
      key = KernelKey(name, {a});
    } else if (op >= 40 && op <= 54) {  // binary
      types_ok = a == b && dst == a;
      key = KernelKey(name, {a});
    } else if (op == static_cast<int64_t>(ScalarOp::kCompare)) {
      types_ok = a == b && dst == DType::kPred && f[5] >= 0 && f[5] / 8 <= 5 && f[5] % 8 <= 4;
      key = KernelKey(name, {a});
    } else if (op == static_cast<int64_t>(ScalarOp::kSelect)) {
      types_ok = a == DType::kPred && b == c && dst == b;
      instruction.fn = &SelectScalar;
    } else if (op == static_cast<int64_t>(ScalarOp::kClamp)) {
      types_ok = a == b && b == c && dst == b;
      key = KernelKey(name, {b});
    } else if (op == static_cast<int64_t>(ScalarOp::kConvert)) {
      types_ok = true;
      key = KernelKey(name, {a, dst});
    } else {  // copy
      types_ok = dst == a;
      instruction.fn = &CopyScalar;
    }
    if (!types_ok) return malformed("operand types do not fit " + std::string(name));
    if (instruction.fn == nullptr) {
      instruction.fn = FindScalarFunction(registry, key);
      if (instruction.fn == nullptr) return Unimplemented("no scalar function '" + key + "' for a body program");
    }
    program.code_.push_back(instruction);
  }
  if (!reader.Next(&count) || count < 0 || count > registers) return malformed("bad output count");
  for (int64_t i = 0; i < count; ++i) {
    int64_t r;
    if (!reader.Next(&r) || !valid(r)) return malformed("bad output register");
    program.outputs_.push_back(static_cast<int32_t>(r));
  }
  if (!reader.done()) return malformed("trailing data");
  return program;
}

}  // namespace stablert::kernels
