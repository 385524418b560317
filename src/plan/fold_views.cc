// Broadcasts and transposes read in place: a "broadcast_in_dim.<T>" or "transpose.<T>" step
// whose every reader is a kernel taking strided views (kernels::KernelRegistry::Entry::
// strided_inputs, e.g. the elementwise kernels) is removed, and its output becomes a
// strided view of its input (Value::strides: zero strides where the broadcast repeats,
// permuted ones for a transpose). The readers then read the input where it lies instead of
// a materialized copy.
//
// Folded only when it is safe without further analysis:
//   - the output is its own storage root, no other value aliases it, only this step writes
//     it, and it is not a plan result (results are dense buffers);
//   - it has readers, all in the step's own sequence, each a kernel step taking strided
//     views or a broadcast/transpose that folds too;
//   - no step between the fold and the last reader, through such views, (nor inside their
//     regions) writes the input's storage (a loop body's carried values are updated by
//     copies at its end);
//   - the sequence is not inside a manual region (whose values are private per partition).
//   - the view walks its innermost dim with stride 0 or 1 (transposes that move the last
//     dim stay copies: the blocked transpose kernel moves them faster than readers could
//     gather them).
// Chained folds compose (a broadcast of a transposed view is one view).
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/data_movement_params.h"
#include "kernels/registry.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

class ViewFolder {
 public:
  ViewFolder(ExecutionPlan& plan, std::vector<ValueId>& alias_root) : plan_(plan), alias_root_(alias_root) {
    const size_t n = plan.values.size();
    writers_.assign(n, 0);
    aliased_.assign(n, false);
    external_.assign(n, false);
    for (ValueId v = 0; v < n; ++v)
      if (alias_root[v] != v) aliased_[alias_root[v]] = true;
    for (ValueId v : plan.results) external_[alias_root[v]] = true;
    Count(plan.body);
  }

  void Run() { Fold(plan_.body); }

 private:
  void Count(const Sequence& sequence) {
    for (const Step& step : sequence.steps) {
      for (ValueId v : step.outputs) ++writers_[v];
      if (step.kind != StepKind::kKernel)
        for (ValueId v : step.inputs) external_[alias_root_[v]] = true;
      for (const Sequence& region : step.regions) Count(region);
    }
  }

  static bool TakesStridedViews(const Step& step) {
    if (step.kind != StepKind::kKernel) return false;
    const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel);
    return entry != nullptr && entry->strided_inputs;
  }

  // The element strides `value` is read with (dense row-major unless it is a view).
  std::vector<int64_t> StridesOf(ValueId value) const {
    const Value& v = plan_.values[value];
    if (!v.strides.empty()) return v.strides;
    std::vector<int64_t> strides(v.type.dims.size());
    int64_t stride = 1;
    for (size_t i = strides.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= v.type.dims[i];
    }
    return strides;
  }

  // The strides of `step`'s output read as a view of its input, or empty if it is not a
  // broadcast or transpose this pass understands.
  // `in_strides`: the strides the input is read with.
  std::vector<int64_t> ViewStrides(const Step& step, const std::vector<int64_t>& in_strides) const {
    if (step.inputs.size() != 1 || step.outputs.size() != 1) return {};
    const TensorType& in = plan_.values[step.inputs[0]].type;
    const TensorType& out = plan_.values[step.outputs[0]].type;
    const auto* broadcast = step.params.As<kernels::BroadcastInDimParams>();
    const auto* transpose = step.params.As<kernels::TransposeParams>();
    if (broadcast == nullptr && transpose == nullptr) return {};
    const std::vector<int64_t>& map = broadcast ? broadcast->dimensions : transpose->permutation;
    if (map.size() != in.dims.size()) return {};
    std::vector<int64_t> strides(out.dims.size(), 0);
    if (broadcast != nullptr) {
      for (size_t j = 0; j < map.size(); ++j) {
        if (map[j] < 0 || static_cast<size_t>(map[j]) >= strides.size()) return {};
        const auto d = static_cast<size_t>(map[j]);
        strides[d] = in.dims[j] == 1 && out.dims[d] != 1 ? 0 : in_strides[j];
      }
      return strides;
    }
    if (map.size() != out.dims.size()) return {};
    for (size_t d = 0; d < map.size(); ++d) {
      if (map[d] < 0 || static_cast<size_t>(map[d]) >= in_strides.size()) return {};
      strides[d] = in_strides[static_cast<size_t>(map[d])];
    }
    return strides;
  }

  static bool IsViewStep(const Step& step) {
    return step.kind == StepKind::kKernel &&
           (step.kernel.starts_with("broadcast_in_dim.") || step.kernel.starts_with("transpose."));
  }

  // What the steps of one sequence read and write, indexed once per sequence so deciding
  // each fold costs the number of its readers, not the length of the sequence.
  struct SequenceIndex {
    std::unordered_map<ValueId, std::vector<size_t>> readers;      // steps reading it directly
    std::unordered_map<ValueId, size_t> last_region_reader;         // last step reading it in a region
    std::unordered_map<ValueId, std::vector<size_t>> root_writers;  // steps writing that storage
    std::vector<bool> strided;                                      // the step takes strided views
  };

  // Values read in `step`'s regions, directly or through a view folded there (regions fold
  // first, so a region's view of an outer value reads that value's storage root).
  void RegionReads(const Step& step, size_t index, SequenceIndex& out) const {
    for (const Sequence& region : step.regions)
      for (const Step& inner : region.steps) {
        for (ValueId v : inner.inputs) {
          out.last_region_reader[v] = index;
          out.last_region_reader[alias_root_[v]] = index;
        }
        RegionReads(inner, index, out);
      }
  }

  void StorageWrites(const Step& step, size_t index, SequenceIndex& out) const {
    for (ValueId v : step.outputs) {
      std::vector<size_t>& writers = out.root_writers[alias_root_[v]];
      if (writers.empty() || writers.back() != index) writers.push_back(index);
    }
    for (const Sequence& region : step.regions)
      for (const Step& inner : region.steps) StorageWrites(inner, index, out);
  }

  SequenceIndex IndexOf(const Sequence& sequence) const {
    SequenceIndex index;
    index.strided.resize(sequence.steps.size());
    for (size_t i = 0; i < sequence.steps.size(); ++i) {
      const Step& step = sequence.steps[i];
      for (ValueId v : step.inputs) {
        std::vector<size_t>& readers = index.readers[v];
        if (readers.empty() || readers.back() != i) readers.push_back(i);
      }
      RegionReads(step, i, index);
      StorageWrites(step, i, index);
      index.strided[i] = TakesStridedViews(step);
    }
    return index;
  }

  // Whether step `index` can become a view, given which later steps will (`folds`), and
  // the position of the last step reading it directly or through those later views.
  bool Foldable(const Sequence& sequence, const SequenceIndex& seq, size_t index, const std::vector<bool>& folds,
                const std::vector<size_t>& last_use, size_t* last) const {
    const Step& step = sequence.steps[index];
    if (!IsViewStep(step) || step.outputs.size() != 1 || step.inputs.size() != 1) return false;
    const ValueId out = step.outputs[0];
    if (alias_root_[out] != out || aliased_[out] || writers_[out] != 1 || external_[out]) return false;
    if (plan_.values[out].type.dtype != plan_.values[step.inputs[0]].type.dtype) return false;
    const std::vector<int64_t> strides = ViewStrides(step, StridesOf(step.inputs[0]));
    if (strides.empty() && !plan_.values[out].type.dims.empty()) return false;
    // Readers gather views along the innermost dim: a view that walks it with a stride other
    // than 0 or 1 (a transpose that moves the last dim) would touch a cache line per element;
    // the blocked transpose kernel moves it faster.
    if (!strides.empty() && strides.back() > 1 && plan_.values[out].type.dims.back() > 1) return false;
    const ValueId input_root = alias_root_[step.inputs[0]];
    if (auto region = seq.last_region_reader.find(out); region != seq.last_region_reader.end() && region->second > index)
      return false;
    size_t last_reader = index;
    if (auto readers = seq.readers.find(out); readers != seq.readers.end()) {
      for (size_t i : readers->second) {
        if (i <= index) continue;
        if (folds[i]) last_reader = std::max(last_reader, last_use[i]);
        else if (seq.strided[i]) last_reader = std::max(last_reader, i);
        else return false;
      }
    }
    if (last_reader == index) return false;  // no reader in this sequence
    // No step strictly between this one and the last reader writes the input's storage.
    if (auto writers = seq.root_writers.find(input_root); writers != seq.root_writers.end()) {
      auto next = std::upper_bound(writers->second.begin(), writers->second.end(), index);
      if (next != writers->second.end() && *next < last_reader) return false;
    }
    *last = last_reader;
    return true;
  }

  void Fold(Sequence& sequence) {
    const size_t n = sequence.steps.size();
    for (Step& step : sequence.steps)
      if (step.kind != StepKind::kManual)  // partition-private values: left as they are
        for (Sequence& region : step.regions) Fold(region);
    // Which steps fold, deciding later steps first (a view read only by views folds too).
    std::vector<bool> folds(n, false);
    std::vector<size_t> last_use(n, 0);
    const SequenceIndex index = IndexOf(sequence);
    for (size_t i = n; i-- > 0;) folds[i] = Foldable(sequence, index, i, folds, last_use, &last_use[i]);
    // Fold in program order, so a view of a view composes its strides.
    std::vector<Step> kept;
    kept.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      Step& step = sequence.steps[i];
      if (!folds[i]) {
        kept.push_back(std::move(step));
        continue;
      }
      const ValueId out = step.outputs[0], in = step.inputs[0];
      std::vector<int64_t> strides = ViewStrides(step, StridesOf(in));
      Value& value = plan_.values[out];
      value.strides = std::move(strides);
      value.byte_size = ViewByteSize(value.type, value.strides);
      alias_root_[out] = alias_root_[in];
      // The input's storage is now read through a view: it must stay materialized (an
      // enclosing sequence, folded after this one, must not fold it in turn).
      aliased_[alias_root_[in]] = true;
    }
    sequence.steps = std::move(kept);
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  std::vector<int> writers_;
  std::vector<bool> aliased_;   // some other value shares this root's storage
  std::vector<bool> external_;  // a result, or read by a non-kernel step
};

}  // namespace

void FoldViewsIntoReaders(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  ViewFolder(plan, alias_root).Run();
}

}  // namespace stablert::plan
