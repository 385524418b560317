// The CPU kernel ABI: what every kernel receives and returns.
//
// A kernel is a plain function over raw, dense, row-major buffer views plus its family's
// typed parameter struct (kernels/params.h; each family's struct is in its
// `<family>_params.h`). Kernels know nothing about the IR, the plan or the runtime.
//
// Contract between caller and kernel:
//   - outputs are dense and row-major; inputs too, except for kernels registered as taking
//     strided views (KernelRegistry::Entry::strided_inputs), whose inputs may carry element
//     strides (a broadcast or transpose of another array, read in place); `dims` describe
//     the logical shape;
//   - shapes, dtypes and parameters were validated when the plan was built, so kernels
//     do not re-check them (a mismatch is a caller bug);
//   - outputs never alias inputs unless the kernel's registration allows it (InPlace below,
//     KernelRegistry::Entry::in_place), and then only as that names;
//   - a kernel is reentrant: it may run concurrently with itself on other buffers.
// A kernel returns a non-OK Status only for conditions that cannot be known before run
// time (none in the current set).
//
// A kernel may come with a prepare function, run once when a plan is loaded, that turns
// the call's parameters and shapes into immutable state (a decoded body program, a library
// primitive); every call of that step then receives the state. The prepare function may
// also declare that the step runs as a single call even if its kernel is splittable: the
// kernel then spreads the step's work over the shared pool itself (the oneDNN kernels cut a
// product or convolution into tiles, each a primitive of its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "kernels/params.h"

namespace stablert::kernels {

// One array: dense row-major, or a strided view. `data` is non-null unless the array has no
// elements. Views do not own memory.
struct BufferView {
  void* data = nullptr;
  DType dtype = DType::kInvalid;
  std::span<const int64_t> dims;
  int64_t num_elements = 0;  // product of dims (1 for a scalar)
  // Element strides, one per dim (>= 0; 0 repeats an element along that dim); empty: dense
  // row-major. Only inputs of kernels that take strided views carry them.
  std::span<const int64_t> strides;

  template <typename T>
  T* as() const { return static_cast<T*>(data); }
  int rank() const { return static_cast<int>(dims.size()); }
  bool dense() const { return strides.empty(); }
};

// Which inputs of a kernel may share their storage with its output 0 (the output's data
// pointer then equals the input's, same dtype and element count, both dense):
enum class InPlace : uint8_t {
  kNone,
  // Elementwise kernels: any dense input of the output's dtype and element count. Output
  // element i is written only after every input's element i is read (and no other element
  // of an input is read after it).
  kElementwise,
  // Update kernels (dynamic_update_slice, scatter): input 0, the array updated. Aliased, the
  // kernel skips copying it to the output and writes only what the update changes. Other
  // inputs never share storage with the output.
  kFirstInput,
  // Accumulating products ("dot.<T>" with an addend, input 2): out = addend + lhs . rhs.
  // Aliased, the kernel accumulates the product into the output where it lies. lhs and
  // rhs never share storage with the output.
  kThirdInput,
};

// Execution environment of one kernel call. A kernel registered as splittable is called
// `thread_count` times at once (thread_index 0 .. thread_count-1) with the same arguments,
// each call doing its share (ShareOf), unless its prepare function asked for a single call
// for that step (PreparedStep::single_call); other kernels are called once with a count of 1.
struct KernelContext {
  int thread_index = 0;
  int thread_count = 1;
};

// The share [begin, end) of `n` items that call `context` does: contiguous, balanced.
inline std::pair<int64_t, int64_t> ShareOf(const KernelContext& context, int64_t n) {
  const int64_t count = context.thread_count, index = context.thread_index;
  if (count == 1) return {0, n};  // the common single call, without two divisions
  return {n * index / count, n * (index + 1) / count};
}

struct KernelArgs {
  std::span<const BufferView> inputs;
  std::span<const BufferView> outputs;
  // The step's parameter struct, of the type the kernel was registered with (checked when
  // the plan is loaded); nullptr for kernels without one. Read it with Params<P>().
  const void* params = nullptr;
  const void* state = nullptr;  // what the kernel's prepare function returned, if any

  // Scratch memory for this call, from the execution's arena: the bytes the kernel's
  // workspace function asked for (WorkspaceFn), 64-byte aligned, contents undefined on
  // entry. Each call of a split step has its own. Empty for kernels without one.
  std::span<std::byte> workspace;

  // The parameter struct, for a kernel registered with P (KernelRegistry::Register<P>).
  template <ParamStruct P>
  const P& Params() const { return *static_cast<const P*>(params); }
};

using KernelFn = Status (*)(const KernelContext& context, const KernelArgs& args);

// The tile function of an elementwise kernel: output[i] = op(inputs[0][i], inputs[1][i], ...)
// for i < n. Every input and the output are dense arrays of n elements of the kernel's
// element types (no views, no rank-0 scalars); `params` is the step's parameter struct, or
// nullptr for kernels without one. The output may be one of the inputs. Cannot fail.
// Registered with KernelRegistry::RegisterElementwiseTile; fused steps (fused.cc) call it
// directly on their L1 tiles, and the kernel itself is this function over its share.
using TileFn = void (*)(const void* const* inputs, void* output, int64_t n, const void* params);

// A kernel call bound to fixed arguments, for a step that runs many times on the same
// buffers (a loop body: its operands' addresses do not change during an execution). A
// kernel's bind function (KernelRegistry::DeclareBind) may turn one call's arguments into
// `run` and the data it needs, kept in `storage`; run(storage) then does exactly what the
// kernel's call with a KernelContext of one call and those arguments does, and cannot fail.
// Binding allocates nothing and reads no element of the buffers.
struct BoundCall {
  static constexpr size_t kStorage = 480;
  void (*run)(const void* storage) = nullptr;
  alignas(16) std::byte storage[kStorage];
};
// Binds `args` (with the step's prepared state) into `call`; false if this kernel cannot
// bind these arguments (the step then runs as usual).
using BindFn = bool (*)(const KernelArgs& args, BoundCall& call);

// Immutable per-step state shared by all calls (and threads) running that step.
using KernelState = std::shared_ptr<const void>;

// What a prepare function returns for one step.
struct PreparedStep {
  PreparedStep() = default;
  PreparedStep(KernelState s, bool once = false)  // NOLINT: a state alone keeps the registration's threading
      : state(std::move(s)), single_call(once) {}
  KernelState state;         // passed to every call as KernelArgs::state (may be null)
  bool single_call = false;  // call the kernel once (thread_count 1) even if it is splittable:
                             // the step's work runs on threads of its own
};

// The scratch bytes one call of a kernel needs for a step (KernelArgs::workspace), from the
// step's views (data pointers null) and parameters; 0 for none. Called when the plan is
// built, so the plan's buffer assignment places the workspace in the arena (reusing memory
// like any short-lived value) and no call allocates.
using WorkspaceFn = int64_t (*)(const KernelArgs& args);

// Called once per plan step with the step's params and views whose data pointers are
// null, except for inputs that are plan constants, whose data it sees (so it can prepare
// state from them, e.g. prepacked weights; the state must not keep pointers into them
// beyond the plan's life, which outlives every step's state). Fails with InvalidArgument/Unimplemented on parameters the kernel cannot run.
using PrepareFn = StatusOr<PreparedStep> (*)(const KernelArgs& args);

}  // namespace stablert::kernels
