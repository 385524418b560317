// The SPMD partitioner's emitting and resharding (partitioner.h): new ops in the partitioned
// entry, the partition's offsets, all_reduce/all_gather over mesh axes, reshards between
// shardings (partials included).
#include <algorithm>
#include <cstring>

#include "passes/sharding/partitioner.h"

namespace stablert::passes::partitioning {

//===--- Step 3 ---===//

std::vector<ValueId> Partitioner::Emit(OpCode code, std::vector<ValueId> operands, std::vector<ir::Type> results,
                                       ir::Attribute::Dictionary attrs, std::vector<ir::Region> regions) {
  ir::Operation op;
  op.code = code;
  op.operands = std::move(operands);
  for (ir::Type& type : results) op.results.push_back(out_.AddValue(std::move(type)));
  op.attrs = std::move(attrs);
  op.regions = std::move(regions);
  block_->ops.push_back(std::move(op));
  return block_->ops.back().results;
}

StatusOr<Local> Partitioner::Get(ValueId global) const {
  auto it = local_.find(global);
  if (it == local_.end()) return NotCovered("a value defined outside the entry function's block");
  return it->second;
}

Status Partitioner::MapCaptures(const std::vector<ir::Region>& regions, std::unordered_map<ValueId, ValueId>& map) {
  std::unordered_set<ValueId> defined, captured;
  auto visit = [&](auto&& self, const ir::Region& region) -> void {
    for (const ir::Block& block : region.blocks) {
      defined.insert(block.arguments.begin(), block.arguments.end());
      for (const ir::Operation& op : block.ops) {
        for (ValueId v : op.operands)
          if (!defined.count(v)) captured.insert(v);
        for (const ir::Region& inner : op.regions) self(self, inner);
        defined.insert(op.results.begin(), op.results.end());
      }
    }
  };
  for (const ir::Region& region : regions) visit(visit, region);
  for (ValueId v : captured) {
    if (map.count(v)) continue;
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(v));
    const Dims dims = DimsOf(v);
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, Replicated(dims.size()), dims));
    map[v] = local.value;
  }
  return OkStatus();
}

ValueId Partitioner::ScalarConstant(DType dtype, const std::vector<uint8_t>& bytes) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(dtype, {});
  data->bytes = bytes;
  return Emit1(OpCode::kConstant, {}, ir::Type::Tensor(dtype, {}),
               {{"value", ir::Attribute(ir::Attribute::Elements(std::move(data)))}});
}

ValueId Partitioner::PartitionIdS32() {
  if (!partition_id_) {
    ValueId id = Emit1(OpCode::kPartitionId, {}, ir::Type::Tensor(DType::kU32, {}));
    partition_id_ = Emit1(OpCode::kConvert, {id}, ir::Type::Tensor(DType::kS32, {}));
  }
  return *partition_id_;
}

ValueId Partitioner::Offset(const std::vector<int>& axes, int64_t block) {
  auto key = std::make_pair(axes, block);
  auto it = offsets_.find(key);
  if (it != offsets_.end()) return it->second;
  std::vector<int32_t> table;
  for (int64_t p = 0; p < partitions_; ++p) table.push_back(static_cast<int32_t>(mesh_->BlockIndex(p, axes) * block));
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kS32, {partitions_});
  data->bytes.resize(table.size() * 4);
  std::memcpy(data->bytes.data(), table.data(), data->bytes.size());
  ValueId constant = Emit1(OpCode::kConstant, {}, data->type, {{"value", ir::Attribute(ir::Attribute::Elements(data))}});
  ValueId entry = Emit1(OpCode::kDynamicSlice, {constant, PartitionIdS32()}, ir::Type::Tensor(DType::kS32, {1}),
                        {{"slice_sizes", IntListAttr({1})}});
  ValueId offset = Emit1(OpCode::kReshape, {entry}, ir::Type::Tensor(DType::kS32, {}));
  offsets_[key] = offset;
  return offset;
}

ValueId Partitioner::AllReduce(ValueId value, const std::vector<int>& axes, OpCode reduction) {
  const ir::Type type = out_.type_of(value);
  const ir::Type scalar = ir::Type::Tensor(type.dtype, {});
  ir::Region body;
  ir::Block& block = body.blocks.emplace_back();
  block.arguments = {out_.AddValue(scalar), out_.AddValue(scalar)};
  ir::Operation combine;
  combine.code = reduction;
  combine.operands = block.arguments;
  combine.results = {out_.AddValue(scalar)};
  ir::Operation ret;
  ret.code = OpCode::kReturn;
  ret.operands = combine.results;
  block.ops.push_back(std::move(combine));
  block.ops.push_back(std::move(ret));
  const std::vector<int64_t> groups = mesh_->Groups(axes);
  const int64_t size = mesh_->Pieces(axes);
  std::vector<ir::Region> regions;
  regions.push_back(std::move(body));
  return Emit1(OpCode::kAllReduce, {value}, type,
               {{"channel_id", IntAttr(next_channel_++)},
                {"replica_groups", IntElementsAttr(groups, {partitions_ / size, size})},
                {"use_global_device_ids", ir::Attribute(true)}},
               std::move(regions));
}

ValueId Partitioner::AllGather(ValueId value, int64_t dim, const std::vector<int>& axes) {
  ir::Type type = out_.type_of(value);
  const int64_t size = mesh_->Pieces(axes);
  type.dims[static_cast<size_t>(dim)] *= size;
  return Emit1(OpCode::kAllGather, {value}, type,
               {{"all_gather_dim", IntAttr(dim)},
                {"channel_id", IntAttr(next_channel_++)},
                {"replica_groups", IntElementsAttr(mesh_->Groups(axes), {partitions_ / size, size})},
                {"use_global_device_ids", ir::Attribute(true)}});
}

StatusOr<Local> Partitioner::Reshard(const Local& local, const Spec& target, const Dims& global_dims) {
  if (local.spec == target) return local;
  if (!Fits(target, global_dims, *mesh_)) return NotCovered("a sharding that does not split its value evenly");
  ValueId value = local.value;
  // Partials along axes the target does not keep unreduced are combined.
  std::vector<int> combine;
  for (int a : local.spec.unreduced)
    if (!std::binary_search(target.unreduced.begin(), target.unreduced.end(), a)) combine.push_back(a);
  std::vector<int> fresh;  // axes along which the target is unreduced and the value is not
  for (int a : target.unreduced)
    if (!std::binary_search(local.spec.unreduced.begin(), local.spec.unreduced.end(), a)) fresh.push_back(a);
  if (!target.unreduced.empty() && local.partial_op != OpCode::kAdd && fresh.size() != target.unreduced.size())
    return NotCovered("unreduced partials of a reduction other than a sum");
  if (!combine.empty()) value = AllReduce(value, combine, local.partial_op);
  Spec current = local.spec;
  current.unreduced = target.unreduced;
  if (!fresh.empty()) {
    STABLERT_ASSIGN_OR_RETURN(value, MakePartials(value, fresh, target, global_dims, current));
  }
  // Dimensions split differently: gathered whole, then cut as the target splits them.
  for (size_t d = 0; d < global_dims.size(); ++d) {
    if (current.dims[d] == target.dims[d] || current.dims[d].empty()) continue;
    value = AllGather(value, static_cast<int64_t>(d), current.dims[d]);
    current.dims[d].clear();
  }
  if (current.dims != target.dims) {
    const Dims local_dims = LocalDims(global_dims, target, *mesh_);
    std::vector<ValueId> operands = {value};
    std::optional<ValueId> zero;
    for (size_t d = 0; d < global_dims.size(); ++d) {
      if (current.dims[d] != target.dims[d]) {
        operands.push_back(Offset(target.dims[d], local_dims[d]));
      } else {
        if (!zero) zero = ScalarConstant(DType::kS32, std::vector<uint8_t>(4, 0));
        operands.push_back(*zero);
      }
    }
    value = Emit1(OpCode::kDynamicSlice, std::move(operands),
                  ir::Type::Tensor(out_.type_of(value).dtype, local_dims),
                  {{"slice_sizes", IntListAttr(std::vector<int64_t>(local_dims.begin(), local_dims.end()))}});
  }
  return Local{value, target, OpCode::kAdd};
}

StatusOr<ValueId> Partitioner::MakePartials(ValueId value, const std::vector<int>& fresh, const Spec& target,
                                            const Dims& global_dims, Spec& current) {
  const DType dtype = out_.type_of(value).dtype;
  const std::vector<uint8_t> zero(static_cast<size_t>(DTypeByteSize(dtype)), 0);
  auto in_fresh = [&](int a) { return std::binary_search(fresh.begin(), fresh.end(), a); };
  std::vector<int> placed;
  for (size_t d = 0; d < current.dims.size(); ++d) {
    std::vector<int>& axes = current.dims[d];
    if (axes.empty() || axes == target.dims[d] || !std::any_of(axes.begin(), axes.end(), in_fresh)) continue;
    if (!std::all_of(axes.begin(), axes.end(), in_fresh))
      return NotCovered("a dimension split partly along axes that become unreduced");
    // The partial of a block split along unreduced axes: the block at its place, zeros elsewhere.
    const Dims block = out_.type_of(value).dims;
    Dims whole = block;
    whole[d] = global_dims[d] / LocalDims(global_dims, current, *mesh_)[d] * block[d];
    ValueId zeros = Emit1(OpCode::kBroadcastInDim, {ScalarConstant(dtype, zero)}, ir::Type::Tensor(dtype, whole),
                          {{"broadcast_dimensions", IntListAttr({})}});
    std::vector<ValueId> operands = {zeros, value};
    ValueId origin = ScalarConstant(DType::kS32, std::vector<uint8_t>(4, 0));
    for (size_t e = 0; e < block.size(); ++e) operands.push_back(e == d ? Offset(axes, block[d]) : origin);
    value = Emit1(OpCode::kDynamicUpdateSlice, std::move(operands), ir::Type::Tensor(dtype, whole));
    placed.insert(placed.end(), axes.begin(), axes.end());
    axes.clear();
  }
  std::vector<int> masked;
  for (int a : fresh)
    if (std::find(placed.begin(), placed.end(), a) == placed.end()) masked.push_back(a);
  if (masked.empty()) return value;
  // Replicated along the other new axes: the partition first along them holds the value,
  // the others zeros.
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kPred, {partitions_});
  for (int64_t p = 0; p < partitions_; ++p) data->bytes.push_back(mesh_->BlockIndex(p, masked) == 0 ? 1 : 0);
  ValueId table = Emit1(OpCode::kConstant, {}, data->type, {{"value", ir::Attribute(ir::Attribute::Elements(data))}});
  ValueId entry = Emit1(OpCode::kDynamicSlice, {table, PartitionIdS32()}, ir::Type::Tensor(DType::kPred, {1}),
                        {{"slice_sizes", IntListAttr({1})}});
  const ir::Type type = out_.type_of(value);
  ValueId first = Emit1(OpCode::kReshape, {entry}, ir::Type::Tensor(DType::kPred, {}));
  ValueId zeros = Emit1(OpCode::kBroadcastInDim, {ScalarConstant(dtype, zero)}, type,
                        {{"broadcast_dimensions", IntListAttr({})}});
  return Emit1(OpCode::kSelect, {first, value, zeros}, type);
}

Status Partitioner::CheckReplicatedSize(const ir::Operation& op) const {
  auto check = [&](ValueId v) -> Status {
    const ir::Type type = out_.type_of(v);
    if (type.is_tensor() && ElementCount(type.dims) > kMaxReplicatedElements)
      return NotCovered(std::string(ir::OpName(op.code)) + " over " + ir::TypeToString(type) +
                        " would run whole on every partition");
    return OkStatus();
  };
  for (ValueId v : op.operands) STABLERT_RETURN_IF_ERROR(check(v));
  for (ValueId v : op.results) STABLERT_RETURN_IF_ERROR(check(v));
  return OkStatus();
}


void Partitioner::KeepSumPartials(const Local& operand, Spec& operand_spec, Spec& result_spec) {
  if (operand.partial_op != OpCode::kAdd || operand.spec.unreduced.empty()) return;
  for (int a : operand.spec.unreduced)
    if (operand_spec.Uses(a) || result_spec.Uses(a)) return;
  operand_spec.unreduced = result_spec.unreduced = operand.spec.unreduced;
}

}  // namespace stablert::passes::partitioning
