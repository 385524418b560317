// Lowering of host transfers and tokens (plan.h, StepKind::kHostTransfer).
//
// `stablehlo.send` / `stablehlo.recv` with `is_host_transfer = true` move one array to or
// from the host over a channel (JAX's host callbacks on the PJRT send/recv path): each
// array operand of a send becomes a "host_send" step, each array result of a recv a
// "host_recv" step, with the op's channel id. Tokens carry no bytes: create_token,
// after_all and the tokens sends and recvs return are values of TokenType() that no step
// computes. Side effects stay in program order because the plan runs steps in the order
// of the ops. Device-to-device send/recv (no host transfer) is refused at compile time.
//
// Partitioned callbacks (JAX's `partitioned=True`, marked by the frontend attribute
// `_stablert_partitioned` that python/stablert/_jax_shims.py sets) in a program on several
// partitions, outside manual regions: every device calls the callback with its own shard.
// The send step then carries the operand's shard layout (from plan::PropagatedValueSharding;
// replicated if unknown): params [[channel], [num_partitions], local dims, every partition's
// block start, flattened]; the recv step [[channel], [num_partitions]]. Only replicated
// operands are accepted (every device calls with the whole array, as XLA does): JAX fixes the
// callback's operand shapes when it lowers it, as the global shapes, so a sharded operand is
// refused at compile time.
#include "plan/lowering.h"
#include "plan/sharding.h"

namespace stablert::plan {
namespace {

constexpr int64_t kDeviceToHost = 2;  // stablehlo ChannelType DEVICE_TO_HOST
constexpr int64_t kHostToDevice = 3;  // HOST_TO_DEVICE

// The channel id of a host-transfer send/recv, checked.
StatusOr<int64_t> HostChannel(Lowering& l, const ir::Operation& op, int64_t expected_type) {
  const ir::Attribute* host = op.attr("is_host_transfer");
  const auto is_host = host ? host->AsBool() : std::nullopt;
  if (!is_host || !*is_host)
    return l.Unsupported(op, "only host transfers (is_host_transfer = true) are supported; device-to-device "
                             "send/recv is not");
  STABLERT_ASSIGN_OR_RETURN(int64_t channel, l.IntAttr(op, "channel_id"));
  if (const ir::Attribute* type = op.attr("channel_type")) {
    auto value = type->AsInt();
    if (value && *value != expected_type)
      return l.Invalid(op, "channel type " + std::to_string(*value) + ", expected " + std::to_string(expected_type) +
                               (expected_type == kDeviceToHost ? " (DEVICE_TO_HOST)" : " (HOST_TO_DEVICE)"));
  }
  if (channel <= 0) return l.Invalid(op, "channel id " + std::to_string(channel) + " is not positive");
  return channel;
}

Status CheckToken(Lowering& l, const ir::Operation& op, size_t operand) {
  STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, operand));
  if (l.TypeOf(value) != TokenType())
    return l.Invalid(op, "operand " + std::to_string(operand) + " is " + TensorTypeToString(l.TypeOf(value)) +
                             ", expected a token");
  return OkStatus();
}

Status EmitHostTransfer(Lowering& l, const ir::Operation& op, const char* kernel, std::vector<ValueId> inputs,
                        std::vector<ValueId> outputs, int64_t channel,
                        std::vector<std::vector<int64_t>> partitioned = {}) {
  Step step;
  step.kind = StepKind::kHostTransfer;
  step.kernel = kernel;
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.params = {{channel}};
  for (auto& param : partitioned) step.params.push_back(std::move(param));
  l.EmitControl(op, std::move(step));
  return OkStatus();
}

// The number of partitions a partitioned host transfer is split over: the module's
// mhlo.num_partitions for a marked op outside manual regions, else 0 (not split).
int64_t PartitionedOver(Lowering& l, const ir::Operation& op) {
  const ir::Attribute* frontend = op.attr("mhlo.frontend_attributes");
  const auto* dict = frontend ? frontend->get<ir::Attribute::Dictionary>() : nullptr;
  const ir::Attribute* mark = dict ? ir::FindAttr(*dict, "_stablert_partitioned") : nullptr;
  if (mark == nullptr || mark->AsString() != "true" || l.manual_partitions > 0) return 0;
  const ir::Attribute* attr = ir::FindAttr(l.module().attrs, "mhlo.num_partitions");
  const int64_t partitions = attr && attr->AsInt() ? *attr->AsInt() : 1;
  return partitions > 1 ? partitions : 0;
}

// The send params of a partitioned host transfer of `operand` (see the file comment).
StatusOr<std::vector<std::vector<int64_t>>> PartitionedSendParams(Lowering& l, const ir::Operation& op, size_t operand,
                                                                  int64_t partitions) {
  STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, operand));
  const Dims dims = l.TypeOf(value).dims;
  const ir::Function* entry = l.module().EntryFunction();
  std::optional<TensorSharding> sharding =
      entry ? PropagatedValueSharding(l.module(), *entry, op.operands[operand], partitions) : std::nullopt;
  ShardLayout layout;
  if (sharding) {
    STABLERT_ASSIGN_OR_RETURN(layout, LayoutShards(*sharding, dims, partitions, "operand " + std::to_string(operand)));
    if (layout.partial_group_size > 1)
      return l.Unsupported(op, "a partitioned callback of an unreduced value is not supported");
    if (layout.local_dims != dims)
      return l.Unsupported(op, "a partitioned callback of an operand sharded over devices (" + sharding->ToString() +
                                   ") is not supported: the host callback's operand shapes are fixed when JAX "
                                   "lowers it, before the per-device shard shape is known");
  } else {
    layout.local_dims = dims;
    layout.starts.assign(static_cast<size_t>(partitions), Dims(dims.size(), 0));
  }
  std::vector<int64_t> starts;
  for (const Dims& start : layout.starts) starts.insert(starts.end(), start.begin(), start.end());
  return std::vector<std::vector<int64_t>>{{partitions}, layout.local_dims, starts};
}

}  // namespace

Status LowerHostTransfer(Lowering& l, const ir::Operation& op) {
  using ir::OpCode;
  switch (op.code) {
    case OpCode::kCreateToken:
      if (!op.operands.empty() || op.results.size() != 1) return l.Invalid(op, "expected no operands and one result");
      l.Bind(op.results[0], l.NewValue(TokenType()));
      return OkStatus();
    case OpCode::kAfterAll:
      if (op.results.size() != 1) return l.Invalid(op, "expected one result");
      for (size_t i = 0; i < op.operands.size(); ++i) STABLERT_RETURN_IF_ERROR(CheckToken(l, op, i));
      l.Bind(op.results[0], l.NewValue(TokenType()));
      return OkStatus();
    case OpCode::kSend: {
      // Operands: the arrays sent, then the token. Result: a token.
      if (op.operands.empty() || op.results.size() != 1) return l.Invalid(op, "expected a token operand and result");
      STABLERT_RETURN_IF_ERROR(CheckToken(l, op, op.operands.size() - 1));
      STABLERT_ASSIGN_OR_RETURN(int64_t channel, HostChannel(l, op, kDeviceToHost));
      if (op.operands.size() > 2) return l.Unsupported(op, "a host send of more than one array is not supported");
      for (size_t i = 0; i + 1 < op.operands.size(); ++i) {
        STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, i));
        if (!IsSupportedDType(l.TypeOf(value).dtype))
          return l.Unsupported(op, "sending " + TensorTypeToString(l.TypeOf(value)) + " is not supported");
        std::vector<std::vector<int64_t>> partitioned;
        if (int64_t partitions = PartitionedOver(l, op); partitions > 0) {
          STABLERT_ASSIGN_OR_RETURN(partitioned, PartitionedSendParams(l, op, i, partitions));
        }
        STABLERT_RETURN_IF_ERROR(EmitHostTransfer(l, op, "host_send", {value}, {}, channel, std::move(partitioned)));
      }
      l.Bind(op.results[0], l.NewValue(TokenType()));
      return OkStatus();
    }
    case OpCode::kRecv: {
      // Operand: a token. Results: the arrays received, then a token.
      if (op.operands.size() != 1 || op.results.empty()) return l.Invalid(op, "expected a token operand and result");
      STABLERT_RETURN_IF_ERROR(CheckToken(l, op, 0));
      STABLERT_ASSIGN_OR_RETURN(int64_t channel, HostChannel(l, op, kHostToDevice));
      STABLERT_ASSIGN_OR_RETURN(TensorType last, l.ResultType(op, op.results.size() - 1));
      if (last != TokenType()) return l.Invalid(op, "the last result must be a token");
      if (op.results.size() > 2) return l.Unsupported(op, "a host receive of more than one array is not supported");
      for (size_t i = 0; i + 1 < op.results.size(); ++i) {
        STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, i));
        ValueId value = l.NewValue(type);
        std::vector<std::vector<int64_t>> partitioned;
        if (int64_t partitions = PartitionedOver(l, op); partitions > 0) partitioned = {{partitions}};
        STABLERT_RETURN_IF_ERROR(EmitHostTransfer(l, op, "host_recv", {}, {value}, channel, std::move(partitioned)));
        l.Bind(op.results[i], value);
      }
      l.Bind(op.results.back(), l.NewValue(TokenType()));
      return OkStatus();
    }
    default:
      return l.Unsupported(op, "not a host transfer op");
  }
}

}  // namespace stablert::plan
