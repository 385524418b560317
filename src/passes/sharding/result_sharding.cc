// Shardings of results the program leaves open: found by following each result back through
// the ops it comes from (sharding.h, PropagatedResultSharding).
//
// The rules, per op (a value's sharding is a TensorSharding; "none" means replicated):
//   entry parameter                  its sdy.sharding / mhlo.sharding
//   call result                      the callee's returned value (parameters bound to operands)
//   sharding_constraint, reshard     the op's sharding; its open unsharded dims ({?}) keep
//                                    the operand's
//   concatenate                      the first sharded operand's, the concatenated dim whole
//   gather                           the operand's on dims sliced whole (offset dims)
//   while, if, case result r         the region's returned value r (first branch carrying one);
//                                    a while's region arguments stand for its operands
//   manual_computation result r      out_shardings[r]; open dims: the body's value r on the
//                                    automatic axes
//   elementwise ops, convert         the first operand of the result's shape that is sharded
//   transpose                        the operand's, permuted
//   slice, dynamic_slice, pad,       the operand's
//   reverse
//   broadcast_in_dim                 the operand's on the dims it maps to (same size only)
//   reshape                          the operand's, through splits and merges of dims (Reshaped)
//   reduce                           the operand's without the reduced dims
//   dot_general                      batch dims from lhs (else rhs), free dims from their side;
//                                    an axis already used is dropped from later dims
// Anything else ends the walk (replicated). Like a sharding propagation pass, this keeps the
// partitioning of the data the result is computed from, so the result stays sharded.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "passes/sharding/sharding.h"

namespace stablert::passes {
namespace {

using ir::OpCode;

class Propagator {
 public:
  // The shardings of `function`'s parameters: for the entry function its argument
  // attributes; for a called function, what the caller's operands carry.
  using ParameterShardings = std::function<std::optional<TensorSharding>(size_t index, int depth)>;

  Propagator(const ir::Module& module, const ir::Function& function, int64_t num_partitions,
             ParameterShardings parameters = nullptr)
      : module_(module), function_(function), num_partitions_(num_partitions), parameters_(std::move(parameters)) {
    const ir::Block& block = function.body.blocks.front();
    Index(block);
    for (size_t i = 0; i < block.arguments.size(); ++i) parameter_[block.arguments[i]] = i;
  }

  std::optional<TensorSharding> Of(ir::ValueId value, int depth = 0) {
    if (depth > 512) return std::nullopt;
    if (auto it = memo_.find(value); it != memo_.end()) return it->second;
    std::optional<TensorSharding> sharding = Compute(value, depth);
    if (sharding && sharding->IsReplicated()) sharding.reset();
    memo_[value] = sharding;
    return sharding;
  }

 private:
  // Records the defining op of every value of `block` and of the regions nested in it; the
  // block arguments of a while loop's regions stand for its carried operands.
  void Index(const ir::Block& block) {
    for (const ir::Operation& op : block.ops) {
      for (size_t r = 0; r < op.results.size(); ++r) defining_[op.results[r]] = {&op, r};
      for (const ir::Region& region : op.regions)
        for (const ir::Block& inner : region.blocks) {
          if (op.code == OpCode::kWhile)
            for (size_t i = 0; i < inner.arguments.size(); ++i) carried_[inner.arguments[i]] = {&op, i};
          Index(inner);
        }
    }
  }

  // A result of while/if/case: what the region's returned value carries (the first branch
  // that carries a sharding), else for a while loop its initial value's.
  std::optional<TensorSharding> RegionResult(const ir::Operation& op, size_t result, int depth) {
    const size_t first_region = op.code == OpCode::kWhile ? 1 : 0;  // a while's body follows its condition
    for (size_t i = first_region; i < op.regions.size(); ++i) {
      const ir::Region& region = op.regions[i];
      if (region.blocks.empty() || region.blocks.back().ops.empty()) continue;
      const ir::Operation& terminator = region.blocks.back().ops.back();
      if (result < terminator.operands.size())
        if (auto sharding = Of(terminator.operands[result], depth + 1)) return sharding;
    }
    if (op.code == OpCode::kWhile && result < op.operands.size()) return Of(op.operands[result], depth + 1);
    return std::nullopt;
  }

  int64_t Rank(ir::ValueId value) const { return static_cast<int64_t>(module_.type_of(value).dims.size()); }

  std::optional<TensorSharding> Parse(const ir::Attribute::Dictionary& attrs, int64_t rank) const {
    auto sharding = ParseSharding(module_, attrs, rank, num_partitions_, "result sharding");
    if (!sharding.ok() || sharding->maximal_partition >= 0) return std::nullopt;
    return *sharding;
  }

  std::optional<TensorSharding> ParseSdy(const ir::Attribute* attr, int64_t rank) const {
    if (attr == nullptr) return std::nullopt;
    ir::Attribute::Dictionary attrs;
    attrs.emplace_back("sdy.sharding", *attr);
    return Parse(attrs, rank);
  }

  std::optional<TensorSharding> Compute(ir::ValueId value, int depth) {
    if (auto it = parameter_.find(value); it != parameter_.end()) {
      if (parameters_) return parameters_(it->second, depth + 1);
      if (it->second >= function_.argument_attrs.size()) return std::nullopt;
      return Parse(function_.argument_attrs[it->second], Rank(value));
    }
    if (auto carried = carried_.find(value); carried != carried_.end()) {
      const auto& [loop, index] = carried->second;
      return index < loop->operands.size() ? Of(loop->operands[index], depth + 1) : std::nullopt;
    }
    auto it = defining_.find(value);
    if (it == defining_.end()) return std::nullopt;
    const ir::Operation& op = *it->second.first;
    const size_t result = it->second.second;
    const Dims& dims = module_.type_of(value).dims;
    switch (op.code) {
      case OpCode::kSdyShardingConstraint:
      case OpCode::kSdyReshard:
        return Constrained(op, value, depth);
      case OpCode::kConcatenate: {
        // The first sharded operand's sharding, the concatenated dimension left whole.
        auto dimension = op.attr("dimension") ? op.attr("dimension")->AsInt() : std::nullopt;
        if (!dimension || *dimension < 0 || static_cast<size_t>(*dimension) >= dims.size()) return std::nullopt;
        for (ir::ValueId operand : op.operands) {
          auto from = Of(operand, depth + 1);
          if (!from || from->dims.size() != dims.size()) continue;
          from->dims[static_cast<size_t>(*dimension)].clear();
          return from;
        }
        return std::nullopt;
      }
      case OpCode::kSort:
        // Sorted arrays keep their operands' shardings (the sorted dimension too, as XLA).
        return result < op.operands.size() ? Of(op.operands[result], depth + 1) : std::nullopt;
      case OpCode::kSdyManualComputation:
        return ManualResult(op, result, value, depth);
      case OpCode::kTranspose: {
        auto from = Of(op.operands[0], depth + 1);
        auto perm = op.attr("permutation") ? op.attr("permutation")->AsIntArray() : std::nullopt;
        if (!from || !perm || perm->size() != dims.size()) return std::nullopt;
        TensorSharding out = *from;
        for (size_t d = 0; d < dims.size(); ++d) out.dims[d] = from->dims[static_cast<size_t>((*perm)[d])];
        return out;
      }
      case OpCode::kBroadcastInDim: {
        auto from = Of(op.operands[0], depth + 1);
        auto map = op.attr("broadcast_dimensions") ? op.attr("broadcast_dimensions")->AsIntArray() : std::nullopt;
        const Dims& in = module_.type_of(op.operands[0]).dims;
        if (!from || !map || map->size() != in.size()) return std::nullopt;
        TensorSharding out = *from;
        out.dims.assign(dims.size(), {});
        for (size_t j = 0; j < in.size(); ++j)
          if (in[j] == dims[static_cast<size_t>((*map)[j])]) out.dims[static_cast<size_t>((*map)[j])] = from->dims[j];
        return out;
      }
      case OpCode::kReshape: {
        auto from = Of(op.operands[0], depth + 1);
        if (!from) return std::nullopt;
        return Reshaped(*from, module_.type_of(op.operands[0]).dims, dims);
      }
      case OpCode::kSlice:
      case OpCode::kDynamicSlice:
      case OpCode::kPad:
      case OpCode::kReverse:
        // Same dims, new extents: the operand's sharding (a dim that no longer splits evenly
        // is left whole by the caller).
        return op.operands.empty() ? std::nullopt : Of(op.operands[0], depth + 1);
      case OpCode::kReduce: {
        if (op.operands.empty()) return std::nullopt;
        auto from = Of(op.operands[0], depth + 1);
        auto reduced = op.attr("dimensions") ? op.attr("dimensions")->AsIntArray() : std::nullopt;
        if (!from || !reduced) return std::nullopt;
        TensorSharding out = *from;
        out.dims.clear();
        for (size_t d = 0; d < from->dims.size(); ++d)
          if (std::find(reduced->begin(), reduced->end(), static_cast<int64_t>(d)) == reduced->end())
            out.dims.push_back(from->dims[d]);
        if (out.dims.size() != dims.size()) return std::nullopt;
        return out;
      }
      case OpCode::kGather:
        return Gather(op, value, depth);
      case OpCode::kWhile:
      case OpCode::kIf:
      case OpCode::kCase:
        return RegionResult(op, result, depth);
      case OpCode::kDotGeneral:
        return DotGeneral(op, value, depth);
      case OpCode::kCall:
        return CallResult(op, result, depth);
      default:
        break;
    }
    if (!ir::IsElementwise(op.code) && op.code != OpCode::kOptimizationBarrier) return std::nullopt;
    for (ir::ValueId operand : op.operands) {
      if (module_.type_of(operand).dims != dims) continue;
      if (auto sharding = Of(operand, depth + 1)) return sharding;
    }
    return std::nullopt;
  }

  // gather: the operand's sharding on the dims a slice takes whole (offset dims passed
  // through); the other result dims whole.
  std::optional<TensorSharding> Gather(const ir::Operation& op, ir::ValueId value, int depth) {
    if (op.operands.empty()) return std::nullopt;
    auto from = Of(op.operands[0], depth + 1);
    auto list = [&](const char* name) {
      const ir::Attribute* attr = op.attr(name);
      return attr ? attr->AsIntArray() : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    };
    auto offset_dims = list("offset_dims"), collapsed = list("collapsed_slice_dims"),
         batching = list("operand_batching_dims"), sizes = list("slice_sizes");
    const Dims& in = module_.type_of(op.operands[0]).dims;
    const Dims& out_dims = module_.type_of(value).dims;
    if (!from || !offset_dims || !collapsed || !batching || !sizes || sizes->size() != in.size()) return std::nullopt;
    TensorSharding out = *from;
    out.dims.assign(out_dims.size(), {});
    size_t next = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      const auto id = static_cast<int64_t>(d);
      if (std::count(collapsed->begin(), collapsed->end(), id) || std::count(batching->begin(), batching->end(), id))
        continue;
      if (next >= offset_dims->size()) return std::nullopt;
      const auto o = static_cast<size_t>((*offset_dims)[next++]);
      if (o >= out_dims.size()) return std::nullopt;
      if ((*sizes)[d] == in[d] && out_dims[o] == in[d]) out.dims[o] = from->dims[d];
    }
    return out;
  }

  // A sharding constraint or reshard: its sharding, except on dimensions it leaves open and
  // unsharded (`{?}`), which keep what the operand carries (JAX marks results it leaves to
  // the compiler that way, often on an empty mesh).
  std::optional<TensorSharding> Constrained(const ir::Operation& op, ir::ValueId value, int depth) {
    return WithOpenDims(op.attr("sharding"), Rank(value), [&]() -> std::optional<TensorSharding> {
      return op.operands.empty() ? std::nullopt : Of(op.operands[0], depth + 1);
    });
  }

  // A manual region's result r: its out sharding; dims left open take what the body's
  // returned value carries on the axes the region leaves automatic.
  std::optional<TensorSharding> ManualResult(const ir::Operation& op, size_t result, ir::ValueId value, int depth) {
    const ir::Attribute* attr = op.attr("out_shardings");
    const ir::Attribute::Array* list = attr ? attr->get<ir::Attribute::Array>() : nullptr;
    if (attr && !list)
      if (const auto* dict = attr->get<ir::Attribute::Dictionary>())
        if (const ir::Attribute* inner = ir::FindAttr(*dict, "shardings")) list = inner->get<ir::Attribute::Array>();
    if (!list || result >= list->size()) return std::nullopt;
    std::set<std::string> manual;
    if (const ir::Attribute* axes = op.attr("manual_axes"))
      if (const auto* names = axes->get<ir::Attribute::Array>())
        for (const ir::Attribute& name : *names)
          if (auto text = name.AsString()) manual.insert(std::string(*text));
    return WithOpenDims(&(*list)[result], Rank(value), [&]() -> std::optional<TensorSharding> {
      if (op.regions.empty() || op.regions[0].blocks.empty() || op.regions[0].blocks.back().ops.empty())
        return std::nullopt;
      const ir::Operation& terminator = op.regions[0].blocks.back().ops.back();
      if (result >= terminator.operands.size()) return std::nullopt;
      std::optional<TensorSharding> inner = Of(terminator.operands[result], depth + 1);
      if (inner)
        for (std::vector<AxisRef>& dim : inner->dims)
          std::erase_if(dim, [&](const AxisRef& ref) { return manual.count(inner->mesh.axes[ref.axis].name) > 0; });
      return inner;
    });
  }

  // `sdy_sharding`, except on its open unsharded dims, which take `inner()`'s (if it is on the
  // same mesh, or the sharding names none); an axis pinned to a closed dim is not reused.
  std::optional<TensorSharding> WithOpenDims(const ir::Attribute* sdy_sharding, int64_t rank,
                                             const std::function<std::optional<TensorSharding>()>& inner) {
    std::optional<TensorSharding> given = ParseSdy(sdy_sharding, rank);
    std::vector<bool> open = OpenUnshardedDims(sdy_sharding);
    if (std::find(open.begin(), open.end(), true) == open.end()) return given;
    std::optional<TensorSharding> from = inner();
    if (!from || from->dims.size() != open.size()) return given;
    const bool same_mesh = given && given->mesh.axes.size() == from->mesh.axes.size() &&
                           std::equal(given->mesh.axes.begin(), given->mesh.axes.end(), from->mesh.axes.begin(),
                                      [](const auto& a, const auto& b) { return a.name == b.name && a.size == b.size; });
    if (given && !given->mesh.axes.empty() && !same_mesh) return given;
    TensorSharding out = *from;
    out.unreduced = same_mesh ? given->unreduced : std::vector<AxisRef>{};
    std::set<int> used;  // mesh axes pinned to closed dims
    for (size_t d = 0; d < open.size(); ++d) {
      if (open[d]) continue;
      out.dims[d] = same_mesh ? given->dims[d] : std::vector<AxisRef>{};
      for (const AxisRef& ref : out.dims[d]) used.insert(ref.axis);
    }
    for (size_t d = 0; d < open.size(); ++d) {
      if (!open[d]) continue;
      for (const AxisRef& ref : out.dims[d])
        if (used.count(ref.axis)) {
          out.dims[d].clear();
          break;
        }
    }
    return out;
  }

  // Per dimension of an sdy.sharding: whether it is open (`?`) with no axes.
  static std::vector<bool> OpenUnshardedDims(const ir::Attribute* sdy_sharding) {
    std::vector<bool> open;
    const auto* dict = sdy_sharding ? sdy_sharding->get<ir::Attribute::Dictionary>() : nullptr;
    const ir::Attribute* dims = dict ? ir::FindAttr(*dict, "dim_shardings") : nullptr;
    const auto* list = dims ? dims->get<ir::Attribute::Array>() : nullptr;
    if (!list) return open;
    for (const ir::Attribute& dim : *list) {
      const auto* d = dim.get<ir::Attribute::Dictionary>();
      const ir::Attribute* axes = d ? ir::FindAttr(*d, "axes") : nullptr;
      const ir::Attribute* closed = d ? ir::FindAttr(*d, "is_closed") : nullptr;
      const auto* axis_list = axes ? axes->get<ir::Attribute::Array>() : nullptr;
      open.push_back((!axis_list || axis_list->empty()) && closed && !closed->AsBool().value_or(true));
    }
    return open;
  }

  // Groups the non-unit dims of `in` and `out` into runs of equal element count: a run of
  // one input dim split into several keeps its axes on the major output dim (if they
  // divide it); several input dims merged into one keep the major dim's axes (if the
  // others are unsharded); anything else becomes unsharded.
  static std::optional<TensorSharding> Reshaped(const TensorSharding& from, const Dims& in, const Dims& out_dims) {
    TensorSharding out = from;
    out.dims.assign(out_dims.size(), {});
    auto pieces = [&](const std::vector<AxisRef>& axes) {
      int64_t n = 1;
      for (const AxisRef& ref : axes) n *= ref.size ? ref.size : from.mesh.axes[ref.axis].size;
      return n;
    };
    std::vector<size_t> in_dims, out_idx;
    // Size-1 dims hold no split (their axes, if any, are left whole) and drop out.
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != 1) in_dims.push_back(d);
    for (size_t d = 0; d < out_dims.size(); ++d)
      if (out_dims[d] != 1) out_idx.push_back(d);
    size_t i = 0, j = 0;
    while (i < in_dims.size() && j < out_idx.size()) {
      size_t i1 = i + 1, j1 = j + 1;
      int64_t a = in[in_dims[i]], b = out_dims[out_idx[j]];
      while (a != b) {
        if (a < b) {
          if (i1 >= in_dims.size()) return std::nullopt;
          a *= in[in_dims[i1++]];
        } else {
          if (j1 >= out_idx.size()) return std::nullopt;
          b *= out_dims[out_idx[j1++]];
        }
      }
      const std::vector<AxisRef>& major = from.dims[in_dims[i]];
      bool minors_unsharded = true;
      for (size_t k = i + 1; k < i1; ++k) minors_unsharded = minors_unsharded && from.dims[in_dims[k]].empty();
      if (!major.empty() && minors_unsharded && (j1 == j + 1 || out_dims[out_idx[j]] % pieces(major) == 0))
        out.dims[out_idx[j]] = major;
      i = i1;
      j = j1;
    }
    return out;
  }

  // A call's result: the callee's returned value, its parameters bound to the operands.
  std::optional<TensorSharding> CallResult(const ir::Operation& op, size_t result, int depth) {
    const ir::Attribute* callee = op.attr("callee");
    auto name = callee ? callee->AsString() : std::nullopt;
    if (!name) return std::nullopt;
    for (const ir::Function& function : module_.functions) {
      if (function.name != *name || function.body.blocks.size() != 1) continue;
      const ir::Block& block = function.body.blocks.front();
      if (block.ops.empty() || result >= block.ops.back().operands.size()) return std::nullopt;
      Propagator inner(module_, function, num_partitions_, [&](size_t index, int inner_depth) {
        return index < op.operands.size() ? Of(op.operands[index], inner_depth) : std::nullopt;
      });
      return inner.Of(block.ops.back().operands[result], depth + 1);
    }
    return std::nullopt;
  }

  std::optional<TensorSharding> DotGeneral(const ir::Operation& op, ir::ValueId value, int depth) {
    if (op.operands.size() != 2) return std::nullopt;
    const ir::Attribute::Dictionary* numbers = nullptr;
    if (const ir::Attribute* attr = op.attr("dot_dimension_numbers")) numbers = attr->get<ir::Attribute::Dictionary>();
    auto list = [&](std::string_view name) {
      const ir::Attribute* attr = numbers ? ir::FindAttr(*numbers, name) : op.attr(name);
      auto values = attr ? attr->AsIntArray() : std::nullopt;
      return values.value_or(std::vector<int64_t>{});
    };
    const std::vector<int64_t> lhs_batch = list("lhs_batching_dimensions"), rhs_batch = list("rhs_batching_dimensions");
    const std::vector<int64_t> lhs_contract = list("lhs_contracting_dimensions"),
                               rhs_contract = list("rhs_contracting_dimensions");
    auto lhs = Of(op.operands[0], depth + 1);
    auto rhs = Of(op.operands[1], depth + 1);
    if (!lhs && !rhs) return std::nullopt;
    const int64_t lhs_rank = Rank(op.operands[0]), rhs_rank = Rank(op.operands[1]);
    auto free_dims = [](int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
      std::vector<int64_t> free;
      for (int64_t d = 0; d < rank; ++d)
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contract.begin(), contract.end(), d) == contract.end())
          free.push_back(d);
      return free;
    };
    // Result dims: batch, lhs free, rhs free; each with (lhs dim, rhs dim) sources.
    std::vector<std::pair<int64_t, int64_t>> sources;
    for (size_t i = 0; i < lhs_batch.size() && i < rhs_batch.size(); ++i) sources.emplace_back(lhs_batch[i], rhs_batch[i]);
    for (int64_t d : free_dims(lhs_rank, lhs_batch, lhs_contract)) sources.emplace_back(d, -1);
    for (int64_t d : free_dims(rhs_rank, rhs_batch, rhs_contract)) sources.emplace_back(-1, d);
    if (static_cast<int64_t>(sources.size()) != Rank(value)) return std::nullopt;
    TensorSharding out = lhs ? *lhs : *rhs;
    if (lhs && rhs && (lhs->mesh.axes.size() != rhs->mesh.axes.size() || lhs->mesh.device_ids != rhs->mesh.device_ids))
      rhs.reset();  // different meshes: keep the lhs side only
    out.dims.assign(sources.size(), {});
    out.unreduced.clear();
    std::set<int> used;
    for (size_t d = 0; d < sources.size(); ++d) {
      const std::vector<AxisRef>* axes = nullptr;
      if (sources[d].first >= 0 && lhs && !lhs->dims[static_cast<size_t>(sources[d].first)].empty())
        axes = &lhs->dims[static_cast<size_t>(sources[d].first)];
      else if (sources[d].second >= 0 && rhs)
        axes = &rhs->dims[static_cast<size_t>(sources[d].second)];
      if (!axes) continue;
      for (const AxisRef& ref : *axes) {
        if (used.count(ref.axis)) break;  // keep a major-to-minor prefix of unused axes
        out.dims[d].push_back(ref);
      }
      for (const AxisRef& ref : out.dims[d]) used.insert(ref.axis);
    }
    return out;
  }

  const ir::Module& module_;
  const ir::Function& function_;
  int64_t num_partitions_;
  ParameterShardings parameters_;
  std::map<ir::ValueId, std::pair<const ir::Operation*, size_t>> defining_;
  std::map<ir::ValueId, std::pair<const ir::Operation*, size_t>> carried_;  // while region argument -> (loop, index)
  std::map<ir::ValueId, size_t> parameter_;
  std::map<ir::ValueId, std::optional<TensorSharding>> memo_;
};

}  // namespace

bool IsUnconstrainedSharding(const ir::Attribute& sdy_sharding) {
  const auto* dict = sdy_sharding.get<ir::Attribute::Dictionary>();
  const ir::Attribute* dims = dict ? ir::FindAttr(*dict, "dim_shardings") : nullptr;
  const auto* list = dims ? dims->get<ir::Attribute::Array>() : nullptr;
  if (!list || list->empty()) return false;
  for (const ir::Attribute& dim : *list) {
    const auto* d = dim.get<ir::Attribute::Dictionary>();
    if (!d) return false;
    const ir::Attribute* axes = ir::FindAttr(*d, "axes");
    const ir::Attribute* closed = ir::FindAttr(*d, "is_closed");
    const auto* axis_list = axes ? axes->get<ir::Attribute::Array>() : nullptr;
    if ((axis_list && !axis_list->empty()) || !closed || closed->AsBool().value_or(true)) return false;
  }
  return true;
}

std::optional<TensorSharding> PropagatedResultSharding(const ir::Module& module, const ir::Function& function,
                                                       size_t result_index, int64_t num_partitions) {
  if (function.body.blocks.size() != 1) return std::nullopt;
  const ir::Block& block = function.body.blocks.front();
  if (block.ops.empty() || result_index >= block.ops.back().operands.size()) return std::nullopt;
  Propagator propagator(module, function, num_partitions);
  return propagator.Of(block.ops.back().operands[result_index]);
}

std::optional<TensorSharding> PropagatedValueSharding(const ir::Module& module, const ir::Function& function,
                                                      ir::ValueId value, int64_t num_partitions) {
  if (function.body.blocks.size() != 1) return std::nullopt;
  Propagator propagator(module, function, num_partitions);
  return propagator.Of(value);
}

}  // namespace stablert::passes
