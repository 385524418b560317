// In-place updates of loop-carried values, and the kernel side of every in-place decision
// (plan/in_place.h).
//
// A while step's carried values live in buffers the condition and body read (plan.h); the
// lowering (lower_control.cc) ends the body with `copy new -> carried` for each carried value
// the body changes, and each branch of an if or case with `copy returned -> result`. Here the
// step that computes `new` (`returned`) is made to write the carried buffer (the result)
// itself, when no later step still needs the old value, and the copy is removed.
#include "plan/in_place.h"

#include <string_view>

#include "kernels/fused_params.h"
#include "kernels/registry.h"

namespace stablert::plan {
namespace {

bool IsCopy(const Step& step) {
  return step.kind == StepKind::kKernel && std::string_view(step.kernel).substr(0, 5) == "copy.";
}

bool SameLayout(const Value& a, const Value& b) {
  return a.strides.empty() && b.strides.empty() && a.type.dtype == b.type.dtype && a.byte_size == b.byte_size;
}

// Whether `step` (with its regions) reads storage `root`.
bool Reads(const Step& step, ValueId root, const std::vector<ValueId>& alias_root) {
  for (ValueId v : step.inputs)
    if (alias_root[v] == root) return true;
  for (const Sequence& region : step.regions)
    for (const Step& inner : region.steps)
      if (Reads(inner, root, alias_root)) return true;
  return false;
}

// How many times `step` (with its regions) writes storage `root`: outputs of every step,
// control steps' included (a loop's carried values, an if's results).
int Writes(const Step& step, ValueId root, const std::vector<ValueId>& alias_root) {
  int count = 0;
  for (ValueId v : step.outputs)
    if (alias_root[v] == root) ++count;
  if (step.workspace != kNoValue && alias_root[step.workspace] == root) ++count;
  for (const Sequence& region : step.regions)
    for (const Step& inner : region.steps) count += Writes(inner, root, alias_root);
  return count;
}

class CarryUpdater {
 public:
  CarryUpdater(ExecutionPlan& plan, std::vector<ValueId>& alias_root)
      : plan_(plan), alias_root_(alias_root), writes_(plan.values.size(), 0) {
    Count(plan.body);
  }

  void Walk(Sequence& sequence) {
    for (Step& step : sequence.steps) {
      for (Sequence& region : step.regions) Walk(region);
      if (step.kind == StepKind::kWhile && step.regions.size() == 2)
        for (ValueId carried : step.outputs) UpdateInPlace(step.regions[1], alias_root_[carried]);
      if (step.kind == StepKind::kIf || step.kind == StepKind::kCase)
        for (Sequence& branch : step.regions)
          for (ValueId result : step.outputs) UpdateInPlace(branch, alias_root_[result]);
    }
  }

 private:
  void Count(const Sequence& sequence) {
    for (const Step& step : sequence.steps) {
      for (ValueId v : step.outputs) ++writes_[alias_root_[v]];
      if (step.workspace != kNoValue) ++writes_[alias_root_[step.workspace]];
      for (const Sequence& region : step.regions) Count(region);
    }
  }

  void UpdateInPlace(Sequence& body, ValueId carried) {
    std::vector<Step>& steps = body.steps;
    // The body's only write of the carried value: a top-level copy.
    size_t k = steps.size();
    int writes = 0;
    for (size_t q = 0; q < steps.size(); ++q) {
      const int n = Writes(steps[q], carried, alias_root_);
      if (n > 0) k = q;
      writes += n;
    }
    if (writes != 1 || !IsCopy(steps[k]) || steps[k].inputs.size() != 1) return;
    const ValueId source = alias_root_[steps[k].inputs[0]];
    if (source == carried || plan_.values[source].storage != Storage::kArena ||
        !SameLayout(plan_.values[source], plan_.values[carried]))
      return;
    // The source's first writer P, and every write of it between P and the copy.
    size_t p = k;
    int source_writes = 0;
    for (size_t q = 0; q < k; ++q) {
      const int n = Writes(steps[q], source, alias_root_);
      if (n > 0 && p == k) p = q;
      source_writes += n;
    }
    if (p == k || source_writes != writes_[source]) return;
    // Nothing between P and the copy reads the old value (after the copy, readers see the
    // new one either way); P reads it only where it may update in place.
    for (size_t q = p + 1; q < k; ++q)
      if (Reads(steps[q], carried, alias_root_)) return;
    const Step& producer = steps[p];
    if (Reads(producer, carried, alias_root_)) {
      if (producer.kind != StepKind::kKernel) return;
      size_t output = producer.outputs.size();
      for (size_t o = 0; o < producer.outputs.size(); ++o)
        if (alias_root_[producer.outputs[o]] == source) output = o;
      if (output == producer.outputs.size()) return;
      for (size_t j = 0; j < producer.inputs.size(); ++j)
        if (alias_root_[producer.inputs[j]] == carried && !MayShareWithOutput(plan_, alias_root_, producer, j, output))
          return;
    }
    for (ValueId& root : alias_root_)
      if (root == source) root = carried;
    steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(k));
    writes_[carried] += writes_[source] - 1;
    writes_[source] = 0;
    if (IsCopy(producer) && alias_root_[producer.inputs[0]] == carried) {  // now a copy onto itself
      steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(p));
      --writes_[carried];
    }
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  std::vector<int> writes_;  // per storage root: the steps writing it, in the whole plan
};

}  // namespace

// A fused step (kernels/fused.cc) without a reduction runs tile by tile, reading dense
// inputs in place and writing each output as its sub-op computes it: output `output` may
// take input `input`'s storage if that input (and every other input on the same storage) is
// dense like the output and no sub-op after the one computing the output reads it.
bool FusedMayShare(const ExecutionPlan& plan, const std::vector<ValueId>& alias_root, const Step& step,
                   const kernels::FusedParams& fused, size_t input, size_t output) {
  if (!fused.reduce.empty() || output >= fused.output_slots.size()) return false;
  const Value& out = plan.values[step.outputs[output]];
  const int64_t slot = fused.output_slots[output];
  size_t producer = fused.ops.size();
  for (size_t j = 0; j < fused.ops.size(); ++j)
    if (fused.ops[j].output == slot) producer = j;
  if (producer == fused.ops.size()) return false;
  const ValueId root = alias_root[step.inputs[input]];
  for (size_t i = 0; i < step.inputs.size(); ++i) {  // input i is slot i
    if (alias_root[step.inputs[i]] != root) continue;
    if (!SameLayout(plan.values[step.inputs[i]], out)) return false;
    for (size_t j = producer + 1; j < fused.ops.size(); ++j)
      for (int64_t read : fused.ops[j].inputs)
        if (read == static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool MayShareWithOutput(const ExecutionPlan& plan, const std::vector<ValueId>& alias_root, const Step& step,
                        size_t input, size_t output) {
  if (step.kind != StepKind::kKernel || input >= step.inputs.size() || output >= step.outputs.size()) return false;
  if (const auto* fused = step.params.As<kernels::FusedParams>())
    return FusedMayShare(plan, alias_root, step, *fused, input, output);
  if (step.outputs.size() != 1) return false;
  const Value& in = plan.values[step.inputs[input]];
  const Value& out = plan.values[step.outputs[0]];
  if (!SameLayout(in, out)) return false;
  kernels::InPlace mode = kernels::InPlace::kNone;
  if (IsCopy(step)) {
    mode = kernels::InPlace::kFirstInput;
  } else if (const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel)) {
    mode = entry->in_place;
  }
  if (mode == kernels::InPlace::kNone || (mode == kernels::InPlace::kFirstInput && input != 0) ||
      (mode == kernels::InPlace::kThirdInput && input != 2))
    return false;
  const ValueId root = alias_root[step.inputs[input]];
  for (size_t j = 0; j < step.inputs.size(); ++j) {
    if (j == input || alias_root[step.inputs[j]] != root) continue;
    // Another input on the same storage: only an elementwise kernel reading it at the same
    // positions can still run in place.
    if (mode != kernels::InPlace::kElementwise || !SameLayout(plan.values[step.inputs[j]], in)) return false;
  }
  return true;
}

void UpdateLoopCarriesInPlace(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  CarryUpdater(plan, alias_root).Walk(plan.body);
}

void DropSelfCopies(Sequence& sequence, const std::vector<ValueId>& alias_root) {
  std::erase_if(sequence.steps, [&](const Step& step) {
    return IsCopy(step) && step.inputs.size() == 1 && step.outputs.size() == 1 &&
           alias_root[step.inputs[0]] == alias_root[step.outputs[0]];
  });
  for (Step& step : sequence.steps)
    for (Sequence& region : step.regions) DropSelfCopies(region, alias_root);
}

}  // namespace stablert::plan
