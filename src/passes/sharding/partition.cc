// SPMD partitioning (partition.h): the entry function copied with fresh values (calls were
// inlined by passes/inline_calls.h before), shardings
// propagated over it, then its rewrite into the program of one partition (the rules in
// partition_rules.cc, resharding in partition_reshard.cc).
#include <algorithm>

#include "ir/verifier.h"
#include "passes/walk.h"
#include "passes/sharding/partitioner.h"

namespace stablert::passes {
namespace partitioning {

//===--- Step 1 ---===//

ir::Region Partitioner::CloneRegion(const ir::Region& region, std::unordered_map<ValueId, ValueId>& map) {
  return passes::CloneRegion(out_, region, map);
}

ir::Operation Partitioner::Clone(const ir::Operation& op, std::unordered_map<ValueId, ValueId>& map) {
  return CloneOp(out_, op, map);
}

Status Partitioner::Flatten(const ir::Block& block, std::unordered_map<ValueId, ValueId>& map,
                            std::vector<ValueId>* returned, int depth, std::vector<ir::Operation>* out) {
  if (depth > kMaxInlineDepth) return NotCovered("calls nest too deeply");
  if (out == nullptr) out = &ops_;
  for (const ir::Operation& op : block.ops) {
    if (op.code == OpCode::kWhile) {
      // Loop bodies are copied too, so they can be partitioned.
      ir::Operation copy;
      copy.code = op.code;
      copy.attrs = op.attrs;
      copy.location = op.location;
      for (ValueId v : op.operands) copy.operands.push_back(map.count(v) ? map[v] : v);
      for (const ir::Region& region : op.regions) {
        if (region.blocks.size() != 1) return NotCovered("a loop region with several blocks");
        ir::Region& r = copy.regions.emplace_back();
        ir::Block& b = r.blocks.emplace_back();
        for (ValueId arg : region.blocks[0].arguments) {
          ValueId fresh = out_.AddValue(out_.type_of(arg));
          map[arg] = fresh;
          b.arguments.push_back(fresh);
        }
        ir::Operation ret;
        ret.code = OpCode::kReturn;
        STABLERT_RETURN_IF_ERROR(Flatten(region.blocks[0], map, &ret.operands, depth + 1, &b.ops));
        b.ops.push_back(std::move(ret));
      }
      for (ValueId v : op.results) {
        ValueId fresh = out_.AddValue(out_.type_of(v));
        map[v] = fresh;
        copy.results.push_back(fresh);
      }
      out->push_back(std::move(copy));
      continue;
    }
    if (op.code == OpCode::kReturn) {
      returned->clear();
      for (ValueId v : op.operands) returned->push_back(map.count(v) ? map[v] : v);
      return OkStatus();
    }
    out->push_back(Clone(op, map));
  }
  return NotCovered("a block without a return");
}

//===--- Step 2 ---===//

StatusOr<Spec> Partitioner::ToSpec(const TensorSharding& sharding, const std::string& what) {
  if (sharding.maximal_partition >= 0) return NotCovered(what + " has a maximal sharding");
  Spec spec;
  const bool sharded = !sharding.IsReplicated();
  if (sharded) {
    if (!mesh_) {
      mesh_.emplace(sharding.mesh, partitions_);
    } else if (!SameMesh(mesh_->mesh(), sharding.mesh)) {
      return NotCovered(what + " uses another mesh");
    }
  }
  auto axis_of = [&](const AxisRef& ref) -> StatusOr<int> {
    if (ref.size != 0 && ref.size != sharding.mesh.axes[static_cast<size_t>(ref.axis)].size)
      return NotCovered(what + " splits a sub-axis");
    return ref.axis;
  };
  for (const auto& refs : sharding.dims) {
    std::vector<int>& axes = spec.dims.emplace_back();
    for (const AxisRef& ref : refs) {
      STABLERT_ASSIGN_OR_RETURN(int axis, axis_of(ref));
      axes.push_back(axis);
    }
  }
  for (const AxisRef& ref : sharding.unreduced) {
    STABLERT_ASSIGN_OR_RETURN(int axis, axis_of(ref));
    spec.unreduced.push_back(axis);
  }
  std::sort(spec.unreduced.begin(), spec.unreduced.end());
  return spec;
}

StatusOr<Spec> Partitioner::ParseSpec(const ir::Attribute::Dictionary& attrs, int64_t rank, const std::string& what) {
  STABLERT_ASSIGN_OR_RETURN(TensorSharding sharding, ParseSharding(in_, attrs, rank, partitions_, what));
  STABLERT_ASSIGN_OR_RETURN(Spec spec, ToSpec(sharding, what));
  if (spec.dims.size() != static_cast<size_t>(rank)) return NotCovered(what + " has a sharding of another rank");
  return spec;
}

StatusOr<Spec> Partitioner::ParseSdySpec(const ir::Attribute& attr, int64_t rank, const std::string& what) {
  ir::Attribute::Dictionary attrs;
  attrs.emplace_back("sdy.sharding", attr);
  return ParseSpec(attrs, rank, what);
}

TensorSharding Partitioner::ToSharding(const Spec& spec) const {
  TensorSharding sharding;
  sharding.mesh = mesh_->mesh();
  for (const auto& axes : spec.dims) {
    auto& refs = sharding.dims.emplace_back();
    for (int a : axes) refs.push_back(AxisRef{a, 1, 0});
  }
  for (int a : spec.unreduced) sharding.unreduced.push_back(AxisRef{a, 1, 0});
  return sharding;
}

Status Partitioner::Seed() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const ir::Type type = out_.type_of(params_[i]);
    if (type.kind == ir::Type::Kind::kToken) {
      // A token (ordered effects) is a zero-byte value every partition holds.
      param_specs_.push_back(Replicated(0));
      continue;
    }
    if (!type.is_tensor()) return NotCovered("a parameter that is not a tensor");
    STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSpec(i < entry_->argument_attrs.size() ? entry_->argument_attrs[i]
                                                                                     : ir::Attribute::Dictionary{},
                                                   type.rank(), "parameter " + std::to_string(i)));
    param_specs_.push_back(spec);
  }
  for (size_t i = 0; i < returned_.size(); ++i) {
    const ir::Type type = out_.type_of(returned_[i]);
    if (type.kind == ir::Type::Kind::kToken) {
      wanted_results_.push_back(Replicated(0));
      continue;
    }
    if (!type.is_tensor()) return NotCovered("a result that is not a tensor");
    const ir::Attribute::Dictionary& attrs = entry_->result_attrs[i];
    const ir::Attribute* sdy = ir::FindAttr(attrs, "sdy.sharding");
    if (sdy && IsUnconstrainedSharding(*sdy)) {
      wanted_results_.emplace_back();
      continue;
    }
    if (!sdy && !ir::FindAttr(attrs, "mhlo.sharding")) {
      wanted_results_.emplace_back();
      continue;
    }
    STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSpec(attrs, type.rank(), "result " + std::to_string(i)));
    wanted_results_.push_back(spec);
  }
  STABLERT_RETURN_IF_ERROR(SeedOps(ops_));
  for (size_t i = 0; i < params_.size(); ++i) {
    spec_[params_[i]] = param_specs_[i];
    fixed_.insert(params_[i]);
  }
  if (!mesh_) return NotCovered("nothing in the program is sharded");
  // Results and manual regions' operands want their shardings: seeds for backward propagation.
  for (size_t i = 0; i < returned_.size(); ++i)
    if (wanted_results_[i] && !spec_.count(returned_[i])) spec_[returned_[i]] = *wanted_results_[i];
  for (const ir::Operation& op : ops_) {
    if (op.code != OpCode::kSdyManualComputation) continue;
    const ir::Attribute::Array* ins = ShardingArray(op, "in_shardings");
    if (!ins || ins->size() != op.operands.size()) return NotCovered("a manual region without in_shardings");
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ir::Type type = out_.type_of(op.operands[i]);
      if (!type.is_tensor() || spec_.count(op.operands[i])) continue;
      STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSdySpec((*ins)[i], type.rank(), "a manual region's operand"));
      spec.unreduced.clear();
      if (spec.Sharded()) spec_[op.operands[i]] = spec;
    }
  }
  return OkStatus();
}

Status Partitioner::SeedOps(const std::vector<ir::Operation>& ops) {
  for (const ir::Operation& op : ops) {
    if (op.code == OpCode::kSdyShardingConstraint || op.code == OpCode::kSdyReshard) {
      const ir::Attribute* attr = op.attr("sharding");
      if (!attr) return NotCovered("a sharding constraint without a sharding");
      if (IsUnconstrainedSharding(*attr)) continue;
      STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSdySpec(*attr, out_.type_of(op.results[0]).rank(),
                                                        "a sharding constraint"));
      spec_[op.results[0]] = spec;
      fixed_.insert(op.results[0]);
    } else if (op.code == OpCode::kSdyManualComputation) {
      const ir::Attribute::Array* outs = ShardingArray(op, "out_shardings");
      if (!outs || outs->size() != op.results.size()) return NotCovered("a manual region without out_shardings");
      for (size_t i = 0; i < op.results.size(); ++i) {
        const ir::Type type = out_.type_of(op.results[i]);
        if (!type.is_tensor()) continue;
        STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSdySpec((*outs)[i], type.rank(), "a manual region's result"));
        spec_[op.results[i]] = spec;
        fixed_.insert(op.results[i]);
      }
    } else if (op.code == OpCode::kWhile) {
      for (const ir::Region& region : op.regions)
        for (const ir::Block& block : region.blocks) STABLERT_RETURN_IF_ERROR(SeedOps(block.ops));
    }
  }
  return OkStatus();
}

bool Partitioner::PropagateAll(const std::vector<ir::Operation>& ops, bool backwards) {
  bool changed = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    const ir::Operation& op = ops[backwards ? ops.size() - 1 - k : k];
    changed |= Propagate(op);
    if (op.code == OpCode::kWhile)
      for (const ir::Region& region : op.regions)
        for (const ir::Block& block : region.blocks) changed |= PropagateAll(block.ops, backwards);
  }
  return changed;
}

std::vector<Link> Partitioner::LinksOf(const ir::Operation& op) const {
  std::vector<Link> links;
  if (op.results.empty() || !out_.type_of(op.results[0]).is_tensor()) return links;
  const ValueId result = op.results[0];
  const int64_t rank = out_.type_of(result).rank();
  if (IsSameShapeOp(out_, op) || op.code == OpCode::kSdyShardingConstraint || op.code == OpCode::kSdyReshard) {
    for (ValueId operand : op.operands)
      if (out_.type_of(operand).rank() == rank)
        for (int64_t d = 0; d < rank; ++d) links.push_back({operand, d, result, d});
    return links;
  }
  switch (op.code) {
    case OpCode::kBroadcastInDim: {
      std::vector<int64_t> dims = IntList(op, "broadcast_dimensions");
      const Dims from = DimsOf(op.operands[0]);
      for (size_t i = 0; i < dims.size() && i < from.size(); ++i)
        if (dims[i] >= 0 && dims[i] < rank && from[i] == DimsOf(result)[static_cast<size_t>(dims[i])])
          links.push_back({op.operands[0], static_cast<int64_t>(i), result, dims[i]});
      break;
    }
    case OpCode::kTranspose: {
      std::vector<int64_t> perm = IntList(op, "permutation");
      for (size_t j = 0; j < perm.size(); ++j) links.push_back({op.operands[0], perm[j], result, static_cast<int64_t>(j)});
      break;
    }
    case OpCode::kReshape:
      for (auto [e, d] : ReshapeDimPairs(DimsOf(op.operands[0]), DimsOf(result)))
        links.push_back({op.operands[0], e, result, d});
      break;
    case OpCode::kReduce: {
      const size_t n = op.results.size();
      if (op.operands.size() != 2 * n) break;
      std::vector<int64_t> reduced = IntList(op, "dimensions");
      for (size_t k = 0; k < n; ++k) {
        int64_t r = 0;
        for (int64_t e = 0; e < out_.type_of(op.operands[k]).rank(); ++e) {
          if (std::find(reduced.begin(), reduced.end(), e) != reduced.end()) continue;
          links.push_back({op.operands[k], e, op.results[k], r++});
        }
      }
      break;
    }
    case OpCode::kWhile: {
      // A carry's operand, result, and the loop's block arguments and body results.
      if (op.regions.size() != 2) break;
      const ir::Block* cond = op.regions[0].blocks.empty() ? nullptr : &op.regions[0].blocks[0];
      const ir::Block* body = op.regions[1].blocks.empty() ? nullptr : &op.regions[1].blocks[0];
      if (!cond || !body || body->ops.empty()) break;
      const ir::Operation& ret = body->ops.back();
      for (size_t i = 0; i < op.operands.size() && i < op.results.size(); ++i) {
        if (!out_.type_of(op.operands[i]).is_tensor()) continue;
        for (int64_t d = 0; d < out_.type_of(op.operands[i]).rank(); ++d) {
          links.push_back({op.operands[i], d, op.results[i], d});
          if (i < cond->arguments.size()) links.push_back({op.operands[i], d, cond->arguments[i], d});
          if (i < body->arguments.size()) links.push_back({op.operands[i], d, body->arguments[i], d});
          if (i < ret.operands.size()) links.push_back({ret.operands[i], d, op.results[i], d});
        }
      }
      break;
    }
    case OpCode::kSlice:
    case OpCode::kDynamicSlice:
    case OpCode::kDynamicUpdateSlice: {
      // Dimensions taken whole.
      const Dims from = DimsOf(op.operands[0]);
      const Dims to = DimsOf(result);
      for (int64_t d = 0; d < rank && static_cast<size_t>(d) < from.size(); ++d) {
        if (from[static_cast<size_t>(d)] != to[static_cast<size_t>(d)]) continue;
        links.push_back({op.operands[0], d, result, d});
        if (op.code == OpCode::kDynamicUpdateSlice &&
            DimsOf(op.operands[1])[static_cast<size_t>(d)] == to[static_cast<size_t>(d)])
          links.push_back({op.operands[1], d, result, d});
      }
      break;
    }
    case OpCode::kGather: {
      // A row of the result comes from its row of indices: the batch dimensions match.
      if (op.operands.size() != 2 || !IntList(op, "operand_batching_dims").empty()) break;
      for (auto [e, r] : GatherBatchDims(op, out_)) links.push_back({op.operands[1], e, result, r});
      break;
    }
    case OpCode::kScatter: {
      // Element scatters: the updates are laid out as the indices' batch dimensions.
      if (op.operands.size() != 3 || !IntList(op, "update_window_dims").empty()) break;
      const ir::Attribute* vector_dim_attr = op.attr("index_vector_dim");
      const int64_t vector_dim = vector_dim_attr ? vector_dim_attr->AsInt().value_or(-1) : -1;
      const int64_t index_rank = out_.type_of(op.operands[1]).rank();
      for (int64_t e = 0, u = 0; e < index_rank; ++e)
        if (e != vector_dim) links.push_back({op.operands[1], e, op.operands[2], u++});
      break;
    }
    case OpCode::kReduceWindow:
    case OpCode::kSelectAndScatter: {
      // Dimensions the window does not span: operands (and the scattered source) as results.
      const std::vector<bool> pointwise = PointwiseWindowDims(op, static_cast<size_t>(rank));
      const size_t inputs = op.code == OpCode::kReduceWindow ? op.results.size() : 2;
      for (int64_t d = 0; d < rank; ++d) {
        if (!pointwise[static_cast<size_t>(d)]) continue;
        for (size_t k = 0; k < inputs && k < op.operands.size(); ++k)
          links.push_back({op.operands[k], d, op.code == OpCode::kReduceWindow ? op.results[k] : result, d});
      }
      break;
    }
    case OpCode::kConvolution: {
      // Batch to batch, kernel output features to output features, input features with the
      // kernel's input features (ungrouped convolutions only).
      const ir::Attribute* features = op.attr("feature_group_count");
      const ir::Attribute* batches = op.attr("batch_group_count");
      if ((features && features->AsInt().value_or(1) != 1) || (batches && batches->AsInt().value_or(1) != 1)) break;
      auto dim = [&](const char* name) {
        const ir::Attribute* attr = op.attr(name);
        return attr ? attr->AsInt().value_or(-1) : -1;
      };
      const int64_t in_batch = dim("input_batch_dimension"), in_feature = dim("input_feature_dimension");
      const int64_t k_in = dim("kernel_input_feature_dimension"), k_out = dim("kernel_output_feature_dimension");
      const int64_t out_batch = dim("output_batch_dimension"), out_feature = dim("output_feature_dimension");
      if (std::min({in_batch, in_feature, k_in, k_out, out_batch, out_feature}) < 0) break;
      links.push_back({op.operands[0], in_batch, result, out_batch});
      links.push_back({op.operands[1], k_out, result, out_feature});
      links.push_back({op.operands[0], in_feature, op.operands[1], k_in});
      break;
    }
    case OpCode::kDotGeneral: {
      std::vector<int64_t> lb = IntList(op, "lhs_batching_dimensions"), rb = IntList(op, "rhs_batching_dimensions");
      std::vector<int64_t> lc = IntList(op, "lhs_contracting_dimensions"),
                           rc = IntList(op, "rhs_contracting_dimensions");
      const ValueId lhs = op.operands[0], rhs = op.operands[1];
      int64_t r = 0;
      for (size_t i = 0; i < lb.size() && i < rb.size(); ++i, ++r) {
        links.push_back({lhs, lb[i], result, r});
        links.push_back({rhs, rb[i], result, r});
      }
      for (int64_t e = 0; e < out_.type_of(lhs).rank(); ++e)
        if (std::count(lb.begin(), lb.end(), e) + std::count(lc.begin(), lc.end(), e) == 0)
          links.push_back({lhs, e, result, r++});
      for (int64_t e = 0; e < out_.type_of(rhs).rank(); ++e)
        if (std::count(rb.begin(), rb.end(), e) + std::count(rc.begin(), rc.end(), e) == 0)
          links.push_back({rhs, e, result, r++});
      for (size_t i = 0; i < lc.size() && i < rc.size(); ++i) links.push_back({lhs, lc[i], rhs, rc[i]});
      break;
    }
    default:
      break;
  }
  return links;
}

// Fills the shardings of `op`'s unsharded values from its sharded ones along its links.
// Returns whether anything changed.
bool Partitioner::Propagate(const ir::Operation& op) {
  std::vector<Link> links = LinksOf(op);
  if (links.empty()) return false;
  std::set<ValueId> targets;
  for (const Link& link : links) {
    targets.insert(link.a);
    targets.insert(link.b);
  }
  bool changed = false;
  for (ValueId target : targets) {
    if (spec_.count(target)) continue;
    const Dims dims = DimsOf(target);
    Spec spec = Replicated(dims.size());
    for (const Link& link : links) {
      ValueId other;
      int64_t from_dim, to_dim;
      if (link.a == target && link.b != target) {
        other = link.b, from_dim = link.b_dim, to_dim = link.a_dim;
      } else if (link.b == target && link.a != target) {
        other = link.a, from_dim = link.a_dim, to_dim = link.b_dim;
      } else {
        continue;
      }
      auto it = spec_.find(other);
      if (it == spec_.end() || static_cast<size_t>(from_dim) >= it->second.dims.size()) continue;
      const std::vector<int>& axes = it->second.dims[static_cast<size_t>(from_dim)];
      if (axes.empty() || !spec.dims[static_cast<size_t>(to_dim)].empty()) continue;
      if (dims[static_cast<size_t>(to_dim)] % mesh_->Pieces(axes) != 0) continue;
      if (std::any_of(axes.begin(), axes.end(), [&](int a) { return spec.Uses(a); })) continue;
      spec.dims[static_cast<size_t>(to_dim)] = axes;
    }
    if (!spec.Sharded()) continue;
    spec_[target] = std::move(spec);
    changed = true;
  }
  return changed;
}


void Partitioner::DropUnusedFunctions() {
  // Calls were inlined into the entry; only functions still called from it (in nested
  // regions or manual bodies) stay.
  std::set<std::string> used;
  std::vector<const ir::Function*> work = {out_.EntryFunction()};
  auto visit = [&](auto&& self, const ir::Region& region) -> void {
    for (const ir::Block& block : region.blocks)
      for (const ir::Operation& op : block.ops) {
        for (const char* name : {"callee", "decomposition"})
          if (const ir::Attribute* attr = op.attr(name))
            if (auto callee = attr->AsString())
              if (used.insert(std::string(*callee)).second)
                if (const ir::Function* f = out_.FindFunction(*callee)) work.push_back(f);
        for (const ir::Region& inner : op.regions) self(self, inner);
      }
  };
  while (!work.empty()) {
    const ir::Function* f = work.back();
    work.pop_back();
    visit(visit, f->body);
  }
  const std::string entry = out_.EntryFunction()->name;
  std::erase_if(out_.functions, [&](const ir::Function& f) { return f.name != entry && !used.count(f.name); });
}

void Partitioner::CombineAllReduces(ir::Block& block) {
  std::unordered_map<ValueId, size_t> defined_at;  // value -> index in `kept` (+1; 0: argument)
  std::vector<ir::Operation> kept;
  struct Open {
    size_t index;  // into kept
    std::string key;
  };
  std::vector<Open> open;
  for (ir::Operation& op : block.ops) {
    for (ir::Region& region : op.regions)
      if (op.code == OpCode::kWhile)
        for (ir::Block& inner : region.blocks) CombineAllReduces(inner);
    std::optional<OpCode> reduction =
        op.code == OpCode::kAllReduce && op.regions.size() == 1 ? SimpleReduction(op.regions[0]) : std::nullopt;
    if (reduction && op.operands.size() == 1 && op.results.size() == 1) {
      const ir::Attribute* groups = op.attr("replica_groups");
      const std::string key = std::to_string(static_cast<int>(*reduction)) + "/" +
                              std::string(DTypeName(out_.type_of(op.operands[0]).dtype)) + "/" +
                              (groups ? ir::AttributeToString(*groups) : "");
      const size_t operand_at = defined_at.count(op.operands[0]) ? defined_at[op.operands[0]] : 0;
      auto match = std::find_if(open.begin(), open.end(), [&](const Open& o) {
        return o.key == key && operand_at <= o.index;  // the operand exists before that all_reduce
      });
      if (match != open.end()) {
        ir::Operation& combined = kept[match->index];
        combined.operands.push_back(op.operands[0]);
        combined.results.push_back(op.results[0]);
        defined_at[op.results[0]] = match->index + 1;
        continue;
      }
      open.push_back({kept.size(), key});
    }
    for (ValueId v : op.results) defined_at[v] = kept.size() + 1;
    kept.push_back(std::move(op));
  }
  block.ops = std::move(kept);
}

void Partitioner::EliminateDeadOps() {
  std::unordered_set<ValueId> used;
  auto mark_region_uses = [&](auto&& self, const ir::Region& region) -> void {
    for (const ir::Block& block : region.blocks)
      for (const ir::Operation& op : block.ops) {
        used.insert(op.operands.begin(), op.operands.end());
        for (const ir::Region& inner : op.regions) self(self, inner);
      }
  };
  std::vector<bool> live(body_.ops.size(), false);
  for (size_t i = body_.ops.size(); i-- > 0;) {
    const ir::Operation& op = body_.ops[i];
    // Host transfers stay whether or not their tokens are used: their effect is the callback.
    bool needed = op.code == OpCode::kReturn || op.results.empty() || ContainsHostTransfer(op) ||
                  std::any_of(op.results.begin(), op.results.end(), [&](ValueId v) { return used.count(v) > 0; });
    if (!needed) continue;
    live[i] = true;
    used.insert(op.operands.begin(), op.operands.end());
    for (const ir::Region& region : op.regions) mark_region_uses(mark_region_uses, region);
  }
  std::vector<ir::Operation> kept;
  for (size_t i = 0; i < body_.ops.size(); ++i)
    if (live[i]) kept.push_back(std::move(body_.ops[i]));
  body_.ops = std::move(kept);
}

Status Partitioner::Rewrite() {
  ir::Function& main = *const_cast<ir::Function*>(out_.EntryFunction());
  std::vector<ir::Type> argument_types;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Spec& spec = param_specs_[i];
    if (!Fits(spec, DimsOf(params_[i]), *mesh_)) return NotCovered("a parameter that does not split evenly");
    ir::Type type = LocalType(params_[i], spec);
    ValueId local = out_.AddValue(type);
    body_.arguments.push_back(local);
    argument_types.push_back(type);
    Set(params_[i], Local{local, spec});
  }
  for (const ir::Operation& op : ops_) {
    Status status = RewriteOp(op);
    if (!status.ok()) return status;
  }
  std::vector<ir::Type> result_types;
  ir::Operation ret;
  ret.code = OpCode::kReturn;
  std::vector<TensorSharding> result_shardings;
  for (size_t i = 0; i < returned_.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(Local local, Get(returned_[i]));
    Spec target = wanted_results_[i] ? *wanted_results_[i] : SpecOf(returned_[i]);
    if (!wanted_results_[i]) {
      // A result left to the compiler follows the data it is computed from, as the global
      // view picks it (result_sharding.cc); dimensions that do not split evenly stay whole.
      if (auto chosen = PropagatedResultSharding(in_, *entry_, i, partitions_)) {
        auto spec = ToSpec(*chosen, "result " + std::to_string(i));
        if (spec.ok() && spec->dims.size() == target.dims.size()) target = *spec;
      }
      target.unreduced.clear();
      for (size_t d = 0; d < target.dims.size(); ++d)
        if (DimsOf(returned_[i])[d] % mesh_->Pieces(target.dims[d]) != 0) target.dims[d].clear();
      if (!Fits(target, DimsOf(returned_[i]), *mesh_)) target = Replicated(DimsOf(returned_[i]).size());
    }
    STABLERT_ASSIGN_OR_RETURN(local, Reshard(local, target, DimsOf(returned_[i])));
    ret.operands.push_back(local.value);
    result_types.push_back(out_.type_of(local.value));
    wanted_results_[i] = target;
  }
  body_.ops.push_back(std::move(ret));
  EliminateDeadOps();
  CombineAllReduces(body_);
  main.argument_types = std::move(argument_types);
  main.result_types = std::move(result_types);
  auto drop_shardings = [](std::vector<ir::Attribute::Dictionary>& all) {
    for (ir::Attribute::Dictionary& attrs : all)
      std::erase_if(attrs, [](const ir::NamedAttribute& a) { return a.first == "sdy.sharding" || a.first == "mhlo.sharding"; });
  };
  drop_shardings(main.argument_attrs);
  drop_shardings(main.result_attrs);
  main.body.blocks.clear();
  main.body.blocks.push_back(std::move(body_));
  out_.meshes.clear();
  DropUnusedFunctions();
  return OkStatus();
}

StatusOr<PartitionedProgram> Partitioner::Run() {
  entry_ = in_.EntryFunction();
  if (!entry_ || entry_->body.blocks.size() != 1) return NotCovered("no single-block entry function");
  if (const ir::Attribute* replicas = ir::FindAttr(in_.attrs, "mhlo.num_replicas"))
    if (replicas->AsInt().value_or(1) != 1) return NotCovered("a program with several replicas");
  std::unordered_map<ValueId, ValueId> map;
  for (ValueId arg : entry_->body.blocks[0].arguments) {
    ValueId fresh = out_.AddValue(out_.type_of(arg));
    map[arg] = fresh;
    params_.push_back(fresh);
  }
  STABLERT_RETURN_IF_ERROR(Flatten(entry_->body.blocks[0], map, &returned_, 0));
  if (returned_.size() != entry_->result_types.size() || entry_->result_attrs.size() != returned_.size())
    return NotCovered("results that do not match the entry's signature");
  auto define = [&](auto&& self, const std::vector<ir::Operation>& ops) -> void {
    for (const ir::Operation& op : ops) {
      for (ValueId v : op.results) def_[v] = &op;
      if (op.code == OpCode::kWhile)
        for (const ir::Region& region : op.regions)
          for (const ir::Block& block : region.blocks) self(self, block.ops);
    }
  };
  define(define, ops_);
  STABLERT_RETURN_IF_ERROR(Seed());
  for (int sweep = 0; sweep < 8; ++sweep) {
    bool changed = PropagateAll(ops_, /*backwards=*/false);
    changed |= PropagateAll(ops_, /*backwards=*/true);
    if (!changed) break;
  }
  STABLERT_RETURN_IF_ERROR(Rewrite());
  Status verified = ir::Verify(out_);
  if (!verified.ok()) return NotCovered("the partitioned program does not verify: " + std::string(verified.message()));
  PartitionedProgram program{std::move(out_), {}, {}};
  for (const Spec& spec : param_specs_) program.parameter_shardings.push_back(ToSharding(spec));
  for (const auto& spec : wanted_results_) program.result_shardings.push_back(ToSharding(*spec));
  return program;
}


}  // namespace partitioning

StatusOr<PartitionedProgram> PartitionProgram(const ir::Module& module, int64_t num_partitions) {
  if (num_partitions <= 1) return partitioning::NotCovered("a program on one partition");
  return partitioning::Partitioner(module, num_partitions).Run();
}

}  // namespace stablert::passes
