// Transposed matrix products computed directly: a "transpose.<T>" step that swaps the two
// matrix dims of a "dot.<T>" step's output (permutation [1,0] of the [M,N] product when the
// batch is 1, or [0,2,1] of [B,M,N]) is removed, and the dot computes the transposed result
// itself with its operands swapped: (lhs . rhs)^T = rhs^T . lhs^T, where each operand's
// transpose is only a change of its layout flag (DotParams), never a copy. JAX's gradients
// produce this pattern for every weight gradient of a product `x @ w` (the transpose of
// `g^T . x`), which otherwise moves the whole weight-sized array once more per step.
//
// Folded only when it is safe without further analysis:
//   - both steps are kernel steps of the same sequence, the dot before the transpose, of
//     the same element type;
//   - the dot's output is its own storage root, written only by the dot, and read by
//     nothing but the transpose (directly or through an alias; no result, no control step);
//   - the transpose's output is its own storage root, written only by the transpose; the
//     dot then writes it through a new alias of the transposed [B,N,M] shape.
// The transpose's output exists only from the transpose on (values are written once), so
// writing it at the dot's position instead changes nothing another step could observe.
//
// Transposed operands are read in place the same way: a "transpose.<T>" step swapping the
// last two dims of a value that only a dot.f32/dot.bf16 step reads, as its lhs or rhs, is
// removed, and the dot reads the transpose's input with that operand's layout flag flipped
// (`x @ w.T`, `w.T @ x`: JAX emits the transpose as its own op). Folded when the operand
// is large (kMinFoldedOperand elements, where the copy is a pass over memory) or the flip
// leaves rhs stored [K,N] (libxsmm's small kernels have no [N,K] rhs form), the transpose
// is in the same sequence before the dot, its output its own storage root written only by
// it, both dense, and no step between them writes the transpose's input.
// Thread-safety: a pure function of the plan. Failure: none (a pattern it does not
// recognize is left as it is).
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/data_movement_params.h"
#include "kernels/dot_params.h"
#include "plan/lowering.h"
#include "plan/storage_uses.h"

namespace stablert::plan {
namespace {

// Transposed operands of at least this many elements are read in place even where that
// stores rhs [N,K] (see the file comment).
constexpr int64_t kMinFoldedOperand = int64_t{1} << 16;

class DotTransposeFolder {
 public:
  DotTransposeFolder(ExecutionPlan& plan, std::vector<ValueId>& alias_root)
      : plan_(plan), alias_root_(alias_root), uses_(CountStorageUses(plan, alias_root)) {}

  void Run() { Fold(plan_.body); }

 private:
  static bool HasPrefix(const Step& step, std::string_view prefix) {
    return step.kind == StepKind::kKernel && step.kernel.starts_with(prefix);
  }

  // Whether `transpose` (reading `x`, an alias of the [B,M,N] product) swaps M and N.
  bool SwapsMatrixDims(const Step& transpose, const TensorType& product) const {
    const auto* params = transpose.params.As<kernels::TransposeParams>();
    if (params == nullptr) return false;
    const TensorType& x = plan_.values[transpose.inputs[0]].type;
    const Dims& d = product.dims;
    if (params->permutation == std::vector<int64_t>{1, 0}) return d[0] == 1 && x.dims == Dims{d[1], d[2]};
    if (params->permutation == std::vector<int64_t>{0, 2, 1}) return x.dims == d;
    return false;
  }

  // Whether `transpose` swaps the last two dims of its input and keeps the others, and
  // `operand` (what the dot reads, [B,P,Q]) views its output with those two dims as P, Q.
  bool SwapsLastTwo(const Step& transpose, const TensorType& operand) const {
    const auto* params = transpose.params.As<kernels::TransposeParams>();
    if (params == nullptr) return false;
    const std::vector<int64_t>& p = params->permutation;
    const size_t rank = p.size();
    if (rank < 2 || operand.dims.size() != 3) return false;
    for (size_t i = 0; i + 2 < rank; ++i)
      if (p[i] != static_cast<int64_t>(i)) return false;
    if (p[rank - 2] != static_cast<int64_t>(rank - 1) || p[rank - 1] != static_cast<int64_t>(rank - 2)) return false;
    const Dims& y = plan_.values[transpose.outputs[0]].type.dims;
    return y.size() == rank && operand.dims[1] == y[rank - 2] && operand.dims[2] == y[rank - 1];
  }

  // Transposed operands of dots read in place (see the file comment).
  void FoldOperands(Sequence& sequence) {
    std::unordered_map<ValueId, size_t> transpose_writing;  // output root -> its step
    std::vector<bool> removed(sequence.steps.size(), false);
    for (size_t i = 0; i < sequence.steps.size(); ++i) {
      Step& step = sequence.steps[i];
      if (HasPrefix(step, "transpose.") && step.inputs.size() == 1 && step.outputs.size() == 1) {
        transpose_writing[step.outputs[0]] = i;
        continue;
      }
      if (!(HasPrefix(step, "dot.f32") || HasPrefix(step, "dot.bf16")) || step.inputs.size() < 2 ||
          step.params.As<kernels::DotParams>() == nullptr)
        continue;
      for (size_t side = 0; side < 2; ++side) {
        const ValueId operand = step.inputs[side];
        const ValueId y = alias_root_[operand];
        auto found = transpose_writing.find(y);
        if (found == transpose_writing.end() || removed[found->second]) continue;
        const Step& transpose = sequence.steps[found->second];
        const ValueId x = transpose.inputs[0];
        const TensorType operand_type = plan_.values[operand].type;
        if (transpose.kernel.substr(10) != step.kernel.substr(4)) continue;  // "transpose.<T>" / "dot.<T>"
        if (uses_.writers[y] != 1 || uses_.readers[y] != 1) continue;
        if (!plan_.values[y].strides.empty() || !plan_.values[x].strides.empty() ||
            !plan_.values[operand].strides.empty())
          continue;
        if (!SwapsLastTwo(transpose, operand_type)) continue;
        kernels::DotParams params = *step.params.As<kernels::DotParams>();
        if (side == 0) params.lhs_is_bkm = !params.lhs_is_bkm;
        else params.rhs_is_bnk = !params.rhs_is_bnk;
        if (params.rhs_is_bnk && ElementCount(operand_type.dims) < kMinFoldedOperand) continue;
        bool input_kept = true;
        for (size_t j = found->second + 1; j < i && input_kept; ++j)
          if (StepWrites(sequence.steps[j], alias_root_[x], alias_root_)) input_kept = false;
        if (!input_kept) continue;
        const Dims& d = operand_type.dims;
        Value view;
        view.type = TensorType{operand_type.dtype, {d[0], d[2], d[1]}};
        view.byte_size = ByteSize(view.type);
        plan_.values.push_back(std::move(view));
        alias_root_.push_back(alias_root_[x]);
        step.inputs[side] = static_cast<ValueId>(plan_.values.size() - 1);
        step.params = params;
        removed[found->second] = true;
      }
    }
    DropSteps(sequence, removed);
  }

  void Fold(Sequence& sequence) {
    for (Step& step : sequence.steps)
      if (step.kind != StepKind::kManual)  // partition-private values: left as they are
        for (Sequence& region : step.regions) Fold(region);
    FoldOperands(sequence);
    std::unordered_map<ValueId, size_t> dot_writing;  // dot output root -> its step
    std::vector<bool> removed(sequence.steps.size(), false);
    for (size_t i = 0; i < sequence.steps.size(); ++i) {
      Step& step = sequence.steps[i];
      if (HasPrefix(step, "dot.") && step.inputs.size() == 2 && step.outputs.size() == 1 &&
          step.params.As<kernels::DotParams>() != nullptr) {
        dot_writing[step.outputs[0]] = i;
        continue;
      }
      if (!HasPrefix(step, "transpose.") || step.inputs.size() != 1 || step.outputs.size() != 1) continue;
      const ValueId product = alias_root_[step.inputs[0]];
      auto found = dot_writing.find(product);
      if (found == dot_writing.end()) continue;
      Step& dot = sequence.steps[found->second];
      const ValueId y = step.outputs[0];
      const TensorType product_type = plan_.values[product].type;
      if (product_type.dims.size() != 3 || product_type.dtype != plan_.values[y].type.dtype) continue;
      if (dot.kernel.substr(4) != step.kernel.substr(10)) continue;  // "dot.<T>" / "transpose.<T>"
      if (uses_.writers[product] != 1 || uses_.readers[product] != 1) continue;
      if (alias_root_[y] != y || uses_.writers[y] != 1 || !plan_.values[y].strides.empty()) continue;
      if (!SwapsMatrixDims(step, product_type)) continue;
      const auto& old_params = *dot.params.As<kernels::DotParams>();
      // rhs^T . lhs^T: the new lhs is the old rhs (an [N,K] matrix, stored [K,N] unless it
      // was [N,K]); the new rhs the old lhs (a [K,M] matrix, stored [M,K] unless [K,M]).
      const kernels::DotParams params{.lhs_is_bkm = !old_params.rhs_is_bnk, .rhs_is_bnk = !old_params.lhs_is_bkm};
      const Dims& d = product_type.dims;
      Value out;
      out.type = TensorType{product_type.dtype, {d[0], d[2], d[1]}};
      out.byte_size = ByteSize(out.type);
      plan_.values.push_back(std::move(out));
      alias_root_.push_back(y);
      dot.inputs = {dot.inputs[1], dot.inputs[0]};
      dot.outputs = {static_cast<ValueId>(plan_.values.size() - 1)};
      dot.params = params;
      dot_writing.erase(found);
      removed[i] = true;
    }
    DropSteps(sequence, removed);
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  StorageUses uses_;  // control steps' inputs and results count two readers: never folded
};

}  // namespace

void FoldTransposesIntoDots(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  DotTransposeFolder(plan, alias_root).Run();
}

}  // namespace stablert::plan
