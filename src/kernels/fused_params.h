// The parameters of "fused" steps (kernels/fused.cc), built by plan/fuse_elementwise.cc.
//
// A fused step runs a chain of elementwise kernels (sub-ops) tile by tile: every value of
// the chain has a slot; slots 0 .. inputs-1 are the step's inputs in order (dense arrays,
// strided views, or rank-0 scalars that a sub-op broadcasts itself), the others are
// computed by the sub-ops, in order. A computed slot is either one of the step's outputs
// (FusedParams::output_slots, written densely) or internal: it only ever exists in a tile.
// Every slot holds `num_elements` elements, except rank-0 input scalars.
//
// Optionally the step also reduces one computed slot (FusedReduce): viewed as [rows,
// length] it is folded over its length into the step's last output (rows elements), the
// step's last input being the reduction's init scalar. When the reduction is cut into
// `segments` per row, the last output holds [rows, segments] partial results instead (no
// init folded in) and a reduce step after the fused step finishes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "kernels/params.h"

namespace stablert::kernels {

// The element types a fused step's slots may have (the fusion pass groups only these; the
// kernel rejects others).
inline bool FusibleDType(DType dtype) {
  switch (dtype) {
    case DType::kPred: case DType::kS8: case DType::kS16: case DType::kS32: case DType::kS64:
    case DType::kU8: case DType::kU16: case DType::kU32: case DType::kU64:
    case DType::kF16: case DType::kBF16: case DType::kF32: case DType::kF64:
    case DType::kC64: case DType::kC128:
      return true;
    default:
      return false;
  }
}

// One elementwise kernel of the chain.
struct FusedOp {
  std::string kernel;             // its registry key ("add.f32"), resolved when the plan loads
  std::vector<int64_t> inputs;    // the slots it reads, in the kernel's operand order
  int64_t output = 0;             // the slot it writes
  KernelParams params;            // its own parameter struct (CompareParams, ...), or none
  std::string params_text;        // params.ToString(), for plan dumps and equality

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("kernel", kernel);
    visit("in", inputs);
    visit("out", output);
    visit("params", params_text);
  }
};

// A reduction of one computed slot, fused into the step.
struct FusedReduce {
  std::string kernel;     // "reduce_<body>.<T>" of the reduction it replaces
  int64_t slot = -1;      // the slot reduced
  int64_t rows = 1;       // the slot viewed as [rows, length], reduced over length
  int64_t length = 0;
  int64_t segments = 1;   // partial results per row (1: the final result, init folded in)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("kernel", kernel);
    visit("slot", slot);
    visit("rows", rows);
    visit("length", length);
    visit("segments", segments);
  }
};

struct FusedParams {
  static constexpr std::string_view kFamily = "fused";
  int64_t num_elements = 0;          // elements of every computed slot
  std::vector<int64_t> slot_dtypes;  // DType of each slot (numbering of base/dtype.h)
  std::vector<FusedOp> ops;          // in order; each writes a distinct computed slot
  std::vector<int64_t> output_slots;  // output k (before the reduction's) is this slot
  std::vector<FusedReduce> reduce;   // zero or one reduction

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("elements", num_elements);
    visit("dtypes", slot_dtypes);
    visit("ops", ops);
    visit("outputs", output_slots);
    visit("reduce", reduce);
  }
};

}  // namespace stablert::kernels
