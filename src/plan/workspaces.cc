// Workspaces as plan values: a kernel that declares one (kernels::WorkspaceFn) gets an arena
// value per step, sized when the plan is built, so buffer assignment places it like any
// value that lives for one step and no call allocates.
#include "base/thread_pool.h"
#include "kernels/registry.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

class WorkspaceDeclarer {
 public:
  WorkspaceDeclarer(ExecutionPlan& plan, std::vector<ValueId>& alias_root) : plan_(plan), alias_root_(alias_root) {}

  void Walk(Sequence& sequence) {
    for (Step& step : sequence.steps) {
      for (Sequence& region : step.regions) Walk(region);
      if (step.kind != StepKind::kKernel) continue;
      const kernels::KernelRegistry::Entry* entry = kernels::CpuKernels().Lookup(step.kernel);
      if (entry == nullptr || entry->workspace == nullptr) continue;
      const int64_t per_call = entry->workspace(Args(step));
      if (per_call <= 0) continue;
      const int64_t calls = entry->splittable ? CoreBudget() : 1;
      const int64_t bytes = (per_call + 63) / 64 * 64 * calls;
      const auto id = static_cast<ValueId>(plan_.values.size());
      Value value;
      value.type = TensorType{DType::kU8, {bytes}};
      value.byte_size = bytes;
      plan_.values.push_back(std::move(value));
      alias_root_.push_back(id);
      step.workspace = id;
    }
  }

 private:
  // The step's arguments as its prepare function would see them (no data).
  kernels::KernelArgs Args(const Step& step) {
    views_.clear();
    for (const auto* list : {&step.inputs, &step.outputs})
      for (ValueId v : *list) {
        const Value& value = plan_.values[v];
        kernels::BufferView view;
        view.dtype = value.type.dtype;
        view.dims = value.type.dims;
        view.num_elements = ElementCount(value.type.dims);
        view.strides = value.strides;
        views_.push_back(view);
      }
    kernels::KernelArgs args;
    args.inputs = std::span<const kernels::BufferView>(views_.data(), step.inputs.size());
    args.outputs = std::span<const kernels::BufferView>(views_.data() + step.inputs.size(), step.outputs.size());
    args.params = step.params.get();
    return args;
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  std::vector<kernels::BufferView> views_;
};

}  // namespace

void DeclareWorkspaces(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  WorkspaceDeclarer(plan, alias_root).Walk(plan.body);
}

}  // namespace stablert::plan
