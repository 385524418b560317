// Elementwise ops evaluated on constant elements at compile time, bit for bit as the
// executor's kernels compute them when the program runs. Used by FoldConstants
// (fold_constants.h); passes/ cannot use kernels/, so the few scalar rules live here.
//
// The rules (the same as kernels/scalar_ops.h and kernels/convert.cc, which follow XLA's
// CPU backend):
//   - integers wrap; x / 0 is -1 and x % 0 is x; INT_MIN / -1 is INT_MIN, INT_MIN % -1 is 0;
//     a shift by an amount outside [0, bits) gives 0 (the sign fill for an arithmetic right
//     shift); a negative exponent in an integer power gives 0 unless the base is 1 or -1;
//   - f32/f64 add, subtract, multiply, divide, sqrt, remainder (fmod), floor, ceil, the two
//     roundings, negate, abs, sign: IEEE, correctly rounded to nearest even, as the host's
//     instructions compute them; maximum/minimum return a NaN operand (the first), order
//     -0 below +0; compare on IEEE values or, for compare_type TOTALORDER, the total order;
//   - f16/bf16 compute in f32 and round to nearest even (both exact for the ops folded here:
//     f32 carries more than twice their precision plus two bits);
//   - convert: float -> integer truncates, saturates and maps NaN to 0; x -> i1 is x != 0;
//     integer -> integer wraps; integer -> float rounds to nearest even.
//
// What is never folded (the op stays and runs when the program runs), so that a folded
// result can never differ from what the kernels compute:
//   - transcendental and approximated functions (exp, log, sin, tanh, pow on floats, atan2,
//     rsqrt, cbrt, logistic, ...), whose kernels are vector polynomials;
//   - any float element that is denormal, as an operand or a result, and any nonzero f32/f64
//     result whose magnitude is at most the smallest normal: the executor flushes denormal
//     inputs and results to zero (as XLA's CPU backend does), and whether a result near the
//     smallest normal is flushed depends on how the hardware detects tininess;
//   - f16/bf16 NaNs (their payloads depend on the conversion path), integers wider than 2^24
//     converted to f16/bf16 and f64 converted to f16/bf16 (the runtime rounds twice, through
//     f32), complex, sub-byte integer and 8-bit-or-narrower float element types.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/module.h"

namespace stablert::passes {

// Evaluates elementwise `op` (unary, binary, compare, select, clamp, convert, is_finite)
// for elements 0..count-1 of a result of element type `result_dtype`, reading element i of
// each operand (element 0 of an operand that has one element, e.g. a rank-0 select
// predicate or clamp bound). Writes count elements to `out`. Returns false, leaving `out`
// unspecified, if the op, an element type or an element is one the rules above do not fold.
bool EvaluateElementwise(const ir::Operation& op, const std::vector<const ir::ElementsData*>& operands,
                         DType result_dtype, int64_t count, std::vector<uint8_t>& out);

// Converts one element of `from` at `in` to `to` at `out` by the convert rules above;
// false if they do not fold it.
bool ConvertElement(DType from, DType to, const uint8_t* in, uint8_t* out);

// The reduction `body` (an op code among add, multiply, maximum, minimum, and, or) of the
// elements of `input` grouped by `group` (group[i] = output index of input element i, each
// in [0, outputs)), each output starting from the one element of `init`. Writes `outputs`
// elements to `out`. Returns false if the result could depend on the order in which the
// runtime combines the elements (float sums and products are folded only when every partial
// result is exact whatever the order; inits other than the body's identity are folded only
// for idempotent bodies), or for element types and elements EvaluateElementwise does not fold.
bool EvaluateReduce(ir::OpCode body, const ir::ElementsData& input, const ir::ElementsData& init,
                    const std::vector<int64_t>& group, int64_t outputs, std::vector<uint8_t>& out);

}  // namespace stablert::passes
