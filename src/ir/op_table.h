// The op table (ops.def) as an enum and a constexpr array of rows.
// Every layer that needs per-op facts (importer, verifier, printer, lowering) indexes
// this table by OpCode. Pure data; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stablert::ir {

enum class OpCode : uint16_t {
#define OP(name, mnemonic, operands, results, regions, cls, effect, hlo) k##name,
#include "ir/ops.def"
#undef OP
};

inline constexpr int kNumOps = 0
#define OP(name, mnemonic, operands, results, regions, cls, effect, hlo) +1
#include "ir/ops.def"
#undef OP
    ;
static_assert(kNumOps == 125, "ops.def changed: update this count deliberately");

enum class OpClass : uint8_t {
  kUnary,       // elementwise, one operand, result shape = operand shape
  kBinary,      // elementwise, two operands of one shape, result shape = operand shape
  kElementwise, // elementwise with rules of its own (compare, select, clamp, convert,
                // reduce_precision): result shape = its tensor operands' shape; select's
                // predicate and clamp's bounds may be rank 0; the element type may change
  kTerminator,  // ends a block; its operands are the block's results
  kOther,
};

// What an op does besides computing its results (ops.def explains the column).
enum class Effect : uint8_t {
  kPure,    // nothing: removable when unused, mergeable with an identical op (if its regions'
            // ops are pure too)
  kEffect,  // communicates, calls out, draws state or guides partitioning: kept, never merged
};

struct OpInfo {
  std::string_view mnemonic;  // "stablehlo.add"
  int num_operands;           // -1: variadic
  int num_results;            // -1: variadic
  int num_regions;            // -1: variadic
  OpClass op_class;
  Effect effect;
  std::string_view hlo_opcode;  // XLA's opcode for the op (hlo/from_ir.h); empty if none
};

const OpInfo& GetOpInfo(OpCode code);
// True for every elementwise op (classes kUnary, kBinary, kElementwise).
inline bool IsElementwise(OpCode code) {
  const OpClass op_class = GetOpInfo(code).op_class;
  return op_class == OpClass::kUnary || op_class == OpClass::kBinary || op_class == OpClass::kElementwise;
}
inline std::string_view OpName(OpCode code) { return GetOpInfo(code).mnemonic; }
// Looks up "stablehlo.add" (full mnemonic); nullopt if unknown.
std::optional<OpCode> OpCodeFromName(std::string_view mnemonic);

}  // namespace stablert::ir
