// Products with their elementwise epilogue: a kernel step `e` = add.f32, multiply.f32,
// subtract.f32 (either side), divide.f32 (the product as dividend) or maximum.f32 reading the output p of a "dot.f32"
// step (two inputs: not an accumulating one) or of a step this pass made, becomes part of
// that product step, which turns into "dot_epilogue.f32" (kernels/dot_params.h) and runs at
// e's position writing e's output. e's other operand y must be
//   - for maximum: a broadcast_in_dim of the constant scalar +0 (a relu);
//   - otherwise: a broadcast_in_dim of a scalar (the step reads the scalar), a broadcast
//     of N values along the product's rows (a bias: the broadcast's input dims, other than
//     unit dims, map in order onto trailing output dims whose sizes multiply to N; the step
//     reads the input), or a dense value with as many elements as the product that a later
//     step still reads (one whose last read is e stays with e, which may then write its
//     result over it: a residual, or a donated parameter's p - lr * g keeping one copy of p;
//     the product step's output never shares storage with its inputs).
// And, as FoldAddsIntoDots checks: e is in the same sequence after the product step, both
// dense; p's storage root is written only by the product step and read only by e; e's
// output is its own storage root, written only by e; no step between them writes the
// product's operands (nor, between the broadcast and e, a broadcast's input).
//
// A relu whose input is also compared with zero (p > 0, a FLOAT compare: how JAX's relu
// gradient masks) folds as well: `p > 0` equals `max(p, 0) > 0` for every p (NaN, -0 and
// +0 included), so those compares -- after the maximum in the same sequence -- read the
// relu's output instead and p is left to the maximum alone.
//
// Rounding: each op rounds as XLA's separate op does (the product is rounded to f32, then
// each op applied to it), on every path of the kernel.
#include "plan/fold_dot_epilogue.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kernels/compare_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/dot_params.h"
#include "plan/storage_uses.h"

namespace stablert::plan {
namespace {

using kernels::EpilogueOp;

class EpilogueFolder {
 public:
  EpilogueFolder(ExecutionPlan& plan, std::vector<ValueId>& alias_root)
      : plan_(plan), alias_root_(alias_root), uses_(CountStorageUses(plan, alias_root)) {}

  void Run() { Fold(plan_.body); }

 private:
  static bool IsKernel(const Step& step, std::string_view key) {
    return step.kind == StepKind::kKernel && step.kernel == key;
  }

  // Whether a step after `i` in `sequence` reads storage `root` (else its last read there
  // is at or before i).
  bool ReadAfter(const Sequence& sequence, size_t i, ValueId root) const {
    for (size_t j = i + 1; j < sequence.steps.size(); ++j)
      if (StepReads(sequence.steps[j], root, alias_root_)) return true;
    return false;
  }

  bool WrittenBetween(const Sequence& sequence, size_t first, size_t last, ValueId v) const {
    for (size_t j = first + 1; j < last; ++j)
      if (StepWrites(sequence.steps[j], alias_root_[v], alias_root_)) return true;
    return false;
  }

  bool Dense(ValueId v) const { return plan_.values[v].strides.empty(); }
  int64_t Elements(ValueId v) const { return ElementCount(plan_.values[v].type.dims); }

  // The value of an f32 scalar constant.
  std::optional<float> ConstantScalar(ValueId v) const {
    const Value& value = plan_.values[v];
    if (value.storage != Storage::kConstant || value.type.dtype != DType::kF32 || Elements(v) != 1) return std::nullopt;
    const std::vector<uint8_t>& bytes = plan_.constants[static_cast<size_t>(value.index)];
    if (bytes.size() != sizeof(float)) return std::nullopt;
    float x;
    std::memcpy(&x, bytes.data(), sizeof x);
    return x;
  }

  // Whether broadcast step `b` repeats its input along the rows of a product with rows of
  // `n` elements (see the file comment).
  bool BroadcastsRow(const Step& b, int64_t n) const {
    const auto* params = b.params.As<kernels::BroadcastInDimParams>();
    if (params == nullptr) return false;
    const Dims& in = plan_.values[b.inputs[0]].type.dims;
    const Dims& out = plan_.values[b.outputs[0]].type.dims;
    if (params->dimensions.size() != in.size()) return false;
    std::vector<int64_t> mapped;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i] != 1) mapped.push_back(params->dimensions[i]);
    if (mapped.empty()) return false;
    const auto rank = static_cast<int64_t>(out.size());
    const auto first = rank - static_cast<int64_t>(mapped.size());
    int64_t product = 1;
    for (size_t i = 0; i < mapped.size(); ++i) {
      if (mapped[i] != first + static_cast<int64_t>(i)) return false;
      product *= out[static_cast<size_t>(mapped[i])];
    }
    return product == n;
  }

  // The compares `p > 0` among p's readers after step `after` in `sequence`, if they and
  // the maximum are p's only readers; else nullopt.
  std::optional<std::vector<size_t>> ReluMasks(const Sequence& sequence, size_t after, ValueId p,
                                               const std::unordered_map<ValueId, size_t>& broadcast) const {
    std::vector<size_t> masks;
    for (size_t j = after + 1; j < sequence.steps.size(); ++j) {
      const Step& step = sequence.steps[j];
      bool reads = false;
      for (ValueId v : step.inputs) reads = reads || alias_root_[v] == p;
      if (!reads) continue;
      const auto* params = step.params.As<kernels::CompareParams>();
      if (!IsKernel(step, "compare.f32") || params == nullptr || step.inputs.size() != 2 ||
          params->direction != kernels::CompareDirection::kGt || params->type != kernels::CompareType::kFloat ||
          alias_root_[step.inputs[0]] != p || !IsZero(step.inputs[1], broadcast, /*any_sign=*/true))
        return std::nullopt;
      masks.push_back(j);
    }
    if (uses_.readers[p] != 1 + static_cast<int>(masks.size())) return std::nullopt;  // readers elsewhere
    return masks;
  }

  // Whether `v` is a broadcast (in this sequence) of the constant 0 (+0, or either sign).
  bool IsZero(ValueId v, const std::unordered_map<ValueId, size_t>& broadcast, bool any_sign) const {
    auto found = broadcast.find(alias_root_[v]);
    if (found == broadcast.end()) return false;
    std::optional<float> x = ConstantScalar(broadcast_steps_->steps[found->second].inputs[0]);
    if (!x) return false;
    return any_sign ? *x == 0.0f : (*x == 0.0f && !std::signbit(*x));
  }

  void Fold(Sequence& sequence) {
    for (Step& step : sequence.steps)
      if (step.kind != StepKind::kManual)  // partition-private values: left as they are
        for (Sequence& region : step.regions) Fold(region);
    broadcast_steps_ = &sequence;
    std::unordered_map<ValueId, size_t> product_writing;  // product storage root -> its step
    std::unordered_map<ValueId, size_t> broadcast;        // broadcast output root -> its step
    std::vector<bool> removed(sequence.steps.size(), false);
    for (size_t i = 0; i < sequence.steps.size(); ++i) {
      Step& step = sequence.steps[i];
      if (step.kind != StepKind::kKernel || step.outputs.size() != 1) continue;
      const ValueId out_root = alias_root_[step.outputs[0]];
      if (step.kernel.starts_with("broadcast_in_dim.") && step.inputs.size() == 1) {
        broadcast[out_root] = i;
        continue;
      }
      if ((IsKernel(step, "dot.f32") && step.inputs.size() == 2 && step.params.As<kernels::DotParams>() != nullptr) ||
          (IsKernel(step, "dot_epilogue.f32") && step.params.As<kernels::DotEpilogueParams>() != nullptr)) {
        product_writing[out_root] = i;
        continue;
      }
      EpilogueOp op;
      if (IsKernel(step, "add.f32")) op = EpilogueOp::kAdd;
      else if (IsKernel(step, "multiply.f32")) op = EpilogueOp::kMultiply;
      else if (IsKernel(step, "divide.f32")) op = EpilogueOp::kDivide;
      else if (IsKernel(step, "subtract.f32")) op = EpilogueOp::kSubtract;
      else if (IsKernel(step, "maximum.f32")) op = EpilogueOp::kRelu;
      else continue;
      if (step.inputs.size() != 2) continue;
      for (size_t side = 0; side < 2; ++side) {
        if (op == EpilogueOp::kDivide && side != 0) break;  // the product is the dividend
        const EpilogueOp side_op = op == EpilogueOp::kSubtract && side == 1 ? EpilogueOp::kSubtractFrom : op;
        const ValueId p = alias_root_[step.inputs[side]];
        const ValueId y = step.inputs[1 - side];
        auto found = product_writing.find(p);
        if (found == product_writing.end()) continue;
        const size_t d = found->second;
        Step& dot = sequence.steps[d];
        const ValueId z = step.outputs[0];
        const TensorType product_type = plan_.values[dot.outputs[0]].type;
        const int64_t n = product_type.dims.back();
        if (uses_.writers[p] != 1 || alias_root_[z] != z || uses_.writers[z] != 1) continue;
        if (!Dense(step.inputs[0]) || !Dense(step.inputs[1]) || !Dense(z) || !Dense(dot.outputs[0])) continue;
        if (Elements(z) != ElementCount(product_type.dims) || alias_root_[y] == p) continue;
        std::optional<std::vector<size_t>> masks;
        ValueId operand = kNoValue;
        if (op == EpilogueOp::kRelu) {
          if (!IsZero(y, broadcast, /*any_sign=*/false)) continue;
          masks = ReluMasks(sequence, i, p, broadcast);
          if (!masks) continue;
          bool same_type = true;
          for (size_t j : *masks) same_type = same_type && plan_.values[z].type == plan_.values[sequence.steps[j].inputs[0]].type;
          if (!same_type) continue;
        } else {
          if (uses_.readers[p] != 1) continue;
          auto b = broadcast.find(alias_root_[y]);
          if (b != broadcast.end() && alias_root_[y] == alias_root_[sequence.steps[b->second].outputs[0]]) {
            const Step& bstep = sequence.steps[b->second];
            const ValueId x = bstep.inputs[0];
            if (!Dense(x) || plan_.values[x].type.dtype != DType::kF32) continue;
            if (Elements(x) != 1 && !BroadcastsRow(bstep, n)) continue;
            if (WrittenBetween(sequence, b->second, i, x)) continue;
            operand = x;
          } else {
            if (Elements(y) != ElementCount(product_type.dims)) continue;
            // A full-size operand last read here stays with the elementwise step, which can
            // then write its result over it (plan/in_place.h: a residual or a donated
            // parameter updated in place; the product step's output never aliases inputs).
            if (!ReadAfter(sequence, i, alias_root_[y])) continue;
            operand = y;
          }
        }
        bool operands_kept = true;
        for (ValueId v : dot.inputs) operands_kept = operands_kept && !WrittenBetween(sequence, d, i, v);
        if (!operands_kept) continue;
        // The relu's masks read its output.
        if (masks)
          for (size_t j : *masks) {
            sequence.steps[j].inputs[0] = z;
            --uses_.readers[p];
            ++uses_.readers[z];
          }
        kernels::DotEpilogueParams params;
        if (const auto* epilogue = dot.params.As<kernels::DotEpilogueParams>()) params = *epilogue;
        else params.dot = *dot.params.As<kernels::DotParams>();
        params.ops.push_back(static_cast<int64_t>(side_op));
        Value out;
        out.type = product_type;
        out.byte_size = ByteSize(out.type);
        plan_.values.push_back(std::move(out));
        alias_root_.push_back(z);
        Step folded = std::move(dot);
        folded.kernel = "dot_epilogue.f32";
        folded.params = params;
        if (operand != kNoValue) folded.inputs.push_back(operand);
        folded.outputs = {static_cast<ValueId>(plan_.values.size() - 1)};
        removed[d] = true;
        product_writing.erase(found);
        product_writing[z] = i;
        step = std::move(folded);  // the product runs where the op did
        break;
      }
    }
    DropSteps(sequence, removed);
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  StorageUses uses_;  // control steps' inputs and results count two readers: never folded
  const Sequence* broadcast_steps_ = nullptr;  // the sequence Fold works on
};

}  // namespace

void FoldEpiloguesIntoDots(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  EpilogueFolder(plan, alias_root).Run();
}

}  // namespace stablert::plan
