// The plan executor: runs an ExecutionPlan's steps with the CPU kernels.
//
// Buffers: arguments and results are dense row-major host buffers of the plan's parameter
// and result types; the caller allocates the results. Results must not overlap each other,
// nor arguments, except where plan/donation.h allows a result into a parameter's storage. Kernels run with denormal floats flushed to zero (inputs and results),
// as XLA's CPU backend runs programs. Each execution works in its own arena (64-byte aligned; arenas of
// finished executions are recycled), so any number of executions of one plan may run
// concurrently on different threads.
//
// Manual regions (plan::StepKind::kManual) run their region once per partition, each on
// its own thread (partition 0 on the calling thread, in the execution's arena; the others
// in private arenas), sharing one collectives::Communicator with the timeout
// env::CollectiveTimeout() (STABLERT_COLLECTIVE_TIMEOUT_SECONDS). Collective steps call
// that communicator; a collective whose peers never arrive fails the execution with
// DeadlineExceeded naming the op (its origin) and the missing partitions, after the timeout.
//
// Kernel steps on single elements of real dtypes whose op has a scalar function
// (kernels::ScalarFunctionOf: arithmetic, math functions, compare, convert, select, bitwise;
// each gives the kernel's bits) run that function instead of the kernel. Runs of two or more
// such steps, and while loops whose condition and body are nothing else, run as register
// programs (runtime/register_program.h): one dispatch per instruction, the loop's values in
// registers across iterations. Not inside manual regions.
//
// Independent steps run two at a time: when a kernel step that runs as one call (not split,
// not a register program, not running threads of its own) has a later step of the same kind in
// its sequence (within kConcurrentWindow steps, with only kernel steps between) that depends on
// no step from it up to there and that no step in between depends on — no value one writes
// overlaps bytes the other reads or writes: read after write, write after read (a buffer
// reused after its value died) and write after write, in the arena by byte range, parameters
// and results as whole buffers, and any result write against any parameter (a donated
// parameter may hold a result) — and the cost model (plan::StepCost) puts both at
// kMinConcurrentMicros or more, the later step may run beside the earlier one on the pool
// (the earlier on the calling thread). Decided once in Create; control flow, collectives,
// host transfers and manual regions are never paired and end the window; inside manual
// regions and in loop bodies run with bound calls, steps run in order. Pairs run two at a
// time only while SetConcurrentSteps(true) (process-wide; off by default: on 2 shared cores
// it was not measured to pay, docs/decisions.md); otherwise they run in program order.
//
// Host transfer steps (plan::StepKind::kHostTransfer) go to the HostTransferHandler of the
// execution (runtime/host_transfer.h), for the device of the partition they run in; without
// one they fail naming the channel.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "kernels/scalar_program.h"
#include "plan/plan.h"
#include "runtime/host_transfer.h"
#include "runtime/register_program.h"

namespace stablert::collectives {
class Communicator;
}

namespace stablert::runtime {

// The partition an execution (or a manual region's copy) runs for: its rank among the
// partitions and the communicator its collectives use. Not owned.
struct PartitionContext {
  int rank;
  collectives::Communicator* communicator;
};

// A plan bound to kernel functions: every step's key resolved once, every operand's view
// prepared. Immutable after Create; Execute is thread-safe. Holds a reference to the plan,
// which must outlive it and stay unchanged.
class LoadedPlan {
 public:
  // Resolves the kernels of `plan` in `registry` (which must outlive the result) and checks
  // the plan's internal consistency (storage indices, sizes, value ids). Fails with
  // Unimplemented naming the step's origin if a kernel is missing, InvalidArgument if the
  // plan is malformed.
  static StatusOr<std::unique_ptr<LoadedPlan>> Create(const plan::ExecutionPlan& plan,
                                                      const kernels::KernelRegistry& registry);

  LoadedPlan(const LoadedPlan&) = delete;
  LoadedPlan& operator=(const LoadedPlan&) = delete;

  // Runs the plan. InvalidArgument if the buffer counts differ from the plan's; a kernel's
  // error is returned prefixed with the step's origin. Host transfers go to `host` (may be
  // null), which must outlive the call.
  // `partition`: set when the plan is one partition's program of a partitioned one
  // (plan::LowerToPlan with partitions); its collectives then go to that communicator.
  Status Execute(std::span<const void* const> arguments, std::span<void* const> results,
                 const HostTransfers* host = nullptr, const PartitionContext* partition = nullptr) const;

  const plan::ExecutionPlan& plan() const { return plan_; }
  // The steps of the plan's body that run two at a time: (earlier, later) positions in
  // plan().body.steps.
  std::vector<std::pair<uint32_t, uint32_t>> ConcurrentPairs() const;

  // Whether the pairs of every loaded plan run two at a time (default false). Thread-safe;
  // executions already running keep the setting they started with for their current step.
  static void SetConcurrentSteps(bool enabled);
  static bool ConcurrentSteps();

  // Steps looked ahead for a step to run beside another one.
  static constexpr uint32_t kConcurrentWindow = 8;
  // What each step of a pair must cost (by the cost model, one thread) to be paired.
  static constexpr double kMinConcurrentMicros = 30;
  // How many register programs the plan's steps run as (runs, loops, loop conditions).
  size_t num_register_programs() const { return programs_.size(); }

 private:
  struct ResolvedStep {
    plan::StepKind kind;
    kernels::KernelFn fn;     // kernel steps
    uint32_t first_operand;   // into operand_values_/operand_templates_
    uint32_t num_inputs;
    uint32_t num_outputs;
    uint32_t first_region;    // into sequences_ (control steps)
    uint32_t num_regions;
    const plan::Step* step;
    kernels::KernelState state;  // from the kernel's prepare function, if any (collective
                                 // reductions: a decoded body program)
    uint32_t first_private;      // kManual: into private_slots_
    uint32_t num_private;
    int parts = 1;               // kernel steps: threads splitting the work (splittable kernels)
    // Split steps: the calls the work is cut into (>= parts), handed to the threads one at a
    // time, so a thread that runs late (a busy core) takes fewer of them.
    int chunks = 1;
    // Kernel steps with a workspace: its slice per call; the workspace value is the operand
    // after the outputs.
    int64_t workspace_per_call = 0;
    // Kernel steps on one element whose scalar function computes bit for bit what the kernel
    // does (ScalarFastPath in executor.cc): run on a register file instead of the kernel.
    kernels::ScalarFn scalar = nullptr;
    int64_t scalar_attr = 0;  // ScalarInstruction::attr (compare: direction * 8 + type)
    uint8_t scalar_bytes[4] = {};  // element bytes of the inputs, then of the output
    // A register program (into programs_) this step starts: for a kernel step, the run of
    // `program_steps` scalar steps from it; for a while step, the whole loop. -1: none.
    int32_t program = -1;
    uint32_t program_steps = 0;
    // A while step whose condition is all scalar steps but whose body is not: the
    // condition's register program (into programs_), or -1.
    int32_t condition_program = -1;
    // A while step whose body is scalar steps and steps with a bind function: the whole
    // loop as one register program calling those steps bound (into programs_), or -1.
    int32_t loop_program = -1;
    // Kernel steps: the kernel's bind function (kernels::BindFn), or nullptr.
    kernels::BindFn bind = nullptr;
    // The kernel runs its own calls on the pool (its prepare function asked for one call).
    bool own_threads = false;
    // A later step of the same sequence (into steps_) that runs beside this one, or -1.
    int32_t partner = -1;
  };
  // The kernel steps of a while loop's body bound to this execution's operands once, before
  // the first iteration (kernels::BoundCall): slot[i] is the call of the body's step i, or
  // kNone. On the stack of the loop's run.
  struct LoopBinding {
    static constexpr uint32_t kMaxSteps = 64;  // longer bodies are not bound
    static constexpr size_t kMaxCalls = 4;
    static constexpr uint8_t kNone = 0xff;
    uint8_t slot[kMaxSteps];
    kernels::BoundCall calls[kMaxCalls];
    // When every step of the body is a register program or a bound call (flat): those, in
    // order, run by the loop without going through Run.
    struct Action {
      const RegisterProgram* program;  // or
      const kernels::BoundCall* call;
    };
    static constexpr size_t kMaxActions = 16;
    Action actions[kMaxActions];
    uint32_t num_actions = 0;
    bool flat = false;
  };
  // A kernel step's arguments: its operands' views, parameters, state and (first) workspace.
  static kernels::KernelArgs ArgsOf(const ResolvedStep& step, const std::vector<kernels::BufferView>& views);
  // For a while step whose condition is scalar steps and whose body is scalar steps and
  // callable ones: the loop program (loop_program), if the builder accepts it.
  void BuildLoopWithCalls(ResolvedStep& loop);
  // Binds the calls of `loop`'s body and runs its loop program; false (nothing run) if a
  // step does not bind these operands.
  bool RunLoopWithCalls(const ResolvedStep& loop, const std::vector<kernels::BufferView>& views) const;
  // Binds the steps of sequence `body` it can into `binding`; false if it bound none.
  bool BindLoopBody(uint32_t body, const std::vector<kernels::BufferView>& views, LoopBinding& binding) const;
  using Partition = PartitionContext;
  struct ResolvedSequence {
    uint32_t first_step;  // into steps_; a sequence's steps are contiguous
    uint32_t num_steps;
  };

  explicit LoadedPlan(const plan::ExecutionPlan& plan) : plan_(plan) {}
  // Fills sequences_[index] from `sequence`, appending its steps and then, recursively,
  // its steps' regions.
  Status Resolve(const plan::Sequence& sequence, uint32_t index, const kernels::KernelRegistry& registry, int depth);
  // Finds the register programs of the resolved sequence `index` (runs of scalar steps,
  // loops of them) and attaches them to their first steps.
  void BuildRegisterPrograms(uint32_t index);
  // Finds the steps of the resolved sequence `index` that run two at a time (partner).
  void PairIndependentSteps(uint32_t index);
  // Runs kernel step `step` as one call (or split over the pool when it is splittable).
  Status RunKernel(const ResolvedStep& step, const kernels::KernelContext& context,
                   const std::vector<kernels::BufferView>& views) const;
  // Adds the instruction of scalar step `step` to `builder`.
  bool AddScalarStep(RegisterProgramBuilder& builder, const ResolvedStep& step) const;
  // `partition` is null outside manual regions.
  // `binding`: the sequence's bound steps (a loop body), or null.
  Status Run(uint32_t sequence, const kernels::KernelContext& context, const std::vector<kernels::BufferView>& views,
             const Partition* partition, const HostTransfers* host, const LoopBinding* binding = nullptr) const;
  Status RunManual(const ResolvedStep& step, const kernels::KernelContext& context,
                   const std::vector<kernels::BufferView>& views, const HostTransfers* host) const;
  Status RunHostTransfer(const ResolvedStep& step, const std::vector<kernels::BufferView>& views,
                         const Partition* partition, const HostTransfers* host) const;
  Status RunCollective(const ResolvedStep& step, const kernels::KernelContext& context,
                       const std::vector<kernels::BufferView>& views, const Partition* partition) const;

  struct FreeDeleter {
    void operator()(void* p) const;
  };
  using Arena = std::unique_ptr<void, FreeDeleter>;
  // An arena for one execution: a recycled one if any, else a new one.
  StatusOr<Arena> AcquireArena() const;
  void ReleaseArena(Arena arena) const;

  const plan::ExecutionPlan& plan_;
  // Arenas of finished executions, reused by later ones (at most one per concurrent
  // execution is ever allocated).
  mutable std::mutex arenas_mutex_;
  mutable std::vector<Arena> free_arenas_;
  // Operand views of finished executions (operand_templates_ with data pointers), reused
  // by later ones under arenas_mutex_.
  mutable std::vector<std::vector<kernels::BufferView>> free_views_;
  std::vector<ResolvedSequence> sequences_;  // [0] is the plan body
  std::vector<ResolvedStep> steps_;
  std::vector<plan::ValueId> operand_values_;           // per step: inputs then outputs
  std::vector<kernels::BufferView> operand_templates_;  // the same, data pointers unset
  // Per manual step: the operand slots (into operand_values_) of its region that refer to
  // arena values private to each partition.
  std::vector<uint32_t> private_slots_;
  std::vector<RegisterProgram> programs_;
  int manual_depth_ = 0;  // > 0 while resolving a manual region (no register programs there)
};

// Binds `plan` to the CPU kernels (LoadedPlan::Create) and caches the result in the plan
// (ExecutionPlan::runtime_cache), unless already done. Call it at compile time, once the
// plan sits where it will stay (moving or copying a plan drops the cache), so missing
// kernels and bad kernel parameters are reported by compilation, not by the first run.
// Thread-safe.
Status PreparePlan(const plan::ExecutionPlan& plan);

// Runs `plan` with the CPU kernels, preparing it first if PreparePlan was not called
// (a plan that cannot be prepared fails every call with that error). Thread-safe.
Status ExecutePlan(const plan::ExecutionPlan& plan, std::span<const void* const> arguments,
                   std::span<void* const> results, const HostTransfers* host = nullptr,
                   const PartitionContext* partition = nullptr);

}  // namespace stablert::runtime
