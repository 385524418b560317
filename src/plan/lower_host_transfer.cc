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
// Partitioned callbacks (JAX's `partitioned=True`) on a sharded jit: JAX fixes a callback's
// operand shapes when it lowers it, before the partitioning is known, so
// python/stablert/_jax_shims.py sends the whole arrays, each followed by the custom call
// `stablert.shard_layout` of it. That call lowers to a constant int64[num_partitions, 2, rank]:
// every partition's block of the operand (start, then extent) as passes::PropagatedValueSharding
// finds its sharding (replicated if unknown); the host cuts the shards from it.
#include <cstring>

#include "plan/host_transfer_params.h"
#include "plan/lowering.h"
#include "passes/sharding/sharding.h"

namespace stablert::plan {

using passes::LayoutShards;
using passes::PropagatedValueSharding;
using passes::ShardLayout;
using passes::TensorSharding;
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
                        std::vector<ValueId> outputs, int64_t channel) {
  Step step;
  step.kind = StepKind::kHostTransfer;
  step.kernel = kernel;
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.params = HostTransferParams{.channel_id = channel};
  l.EmitControl(op, std::move(step));
  return OkStatus();
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
        STABLERT_RETURN_IF_ERROR(EmitHostTransfer(l, op, "host_send", {value}, {}, channel));
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
        STABLERT_RETURN_IF_ERROR(EmitHostTransfer(l, op, "host_recv", {}, {value}, channel));
        l.Bind(op.results[i], value);
      }
      l.Bind(op.results.back(), l.NewValue(TokenType()));
      return OkStatus();
    }
    default:
      return l.Unsupported(op, "not a host transfer op");
  }
}

Status LowerShardLayout(Lowering& l, const ir::Operation& op) {
  if (op.operands.size() != 1 || op.results.size() != 1) return l.Invalid(op, "expected one operand and one result");
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, 0));
  const Dims dims = l.TypeOf(operand).dims;
  const auto rank = static_cast<int64_t>(dims.size());
  const ir::Attribute* attr = ir::FindAttr(l.module().attrs, "mhlo.num_partitions");
  const int64_t partitions = attr && attr->AsInt() ? *attr->AsInt() : 1;
  if (type.dtype != DType::kS64 || type.dims != Dims{partitions, 2, rank})
    return l.Invalid(op, "result must be s64[" + std::to_string(partitions) + ",2," + std::to_string(rank) +
                             "] (partitions, start/extent, rank), got " + TensorTypeToString(type));
  if (l.manual_partitions > 0) return l.Unsupported(op, "shard layouts inside manual regions are not supported");
  const ir::Function* entry = l.module().EntryFunction();
  std::optional<TensorSharding> sharding =
      entry && partitions > 1 ? PropagatedValueSharding(l.module(), *entry, op.operands[0], partitions) : std::nullopt;
  ShardLayout layout;
  if (sharding) {
    STABLERT_ASSIGN_OR_RETURN(layout, LayoutShards(*sharding, dims, partitions, "the operand"));
    if (layout.partial_group_size > 1)
      return l.Unsupported(op, "the shards of an unreduced value are partial sums, not blocks of the array");
  } else {
    layout.local_dims = dims;
    layout.starts.assign(static_cast<size_t>(partitions), Dims(dims.size(), 0));
  }
  std::vector<int64_t> table;
  for (int64_t p = 0; p < partitions; ++p) {
    const Dims& start = layout.starts[static_cast<size_t>(p)];
    table.insert(table.end(), start.begin(), start.end());
    table.insert(table.end(), layout.local_dims.begin(), layout.local_dims.end());
  }
  std::vector<uint8_t> bytes(table.size() * sizeof(int64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), table.data(), bytes.size());
  l.Bind(op.results[0], l.NewConstant(type, std::move(bytes)));
  return OkStatus();
}

}  // namespace stablert::plan
