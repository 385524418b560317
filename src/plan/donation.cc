// Donation analysis (plan/donation.h): read and write positions of parameter and result
// storage over the plan's steps, and the matching of results to donated parameters.
#include "plan/donation.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "kernels/fused_params.h"
#include "kernels/registry.h"

namespace stablert::plan {
namespace {

constexpr int64_t kNever = -1;
constexpr int64_t kUnwritten = std::numeric_limits<int64_t>::max();

bool IsControl(const Step& step) {
  return step.kind == StepKind::kWhile || step.kind == StepKind::kIf || step.kind == StepKind::kCase ||
         step.kind == StepKind::kManual;
}

// Positions a step takes: one for a kernel-like step, one before and one after a control
// step's regions plus theirs.
int64_t Span(const Step& step) {
  if (!IsControl(step)) return 1;
  int64_t span = 2;
  for (const Sequence& region : step.regions)
    for (const Step& inner : region.steps) span += Span(inner);
  return span;
}

// When parameter storage is last read and result storage first written.
class Accesses {
 public:
  explicit Accesses(const ExecutionPlan& plan)
      : plan_(plan),
        last_read_(plan.parameter_types.size(), kNever),
        first_write_(plan.result_types.size(), kUnwritten),
        first_writer_(plan.result_types.size(), nullptr),
        end_readers_(plan.parameter_types.size()) {
    int64_t position = 0;
    Walk(plan.body, position, kNever);
    end_ = position;
    // The executor's copies after the last step (runtime/executor.h).
    for (size_t r = 0; r < plan.results.size() && r < first_write_.size(); ++r) {
      const Value& value = plan.values[plan.results[r]];
      if (value.storage == Storage::kResult && value.index == static_cast<int64_t>(r)) continue;
      first_write_[r] = std::min(first_write_[r], end_);
      if (value.storage == Storage::kParameter && InRange(value.index, last_read_.size())) {
        last_read_[static_cast<size_t>(value.index)] = end_;
        end_readers_[static_cast<size_t>(value.index)].push_back(r);
      }
    }
  }

  int64_t end() const { return end_; }
  int64_t last_read(size_t parameter) const { return last_read_[parameter]; }
  int64_t first_write(size_t result) const { return first_write_[result]; }
  const Step* first_writer(size_t result) const { return first_writer_[result]; }
  const std::vector<size_t>& end_readers(size_t parameter) const { return end_readers_[parameter]; }

 private:
  static bool InRange(int64_t index, size_t size) { return index >= 0 && static_cast<size_t>(index) < size; }

  void Read(ValueId v, int64_t position) {
    if (v >= plan_.values.size()) return;
    const Value& value = plan_.values[v];
    if (value.storage == Storage::kParameter && InRange(value.index, last_read_.size()))
      last_read_[static_cast<size_t>(value.index)] = std::max(last_read_[static_cast<size_t>(value.index)], position);
  }

  void Write(ValueId v, int64_t position, const Step* writer) {
    if (v >= plan_.values.size()) return;
    const Value& value = plan_.values[v];
    if (value.storage != Storage::kResult || !InRange(value.index, first_write_.size())) return;
    const auto r = static_cast<size_t>(value.index);
    if (position < first_write_[r]) {
      first_write_[r] = position;
      first_writer_[r] = writer;
    }
  }

  // `read_at`: inside a control step, the last position of the outermost one; else kNever.
  void Walk(const Sequence& sequence, int64_t& position, int64_t read_at) {
    for (const Step& step : sequence.steps) {
      if (!IsControl(step)) {
        const int64_t at = read_at == kNever ? position : read_at;
        for (ValueId v : step.inputs) Read(v, at);
        for (ValueId v : step.outputs) Write(v, position, step.kind == StepKind::kKernel ? &step : nullptr);
        ++position;
        continue;
      }
      const int64_t start = position;
      const int64_t last = start + Span(step) - 1;
      const int64_t inner_read_at = read_at == kNever ? last : read_at;
      for (ValueId v : step.outputs) Write(v, start, nullptr);
      ++position;
      for (const Sequence& region : step.regions) Walk(region, position, inner_read_at);
      for (ValueId v : step.inputs) Read(v, inner_read_at);
      ++position;
    }
  }

  const ExecutionPlan& plan_;
  std::vector<int64_t> last_read_;
  std::vector<int64_t> first_write_;
  std::vector<const Step*> first_writer_;
  std::vector<std::vector<size_t>> end_readers_;
  int64_t end_ = 0;
};

bool IsParameter(const Value& value, size_t parameter) {
  return value.storage == Storage::kParameter && value.index == static_cast<int64_t>(parameter);
}

// The same question for a fused step (kernels/fused.cc) without a reduction: it runs tile by
// tile, reading dense inputs in place and writing each output as its sub-op computes it. So
// the output may take the parameter's memory if the parameter is read densely and no sub-op
// after the one computing the output reads it (earlier ones have read the tile already).
bool FusedReadsInPlace(const ExecutionPlan& plan, const Step& step, const kernels::FusedParams& fused,
                       size_t result, size_t parameter) {
  if (!fused.reduce.empty()) return false;
  std::optional<int64_t> output_slot;
  const Value* output = nullptr;
  for (size_t k = 0; k < step.outputs.size() && k < fused.output_slots.size(); ++k) {
    const Value& value = plan.values[step.outputs[k]];
    if (value.storage == Storage::kResult && value.index == static_cast<int64_t>(result)) {
      output_slot = fused.output_slots[k];
      output = &value;
    }
  }
  if (!output_slot) return false;
  size_t producer = fused.ops.size();
  for (size_t j = 0; j < fused.ops.size(); ++j)
    if (fused.ops[j].output == *output_slot) producer = j;
  if (producer == fused.ops.size()) return false;
  for (size_t i = 0; i < step.inputs.size(); ++i) {  // input i is slot i
    const Value& value = plan.values[step.inputs[i]];
    if (!IsParameter(value, parameter)) continue;
    if (!value.strides.empty() || ElementCount(value.type.dims) != ElementCount(output->type.dims) ||
        DTypeByteSize(value.type.dtype) != DTypeByteSize(output->type.dtype))
      return false;
    for (size_t j = producer + 1; j < fused.ops.size(); ++j)
      for (int64_t slot : fused.ops[j].inputs)
        if (slot == static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Whether `step`, an elementwise kernel writing result `result`, reads parameter
// `parameter` only densely, element i of it for element i of its output.
bool ReadsInPlace(const ExecutionPlan& plan, const Step& step, size_t result, size_t parameter) {
  if (const auto* fused = step.params.As<kernels::FusedParams>())
    return FusedReadsInPlace(plan, step, *fused, result, parameter);
  const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel);
  if (entry == nullptr || !entry->strided_inputs) return false;
  const Value* output = nullptr;
  for (ValueId v : step.outputs) {
    const Value& value = plan.values[v];
    if (value.storage == Storage::kResult && value.index == static_cast<int64_t>(result)) output = &value;
  }
  if (output == nullptr || step.outputs.size() != 1) return false;
  for (ValueId v : step.inputs) {
    const Value& value = plan.values[v];
    if (value.storage != Storage::kParameter || value.index != static_cast<int64_t>(parameter)) continue;
    if (!value.strides.empty() || ElementCount(value.type.dims) != ElementCount(output->type.dims) ||
        DTypeByteSize(value.type.dtype) != DTypeByteSize(output->type.dtype))
      return false;
  }
  return true;
}

bool MayOverwrite(const ExecutionPlan& plan, const Accesses& accesses, size_t result, size_t parameter) {
  const int64_t read = accesses.last_read(parameter);
  const int64_t write = accesses.first_write(result);
  if (read < write) return true;
  if (read > write) return false;
  if (write == accesses.end()) {
    // Both at the end: only the result that returns the parameter itself reads it there.
    const auto& readers = accesses.end_readers(parameter);
    return readers.size() == 1 && readers[0] == result;
  }
  const Step* writer = accesses.first_writer(result);
  return writer != nullptr && ReadsInPlace(plan, *writer, result, parameter);
}

}  // namespace

bool ResultMayOverwriteParameter(const ExecutionPlan& plan, size_t result, size_t parameter) {
  if (result >= plan.result_types.size() || parameter >= plan.parameter_types.size() ||
      result >= plan.results.size())
    return false;
  if (ByteSize(plan.result_types[result]) != ByteSize(plan.parameter_types[parameter])) return false;
  Accesses accesses(plan);
  return MayOverwrite(plan, accesses, result, parameter);
}

std::vector<int64_t> PlanDonation(const ExecutionPlan& plan, const std::vector<bool>& donatable, bool check_safety,
                                  const std::vector<int64_t>& local_parameter_bytes,
                                  const std::vector<int64_t>& local_result_bytes) {
  const size_t num_parameters = plan.parameter_types.size();
  const size_t num_results = plan.result_types.size();
  std::vector<int64_t> donor(num_results, kNoDonor);
  if (std::none_of(donatable.begin(), donatable.end(), [](bool d) { return d; })) return donor;
  auto parameter_bytes = [&](size_t p) {
    return p < local_parameter_bytes.size() ? local_parameter_bytes[p] : ByteSize(plan.parameter_types[p]);
  };
  auto result_bytes = [&](size_t r) {
    return r < local_result_bytes.size() ? local_result_bytes[r] : ByteSize(plan.result_types[r]);
  };
  const bool analyzable = plan.results.size() == num_results;
  if (check_safety && !analyzable) return donor;
  Accesses accesses(plan);
  std::vector<bool> taken(num_parameters, false);
  for (size_t r = 0; r < num_results; ++r) {
    const int64_t bytes = result_bytes(r);
    if (bytes <= 0) continue;
    // The rank of this result among the results of its type.
    size_t rank = 0;
    for (size_t earlier = 0; earlier < r; ++earlier) rank += plan.result_types[earlier] == plan.result_types[r];
    std::vector<size_t> same_type, other_type;
    for (size_t p = 0; p < num_parameters && p < donatable.size(); ++p) {
      if (!donatable[p] || parameter_bytes(p) != bytes) continue;
      (plan.parameter_types[p] == plan.result_types[r] ? same_type : other_type).push_back(p);
    }
    std::vector<size_t> candidates;
    if (rank < same_type.size()) candidates.push_back(same_type[rank]);
    candidates.insert(candidates.end(), same_type.begin(), same_type.end());
    candidates.insert(candidates.end(), other_type.begin(), other_type.end());
    for (size_t p : candidates) {
      if (taken[p]) continue;
      if (check_safety && !MayOverwrite(plan, accesses, r, p)) continue;
      taken[p] = true;
      donor[r] = static_cast<int64_t>(p);
      break;
    }
  }
  return donor;
}

}  // namespace stablert::plan
