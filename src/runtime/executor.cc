#include "runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <thread>

#include "base/env.h"
#include "base/large_blocks.h"
#include "base/thread_pool.h"
#include "collectives/communicator.h"
#include "kernels/compare_params.h"
#include "kernels/ffi_execution.h"
#include "kernels/scalar_program.h"
#include "plan/collective_params.h"
#include "plan/cost_analysis.h"
#include "plan/host_transfer_params.h"
#include "runtime/box_copy.h"
#include "runtime/trace.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace stablert::runtime {
namespace {

// Kernels report failures as Status; what the standard library throws (an allocation larger
// than memory) becomes an error of this execution instead of ending the process.
template <typename Fn>
Status CatchingExceptions(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("executing the program ran out of memory");
  } catch (const std::exception& error) {
    return Internal(std::string("executing the program failed: ") + error.what());
  }
}

// Flushes denormal float inputs and results to zero on this thread while alive, as XLA's
// CPU backend runs every program (results differ from IEEE ones only for denormals).
class ScopedFlushDenormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  ScopedFlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  ~ScopedFlushDenormals() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFlushToZero = 0x8000;      // MXCSR.FTZ
  static constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR.DAZ
  unsigned saved_;
#elif defined(__aarch64__)
  ScopedFlushDenormals() {
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved_));
    uint64_t flushing = saved_ | (uint64_t{1} << 24);  // FPCR.FZ
    __asm__ __volatile__("msr fpcr, %0" : : "r"(flushing));
  }
  ~ScopedFlushDenormals() { __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_)); }

 private:
  uint64_t saved_;
#endif
};

constexpr size_t kArenaAlignment = 64;

Status ValidateValues(const plan::ExecutionPlan& plan) {
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const plan::Value& value = plan.values[i];
    std::string where = "plan value %" + std::to_string(i);
    auto count = CheckedElementCount(value.type.dims);
    if (!count.ok()) return InvalidArgument(where + ": " + std::string(count.status().message()));
    const bool view = !value.strides.empty();
    if (view) {
      if (value.strides.size() != value.type.dims.size())
        return InvalidArgument(where + ": a view needs one stride per dimension");
      for (int64_t stride : value.strides)
        if (stride < 0 || stride > (int64_t{1} << 48)) return InvalidArgument(where + ": view stride out of range");
    }
    if (value.byte_size != plan::ViewByteSize(value.type, value.strides))
      return InvalidArgument(where + ": byte size does not match its type");
    switch (value.storage) {
      case plan::Storage::kArena:
        if (value.index < 0 || value.index > plan.arena_size - value.byte_size)
          return InvalidArgument(where + ": arena offset out of range");
        break;
      case plan::Storage::kParameter:
        if (value.index < 0 || static_cast<size_t>(value.index) >= plan.parameter_types.size() ||
            (view ? plan::ByteSize(plan.parameter_types[static_cast<size_t>(value.index)]) < value.byte_size
                  : plan::ByteSize(plan.parameter_types[static_cast<size_t>(value.index)]) != value.byte_size))
          return InvalidArgument(where + ": bad parameter reference");
        break;
      case plan::Storage::kResult:
        // A view may read a value stored in a result buffer; results themselves are dense
        // (checked below).
        if (value.index < 0 || static_cast<size_t>(value.index) >= plan.result_types.size() ||
            (view ? plan::ByteSize(plan.result_types[static_cast<size_t>(value.index)]) < value.byte_size
                  : plan::ByteSize(plan.result_types[static_cast<size_t>(value.index)]) != value.byte_size))
          return InvalidArgument(where + ": bad result reference");
        break;
      case plan::Storage::kConstant:
        if (value.index < 0 || static_cast<size_t>(value.index) >= plan.constants.size() ||
            (view ? static_cast<int64_t>(plan.constants[static_cast<size_t>(value.index)].size()) < value.byte_size
                  : static_cast<int64_t>(plan.constants[static_cast<size_t>(value.index)].size()) != value.byte_size))
          return InvalidArgument(where + ": bad constant reference");
        break;
    }
  }
  if (plan.results.size() != plan.result_types.size()) return InvalidArgument("plan result count mismatch");
  for (size_t i = 0; i < plan.results.size(); ++i) {
    if (plan.results[i] >= plan.values.size() || !plan.values[plan.results[i]].strides.empty() ||
        plan.values[plan.results[i]].byte_size != plan::ByteSize(plan.result_types[i]))
      return InvalidArgument("plan result " + std::to_string(i) + " is malformed");
  }
  return OkStatus();
}

constexpr int64_t kMaxPartitions = 4096;

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// The parameter struct of the step the executor runs itself (checked by Resolve).
template <typename P>
const P& ParamsOf(const plan::Step& step) {
  return *static_cast<const P*>(step.params.get());
}

// The struct the executor's step `step` (a manual, host transfer or collective step) must
// carry, or nullptr when it takes none.
const kernels::ParamsType* ExpectedParams(const plan::Step& step) {
  const std::string& name = step.kernel;
  if (step.kind == plan::StepKind::kManual) return kernels::ParamsTypeOf<plan::ManualParams>();
  if (step.kind == plan::StepKind::kHostTransfer) return kernels::ParamsTypeOf<plan::HostTransferParams>();
  if (name == "manual_operand") return kernels::ParamsTypeOf<plan::ManualOperandParams>();
  if (name == "manual_result") return kernels::ParamsTypeOf<plan::ManualResultParams>();
  if (name == "collective_permute") return kernels::ParamsTypeOf<plan::CollectivePermuteParams>();
  if (name == "collective_broadcast") return kernels::ParamsTypeOf<plan::CollectiveBroadcastParams>();
  if (name == "all_gather") return kernels::ParamsTypeOf<plan::AllGatherParams>();
  if (name == "all_to_all") return kernels::ParamsTypeOf<plan::AllToAllParams>();
  if (name == "gather_blocks") return kernels::ParamsTypeOf<plan::GatherBlocksParams>();
  if (StartsWith(name, "all_reduce")) return kernels::ParamsTypeOf<plan::AllReduceParams>();
  if (StartsWith(name, "reduce_scatter")) return kernels::ParamsTypeOf<plan::ReduceScatterParams>();
  return nullptr;  // partition_id, or an unknown collective (ResolveCollective rejects it)
}

// InvalidArgument unless `step` carries the parameter struct `expected` (nullptr: none);
// `what` names the step in the message.
Status CheckParamsType(const plan::Step& step, const kernels::ParamsType* expected, const std::string& what) {
  if (step.params.type() == expected) return OkStatus();
  return InvalidArgument(step.origin + ": " + what + " takes " + std::string(expected ? expected->family : "no") +
                         " parameters, the step carries " + std::string(step.params.family()) + " parameters");
}

// InvalidArgument unless `step` (a collective, manual or host transfer step) carries the
// parameter struct its kind and name ask for.
Status CheckStepParams(const plan::Step& step) {
  const std::string what = step.kind == plan::StepKind::kManual         ? "manual step"
                           : step.kind == plan::StepKind::kHostTransfer ? "host transfer step '" + step.kernel + "'"
                                                                        : "collective step '" + step.kernel + "'";
  return CheckParamsType(step, ExpectedParams(step), what);
}

// Whether every block start has one entry per dimension of a block of rank `rank`.
bool StartsFit(const std::vector<std::vector<int64_t>>& starts, size_t rank) {
  for (const std::vector<int64_t>& start : starts)
    if (start.size() != rank) return false;
  return true;
}

// Whether `groups` is well formed: groups of group_size members each (or, for uneven
// all_reduce groups, any positive sizes), or no groups and a positive group_size.
bool GroupsFit(const plan::PartitionGroups& groups, bool uneven_allowed) {
  if (groups.group_size < 0 || (groups.group_size == 0 && (!uneven_allowed || groups.groups.empty()))) return false;
  for (const std::vector<int64_t>& group : groups.groups) {
    if (group.empty()) return false;
    if (groups.group_size != 0 && static_cast<int64_t>(group.size()) != groups.group_size) return false;
  }
  return true;
}

// Checks a collective step's name and parameters; resolves a reduction's binary kernel
// (into `fn`) or decodes its body program (into `state`).
Status ResolveCollective(const plan::ExecutionPlan& plan, const plan::Step& step,
                         const kernels::KernelRegistry& registry, kernels::KernelFn* fn, kernels::KernelState* state) {
  const std::string& name = step.kernel;
  auto malformed = [&] { return InvalidArgument(step.origin + ": malformed collective step '" + name + "'"); };
  auto one_to_one = [&] { return step.inputs.size() == 1 && step.outputs.size() == 1; };
  if (name == "partition_id") {
    STABLERT_RETURN_IF_ERROR(CheckStepParams(step));  // none
    return step.inputs.empty() && step.outputs.size() == 1 &&
                   plan.values[step.outputs[0]].type == plan::TensorType{DType::kU32, {}}
               ? OkStatus()
               : malformed();
  }
  if (ExpectedParams(step) == nullptr) return Unimplemented(step.origin + ": unknown collective '" + name + "'");
  STABLERT_RETURN_IF_ERROR(CheckStepParams(step));
  if (!one_to_one()) return malformed();
  const plan::TensorType& in = plan.values[step.inputs[0]].type;
  const plan::TensorType& out = plan.values[step.outputs[0]].type;
  if (in.dtype != out.dtype) return malformed();
  if (name == "manual_operand")
    return StartsFit(ParamsOf<plan::ManualOperandParams>(step).block_starts, out.dims.size()) ? OkStatus()
                                                                                              : malformed();
  if (name == "manual_result")
    return StartsFit(ParamsOf<plan::ManualResultParams>(step).block_starts, in.dims.size()) ? OkStatus() : malformed();
  if (name == "collective_permute") {
    for (const std::vector<int64_t>& pair : ParamsOf<plan::CollectivePermuteParams>(step).pairs)
      if (pair.size() != 2) return malformed();
    return OkStatus();
  }
  if (name == "all_gather")
    return GroupsFit(ParamsOf<plan::AllGatherParams>(step).groups, false) ? OkStatus() : malformed();
  if (name == "collective_broadcast")
    return GroupsFit(ParamsOf<plan::CollectiveBroadcastParams>(step).groups, false) ? OkStatus() : malformed();
  if (name == "all_to_all")
    return GroupsFit(ParamsOf<plan::AllToAllParams>(step).groups, false) ? OkStatus() : malformed();
  if (name == "gather_blocks") {
    const auto& params = ParamsOf<plan::GatherBlocksParams>(step);
    return GroupsFit(params.groups, false) && StartsFit(params.block_starts, in.dims.size()) ? OkStatus()
                                                                                              : malformed();
  }
  const bool all_reduce = StartsWith(name, "all_reduce");
  const plan::PartitionGroups& groups = all_reduce ? ParamsOf<plan::AllReduceParams>(step).groups
                                                   : ParamsOf<plan::ReduceScatterParams>(step).groups;
  const std::vector<int64_t>& body = all_reduce ? ParamsOf<plan::AllReduceParams>(step).body
                                                : ParamsOf<plan::ReduceScatterParams>(step).body;
  if (!GroupsFit(groups, all_reduce)) return malformed();
  for (std::string_view prefix : {"all_reduce", "reduce_scatter"}) {
    if (!StartsWith(name, prefix)) continue;
    std::string_view rest = std::string_view(name).substr(prefix.size());
    if (rest == "_program") {
      if (body.empty()) return malformed();
      auto program = kernels::ScalarProgram::Decode(body, registry);
      if (!program.ok()) return program.status().WithPrefix(step.origin);
      if (program->num_inputs() != 2 || program->outputs().size() != 1) return malformed();
      *state = std::make_shared<const kernels::ScalarProgram>(std::move(program).value());
      return OkStatus();
    }
    if (rest.empty() || rest[0] != '.' || !body.empty()) return malformed();
    *fn = registry.Find(rest.substr(1));
    if (*fn == nullptr) return Unimplemented(step.origin + ": no CPU kernel '" + std::string(rest.substr(1)) + "'");
    return OkStatus();
  }
  return Unimplemented(step.origin + ": unknown collective '" + name + "'");
}

// Copies one element of `bytes` (1, 2, 4 or 8) bytes.
inline void CopyElement(void* dst, const void* src, uint8_t bytes) {
  switch (bytes) {
    case 1: std::memcpy(dst, src, 1); break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    default: std::memcpy(dst, src, 8); break;
  }
}

// The scalar function a single-element kernel step runs as (nullptr: none): its op's
// (kernels::ScalarFunctionOf), on real dtypes. Per-step cost on a loop of scalar steps:
// ~3 ns instead of ~12.
kernels::ScalarFn ScalarFastPath(const plan::Step& step, std::span<const kernels::BufferView> operands,
                                 const kernels::KernelRegistry& registry, int64_t* attr) {
  if (step.workspace != plan::kNoValue || step.outputs.size() != 1 || step.inputs.empty() || step.inputs.size() > 3)
    return nullptr;
  for (const kernels::BufferView& view : operands) {
    const int size = DTypeByteSize(view.dtype);
    if (view.num_elements != 1 || !view.strides.empty() || size < 1 || size > 8 || IsComplex(view.dtype))
      return nullptr;
  }
  *attr = 0;
  if (const auto* params = step.params.As<kernels::CompareParams>()) {
    *attr = static_cast<int64_t>(params->direction) * 8 + static_cast<int64_t>(params->type);
  } else if (!step.params.empty()) {
    return nullptr;  // an op with parameters the scalar function does not take
  }
  return kernels::ScalarFunctionOf(registry, step.kernel);
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
                          0, 0, &step, nullptr, 0, 0};
    const kernels::KernelRegistry::Entry* entry = nullptr;
    switch (step.kind) {
      case plan::StepKind::kKernel:
        if (!step.regions.empty()) return InvalidArgument(step.origin + ": kernel step with regions");
        entry = registry.Lookup(step.kernel);
        if (entry == nullptr) return Unimplemented(step.origin + ": no CPU kernel '" + step.kernel + "'");
        STABLERT_RETURN_IF_ERROR(CheckParamsType(step, entry->params, "kernel '" + step.kernel + "'"));
        resolved.fn = entry->fn;
        resolved.bind = entry->bind;
        if (entry->splittable) {
          // Split only work worth a handoff to other threads (tens of microseconds).
          int64_t elements = 0;
          for (plan::ValueId v : step.inputs) elements += ElementCount(plan.values[v].type.dims);
          for (plan::ValueId v : step.outputs) elements += ElementCount(plan.values[v].type.dims);
          constexpr int64_t kMinElementsToSplit = 1 << 16;
          if (elements >= kMinElementsToSplit) resolved.parts = ThreadPool::Shared().parallelism();
          // Large elementwise and fused steps in more chunks than threads (each still long:
          // ~2^18 elements or more), so that the split follows the threads' actual progress.
          // Their calls cost nothing beyond their share; other kernels may set up per call
          // (buffers, a scan's line blocks) and keep one call per thread.
          constexpr int64_t kChunksPerThreadFrom = 1 << 21;
          const bool cheap_calls = entry->tile != nullptr || step.kernel == "fused" || step.kernel == "fused_rows";
          resolved.chunks = cheap_calls && elements >= kChunksPerThreadFrom ? resolved.parts * 4 : resolved.parts;
        }
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
      case plan::StepKind::kCollective:
        if (!step.regions.empty()) return InvalidArgument(step.origin + ": collective step with regions");
        for (const auto* list : {&step.inputs, &step.outputs})
          for (plan::ValueId v : *list)
            if (v >= plan.values.size()) return InvalidArgument(step.origin + ": step refers to an unknown value");
        STABLERT_RETURN_IF_ERROR(ResolveCollective(plan, step, registry, &resolved.fn, &resolved.state));
        break;
      case plan::StepKind::kHostTransfer: {
        const bool send = step.kernel == "host_send", recv = step.kernel == "host_recv";
        if (!step.regions.empty() || (!send && !recv) || step.inputs.size() != (send ? 1u : 0u) ||
            step.outputs.size() != (recv ? 1u : 0u))
          return InvalidArgument(step.origin + ": malformed host transfer step '" + step.kernel + "'");
        STABLERT_RETURN_IF_ERROR(CheckStepParams(step));
        break;
      }
      case plan::StepKind::kManual:
        if (step.regions.size() != 1) return InvalidArgument(step.origin + ": malformed manual step");
        STABLERT_RETURN_IF_ERROR(CheckStepParams(step));
        if (const int64_t n = ParamsOf<plan::ManualParams>(step).num_partitions; n < 1 || n > kMaxPartitions)
          return InvalidArgument(step.origin + ": a manual step over " + std::to_string(n) +
                                 " partitions (expected 1 to " + std::to_string(kMaxPartitions) + ")");
        break;
      default:
        return InvalidArgument(step.origin + ": unknown step kind");
    }
    if (step.workspace != plan::kNoValue) {
      if (step.kind != plan::StepKind::kKernel || entry->workspace == nullptr)
        return InvalidArgument(step.origin + ": only kernels that declare a workspace take one");
      if (step.workspace >= plan.values.size() || plan.values[step.workspace].storage != plan::Storage::kArena ||
          !plan.values[step.workspace].strides.empty())
        return InvalidArgument(step.origin + ": the workspace must be an arena value");
    }
    const std::vector<plan::ValueId> workspace_list =
        step.workspace == plan::kNoValue ? std::vector<plan::ValueId>{} : std::vector<plan::ValueId>{step.workspace};
    for (const auto* list : {&step.inputs, &step.outputs, &workspace_list}) {
      for (plan::ValueId v : *list) {
        if (v >= plan.values.size()) return InvalidArgument(step.origin + ": step refers to an unknown value");
        const plan::Value& value = plan.values[v];
        if (list == &step.outputs &&
            (value.storage == plan::Storage::kParameter || value.storage == plan::Storage::kConstant))
          return InvalidArgument(step.origin + ": step writes a parameter or constant");
        if (!value.strides.empty() && (list == &step.outputs || entry == nullptr || !entry->strided_inputs))
          return InvalidArgument(step.origin + ": value %" + std::to_string(v) +
                                 " is a strided view, which only inputs of kernels taking views can be");
        kernels::BufferView view;
        view.dtype = value.type.dtype;
        view.dims = value.type.dims;
        view.num_elements = ElementCount(value.type.dims);
        view.strides = value.strides;
        operand_values_.push_back(v);
        operand_templates_.push_back(view);
      }
    }
    if (entry != nullptr && (entry->prepare != nullptr || entry->workspace != nullptr)) {
      // The workspace function and the prepare function see the data of constant inputs.
      std::vector<kernels::BufferView> inputs(operand_templates_.begin() + resolved.first_operand,
                                              operand_templates_.begin() + resolved.first_operand + resolved.num_inputs);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const plan::Value& value = plan.values[step.inputs[i]];
        if (value.storage == plan::Storage::kConstant)
          inputs[i].data = const_cast<uint8_t*>(plan.constants[static_cast<size_t>(value.index)].data());
      }
      kernels::KernelArgs args;
      args.inputs = inputs;
      args.outputs = std::span<const kernels::BufferView>(
          operand_templates_.data() + resolved.first_operand + resolved.num_inputs, resolved.num_outputs);
      args.params = step.params.get();
      if (entry->workspace != nullptr) {
        const int64_t per_call = entry->workspace(args);
        const int64_t have = step.workspace == plan::kNoValue ? 0 : plan.values[step.workspace].byte_size;
        if (per_call > 0 && (per_call + 63) / 64 * 64 > have)
          return InvalidArgument(step.origin + ": kernel '" + step.kernel + "' needs a workspace of " +
                                 std::to_string(per_call) + " bytes, the step has " + std::to_string(have));
        if (per_call > 0) {
          resolved.workspace_per_call = (per_call + 63) / 64 * 64;
          // As many calls as the workspace has slices for.
          resolved.parts = static_cast<int>(std::min<int64_t>(resolved.parts, have / resolved.workspace_per_call));
        }
      }
      if (entry->prepare != nullptr) {
        auto prepared = entry->prepare(args);
        if (!prepared.ok()) return prepared.status().WithPrefix(step.origin);
        resolved.state = std::move(prepared->state);
        if (prepared->single_call) {  // the step runs on threads of its own
          resolved.parts = 1;
          resolved.own_threads = true;
        }
      }
    }
    if (step.kind == plan::StepKind::kKernel)
      resolved.scalar = ScalarFastPath(
          step, std::span<const kernels::BufferView>(operand_templates_.data() + resolved.first_operand,
                                                     resolved.num_inputs + resolved.num_outputs),
          registry, &resolved.scalar_attr);
    if (resolved.scalar != nullptr)
      for (uint32_t i = 0; i < resolved.num_inputs + resolved.num_outputs; ++i)
        resolved.scalar_bytes[i] =
            static_cast<uint8_t>(DTypeByteSize(operand_templates_[resolved.first_operand + i].dtype));
    // A step's regions take consecutive sequence slots; their steps are appended after
    // this sequence's (reserved above), so every sequence's steps stay contiguous.
    resolved.first_region = static_cast<uint32_t>(sequences_.size());
    resolved.num_regions = static_cast<uint32_t>(step.regions.size());
    sequences_.resize(sequences_.size() + step.regions.size());
    steps_[first + s] = resolved;
    const size_t region_operands = operand_values_.size();
    if (step.kind == plan::StepKind::kManual) ++manual_depth_;
    for (size_t r = 0; r < step.regions.size(); ++r)
      STABLERT_RETURN_IF_ERROR(Resolve(step.regions[r], resolved.first_region + static_cast<uint32_t>(r), registry,
                                       depth + 1));
    if (step.kind == plan::StepKind::kManual) --manual_depth_;
    if (step.kind == plan::StepKind::kManual) {
      // Every arena value the region refers to, other than the step's global operands and
      // results, is private to each partition.
      ResolvedStep& manual = steps_[first + s];
      manual.first_private = static_cast<uint32_t>(private_slots_.size());
      for (size_t slot = region_operands; slot < operand_values_.size(); ++slot) {
        plan::ValueId v = operand_values_[slot];
        if (plan.values[v].storage != plan::Storage::kArena) continue;
        if (std::find(step.inputs.begin(), step.inputs.end(), v) != step.inputs.end() ||
            std::find(step.outputs.begin(), step.outputs.end(), v) != step.outputs.end())
          continue;
        private_slots_.push_back(static_cast<uint32_t>(slot));
      }
      manual.num_private = static_cast<uint32_t>(private_slots_.size()) - manual.first_private;
    }
  }
  if (manual_depth_ == 0) {
    BuildRegisterPrograms(index);
    PairIndependentSteps(index);
  }
  return OkStatus();
}

namespace {

// Where a step's operand lives, for the dependency test of PairIndependentSteps: arena
// values by byte range, parameters and results as whole buffers (constants are never
// written and are left out).
struct Access {
  plan::Storage storage;
  int64_t begin;  // arena: first byte; parameter, result: its index
  int64_t end;    // arena: one past the last byte; otherwise begin + 1
  bool write;
};

std::vector<Access> AccessesOf(const plan::ExecutionPlan& plan, const plan::Step& step) {
  std::vector<Access> accesses;
  auto add = [&](plan::ValueId v, bool write) {
    const plan::Value& value = plan.values[v];
    if (value.storage == plan::Storage::kConstant) return;
    if (value.storage == plan::Storage::kArena)
      accesses.push_back({value.storage, value.index, value.index + std::max<int64_t>(value.byte_size, 1), write});
    else
      accesses.push_back({value.storage, value.index, value.index + 1, write});
  };
  for (plan::ValueId v : step.inputs) add(v, false);
  for (plan::ValueId v : step.outputs) add(v, true);
  if (step.workspace != plan::kNoValue) add(step.workspace, true);
  return accesses;
}

// Whether two steps with these accesses must run in program order.
bool Dependent(const std::vector<Access>& a, const std::vector<Access>& b) {
  for (const Access& x : a) {
    for (const Access& y : b) {
      if (!x.write && !y.write) continue;
      // A donated parameter's buffer may hold any result of the same size: a result written
      // by one step may be a parameter the other reads.
      auto result_over_parameter = [](const Access& result, const Access& parameter) {
        return result.storage == plan::Storage::kResult && result.write &&
               parameter.storage == plan::Storage::kParameter;
      };
      if (result_over_parameter(x, y) || result_over_parameter(y, x)) return true;
      if (x.storage == y.storage && x.begin < y.end && y.begin < x.end) return true;
    }
  }
  return false;
}

// One-thread time of a step by the cost model, in microseconds: a core's rates on this
// class of machine (~100 GFLOP/s in products, ~20 GB/s streamed, ~2 G transcendentals/s).
// Steps that touch part of an operand only (slices, gathers, in-place updates) count the
// bytes of their outputs and of their inputs after the first instead of the whole operand.
double EstimatedMicros(const plan::ExecutionPlan& plan, const plan::Step& step) {
  plan::PlanCost cost = plan::StepCost(plan, step);
  const std::string_view family = std::string_view(step.kernel).substr(0, step.kernel.find('.'));
  if (family == "dynamic_slice" || family == "dynamic_update_slice" || family == "slice" || family == "gather" ||
      family == "scatter" || family.starts_with("scatter_") || family.starts_with("gather_")) {
    double bytes = 0;
    for (size_t i = 1; i < step.inputs.size(); ++i) bytes += static_cast<double>(plan.values[step.inputs[i]].byte_size);
    for (plan::ValueId v : step.outputs) bytes += static_cast<double>(plan.values[v].byte_size);
    if (family == "dynamic_update_slice" || family.starts_with("scatter")) bytes -= static_cast<double>(plan.values[step.outputs[0]].byte_size);
    cost.bytes_accessed = 2 * std::max(bytes, 0.0);
  }
  return std::max(cost.flops / 1e5, cost.bytes_accessed / 2e4) + cost.transcendentals / 2e3;
}

}  // namespace

void LoadedPlan::PairIndependentSteps(uint32_t index) {
  const ResolvedSequence seq = sequences_[index];
  const uint32_t end = seq.first_step + seq.num_steps;
  auto plain_kernel = [&](const ResolvedStep& step) { return step.kind == plan::StepKind::kKernel; };
  // A step that may run beside another: one call on one thread, long enough to pay for the
  // handoff. Foreign function calls may call back into the host (Python): never.
  auto pairable = [&](const ResolvedStep& step) {
    return plain_kernel(step) && step.program < 0 && step.scalar == nullptr && step.parts <= 1 && !step.own_threads &&
           !StartsWith(step.step->kernel, "ffi") &&
           EstimatedMicros(plan_, *step.step) >= kMinConcurrentMicros;
  };
  std::vector<std::vector<Access>> accesses;
  for (uint32_t s = seq.first_step; s < end; ++s) {
    if (!pairable(steps_[s])) continue;
    accesses.assign(1, AccessesOf(plan_, *steps_[s].step));
    for (uint32_t t = s + 1; t < end && t <= s + kConcurrentWindow; ++t) {
      const ResolvedStep& later = steps_[t];
      if (!plain_kernel(later)) break;  // control flow, collectives, transfers: in order
      std::vector<Access> own = AccessesOf(plan_, *later.step);
      bool independent = true;
      for (const std::vector<Access>& earlier : accesses)
        if (Dependent(earlier, own)) {
          independent = false;
          break;
        }
      if (independent && pairable(later)) {
        steps_[s].partner = static_cast<int32_t>(t);
        s = t;  // no pair starts before its later step
        break;
      }
      accesses.push_back(std::move(own));
    }
  }
}

namespace {
std::atomic<bool> concurrent_steps{false};
}  // namespace

void LoadedPlan::SetConcurrentSteps(bool enabled) { concurrent_steps.store(enabled, std::memory_order_relaxed); }
bool LoadedPlan::ConcurrentSteps() { return concurrent_steps.load(std::memory_order_relaxed); }

std::vector<std::pair<uint32_t, uint32_t>> LoadedPlan::ConcurrentPairs() const {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  const ResolvedSequence& body = sequences_[0];
  for (uint32_t s = body.first_step; s < body.first_step + body.num_steps; ++s)
    if (steps_[s].partner >= 0) pairs.emplace_back(s - body.first_step, steps_[s].partner - body.first_step);
  return pairs;
}

bool LoadedPlan::AddScalarStep(RegisterProgramBuilder& builder, const ResolvedStep& step) const {
  RegisterProgramBuilder::Operand inputs[3];
  for (uint32_t i = 0; i < step.num_inputs; ++i)
    inputs[i] = {operand_values_[step.first_operand + i], step.first_operand + i};
  const uint32_t out = step.first_operand + step.num_inputs;
  return builder.Add(step.step->kernel, step.scalar, step.scalar_attr, std::span(inputs, step.num_inputs),
                     {operand_values_[out], out});
}

void LoadedPlan::BuildLoopWithCalls(ResolvedStep& loop) {
  // A body step may be a call in a loop program: a one-call kernel step that binds.
  auto callable = [](const ResolvedStep& step) {
    return step.kind == plan::StepKind::kKernel && step.scalar == nullptr && step.bind != nullptr && step.parts <= 1;
  };
  const ResolvedSequence& condition = sequences_[loop.first_region];
  const ResolvedSequence& body = sequences_[loop.first_region + 1];
  if (body.num_steps > LoopBinding::kMaxSteps) return;
  size_t calls = 0;
  for (uint32_t b = body.first_step; b < body.first_step + body.num_steps; ++b) {
    if (callable(steps_[b])) ++calls;
    else if (steps_[b].scalar == nullptr) return;
  }
  if (calls == 0 || calls > LoopBinding::kMaxCalls) return;
  RegisterProgramBuilder builder(plan_);
  bool ok = true;
  for (uint32_t b = condition.first_step; b < condition.first_step + condition.num_steps && ok; ++b)
    ok = AddScalarStep(builder, steps_[b]);
  ok = ok && builder.EndCondition({operand_values_[loop.first_operand], loop.first_operand});
  for (uint32_t b = body.first_step; b < body.first_step + body.num_steps && ok; ++b) {
    const ResolvedStep& step = steps_[b];
    if (step.scalar != nullptr) {
      ok = AddScalarStep(builder, step);
      continue;
    }
    const uint32_t operands = step.num_inputs + step.num_outputs + (step.workspace_per_call > 0 ? 1 : 0);
    ok = builder.AddCall(std::span(operand_values_.data() + step.first_operand, operands));
  }
  std::optional<RegisterProgram> program = builder.Finish();
  if (!ok || !program) return;
  loop.loop_program = static_cast<int32_t>(programs_.size());
  programs_.push_back(std::move(*program));
}

bool LoadedPlan::RunLoopWithCalls(const ResolvedStep& loop, const std::vector<kernels::BufferView>& views) const {
  const ResolvedSequence& body = sequences_[loop.first_region + 1];
  kernels::BoundCall calls[LoopBinding::kMaxCalls];
  size_t bound = 0;
  for (uint32_t b = body.first_step; b < body.first_step + body.num_steps; ++b) {
    const ResolvedStep& step = steps_[b];
    if (step.scalar != nullptr) continue;
    if (!step.bind(ArgsOf(step, views), calls[bound++])) return false;
  }
  programs_[static_cast<size_t>(loop.loop_program)].Run(views.data(), calls);
  return true;
}

void LoadedPlan::BuildRegisterPrograms(uint32_t index) {
  const ResolvedSequence seq = sequences_[index];
  const uint32_t end = seq.first_step + seq.num_steps;
  // Whether the sequence is nothing but scalar steps (none: an empty region).
  auto all_scalar = [&](uint32_t sequence) {
    const ResolvedSequence& region = sequences_[sequence];
    for (uint32_t s = region.first_step; s < region.first_step + region.num_steps; ++s)
      if (steps_[s].scalar == nullptr) return false;
    return true;
  };
  for (uint32_t s = seq.first_step; s < end; ++s) {
    ResolvedStep& step = steps_[s];
    if (step.kind == plan::StepKind::kWhile && all_scalar(step.first_region) && all_scalar(step.first_region + 1)) {
      RegisterProgramBuilder builder(plan_);
      bool ok = true;
      for (uint32_t region = 0; region < 2 && ok; ++region) {
        const ResolvedSequence& body = sequences_[step.first_region + region];
        for (uint32_t b = body.first_step; b < body.first_step + body.num_steps && ok; ++b)
          ok = AddScalarStep(builder, steps_[b]);
        if (region == 0 && ok)
          ok = builder.EndCondition({operand_values_[step.first_operand], step.first_operand});
      }
      std::optional<RegisterProgram> program = builder.Finish();
      if (ok && program) {
        step.program = static_cast<int32_t>(programs_.size());
        programs_.push_back(std::move(*program));
      }
      continue;
    }
    if (step.kind == plan::StepKind::kWhile && all_scalar(step.first_region) &&
        sequences_[step.first_region].num_steps > 0)
      BuildLoopWithCalls(step);
    if (step.kind == plan::StepKind::kWhile && all_scalar(step.first_region) &&
        sequences_[step.first_region].num_steps > 0) {
      // Only the condition is scalar: it runs as a program of its own each iteration.
      RegisterProgramBuilder builder(plan_);
      const ResolvedSequence& condition = sequences_[step.first_region];
      bool ok = true;
      for (uint32_t b = condition.first_step; b < condition.first_step + condition.num_steps && ok; ++b)
        ok = AddScalarStep(builder, steps_[b]);
      if (std::optional<RegisterProgram> program = builder.Finish(); ok && program) {
        step.condition_program = static_cast<int32_t>(programs_.size());
        programs_.push_back(std::move(*program));
      }
      continue;
    }
    if (step.scalar == nullptr) continue;
    // The longest run of scalar steps from s that fits one program.
    RegisterProgramBuilder builder(plan_);
    uint32_t run = s;
    while (run < end && steps_[run].scalar != nullptr) {
      RegisterProgramBuilder extended = builder;
      if (!AddScalarStep(extended, steps_[run])) break;
      builder = std::move(extended);
      ++run;
    }
    if (run - s >= 2) {
      if (std::optional<RegisterProgram> program = builder.Finish()) {
        step.program = static_cast<int32_t>(programs_.size());
        step.program_steps = run - s;
        programs_.push_back(std::move(*program));
      }
      s = run - 1;
    }
  }
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

kernels::KernelArgs LoadedPlan::ArgsOf(const ResolvedStep& step, const std::vector<kernels::BufferView>& views) {
  kernels::KernelArgs args;
  args.inputs = std::span<const kernels::BufferView>(views.data() + step.first_operand, step.num_inputs);
  args.outputs =
      std::span<const kernels::BufferView>(views.data() + step.first_operand + step.num_inputs, step.num_outputs);
  args.params = step.step->params.get();
  args.state = step.state.get();
  if (step.workspace_per_call > 0)  // the workspace value is the operand after the outputs
    args.workspace = {static_cast<std::byte*>(views[step.first_operand + step.num_inputs + step.num_outputs].data),
                      static_cast<size_t>(step.workspace_per_call)};
  return args;
}

bool LoadedPlan::BindLoopBody(uint32_t body, const std::vector<kernels::BufferView>& views,
                              LoopBinding& binding) const {
  const ResolvedSequence& seq = sequences_[body];
  if (seq.num_steps > LoopBinding::kMaxSteps) return false;
  size_t calls = 0;
  for (uint32_t i = 0; i < seq.num_steps; ++i) {
    binding.slot[i] = LoopBinding::kNone;
    const ResolvedStep& step = steps_[seq.first_step + i];
    if (step.bind == nullptr || step.kind != plan::StepKind::kKernel || step.program >= 0 || step.scalar != nullptr ||
        step.parts > 1 || calls == LoopBinding::kMaxCalls)
      continue;
    if (step.bind(ArgsOf(step, views), binding.calls[calls])) binding.slot[i] = static_cast<uint8_t>(calls++);
  }
  binding.flat = true;
  binding.num_actions = 0;
  for (uint32_t i = 0; i < seq.num_steps && binding.flat; ++i) {
    const ResolvedStep& step = steps_[seq.first_step + i];
    if (binding.num_actions == LoopBinding::kMaxActions) {
      binding.flat = false;
    } else if (step.program >= 0) {
      binding.actions[binding.num_actions++] = {&programs_[static_cast<size_t>(step.program)], nullptr};
      if (step.kind == plan::StepKind::kKernel) i += step.program_steps - 1;
    } else if (binding.slot[i] != LoopBinding::kNone) {
      binding.actions[binding.num_actions++] = {nullptr, &binding.calls[binding.slot[i]]};
    } else {
      binding.flat = false;
    }
  }
  return calls > 0;
}

namespace {

// Records a step's event when a trace is active (runtime/trace.h): its op, its source
// location and kernel, and its time. Inactive, it costs an atomic load.
class StepTrace {
 public:
  explicit StepTrace(const plan::Step* step) : step_(trace::Active() ? step : nullptr) {
    if (step_) start_ns_ = trace::NowNs();
  }
  ~StepTrace() {
    if (!step_) return;
    const std::string& origin = step_->origin;
    const size_t space = origin.find(' ');
    trace::Event event;
    event.kind = trace::EventKind::kStep;
    event.device_id = trace::CurrentDevice();
    event.name = origin.substr(0, space);
    event.detail = (space == std::string::npos ? std::string() : origin.substr(space + 1)) +
                   (step_->kernel.empty() ? std::string() : " kernel=" + step_->kernel);
    event.start_ns = start_ns_;
    event.end_ns = trace::NowNs();
    trace::Record(std::move(event));
  }
  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;

 private:
  const plan::Step* step_;
  int64_t start_ns_ = 0;
};

}  // namespace

Status LoadedPlan::RunKernel(const ResolvedStep& step, const kernels::KernelContext& context,
                             const std::vector<kernels::BufferView>& views) const {
  const kernels::KernelArgs args = ArgsOf(step, views);
  std::byte* workspace = args.workspace.data();
  Status status;
  if (step.parts > 1 && context.thread_count == 1) {
    // `parts` threads, each with its own workspace slice, take the step's chunks one at
    // a time; every call runs in the executor's floating-point mode (denormals flushed).
    // Each thread starts with its own contiguous run of chunks, the same from call to
    // call (ThreadPool::ParallelForChunks), so the rows it wrote last time are in its cache.
    std::mutex error_mutex;
    ThreadPool::Shared().ParallelForChunks(step.parts, step.chunks, [&](int part, int chunk) {
      ScopedFlushDenormals flush_denormals;
      kernels::KernelArgs part_args = args;
      if (workspace != nullptr)
        part_args.workspace = {workspace + static_cast<size_t>(part) * static_cast<size_t>(step.workspace_per_call),
                               static_cast<size_t>(step.workspace_per_call)};
      Status chunk_status =
          CatchingExceptions([&] { return step.fn(kernels::KernelContext{chunk, step.chunks}, part_args); });
      if (!chunk_status.ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (status.ok()) status = std::move(chunk_status);
      }
    });
  } else {
    status = step.fn(context, args);
  }
  return status.ok() ? status : status.WithPrefix(step.step->origin);
}

Status LoadedPlan::Run(uint32_t sequence, const kernels::KernelContext& context,
                       const std::vector<kernels::BufferView>& views, const Partition* partition,
                       const HostTransfers* host, const LoopBinding* binding) const {
  const ResolvedSequence& seq = sequences_[sequence];
  uint32_t ran_early = UINT32_MAX;  // a step already run beside an earlier one
  for (uint32_t s = seq.first_step; s < seq.first_step + seq.num_steps; ++s) {
    if (s == ran_early) continue;
    const ResolvedStep& step = steps_[s];
    const StepTrace traced(step.step);
    if (step.program >= 0) {
      programs_[static_cast<size_t>(step.program)].Run(views.data());
      if (step.kind == plan::StepKind::kKernel) s += step.program_steps - 1;
      continue;
    }
    switch (step.kind) {
      case plan::StepKind::kKernel: {
        if (binding != nullptr) {
          const uint8_t call = binding->slot[s - seq.first_step];
          if (call != LoopBinding::kNone) {
            binding->calls[call].run(binding->calls[call].storage);
            break;
          }
        }
        if (step.scalar != nullptr) {
          // One element: registers 1.. hold the inputs, register 0 the result.
          kernels::ScalarSlot registers[4];
          const kernels::BufferView* operands = views.data() + step.first_operand;
          for (uint32_t i = 0; i < step.num_inputs && i < 3; ++i)  // at most 3 (ScalarFastPath)
            CopyElement(&registers[i + 1], operands[i].data, step.scalar_bytes[i]);
          const kernels::ScalarInstruction instruction{step.scalar, 0, 1, 2, 3, step.scalar_attr};
          step.scalar(registers, instruction);
          CopyElement(operands[step.num_inputs].data, &registers[0], step.scalar_bytes[step.num_inputs]);
          break;
        }
        if (step.partner >= 0 && binding == nullptr && context.thread_count == 1 && ConcurrentSteps()) {
          // Two independent steps at once (PairIndependentSteps): this one here, the later
          // one on the pool; the later one is skipped when the loop reaches it.
          const ResolvedStep& later = steps_[static_cast<size_t>(step.partner)];
          Status statuses[2];
          ThreadPool::Shared().ParallelFor(2, [&](int which) {
            const ResolvedStep& run = which == 0 ? step : later;
            const StepTrace traced_later(which == 0 ? nullptr : run.step);
            statuses[which] = CatchingExceptions([&] { return RunKernel(run, context, views); });
          });
          STABLERT_RETURN_IF_ERROR(statuses[0]);
          STABLERT_RETURN_IF_ERROR(statuses[1]);
          ran_early = static_cast<uint32_t>(step.partner);
          break;
        }
        STABLERT_RETURN_IF_ERROR(RunKernel(step, context, views));
        break;
      }
      case plan::StepKind::kWhile: {
        // Bound calls run whole steps: only where each step runs as one call.
        if (step.loop_program >= 0 && context.thread_count == 1 && RunLoopWithCalls(step, views)) break;
        const auto* condition = static_cast<const uint8_t*>(views[step.first_operand].data);
        const RegisterProgram* condition_program =
            step.condition_program >= 0 ? &programs_[static_cast<size_t>(step.condition_program)] : nullptr;
        LoopBinding binding;
        // Bound calls run whole steps: only where each step runs as one call.
        const LoopBinding* body_binding =
            context.thread_count == 1 && BindLoopBody(step.first_region + 1, views, binding) ? &binding : nullptr;
        if (condition_program != nullptr && body_binding != nullptr && body_binding->flat) {
          // Tight: register programs and bound calls only.
          const LoopBinding::Action* actions = body_binding->actions;
          const uint32_t num_actions = body_binding->num_actions;
          for (condition_program->Run(views.data()); *condition; condition_program->Run(views.data())) {
            for (uint32_t a = 0; a < num_actions; ++a) {
              if (actions[a].program != nullptr) actions[a].program->Run(views.data());
              else actions[a].call->run(actions[a].call->storage);
            }
          }
          break;
        }
        while (true) {
          if (condition_program != nullptr) condition_program->Run(views.data());
          else STABLERT_RETURN_IF_ERROR(Run(step.first_region, context, views, partition, host));
          if (!*condition) break;
          STABLERT_RETURN_IF_ERROR(Run(step.first_region + 1, context, views, partition, host, body_binding));
        }
        break;
      }
      case plan::StepKind::kIf: {
        const auto* predicate = static_cast<const uint8_t*>(views[step.first_operand].data);
        STABLERT_RETURN_IF_ERROR(Run(step.first_region + (*predicate ? 0 : 1), context, views, partition, host));
        break;
      }
      case plan::StepKind::kCase: {
        int32_t index;
        std::memcpy(&index, views[step.first_operand].data, sizeof(index));
        const auto last = static_cast<int32_t>(step.num_regions - 1);
        uint32_t branch = static_cast<uint32_t>(index < 0 || index > last ? last : index);
        STABLERT_RETURN_IF_ERROR(Run(step.first_region + branch, context, views, partition, host));
        break;
      }
      case plan::StepKind::kManual:
        if (partition != nullptr) return Unimplemented(step.step->origin + ": nested manual regions");
        STABLERT_RETURN_IF_ERROR(RunManual(step, context, views, host));
        break;
      case plan::StepKind::kCollective:
        STABLERT_RETURN_IF_ERROR(RunCollective(step, context, views, partition));
        break;
      case plan::StepKind::kHostTransfer:
        STABLERT_RETURN_IF_ERROR(RunHostTransfer(step, views, partition, host));
        break;
    }
  }
  return OkStatus();
}

namespace {

// [outer, groups, inner] -> [groups, outer, inner], in bytes.
void GroupsToFront(const char* src, char* dst, int64_t outer, int64_t groups, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g)
      std::memcpy(dst + (g * outer + o) * inner, src + (o * groups + g) * inner, static_cast<size_t>(inner));
}

// [groups, outer, inner] -> [outer, groups, inner], in bytes.
void GroupsToMiddle(const char* src, char* dst, int64_t outer, int64_t groups, int64_t inner) {
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * groups + g) * inner, src + (g * outer + o) * inner, static_cast<size_t>(inner));
}

int64_t Product(std::span<const int64_t> dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) n *= dims[i];
  return n;
}

// The communicator's groups for `groups` over `num_ranks` partitions (empty: one group of
// all); InvalidArgument if they were laid out for another partition count.
StatusOr<collectives::ReplicaGroups> GroupsFor(const plan::PartitionGroups& groups, int num_ranks,
                                               const std::string& origin) {
  collectives::ReplicaGroups out;
  if (groups.groups.empty()) {
    if (groups.group_size != num_ranks)
      return InvalidArgument(origin + ": the group of all partitions has " + std::to_string(num_ranks) +
                             " members, not " + std::to_string(groups.group_size));
    return out;
  }
  size_t members = 0;
  for (const std::vector<int64_t>& group : groups.groups) {
    for (int64_t member : group)
      if (member < 0 || member >= num_ranks)
        return InvalidArgument(origin + ": a replica group names partition " + std::to_string(member) + " of " +
                               std::to_string(num_ranks));
    out.emplace_back(group.begin(), group.end());
    members += group.size();
  }
  if (members != static_cast<size_t>(num_ranks))
    return InvalidArgument(origin + ": replica groups cover " + std::to_string(members) + " of " +
                           std::to_string(num_ranks) + " partitions");
  return out;
}

// The block partition `rank` holds.
Dims BlockStart(const std::vector<std::vector<int64_t>>& starts, int rank) {
  const std::vector<int64_t>& start = starts[static_cast<size_t>(rank)];
  return Dims(start.begin(), start.end());
}

}  // namespace

Status LoadedPlan::RunManual(const ResolvedStep& step, const kernels::KernelContext& context,
                             const std::vector<kernels::BufferView>& views, const HostTransfers* host) const {
  const int partitions = static_cast<int>(ParamsOf<plan::ManualParams>(*step.step).num_partitions);
  STABLERT_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, env::CollectiveTimeout());
  collectives::InProcessCommunicator communicator(partitions, timeout);
  // Partitions other than 0 work in private arenas.
  std::vector<Arena> arenas;
  std::vector<std::vector<kernels::BufferView>> partition_views(static_cast<size_t>(partitions - 1));
  for (int p = 1; p < partitions; ++p) {
    STABLERT_ASSIGN_OR_RETURN(Arena arena, AcquireArena());
    std::vector<kernels::BufferView>& own = partition_views[static_cast<size_t>(p - 1)];
    own = views;
    auto* base = static_cast<uint8_t*>(arena.get());
    for (uint32_t i = step.first_private; i < step.first_private + step.num_private; ++i) {
      uint32_t slot = private_slots_[i];
      own[slot].data = base ? base + plan_.values[operand_values_[slot]].index : nullptr;
    }
    arenas.push_back(std::move(arena));
  }
  std::vector<Status> statuses(static_cast<size_t>(partitions));
  std::vector<Partition> contexts;
  for (int p = 0; p < partitions; ++p) contexts.push_back(Partition{p, &communicator});
  std::vector<std::thread> threads;
  const kernels::ffi::ExecutionInfo* ffi_execution = kernels::ffi::CurrentExecution();  // FFI calls of the region
  for (int p = 1; p < partitions; ++p)
    threads.emplace_back([&, p] {
      const kernels::ffi::ScopedExecution ffi_scope(ffi_execution);
      ScopedFlushDenormals flush_denormals;
      statuses[static_cast<size_t>(p)] = CatchingExceptions([&] {
        return Run(step.first_region, context, partition_views[static_cast<size_t>(p - 1)],
                   &contexts[static_cast<size_t>(p)], host);
      });
    });
  statuses[0] = CatchingExceptions([&] { return Run(step.first_region, context, views, &contexts[0], host); });
  for (std::thread& thread : threads) thread.join();
  for (Arena& arena : arenas) ReleaseArena(std::move(arena));
  // A partition's own failure explains its peers' timeouts: report it first.
  for (const Status& status : statuses)
    if (!status.ok() && status.code() != StatusCode::kDeadlineExceeded) return status;
  for (const Status& status : statuses)
    if (!status.ok()) return status;
  return OkStatus();
}

Status LoadedPlan::RunHostTransfer(const ResolvedStep& step, const std::vector<kernels::BufferView>& views,
                                   const Partition* partition, const HostTransfers* host) const {
  const plan::Step& plan_step = *step.step;
  const int64_t channel = ParamsOf<plan::HostTransferParams>(plan_step).channel_id;
  const bool send = plan_step.kernel == "host_send";
  if (host == nullptr || host->handler == nullptr)
    return FailedPrecondition(plan_step.origin + ": the execution has no host " + (send ? "send" : "receive") +
                              " callback for channel " + std::to_string(channel) +
                              " (host transfers need PJRT_ExecuteOptions " + (send ? "send" : "recv") + "_callbacks)");
  const kernels::BufferView& view = views[step.first_operand];
  const size_t bytes = static_cast<size_t>(view.num_elements) * DTypeByteSize(view.dtype);
  const int device = host->DeviceOf(partition ? partition->rank : 0);
  Status status = send ? host->handler->Send(device, channel, view.data, bytes)
                       : host->handler->Recv(device, channel, view.data, bytes);
  return status.ok() ? status : status.WithPrefix(plan_step.origin);
}

Status LoadedPlan::RunCollective(const ResolvedStep& step, const kernels::KernelContext& context,
                                 const std::vector<kernels::BufferView>& views, const Partition* partition) const {
  const plan::Step& plan_step = *step.step;
  const std::string& name = plan_step.kernel;
  const std::string& origin = plan_step.origin;
  const int rank = partition ? partition->rank : 0;
  if (name == "partition_id") {
    const auto value = static_cast<uint32_t>(rank);
    std::memcpy(views[step.first_operand].data, &value, sizeof(value));
    return OkStatus();
  }
  const kernels::BufferView& in = views[step.first_operand];
  const kernels::BufferView& out = views[step.first_operand + 1];
  const size_t element_size = DTypeByteSize(in.dtype);
  const int64_t in_bytes = in.num_elements * static_cast<int64_t>(element_size);
  const int num_ranks = partition ? partition->communicator->num_ranks() : 1;
  if (name == "manual_operand" || name == "manual_result") {
    const kernels::BufferView& local = name == "manual_operand" ? out : in;
    const kernels::BufferView& global = name == "manual_operand" ? in : out;
    const std::vector<std::vector<int64_t>>& starts =
        name == "manual_operand" ? ParamsOf<plan::ManualOperandParams>(plan_step).block_starts
                                 : ParamsOf<plan::ManualResultParams>(plan_step).block_starts;
    const size_t rank_dims = local.dims.size();
    if (starts.size() != static_cast<size_t>(num_ranks))
      return InvalidArgument(origin + ": the manual region's blocks are laid out for " + std::to_string(starts.size()) +
                             " partitions, not " + std::to_string(num_ranks));
    const Dims local_dims(local.dims.begin(), local.dims.end()), global_dims(global.dims.begin(), global.dims.end());
    const Dims start = BlockStart(starts, rank);
    const Dims zero(rank_dims, 0);
    if (name == "manual_operand") {
      // An unreduced operand: partitions off position 0 along the unreduced axes take zeros.
      const std::vector<int64_t>& takes_zeros = ParamsOf<plan::ManualOperandParams>(plan_step).takes_zeros;
      if (static_cast<size_t>(rank) < takes_zeros.size() && takes_zeros[static_cast<size_t>(rank)] != 0) {
        std::memset(local.data, 0, static_cast<size_t>(local.num_elements) * element_size);
        return OkStatus();
      }
      CopyBox(global.data, global_dims, start, local.data, local_dims, zero, local_dims, element_size);
      return OkStatus();
    }
    // Only the first partition holding this block writes it.
    for (int q = 0; q < rank; ++q)
      if (BlockStart(starts, q) == start) return OkStatus();
    CopyBox(local.data, local_dims, zero, global.data, global_dims, start, local_dims, element_size);
    return OkStatus();
  }

  // Outside manual regions the execution is its only participant.
  std::unique_ptr<collectives::InProcessCommunicator> alone;
  collectives::Communicator* communicator = partition ? partition->communicator : nullptr;
  if (communicator == nullptr) {
    STABLERT_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, env::CollectiveTimeout());
    alone = std::make_unique<collectives::InProcessCommunicator>(1, timeout);
    communicator = alone.get();
  }
  if (name == "collective_permute") {
    std::vector<std::pair<int, int>> pairs;
    for (const std::vector<int64_t>& pair : ParamsOf<plan::CollectivePermuteParams>(plan_step).pairs)
      pairs.emplace_back(static_cast<int>(pair[0]), static_cast<int>(pair[1]));
    return communicator->CollectivePermute(rank, pairs, in.data, out.data, in_bytes, origin);
  }
  const plan::PartitionGroups& partition_groups =
      name == "collective_broadcast" ? ParamsOf<plan::CollectiveBroadcastParams>(plan_step).groups
      : name == "gather_blocks"      ? ParamsOf<plan::GatherBlocksParams>(plan_step).groups
      : name == "all_gather"         ? ParamsOf<plan::AllGatherParams>(plan_step).groups
      : name == "all_to_all"         ? ParamsOf<plan::AllToAllParams>(plan_step).groups
      : StartsWith(name, "all_reduce") ? ParamsOf<plan::AllReduceParams>(plan_step).groups
                                       : ParamsOf<plan::ReduceScatterParams>(plan_step).groups;
  // Every group's size (0 only for all_reduce over groups of different sizes).
  const int64_t group_size = partition_groups.group_size;
  STABLERT_ASSIGN_OR_RETURN(const collectives::ReplicaGroups groups, GroupsFor(partition_groups, num_ranks, origin));
  if (name == "collective_broadcast")
    return communicator->CollectiveBroadcast(rank, groups, in.data, out.data, in_bytes, origin);
  if (name == "gather_blocks") {
    // The group's blocks, gathered in group order, each placed at its partition's start.
    const std::vector<std::vector<int64_t>>& starts = ParamsOf<plan::GatherBlocksParams>(plan_step).block_starts;
    if (starts.size() != static_cast<size_t>(num_ranks))
      return InvalidArgument(origin + ": the blocks are laid out for " + std::to_string(starts.size()) +
                             " partitions, not " + std::to_string(num_ranks));
    std::vector<char> gathered(static_cast<size_t>(in_bytes * group_size));
    STABLERT_RETURN_IF_ERROR(communicator->AllGather(rank, groups, in.data, gathered.data(), in_bytes, origin));
    const size_t rank_dims = in.dims.size();
    const Dims local_dims(in.dims.begin(), in.dims.end()), whole_dims(out.dims.begin(), out.dims.end());
    for (const std::vector<int>& group : groups) {
      if (std::find(group.begin(), group.end(), rank) == group.end()) continue;
      for (size_t k = 0; k < group.size(); ++k)
        CopyBox(gathered.data() + k * static_cast<size_t>(in_bytes), local_dims, Dims(rank_dims, 0), out.data,
                whole_dims, BlockStart(starts, group[k]), local_dims, element_size);
    }
    return OkStatus();
  }
  if (name == "all_gather") {
    const auto dim = static_cast<size_t>(ParamsOf<plan::AllGatherParams>(plan_step).dimension);
    const int64_t outer = Product(in.dims, 0, dim);
    if (outer == 1) return communicator->AllGather(rank, groups, in.data, out.data, in_bytes, origin);
    std::vector<char> gathered(static_cast<size_t>(in_bytes * group_size));
    STABLERT_RETURN_IF_ERROR(communicator->AllGather(rank, groups, in.data, gathered.data(), in_bytes, origin));
    GroupsToMiddle(gathered.data(), static_cast<char*>(out.data), outer, group_size, in_bytes / outer);
    return OkStatus();
  }
  if (name == "all_to_all") {
    const auto split = static_cast<size_t>(ParamsOf<plan::AllToAllParams>(plan_step).split_dimension);
    const auto concat = static_cast<size_t>(ParamsOf<plan::AllToAllParams>(plan_step).concat_dimension);
    const int64_t chunk_bytes = in_bytes / group_size;
    std::vector<char> packed(static_cast<size_t>(in_bytes)), received(static_cast<size_t>(in_bytes));
    const int64_t split_outer = Product(in.dims, 0, split);
    GroupsToFront(static_cast<const char*>(in.data), packed.data(), split_outer, group_size,
                  chunk_bytes / split_outer);
    STABLERT_RETURN_IF_ERROR(communicator->AllToAll(rank, groups, packed.data(), received.data(), chunk_bytes, origin));
    Dims chunk(in.dims.begin(), in.dims.end());
    chunk[split] /= group_size;
    const int64_t concat_outer = Product(chunk, 0, concat);
    GroupsToMiddle(received.data(), static_cast<char*>(out.data), concat_outer, group_size,
                   chunk_bytes / concat_outer);
    return OkStatus();
  }

  // all_reduce / reduce_scatter: a combiner from the binary kernel or the body program.
  const DType dtype = in.dtype;
  collectives::Combiner combine;
  std::vector<char> scratch;
  if (step.fn != nullptr) {
    combine = [&](const void* lhs, const void* rhs, void* result, int64_t count) -> Status {
      const int64_t dims[1] = {count};
      const std::span<const int64_t> shape(dims, 1);
      scratch.resize(static_cast<size_t>(count) * element_size);
      kernels::BufferView views_in[2] = {{const_cast<void*>(lhs), dtype, shape, count},
                                         {const_cast<void*>(rhs), dtype, shape, count}};
      kernels::BufferView view_out{scratch.data(), dtype, shape, count};
      kernels::KernelArgs args;
      args.inputs = views_in;
      args.outputs = std::span<const kernels::BufferView>(&view_out, 1);
      STABLERT_RETURN_IF_ERROR(step.fn(context, args));
      if (count > 0) std::memcpy(result, scratch.data(), scratch.size());
      return OkStatus();
    };
  } else {
    const auto* program = static_cast<const kernels::ScalarProgram*>(step.state.get());
    combine = [program, element_size](const void* lhs, const void* rhs, void* result, int64_t count) -> Status {
      std::vector<kernels::ScalarSlot> registers(static_cast<size_t>(program->num_registers()));
      const int32_t output = program->outputs()[0];
      for (int64_t i = 0; i < count; ++i) {
        for (auto& slot : registers) slot.bits = 0;
        program->Initialize(registers.data());
        std::memcpy(&registers[0], static_cast<const char*>(lhs) + i * element_size, element_size);
        std::memcpy(&registers[1], static_cast<const char*>(rhs) + i * element_size, element_size);
        program->Run(registers.data());
        std::memcpy(static_cast<char*>(result) + i * element_size, &registers[static_cast<size_t>(output)], element_size);
      }
      return OkStatus();
    };
  }
  if (StartsWith(name, "all_reduce"))
    return communicator->AllReduce(rank, groups, in.data, out.data, in.num_elements, static_cast<int64_t>(element_size),
                                   combine, origin);
  // reduce_scatter: bring each member's chunk (a block along the scattered dimension) to
  // the front, then reduce chunk-wise.
  const auto dim = static_cast<size_t>(ParamsOf<plan::ReduceScatterParams>(plan_step).dimension);
  const int64_t outer = Product(in.dims, 0, dim);
  const int64_t chunk_count = out.num_elements;
  if (outer == 1)
    return communicator->ReduceScatter(rank, groups, in.data, out.data, chunk_count,
                                       static_cast<int64_t>(element_size), combine, origin);
  std::vector<char> packed(static_cast<size_t>(in_bytes));
  GroupsToFront(static_cast<const char*>(in.data), packed.data(), outer, group_size, in_bytes / outer / group_size);
  return communicator->ReduceScatter(rank, groups, packed.data(), out.data, chunk_count,
                                     static_cast<int64_t>(element_size), combine, origin);
}

void LoadedPlan::FreeDeleter::operator()(void* p) const { FreeLargeBlock(p); }

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
  Arena arena(AllocateLargeBlock(bytes));  // huge pages from 4 MiB (base/large_blocks.h)
  if (arena == nullptr) return ResourceExhausted("cannot allocate a " + std::to_string(bytes) + "-byte arena");
  return arena;
}

void LoadedPlan::ReleaseArena(Arena arena) const {
  if (arena == nullptr) return;
  std::lock_guard<std::mutex> lock(arenas_mutex_);
  free_arenas_.push_back(std::move(arena));
}

Status LoadedPlan::Execute(std::span<const void* const> arguments, std::span<void* const> results,
                           const HostTransfers* host, const PartitionContext* partition) const {
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

  std::vector<kernels::BufferView> views;
  {
    std::lock_guard<std::mutex> lock(arenas_mutex_);
    if (!free_views_.empty()) {
      views = std::move(free_views_.back());
      free_views_.pop_back();
    }
  }
  if (views.empty()) views = operand_templates_;
  for (size_t i = 0; i < views.size(); ++i) views[i].data = address(operand_values_[i]);

  const kernels::KernelContext context;
  Status status;
  {
    ScopedFlushDenormals flush_denormals;
    status = Run(0, context, views, partition, host);
  }
  ReleaseArena(std::move(arena));
  if (!views.empty()) {
    std::lock_guard<std::mutex> lock(arenas_mutex_);
    free_views_.push_back(std::move(views));
  }
  STABLERT_RETURN_IF_ERROR(status);

  for (size_t i = 0; i < plan.results.size(); ++i) {
    const plan::Value& value = plan.values[plan.results[i]];
    if (value.storage == plan::Storage::kResult && value.index == static_cast<int64_t>(i)) continue;
    // A result returning a donated parameter may sit in that parameter's storage already.
    const void* source = address(plan.results[i]);
    if (value.byte_size > 0 && source != results[i])
      std::memcpy(results[i], source, static_cast<size_t>(value.byte_size));
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
                   std::span<void* const> results, const HostTransfers* host, const PartitionContext* partition) {
  STABLERT_ASSIGN_OR_RETURN(const LoadedPlan* loaded, Loaded(plan));
  return CatchingExceptions([&] { return loaded->Execute(arguments, results, host, partition); });
}

}  // namespace stablert::runtime
