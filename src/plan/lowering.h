// The state of one lowering and the helpers per-op lowering functions share.
// Internal to plan/; one Lowering per LowerToPlan call, single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "plan/lower.h"
#include "plan/plan.h"

namespace stablert::plan {

// The plan type of a !stablehlo.token value: no bytes (tokens only order side effects).
inline TensorType TokenType() { return TensorType{DType::kToken, {}}; }
// A token parameter or result of the entry function is passed as a pred[0] array.
inline const TensorType kEntryTokenType{DType::kPred, {0}};

// Element types the CPU kernels support (bool, 8..64-bit integers, f16, bf16, f32, f64,
// complex<f32>, complex<f64>; sub-byte integers, which are computed in a carrier type).
bool IsSupportedDType(DType dtype);
// Kernel keys: "<op>.<dtype>" and "convert.<from>.<to>".
std::string KeyFor(std::string_view op, DType dtype);
std::string ConvertKeyFor(DType from, DType to);
// The type sub-byte integers are computed in (i8 or ui8); `dtype` itself for others.
DType CarrierOf(DType dtype);
// Whether the elementwise unary/binary op `code` has a kernel for `dtype`.
bool ElementwiseAccepts(ir::OpCode code, DType dtype);

class Lowering {
 public:
  explicit Lowering(const ir::Module& module) : module_(module), value_map_(module.value_types.size(), kNone) {}

  StatusOr<ExecutionPlan> Run();
  // The byte sizes of the entry's parameters JAX marks as donated (tf.aliasing_output or
  // jax.buffer_donor).
  std::vector<int64_t> DonorByteSizes() const;

  //===--- Helpers for per-op lowering ---===//

  const ir::Module& module() const { return module_; }
  // "stablehlo.add (loc)".
  std::string Origin(const ir::Operation& op) const;
  // A Status of `code` whose message is "<Origin(op)>: <message>".
  Status OpError(StatusCode code, const ir::Operation& op, std::string_view message) const;
  Status Unsupported(const ir::Operation& op, std::string_view what) const {
    return OpError(StatusCode::kUnimplemented, op, what);
  }
  Status Invalid(const ir::Operation& op, std::string_view what) const {
    return OpError(StatusCode::kInvalidArgument, op, what);
  }

  // The type of an IR value as lowering sees it: its own, or the carrier type it is
  // computed in (see LowerInCarrier).
  const ir::Type& IrType(ir::ValueId value) const {
    auto it = type_override_.find(value);
    return it != type_override_.end() ? it->second : module_.value_types[value];
  }

  // The plan value bound to operand `i` of `op`.
  StatusOr<ValueId> Operand(const ir::Operation& op, size_t i) const;
  // The type of result `i` of `op`, which must be a tensor of a supported dtype.
  // OK unless a LayoutConstraint custom call names something other than a dimension permutation.
  Status CheckRowMajorResultLayout(const ir::Operation& op) const;
  StatusOr<TensorType> ResultType(const ir::Operation& op, size_t i) const;
  // A copy: later NewValue calls may move the value table.
  TensorType TypeOf(ValueId value) const { return plan_.values[value].type; }

  // A named integer-list attribute; InvalidArgument if missing or not an integer list.
  StatusOr<std::vector<int64_t>> IntListAttr(const ir::Operation& op, std::string_view name) const;
  StatusOr<int64_t> IntAttr(const ir::Operation& op, std::string_view name) const;

  // New values: computed by a step (arena), sharing another value's bytes, or constant.
  ValueId NewValue(TensorType type);
  ValueId NewAlias(ValueId of, TensorType type);
  ValueId NewConstant(TensorType type, std::vector<uint8_t> bytes);

  // The value whose storage `value` shares (itself unless it is an alias).
  ValueId Root(ValueId value) const { return alias_root_[value]; }

  void Bind(ir::ValueId ir_value, ValueId value) { value_map_[ir_value] = value; }
  // The bytes of the constant `ir_value` is bound to, or nullptr if it is not bound to a
  // constant.
  const std::vector<uint8_t>* BoundConstant(ir::ValueId ir_value) const;
  // Appends a kernel step to the sequence being lowered, with its family's parameter struct
  // (kernels/params.h; none for kernels that take none).
  void Emit(const ir::Operation& op, std::string kernel, std::vector<ValueId> inputs,
            std::vector<ValueId> outputs, kernels::KernelParams params = {});
  // Appends a "copy.<dtype>" step from `from` to `to` (same type).
  void EmitCopy(const ir::Operation& op, ValueId from, ValueId to);
  // Appends a control-flow step (its origin is set from `op`).
  void EmitControl(const ir::Operation& op, Step step);

  // Lowers a block's ops; `returned` receives the values its terminator returns.
  Status LowerBlock(const ir::Block& block, std::vector<ValueId>* returned);
  // Lowers the single block of `region` into `into`, its arguments bound to `arguments`.
  Status LowerRegion(const ir::Operation& op, const ir::Region& region, const std::vector<ValueId>& arguments,
                     Sequence* into, std::vector<ValueId>* returned);

  // The sequence Emit appends to (to lower a region inline, pass it to LowerRegion).
  Sequence* current_sequence() { return current_; }

  // Inside a manual region: the number of partitions it runs on (0 outside). Collectives
  // lower differently inside and outside manual regions.
  int64_t manual_partitions = 0;
  // Where Run() records microseconds per phase (lowering, each plan pass), if set.
  LowerPhaseTimes* phase_times = nullptr;

 private:
  static constexpr ValueId kNone = UINT32_MAX;

  Status LowerOp(const ir::Operation& op);
  // lower_narrow.cc: ops computing on sub-byte types run in a wider carrier type: operands
  // converted up, the op lowered with its results (and region values) typed in the carrier,
  // results converted (wrapped) back. Returns false in *handled if `op` needs none.
  Status LowerInCarrier(const ir::Operation& op, bool* handled);
  Status LowerNarrowBitOp(const ir::Operation& op, DType narrow);

  const ir::Module& module_;
  ExecutionPlan plan_;
  Sequence* current_ = &plan_.body;  // where Emit appends
  std::vector<ValueId> value_map_;     // ir::ValueId -> plan value
  std::vector<ValueId> alias_root_;    // plan value -> value owning its storage
  std::unordered_map<ir::ValueId, ir::Type> type_override_;  // IR value -> carrier type
  const ir::Operation* carrier_op_ = nullptr;                // the op LowerInCarrier is lowering
};

//===--- Per-op lowering functions (one family per file) ---===//

// lower_elementwise.cc: unary and binary ops, compare, select, clamp, convert.
Status LowerElementwise(Lowering& lowering, const ir::Operation& op);
// chlo.erf, chlo.erf_inv, chlo.lgamma and chlo.digamma composites on f32/f16/bf16 as one
// elementwise kernel; *lowered is false (nothing emitted) for every other composite.
Status LowerMathComposite(Lowering& lowering, const ir::Operation& op, bool* lowered);
// lower_shape.cc: constant, broadcast(_in_dim), reshape, transpose, slice, concatenate, iota.
Status LowerShapeOp(Lowering& lowering, const ir::Operation& op);
// lower_slicing.cc: dynamic_slice, dynamic_update_slice, pad, reverse, bitcast_convert.
Status LowerSlicingOp(Lowering& lowering, const ir::Operation& op);
// lower_reduce.cc: reduce and sort.
// The reduction a body computes: "add", "mul", "max", "min", "and", "or", or "" if the
// body is not `return op(arg0, arg1)` (either argument order) over scalars of `dtype`.
std::string MatchReductionBody(const Lowering& lowering, const ir::Region& region, DType dtype);
Status LowerReduce(Lowering& lowering, const ir::Operation& op);
Status LowerSort(Lowering& lowering, const ir::Operation& op);
// lower_gather_scatter.cc: gather and scatter.
Status LowerGatherScatter(Lowering& lowering, const ir::Operation& op);
// lower_convolution.cc: convolution.
Status LowerConvolution(Lowering& lowering, const ir::Operation& op);
// lower_window.cc: reduce_window and select_and_scatter.
Status LowerReduceWindow(Lowering& lowering, const ir::Operation& op);
Status LowerSelectAndScatter(Lowering& lowering, const ir::Operation& op);
// lower_dot.cc: dot_general and dot.
Status LowerDot(Lowering& lowering, const ir::Operation& op);
// lower_rng.cc: rng_bit_generator and rng.
Status LowerRng(Lowering& lowering, const ir::Operation& op);
// lower_fft.cc: fft.
Status LowerFft(Lowering& lowering, const ir::Operation& op);
// lower_control.cc: while, if, case.
Status LowerControlFlow(Lowering& lowering, const ir::Operation& op);
// lower_manual.cc: sdy.manual_computation, the collectives, partition_id and replica_id.
Status LowerManualComputation(Lowering& lowering, const ir::Operation& op);
Status LowerCollective(Lowering& lowering, const ir::Operation& op);
// lower_dot.cc: whether every value of `from` is exactly representable in `to` (operands
// of a narrower type than a dot's or convolution's result are widened first, as XLA does).
bool WidensExactly(DType from, DType to);
// `operand` converted to `dtype` if it widens exactly (itself if already of it); Unimplemented
// naming `op` otherwise.
StatusOr<ValueId> WidenedTo(Lowering& lowering, const ir::Operation& op, ValueId operand, DType dtype);
// lower_linalg.cc: cholesky, triangular_solve, and the LAPACK custom calls (lapack_*_ffi, Qr,
// ProductOfElementaryHouseholderReflectors).
Status LowerLinalg(Lowering& lowering, const ir::Operation& op);
bool IsLinalgCustomCall(std::string_view target);
Status LowerLinalgCustomCall(Lowering& lowering, const ir::Operation& op, std::string_view target);
// lower_host_transfer.cc: send and recv with is_host_transfer (StepKind::kHostTransfer),
// create_token, after_all.
Status LowerHostTransfer(Lowering& lowering, const ir::Operation& op);
// custom_call @stablert.shard_layout: every partition's block of the operand, as a constant.
Status LowerShardLayout(Lowering& lowering, const ir::Operation& op);
// lower_approx_top_k.cc: custom_call @ApproxTopK (lax.approx_max_k/approx_min_k), exact.
Status LowerApproxTopK(Lowering& lowering, const ir::Operation& op);

//===--- Body programs (body_program.cc) ---===//

// Compiles the single block of `region` (of `op`) into a body program in the encoding of
// kernels/scalar_program.h. Its arguments are the block's arguments in order; every value
// must be a scalar of a supported type. Unimplemented for ops a program cannot express.
StatusOr<std::vector<int64_t>> CompileBodyProgram(const Lowering& lowering, const ir::Operation& op,
                                                  const ir::Region& region);
// From a comparator program (lhs, rhs, lhs_index, rhs_index) -> i1, the reduce body
// (acc, acc_index, x, x_index) -> select(comparator(acc, x, acc_index, x_index), acc|x, ...):
// the accumulator XLA builds for a top-1 by comparator. nullopt for another program shape.
std::optional<std::vector<int64_t>> AccumulatorFromComparator(const std::vector<int64_t>& comparator);
// The body-program opcode of an elementwise-like op, or 0 (exposed for tests).
int64_t BodyProgramOpcode(ir::OpCode code);

//===--- Plan passes after lowering, before buffer assignment ---===//

// fold_gather_scatter.cc: folds the index arithmetic JAX emits around gathers and scatters
// (unit-dim broadcasts of the indices, value-keeping converts, negative-index normalization,
// the fill-mode mask and select) into the gather or scatter step's index transform
// (kernels/gather_scatter_index.h) where nothing else reads the intermediate values. May add
// alias values (extending `alias_root`); leaves the bypassed steps unread.
void FoldGatherScatterIndices(ExecutionPlan& plan, std::vector<ValueId>& alias_root);
// fold_dot_transpose.cc: a transpose swapping the matrix dims of a product only it reads is
// computed by the product itself, its operands swapped (extending `alias_root`; leaves the
// product's old output unwritten). Conditions in the file.
void FoldTransposesIntoDots(ExecutionPlan& plan, std::vector<ValueId>& alias_root);
// fold_dot_add.cc: an f32 add of a product only it reads becomes an accumulating product
// (dot.f32 with the addend as third input) at the add's position (extending `alias_root`).
// Conditions in the file.
void FoldAddsIntoDots(ExecutionPlan& plan, std::vector<ValueId>& alias_root);
// dead_steps.cc: removes kernel steps none of whose outputs is read (by a step, a control
// step or a plan result, directly or through an alias), repeatedly. Kernel steps are pure.
// Then drops computed values nothing refers to and renumbers the rest (`alias_root` too).
void DropDeadSteps(ExecutionPlan& plan, std::vector<ValueId>& alias_root);
// fold_views.cc: removes broadcast and transpose steps whose readers all take strided
// views, making their outputs strided views of their inputs (Value::strides, extending
// `alias_root`). Conditions in the file.
void FoldViewsIntoReaders(ExecutionPlan& plan, std::vector<ValueId>& alias_root);

// workspaces.cc: gives every kernel step whose kernel declares a workspace
// (kernels::WorkspaceFn) an arena value of that size per call (times the calls a split
// step makes: base/thread_pool.h's CoreBudget()) in Step::workspace.
void DeclareWorkspaces(ExecutionPlan& plan, std::vector<ValueId>& alias_root);

//===--- Buffer assignment (buffer_assignment.cc) ---===//

// Gives every value its storage: parameters and constants keep theirs; a step's output
// takes the storage of an input dying at that step where the kernel allows it (in place,
// plan/in_place.h; copies so made redundant are removed); each result's storage root becomes
// that result buffer when a step computes it; the remaining computed values get arena
// offsets, reusing memory of values no longer live.
// `alias_root[v]` is the value whose storage v shares (v itself for roots).
// `donor_byte_sizes`: the byte sizes of the parameters the program may donate; a result of
// one of these sizes keeps storage of its own, written only by its own steps, so a donated
// parameter's memory can back it (plan/donation.h).
void AssignBuffers(ExecutionPlan& plan, const std::vector<ValueId>& alias_root,
                   const std::vector<int64_t>& donor_byte_sizes = {});

}  // namespace stablert::plan
