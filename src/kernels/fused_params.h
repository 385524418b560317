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
//
// "fused_rows" steps (FusedRowsParams) run a sequence of steps over blocks of rows: every
// value of the sequence is viewed as [rows, length] (a full value), [rows] (a row value:
// one per row, e.g. a reduction over the trailing dims), a broadcast of a row value along
// the rows, a broadcast of a [length] input over the rows, or a scalar. A block of rows
// runs the whole sequence before the next block starts, so the values between its steps
// (a softmax's exp, a layer norm's centred input) stay in cache and only the step's inputs
// and outputs travel to and from memory.
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

// The parameters of a "fused_iota.<T>" sub-op (T: s32, u32, s64, u64): an iota step folded
// into the chain. It reads no slot and fills its own with each element's index along one
// dimension of the step's shape: element i holds (i / inner) % size. Only in "fused" steps
// run over their whole shape (never as a fused_rows sub-step, whose blocks start elsewhere).
struct FusedIotaParams {
  static constexpr std::string_view kFamily = "fused_iota";
  int64_t size = 1;   // the dimension's extent
  int64_t inner = 1;  // the product of the dims after it

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("size", size);
    visit("inner", inner);
  }
};
inline constexpr std::string_view kFusedIota = "fused_iota";

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

// One value of a "fused_rows" step.
enum class RowsForm : int64_t {
  kFull = 0,          // [rows, length], dense
  kRow = 1,           // [rows], dense
  kRowBroadcast = 2,  // a row value read as [rows, length] (element (r, c) is row r's); as an
                      // input: a view of rows*length elements whose element (r, c) is data[r]
  kColumn = 3,        // an input view of rows*length elements whose element (r, c) is data[c]
  kScalar = 4,        // an input with one element, passed as it is
  kSplatFull = 5,     // an input repeating one element, read as [rows, length]
  kSplatRow = 6,      // an input repeating one element, read as [rows]
};

struct FusedRowsValue {
  int64_t form = 0;    // RowsForm
  int64_t dtype = 0;   // DType (numbering of base/dtype.h)
  int64_t input = -1;  // the step input it is, or -1: computed by a sub-step
  int64_t of = -1;     // kRowBroadcast of a computed row value: that value (else -1)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("form", form);
    visit("dtype", dtype);
    visit("input", input);
    visit("of", of);
  }
};

// One step of the sequence: a kernel over [block rows, length] (or [block rows]) views.
// Sub-steps may be elementwise kernels, "fused" steps (their FusedParams written for all
// rows; the kernel rescales them to a block) and "reduce_<body>.<T>" over dimension 1.
struct FusedRowsStep {
  std::string kernel;
  std::vector<int64_t> inputs;  // value numbers
  std::vector<int64_t> outputs;  // the values it computes (kFull or kRow), in its output order
  KernelParams params;
  std::string params_text;      // params.ToString()

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("kernel", kernel);
    visit("in", inputs);
    visit("out", outputs);
    visit("params", params_text);
  }
};

struct FusedRowsParams {
  static constexpr std::string_view kFamily = "fused_rows";
  int64_t rows = 0;
  int64_t length = 0;
  std::vector<FusedRowsValue> values;
  std::vector<FusedRowsStep> steps;
  std::vector<int64_t> outputs;  // output k is this computed value

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("rows", rows);
    visit("length", length);
    visit("values", values);
    visit("steps", steps);
    visit("outputs", outputs);
  }
};

}  // namespace stablert::kernels
