#include "runtime/executor.h"

#include <cstdlib>
#include <cstring>

namespace stablert::runtime {
namespace {

constexpr size_t kArenaAlignment = 64;

Status ValidateValues(const plan::ExecutionPlan& plan) {
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const plan::Value& value = plan.values[i];
    std::string where = "plan value %" + std::to_string(i);
    auto count = CheckedElementCount(value.type.dims);
    if (!count.ok()) return InvalidArgument(where + ": " + std::string(count.status().message()));
    if (value.byte_size != *count * DTypeByteSize(value.type.dtype))
      return InvalidArgument(where + ": byte size does not match its type");
    switch (value.storage) {
      case plan::Storage::kArena:
        if (value.index < 0 || value.index > plan.arena_size - value.byte_size)
          return InvalidArgument(where + ": arena offset out of range");
        break;
      case plan::Storage::kParameter:
        if (value.index < 0 || static_cast<size_t>(value.index) >= plan.parameter_types.size() ||
            plan::ByteSize(plan.parameter_types[static_cast<size_t>(value.index)]) != value.byte_size)
          return InvalidArgument(where + ": bad parameter reference");
        break;
      case plan::Storage::kResult:
        if (value.index < 0 || static_cast<size_t>(value.index) >= plan.result_types.size() ||
            plan::ByteSize(plan.result_types[static_cast<size_t>(value.index)]) != value.byte_size)
          return InvalidArgument(where + ": bad result reference");
        break;
      case plan::Storage::kConstant:
        if (value.index < 0 || static_cast<size_t>(value.index) >= plan.constants.size() ||
            static_cast<int64_t>(plan.constants[static_cast<size_t>(value.index)].size()) != value.byte_size)
          return InvalidArgument(where + ": bad constant reference");
        break;
    }
  }
  if (plan.results.size() != plan.result_types.size()) return InvalidArgument("plan result count mismatch");
  for (size_t i = 0; i < plan.results.size(); ++i) {
    if (plan.results[i] >= plan.values.size() ||
        plan.values[plan.results[i]].byte_size != plan::ByteSize(plan.result_types[i]))
      return InvalidArgument("plan result " + std::to_string(i) + " is malformed");
  }
  return OkStatus();
}

}  // namespace

Status LoadedPlan::Resolve(const plan::Sequence& sequence, uint32_t index, const kernels::KernelRegistry& registry,
                           int depth) {
  constexpr int kMaxDepth = 256;
  if (depth > kMaxDepth) return InvalidArgument("plan control flow is nested too deeply");
  const plan::ExecutionPlan& plan = plan_;
  const auto first = static_cast<uint32_t>(steps_.size());
  sequences_[index] = {first, static_cast<uint32_t>(sequence.steps.size())};
  steps_.resize(steps_.size() + sequence.steps.size());
  for (size_t s = 0; s < sequence.steps.size(); ++s) {
    const plan::Step& step = sequence.steps[s];
    ResolvedStep resolved{step.kind, nullptr, static_cast<uint32_t>(operand_values_.size()),
                          static_cast<uint32_t>(step.inputs.size()), static_cast<uint32_t>(step.outputs.size()),
                          0, 0, &step, nullptr};
    const kernels::KernelRegistry::Entry* entry = nullptr;
    switch (step.kind) {
      case plan::StepKind::kKernel:
        if (!step.regions.empty()) return InvalidArgument(step.origin + ": kernel step with regions");
        entry = registry.Lookup(step.kernel);
        if (entry == nullptr) return Unimplemented(step.origin + ": no CPU kernel '" + step.kernel + "'");
        resolved.fn = entry->fn;
        break;
      case plan::StepKind::kWhile:
      case plan::StepKind::kIf: {
        if (step.regions.size() != 2 || step.inputs.size() != 1 || step.inputs[0] >= plan.values.size() ||
            plan.values[step.inputs[0]].type != plan::TensorType{DType::kPred, {}})
          return InvalidArgument(step.origin + ": malformed control step");
        break;
      }
      case plan::StepKind::kCase:
        if (step.regions.empty() || step.inputs.size() != 1 || step.inputs[0] >= plan.values.size() ||
            plan.values[step.inputs[0]].type != plan::TensorType{DType::kS32, {}})
          return InvalidArgument(step.origin + ": malformed control step");
        break;
      default:
        return InvalidArgument(step.origin + ": unknown step kind");
    }
    for (const auto* list : {&step.inputs, &step.outputs}) {
      for (plan::ValueId v : *list) {
        if (v >= plan.values.size()) return InvalidArgument(step.origin + ": step refers to an unknown value");
        const plan::Value& value = plan.values[v];
        if (list == &step.outputs &&
            (value.storage == plan::Storage::kParameter || value.storage == plan::Storage::kConstant))
          return InvalidArgument(step.origin + ": step writes a parameter or constant");
        kernels::BufferView view;
        view.dtype = value.type.dtype;
        view.dims = value.type.dims;
        view.num_elements = ElementCount(value.type.dims);
        operand_values_.push_back(v);
        operand_templates_.push_back(view);
      }
    }
    if (entry != nullptr && entry->prepare != nullptr) {
      kernels::KernelArgs args;
      args.inputs = std::span<const kernels::BufferView>(operand_templates_.data() + resolved.first_operand,
                                                         resolved.num_inputs);
      args.outputs = std::span<const kernels::BufferView>(
          operand_templates_.data() + resolved.first_operand + resolved.num_inputs, resolved.num_outputs);
      args.params = step.params;
      auto state = entry->prepare(args);
      if (!state.ok()) return state.status().WithPrefix(step.origin);
      resolved.state = std::move(state).value();
    }
    // A step's regions take consecutive sequence slots; their steps are appended after
    // this sequence's (reserved above), so every sequence's steps stay contiguous.
    resolved.first_region = static_cast<uint32_t>(sequences_.size());
    resolved.num_regions = static_cast<uint32_t>(step.regions.size());
    sequences_.resize(sequences_.size() + step.regions.size());
    steps_[first + s] = resolved;
    for (size_t r = 0; r < step.regions.size(); ++r)
      STABLERT_RETURN_IF_ERROR(Resolve(step.regions[r], resolved.first_region + static_cast<uint32_t>(r), registry,
                                       depth + 1));
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<LoadedPlan>> LoadedPlan::Create(const plan::ExecutionPlan& plan,
                                                         const kernels::KernelRegistry& registry) {
  if (plan.version != plan::kPlanFormatVersion)
    return InvalidArgument("plan format version " + std::to_string(plan.version) + " is not supported");
  STABLERT_RETURN_IF_ERROR(ValidateValues(plan));
  std::unique_ptr<LoadedPlan> loaded(new LoadedPlan(plan));
  loaded->sequences_.resize(1);
  STABLERT_RETURN_IF_ERROR(loaded->Resolve(plan.body, 0, registry, 0));
  return loaded;
}

Status LoadedPlan::Run(uint32_t sequence, const kernels::KernelContext& context,
                       const std::vector<kernels::BufferView>& views) const {
  const ResolvedSequence& seq = sequences_[sequence];
  for (uint32_t s = seq.first_step; s < seq.first_step + seq.num_steps; ++s) {
    const ResolvedStep& step = steps_[s];
    switch (step.kind) {
      case plan::StepKind::kKernel: {
        kernels::KernelArgs args;
        args.inputs = std::span<const kernels::BufferView>(views.data() + step.first_operand, step.num_inputs);
        args.outputs = std::span<const kernels::BufferView>(views.data() + step.first_operand + step.num_inputs,
                                                            step.num_outputs);
        args.params = step.step->params;
        args.state = step.state.get();
        Status status = step.fn(context, args);
        if (!status.ok()) return status.WithPrefix(step.step->origin);
        break;
      }
      case plan::StepKind::kWhile: {
        const auto* condition = static_cast<const uint8_t*>(views[step.first_operand].data);
        while (true) {
          STABLERT_RETURN_IF_ERROR(Run(step.first_region, context, views));
          if (!*condition) break;
          STABLERT_RETURN_IF_ERROR(Run(step.first_region + 1, context, views));
        }
        break;
      }
      case plan::StepKind::kIf: {
        const auto* predicate = static_cast<const uint8_t*>(views[step.first_operand].data);
        STABLERT_RETURN_IF_ERROR(Run(step.first_region + (*predicate ? 0 : 1), context, views));
        break;
      }
      case plan::StepKind::kCase: {
        int32_t index;
        std::memcpy(&index, views[step.first_operand].data, sizeof(index));
        const auto last = static_cast<int32_t>(step.num_regions - 1);
        uint32_t branch = static_cast<uint32_t>(index < 0 || index > last ? last : index);
        STABLERT_RETURN_IF_ERROR(Run(step.first_region + branch, context, views));
        break;
      }
    }
  }
  return OkStatus();
}

void LoadedPlan::FreeDeleter::operator()(void* p) const { std::free(p); }

StatusOr<LoadedPlan::Arena> LoadedPlan::AcquireArena() const {
  if (plan_.arena_size == 0) return Arena();
  {
    std::lock_guard<std::mutex> lock(arenas_mutex_);
    if (!free_arenas_.empty()) {
      Arena arena = std::move(free_arenas_.back());
      free_arenas_.pop_back();
      return arena;
    }
  }
  size_t bytes = (static_cast<size_t>(plan_.arena_size) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  Arena arena(std::aligned_alloc(kArenaAlignment, bytes));
  if (arena == nullptr) return ResourceExhausted("cannot allocate a " + std::to_string(bytes) + "-byte arena");
  return arena;
}

void LoadedPlan::ReleaseArena(Arena arena) const {
  if (arena == nullptr) return;
  std::lock_guard<std::mutex> lock(arenas_mutex_);
  free_arenas_.push_back(std::move(arena));
}

Status LoadedPlan::Execute(std::span<const void* const> arguments, std::span<void* const> results) const {
  const plan::ExecutionPlan& plan = plan_;
  if (arguments.size() != plan.parameter_types.size())
    return InvalidArgument("expected " + std::to_string(plan.parameter_types.size()) + " arguments, got " +
                           std::to_string(arguments.size()));
  if (results.size() != plan.result_types.size())
    return InvalidArgument("expected " + std::to_string(plan.result_types.size()) + " result buffers, got " +
                           std::to_string(results.size()));

  STABLERT_ASSIGN_OR_RETURN(Arena arena, AcquireArena());
  auto* arena_base = static_cast<uint8_t*>(arena.get());

  auto address = [&](plan::ValueId v) -> void* {
    const plan::Value& value = plan.values[v];
    switch (value.storage) {
      case plan::Storage::kArena: return arena_base ? arena_base + value.index : nullptr;
      case plan::Storage::kParameter: return const_cast<void*>(arguments[static_cast<size_t>(value.index)]);
      case plan::Storage::kResult: return results[static_cast<size_t>(value.index)];
      case plan::Storage::kConstant:
        return const_cast<uint8_t*>(plan.constants[static_cast<size_t>(value.index)].data());
    }
    return nullptr;
  };

  std::vector<kernels::BufferView> views = operand_templates_;
  for (size_t i = 0; i < views.size(); ++i) views[i].data = address(operand_values_[i]);

  const kernels::KernelContext context;
  Status status = Run(0, context, views);
  ReleaseArena(std::move(arena));
  STABLERT_RETURN_IF_ERROR(status);

  for (size_t i = 0; i < plan.results.size(); ++i) {
    const plan::Value& value = plan.values[plan.results[i]];
    if (value.storage == plan::Storage::kResult && value.index == static_cast<int64_t>(i)) continue;
    if (value.byte_size > 0) std::memcpy(results[i], address(plan.results[i]), static_cast<size_t>(value.byte_size));
  }
  return OkStatus();
}

namespace {

StatusOr<const LoadedPlan*> Loaded(const plan::ExecutionPlan& plan) {
  const void* cached = plan.runtime_cache.Get();
  if (cached == nullptr) {
    STABLERT_ASSIGN_OR_RETURN(std::unique_ptr<LoadedPlan> loaded, LoadedPlan::Create(plan, kernels::CpuKernels()));
    cached = plan.runtime_cache.GetOrSet(std::shared_ptr<const LoadedPlan>(std::move(loaded)));
  }
  return static_cast<const LoadedPlan*>(cached);
}

}  // namespace

Status PreparePlan(const plan::ExecutionPlan& plan) { return Loaded(plan).status(); }

Status ExecutePlan(const plan::ExecutionPlan& plan, std::span<const void* const> arguments,
                   std::span<void* const> results) {
  STABLERT_ASSIGN_OR_RETURN(const LoadedPlan* loaded, Loaded(plan));
  return loaded->Execute(arguments, results);
}

}  // namespace stablert::runtime
