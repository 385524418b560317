// Products accumulated into their addend: `add.f32 a, p` (either operand order) where p is
// a "dot.f32" step's output read by nothing else becomes one accumulating product step
// `dot.f32 lhs, rhs, a` (kernels/dot.cc: out = a + lhs . rhs) at the add's position. Buffer
// assignment may then give the output a's storage when a dies there (InPlace::kThirdInput):
// a loop accumulating a weight gradient (`acc + x^T . g`, JAX's backward scans) adds each
// step's product into the accumulator inside the matmul kernel instead of writing the
// product and reading it back with the accumulator.
//
// Folded only when it is safe without further analysis:
//   - both are kernel steps of the same sequence, the dot first, both f32, the add dense
//     (no strided view among its operands or output) with as many elements as the product;
//   - the product's storage root is written only by the dot and read only by the add (no
//     other reader through any alias, no result, no control step);
//   - the add's output is its own storage root, written only by the add;
//   - the addend is not a broadcast_in_dim step's output of this sequence (a bias: the add
//     reads it as a strided view, fold_views.cc, where accumulating would materialize it);
//   - no step between the dot and the add (nor inside their regions) writes the storage of
//     the dot's operands, so the dot reads the same values at the add's position.
// Thread-safety: a pure function of the plan. Failure: none (other forms are left as they are).
#include <unordered_map>
#include <vector>

#include "kernels/dot_params.h"
#include "plan/lowering.h"
#include "plan/storage_uses.h"

namespace stablert::plan {
namespace {

class DotAddFolder {
 public:
  DotAddFolder(ExecutionPlan& plan, std::vector<ValueId>& alias_root)
      : plan_(plan), alias_root_(alias_root), uses_(CountStorageUses(plan, alias_root)) {}

  void Run() { Fold(plan_.body); }

 private:

  bool Dense(ValueId v) const { return plan_.values[v].strides.empty(); }

  void Fold(Sequence& sequence) {
    for (Step& step : sequence.steps)
      if (step.kind != StepKind::kManual)  // partition-private values: left as they are
        for (Sequence& region : step.regions) Fold(region);
    std::unordered_map<ValueId, size_t> dot_writing;  // product storage root -> its dot step
    std::unordered_map<ValueId, bool> broadcast;       // storage roots broadcast_in_dim steps write
    std::vector<bool> removed(sequence.steps.size(), false);
    for (size_t i = 0; i < sequence.steps.size(); ++i) {
      Step& step = sequence.steps[i];
      if (step.kind != StepKind::kKernel) continue;
      if (step.kernel.starts_with("broadcast_in_dim.") && step.outputs.size() == 1)
        broadcast[alias_root_[step.outputs[0]]] = true;
      if (step.kernel == "dot.f32" && step.inputs.size() == 2 && step.outputs.size() == 1 &&
          step.params.As<kernels::DotParams>() != nullptr) {
        dot_writing[alias_root_[step.outputs[0]]] = i;
        continue;
      }
      if (step.kernel != "add.f32" || step.inputs.size() != 2 || step.outputs.size() != 1) continue;
      for (size_t side = 0; side < 2; ++side) {
        const ValueId product = alias_root_[step.inputs[side]];
        const ValueId addend = step.inputs[1 - side];
        auto found = dot_writing.find(product);
        if (found == dot_writing.end()) continue;
        const size_t d = found->second;
        Step& dot = sequence.steps[d];
        const ValueId z = step.outputs[0];
        const Value& product_value = plan_.values[dot.outputs[0]];
        if (uses_.writers[product] != 1 || uses_.readers[product] != 1) continue;
        if (alias_root_[z] != z || uses_.writers[z] != 1) continue;
        if (!Dense(step.inputs[0]) || !Dense(step.inputs[1]) || !Dense(z) || !Dense(dot.outputs[0])) continue;
        if (alias_root_[addend] == product || broadcast.contains(alias_root_[addend])) continue;
        if (ElementCount(plan_.values[addend].type.dims) != ElementCount(product_value.type.dims)) continue;
        bool operands_kept = true;
        for (size_t j = d + 1; j < i && operands_kept; ++j)
          for (ValueId operand : dot.inputs)
            if (StepWrites(sequence.steps[j], alias_root_[operand], alias_root_)) operands_kept = false;
        if (!operands_kept) continue;
        Value out;
        out.type = product_value.type;
        out.byte_size = ByteSize(out.type);
        plan_.values.push_back(std::move(out));
        alias_root_.push_back(z);
        Step folded = std::move(dot);
        folded.inputs.push_back(addend);
        folded.outputs = {static_cast<ValueId>(plan_.values.size() - 1)};
        removed[d] = true;
        dot_writing.erase(found);
        step = std::move(folded);  // the product runs where the add did
        break;
      }
    }
    DropSteps(sequence, removed);
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  StorageUses uses_;  // control steps' inputs and results count two readers: never folded
};

}  // namespace

void FoldAddsIntoDots(ExecutionPlan& plan, std::vector<ValueId>& alias_root) { DotAddFolder(plan, alias_root).Run(); }

}  // namespace stablert::plan
