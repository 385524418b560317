// Helpers of the SPMD partitioner (partitioner.h): meshes, shardings, attributes, op kinds.
#include <algorithm>
#include <cstring>

#include "passes/sharding/partitioner.h"

namespace stablert::passes::partitioning {

Status NotCovered(std::string why) { return Unimplemented("not partitioned: " + std::move(why)); }

Spec Replicated(size_t rank) { return Spec{std::vector<std::vector<int>>(rank), {}}; }

bool SameMesh(const Mesh& a, const Mesh& b) {
  if (a.axes.size() != b.axes.size() || a.device_ids != b.device_ids) return false;
  for (size_t i = 0; i < a.axes.size(); ++i)
    if (a.axes[i].name != b.axes[i].name || a.axes[i].size != b.axes[i].size) return false;
  return true;
}

Dims LocalDims(const Dims& global, const Spec& spec, const MeshGeometry& mesh) {
  Dims local = global;
  for (size_t d = 0; d < local.size() && d < spec.dims.size(); ++d) local[d] /= mesh.Pieces(spec.dims[d]);
  return local;
}

bool Fits(const Spec& spec, const Dims& dims, const MeshGeometry& mesh) {
  if (spec.dims.size() != dims.size()) return false;
  std::set<int> used(spec.unreduced.begin(), spec.unreduced.end());
  if (used.size() != spec.unreduced.size()) return false;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] % mesh.Pieces(spec.dims[d]) != 0) return false;
    for (int a : spec.dims[d])
      if (!used.insert(a).second) return false;
  }
  return true;
}

ir::Attribute IntAttr(int64_t value) { return ir::Attribute(ir::Attribute::Integer{value, DType::kS64}); }

ir::Attribute IntElementsAttr(const std::vector<int64_t>& values, Dims dims) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kS64, std::move(dims));
  data->bytes.resize(values.size() * 8);
  if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
  return ir::Attribute(ir::Attribute::Elements(std::move(data)));
}

ir::Attribute IntListAttr(const std::vector<int64_t>& values) {
  return IntElementsAttr(values, {static_cast<int64_t>(values.size())});
}

std::vector<int64_t> IntList(const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  auto list = attr ? attr->AsIntArray() : std::nullopt;
  return list ? *list : std::vector<int64_t>{};
}

std::optional<OpCode> SimpleReduction(const ir::Region& region) {
  if (region.blocks.size() != 1) return std::nullopt;
  const ir::Block& block = region.blocks[0];
  if (block.arguments.size() != 2 || block.ops.size() != 2) return std::nullopt;
  const ir::Operation& op = block.ops[0];
  const ir::Operation& ret = block.ops[1];
  if (ret.code != OpCode::kReturn || ret.operands.size() != 1 || op.results.size() != 1 ||
      ret.operands[0] != op.results[0])
    return std::nullopt;
  std::set<ValueId> args(block.arguments.begin(), block.arguments.end());
  if (op.operands.size() != 2 || std::set<ValueId>(op.operands.begin(), op.operands.end()) != args)
    return std::nullopt;
  switch (op.code) {
    case OpCode::kAdd:
    case OpCode::kMultiply:
    case OpCode::kMaximum:
    case OpCode::kMinimum:
    case OpCode::kAnd:
    case OpCode::kOr:
      return op.code;
    default:
      return std::nullopt;
  }
}

bool IsIdentity(OpCode reduction, DType dtype, const std::vector<uint8_t>& bytes) {
  const size_t size = bytes.size();
  if (size == 0 || static_cast<int>(size) != DTypeByteSize(dtype)) return false;
  auto all = [&](uint8_t b) { return std::all_of(bytes.begin(), bytes.end(), [b](uint8_t x) { return x == b; }); };
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), std::min<size_t>(size, 8));
  const bool is_bool = dtype == DType::kPred;
  const bool is_signed = IsInteger(dtype) && !(dtype == DType::kU8 || dtype == DType::kU16 || dtype == DType::kU32 ||
                                               dtype == DType::kU64);
  const uint64_t sign = size >= 8 ? uint64_t{1} << 63 : uint64_t{1} << (size * 8 - 1);
  switch (reduction) {
    case OpCode::kAdd:
    case OpCode::kOr:
      return all(0);
    case OpCode::kAnd:
      return is_bool ? bits == 1 : all(0xff);
    case OpCode::kMaximum:
      if (is_bool) return bits == 0;
      if (dtype == DType::kF32) return bits == 0xff800000u;
      if (dtype == DType::kF64) return bits == 0xfff0000000000000ull;
      if (dtype == DType::kF16) return bits == 0xfc00u;
      if (dtype == DType::kBF16) return bits == 0xff80u;
      if (is_signed) return bits == sign;
      return IsInteger(dtype) && all(0);
    case OpCode::kMinimum:
      if (is_bool) return bits == 1;
      if (dtype == DType::kF32) return bits == 0x7f800000u;
      if (dtype == DType::kF64) return bits == 0x7ff0000000000000ull;
      if (dtype == DType::kF16) return bits == 0x7c00u;
      if (dtype == DType::kBF16) return bits == 0x7f80u;
      if (is_signed) return bits == sign - 1;
      return IsInteger(dtype) && all(0xff);
    default:
      return false;
  }
}

bool IsSameShapeOp(const ir::Module& module, const ir::Operation& op) {
  if (ir::IsElementwise(op.code)) return true;
  switch (op.code) {
    case OpCode::kSdyPropagationBarrier:
      return true;
    case OpCode::kBitcastConvert:
      return module.type_of(op.operands[0]).dims == module.type_of(op.results[0]).dims;
    default:
      return false;
  }
}

std::vector<std::pair<int64_t, int64_t>> ReshapeDimPairs(const Dims& from, const Dims& to) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t prefix_from = 1;
  for (size_t e = 0; e < from.size(); ++e) {
    int64_t prefix_to = 1;
    for (size_t d = 0; d < to.size(); ++d) {
      if (prefix_to == prefix_from && from[e] > 1 && to[d] > 1) {
        pairs.emplace_back(static_cast<int64_t>(e), static_cast<int64_t>(d));
        break;
      }
      prefix_to *= to[d];
      if (prefix_to > prefix_from) break;
    }
    prefix_from *= from[e];
  }
  return pairs;
}

std::set<std::string> ManualAxes(const ir::Operation& op) {
  std::set<std::string> axes;
  if (const ir::Attribute* attr = op.attr("manual_axes"))
    if (const auto* array = attr->get<ir::Attribute::Array>())
      for (const ir::Attribute& axis : *array)
        if (auto name = axis.AsString()) axes.emplace(*name);
  return axes;
}

const ir::Attribute::Array* ShardingArray(const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (!attr) return nullptr;
  if (const auto* array = attr->get<ir::Attribute::Array>()) return array;
  if (const auto* dict = attr->get<ir::Attribute::Dictionary>())
    if (const ir::Attribute* inner = ir::FindAttr(*dict, "shardings")) return inner->get<ir::Attribute::Array>();
  return nullptr;
}

std::vector<std::pair<int64_t, int64_t>> GatherBatchDims(const ir::Operation& op, const ir::Module& module) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const ir::Attribute* vector_dim_attr = op.attr("index_vector_dim");
  const int64_t vector_dim = vector_dim_attr ? vector_dim_attr->AsInt().value_or(-1) : -1;
  const int64_t index_rank = module.type_of(op.operands[1]).rank();
  const int64_t result_rank = module.type_of(op.results[0]).rank();
  std::vector<int64_t> offsets = IntList(op, "offset_dims");
  int64_t e = 0;
  for (int64_t r = 0; r < result_rank; ++r) {
    if (std::find(offsets.begin(), offsets.end(), r) != offsets.end()) continue;
    if (e == vector_dim) ++e;
    if (e >= index_rank) return {};
    pairs.emplace_back(e++, r);
  }
  return pairs;
}

bool ContainsManualRegion(const ir::Operation& op) {
  if (op.code == OpCode::kSdyManualComputation) return true;
  for (const ir::Region& region : op.regions)
    for (const ir::Block& block : region.blocks)
      for (const ir::Operation& inner : block.ops)
        if (ContainsManualRegion(inner)) return true;
  return false;
}

// Send, recv and custom calls with side effects (host callbacks), in `op` or its regions.
bool ContainsHostTransfer(const ir::Operation& op) {
  if (op.code == OpCode::kSend || op.code == OpCode::kRecv || op.code == OpCode::kInfeed ||
      op.code == OpCode::kOutfeed)
    return true;
  if (op.code == OpCode::kCustomCall) {
    const ir::Attribute* effect = op.attr("has_side_effect");
    if (effect && effect->AsBool().value_or(false)) return true;
    const ir::Attribute* target = op.attr("call_target_name");
    auto name = target ? target->AsString() : std::nullopt;
    if (name && name->find("callback") != std::string_view::npos) return true;
  }
  for (const ir::Region& region : op.regions)
    for (const ir::Block& block : region.blocks)
      for (const ir::Operation& inner : block.ops)
        if (ContainsHostTransfer(inner)) return true;
  return false;
}

// Ops that cannot run whole on every partition: side effects, collectives and partition
// identities (which mean something else once partitioned), Shardy ops.
bool RunsOnlyOnce(const ir::Operation& op) {
  switch (op.code) {
    case OpCode::kCustomCall:
    case OpCode::kSend:
    case OpCode::kRecv:
    case OpCode::kInfeed:
    case OpCode::kOutfeed:
    case OpCode::kRng:
    case OpCode::kPartitionId:
    case OpCode::kReplicaId:
    case OpCode::kAllReduce:
    case OpCode::kAllGather:
    case OpCode::kAllToAll:
    case OpCode::kReduceScatter:
    case OpCode::kCollectivePermute:
    case OpCode::kCollectiveBroadcast:
    case OpCode::kCollectiveReduce:
    case OpCode::kCrossReplicaSum:
    case OpCode::kAsyncStart:
    case OpCode::kAsyncDone:
    case OpCode::kComposite:
    case OpCode::kCreateToken:
    case OpCode::kAfterAll:
    case OpCode::kOptimizationBarrier:
      return true;
    default:
      return ir::OpName(op.code).starts_with("sdy.") && op.code != OpCode::kSdyReturn;
  }
}

// Ops in `region` that a partitioned program cannot hold (calls are not inlined there).
Status CheckRegion(const ir::Region& region) {
  for (const ir::Block& block : region.blocks)
    for (const ir::Operation& op : block.ops) {
      if (RunsOnlyOnce(op) || op.code == OpCode::kCall)
        return NotCovered(std::string(ir::OpName(op.code)) + " in a nested region");
      for (const ir::Region& inner : op.regions) STABLERT_RETURN_IF_ERROR(CheckRegion(inner));
    }
  return OkStatus();
}

std::vector<bool> PointwiseWindowDims(const ir::Operation& op, size_t rank) {
  std::vector<bool> pointwise(rank, false);
  const std::vector<int64_t> window = IntList(op, "window_dimensions");
  if (window.size() != rank) return pointwise;
  auto ones_or_absent = [&](const char* name) {
    std::vector<int64_t> values = IntList(op, name);
    return values.empty() ? std::vector<int64_t>(rank, 1) : values;
  };
  const std::vector<int64_t> strides = ones_or_absent("window_strides");
  const std::vector<int64_t> base = ones_or_absent("base_dilations");
  const std::vector<int64_t> dilations = ones_or_absent("window_dilations");
  std::vector<int64_t> padding(2 * rank, 0);
  if (const ir::Attribute* attr = op.attr("padding"))
    if (const auto* elements = attr->get<ir::Attribute::Elements>(); elements && *elements) {
      const ir::ElementsData& data = **elements;
      if (data.type.dtype != DType::kS64 || data.bytes.size() != 16 * rank) return pointwise;
      std::memcpy(padding.data(), data.bytes.data(), data.bytes.size());
    }
  if (strides.size() != rank || base.size() != rank || dilations.size() != rank) return pointwise;
  for (size_t d = 0; d < rank; ++d)
    pointwise[d] = window[d] == 1 && strides[d] == 1 && base[d] == 1 && dilations[d] == 1 && padding[2 * d] == 0 &&
                   padding[2 * d + 1] == 0;
  return pointwise;
}

}  // namespace stablert::passes::partitioning
