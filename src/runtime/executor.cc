#include "runtime/executor.h"

#include <cstdlib>
#include <cstring>

namespace stablert::runtime {
namespace {

constexpr size_t kArenaAlignment = 64;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

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

StatusOr<std::unique_ptr<LoadedPlan>> LoadedPlan::Create(const plan::ExecutionPlan& plan,
                                                         const kernels::KernelRegistry& registry) {
  if (plan.version != plan::kPlanFormatVersion)
    return InvalidArgument("plan format version " + std::to_string(plan.version) + " is not supported");
  STABLERT_RETURN_IF_ERROR(ValidateValues(plan));
  std::unique_ptr<LoadedPlan> loaded(new LoadedPlan(plan));
  for (const plan::Step& step : plan.body.steps) {
    if (step.kind != plan::StepKind::kKernel || !step.regions.empty())
      return Unimplemented(step.origin + ": control-flow steps are not supported by the executor yet");
    kernels::KernelFn fn = registry.Find(step.kernel);
    if (fn == nullptr) return Unimplemented(step.origin + ": no CPU kernel '" + step.kernel + "'");
    ResolvedStep resolved{fn, static_cast<uint32_t>(loaded->operand_values_.size()),
                          static_cast<uint32_t>(step.inputs.size()), static_cast<uint32_t>(step.outputs.size())};
    for (const auto* list : {&step.inputs, &step.outputs}) {
      for (plan::ValueId v : *list) {
        if (v >= plan.values.size()) return InvalidArgument(step.origin + ": step refers to an unknown value");
        const plan::Value& value = plan.values[v];
        if (list == &step.outputs && (value.storage == plan::Storage::kParameter || value.storage == plan::Storage::kConstant))
          return InvalidArgument(step.origin + ": step writes a parameter or constant");
        kernels::BufferView view;
        view.dtype = value.type.dtype;
        view.dims = value.type.dims;
        view.num_elements = ElementCount(value.type.dims);
        loaded->operand_values_.push_back(v);
        loaded->operand_templates_.push_back(view);
      }
    }
    loaded->steps_.push_back(resolved);
  }
  return loaded;
}

Status LoadedPlan::Execute(std::span<const void* const> arguments, std::span<void* const> results) const {
  const plan::ExecutionPlan& plan = plan_;
  if (arguments.size() != plan.parameter_types.size())
    return InvalidArgument("expected " + std::to_string(plan.parameter_types.size()) + " arguments, got " +
                           std::to_string(arguments.size()));
  if (results.size() != plan.result_types.size())
    return InvalidArgument("expected " + std::to_string(plan.result_types.size()) + " result buffers, got " +
                           std::to_string(results.size()));

  std::unique_ptr<void, FreeDeleter> arena;
  if (plan.arena_size > 0) {
    size_t bytes = (static_cast<size_t>(plan.arena_size) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    arena.reset(std::aligned_alloc(kArenaAlignment, bytes));
    if (arena == nullptr) return ResourceExhausted("cannot allocate a " + std::to_string(bytes) + "-byte arena");
  }
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
  const std::vector<plan::Step>& steps = plan.body.steps;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const ResolvedStep& step = steps_[s];
    kernels::KernelArgs args;
    args.inputs = std::span<const kernels::BufferView>(views.data() + step.first_operand, step.num_inputs);
    args.outputs =
        std::span<const kernels::BufferView>(views.data() + step.first_operand + step.num_inputs, step.num_outputs);
    args.params = steps[s].params;
    Status status = step.fn(context, args);
    if (!status.ok()) return status.WithPrefix(steps[s].origin);
  }

  for (size_t i = 0; i < plan.results.size(); ++i) {
    const plan::Value& value = plan.values[plan.results[i]];
    if (value.storage == plan::Storage::kResult && value.index == static_cast<int64_t>(i)) continue;
    if (value.byte_size > 0) std::memcpy(results[i], address(plan.results[i]), static_cast<size_t>(value.byte_size));
  }
  return OkStatus();
}

Status ExecutePlan(const plan::ExecutionPlan& plan, std::span<const void* const> arguments,
                   std::span<void* const> results) {
  const void* cached = plan.runtime_cache.Get();
  if (cached == nullptr) {
    STABLERT_ASSIGN_OR_RETURN(std::unique_ptr<LoadedPlan> loaded, LoadedPlan::Create(plan, kernels::CpuKernels()));
    cached = plan.runtime_cache.GetOrSet(std::shared_ptr<const LoadedPlan>(std::move(loaded)));
  }
  return static_cast<const LoadedPlan*>(cached)->Execute(arguments, results);
}

}  // namespace stablert::runtime
