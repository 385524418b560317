// Per-vector evaluation of fused elementwise chains of f32 values (the host's ISA,
// dispatch.h): a small program of vector instructions, built once when a fused step is
// prepared (kernels/fused.cc), interpreted over blocks of a few vectors (4 to 16). Every
// instruction runs on the whole block before the next one starts, so the interpretation
// cost is paid once per block while the block's values stay in registers and a few hundred
// bytes of L1 scratch; internal values are never written to tile buffers, only the chain's
// outputs (and what a reduction after it reads) are stored.
//
// Results are bit for bit those of the per-op vector loops (binary_simd.h, unary_simd.h)
// on the same operands: the same vector operations per lane (the unary functions are
// unary_lanes-inl.h's, shared with unary_simd.cc), lanes outside a unary function's domain
// finished by its scalar op, and no contraction across instructions (each instruction's
// result goes through memory, as the per-op loops' results do; a*b+c is a multiply then an
// add, never an FMA). Elements past `n` are never read or written: the last partial block
// runs on copies in scratch.
//
// Covered: f32 add, subtract, multiply, divide, maximum, minimum, negate, abs, and exp,
// expm1, log, log1p, tanh, logistic, sqrt, rsqrt, erf. Operands are streams (n elements),
// uniform values (one element read for all) or internal values (scratch only). Anything
// else (other types, compare/select, converts, other functions) stays on fused.cc's
// per-op tile path.
//
// Pure function over caller memory; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stablert::kernels::simd {

enum class ChainCode : uint8_t {
  kAdd, kSub, kMul, kDiv, kMax, kMin,  // binary: dst = a op b
  kNeg, kAbs,                          // unary, exact
  kExp, kExpm1, kLog, kLog1p, kTanh, kLogistic, kSqrt, kRsqrt, kErf,  // unary math
};

// One instruction: operands a (and b for binary codes) and dst are operand numbers.
struct ChainInstr {
  ChainCode code;
  uint8_t a = 0, b = 0, dst = 0;
};

enum class ChainOperand : uint8_t {
  kStream,    // data[k] holds n elements (read, or written by the instruction whose dst it is)
  kUniform,   // data[k] points at one element, the value of every element
  kInternal,  // no storage: lives in the evaluator's scratch (data[k] is ignored)
};

// The most operands a program may have (fused.cc uses the tile path beyond).
inline constexpr size_t kMaxChainOperands = 48;
// The most vectors per block (a multiple of 4).
inline constexpr size_t kChainBlockVectors = 16;

// Runs `code` over elements [0, n) of the operands: kinds[k] and data[k] for k < operands,
// `block_vectors` (1 .. kChainBlockVectors) vectors per block. Every dst is a kStream or
// kInternal operand written by exactly one instruction, before any instruction reads it; no
// stream written may overlap another operand. The block size changes the speed, never the
// bits.
void RunChainF32(const ChainInstr* code, size_t num_code, const ChainOperand* kinds, void* const* data,
                 size_t operands, size_t n, size_t block_vectors = kChainBlockVectors);

}  // namespace stablert::kernels::simd
