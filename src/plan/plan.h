// ExecutionPlan: what a compiled program is at run time. Plain data.
//
// A plan is a flat sequence of steps over a table of values. Each step names its kernel
// by a stable key ("add.f32", see kernels/registry.h for the families and their
// parameters), lists the values it reads and writes, and carries its parameters already
// decoded from the IR: its family's parameter struct (kernels/params.h; for the steps the
// executor runs itself, plan/collective_params.h and plan/host_transfer_params.h), or none.
// Every value has a storage decided at compile time: a byte
// offset in the one arena an execution allocates, a parameter, a constant held by the
// plan, or a result buffer the caller provides. Several values may share storage (a
// reshape is the same bytes under other dims).
//
// Control flow steps hold nested sequences (`regions`) over the same value table and
// arena; the executor interprets them (see StepKind). Values a region reads from outside
// stay live until the control step ends. Loop-carried values live in fixed buffers (the
// while step's outputs; a carried value the body never changes is no output and is read
// where it lies); the body updates a buffer either in place, its step computing the new
// value writing the buffer directly, or by a copy at its end (plan/in_place.h).
//
// A kernel step's output may share storage with one of its inputs (an in-place update)
// only where the kernel's registration allows it (kernels::InPlace).
//
// Ownership and threading: a plan owns all its data. It is immutable once built and may
// be executed by many threads at once. The only mutable part is RuntimeCache, which is
// internally synchronized.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "kernels/params.h"

namespace stablert::plan {

// Bumped whenever the meaning of a field changes (for serialized plans).
inline constexpr uint32_t kPlanFormatVersion = 1;

struct TensorType {
  DType dtype = DType::kInvalid;
  Dims dims;
  bool operator==(const TensorType&) const = default;
};
// "f32[2,3]".
std::string TensorTypeToString(const TensorType& type);
// Bytes of a dense row-major array of this type.
int64_t ByteSize(const TensorType& type);
// Bytes spanned by a view of `type` with element `strides` (ByteSize when `strides` is
// empty): up to and including its last element; 0 if it has no elements.
int64_t ViewByteSize(const TensorType& type, const std::vector<int64_t>& strides);

enum class Storage : uint8_t {
  kArena,      // `index` is a byte offset into the execution's arena (64-byte aligned)
  kParameter,  // `index` is the argument number
  kConstant,   // `index` indexes ExecutionPlan::constants
  kResult,     // `index` is the result number; written by a step straight into the
               // caller's result buffer
};

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;

struct Value {
  TensorType type;
  Storage storage = Storage::kArena;
  int64_t index = 0;
  int64_t byte_size = 0;  // ViewByteSize(type, strides)
  // Element strides (>= 0, one per dim) when the value is a strided view of its storage (a
  // broadcast or transpose read in place, plan/fold_views.cc); empty: dense row-major. Only
  // kernel steps whose kernel takes strided views read such values; nothing writes them.
  std::vector<int64_t> strides;
};

enum class StepKind : uint8_t {
  kKernel,  // run `kernel` on inputs -> outputs
  kWhile,   // loop { run regions[0]; if (!inputs[0]) break; run regions[1]; }
            // inputs[0]: i1 scalar computed by regions[0]; outputs: the loop-carried values
  kIf,      // run regions[inputs[0] ? 0 : 1]; inputs[0]: i1 scalar; outputs: the results,
            // written by both regions
  kCase,    // run regions[i] for i = inputs[0] (i32 scalar), the last region if i is out of
            // range; outputs: the results, written by every region
  kManual,  // a manual region (sdy.manual_computation): regions[0] runs once per partition,
            // all partitions at once, each with private storage for the values the region
            // computes; inputs: the global operands, outputs: the global results (both
            // shared by all partitions, live for the whole step); params: ManualParams
            // (plan/collective_params.h).
            // The region moves data in and out with "manual_operand"/"manual_result"
            // collective steps.
  kCollective,  // like a kernel step, but run by the executor with the partition's rank and
                // the execution's communicator; `kernel` names the operation, and its
                // parameter struct is in plan/collective_params.h:
                //   "manual_operand"  in: global  out: local  params: ManualOperandParams: the
                //                     partition's block
                //   "manual_result"   in: local  out: global  params: ManualResultParams:
                //                     written by the first partition holding each block
                //   "partition_id"    out: ui32 scalar, the partition (0 outside manual
                //                     regions); params: none
                //   "all_reduce.<binary kernel key>" / "all_reduce_program"  AllReduceParams
                //   "reduce_scatter.<binary kernel key>" / "reduce_scatter_program"
                //                     ReduceScatterParams
                //   "all_gather" AllGatherParams, "all_to_all" AllToAllParams,
                //   "collective_broadcast" CollectiveBroadcastParams, "gather_blocks"
                //                     GatherBlocksParams: in: x  out: y
                //   "collective_permute" CollectivePermuteParams
  kHostTransfer,  // a host transfer (stablehlo.send/recv with is_host_transfer), run by the
                  // executor through the execution's runtime::HostTransferHandler in program
                  // order, for the device of the partition it runs in; `kernel`:
                  //   "host_send"  in: the array sent  out: none
                  //   "host_recv"  in: none  out: the array received
                  // params: HostTransferParams (plan/host_transfer_params.h)
};

struct Step;

struct Sequence {
  std::vector<Step> steps;
};

struct Step {
  StepKind kind = StepKind::kKernel;
  std::string kernel;                        // stable kernel key
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  kernels::KernelParams params;              // the kernel family's parameter struct (kernels/params.h)
  std::vector<Sequence> regions;             // nested sequences (control flow)
  // A kernel step's scratch memory (KernelArgs::workspace): an arena value of u8 nobody
  // else reads or writes, holding one slice per call of the step; kNoValue if none.
  ValueId workspace = kNoValue;
  std::string origin;                        // "stablehlo.add (loc)": for errors and dumps
};

// Opaque state the runtime derives from a plan on first execution (resolved kernel
// pointers). plan/ never looks inside. Thread-safe. Copying or moving a plan leaves the
// copy's cache empty; assigning to a plan while it executes is a caller bug.
class RuntimeCache {
 public:
  RuntimeCache() = default;
  RuntimeCache(const RuntimeCache&) {}
  RuntimeCache& operator=(const RuntimeCache&);

  // The stored state, or nullptr.
  const void* Get() const { return value_.load(std::memory_order_acquire); }
  // Stores `state` unless some state is stored already; returns the stored state, which
  // lives as long as the plan.
  const void* GetOrSet(std::shared_ptr<const void> state) const;

 private:
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const void> owner_;
  mutable std::atomic<const void*> value_{nullptr};
};

struct ExecutionPlan {
  uint32_t version = kPlanFormatVersion;
  std::vector<TensorType> parameter_types;
  std::vector<TensorType> result_types;
  std::vector<Value> values;
  std::vector<std::vector<uint8_t>> constants;  // dense row-major bytes
  Sequence body;
  std::vector<ValueId> results;  // value returned as result i
  int64_t arena_size = 0;        // bytes

  RuntimeCache runtime_cache;
};

// A readable dump of the plan, stable for golden tests.
std::string PrintPlan(const ExecutionPlan& plan);

}  // namespace stablert::plan
