// FuseElementwise (fuse_elementwise.h): groups of elementwise steps become "fused" steps.
#include "plan/fuse_elementwise.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

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

// Reductions with fewer rows than this are cut into segments (kernels split them).
constexpr int64_t kMinRowsUnsegmented = 64;
constexpr int64_t kSegmentElements = 32768;
constexpr int64_t kMaxUnits = 256;

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

  bool Fusible(const Step& step) const {
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
      op.params_text = step.params.ToString();
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
    if (group.members.size() < 2 && fused.reduce == SIZE_MAX) return Fused{};
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
    auto it = group.computed.find(root);
    if (it != group.computed.end()) {
      read.root = root;
      if (value.strides.empty()) {
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
    if (value.strides.empty()) {
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
        ++group_reads[alias_root_[v]];
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
      for (ValueId v : step.outputs) {
        const int64_t id = add({static_cast<int64_t>(replay.computed.at(v)),
                                static_cast<int64_t>(plan_.values[v].type.dtype), -1, -1});
        number[{v, -1}] = id;
        sub.outputs.push_back(id);
      }
      if (step.params.As<kernels::ReduceParams>() != nullptr) sub.params = kernels::ReduceParams{{1}};
      else sub.params = step.params;
      sub.params_text = sub.params.ToString();
      params.steps.push_back(std::move(sub));
    }
    // Outputs: computed values read outside the group.
    Step rows_step;
    for (size_t index : group.members)
      for (ValueId v : sequence.steps[index].outputs)
        if (external_[v] || reads_[v] != group_reads[v] || group_reads[v] == 0) {
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
    size_t i = 0;
    while (i < n) {
      const auto [rows, length] = RowReduction(sequence.steps[i]);
      if (rows < 1 || length < 2) {
        ++i;
        continue;
      }
      RowGroup group{rows, length, {}, {}, false};
      std::vector<RowRead> reads;
      size_t j = i;
      for (; j < n; ++j) {
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
      // Trailing skipped steps are not between members.
      if (!group.broadcasts_back || group.members.size() < 2) {
        ++i;
        continue;
      }
      placed[group.members.back()] = BuildRows(sequence, group);
      for (size_t k : group.members) removed[k] = true;
      i = group.members.back() + 1;
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
