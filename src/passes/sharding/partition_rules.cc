// The SPMD partitioner's rewrite rules (partitioner.h): how each kind of op runs on blocks.
#include <algorithm>
#include <cstring>

#include "passes/sharding/batch_partitionable.h"
#include "passes/sharding/partitioner.h"

namespace stablert::passes::partitioning {

Status Partitioner::RewriteWhole(const ir::Operation& op) {
  if (RunsOnlyOnce(op)) return NotCovered(std::string(ir::OpName(op.code)) + " outside a manual region");
  for (const ir::Region& region : op.regions) STABLERT_RETURN_IF_ERROR(CheckRegion(region));
  STABLERT_RETURN_IF_ERROR(CheckReplicatedSize(op));
  std::unordered_map<ValueId, ValueId> map;
  for (ValueId v : op.operands) {
    if (map.count(v)) continue;
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(v));
    const ir::Type type = out_.type_of(v);
    if (type.is_tensor()) {
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, Replicated(type.dims.size()), type.dims));
    }
    map[v] = local.value;
  }
  STABLERT_RETURN_IF_ERROR(MapCaptures(op.regions, map));
  ir::Operation copy = Clone(op, map);
  for (size_t i = 0; i < op.results.size(); ++i) {
    const ir::Type type = out_.type_of(op.results[i]);
    if (!type.is_tensor()) return NotCovered("a result that is not a tensor");
    Set(op.results[i], Local{copy.results[i], Replicated(type.dims.size())});
  }
  block_->ops.push_back(std::move(copy));
  return OkStatus();
}

Status Partitioner::RewriteReduce(const ir::Operation& op) {
  const size_t n = op.results.size();
  const ValueId result = op.results[0];
  Spec wanted = SpecOf(result);
  const std::optional<OpCode> simple = op.regions.size() == 1 ? SimpleReduction(op.regions[0]) : std::nullopt;
  const OpCode reduction = simple.value_or(OpCode::kAdd);
  std::vector<int64_t> reduced = IntList(op, "dimensions");
  const Dims in_dims = DimsOf(op.operands[0]);
  // The operand is split as the result along kept dimensions; a single-operand reduction
  // with an identity init keeps its own split along reduced ones (leaving partials).
  bool partial_ok = false;
  if (n == 1 && simple.has_value()) {
    auto def = def_.find(op.operands[1]);
    if (def != def_.end() && def->second->code == OpCode::kConstant) {
      const ir::Attribute* value = def->second->attr("value");
      const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
      partial_ok = elements && *elements && IsIdentity(reduction, (*elements)->type.dtype, (*elements)->bytes);
    }
  }
  Spec result_spec = wanted;
  result_spec.unreduced.clear();
  Spec operand_spec = Replicated(in_dims.size());
  int64_t r = 0;
  for (size_t e = 0; e < in_dims.size(); ++e)
    if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(e)) == reduced.end())
      operand_spec.dims[e] = result_spec.dims[static_cast<size_t>(r++)];
  std::vector<int> partial_axes;
  if (partial_ok) {
    const Spec own = SpecOf(op.operands[0]);
    for (int64_t e : reduced) {
      for (int a : own.dims[static_cast<size_t>(e)])
        if (operand_spec.Uses(a)) goto next_dim;
      operand_spec.dims[static_cast<size_t>(e)] = own.dims[static_cast<size_t>(e)];
      partial_axes.insert(partial_axes.end(), own.dims[static_cast<size_t>(e)].begin(),
                          own.dims[static_cast<size_t>(e)].end());
    next_dim:;
    }
    if (!Fits(operand_spec, in_dims, *mesh_)) {
      for (int64_t e : reduced) operand_spec.dims[static_cast<size_t>(e)].clear();
      partial_axes.clear();
    }
  }
  std::vector<ValueId> operands;
  for (size_t k = 0; k < n; ++k) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[k]));
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, operand_spec, DimsOf(op.operands[k])));
    operands.push_back(local.value);
  }
  for (size_t k = n; k < 2 * n; ++k) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[k]));
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, Replicated(0), {}));
    operands.push_back(local.value);
  }
  std::unordered_map<ValueId, ValueId> map;
  STABLERT_RETURN_IF_ERROR(MapCaptures(op.regions, map));
  std::vector<ir::Region> regions;
  for (const ir::Region& region : op.regions) regions.push_back(CloneRegion(region, map));
  std::vector<ir::Type> types;
  for (size_t k = 0; k < n; ++k) types.push_back(LocalType(op.results[k], result_spec));
  std::vector<ValueId> results = Emit(op.code, std::move(operands), std::move(types), op.attrs, std::move(regions));
  // Partials along `partial_axes` are combined where a use needs the value whole (Reshard),
  // or stay partials where it is wanted unreduced.
  std::sort(partial_axes.begin(), partial_axes.end());
  for (size_t k = 0; k < n; ++k) {
    Spec spec = result_spec;
    spec.unreduced = partial_axes;
    Set(op.results[k], Local{results[k], spec, reduction});
  }
  return OkStatus();
}

Status Partitioner::EmitContraction(const ir::Operation& op, const Spec& lhs_spec, const Spec& rhs_spec,
                                    const Spec& result_spec, std::vector<int> partial_axes) {
  std::vector<ValueId> operands;
  for (size_t i = 0; i < 2; ++i) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[i]));
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, i == 0 ? lhs_spec : rhs_spec, DimsOf(op.operands[i])));
    operands.push_back(local.value);
  }
  const ValueId result = op.results[0];
  ValueId value = Emit1(op.code, std::move(operands), LocalType(result, result_spec), op.attrs);
  std::sort(partial_axes.begin(), partial_axes.end());
  Spec spec = result_spec;
  spec.unreduced = std::move(partial_axes);
  Set(result, Local{value, spec, OpCode::kAdd});
  return OkStatus();
}

Status Partitioner::RewriteConvolution(const ir::Operation& op) {
  auto int_attr = [&](const char* name, int64_t fallback) {
    const ir::Attribute* attr = op.attr(name);
    return attr ? attr->AsInt().value_or(fallback) : fallback;
  };
  if (op.operands.size() != 2 || int_attr("feature_group_count", 1) != 1 || int_attr("batch_group_count", 1) != 1)
    return RewriteWhole(op);
  const int64_t in_batch = int_attr("input_batch_dimension", -1), in_feature = int_attr("input_feature_dimension", -1);
  const int64_t k_in = int_attr("kernel_input_feature_dimension", -1);
  const int64_t k_out = int_attr("kernel_output_feature_dimension", -1);
  const int64_t out_batch = int_attr("output_batch_dimension", -1);
  const int64_t out_feature = int_attr("output_feature_dimension", -1);
  if (std::min({in_batch, in_feature, k_in, k_out, out_batch, out_feature}) < 0) return RewriteWhole(op);
  const ValueId lhs = op.operands[0], rhs = op.operands[1], result = op.results[0];
  const Dims ld = DimsOf(lhs), rd = DimsOf(rhs), od = DimsOf(result);
  // Only the batch and feature dimensions split: spatial ones stay whole.
  const Spec wanted = SpecOf(result);
  Spec result_spec = Replicated(od.size());
  result_spec.dims[static_cast<size_t>(out_batch)] = wanted.dims[static_cast<size_t>(out_batch)];
  result_spec.dims[static_cast<size_t>(out_feature)] = wanted.dims[static_cast<size_t>(out_feature)];
  Spec ls = Replicated(ld.size()), rs = Replicated(rd.size());
  ls.dims[static_cast<size_t>(in_batch)] = result_spec.dims[static_cast<size_t>(out_batch)];
  rs.dims[static_cast<size_t>(k_out)] = result_spec.dims[static_cast<size_t>(out_feature)];
  // Input features keep the split either operand has (partials), if both can take it.
  std::vector<int> partial_axes;
  const Spec lown = SpecOf(lhs), rown = SpecOf(rhs);
  for (const std::vector<int>* axes : {&lown.dims[static_cast<size_t>(in_feature)], &rown.dims[static_cast<size_t>(k_in)]}) {
    if (axes->empty() || ld[static_cast<size_t>(in_feature)] % mesh_->Pieces(*axes) != 0) continue;
    if (std::any_of(axes->begin(), axes->end(), [&](int a) { return ls.Uses(a) || rs.Uses(a) || result_spec.Uses(a); }))
      continue;
    ls.dims[static_cast<size_t>(in_feature)] = rs.dims[static_cast<size_t>(k_in)] = partial_axes = *axes;
    break;
  }
  if (!result_spec.Sharded() && partial_axes.empty()) return RewriteWhole(op);
  if (!Fits(ls, ld, *mesh_) || !Fits(rs, rd, *mesh_) || !Fits(result_spec, od, *mesh_)) return RewriteWhole(op);
  return EmitContraction(op, ls, rs, result_spec, std::move(partial_axes));
}

Status Partitioner::RewriteWindow(const ir::Operation& op) {
  const ValueId result = op.results[0];
  const Dims dims = DimsOf(result);
  const bool reduce = op.code == OpCode::kReduceWindow;
  const size_t inputs = reduce ? op.results.size() : 2;  // select_and_scatter: operand, source
  if (op.operands.size() != (reduce ? 2 * inputs : 3)) return RewriteWhole(op);
  const std::vector<bool> pointwise = PointwiseWindowDims(op, dims.size());
  Spec spec = SpecOf(result);
  spec.unreduced.clear();
  for (size_t d = 0; d < dims.size(); ++d)
    if (!pointwise[d]) spec.dims[d].clear();
  if (!spec.Sharded() || !Fits(spec, dims, *mesh_)) return RewriteWhole(op);
  std::vector<ValueId> operands;
  std::vector<ir::Type> types;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(Local value, Get(op.operands[i]));
    const Dims operand_dims = DimsOf(op.operands[i]);
    // Blocked inputs share the result's split (equal sizes along pointwise dimensions); the
    // init values are whole scalars.
    const Spec target = i < inputs ? spec : Replicated(operand_dims.size());
    if (i < inputs && !Fits(target, operand_dims, *mesh_)) return RewriteWhole(op);
    STABLERT_ASSIGN_OR_RETURN(value, Reshard(value, target, operand_dims));
    operands.push_back(value.value);
  }
  for (ValueId r : op.results) types.push_back(LocalType(r, spec));
  std::unordered_map<ValueId, ValueId> map;
  STABLERT_RETURN_IF_ERROR(MapCaptures(op.regions, map));
  std::vector<ir::Region> regions;
  for (const ir::Region& region : op.regions) regions.push_back(CloneRegion(region, map));
  std::vector<ValueId> results = Emit(op.code, std::move(operands), std::move(types), op.attrs, std::move(regions));
  for (size_t k = 0; k < results.size(); ++k) Set(op.results[k], Local{results[k], spec});
  return OkStatus();
}

Status Partitioner::RewriteDot(const ir::Operation& op) {
  const ValueId lhs = op.operands[0], rhs = op.operands[1], result = op.results[0];
  std::vector<int64_t> lb = IntList(op, "lhs_batching_dimensions"), rb = IntList(op, "rhs_batching_dimensions");
  std::vector<int64_t> lc = IntList(op, "lhs_contracting_dimensions"), rc = IntList(op, "rhs_contracting_dimensions");
  if (lb.size() != rb.size() || lc.size() != rc.size()) return NotCovered("a malformed dot_general");
  const Dims ld = DimsOf(lhs), rd = DimsOf(rhs);
  Spec wanted = SpecOf(result);
  Spec result_spec = wanted;
  result_spec.unreduced.clear();
  Spec ls = Replicated(ld.size()), rs = Replicated(rd.size());
  int64_t r = 0;
  for (size_t i = 0; i < lb.size(); ++i, ++r) {
    ls.dims[static_cast<size_t>(lb[i])] = result_spec.dims[static_cast<size_t>(r)];
    rs.dims[static_cast<size_t>(rb[i])] = result_spec.dims[static_cast<size_t>(r)];
  }
  for (size_t e = 0; e < ld.size(); ++e)
    if (std::count(lb.begin(), lb.end(), e) + std::count(lc.begin(), lc.end(), e) == 0)
      ls.dims[e] = result_spec.dims[static_cast<size_t>(r++)];
  for (size_t e = 0; e < rd.size(); ++e)
    if (std::count(rb.begin(), rb.end(), e) + std::count(rc.begin(), rc.end(), e) == 0)
      rs.dims[e] = result_spec.dims[static_cast<size_t>(r++)];
  // Contracting dimensions keep the split either operand has, if both can take it.
  const Spec lown = SpecOf(lhs), rown = SpecOf(rhs);
  std::vector<int> partial_axes;
  for (size_t i = 0; i < lc.size(); ++i) {
    for (const std::vector<int>* axes : {&lown.dims[static_cast<size_t>(lc[i])], &rown.dims[static_cast<size_t>(rc[i])]}) {
      if (axes->empty()) continue;
      if (std::any_of(axes->begin(), axes->end(), [&](int a) { return ls.Uses(a) || rs.Uses(a) || result_spec.Uses(a); }))
        continue;
      if (ld[static_cast<size_t>(lc[i])] % mesh_->Pieces(*axes) != 0) continue;
      ls.dims[static_cast<size_t>(lc[i])] = *axes;
      rs.dims[static_cast<size_t>(rc[i])] = *axes;
      partial_axes.insert(partial_axes.end(), axes->begin(), axes->end());
      break;
    }
  }
  if (!Fits(ls, ld, *mesh_) || !Fits(rs, rd, *mesh_) || !Fits(result_spec, DimsOf(result), *mesh_))
    return NotCovered("a dot_general whose operands cannot be split as its result");
  return EmitContraction(op, ls, rs, result_spec, std::move(partial_axes));
}

Status Partitioner::RewriteGather(const ir::Operation& op) {
  if (op.operands.size() != 2 || op.results.size() != 1 || !IntList(op, "operand_batching_dims").empty())
    return RewriteWhole(op);
  const ValueId result = op.results[0];
  const Dims index_dims = DimsOf(op.operands[1]), result_dims = DimsOf(result);
  Spec spec = SpecOf(result);
  spec.unreduced.clear();
  Spec index_spec = Replicated(index_dims.size());
  Spec result_spec = Replicated(result_dims.size());
  for (auto [e, r] : GatherBatchDims(op, out_)) {
    index_spec.dims[static_cast<size_t>(e)] = spec.dims[static_cast<size_t>(r)];
    result_spec.dims[static_cast<size_t>(r)] = spec.dims[static_cast<size_t>(r)];
  }
  if (!result_spec.Sharded() || !Fits(result_spec, result_dims, *mesh_) || !Fits(index_spec, index_dims, *mesh_))
    return RewriteWhole(op);
  const Dims operand_dims = DimsOf(op.operands[0]);
  STABLERT_ASSIGN_OR_RETURN(Local operand, Get(op.operands[0]));
  STABLERT_ASSIGN_OR_RETURN(operand, Reshard(operand, Replicated(operand_dims.size()), operand_dims));
  STABLERT_ASSIGN_OR_RETURN(Local indices, Get(op.operands[1]));
  STABLERT_ASSIGN_OR_RETURN(indices, Reshard(indices, index_spec, index_dims));
  ValueId value = Emit1(op.code, {operand.value, indices.value}, LocalType(result, result_spec), op.attrs);
  STABLERT_ASSIGN_OR_RETURN(Local local, Reshard(Local{value, result_spec}, spec, result_dims));
  Set(result, local);
  return OkStatus();
}

Status Partitioner::RewriteScatterAdd(const ir::Operation& op) {
  if (op.operands.size() != 3 || op.results.size() != 1 || op.regions.size() != 1 ||
      SimpleReduction(op.regions[0]) != OpCode::kAdd || !IntList(op, "update_window_dims").empty() ||
      !IntList(op, "input_batching_dims").empty())
    return RewriteWhole(op);
  const ValueId operand = op.operands[0], indices = op.operands[1], updates = op.operands[2];
  const Spec update_spec = SpecOf(updates);
  std::vector<int> axes;
  for (const auto& dim : update_spec.dims) axes.insert(axes.end(), dim.begin(), dim.end());
  const ir::Attribute* vector_dim_attr = op.attr("index_vector_dim");
  const int64_t vector_dim = vector_dim_attr ? vector_dim_attr->AsInt().value_or(-1) : -1;
  const Dims index_dims = DimsOf(indices);
  if (axes.empty() || vector_dim < 0 || vector_dim > static_cast<int64_t>(index_dims.size()) ||
      index_dims.size() - (vector_dim < static_cast<int64_t>(index_dims.size()) ? 1 : 0) != update_spec.dims.size())
    return RewriteWhole(op);
  Spec update_target = update_spec;
  update_target.unreduced.clear();
  Spec index_target = Replicated(index_dims.size());
  for (size_t e = 0, u = 0; e < index_dims.size(); ++e)
    if (static_cast<int64_t>(e) != vector_dim) index_target.dims[e] = update_target.dims[u++];
  if (!Fits(update_target, DimsOf(updates), *mesh_) || !Fits(index_target, index_dims, *mesh_)) return RewriteWhole(op);
  std::sort(axes.begin(), axes.end());
  STABLERT_ASSIGN_OR_RETURN(Local base, Get(operand));
  const Spec whole = Replicated(DimsOf(operand).size());
  STABLERT_ASSIGN_OR_RETURN(base, Reshard(base, whole, DimsOf(operand)));
  Spec partial = whole;
  partial.unreduced = axes;
  STABLERT_ASSIGN_OR_RETURN(base, Reshard(base, partial, DimsOf(operand)));
  STABLERT_ASSIGN_OR_RETURN(Local idx, Get(indices));
  STABLERT_ASSIGN_OR_RETURN(idx, Reshard(idx, index_target, index_dims));
  STABLERT_ASSIGN_OR_RETURN(Local upd, Get(updates));
  STABLERT_ASSIGN_OR_RETURN(upd, Reshard(upd, update_target, DimsOf(updates)));
  std::unordered_map<ValueId, ValueId> map;
  STABLERT_RETURN_IF_ERROR(MapCaptures(op.regions, map));
  std::vector<ir::Region> regions;
  regions.push_back(CloneRegion(op.regions[0], map));
  ValueId value = Emit1(op.code, {base.value, idx.value, upd.value}, out_.type_of(op.results[0]), op.attrs,
                        std::move(regions));
  Set(op.results[0], Local{value, partial, OpCode::kAdd});
  return OkStatus();
}

StatusOr<ir::Region> Partitioner::RewriteRegion(const ir::Region& region, const std::vector<Spec>& specs,
                                                const std::vector<Spec>& result_specs) {
  if (region.blocks.size() != 1) return NotCovered("a loop region with several blocks");
  const ir::Block& block = region.blocks[0];
  if (block.arguments.size() != specs.size()) return NotCovered("a loop region whose arguments do not match");
  ir::Region out;
  ir::Block* inner = &out.blocks.emplace_back();
  // Values cached for the enclosing block do not reach into the region: start afresh.
  auto saved_offsets = std::move(offsets_);
  offsets_.clear();
  const std::optional<ValueId> saved_partition_id = partition_id_;
  partition_id_.reset();
  ir::Block* saved_block = block_;
  block_ = inner;
  Status status = [&]() -> Status {
    for (size_t i = 0; i < specs.size(); ++i) {
      ValueId arg = out_.AddValue(LocalType(block.arguments[i], specs[i]));
      inner->arguments.push_back(arg);
      Set(block.arguments[i], Local{arg, specs[i]});
    }
    for (const ir::Operation& op : block.ops) {
      if (op.code != OpCode::kReturn) {
        STABLERT_RETURN_IF_ERROR(RewriteOp(op));
        continue;
      }
      if (op.operands.size() != result_specs.size()) return NotCovered("a loop region returning the wrong count");
      ir::Operation ret;
      ret.code = OpCode::kReturn;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[i]));
        STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, result_specs[i], DimsOf(op.operands[i])));
        ret.operands.push_back(local.value);
      }
      inner->ops.push_back(std::move(ret));
      return OkStatus();
    }
    return NotCovered("a loop region without a return");
  }();
  block_ = saved_block;
  offsets_ = std::move(saved_offsets);
  partition_id_ = saved_partition_id;
  STABLERT_RETURN_IF_ERROR(status);
  return out;
}

Status Partitioner::RewriteWhile(const ir::Operation& op) {
  if (op.regions.size() != 2 || op.operands.size() != op.results.size()) return NotCovered("a malformed while");
  for (const ir::Region& region : op.regions)
    for (const ir::Block& block : region.blocks)
      for (const ir::Operation& inner : block.ops)
        if (ContainsHostTransfer(inner) || ContainsManualRegion(inner))
          return NotCovered("host transfers or manual regions in a loop");
  std::vector<Spec> carry;
  std::vector<ValueId> operands;
  std::vector<ir::Type> types;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[i]));
    const ir::Type type = out_.type_of(op.operands[i]);
    Spec spec = Replicated(type.is_tensor() ? type.dims.size() : 0);
    if (type.is_tensor()) {
      spec = SpecOf(op.results[i]);
      spec.unreduced = local.partial_op == OpCode::kAdd ? local.spec.unreduced : std::vector<int>{};
      if (!Fits(spec, type.dims, *mesh_)) {
        spec.dims.assign(type.dims.size(), {});
        if (!Fits(spec, type.dims, *mesh_)) spec = Replicated(type.dims.size());
      }
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, spec, type.dims));
    }
    operands.push_back(local.value);
    carry.push_back(spec);
    types.push_back(LocalType(op.results[i], spec));
  }
  STABLERT_ASSIGN_OR_RETURN(ir::Region cond, RewriteRegion(op.regions[0], carry, {Replicated(0)}));
  STABLERT_ASSIGN_OR_RETURN(ir::Region body, RewriteRegion(op.regions[1], carry, carry));
  std::vector<ir::Region> regions;
  regions.push_back(std::move(cond));
  regions.push_back(std::move(body));
  std::vector<ValueId> results = Emit(op.code, std::move(operands), std::move(types), op.attrs, std::move(regions));
  for (size_t i = 0; i < results.size(); ++i) Set(op.results[i], Local{results[i], carry[i]});
  return OkStatus();
}

Status Partitioner::RewriteSlice(const ir::Operation& op) {
  const ValueId result = op.results[0];
  const Dims from = DimsOf(op.operands[0]), to = DimsOf(result);
  const bool update = op.code == OpCode::kDynamicUpdateSlice;
  const Dims update_dims = update ? DimsOf(op.operands[1]) : Dims{};
  if (from.size() != to.size()) return RewriteWhole(op);
  Spec spec = SpecOf(result);
  spec.unreduced.clear();
  for (size_t d = 0; d < to.size(); ++d)
    if (from[d] != to[d] || (update && update_dims[d] != from[d])) spec.dims[d].clear();
  if (!Fits(spec, to, *mesh_)) spec = Replicated(to.size());
  const Dims local = LocalDims(to, spec, *mesh_);
  // Slicing and updating partial sums gives partial sums (an update of partials into a
  // whole operand makes the operand partial first).
  for (size_t i = 0; i < (update ? 2u : 1u); ++i) {
    STABLERT_ASSIGN_OR_RETURN(Local value, Get(op.operands[i]));
    if (value.partial_op == OpCode::kAdd && !value.spec.unreduced.empty() && spec.unreduced.empty() &&
        std::none_of(value.spec.unreduced.begin(), value.spec.unreduced.end(), [&](int a) { return spec.Uses(a); }))
      spec.unreduced = value.spec.unreduced;
  }
  if (!spec.Sharded()) return RewriteWhole(op);
  std::vector<ValueId> operands;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(Local value, Get(op.operands[i]));
    const Dims dims = DimsOf(op.operands[i]);
    const Spec target = (i == 0 || (update && i == 1)) ? spec : Replicated(dims.size());
    STABLERT_ASSIGN_OR_RETURN(value, Reshard(value, target, dims));
    operands.push_back(value.value);
  }
  ir::Attribute::Dictionary attrs = op.attrs;
  auto replace = [&](const char* name, const std::vector<int64_t>& values) {
    for (auto& [key, value] : attrs)
      if (key == name) value = IntListAttr(values);
  };
  if (op.code == OpCode::kSlice) {
    std::vector<int64_t> limits = IntList(op, "limit_indices");
    if (limits.size() != to.size()) return NotCovered("a malformed slice");
    for (size_t d = 0; d < to.size(); ++d)
      if (!spec.dims[d].empty()) limits[d] = local[d];
    replace("limit_indices", limits);
  } else if (op.code == OpCode::kDynamicSlice) {
    replace("slice_sizes", std::vector<int64_t>(local.begin(), local.end()));
  }
  Set(result, Local{Emit1(op.code, std::move(operands), LocalType(result, spec), std::move(attrs)), spec});
  return OkStatus();
}

Status Partitioner::RewriteManual(const ir::Operation& op) {
  std::set<std::string> all;
  for (const MeshAxis& axis : mesh_->mesh().axes) all.insert(axis.name);
  if (ManualAxes(op) != all) return NotCovered("a partially manual region");
  const ir::Attribute::Array* ins = ShardingArray(op, "in_shardings");
  const ir::Attribute::Array* outs = ShardingArray(op, "out_shardings");
  if (!ins || !outs || ins->size() != op.operands.size() || outs->size() != op.results.size() ||
      op.regions.size() != 1 || op.regions[0].blocks.size() != 1 ||
      op.regions[0].blocks[0].arguments.size() != op.operands.size())
    return NotCovered("a malformed manual region");
  const ir::Block& block = op.regions[0].blocks[0];
  std::unordered_map<ValueId, ValueId> map;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const ir::Type type = out_.type_of(op.operands[i]);
    if (type.kind == ir::Type::Kind::kToken && out_.type_of(block.arguments[i]).kind == ir::Type::Kind::kToken) {
      // Ordered effects thread a token through the region: each partition has its own.
      STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[i]));
      map[block.arguments[i]] = local.value;
      continue;
    }
    if (!type.is_tensor()) return NotCovered("a manual region over values that are neither tensors nor tokens");
    STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSdySpec((*ins)[i], type.rank(), "a manual region's operand"));
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[i]));
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, spec, type.dims));
    if (out_.type_of(local.value).dims != out_.type_of(block.arguments[i]).dims)
      return NotCovered("a manual region whose blocks differ from its body's types");
    map[block.arguments[i]] = local.value;
  }
  STABLERT_RETURN_IF_ERROR(MapCaptures(op.regions, map));
  for (const ir::Operation& inner : block.ops) {
    if (inner.code == OpCode::kSdyReturn || inner.code == OpCode::kReturn) {
      if (inner.operands.size() != op.results.size()) return NotCovered("a manual region returning the wrong count");
      for (size_t i = 0; i < op.results.size(); ++i) {
        STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSdySpec((*outs)[i], out_.type_of(op.results[i]).rank(),
                                                          "a manual region's result"));
        ValueId v = map.count(inner.operands[i]) ? map[inner.operands[i]] : inner.operands[i];
        if (out_.type_of(v).dims != LocalDims(DimsOf(op.results[i]), spec, *mesh_))
          return NotCovered("a manual region whose results differ from their blocks");
        Set(op.results[i], Local{v, spec, OpCode::kAdd});
      }
      return OkStatus();
    }
    if (ContainsManualRegion(inner)) return NotCovered("a manual region inside a manual region");
    block_->ops.push_back(Clone(inner, map));
  }
  return NotCovered("a manual region without a return");
}

Status Partitioner::RewriteBatchCustomCall(const ir::Operation& op, int64_t batch_dims) {
  // The leading `batch_dims` dimensions keep the split of the first operand's (or, without
  // operands, the first result's); the others are taken whole.
  Spec batch = op.operands.empty() ? SpecOf(op.results[0]) : Spec{};
  if (!op.operands.empty()) {
    STABLERT_ASSIGN_OR_RETURN(Local first, Get(op.operands[0]));
    batch = first.spec;
  }
  batch.dims.resize(static_cast<size_t>(batch_dims));
  auto spec_of = [&](ValueId v) {
    Spec spec = Replicated(DimsOf(v).size());
    for (int64_t d = 0; d < batch_dims; ++d) spec.dims[static_cast<size_t>(d)] = batch.dims[static_cast<size_t>(d)];
    return spec;
  };
  bool fits = true;
  for (const auto* values : {&op.operands, &op.results})
    for (ValueId v : *values) fits = fits && Fits(spec_of(v), DimsOf(v), *mesh_);
  if (!fits) batch = Replicated(static_cast<size_t>(batch_dims));
  std::vector<ValueId> operands;
  for (ValueId v : op.operands) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(v));
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, spec_of(v), DimsOf(v)));
    operands.push_back(local.value);
  }
  std::vector<ir::Type> types;
  for (ValueId v : op.results) types.push_back(LocalType(v, spec_of(v)));
  const std::vector<ValueId> results = Emit(OpCode::kCustomCall, std::move(operands), std::move(types), op.attrs);
  for (size_t i = 0; i < op.results.size(); ++i) Set(op.results[i], Local{results[i], spec_of(op.results[i])});
  return OkStatus();
}

Status Partitioner::RewriteOp(const ir::Operation& op) {
  if (op.code == OpCode::kSdyManualComputation) return RewriteManual(op);
  if (std::optional<int64_t> batch_dims = BatchPartitionableDims(out_, op)) return RewriteBatchCustomCall(op, *batch_dims);
  if (op.results.empty() || !out_.type_of(op.results[0]).is_tensor()) return RewriteWhole(op);
  const ValueId result = op.results[0];
  if (op.code == OpCode::kSdyShardingConstraint || op.code == OpCode::kSdyReshard) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[0]));
    if (fixed_.count(result)) {
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, SpecOf(result), DimsOf(result)));
    }
    Set(result, local);
    return OkStatus();
  }
  if (op.code == OpCode::kReduce) return RewriteReduce(op);
  if (op.code == OpCode::kScatter) return RewriteScatterAdd(op);
  if (op.code == OpCode::kGather) return RewriteGather(op);
  if (op.code == OpCode::kWhile) return RewriteWhile(op);
  if (op.code == OpCode::kSlice || op.code == OpCode::kDynamicSlice || op.code == OpCode::kDynamicUpdateSlice)
    return RewriteSlice(op);
  if (op.code == OpCode::kDotGeneral) return RewriteDot(op);
  if (op.code == OpCode::kConvolution) return RewriteConvolution(op);
  if (op.code == OpCode::kReduceWindow || op.code == OpCode::kSelectAndScatter) return RewriteWindow(op);
  Spec spec = SpecOf(result);
  spec.unreduced.clear();
  if (!Fits(spec, DimsOf(result), *mesh_)) spec = Replicated(DimsOf(result).size());
  const bool sharded = spec.Sharded();
  if (IsSameShapeOp(out_, op) && op.results.size() == 1) {
    // Linear ops of partial sums give partial sums: sums, differences, negations and float
    // conversions (as XLA keeps them); whole operands among partials become partials (on the
    // first partition of each group, zeros elsewhere).
    const bool float_convert = op.code == OpCode::kConvert && IsFloat(out_.type_of(op.operands[0]).dtype) &&
                               IsFloat(out_.type_of(result).dtype);
    if (op.code == OpCode::kAdd || op.code == OpCode::kSubtract || op.code == OpCode::kNegate || float_convert) {
      std::vector<Local> inputs;
      for (ValueId v : op.operands) {
        STABLERT_ASSIGN_OR_RETURN(Local local, Get(v));
        inputs.push_back(local);
      }
      std::vector<int> axes;
      bool partials = true;
      for (const Local& l : inputs) {
        if (l.spec.unreduced.empty()) continue;
        if (l.partial_op != OpCode::kAdd || (!axes.empty() && l.spec.unreduced != axes)) partials = false;
        axes = l.spec.unreduced;
      }
      partials = partials && !axes.empty() && std::none_of(axes.begin(), axes.end(), [&](int a) { return spec.Uses(a); });
      if (partials) {
        Spec partial = spec;
        partial.unreduced = axes;
        std::vector<ValueId> operands;
        for (size_t i = 0; i < inputs.size(); ++i) {
          STABLERT_ASSIGN_OR_RETURN(Local local, Reshard(inputs[i], partial, DimsOf(op.operands[i])));
          operands.push_back(local.value);
        }
        Set(result, Local{Emit1(op.code, std::move(operands), LocalType(result, partial), op.attrs), partial});
        return OkStatus();
      }
    }
    std::vector<ValueId> operands;
    for (ValueId v : op.operands) {
      STABLERT_ASSIGN_OR_RETURN(Local local, Get(v));
      const size_t rank = DimsOf(v).size();
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, rank == spec.dims.size() ? spec : Replicated(rank), DimsOf(v)));
      operands.push_back(local.value);
    }
    Set(result, Local{Emit1(op.code, std::move(operands), LocalType(result, spec), op.attrs), spec});
    return OkStatus();
  }
  switch (op.code) {
    case OpCode::kConstant: {
      const ir::Attribute* value = op.attr("value");
      const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
      if (sharded && elements && *elements) {
        const ir::ElementsData& data = **elements;
        const int64_t count = ElementCount(data.type.dims);
        const size_t size = data.splat ? data.bytes.size()
                            : count > 0 ? data.bytes.size() / static_cast<size_t>(count) : 0;
        bool splat = data.splat || (size > 0 && data.bytes.size() == size * static_cast<size_t>(count));
        for (size_t i = size; !data.splat && splat && i < data.bytes.size(); i += size)
          splat = std::memcmp(data.bytes.data(), data.bytes.data() + i, size) == 0;
        if (splat) {
          auto local = std::make_shared<ir::ElementsData>();
          local->type = LocalType(result, spec);
          const int64_t local_count = ElementCount(local->type.dims);
          if (local_count > 1 && local_count * static_cast<int64_t>(size) > ir::ElementsData::kCompactSplatBytes) {
            local->splat = true;
            local->bytes.assign(data.bytes.begin(), data.bytes.begin() + static_cast<std::ptrdiff_t>(size));
          }
          for (int64_t i = 0; !local->splat && i < local_count; ++i)
            local->bytes.insert(local->bytes.end(), data.bytes.begin(), data.bytes.begin() + static_cast<std::ptrdiff_t>(size));
          Set(result, Local{Emit1(OpCode::kConstant, {}, local->type,
                                  {{"value", ir::Attribute(ir::Attribute::Elements(local))}}),
                            spec});
          return OkStatus();
        }
      }
      ValueId whole = Emit1(OpCode::kConstant, {}, out_.type_of(result), op.attrs);
      STABLERT_ASSIGN_OR_RETURN(Local local, Reshard(Local{whole, Replicated(spec.dims.size())}, spec, DimsOf(result)));
      Set(result, local);
      return OkStatus();
    }
    case OpCode::kIota: {
      const ir::Attribute* dim_attr = op.attr("iota_dimension");
      const int64_t dim = dim_attr ? dim_attr->AsInt().value_or(-1) : -1;
      const ir::Type type = out_.type_of(result);
      if (dim < 0 || dim >= type.rank()) return NotCovered("a malformed iota");
      const std::vector<int>& axes = spec.dims[static_cast<size_t>(dim)];
      if (!axes.empty() && !IsInteger(type.dtype)) {
        ValueId whole = Emit1(OpCode::kIota, {}, type, op.attrs);
        STABLERT_ASSIGN_OR_RETURN(Local local, Reshard(Local{whole, Replicated(spec.dims.size())}, spec, type.dims));
        Set(result, local);
        return OkStatus();
      }
      const ir::Type local_type = LocalType(result, spec);
      ValueId value = Emit1(OpCode::kIota, {}, local_type, op.attrs);
      if (!axes.empty()) {
        ValueId offset = Offset(axes, local_type.dims[static_cast<size_t>(dim)]);
        if (type.dtype != DType::kS32) offset = Emit1(OpCode::kConvert, {offset}, ir::Type::Tensor(type.dtype, {}));
        ValueId spread = Emit1(OpCode::kBroadcastInDim, {offset}, local_type, {{"broadcast_dimensions", IntListAttr({})}});
        value = Emit1(OpCode::kAdd, {value, spread}, local_type);
      }
      Set(result, Local{value, spec});
      return OkStatus();
    }
    case OpCode::kBroadcastInDim: {
      std::vector<int64_t> dims = IntList(op, "broadcast_dimensions");
      const Dims from = DimsOf(op.operands[0]);
      if (dims.size() != from.size()) return NotCovered("a malformed broadcast_in_dim");
      Spec operand_spec = Replicated(from.size());
      for (size_t i = 0; i < from.size(); ++i)
        if (from[i] == DimsOf(result)[static_cast<size_t>(dims[i])])
          operand_spec.dims[i] = spec.dims[static_cast<size_t>(dims[i])];
      STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[0]));
      KeepSumPartials(local, operand_spec, spec);
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, operand_spec, from));
      Set(result, Local{Emit1(op.code, {local.value}, LocalType(result, spec), op.attrs), spec});
      return OkStatus();
    }
    case OpCode::kTranspose: {
      std::vector<int64_t> perm = IntList(op, "permutation");
      Spec operand_spec = Replicated(perm.size());
      for (size_t j = 0; j < perm.size(); ++j) operand_spec.dims[static_cast<size_t>(perm[j])] = spec.dims[j];
      STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[0]));
      KeepSumPartials(local, operand_spec, spec);
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, operand_spec, DimsOf(op.operands[0])));
      Set(result, Local{Emit1(op.code, {local.value}, LocalType(result, spec), op.attrs), spec});
      return OkStatus();
    }
    case OpCode::kReshape: {
      const Dims from = DimsOf(op.operands[0]);
      Spec operand_spec = Replicated(from.size());
      Spec reachable = Replicated(spec.dims.size());
      for (auto [e, d] : ReshapeDimPairs(from, DimsOf(result))) {
        const std::vector<int>& axes = spec.dims[static_cast<size_t>(d)];
        if (axes.empty() || from[static_cast<size_t>(e)] % mesh_->Pieces(axes) != 0) continue;
        operand_spec.dims[static_cast<size_t>(e)] = axes;
        reachable.dims[static_cast<size_t>(d)] = axes;
      }
      STABLERT_ASSIGN_OR_RETURN(Local local, Get(op.operands[0]));
      KeepSumPartials(local, operand_spec, reachable);
      spec.unreduced = reachable.unreduced;
      STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, operand_spec, from));
      Local reshaped{Emit1(op.code, {local.value}, LocalType(result, reachable)), reachable};
      STABLERT_ASSIGN_OR_RETURN(reshaped, Reshard(reshaped, spec, DimsOf(result)));
      Set(result, reshaped);
      return OkStatus();
    }
    default:
      return RewriteWhole(op);
  }
}

}  // namespace stablert::passes::partitioning
