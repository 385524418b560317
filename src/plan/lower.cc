#include "plan/lower.h"

#include <algorithm>
#include <chrono>

#include "plan/fold_dot_epilogue.h"
#include "plan/fuse_elementwise.h"
#include "plan/in_place.h"
#include "plan/lower_ffi.h"
#include "plan/lowering.h"

namespace stablert::plan {

bool IsSupportedDType(DType dtype) {
  switch (dtype) {
    case DType::kPred: case DType::kS8: case DType::kS16: case DType::kS32: case DType::kS64:
    case DType::kU8: case DType::kU16: case DType::kU32: case DType::kU64:
    case DType::kF16: case DType::kBF16: case DType::kF32: case DType::kF64:
    case DType::kC64: case DType::kC128:
    case DType::kS4: case DType::kU4: case DType::kS2: case DType::kU2:
    case DType::kF8E5M2: case DType::kF8E4M3FN: case DType::kF8E4M3B11FNUZ: case DType::kF8E5M2FNUZ:
    case DType::kF8E4M3FNUZ: case DType::kF8E4M3: case DType::kF8E3M4: case DType::kF8E8M0FNU:
    case DType::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}

std::string KeyFor(std::string_view op, DType dtype) { return std::string(op) + "." + std::string(DTypeName(dtype)); }

std::string ConvertKeyFor(DType from, DType to) {
  return "convert." + std::string(DTypeName(from)) + "." + std::string(DTypeName(to));
}

DType CarrierOf(DType dtype) {
  switch (dtype) {
    case DType::kS4: case DType::kS2: return DType::kS8;
    case DType::kU4: case DType::kU2: return DType::kU8;
    // Narrow floats compute in f16, as XLA's CPU backend normalizes them; f8E8M0FNU's
    // exponent range needs f32.
    case DType::kF8E5M2: case DType::kF8E4M3FN: case DType::kF8E4M3B11FNUZ: case DType::kF8E5M2FNUZ:
    case DType::kF8E4M3FNUZ: case DType::kF8E4M3: case DType::kF8E3M4: case DType::kF4E2M1FN:
      return DType::kF16;
    case DType::kF8E8M0FNU: return DType::kF32;
    default: return dtype;
  }
}

std::string Lowering::Origin(const ir::Operation& op) const {
  std::string location = op.location < module_.locations.size() ? module_.locations[op.location].ToString()
                                                                  : "unknown location";
  return std::string(ir::OpName(op.code)) + " (" + location + ")";
}

Status Lowering::OpError(StatusCode code, const ir::Operation& op, std::string_view message) const {
  return Status(code, Origin(op) + ": " + std::string(message));
}

StatusOr<ValueId> Lowering::Operand(const ir::Operation& op, size_t i) const {
  if (i >= op.operands.size()) return Invalid(op, "expected at least " + std::to_string(i + 1) + " operands");
  ir::ValueId id = op.operands[i];
  if (id >= value_map_.size() || value_map_[id] == kNone)
    return Invalid(op, "operand " + std::to_string(i) + " is not defined before its use");
  return value_map_[id];
}

StatusOr<TensorType> Lowering::ResultType(const ir::Operation& op, size_t i) const {
  if (i >= op.results.size()) return Invalid(op, "expected at least " + std::to_string(i + 1) + " results");
  ir::ValueId id = op.results[i];
  if (id >= module_.value_types.size()) return Invalid(op, "result " + std::to_string(i) + " has no type");
  const ir::Type& type = IrType(id);
  if (type.kind == ir::Type::Kind::kToken) return TokenType();
  if (!type.is_tensor()) return Unsupported(op, "result type " + ir::TypeToString(type) + " is not supported yet");
  if (!IsSupportedDType(type.dtype))
    return Unsupported(op, "element type " + std::string(DTypeName(type.dtype)) + " is not supported yet");
  auto count = CheckedElementCount(type.dims);
  if (!count.ok() || *count > (int64_t{1} << 56))
    return Invalid(op, "result type " + ir::TypeToString(type) + " has a negative or too large shape");
  return TensorType{type.dtype, type.dims};
}

StatusOr<std::vector<int64_t>> Lowering::IntListAttr(const ir::Operation& op, std::string_view name) const {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return Invalid(op, "missing attribute '" + std::string(name) + "'");
  auto list = attr->AsIntArray();
  if (!list) return Invalid(op, "attribute '" + std::string(name) + "' is not an integer list");
  return *list;
}

StatusOr<int64_t> Lowering::IntAttr(const ir::Operation& op, std::string_view name) const {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return Invalid(op, "missing attribute '" + std::string(name) + "'");
  auto value = attr->AsInt();
  if (!value) return Invalid(op, "attribute '" + std::string(name) + "' is not an integer");
  return *value;
}

const std::vector<uint8_t>* Lowering::BoundConstant(ir::ValueId ir_value) const {
  if (ir_value >= value_map_.size() || value_map_[ir_value] == kNone) return nullptr;
  const Value& root = plan_.values[alias_root_[value_map_[ir_value]]];
  if (root.storage != Storage::kConstant) return nullptr;
  return &plan_.constants[static_cast<size_t>(root.index)];
}

ValueId Lowering::NewValue(TensorType type) {
  Value value;
  value.byte_size = ByteSize(type);
  value.type = std::move(type);
  plan_.values.push_back(std::move(value));
  ValueId id = static_cast<ValueId>(plan_.values.size() - 1);
  alias_root_.push_back(id);
  return id;
}

ValueId Lowering::NewAlias(ValueId of, TensorType type) {
  ValueId id = NewValue(std::move(type));
  alias_root_[id] = alias_root_[of];
  return id;
}

ValueId Lowering::NewConstant(TensorType type, std::vector<uint8_t> bytes) {
  ValueId id = NewValue(std::move(type));
  plan_.values[id].storage = Storage::kConstant;
  plan_.values[id].index = static_cast<int64_t>(plan_.constants.size());
  plan_.constants.push_back(std::move(bytes));
  return id;
}

void Lowering::Emit(const ir::Operation& op, std::string kernel, std::vector<ValueId> inputs,
                    std::vector<ValueId> outputs, kernels::KernelParams params) {
  Step step;
  step.kernel = std::move(kernel);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.params = std::move(params);
  step.origin = Origin(op);
  current_->steps.push_back(std::move(step));
}

void Lowering::EmitCopy(const ir::Operation& op, ValueId from, ValueId to) {
  Emit(op, "copy." + std::string(DTypeName(TypeOf(to).dtype)), {from}, {to});
}

void Lowering::EmitControl(const ir::Operation& op, Step step) {
  step.origin = Origin(op);
  current_->steps.push_back(std::move(step));
}

Status Lowering::LowerRegion(const ir::Operation& op, const ir::Region& region, const std::vector<ValueId>& arguments,
                             Sequence* into, std::vector<ValueId>* returned) {
  if (region.blocks.size() != 1) return Unsupported(op, "regions with more than one block are not supported");
  const ir::Block& block = region.blocks[0];
  if (block.arguments.size() != arguments.size())
    return Invalid(op, "region takes " + std::to_string(block.arguments.size()) + " arguments, expected " +
                           std::to_string(arguments.size()));
  for (size_t i = 0; i < arguments.size(); ++i) {
    ir::ValueId argument = block.arguments[i];
    if (argument >= value_map_.size()) return Invalid(op, "region argument has no type");
    const ir::Type& type = IrType(argument);
    const bool token = type.kind == ir::Type::Kind::kToken && TypeOf(arguments[i]) == TokenType();
    if (!token && (!type.is_tensor() || TensorType{type.dtype, type.dims} != TypeOf(arguments[i])))
      return Invalid(op, "region argument " + std::to_string(i) + " has type " + ir::TypeToString(type) +
                             ", expected " + TensorTypeToString(TypeOf(arguments[i])));
    Bind(argument, arguments[i]);
  }
  Sequence* saved = current_;
  current_ = into;
  Status status = LowerBlock(block, returned);
  current_ = saved;
  return status;
}

Status Lowering::LowerBlock(const ir::Block& block, std::vector<ValueId>* returned) {
  for (const ir::Operation& op : block.ops) {
    if (op.code == ir::OpCode::kReturn || op.code == ir::OpCode::kSdyReturn) {
      returned->clear();
      for (size_t i = 0; i < op.operands.size(); ++i) {
        STABLERT_ASSIGN_OR_RETURN(ValueId value, Operand(op, i));
        returned->push_back(value);
      }
      return OkStatus();
    }
    STABLERT_RETURN_IF_ERROR(LowerOp(op));
  }
  return InvalidArgument("block does not end with a return");
}

namespace {

// OK if a LayoutConstraint custom call names a dimension permutation (or nothing): the
// value is the same array in any layout, and StableRT computes on row-major arrays; the
// layouts of the entry's parameters and results are applied at the executable's boundary
// (runtime/array_layout.h).
Status CheckRowMajorLayoutAttr(const Lowering& l, const ir::Operation& op, size_t rank) {
  const ir::Attribute* attr = op.attr("result_layouts");
  const auto* list = attr ? attr->get<ir::Attribute::Array>() : nullptr;
  if (list == nullptr || list->empty()) return OkStatus();
  auto layout = (*list)[0].AsIntArray();
  std::vector<bool> seen(rank, false);
  bool ok = layout && layout->size() == rank;
  if (ok)
    for (int64_t d : *layout) {
      if (d < 0 || d >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(d)]) {
        ok = false;
        break;
      }
      seen[static_cast<size_t>(d)] = true;
    }
  if (!ok)
    return l.Unsupported(op, "custom_call 'LayoutConstraint': result_layouts[0] is not a permutation of the " +
                                 std::to_string(rank) + " dimensions");
  return OkStatus();
}

}  // namespace

Status Lowering::CheckRowMajorResultLayout(const ir::Operation& op) const {
  STABLERT_ASSIGN_OR_RETURN(TensorType type, ResultType(op, 0));
  return CheckRowMajorLayoutAttr(*this, op, type.dims.size());
}

Status Lowering::LowerOp(const ir::Operation& op) {
  using ir::OpCode;
  const ir::OpInfo& info = ir::GetOpInfo(op.code);
  if (info.num_operands >= 0 && op.operands.size() != static_cast<size_t>(info.num_operands))
    return Invalid(op, "expected " + std::to_string(info.num_operands) + " operands, got " +
                           std::to_string(op.operands.size()));
  if (info.num_results >= 0 && op.results.size() != static_cast<size_t>(info.num_results))
    return Invalid(op, "expected " + std::to_string(info.num_results) + " results, got " +
                           std::to_string(op.results.size()));
  bool in_carrier = false;
  STABLERT_RETURN_IF_ERROR(LowerInCarrier(op, &in_carrier));
  if (in_carrier) return OkStatus();
  if (ir::IsElementwise(op.code)) return LowerElementwise(*this, op);
  switch (op.code) {
    case OpCode::kConstant:
    case OpCode::kBroadcast:
    case OpCode::kBroadcastInDim:
    case OpCode::kReshape:
    case OpCode::kTranspose:
    case OpCode::kSlice:
    case OpCode::kConcatenate:
    case OpCode::kIota:
      return LowerShapeOp(*this, op);
    case OpCode::kDynamicSlice:
    case OpCode::kDynamicUpdateSlice:
    case OpCode::kPad:
    case OpCode::kReverse:
    case OpCode::kBitcastConvert:
      return LowerSlicingOp(*this, op);
    case OpCode::kReduce:
      return LowerReduce(*this, op);
    case OpCode::kSort:
      return LowerSort(*this, op);
    case OpCode::kReduceWindow:
      return LowerReduceWindow(*this, op);
    case OpCode::kSelectAndScatter:
      return LowerSelectAndScatter(*this, op);
    case OpCode::kGather:
    case OpCode::kScatter:
      return LowerGatherScatter(*this, op);
    case OpCode::kConvolution:
      return LowerConvolution(*this, op);
    case OpCode::kDot:
    case OpCode::kDotGeneral:
      return LowerDot(*this, op);
    case OpCode::kRngBitGenerator:
    case OpCode::kRng:
      return LowerRng(*this, op);
    case OpCode::kFft:
      return LowerFft(*this, op);
    case OpCode::kWhile:
    case OpCode::kIf:
    case OpCode::kCase:
      return LowerControlFlow(*this, op);
    case OpCode::kCholesky:
    case OpCode::kTriangularSolve:
      return LowerLinalg(*this, op);
    case OpCode::kSdyManualComputation:
      return LowerManualComputation(*this, op);
    case OpCode::kSend:
    case OpCode::kRecv:
    case OpCode::kCreateToken:
    case OpCode::kAfterAll:
      return LowerHostTransfer(*this, op);
    case OpCode::kAllReduce:
    case OpCode::kAllGather:
    case OpCode::kReduceScatter:
    case OpCode::kAllToAll:
    case OpCode::kCollectivePermute:
    case OpCode::kCollectiveBroadcast:
    case OpCode::kPartitionId:
    case OpCode::kReplicaId:
      return LowerCollective(*this, op);
    case OpCode::kCall:
      return Invalid(op, "calls must be inlined before lowering (passes::InlineCalls)");
    case OpCode::kComposite: {
      bool lowered = false;
      STABLERT_RETURN_IF_ERROR(LowerMathComposite(*this, op, &lowered));
      if (lowered) return OkStatus();
      return Invalid(op, "composites without a kernel of their own must be inlined before lowering "
                         "(passes::InlineCalls)");
    }
    case OpCode::kOptimizationBarrier:
    case OpCode::kSdyShardingConstraint:
    case OpCode::kSdyReshard:
    case OpCode::kSdyPropagationBarrier: {
      // Identity on values: results share their operands' storage.
      if (op.operands.size() != op.results.size()) return Invalid(op, "operand and result counts differ");
      for (size_t i = 0; i < op.operands.size(); ++i) {
        STABLERT_ASSIGN_OR_RETURN(ValueId value, Operand(op, i));
        STABLERT_ASSIGN_OR_RETURN(TensorType type, ResultType(op, i));
        if (type != TypeOf(value)) return Invalid(op, "result " + std::to_string(i) + " type differs from its operand");
        Bind(op.results[i], value);
      }
      return OkStatus();
    }
    case OpCode::kSdyShardingGroup:
      return OkStatus();
    case OpCode::kCustomCall: {
      const ir::Attribute* target_attr = op.attr("call_target_name");
      std::string target(target_attr && target_attr->AsString() ? *target_attr->AsString() : "");
      // Identities on one value: sharding annotations carried as custom calls; memory
      // placement annotations (compute_on, host offloading: every StableRT memory kind is host
      // memory, and where a result lives is the program's result memory kind); a layout
      // constraint to the dense row-major layout StableRT stores (other layouts are refused).
      const bool identity = target == "Sharding" || target == "xla.sdy.FuncResultSharding" ||
                            target == "annotate_device_placement" || target == "MoveToHost" ||
                            target == "MoveToDevice" || target == "LayoutConstraint";
      if (identity && op.operands.size() == 1 && op.results.size() == 1) {
        if (target == "LayoutConstraint") STABLERT_RETURN_IF_ERROR(CheckRowMajorResultLayout(op));
        STABLERT_ASSIGN_OR_RETURN(ValueId value, Operand(op, 0));
        STABLERT_ASSIGN_OR_RETURN(TensorType type, ResultType(op, 0));
        if (type != TypeOf(value)) return Invalid(op, "custom_call '" + target + "' changes the type");
        Bind(op.results[0], value);
        return OkStatus();
      }
      if (IsLinalgCustomCall(target)) return LowerLinalgCustomCall(*this, op, target);
      if (target == "stablert.shard_layout") return LowerShardLayout(*this, op);
      if (target == "ApproxTopK") return LowerApproxTopK(*this, op);
      // lax.dce_sink: marks its operands as used; nothing to compute.
      if (target == "dce_sink" && op.results.empty()) return OkStatus();
      if (IsFfiCustomCall(op, target)) return LowerFfiCall(*this, op, target);
      return Unsupported(op, "custom_call target '" + target + "' is not supported yet");
    }
    default:
      return Unsupported(op, "op is not supported by the CPU plan yet");
  }
}

std::vector<int64_t> Lowering::DonorByteSizes() const {
  std::vector<int64_t> sizes;
  const ir::Function* entry = module_.EntryFunction();
  for (size_t i = 0; i < entry->argument_attrs.size() && i < plan_.parameter_types.size(); ++i) {
    const ir::Attribute::Dictionary& attrs = entry->argument_attrs[i];
    const ir::Attribute* donor = ir::FindAttr(attrs, "jax.buffer_donor");
    if (ir::FindAttr(attrs, "tf.aliasing_output") || (donor && donor->AsBool().value_or(true)))
      sizes.push_back(ByteSize(plan_.parameter_types[i]));
  }
  return sizes;
}

StatusOr<ExecutionPlan> Lowering::Run() {
  auto last = std::chrono::steady_clock::now();
  auto phase = [&](const char* name) {
    if (phase_times == nullptr) return;
    const auto now = std::chrono::steady_clock::now();
    phase_times->emplace_back(name, std::chrono::duration_cast<std::chrono::microseconds>(now - last).count());
    last = now;
  };
  const ir::Function* entry = module_.EntryFunction();
  if (entry == nullptr)
    return InvalidArgument("module has no entry function (no @main and not exactly one public function)");
  if (entry->body.blocks.size() != 1) return Unimplemented("entry function @" + entry->name + " must have one block");
  const ir::Block& block = entry->body.blocks[0];
  if (block.arguments.size() != entry->argument_types.size())
    return InvalidArgument("entry function @" + entry->name + " argument count differs from its type");

  for (size_t i = 0; i < block.arguments.size(); ++i) {
    const ir::Type& type = entry->argument_types[i];
    std::string where = "parameter " + std::to_string(i) + " of @" + entry->name + " has type " + ir::TypeToString(type);
    if (type.kind == ir::Type::Kind::kToken && block.arguments[i] < value_map_.size()) {
      // A token parameter is passed as pred[0] (JAX's runtime tokens, as XLA takes them).
      plan_.parameter_types.push_back(kEntryTokenType);
      ValueId value = NewValue(kEntryTokenType);
      plan_.values[value].storage = Storage::kParameter;
      plan_.values[value].index = static_cast<int64_t>(i);
      Bind(block.arguments[i], NewValue(TokenType()));
      continue;
    }
    if (!type.is_tensor()) return Unimplemented(where + ", which is not supported yet");
    if (!IsSupportedDType(type.dtype)) return Unimplemented(where + ": element type not supported yet");
    auto count = CheckedElementCount(type.dims);
    if (!count.ok() || *count > (int64_t{1} << 56)) return InvalidArgument(where + ": negative or too large shape");
    if (block.arguments[i] >= value_map_.size()) return InvalidArgument(where + " but no value");
    TensorType tensor{type.dtype, type.dims};
    plan_.parameter_types.push_back(tensor);
    ValueId value = NewValue(std::move(tensor));
    plan_.values[value].storage = Storage::kParameter;
    plan_.values[value].index = static_cast<int64_t>(i);
    Bind(block.arguments[i], value);
  }

  std::vector<ValueId> returned;
  STABLERT_RETURN_IF_ERROR(LowerBlock(block, &returned));

  if (returned.size() != entry->result_types.size())
    return InvalidArgument("@" + entry->name + " returns " + std::to_string(returned.size()) + " values but declares " +
                           std::to_string(entry->result_types.size()) + " results");
  for (size_t i = 0; i < returned.size(); ++i) {
    const ir::Type& type = entry->result_types[i];
    if (type.kind == ir::Type::Kind::kToken && TypeOf(returned[i]) == TokenType()) {
      returned[i] = NewConstant(kEntryTokenType, {});  // returned as pred[0], like token parameters
      plan_.result_types.push_back(kEntryTokenType);
      continue;
    }
    if (!type.is_tensor() || TensorType{type.dtype, type.dims} != TypeOf(returned[i]))
      return InvalidArgument("result " + std::to_string(i) + " of @" + entry->name + " is declared " +
                             ir::TypeToString(type) + " but the returned value is " +
                             TensorTypeToString(TypeOf(returned[i])));
    plan_.result_types.push_back(TypeOf(returned[i]));
  }
  plan_.results = std::move(returned);
  phase("lower");
  FoldGatherScatterIndices(plan_, alias_root_);
  phase("fold_gather_scatter");
  FoldTransposesIntoDots(plan_, alias_root_);
  FoldAddsIntoDots(plan_, alias_root_);
  FoldEpiloguesIntoDots(plan_, alias_root_);
  phase("fold_dots");
  DropDeadSteps(plan_, alias_root_);
  phase("dead_steps");
  FoldViewsIntoReaders(plan_, alias_root_);
  phase("fold_views");
  FuseElementwise(plan_, alias_root_);
  DropDeadSteps(plan_, alias_root_);  // drops the values only fused steps computed
  phase("fuse_elementwise");
  DeclareWorkspaces(plan_, alias_root_);
  phase("workspaces");
  UpdateLoopCarriesInPlace(plan_, alias_root_);
  phase("in_place");
  AssignBuffers(plan_, alias_root_, DonorByteSizes());
  phase("buffer_assignment");
  return std::move(plan_);
}

StatusOr<ExecutionPlan> LowerToPlan(const ir::Module& module, int64_t partitions, LowerPhaseTimes* phase_times) {
  Lowering lowering(module);
  lowering.manual_partitions = partitions;
  lowering.phase_times = phase_times;
  return lowering.Run();
}

}  // namespace stablert::plan
