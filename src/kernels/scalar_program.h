// Body programs: straight-line scalar code for the regions of reduce and sort (later
// reduce_window, scatter, map) that are not one recognized op. The plan encodes a body as
// one list of int64; ScalarProgram::Decode resolves it once per plan step into function
// pointers that reuse the elementwise ops' scalar semantics (scalar_ops.h), so a body
// computes exactly what the equivalent elementwise kernels would.
//
// Encoding (all int64):
//   [1,                                   format version
//    R, dtype_0 .. dtype_{R-1},           registers and their DType (PJRT numbering)
//    I,                                   registers 0..I-1 are the body's arguments
//    K, (register, bits) * K,             constants: raw little-endian bits; an entry for
//                                         register R + r (R registers) sets the high 8 bytes
//                                         of register r (complex<f64> constants)
//    N, (op, dst, a, b, c, attr) * N,     instructions (ScalarOp), operands are registers
//    O, register * O]                     the body's results
// Instruction operands: unary ops read a; binary ops a, b; kCompare a, b with
// attr = direction * 8 + compare type (VHLO numbering); kSelect a (i1), b, c;
// kClamp a (min), b (x), c (max); kConvert a, to dst's dtype; kCopy a. abs, real and imag
// of a complex register give its part type; kComplex makes a complex value of a, b.
//
// A decoded program is immutable and may run on many threads, each with its own
// registers. A body computes what the equivalent elementwise kernels compute, bit for bit
// (see ScalarFunctionOf).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "kernels/half.h"

namespace stablert::kernels {

class KernelRegistry;

// One register: any element value in its low bytes (up to 16, complex<f64>).
union ScalarSlot {
  uint64_t bits;
  uint64_t words[2];
  uint8_t bytes[16];
};

template <typename T>
inline T GetSlot(const ScalarSlot& slot) {
  T value;
  std::memcpy(static_cast<void*>(&value), &slot, sizeof(T));
  return value;
}
template <typename T>
inline void SetSlot(ScalarSlot& slot, T value) {
  std::memcpy(&slot, &value, sizeof(T));
}

struct ScalarInstruction;
using ScalarFn = void (*)(ScalarSlot* registers, const ScalarInstruction& instruction);

struct ScalarInstruction {
  ScalarFn fn;
  int32_t dst, a, b, c;
  int64_t attr;
};

// Opcodes of the encoding. The numbers are part of the plan format.
enum class ScalarOp : int64_t {
  kNegate = 1, kAbs = 2, kSign = 3, kNot = 4, kPopcnt = 5, kCountLeadingZeros = 6, kExponential = 7,
  kExponentialMinusOne = 8, kLog = 9, kLogPlusOne = 10, kSqrt = 11, kRsqrt = 12, kCbrt = 13, kTanh = 14,
  kLogistic = 15, kSine = 16, kCosine = 17, kTan = 18, kFloor = 19, kCeil = 20, kRoundNearestAfz = 21,
  kRoundNearestEven = 22, kIsFinite = 23, kReal = 24, kImag = 25,
  kAdd = 40, kSubtract = 41, kMultiply = 42, kDivide = 43, kRemainder = 44, kMaximum = 45, kMinimum = 46,
  kPower = 47, kAtan2 = 48, kAnd = 49, kOr = 50, kXor = 51, kShiftLeft = 52, kShiftRightLogical = 53,
  kShiftRightArithmetic = 54, kComplex = 55,
  kCompare = 70, kSelect = 71, kClamp = 72, kConvert = 73, kCopy = 74,
};

// The kernel-key op name of `op` ("add"), or "" if `op` is not an opcode.
std::string_view ScalarOpName(int64_t op);

// The scalar function of the kernel `kernel_key` ("sine.f32", "compare.i32", "select.f32",
// "copy.s64"), or nullptr if it has none. This is the one list of ops that may run on
// registers: the kernel-key op names of ScalarOp. Every scalar function computes, for one
// element, exactly the bits the kernel computes for it (the vector math functions run
// their vector code on that element), so a kernel step on single elements may run as its
// scalar function instead: instruction {fn, dst: output, a, b, c: the inputs in order,
// attr: ScalarInstruction::attr (compare: direction * 8 + type, from the step's
// CompareParams)}. Each function reads its operands before it writes dst, so dst may be an
// operand's register.
ScalarFn ScalarFunctionOf(const KernelRegistry& registry, std::string_view kernel_key);

// The same function as a plain f32 -> f32 function taking and returning its value in a
// machine register, for the unary f32 kernels that have one ("sine.f32", "cosine.f32"),
// else nullptr. Same bits as ScalarFunctionOf's (and the kernel's). The function is that of
// the instruction set chosen when this is called (simd::SetIsa): resolve it after the cap.
using ScalarF32Fn = float (*)(float);
ScalarF32Fn ScalarF32FunctionOf(std::string_view kernel_key);

class ScalarProgram {
 public:
  // Decodes `code` and resolves each instruction's scalar function in `registry`.
  // InvalidArgument if malformed (bad counts, register indices or dtypes);
  // Unimplemented if an op has no scalar function for its dtype.
  static StatusOr<ScalarProgram> Decode(std::span<const int64_t> code, const KernelRegistry& registry);

  int num_registers() const { return static_cast<int>(dtypes_.size()); }
  int num_inputs() const { return num_inputs_; }
  DType register_dtype(int r) const { return dtypes_[static_cast<size_t>(r)]; }
  const std::vector<int32_t>& outputs() const { return outputs_; }

  // Writes the constants into a register file of num_registers() slots.
  void Initialize(ScalarSlot* registers) const {
    for (const auto& [r, bits] : constants_) registers[r % num_registers()].words[r / num_registers()] = bits;
  }
  void Run(ScalarSlot* registers) const {
    for (const ScalarInstruction& instruction : code_) instruction.fn(registers, instruction);
  }

 private:
  std::vector<DType> dtypes_;
  int num_inputs_ = 0;
  std::vector<std::pair<int32_t, uint64_t>> constants_;
  std::vector<ScalarInstruction> code_;
  std::vector<int32_t> outputs_;
};

}  // namespace stablert::kernels
