// Lowering of manual regions (sdy.manual_computation, the bodies of shard_map and pmap)
// and of the collectives, partition_id and replica_id (plan.h, StepKind::kManual and
// kCollective).
//
// A manual region becomes one kManual step over the global operands and results. Its
// region starts with one "manual_operand" step per operand (the partition's block, in the
// local type of the block argument), holds the body lowered with local shapes, and ends
// with one "manual_result" step per result (each block written by its first holder). The
// blocks come from the in_shardings/out_shardings through ParseSharding/LayoutShards. In a
// partially manual region (some mesh axes not in manual_axes) the blocks are cut along the
// manual axes only, and the body runs on every device.
//
// Collectives name their groups as partition ids: replica groups are resolved here per the
// StableHLO spec (channel_id, use_global_device_ids) for programs with one replica.
// Outside a manual region a collective is accepted only when the program runs on one device
// (every group then holds only partition 0).
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "plan/collective_params.h"
#include "plan/lowering.h"
#include "passes/sharding/sharding.h"

namespace stablert::plan {

using passes::AxisRef;
using passes::LayoutShards;
using passes::Mesh;
using passes::ParseSharding;
using passes::ShardLayout;
using passes::TensorSharding;
using passes::MeshAxis;
namespace {

using ir::OpCode;

int64_t ModuleInt(const ir::Module& module, std::string_view name, int64_t fallback) {
  const ir::Attribute* attr = ir::FindAttr(module.attrs, name);
  auto value = attr ? attr->AsInt() : std::nullopt;
  return value ? *value : fallback;
}

// The elements of an integer array attribute of any rank (replica_groups and
// source_target_pairs are 2-D), with its dims.
std::optional<std::vector<int64_t>> IntElements(const ir::Attribute& attr, Dims* dims) {
  const auto* elements = attr.get<ir::Attribute::Elements>();
  if (!elements || !*elements) return std::nullopt;
  const ir::ElementsData& data = **elements;
  const DType dtype = data.type.dtype;
  if (dtype != DType::kS64 && dtype != DType::kS32) return std::nullopt;
  const size_t size = dtype == DType::kS64 ? 8 : 4;
  std::vector<int64_t> out(data.bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) {
    if (size == 8) {
      std::memcpy(&out[i], &data.bytes[i * 8], 8);
    } else {
      int32_t v;
      std::memcpy(&v, &data.bytes[i * 4], 4);
      out[i] = v;
    }
  }
  *dims = data.type.dims;
  return out;
}

// Per partition, the start of its block.
std::vector<std::vector<int64_t>> BlockStarts(const std::vector<Dims>& starts) {
  std::vector<std::vector<int64_t>> out;
  for (const Dims& s : starts) out.emplace_back(s.begin(), s.end());
  return out;
}

// The groups of `flat` (partition ids group by group; empty: all partitions), each of
// `group_size` members or, when `sizes` is not empty, of sizes[k] members.
PartitionGroups GroupsOf(const std::vector<int64_t>& flat, int64_t group_size, const std::vector<int64_t>& sizes = {}) {
  PartitionGroups groups;
  groups.group_size = sizes.empty() ? group_size : 0;
  size_t at = 0;
  for (size_t k = 0; at < flat.size(); ++k) {
    const size_t size = static_cast<size_t>(sizes.empty() ? group_size : k < sizes.size() ? sizes[k] : 1);
    const size_t end = std::min(flat.size(), at + std::max<size_t>(size, 1));
    groups.groups.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at), flat.begin() + static_cast<std::ptrdiff_t>(end));
    at = end;
  }
  // Groups that all have one size after all (uneven lists of equal sizes).
  if (groups.group_size == 0 && !groups.groups.empty()) {
    bool even = true;
    for (const auto& group : groups.groups) even = even && group.size() == groups.groups[0].size();
    if (even) groups.group_size = static_cast<int64_t>(groups.groups[0].size());
  }
  return groups;
}

// The TensorShardings of an in_shardings/out_shardings attribute (an array of shardings,
// or a dictionary holding one under "shardings").
StatusOr<const ir::Attribute::Array*> ShardingList(Lowering& l, const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return l.Invalid(op, "missing attribute '" + std::string(name) + "'");
  if (const auto* array = attr->get<ir::Attribute::Array>()) return array;
  if (const auto* dict = attr->get<ir::Attribute::Dictionary>())
    if (const ir::Attribute* inner = ir::FindAttr(*dict, "shardings"))
      if (const auto* array = inner->get<ir::Attribute::Array>()) return array;
  return l.Invalid(op, "attribute '" + std::string(name) + "' is not a list of shardings");
}

// The layout of one operand or result of a manual region over `partitions` devices; the
// local dims must be `local`.
StatusOr<ShardLayout> ManualLayout(Lowering& l, const ir::Operation& op, const ir::Attribute& sharding_attr,
                                   const Dims& global, const Dims& local, int64_t partitions,
                                   const std::set<std::string>& manual_axes, const std::string& what,
                                   Mesh* mesh_out = nullptr) {
  ir::Attribute::Dictionary attrs;
  attrs.emplace_back("sdy.sharding", sharding_attr);
  std::string where = l.Origin(op) + ": " + what;
  STABLERT_ASSIGN_OR_RETURN(TensorSharding sharding,
                            ParseSharding(l.module(), attrs, static_cast<int64_t>(global.size()), partitions, where));
  // A partially manual region: the body sees blocks along the manual axes only. Along the
  // other (automatic) axes every device holds the whole extent, so those axes are dropped
  // from the sharding, and devices that differ only along them run identical copies.
  auto automatic = [&](const AxisRef& ref) { return !manual_axes.count(sharding.mesh.axes[ref.axis].name); };
  for (std::vector<AxisRef>& dim : sharding.dims) std::erase_if(dim, automatic);
  std::erase_if(sharding.unreduced, automatic);
  if (sharding.maximal_partition >= 0) return l.Unsupported(op, what + " has a maximal sharding");
  if (mesh_out) *mesh_out = sharding.mesh;
  STABLERT_ASSIGN_OR_RETURN(ShardLayout layout, LayoutShards(sharding, global, partitions, where));
  if (layout.local_dims != local)
    return l.Invalid(op, what + ": the sharding gives blocks of " + DimsToString(layout.local_dims) +
                             " but the region's type is " + DimsToString(local));
  return layout;
}

// "manual_operand" params: the blocks' starts, and which partitions take zeros instead (an
// unreduced operand: position 0 along the unreduced axes holds the value).
ManualOperandParams OperandBlocks(const ShardLayout& layout) {
  ManualOperandParams params{.block_starts = BlockStarts(layout.starts), .takes_zeros = {}};
  if (layout.partial_group_size > 1)
    for (int64_t index : layout.partial_index) params.takes_zeros.push_back(index != 0);
  return params;
}

Step CollectiveStep(Lowering& l, const ir::Operation& op, std::string kernel, std::vector<ValueId> inputs,
                    std::vector<ValueId> outputs, kernels::KernelParams params) {
  Step step;
  step.kind = StepKind::kCollective;
  step.kernel = std::move(kernel);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.params = std::move(params);
  step.origin = l.Origin(op);
  return step;
}

// How replica_groups name devices (StableHLO spec, "collective ops").
enum class GroupMode { kCrossReplica, kCrossReplicaAndPartition, kFlattenedIds, kCrossPartition };

int64_t ChannelId(const ir::Operation& op) {
  const ir::Attribute* attr = op.attr("channel_id");
  auto value = attr ? attr->AsInt() : std::nullopt;
  return value ? *value : 0;
}

GroupMode ModeOf(const ir::Operation& op) {
  const bool channel = ChannelId(op) > 0;
  switch (op.code) {
    case OpCode::kAllReduce:
    case OpCode::kAllGather:
    case OpCode::kReduceScatter: {
      const ir::Attribute* global = op.attr("use_global_device_ids");
      bool use_global = global && global->AsBool().value_or(true);
      if (!channel) return GroupMode::kCrossReplica;
      return use_global ? GroupMode::kFlattenedIds : GroupMode::kCrossReplicaAndPartition;
    }
    default:
      return channel ? GroupMode::kCrossPartition : GroupMode::kCrossReplica;
  }
}

// The groups of partition ids the collective `op` communicates in, over `partitions`
// partitions and one replica: flattened into `flat`, every group of `group_size` members.
// An empty `flat` means one group of all partitions.
Status ResolveGroups(Lowering& l, const ir::Operation& op, int64_t partitions, std::vector<int64_t>* flat,
                     int64_t* group_size, std::vector<int64_t>* uneven_sizes = nullptr) {
  std::vector<int64_t> ids;
  int64_t size = 0;
  if (const ir::Attribute* attr = op.attr("replica_groups")) {
    Dims dims;
    auto values = IntElements(*attr, &dims);
    if (!values || dims.size() != 2) return l.Invalid(op, "replica_groups is not a 2-D integer array");
    ids = *values;
    size = dims[1];
    // Groups of different sizes are padded with -1 (all_reduce only).
    if (std::find(ids.begin(), ids.end(), -1) != ids.end()) {
      if (uneven_sizes == nullptr) return l.Invalid(op, "replica groups of different sizes are only valid for all_reduce");
      std::vector<int64_t> packed;
      uneven_sizes->clear();
      for (int64_t g = 0; g < dims[0]; ++g) {
        int64_t members = 0;
        for (int64_t k = 0; k < size; ++k) {
          int64_t id = ids[static_cast<size_t>(g * size + k)];
          if (id == -1) continue;
          packed.push_back(id);
          ++members;
        }
        if (members > 0) uneven_sizes->push_back(members);
      }
      ids = std::move(packed);
    }
  }
  const GroupMode mode = ModeOf(op);
  flat->clear();
  switch (mode) {
    case GroupMode::kCrossReplica:
      // One replica: every partition communicates only with itself.
      for (int64_t id : ids)
        if (id != 0) return l.Invalid(op, "replica group names replica " + std::to_string(id) + " of 1");
      for (int64_t p = 0; p < partitions; ++p) flat->push_back(p);
      *group_size = 1;
      return OkStatus();
    case GroupMode::kCrossReplicaAndPartition:
      for (int64_t id : ids)
        if (id != 0) return l.Invalid(op, "replica group names replica " + std::to_string(id) + " of 1");
      *group_size = partitions;
      return OkStatus();
    case GroupMode::kFlattenedIds:
    case GroupMode::kCrossPartition:
      break;
  }
  if (ids.empty() || size == 0) {
    *group_size = partitions;
    return OkStatus();
  }
  std::vector<bool> seen(static_cast<size_t>(partitions), false);
  for (int64_t id : ids) {
    if (id < 0 || id >= partitions)
      return l.Invalid(op, "replica group names device " + std::to_string(id) + " of " + std::to_string(partitions));
    if (seen[static_cast<size_t>(id)]) return l.Invalid(op, "device " + std::to_string(id) + " is in two groups");
    seen[static_cast<size_t>(id)] = true;
  }
  if (static_cast<int64_t>(ids.size()) != partitions)
    return l.Invalid(op, "replica groups cover " + std::to_string(ids.size()) + " of " + std::to_string(partitions) +
                             " devices");
  *flat = std::move(ids);
  *group_size = size;
  if (uneven_sizes && !uneven_sizes->empty() && mode != GroupMode::kFlattenedIds && mode != GroupMode::kCrossPartition)
    return l.Invalid(op, "replica groups of different sizes need partition ids");
  return OkStatus();
}

// "add" etc. from MatchReductionBody to the binary kernel's op name.
std::string BinaryKernelOp(const std::string& body) {
  if (body == "mul") return "multiply";
  if (body == "max") return "maximum";
  if (body == "min") return "minimum";
  return body;
}

OpCode BinaryOpCode(const std::string& body) {
  if (body == "add") return OpCode::kAdd;
  if (body == "mul") return OpCode::kMultiply;
  if (body == "max") return OpCode::kMaximum;
  if (body == "min") return OpCode::kMinimum;
  if (body == "and") return OpCode::kAnd;
  return OpCode::kOr;
}

// The reduction of `op`'s body over `dtype`: a binary kernel key suffix (".add.f32") with
// `program` empty, or a body program.
Status ReductionOf(Lowering& l, const ir::Operation& op, DType dtype, std::string* suffix,
                   std::vector<int64_t>* program) {
  if (op.regions.size() != 1) return l.Invalid(op, "expected one reduction body");
  std::string body = MatchReductionBody(l, op.regions[0], dtype);
  if (!body.empty() && ElementwiseAccepts(BinaryOpCode(body), dtype)) {
    *suffix = "." + BinaryKernelOp(body) + "." + std::string(DTypeName(dtype));
    program->clear();
    return OkStatus();
  }
  STABLERT_ASSIGN_OR_RETURN(*program, CompileBodyProgram(l, op, op.regions[0]));
  *suffix = "_program";
  return OkStatus();
}

Status LowerPerOperand(Lowering& l, const ir::Operation& op, int64_t partitions) {
  if (op.operands.size() != op.results.size()) return l.Invalid(op, "operand and result counts differ");
  std::vector<int64_t> groups, uneven_sizes;
  int64_t group_size = 1;
  if (op.code != OpCode::kCollectivePermute)
    STABLERT_RETURN_IF_ERROR(ResolveGroups(l, op, partitions, &groups, &group_size,
                                           op.code == OpCode::kAllReduce ? &uneven_sizes : nullptr));
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId input, l.Operand(op, i));
    STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, i));
    const TensorType in = l.TypeOf(input);
    if (in.dtype != type.dtype) return l.Invalid(op, "result element type differs from the operand's");
    const int64_t rank = static_cast<int64_t>(in.dims.size());
    auto dimension = [&](std::string_view name) -> StatusOr<int64_t> {
      STABLERT_ASSIGN_OR_RETURN(int64_t d, l.IntAttr(op, name));
      if (d < 0 || d >= rank) return l.Invalid(op, std::string(name) + " is out of range");
      return d;
    };
    std::string kernel;
    kernels::KernelParams params;
    switch (op.code) {
      case OpCode::kAllReduce: {
        if (in.dims != type.dims) return l.Invalid(op, "result shape differs from the operand's");
        std::string suffix;
        std::vector<int64_t> program;
        STABLERT_RETURN_IF_ERROR(ReductionOf(l, op, in.dtype, &suffix, &program));
        kernel = "all_reduce" + suffix;
        params = AllReduceParams{.groups = GroupsOf(groups, group_size, uneven_sizes), .body = std::move(program)};
        break;
      }
      case OpCode::kReduceScatter: {
        STABLERT_ASSIGN_OR_RETURN(int64_t d, dimension("scatter_dimension"));
        Dims expected = in.dims;
        if (expected[d] % group_size != 0) return l.Invalid(op, "the scattered dimension does not split evenly");
        expected[d] /= group_size;
        if (type.dims != expected) return l.Invalid(op, "result shape should be " + DimsToString(expected));
        std::string suffix;
        std::vector<int64_t> program;
        STABLERT_RETURN_IF_ERROR(ReductionOf(l, op, in.dtype, &suffix, &program));
        kernel = "reduce_scatter" + suffix;
        params = ReduceScatterParams{
            .groups = GroupsOf(groups, group_size), .dimension = d, .body = std::move(program)};
        break;
      }
      case OpCode::kAllGather: {
        STABLERT_ASSIGN_OR_RETURN(int64_t d, dimension("all_gather_dim"));
        Dims expected = in.dims;
        expected[d] *= group_size;
        if (type.dims != expected) return l.Invalid(op, "result shape should be " + DimsToString(expected));
        kernel = "all_gather";
        params = AllGatherParams{.groups = GroupsOf(groups, group_size), .dimension = d};
        break;
      }
      case OpCode::kAllToAll: {
        STABLERT_ASSIGN_OR_RETURN(int64_t split, dimension("split_dimension"));
        STABLERT_ASSIGN_OR_RETURN(int64_t concat, dimension("concat_dimension"));
        STABLERT_ASSIGN_OR_RETURN(int64_t count, l.IntAttr(op, "split_count"));
        if (count != group_size)
          return l.Invalid(op, "split_count " + std::to_string(count) + " differs from the group size " +
                                   std::to_string(group_size));
        Dims expected = in.dims;
        if (expected[split] % count != 0) return l.Invalid(op, "the split dimension does not split evenly");
        expected[split] /= count;
        expected[concat] *= count;
        if (type.dims != expected) return l.Invalid(op, "result shape should be " + DimsToString(expected));
        kernel = "all_to_all";
        params = AllToAllParams{
            .groups = GroupsOf(groups, group_size), .split_dimension = split, .concat_dimension = concat};
        break;
      }
      case OpCode::kCollectiveBroadcast:
        if (in.dims != type.dims) return l.Invalid(op, "result shape differs from the operand's");
        kernel = "collective_broadcast";
        params = CollectiveBroadcastParams{.groups = GroupsOf(groups, group_size)};
        break;
      case OpCode::kCollectivePermute: {
        if (in.dims != type.dims) return l.Invalid(op, "result shape differs from the operand's");
        const ir::Attribute* pairs_attr = op.attr("source_target_pairs");
        Dims pairs_dims;
        auto pairs_values = pairs_attr ? IntElements(*pairs_attr, &pairs_dims) : std::nullopt;
        if (!pairs_values || pairs_values->size() % 2 != 0)
          return l.Invalid(op, "source_target_pairs is not a list of pairs");
        std::vector<int64_t> pairs = std::move(*pairs_values);
        if (ChannelId(op) <= 0) {
          // Pairs of replica ids; with one replica only (0, 0): every partition keeps its value.
          for (int64_t id : pairs)
            if (id != 0) return l.Invalid(op, "source_target_pairs names replica " + std::to_string(id) + " of 1");
          std::vector<int64_t> self;
          if (!pairs.empty())
            for (int64_t p = 0; p < partitions; ++p) self.insert(self.end(), {p, p});
          pairs = std::move(self);
        }
        std::set<int64_t> sources, targets;
        for (size_t k = 0; k < pairs.size(); k += 2) {
          if (pairs[k] < 0 || pairs[k] >= partitions || pairs[k + 1] < 0 || pairs[k + 1] >= partitions)
            return l.Invalid(op, "source_target_pairs names a device outside 0.." + std::to_string(partitions - 1));
          if (!sources.insert(pairs[k]).second || !targets.insert(pairs[k + 1]).second)
            return l.Invalid(op, "source_target_pairs repeats a source or a target");
        }
        kernel = "collective_permute";
        CollectivePermuteParams permute;
        for (size_t k = 0; k < pairs.size(); k += 2) permute.pairs.push_back({pairs[k], pairs[k + 1]});
        params = std::move(permute);
        break;
      }
      default:
        return l.Unsupported(op, "op is not supported by the CPU plan yet");
    }
    ValueId output = l.NewValue(type);
    l.EmitControl(op, CollectiveStep(l, op, std::move(kernel), {input}, {output}, std::move(params)));
    l.Bind(op.results[i], output);
  }
  return OkStatus();
}

// The number of partitions along the axes in `axes`.
int64_t GroupSize(const Mesh& mesh, const std::set<std::string>& axes) {
  int64_t size = 1;
  for (const MeshAxis& axis : mesh.axes)
    if (axes.count(axis.name)) size *= axis.size;
  return size;
}

// The partitions grouped by their position along the mesh axes outside `axes` (each group
// differs only along `axes`), flattened; within a group in mesh order.
std::vector<int64_t> InnerAxisGroups(const Mesh& mesh, const std::set<std::string>& axes, int64_t partitions) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (int64_t position = 0; position < partitions; ++position) {
    const int64_t partition = mesh.device_ids.empty() ? position : mesh.device_ids[static_cast<size_t>(position)];
    std::vector<int64_t> key(mesh.axes.size());
    int64_t rest = position;
    for (size_t a = mesh.axes.size(); a-- > 0;) {
      key[a] = axes.count(mesh.axes[a].name) ? 0 : rest % mesh.axes[a].size;
      rest /= mesh.axes[a].size;
    }
    groups[key].push_back(partition);
  }
  std::vector<int64_t> flat;
  for (const auto& [key, members] : groups) flat.insert(flat.end(), members.begin(), members.end());
  return flat;
}

// The body's arguments: for each operand (`outer[i]`, the global or enclosing value), a
// "manual_operand" step appended to `into` cuts the partition's block of the body
// argument's local type.
StatusOr<std::vector<ValueId>> ManualOperands(Lowering& l, const ir::Operation& op, const ir::Block& block,
                                              const ir::Attribute::Array& in_shardings,
                                              const std::vector<ValueId>& outer, int64_t partitions,
                                              const std::set<std::string>& manual_axes, Sequence* into) {
  std::vector<ValueId> arguments;
  for (size_t i = 0; i < outer.size(); ++i) {
    const ir::Type& local_type = l.module().type_of(block.arguments[i]);
    if (local_type.kind == ir::Type::Kind::kToken && l.TypeOf(outer[i]) == TokenType()) {
      arguments.push_back(l.NewValue(TokenType()));  // tokens carry no bytes: nothing to cut
      continue;
    }
    if (!local_type.is_tensor() || local_type.dtype != l.TypeOf(outer[i]).dtype)
      return l.Invalid(op, "body argument " + std::to_string(i) + " has type " + ir::TypeToString(local_type));
    STABLERT_ASSIGN_OR_RETURN(ShardLayout layout,
                              ManualLayout(l, op, in_shardings[i], l.TypeOf(outer[i]).dims, local_type.dims,
                                           partitions, manual_axes, "operand " + std::to_string(i)));
    ValueId local = l.NewValue(TensorType{local_type.dtype, local_type.dims});
    into->steps.push_back(CollectiveStep(l, op, "manual_operand", {outer[i]}, {local}, OperandBlocks(layout)));
    arguments.push_back(local);
  }
  return arguments;
}

// A manual region inside a manual region (shard_map inside a partially manual shard_map):
// the enclosing body already runs once per partition, so this one is lowered inline: each
// partition takes its block of the operands along the inner manual axes, runs the body,
// and keeps its result if replicated along the inner axes, or gathers the whole result
// from the blocks of the partitions that differ only along them ("gather_blocks").
Status LowerNestedManualComputation(Lowering& l, const ir::Operation& op, const ir::Block& block,
                                    const ir::Attribute::Array& in_shardings, const ir::Attribute::Array& out_shardings,
                                    const std::set<std::string>& manual_axes) {
  const int64_t partitions = l.manual_partitions;
  std::vector<ValueId> outer;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, i));
    outer.push_back(value);
  }
  STABLERT_ASSIGN_OR_RETURN(std::vector<ValueId> arguments,
                            ManualOperands(l, op, block, in_shardings, outer, partitions, manual_axes,
                                           l.current_sequence()));
  std::vector<ValueId> returned;
  STABLERT_RETURN_IF_ERROR(l.LowerRegion(op, op.regions[0], arguments, l.current_sequence(), &returned));
  if (returned.size() != op.results.size())
    return l.Invalid(op, "the body returns " + std::to_string(returned.size()) + " values for " +
                             std::to_string(op.results.size()) + " results");
  for (size_t i = 0; i < returned.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, i));
    const TensorType local = l.TypeOf(returned[i]);
    if (type == TokenType() && local == TokenType()) {  // a token result: no bytes to write
      l.Bind(op.results[i], l.NewValue(TokenType()));
      continue;
    }
    if (local.dtype != type.dtype) return l.Invalid(op, "result " + std::to_string(i) + " changes the element type");
    Mesh mesh;
    STABLERT_ASSIGN_OR_RETURN(ShardLayout layout, ManualLayout(l, op, out_shardings[i], type.dims, local.dims,
                                                               partitions, manual_axes, "result " + std::to_string(i),
                                                               &mesh));
    if (layout.partial_group_size > 1)
      return l.Unsupported(op, "result " + std::to_string(i) +
                                   " of a nested manual region is unreduced, which is not supported yet");
    if (layout.local_dims == type.dims) {  // replicated along the inner axes: every copy is the value
      l.Bind(op.results[i], returned[i]);
      continue;
    }
    // Split along the inner axes: the partitions that differ only along them gather their
    // blocks into the whole value.
    ValueId whole = l.NewValue(type);
    l.EmitControl(op, CollectiveStep(l, op, "gather_blocks", {returned[i]}, {whole},
                                     GatherBlocksParams{.groups = GroupsOf(InnerAxisGroups(mesh, manual_axes, partitions),
                                                                           GroupSize(mesh, manual_axes)),
                                                        .block_starts = BlockStarts(layout.starts)}));
    l.Bind(op.results[i], whole);
  }
  return OkStatus();
}

}  // namespace

Status LowerManualComputation(Lowering& l, const ir::Operation& op) {
  if (op.regions.size() != 1 || op.regions[0].blocks.size() != 1) return l.Invalid(op, "expected one body block");
  const ir::Block& block = op.regions[0].blocks[0];
  if (block.arguments.size() != op.operands.size())
    return l.Invalid(op, "the body takes " + std::to_string(block.arguments.size()) + " arguments for " +
                             std::to_string(op.operands.size()) + " operands");
  STABLERT_ASSIGN_OR_RETURN(const ir::Attribute::Array* in_shardings, ShardingList(l, op, "in_shardings"));
  STABLERT_ASSIGN_OR_RETURN(const ir::Attribute::Array* out_shardings, ShardingList(l, op, "out_shardings"));
  if (in_shardings->size() != op.operands.size() || out_shardings->size() != op.results.size())
    return l.Invalid(op, "in_shardings/out_shardings do not match the operands/results");
  std::set<std::string> manual_axes;
  if (const ir::Attribute* axes = op.attr("manual_axes")) {
    const auto* array = axes->get<ir::Attribute::Array>();
    if (!array) return l.Invalid(op, "manual_axes is not a list of axis names");
    for (const ir::Attribute& axis : *array) {
      auto name = axis.AsString();
      if (!name) return l.Invalid(op, "manual_axes is not a list of axis names");
      manual_axes.emplace(*name);
    }
  }
  if (l.manual_partitions > 0)
    return LowerNestedManualComputation(l, op, block, *in_shardings, *out_shardings, manual_axes);
  const int64_t partitions = ModuleInt(l.module(), "mhlo.num_partitions", 1);
  if (partitions < 1) return l.Invalid(op, "the module's mhlo.num_partitions is not positive");

  Step step;
  step.kind = StepKind::kManual;
  step.params = ManualParams{.num_partitions = partitions};
  step.regions.resize(1);
  Sequence& body = step.regions[0];
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId global, l.Operand(op, i));
    step.inputs.push_back(global);
  }
  STABLERT_ASSIGN_OR_RETURN(std::vector<ValueId> arguments,
                            ManualOperands(l, op, block, *in_shardings, step.inputs, partitions, manual_axes, &body));
  std::vector<ValueId> returned;
  l.manual_partitions = partitions;
  Status status = l.LowerRegion(op, op.regions[0], arguments, &body, &returned);
  l.manual_partitions = 0;
  STABLERT_RETURN_IF_ERROR(status);
  if (returned.size() != op.results.size())
    return l.Invalid(op, "the body returns " + std::to_string(returned.size()) + " values for " +
                             std::to_string(op.results.size()) + " results");
  for (size_t i = 0; i < returned.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, i));
    const TensorType local = l.TypeOf(returned[i]);
    if (type == TokenType() && local == TokenType()) {  // a token result: no bytes to write
      l.Bind(op.results[i], l.NewValue(TokenType()));
      continue;
    }
    if (local.dtype != type.dtype) return l.Invalid(op, "result " + std::to_string(i) + " changes the element type");
    STABLERT_ASSIGN_OR_RETURN(ShardLayout layout, ManualLayout(l, op, (*out_shardings)[i], type.dims, local.dims,
                                                               partitions, manual_axes, "result " + std::to_string(i)));
    ValueId block = returned[i];
    if (layout.partial_group_size > 1) {
      // An unreduced result: the global array holds the sum of the partitions' partials.
      if (!ElementwiseAccepts(OpCode::kAdd, local.dtype))
        return l.Unsupported(op, "result " + std::to_string(i) + ": unreduced " +
                                     std::string(DTypeName(local.dtype)) + " values are not supported");
      ValueId summed = l.NewValue(local);
      body.steps.push_back(CollectiveStep(
          l, op, "all_reduce.add." + std::string(DTypeName(local.dtype)), {block}, {summed},
          AllReduceParams{.groups = GroupsOf(layout.partial_groups, layout.partial_group_size), .body = {}}));
      block = summed;
    }
    ValueId global = l.NewValue(type);
    body.steps.push_back(CollectiveStep(l, op, "manual_result", {block}, {global},
                                        ManualResultParams{.block_starts = BlockStarts(layout.starts)}));
    step.outputs.push_back(global);
    l.Bind(op.results[i], global);
  }
  l.EmitControl(op, std::move(step));
  return OkStatus();
}

Status LowerCollective(Lowering& l, const ir::Operation& op) {
  int64_t partitions = l.manual_partitions;
  if (partitions == 0) {
    // Outside manual regions the plan runs once for all devices: only a program on one
    // device has collectives that mean something there.
    if (ModuleInt(l.module(), "mhlo.num_partitions", 1) != 1 || ModuleInt(l.module(), "mhlo.num_replicas", 1) != 1)
      return l.Unsupported(op, "collectives outside manual regions of a program on several devices are not supported yet");
    partitions = 1;
  } else if (ModuleInt(l.module(), "mhlo.num_replicas", 1) != 1) {
    return l.Unsupported(op, "collectives in programs with both replicas and partitions are not supported yet");
  }
  switch (op.code) {
    case OpCode::kPartitionId:
    case OpCode::kReplicaId: {
      STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, 0));
      if (type != TensorType{DType::kU32, {}}) return l.Invalid(op, "result must be a ui32 scalar");
      ValueId output;
      if (op.code == OpCode::kReplicaId) {
        output = l.NewConstant(type, std::vector<uint8_t>(4, 0));  // one replica
      } else {
        output = l.NewValue(type);
        l.EmitControl(op, CollectiveStep(l, op, "partition_id", {}, {output}, {}));
      }
      l.Bind(op.results[0], output);
      return OkStatus();
    }
    default:
      return LowerPerOperand(l, op, partitions);
  }
}

}  // namespace stablert::plan
