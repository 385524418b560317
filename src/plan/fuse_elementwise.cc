// FuseElementwise (fuse_elementwise.h): groups of elementwise steps become "fused" steps.
#include "plan/fuse_elementwise.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/data_movement_params.h"
#include "kernels/fused_params.h"
#include "kernels/reduce_params.h"
#include "kernels/registry.h"

namespace stablert::plan {
namespace {

// Reductions the fused kernel folds (kernels/fused.cc FindReduce).
bool FusibleReduce(std::string_view kernel, DType dtype) {
  const bool is_float = dtype == DType::kF32 || dtype == DType::kF64;
  const bool is_int = dtype == DType::kS8 || dtype == DType::kS16 || dtype == DType::kS32 || dtype == DType::kS64 ||
                      dtype == DType::kU8 || dtype == DType::kU16 || dtype == DType::kU32 || dtype == DType::kU64;
  const std::string_view body = kernel.substr(0, kernel.find('.'));
  if (body == "reduce_add" || body == "reduce_mul" || body == "reduce_max" || body == "reduce_min")
    return is_float || is_int;
  if (body == "reduce_and" || body == "reduce_or") return is_int;
  return false;
}

// Row groups (fused_rows): at least this many rows (blocks are what calls share), rows of
// at most this many elements (a block of one row should stay within L2).
constexpr int64_t kMinRowsBlocked = 2;
constexpr int64_t kMaxRowLength = 1 << 18;

// Reductions with fewer rows than this are cut into segments (kernels split them).
constexpr int64_t kMinRowsUnsegmented = 64;
constexpr int64_t kSegmentElements = 32768;
constexpr int64_t kMaxUnits = 256;

// ---- Merging the sub-steps of a fused_rows step ----
//
// Consecutive full-size chains (elementwise sub-steps and fused steps) become one fused
// sub-step, and a reduction of a value that chain computes folds into it; values the chain
// computes that later sub-steps (or the step's outputs) read stay its outputs (in the
// block's buffers), the rest live in tiles only.

struct ChainOp {
  std::string kernel;
  kernels::KernelParams params;
  std::vector<int64_t> inputs;  // >= 0: a rows value; < 0: a value internal to the chain
  int64_t output = 0;
};

class RowMerger {
 public:
  explicit RowMerger(kernels::FusedRowsParams& params) : p_(params) {}

  void Run() {
    const size_t n = p_.values.size();
    readers_.assign(n, {});
    for (size_t s = 0; s < p_.steps.size(); ++s)
      for (int64_t v : p_.steps[s].inputs) {
        readers_[v].push_back(s);
        if (p_.values[v].of >= 0) readers_[p_.values[v].of].push_back(s);
      }
    for (int64_t v : p_.outputs) readers_[v].push_back(SIZE_MAX);
    std::vector<kernels::FusedRowsStep> steps;
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      kernels::FusedRowsStep& step = p_.steps[s];
      const auto* fp = step.params.As<kernels::FusedParams>();
      const bool full = FullStep(step);
      if (full && (step.kernel != "fused" || fp->reduce.empty())) {
        Append(step);
        continue;
      }
      if (full) {  // a chain with its reduction: the chain ends with it
        Append(step);
        Flush(steps, s + 1);
        continue;
      }
      const auto* rp = step.params.As<kernels::ReduceParams>();
      if (rp != nullptr && !chain_.empty() && Computed(step.inputs[0]) && Foldable(step.kernel)) {
        Flush(steps, s, &step);
        continue;
      }
      if (!chain_.empty() && !ReadsChain(step)) {  // runs before the chain, which goes on
        steps.push_back(std::move(step));
        continue;
      }
      Flush(steps, s);
      steps.push_back(std::move(step));
    }
    Flush(steps, p_.steps.size());
    p_.steps = std::move(steps);
    Compact();
  }

 private:
  static bool Foldable(std::string_view kernel) {
    const std::string_view body = kernel.substr(0, kernel.find('.'));
    const std::string_view type = kernel.substr(kernel.find('.') + 1);
    if (type == "f16" || type == "bf16" || type.starts_with("c") || type == "i1") return false;
    if (body == "reduce_add" || body == "reduce_mul" || body == "reduce_max" || body == "reduce_min") return true;
    return (body == "reduce_and" || body == "reduce_or") && type != "f32" && type != "f64";
  }

  bool FullStep(const kernels::FusedRowsStep& step) const {
    if (step.params.As<kernels::ReduceParams>() != nullptr) return false;
    for (int64_t v : step.outputs)
      if (p_.values[v].form != static_cast<int64_t>(kernels::RowsForm::kFull)) {
        // a fused step with a reduction: its last output is a row value
        const auto* fp = step.params.As<kernels::FusedParams>();
        if (fp == nullptr || fp->reduce.empty() || v != step.outputs.back()) return false;
      }
    const auto* fp = step.params.As<kernels::FusedParams>();
    if (step.kernel == "fused" && fp == nullptr) return false;
    if (fp == nullptr && step.kernel.starts_with("reduce_")) return false;
    return true;
  }

  bool ReadsChain(const kernels::FusedRowsStep& step) const {
    for (int64_t v : step.inputs)
      if (Computed(v) || (p_.values[v].of >= 0 && Computed(p_.values[v].of))) return true;
    return false;
  }

  bool Computed(int64_t v) const {
    for (const ChainOp& op : chain_)
      if (op.output == v) return true;
    return false;
  }

  // Adds `step`'s elementwise ops to the chain (a fused step's own reduction is kept aside).
  void Append(const kernels::FusedRowsStep& step) {
    chain_steps_.push_back(&step);
    const auto* fp = step.params.As<kernels::FusedParams>();
    if (fp == nullptr) {
      chain_.push_back(ChainOp{step.kernel, step.params, step.inputs, step.outputs[0]});
      return;
    }
    const size_t num_inputs = step.inputs.size() - (fp->reduce.empty() ? 0 : 1);
    std::vector<int64_t> slot(fp->slot_dtypes.size());
    for (size_t k = 0; k < num_inputs; ++k) slot[k] = step.inputs[k];
    for (size_t k = num_inputs; k < slot.size(); ++k) slot[k] = --next_internal_;
    for (size_t j = 0; j < fp->output_slots.size(); ++j) slot[fp->output_slots[j]] = step.outputs[j];
    for (size_t k = num_inputs; k < slot.size(); ++k) internal_dtype_[slot[k]] = fp->slot_dtypes[k];
    for (const kernels::FusedOp& op : fp->ops) {
      ChainOp chain_op{op.kernel, op.params, {}, slot[op.output]};
      for (int64_t s : op.inputs) chain_op.inputs.push_back(slot[s]);
      chain_.push_back(std::move(chain_op));
    }
    if (!fp->reduce.empty()) {
      pending_reduce_ = fp->reduce[0];
      pending_reduce_value_ = slot[fp->reduce[0].slot];
      pending_init_ = step.inputs.back();
      pending_result_ = step.outputs.back();
    }
  }

  // Whether a rows value computed in the chain is read after sub-step `s` (or is an output).
  bool ReadAfter(int64_t v, size_t s) const {
    for (size_t r : readers_[v])
      if (r == SIZE_MAX || r >= s) return true;
    return false;
  }

  // Ends the chain before sub-step `s`, folding the reduction `reduce` (a reduce sub-step)
  // into it if given.
  void Flush(std::vector<kernels::FusedRowsStep>& steps, size_t s, const kernels::FusedRowsStep* reduce = nullptr) {
    if (chain_.empty()) return;
    const size_t after = reduce != nullptr ? s + 1 : s;
    if (chain_steps_.size() == 1 && reduce == nullptr && chain_steps_[0]->kernel == "fused") {  // as it was
      steps.push_back(*chain_steps_[0]);
    } else {
      kernels::FusedParams fp;
      fp.num_elements = p_.rows * p_.length;
      std::map<int64_t, int64_t> slot;
      std::vector<int64_t> inputs, outputs;
      std::map<int64_t, bool> computed;
      for (const ChainOp& op : chain_) computed[op.output] = true;
      for (const ChainOp& op : chain_)
        for (int64_t v : op.inputs)
          if (!computed.count(v) && !slot.count(v)) {
            slot[v] = static_cast<int64_t>(inputs.size());
            inputs.push_back(v);
            fp.slot_dtypes.push_back(p_.values[v].dtype);
          }
      for (const ChainOp& op : chain_) {
        kernels::FusedOp fop{op.kernel, {}, 0, op.params, op.params.ToString()};
        for (int64_t v : op.inputs) fop.inputs.push_back(slot.at(v));
        fop.output = static_cast<int64_t>(fp.slot_dtypes.size());
        slot[op.output] = fop.output;
        fp.slot_dtypes.push_back(op.output >= 0 ? p_.values[op.output].dtype : internal_dtype_.at(op.output));
        fp.ops.push_back(std::move(fop));
        if (op.output >= 0 && ReadAfter(op.output, after)) {
          fp.output_slots.push_back(fop.output);
          outputs.push_back(op.output);
        }
      }
      std::optional<int64_t> init, result;
      if (reduce != nullptr) {
        fp.reduce.push_back(kernels::FusedReduce{reduce->kernel, slot.at(reduce->inputs[0]), p_.rows, p_.length, 1});
        init = reduce->inputs[1];
        result = reduce->outputs[0];
      } else if (pending_reduce_) {
        kernels::FusedReduce r = *pending_reduce_;
        r.slot = slot.at(pending_reduce_value_);
        fp.reduce.push_back(r);
        init = pending_init_;
        result = pending_result_;
      }
      kernels::FusedRowsStep step;
      step.kernel = "fused";
      step.inputs = std::move(inputs);
      if (init) step.inputs.push_back(*init);
      step.outputs = std::move(outputs);
      if (result) step.outputs.push_back(*result);
      step.params = std::move(fp);
      step.params_text = step.params.ToString();
      steps.push_back(std::move(step));
    }
    chain_.clear();
    chain_steps_.clear();
    pending_reduce_.reset();
  }

  // Drops values no sub-step computes or reads any more; renumbers the rest.
  void Compact() {
    const size_t n = p_.values.size();
    std::vector<bool> used(n, false);
    for (const kernels::FusedRowsStep& step : p_.steps) {
      for (int64_t v : step.inputs) used[v] = true;
      for (int64_t v : step.outputs) used[v] = true;
    }
    for (int64_t v : p_.outputs) used[v] = true;
    for (size_t v = 0; v < n; ++v)
      if (used[v] && p_.values[v].of >= 0) used[p_.values[v].of] = true;
    std::vector<int64_t> number(n, -1);
    std::vector<kernels::FusedRowsValue> values;
    for (size_t v = 0; v < n; ++v)
      if (used[v]) {
        number[v] = static_cast<int64_t>(values.size());
        values.push_back(p_.values[v]);
        if (values.back().of >= 0) values.back().of = number[p_.values[v].of];
      }
    for (kernels::FusedRowsStep& step : p_.steps) {
      for (int64_t& v : step.inputs) v = number[v];
      for (int64_t& v : step.outputs) v = number[v];
    }
    for (int64_t& v : p_.outputs) v = number[v];
    p_.values = std::move(values);
  }

  kernels::FusedRowsParams& p_;
  std::vector<std::vector<size_t>> readers_;
  std::vector<ChainOp> chain_;
  std::vector<const kernels::FusedRowsStep*> chain_steps_;
  std::map<int64_t, int64_t> internal_dtype_;
  int64_t next_internal_ = 0;
  std::optional<kernels::FusedReduce> pending_reduce_;
  int64_t pending_reduce_value_ = 0, pending_init_ = 0, pending_result_ = 0;
};

class Fuser {
 public:
  Fuser(ExecutionPlan& plan, std::vector<ValueId>& alias_root) : plan_(plan), alias_root_(alias_root) {
    const size_t n = plan.values.size();
    reads_.assign(n, 0);
    writers_.assign(n, 0);
    external_.assign(n, false);
    for (ValueId v : plan.results) external_[alias_root[v]] = true;
    Count(plan.body);
  }

  void Run() {
    Fuse(plan_.body);
    FuseRows(plan_.body);
  }

 private:
  void Count(const Sequence& sequence) {
    for (const Step& step : sequence.steps) {
      for (ValueId v : step.inputs) ++reads_[alias_root_[v]];
      for (ValueId v : step.outputs) ++writers_[v];
      if (step.kind != StepKind::kKernel) {
        for (ValueId v : step.inputs) external_[alias_root_[v]] = true;
        for (ValueId v : step.outputs) external_[alias_root_[v]] = true;
      }
      for (const Sequence& region : step.regions) Count(region);
    }
  }

  int64_t Elements(ValueId v) const { return ElementCount(plan_.values[v].type.dims); }

  // An iota of an integer type the fused kernel generates per tile (kernels/fused_params.h
  // FusedIotaParams): folded into its group, the array is never written.
  bool FoldableIota(const Step& step) const {
    if (step.kind != StepKind::kKernel || !step.kernel.starts_with("iota.") || !step.inputs.empty() ||
        step.outputs.size() != 1 || !step.regions.empty() || step.params.As<kernels::IotaParams>() == nullptr)
      return false;
    const ValueId out = step.outputs[0];
    const Value& value = plan_.values[out];
    const DType dtype = value.type.dtype;
    const int64_t d = step.params.As<kernels::IotaParams>()->dimension;
    return alias_root_[out] == out && value.strides.empty() && Elements(out) > 1 && d >= 0 &&
           d < static_cast<int64_t>(value.type.dims.size()) &&
           (dtype == DType::kS32 || dtype == DType::kU32 || dtype == DType::kS64 || dtype == DType::kU64);
  }

  bool Fusible(const Step& step) const {
    if (FoldableIota(step)) return true;
    if (step.kind != StepKind::kKernel || step.outputs.size() != 1 || step.inputs.empty() || step.inputs.size() > 3 ||
        step.kernel.starts_with("fused"))
      return false;
    const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel);
    if (entry == nullptr || !entry->strided_inputs) return false;
    const ValueId out = step.outputs[0];
    const Value& value = plan_.values[out];
    if (alias_root_[out] != out || !value.strides.empty() || !kernels::FusibleDType(value.type.dtype)) return false;
    const int64_t n = Elements(out);
    if (n <= 1) return false;
    for (ValueId v : step.inputs) {
      const Value& in = plan_.values[v];
      if (!kernels::FusibleDType(in.type.dtype)) return false;
      const bool scalar = in.type.dims.empty() && in.strides.empty();
      if (!scalar && Elements(v) != n) return false;
    }
    return true;
  }

  // An elementwise step on scalars (one element): not fused, but a run goes on past it
  // (it reads no value of more elements, so no group value).
  bool ScalarElementwise(const Step& step) const {
    if (step.kind != StepKind::kKernel || step.outputs.size() != 1 || step.kernel.starts_with("fused")) return false;
    const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel);
    if (entry == nullptr || !entry->strided_inputs || alias_root_[step.outputs[0]] != step.outputs[0]) return false;
    for (ValueId v : step.inputs)
      if (Elements(v) != 1) return false;
    return Elements(step.outputs[0]) == 1;
  }

  static bool WritesStorage(const Step& step, ValueId root, const std::vector<ValueId>& alias_root) {
    for (ValueId v : step.outputs)
      if (alias_root[v] == root) return true;
    for (const Sequence& region : step.regions)
      for (const Step& inner : region.steps)
        if (WritesStorage(inner, root, alias_root)) return true;
    return false;
  }

  // Whether `step` (or a step in its regions) reads a value whose storage root is in `roots`.
  bool ReadsAny(const Step& step, const std::map<ValueId, int64_t>& roots) const {
    for (ValueId v : step.inputs)
      if (roots.count(alias_root_[v])) return true;
    for (const Sequence& region : step.regions)
      for (const Step& inner : region.steps)
        if (ReadsAny(inner, roots)) return true;
    return false;
  }

  struct Group {
    std::vector<size_t> members;  // step indices in the sequence, in order
  };

  // The fused step for `group` of `sequence`, and whether a reduce step (index `*reduce`)
  // folds in; empty kernel if the group stays as it is.
  struct Fused {
    Step step;
    std::vector<Step> after;  // the combining reduce step, if the reduction is segmented
    size_t reduce = SIZE_MAX;
  };

  Fused Build(const Sequence& sequence, const Group& group, size_t run_end) {
    Fused fused;
    kernels::FusedParams params;
    const size_t last = group.members.back();
    params.num_elements = Elements(sequence.steps[last].outputs[0]);
    std::map<ValueId, int64_t> input_slot;     // external value -> slot
    // Views of the same storage read the same way share a slot (JAX repeats broadcasts
    // of one constant).
    std::map<std::tuple<ValueId, int64_t, std::vector<int64_t>, Dims, DType>, ValueId> same;
    std::map<ValueId, int64_t> computed_slot;  // computed root -> slot
    std::map<ValueId, int> group_reads;        // root -> reads by members
    std::vector<ValueId> inputs;
    // Slots: inputs first (numbered in order of first use), computed values after.
    for (size_t index : group.members)
      for (ValueId v : sequence.steps[index].inputs) {
        ++group_reads[alias_root_[v]];
        bool computed = false;
        for (size_t other : group.members)
          if (other < index && sequence.steps[other].outputs[0] == alias_root_[v]) computed = true;
        if (computed || input_slot.count(v)) continue;
        const Value& value = plan_.values[v];
        const ValueId root = alias_root_[v];
        const auto key = std::make_tuple(root, value.index, value.strides, value.type.dims, value.type.dtype);
        auto it = value.strides.empty() ? same.end() : same.find(key);
        if (it != same.end() && plan_.values[root].storage == value.storage) {
          input_slot[v] = input_slot.at(it->second);
          continue;
        }
        if (!value.strides.empty()) same[key] = v;
        input_slot[v] = static_cast<int64_t>(inputs.size());
        inputs.push_back(v);
      }
    for (ValueId v : inputs) params.slot_dtypes.push_back(static_cast<int64_t>(plan_.values[v].type.dtype));
    for (size_t index : group.members) {
      const Step& step = sequence.steps[index];
      kernels::FusedOp op;
      op.kernel = step.kernel;
      for (ValueId v : step.inputs) {
        auto it = computed_slot.find(alias_root_[v]);
        op.inputs.push_back(it != computed_slot.end() ? it->second : input_slot.at(v));
      }
      op.output = static_cast<int64_t>(params.slot_dtypes.size());
      op.params = step.params;
      if (const auto* iota = step.params.As<kernels::IotaParams>(); iota != nullptr && step.inputs.empty()) {
        const Dims& dims = plan_.values[step.outputs[0]].type.dims;
        kernels::FusedIotaParams folded;
        folded.size = dims[static_cast<size_t>(iota->dimension)];
        for (size_t k = static_cast<size_t>(iota->dimension) + 1; k < dims.size(); ++k) folded.inner *= dims[k];
        op.kernel = kernels::KernelKey(kernels::kFusedIota, {plan_.values[step.outputs[0]].type.dtype});
        op.params = folded;
      }
      op.params_text = op.params.ToString();
      computed_slot[step.outputs[0]] = op.output;
      params.slot_dtypes.push_back(static_cast<int64_t>(plan_.values[step.outputs[0]].type.dtype));
      params.ops.push_back(std::move(op));
    }
    // Outputs: values read outside the group.
    std::vector<ValueId> outputs;
    std::vector<ValueId> internal;
    for (size_t index : group.members) {
      const ValueId v = sequence.steps[index].outputs[0];
      if (external_[v] || reads_[v] != group_reads[v] || group_reads[v] == 0) {
        params.output_slots.push_back(computed_slot[v]);
        outputs.push_back(v);
      } else {
        internal.push_back(v);
      }
    }
    // A reduction of an output read by it alone.
    std::map<ValueId, int64_t> roots(computed_slot.begin(), computed_slot.end());
    for (size_t j = run_end; j < sequence.steps.size(); ++j) {
      const Step& step = sequence.steps[j];
      if (!ReadsAny(step, roots)) continue;
      TryReduce(sequence, last, j, computed_slot, group_reads, params, outputs, inputs, fused);
      break;
    }
    // Two steps at least (a folded iota alone with one reader is left as it is), or one and
    // a reduction.
    size_t computing = 0;
    for (size_t index : group.members) computing += FoldableIota(sequence.steps[index]) ? 0 : 1;
    if (computing < 2 && fused.reduce == SIZE_MAX) return Fused{};
    if (outputs.empty() && fused.reduce == SIZE_MAX) return Fused{};
    // Read counts: the members' reads become the fused step's.
    for (size_t index : group.members)
      for (ValueId v : sequence.steps[index].inputs) --reads_[alias_root_[v]];
    for (ValueId v : inputs) ++reads_[alias_root_[v]];
    fused.step.kind = StepKind::kKernel;
    fused.step.kernel = "fused";
    fused.step.inputs = std::move(inputs);
    fused.step.outputs.insert(fused.step.outputs.begin(), outputs.begin(), outputs.end());
    fused.step.origin = "fused " + std::to_string(group.members.size()) + " steps ending " + sequence.steps[last].origin;
    fused.step.params = std::move(params);
    return fused;
  }

  void TryReduce(const Sequence& sequence, size_t last, size_t j, const std::map<ValueId, int64_t>& computed_slot,
                 std::map<ValueId, int>& group_reads, kernels::FusedParams& params, std::vector<ValueId>& outputs,
                 std::vector<ValueId>& inputs, Fused& fused) {
    const Step& reduce = sequence.steps[j];
    const auto* rp = reduce.params.As<kernels::ReduceParams>();
    if (reduce.kind != StepKind::kKernel || rp == nullptr || !reduce.kernel.starts_with("reduce_") ||
        reduce.inputs.size() != 2 || reduce.outputs.size() != 1 || !reduce.regions.empty())
      return;
    const ValueId operand = reduce.inputs[0], init = reduce.inputs[1], result = reduce.outputs[0];
    const ValueId root = alias_root_[operand];
    auto slot = computed_slot.find(root);
    if (slot == computed_slot.end() || !plan_.values[operand].strides.empty()) return;
    const DType dtype = plan_.values[operand].type.dtype;
    if (!FusibleReduce(reduce.kernel, dtype) || plan_.values[init].type.dtype != dtype ||
        Elements(init) != 1 || !plan_.values[result].strides.empty() || writers_[result] != 1)
      return;
    // Only the reduction reads the operand.
    if (external_[root] || reads_[root] != group_reads[root] + 1) return;
    // All or trailing dims.
    const Dims& dims = plan_.values[operand].type.dims;
    const size_t rank = dims.size(), reduced = rp->dimensions.size();
    for (size_t i = 0; i < reduced; ++i)
      if (rp->dimensions[i] != static_cast<int64_t>(rank - reduced + i)) return;
    for (size_t i = last + 1; i < j; ++i)
      if (WritesStorage(sequence.steps[i], alias_root_[init], alias_root_)) return;
    int64_t rows = 1, length = 1;
    for (size_t i = 0; i < rank; ++i) (i < rank - reduced ? rows : length) *= dims[i];
    if (length < 1 || rows * length != params.num_elements) return;
    // The operand stops being an output of the group.
    auto out = std::find(outputs.begin(), outputs.end(), root);
    if (out == outputs.end()) return;
    params.output_slots.erase(params.output_slots.begin() + (out - outputs.begin()));
    outputs.erase(out);
    int64_t segments = 1;
    if (rows < kMinRowsUnsegmented && !reduce.kernel.starts_with("reduce_mul.f"))
      segments = std::clamp<int64_t>(length / kSegmentElements, 1, std::max<int64_t>(1, kMaxUnits / rows));
    params.reduce.push_back(kernels::FusedReduce{reduce.kernel, slot->second, rows, length, segments});
    inputs.push_back(init);
    reads_[root] -= 1;
    fused.reduce = j;
    if (segments == 1) {
      fused.step.outputs.push_back(result);
      return;
    }
    // Partial results [kept dims..., segments], finished by the reduce kernel.
    TensorType partial_type{dtype, Dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(rank - reduced))};
    partial_type.dims.push_back(segments);
    const auto partial = static_cast<ValueId>(plan_.values.size());
    Value value;
    value.byte_size = ByteSize(partial_type);
    value.type = std::move(partial_type);
    plan_.values.push_back(std::move(value));
    alias_root_.push_back(partial);
    reads_.push_back(1);
    writers_.push_back(1);
    external_.push_back(false);
    fused.step.outputs.push_back(partial);
    Step finish;
    finish.kind = StepKind::kKernel;
    finish.kernel = reduce.kernel;
    finish.inputs = {partial, init};
    finish.outputs = {result};
    finish.params = kernels::ReduceParams{{static_cast<int64_t>(rank - reduced)}};
    finish.origin = reduce.origin;
    ++reads_[alias_root_[init]];
    fused.after.push_back(std::move(finish));
  }

  void Fuse(Sequence& sequence) {
    for (Step& step : sequence.steps)
      if (step.kind != StepKind::kManual)  // partition-private values: left as they are
        for (Sequence& region : step.regions) Fuse(region);
    const size_t n = sequence.steps.size();
    // Runs and their groups.
    std::vector<Fused> fused_at(n);  // fused step placed at its group's last member
    std::vector<bool> removed(n, false);
    size_t i = 0;
    while (i < n) {
      if (!Fusible(sequence.steps[i])) {
        ++i;
        continue;
      }
      // The run [i, end): stops at a step reading a strided or non-dense alias of a value
      // the run computes.
      std::map<ValueId, bool> computed;  // roots computed by the run
      size_t end = i;
      while (end < n && (Fusible(sequence.steps[end]) || ScalarElementwise(sequence.steps[end]))) {
        if (!Fusible(sequence.steps[end])) {  // stays where it is; reads no group value
          ++end;
          continue;
        }
        bool reads_view = false;
        for (ValueId v : sequence.steps[end].inputs)
          if (v != alias_root_[v] && computed.count(alias_root_[v]) &&
              (!plan_.values[v].strides.empty() ||
               DTypeByteSize(plan_.values[v].type.dtype) != DTypeByteSize(plan_.values[alias_root_[v]].type.dtype)))
            reads_view = true;
        if (reads_view) break;
        computed[sequence.steps[end].outputs[0]] = true;
        ++end;
      }
      // Groups by element count, in order of first appearance.
      std::vector<std::pair<int64_t, Group>> groups;
      for (size_t k = i; k < end; ++k) {
        if (!Fusible(sequence.steps[k])) continue;
        const int64_t count = Elements(sequence.steps[k].outputs[0]);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == count; });
        if (it == groups.end()) {
          groups.push_back({count, Group{}});
          it = groups.end() - 1;
        }
        it->second.members.push_back(k);
      }
      for (auto& [count, group] : groups) {
        Fused fused = Build(sequence, group, end);
        if (fused.step.kernel.empty()) continue;
        for (size_t k : group.members) removed[k] = true;
        if (fused.reduce != SIZE_MAX) removed[fused.reduce] = true;
        fused_at[group.members.back()] = std::move(fused);
      }
      i = end;
    }
    std::vector<Step> kept;
    kept.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      if (!fused_at[k].step.kernel.empty()) {
        kept.push_back(std::move(fused_at[k].step));
        for (Step& step : fused_at[k].after) kept.push_back(std::move(step));
      }
      if (!removed[k]) kept.push_back(std::move(sequence.steps[k]));
    }
    sequence.steps = std::move(kept);
  }

  // ---- Row-blocked sequences ("fused_rows") ----

  // What a step of a row group reads: its form and, for computed values, the group value.
  struct RowRead {
    kernels::RowsForm form;
    ValueId root = kNoValue;  // the computed root read (kFull, kRow, kRowBroadcast of it)
  };

  struct RowGroup {
    int64_t rows = 0, length = 0;
    std::map<ValueId, kernels::RowsForm> computed;  // computed roots: kFull or kRow
    std::vector<size_t> members;
    bool broadcasts_back = false;  // a member reads a row broadcast of a computed row value
  };

  // The split of `dims` into leading dims of `rows` elements and trailing ones of `length`;
  // -1 if there is none.
  static int SplitAt(const Dims& dims, int64_t rows, int64_t length) {
    int64_t lead = 1;
    for (size_t k = 0; k <= dims.size(); ++k) {
      if (lead == rows && ElementCount(Dims(dims.begin() + static_cast<std::ptrdiff_t>(k), dims.end())) == length)
        return static_cast<int>(k);
      if (k < dims.size()) lead *= dims[k];
    }
    return -1;
  }

  static bool DenseStrides(const Dims& dims, const std::vector<int64_t>& strides, size_t from, size_t to) {
    int64_t expect = 1;
    for (size_t k = to; k-- > from;) {
      if (dims[k] != 1 && strides[k] != expect) return false;
      expect *= dims[k];
    }
    return true;
  }

  // How a member of `group` with `count` elements per output reads `v`; false if it cannot.
  bool ClassifyRead(const RowGroup& group, ValueId v, int64_t count, RowRead& read) const {
    using kernels::RowsForm;
    const Value& value = plan_.values[v];
    const ValueId root = alias_root_[v];
    const int64_t full = group.rows * group.length, n = Elements(v);
    const bool full_step = count == full;
    const bool dense = value.strides.empty() || DenseStrides(value.type.dims, value.strides, 0, value.strides.size());
    auto it = group.computed.find(root);
    if (it != group.computed.end()) {
      read.root = root;
      if (dense) {
        if (value.type.dtype != plan_.values[root].type.dtype || n != Elements(root)) return false;
        read.form = it->second;
        return (it->second == RowsForm::kFull) == full_step;
      }
      if (!full_step || it->second != RowsForm::kRow || n != full) return false;
      const int k = SplitAt(value.type.dims, group.rows, group.length);
      if (k < 0) return false;
      for (size_t d = static_cast<size_t>(k); d < value.strides.size(); ++d)
        if (value.strides[d] != 0 && value.type.dims[d] != 1) return false;
      if (!DenseStrides(value.type.dims, value.strides, 0, static_cast<size_t>(k))) return false;
      read.form = RowsForm::kRowBroadcast;
      return true;
    }
    read.root = kNoValue;
    if (dense) {
      if (n == count) {
        read.form = full_step ? RowsForm::kFull : RowsForm::kRow;
        return true;
      }
      if (value.type.dims.empty()) {
        read.form = RowsForm::kScalar;
        return true;
      }
      return false;
    }
    if (n != count) return false;
    bool zero = true;
    for (int64_t st : value.strides) zero = zero && st == 0;
    if (zero) {
      read.form = full_step ? RowsForm::kSplatFull : RowsForm::kSplatRow;
      return true;
    }
    if (!full_step) return false;
    const int k = SplitAt(value.type.dims, group.rows, group.length);
    if (k < 0) return false;
    const auto kk = static_cast<size_t>(k);
    bool lead_zero = true, trail_zero = true;
    for (size_t d = 0; d < value.strides.size(); ++d)
      if (value.type.dims[d] != 1 && value.strides[d] != 0) (d < kk ? lead_zero : trail_zero) = false;
    if (trail_zero && DenseStrides(value.type.dims, value.strides, 0, kk)) {
      read.form = RowsForm::kRowBroadcast;
      return true;
    }
    if (lead_zero && DenseStrides(value.type.dims, value.strides, kk, value.strides.size())) {
      read.form = RowsForm::kColumn;
      return true;
    }
    return false;
  }

  // A reduction over trailing dims of a dense value: its [rows, length], else {0, 0}.
  std::pair<int64_t, int64_t> RowReduction(const Step& step) const {
    if (step.kind != StepKind::kKernel || !step.regions.empty()) return {0, 0};
    if (const auto* fp = step.params.As<kernels::FusedParams>(); fp != nullptr && step.kernel == "fused") {
      if (fp->reduce.size() != 1 || fp->reduce[0].segments != 1) return {0, 0};
      return {fp->reduce[0].rows, fp->reduce[0].length};
    }
    const auto* rp = step.params.As<kernels::ReduceParams>();
    if (rp == nullptr || !step.kernel.starts_with("reduce_") || step.inputs.size() != 2 || step.outputs.size() != 1)
      return {0, 0};
    const ValueId operand = step.inputs[0];
    if (!plan_.values[operand].strides.empty() || Elements(step.inputs[1]) != 1) return {0, 0};
    const Dims& dims = plan_.values[operand].type.dims;
    const size_t rank = dims.size(), reduced = rp->dimensions.size();
    if (reduced == 0 || reduced > rank) return {0, 0};
    for (size_t i = 0; i < reduced; ++i)
      if (rp->dimensions[i] != static_cast<int64_t>(rank - reduced + i)) return {0, 0};
    int64_t rows = 1, length = 1;
    for (size_t i = 0; i < rank; ++i) (i < rank - reduced ? rows : length) *= dims[i];
    return {rows, length};
  }

  // Whether `step` joins `group` (and adds its outputs); reads in `reads`.
  bool JoinRows(RowGroup& group, const Step& step, std::vector<RowRead>& reads) {
    using kernels::RowsForm;
    if (step.kind != StepKind::kKernel || !step.regions.empty() || step.outputs.empty() ||
        step.kernel.starts_with("fused_rows"))
      return false;
    const int64_t full = group.rows * group.length;
    for (ValueId v : step.outputs)
      if (alias_root_[v] != v || !plan_.values[v].strides.empty() || writers_[v] != 1 ||
          !kernels::FusibleDType(plan_.values[v].type.dtype))
        return false;
    reads.clear();
    std::vector<std::pair<ValueId, RowsForm>> outputs;
    const auto [rows, length] = RowReduction(step);
    const auto* fp = step.params.As<kernels::FusedParams>();
    if (fp != nullptr)  // a folded iota counts from the step's first element, not a block's
      for (const kernels::FusedOp& op : fp->ops)
        if (op.kernel.starts_with(kernels::kFusedIota)) return false;
    if (rows != 0 && fp == nullptr) {  // a reduce step
      if (rows != group.rows || length != group.length) return false;
      RowRead operand, init;
      if (!ClassifyRead(group, step.inputs[0], full, operand) || operand.form != RowsForm::kFull) return false;
      if (!plan_.values[step.inputs[1]].type.dims.empty() || !plan_.values[step.inputs[1]].strides.empty() ||
          group.computed.count(alias_root_[step.inputs[1]]))
        return false;
      init.form = RowsForm::kScalar;
      reads = {operand, init};
      outputs.push_back({step.outputs[0], RowsForm::kRow});
    } else {
      const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel);
      if (entry == nullptr || !entry->strided_inputs) return false;
      int64_t count = 0;
      if (fp != nullptr) {
        if (step.kernel != "fused") return false;
        count = fp->num_elements;
        if (rows != 0 && (rows != group.rows || length != group.length || count != full)) return false;
        if (fp->reduce.size() > 0 && rows == 0) return false;  // a segmented reduction
      } else {
        if (step.outputs.size() != 1) return false;
        count = Elements(step.outputs[0]);
      }
      if (count != full && count != group.rows) return false;
      for (size_t k = 0; k < step.inputs.size(); ++k) {
        const ValueId v = step.inputs[k];
        RowRead read;
        if (k + 1 == step.inputs.size() && rows != 0) {  // the fused reduction's init
          if (!plan_.values[v].type.dims.empty() || group.computed.count(alias_root_[v])) return false;
          read.form = RowsForm::kScalar;
        } else if (!ClassifyRead(group, v, count, read)) {
          return false;
        }
        reads.push_back(read);
      }
      const size_t chain_outputs = step.outputs.size() - (rows != 0 ? 1 : 0);
      for (size_t k = 0; k < step.outputs.size(); ++k) {
        const bool row = k >= chain_outputs || count == group.rows;
        if (Elements(step.outputs[k]) != (row ? group.rows : full)) return false;
        outputs.push_back({step.outputs[k], row ? RowsForm::kRow : RowsForm::kFull});
      }
    }
    for (const RowRead& read : reads)
      if (read.form == RowsForm::kRowBroadcast && read.root != kNoValue) group.broadcasts_back = true;
    for (const auto& [v, form] : outputs) group.computed[v] = form;
    return true;
  }

  // Reads `step` makes of group values (any alias of a computed root).
  bool ReadsGroup(const Step& step, const RowGroup& group) const {
    for (ValueId v : step.inputs)
      if (group.computed.count(alias_root_[v])) return true;
    for (const Sequence& region : step.regions)
      for (const Step& inner : region.steps)
        if (ReadsGroup(inner, group)) return true;
    return false;
  }

  // The fused_rows step for `group`.
  Step BuildRows(const Sequence& sequence, const RowGroup& group) {
    using kernels::RowsForm;
    kernels::FusedRowsParams params;
    params.rows = group.rows;
    params.length = group.length;
    std::map<std::pair<ValueId, int64_t>, int64_t> number;  // (plan value or root, form) -> value
    std::vector<ValueId> inputs;
    std::map<ValueId, int> group_reads;
    auto add = [&](kernels::FusedRowsValue value) {
      params.values.push_back(value);
      return static_cast<int64_t>(params.values.size() - 1);
    };
    for (size_t index : group.members)
      for (ValueId v : sequence.steps[index].inputs) ++group_reads[alias_root_[v]];
    auto internal = [&](ValueId v) { return !external_[v] && reads_[v] == group_reads[v] && group_reads[v] > 0; };
    std::vector<RowRead> reads;
    RowGroup replay{group.rows, group.length, {}, {}, false};
    for (size_t index : group.members) {
      const Step& step = sequence.steps[index];
      const bool ok = JoinRows(replay, step, reads);
      (void)ok;
      kernels::FusedRowsStep sub;
      sub.kernel = step.kernel;
      for (size_t k = 0; k < step.inputs.size(); ++k) {
        const ValueId v = step.inputs[k];
        const RowRead& read = reads[k];
        const auto dtype = static_cast<int64_t>(plan_.values[v].type.dtype);
        int64_t id;
        if (read.root != kNoValue) {
          const int64_t of = number.at({read.root, -1});
          if (read.form == RowsForm::kRowBroadcast) {
            auto it = number.find({read.root, static_cast<int64_t>(RowsForm::kRowBroadcast)});
            id = it != number.end() ? it->second
                                    : (number[{read.root, static_cast<int64_t>(RowsForm::kRowBroadcast)}] =
                                           add({static_cast<int64_t>(RowsForm::kRowBroadcast), dtype, -1, of}));
          } else {
            id = of;
          }
        } else {
          auto it = number.find({v, static_cast<int64_t>(read.form)});
          if (it != number.end()) {
            id = it->second;
          } else {
            id = add({static_cast<int64_t>(read.form), dtype, static_cast<int64_t>(inputs.size()), -1});
            number[{v, static_cast<int64_t>(read.form)}] = id;
            inputs.push_back(v);
          }
        }
        sub.inputs.push_back(id);
      }
      if (step.params.As<kernels::ReduceParams>() != nullptr) sub.params = kernels::ReduceParams{{1}};
      else sub.params = step.params;
      sub.params_text = sub.params.ToString();
      // A repeat of an earlier sub-step (the same reduction of the same value, as a mean and
      // a variance both compute) whose results only the group reads: those results instead.
      bool repeat = false;
      for (const kernels::FusedRowsStep& earlier : params.steps)
        if (!repeat && earlier.kernel == sub.kernel && earlier.inputs == sub.inputs &&
            earlier.params_text == sub.params_text && earlier.outputs.size() == step.outputs.size() &&
            std::all_of(step.outputs.begin(), step.outputs.end(), internal)) {
          for (size_t k = 0; k < step.outputs.size(); ++k) number[{step.outputs[k], -1}] = earlier.outputs[k];
          repeat = true;
        }
      if (repeat) continue;
      for (ValueId v : step.outputs) {
        const int64_t id = add({static_cast<int64_t>(replay.computed.at(v)),
                                static_cast<int64_t>(plan_.values[v].type.dtype), -1, -1});
        number[{v, -1}] = id;
        sub.outputs.push_back(id);
      }
      params.steps.push_back(std::move(sub));
    }
    // Outputs: computed values read outside the group.
    Step rows_step;
    for (size_t index : group.members)
      for (ValueId v : sequence.steps[index].outputs)
        if (!internal(v)) {
          params.outputs.push_back(number.at({v, -1}));
          rows_step.outputs.push_back(v);
        }
    for (size_t index : group.members)
      for (ValueId v : sequence.steps[index].inputs) --reads_[alias_root_[v]];
    for (ValueId v : inputs) ++reads_[alias_root_[v]];
    rows_step.kind = StepKind::kKernel;
    rows_step.kernel = "fused_rows";
    rows_step.inputs = std::move(inputs);
    rows_step.origin = "rows of " + std::to_string(group.members.size()) + " steps ending " +
                       sequence.steps[group.members.back()].origin;
    RowMerger(params).Run();
    rows_step.params = std::move(params);
    return rows_step;
  }

  void FuseRows(Sequence& sequence) {
    for (Step& step : sequence.steps)
      if (step.kind != StepKind::kManual)
        for (Sequence& region : step.regions) FuseRows(region);
    const size_t n = sequence.steps.size();
    std::vector<Step> placed(n);
    std::vector<bool> removed(n, false);
    // The group of the steps from `first` on, under [rows, length].
    auto grow = [&](size_t first, int64_t rows, int64_t length) {
      RowGroup group{rows, length, {}, {}, false};
      std::vector<RowRead> reads;
      for (size_t j = first; j < n; ++j) {
        const Step& step = sequence.steps[j];
        RowGroup trial = group;
        if (JoinRows(trial, step, reads)) {
          group = std::move(trial);
          group.members.push_back(j);
          continue;
        }
        if (ScalarElementwise(step) && !ReadsGroup(step, group)) continue;  // stays before the group's step
        break;
      }
      return group;
    };
    auto useful = [](const RowGroup& group) { return group.broadcasts_back && group.members.size() >= 2; };
    size_t i = 0, free_from = 0;  // steps before free_from belong to an earlier group
    while (i < n) {
      const auto [rows, length] = RowReduction(sequence.steps[i]);
      if (rows < kMinRowsBlocked || length < 2 || length > kMaxRowLength) {
        ++i;
        continue;
      }
      // Full-size chains just before the reduction (a residual add before a layer norm)
      // join too, so their values need not be stored.
      size_t first = i;
      for (size_t k = i; k > free_from;) {
        const Step& prev = sequence.steps[k - 1];
        if (ScalarElementwise(prev)) {
          --k;
          continue;
        }
        RowGroup probe{rows, length, {}, {}, false};
        std::vector<RowRead> reads;
        if (!JoinRows(probe, prev, reads) || prev.params.As<kernels::ReduceParams>() != nullptr) break;
        bool full = true;
        for (const auto& [v, form] : probe.computed) full = full && form == kernels::RowsForm::kFull;
        if (!full) break;
        first = --k;
      }
      RowGroup group = grow(first, rows, length);
      if (first != i && !useful(group)) group = grow(i, rows, length);
      if (!useful(group)) {
        ++i;
        continue;
      }
      placed[group.members.back()] = BuildRows(sequence, group);
      for (size_t k : group.members) removed[k] = true;
      i = free_from = group.members.back() + 1;
    }
    std::vector<Step> kept;
    kept.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      if (!placed[k].kernel.empty()) kept.push_back(std::move(placed[k]));
      if (!removed[k]) kept.push_back(std::move(sequence.steps[k]));
    }
    sequence.steps = std::move(kept);
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  std::vector<int> reads_;    // reads of each storage root (by any step, in any sequence)
  std::vector<int> writers_;  // steps writing each value
  std::vector<bool> external_;  // a result root, or referenced by a non-kernel step
};

}  // namespace

void FuseElementwise(ExecutionPlan& plan, std::vector<ValueId>& alias_root) { Fuser(plan, alias_root).Run(); }

}  // namespace stablert::plan
