// SPMD partitioning (partition.h): propagation of shardings over the entry function, then
// its rewrite into the program of one partition.
#include "plan/partition.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/verifier.h"

namespace stablert::plan {
namespace {

using ir::OpCode;
using ir::ValueId;

// Ops without a partitioning rule run on whole operands when their values are at most this
// many elements; a larger one would repeat real work on every partition, so the program is
// left to the global view.
constexpr int64_t kMaxReplicatedElements = 1 << 14;
constexpr int kMaxInlineDepth = 64;

Status NotCovered(std::string why) { return Unimplemented("not partitioned: " + std::move(why)); }

// A sharding over the program's mesh: per dimension the mesh axes splitting it (major
// first), and the axes along which the value is a partial sum.
struct Spec {
  std::vector<std::vector<int>> dims;
  std::vector<int> unreduced;  // sorted
  bool operator==(const Spec&) const = default;
  bool Sharded() const {
    for (const auto& axes : dims)
      if (!axes.empty()) return true;
    return !unreduced.empty();
  }
  bool Uses(int axis) const {
    for (const auto& axes : dims)
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return true;
    return std::find(unreduced.begin(), unreduced.end(), axis) != unreduced.end();
  }
};

Spec Replicated(size_t rank) { return Spec{std::vector<std::vector<int>>(rank), {}}; }

// The mesh every sharding of the program refers to, and where each partition sits in it.
class MeshGeometry {
 public:
  MeshGeometry(Mesh mesh, int64_t partitions) : mesh_(std::move(mesh)), coords_(static_cast<size_t>(partitions)) {
    for (int64_t position = 0; position < partitions; ++position) {
      const int64_t p = mesh_.device_ids.empty() ? position : mesh_.device_ids[static_cast<size_t>(position)];
      std::vector<int64_t> coord(mesh_.axes.size());
      int64_t rest = position;
      for (size_t a = mesh_.axes.size(); a-- > 0;) {
        coord[a] = rest % mesh_.axes[a].size;
        rest /= mesh_.axes[a].size;
      }
      coords_[static_cast<size_t>(p)] = std::move(coord);
    }
  }
  const Mesh& mesh() const { return mesh_; }
  int64_t partitions() const { return static_cast<int64_t>(coords_.size()); }
  int64_t Pieces(const std::vector<int>& axes) const {
    int64_t n = 1;
    for (int a : axes) n *= mesh_.axes[static_cast<size_t>(a)].size;
    return n;
  }
  // The index of partition p's block along `axes` (major first).
  int64_t BlockIndex(int64_t p, const std::vector<int>& axes) const {
    int64_t index = 0;
    for (int a : axes) index = index * mesh_.axes[static_cast<size_t>(a)].size + coords_[static_cast<size_t>(p)][static_cast<size_t>(a)];
    return index;
  }
  // The partitions grouped by their coordinates off `axes`, each group ordered by block index
  // along `axes`; flattened.
  std::vector<int64_t> Groups(const std::vector<int>& axes) const {
    std::map<std::vector<int64_t>, std::map<int64_t, int64_t>> groups;
    for (int64_t p = 0; p < partitions(); ++p) {
      std::vector<int64_t> key = coords_[static_cast<size_t>(p)];
      for (int a : axes) key[static_cast<size_t>(a)] = -1;
      groups[key][BlockIndex(p, axes)] = p;
    }
    std::vector<int64_t> flat;
    for (const auto& [key, members] : groups)
      for (const auto& [index, p] : members) flat.push_back(p);
    return flat;
  }

 private:
  Mesh mesh_;
  std::vector<std::vector<int64_t>> coords_;
};

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

// Whether `spec` splits `dims` evenly and uses no axis twice.
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

// The reduction of a body `return op(arg0, arg1)`: add, multiply, maximum, minimum, and,
// or; nullopt for another body.
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

// Whether the scalar constant `bytes` of `dtype` is the identity of `reduction`: combining
// partials computed from it then counts it once.
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
  const ir::OpClass cls = ir::GetOpInfo(op.code).op_class;
  if (cls == ir::OpClass::kUnary || cls == ir::OpClass::kBinary) return true;
  switch (op.code) {
    case OpCode::kCompare:
    case OpCode::kSelect:
    case OpCode::kClamp:
    case OpCode::kConvert:
    case OpCode::kReducePrecision:
    case OpCode::kSdyPropagationBarrier:
      return true;
    case OpCode::kBitcastConvert:
      return module.type_of(op.operands[0]).dims == module.type_of(op.results[0]).dims;
    default:
      return false;
  }
}

// A link between dimension `a_dim` of value `a` and dimension `b_dim` of value `b` of one
// op: a sharding of one carries over to the other.
struct Link {
  ValueId a;
  int64_t a_dim;
  ValueId b;
  int64_t b_dim;
};

// Which result dimension each operand dimension of a reshape becomes: dimensions whose
// preceding dimensions hold the same number of elements split the same way.
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

// (indices dimension, result dimension) of a gather's batch dimensions: the result
// dimensions not in offset_dims, in order, and the indices dimensions but index_vector_dim.
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

// A value of the partitioned program: one partition's block of a global value.
struct Local {
  ValueId value;
  Spec spec;
  OpCode partial_op = OpCode::kAdd;  // how partials along spec.unreduced combine
};

class Partitioner {
 public:
  Partitioner(const ir::Module& module, int64_t partitions) : in_(module), out_(module), partitions_(partitions) {}

  StatusOr<PartitionedProgram> Run();

 private:
  // --- Step 1: the entry function with calls inlined, every value fresh. ---
  // Appends the block's ops to `out` (ops_ if null), calls inlined, every value fresh.
  Status Flatten(const ir::Block& block, std::unordered_map<ValueId, ValueId>& map, std::vector<ValueId>* returned,
                 int depth, std::vector<ir::Operation>* out = nullptr);
  ir::Operation Clone(const ir::Operation& op, std::unordered_map<ValueId, ValueId>& map);
  ir::Region CloneRegion(const ir::Region& region, std::unordered_map<ValueId, ValueId>& map);

  // --- Step 2: shardings. ---
  StatusOr<Spec> ToSpec(const TensorSharding& sharding, const std::string& what);
  StatusOr<Spec> ParseSpec(const ir::Attribute::Dictionary& attrs, int64_t rank, const std::string& what);
  StatusOr<Spec> ParseSdySpec(const ir::Attribute& attr, int64_t rank, const std::string& what);
  TensorSharding ToSharding(const Spec& spec) const;
  Status Seed();
  std::vector<Link> LinksOf(const ir::Operation& op) const;
  bool Propagate(const ir::Operation& op);
  Dims DimsOf(ValueId v) const { return out_.type_of(v).dims; }  // a copy: Emit may move the value table
  Spec SpecOf(ValueId v) const {
    auto it = spec_.find(v);
    return it != spec_.end() ? it->second : Replicated(DimsOf(v).size());
  }

  // --- Step 3: the rewrite. ---
  Status Rewrite();
  Status RewriteOp(const ir::Operation& op);
  Status RewriteReduce(const ir::Operation& op);
  Status RewriteDot(const ir::Operation& op);
  Status RewriteManual(const ir::Operation& op);
  // A scatter-add of sharded updates: each partition adds its updates into its partial of
  // the operand (the operand on the first partition, zeros on the others).
  Status RewriteScatterAdd(const ir::Operation& op);
  // A gather of sharded index rows from a whole operand: each partition gathers its rows.
  Status RewriteGather(const ir::Operation& op);
  Status RewriteWhole(const ir::Operation& op);
  // A while loop over blocks: each carry keeps its operand's sharding through the loop.
  Status RewriteWhile(const ir::Operation& op);
  // Rewrites the single block of `region` into a new region whose arguments hold blocks
  // sharded as `specs` and whose results are resharded to `result_specs`.
  StatusOr<ir::Region> RewriteRegion(const ir::Region& region, const std::vector<Spec>& specs,
                                     const std::vector<Spec>& result_specs);
  // slice, dynamic_slice and dynamic_update_slice: dimensions taken whole keep their split.
  Status RewriteSlice(const ir::Operation& op);
  // Sweeps propagation over `ops` and the bodies of their loops; whether anything changed.
  bool PropagateAll(const std::vector<ir::Operation>& ops, bool backwards);
  Status SeedOps(const std::vector<ir::Operation>& ops);
  StatusOr<Local> Get(ValueId global) const;
  // Maps the values `regions` use from outside them (region bodies may capture values of the
  // enclosing block) to their whole (replicated) local values.
  Status MapCaptures(const std::vector<ir::Region>& regions, std::unordered_map<ValueId, ValueId>& map);
  void Set(ValueId global, Local local) { local_[global] = std::move(local); }
  std::vector<ValueId> Emit(OpCode code, std::vector<ValueId> operands, std::vector<ir::Type> results,
                            ir::Attribute::Dictionary attrs = {}, std::vector<ir::Region> regions = {});
  ValueId Emit1(OpCode code, std::vector<ValueId> operands, ir::Type result, ir::Attribute::Dictionary attrs = {},
                std::vector<ir::Region> regions = {}) {
    return Emit(code, std::move(operands), {std::move(result)}, std::move(attrs), std::move(regions))[0];
  }
  ir::Type LocalType(ValueId global, const Spec& spec) const {
    const ir::Type type = out_.type_of(global);
    return type.is_tensor() ? ir::Type::Tensor(type.dtype, LocalDims(type.dims, spec, *mesh_)) : type;
  }
  // `local` (a block of a global value of `global_dims`) with sharding `target`.
  StatusOr<Local> Reshard(const Local& local, const Spec& target, const Dims& global_dims);
  ValueId AllReduce(ValueId value, const std::vector<int>& axes, OpCode reduction);
  // Turns `value` (sharded as `current`) into partials along the axes `fresh`: blocks split
  // along them are placed in zeros, and along the others only the first partition keeps the
  // value. Updates `current`'s dimensions.
  StatusOr<ValueId> MakePartials(ValueId value, const std::vector<int>& fresh, const Spec& target,
                                 const Dims& global_dims, Spec& current);
  ValueId AllGather(ValueId value, int64_t dim, const std::vector<int>& axes);
  // The partition's offset along a dimension split by `axes` into blocks of `block`.
  ValueId Offset(const std::vector<int>& axes, int64_t block);
  ValueId PartitionIdS32();
  ValueId ScalarConstant(DType dtype, const std::vector<uint8_t>& bytes);
  Status CheckReplicatedSize(const ir::Operation& op) const;
  void EliminateDeadOps();
  // Merges all_reduces of one element type, reduction and groups into one variadic
  // all_reduce at the first of them where their operands are defined by then (fewer
  // synchronizations between partitions), in `block` and the loops in it.
  void CombineAllReduces(ir::Block& block);
  void DropUnusedFunctions();
  // Data movement (broadcast, transpose, reshape) of partial sums gives partial sums: the
  // operand's unreduced axes are kept in both specs, unless the split uses them.
  static void KeepSumPartials(const Local& operand, Spec& operand_spec, Spec& result_spec);

  const ir::Module& in_;
  ir::Module out_;
  int64_t partitions_;
  const ir::Function* entry_ = nullptr;
  std::optional<MeshGeometry> mesh_;
  std::vector<ValueId> params_;               // the flattened entry's parameters
  std::vector<ir::Operation> ops_;            // the flattened entry's ops (no return)
  std::vector<ValueId> returned_;
  std::unordered_map<ValueId, Spec> spec_;
  std::unordered_map<ValueId, const ir::Operation*> def_;  // flattened op defining each value
  std::unordered_set<ValueId> fixed_;
  std::vector<Spec> param_specs_;
  std::vector<std::optional<Spec>> wanted_results_;
  std::unordered_map<ValueId, Local> local_;
  ir::Block body_;
  ir::Block* block_ = &body_;  // where Emit appends: the entry block or a loop's region
  std::map<std::pair<std::vector<int>, int64_t>, ValueId> offsets_;
  std::optional<ValueId> partition_id_;
  int64_t next_channel_ = 1;
};

//===--- Step 1 ---===//

ir::Region Partitioner::CloneRegion(const ir::Region& region, std::unordered_map<ValueId, ValueId>& map) {
  ir::Region copy;
  for (const ir::Block& block : region.blocks) {
    ir::Block& b = copy.blocks.emplace_back();
    for (ValueId arg : block.arguments) {
      ValueId fresh = out_.AddValue(out_.type_of(arg));
      map[arg] = fresh;
      b.arguments.push_back(fresh);
    }
    for (const ir::Operation& op : block.ops) b.ops.push_back(Clone(op, map));
  }
  return copy;
}

ir::Operation Partitioner::Clone(const ir::Operation& op, std::unordered_map<ValueId, ValueId>& map) {
  ir::Operation copy;
  copy.code = op.code;
  copy.attrs = op.attrs;
  copy.location = op.location;
  for (ValueId v : op.operands) {
    auto it = map.find(v);
    copy.operands.push_back(it != map.end() ? it->second : v);
  }
  for (const ir::Region& region : op.regions) copy.regions.push_back(CloneRegion(region, map));
  for (ValueId v : op.results) {
    ValueId fresh = out_.AddValue(out_.type_of(v));
    map[v] = fresh;
    copy.results.push_back(fresh);
  }
  return copy;
}

Status Partitioner::Flatten(const ir::Block& block, std::unordered_map<ValueId, ValueId>& map,
                            std::vector<ValueId>* returned, int depth, std::vector<ir::Operation>* out) {
  if (depth > kMaxInlineDepth) return NotCovered("calls nest too deeply");
  if (out == nullptr) out = &ops_;
  for (const ir::Operation& op : block.ops) {
    if (op.code == OpCode::kWhile) {
      // Loop bodies are flattened too (their calls inlined), so they can be partitioned.
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
    if (op.code == OpCode::kCall) {
      const ir::Attribute* callee_attr = op.attr("callee");
      auto name = callee_attr ? callee_attr->AsString() : std::nullopt;
      const ir::Function* callee = name ? in_.FindFunction(*name) : nullptr;
      if (!callee || callee->body.blocks.size() != 1 || callee->body.blocks[0].arguments.size() != op.operands.size())
        return NotCovered("a call it cannot inline");
      std::unordered_map<ValueId, ValueId> inner;
      for (size_t i = 0; i < op.operands.size(); ++i)
        inner[callee->body.blocks[0].arguments[i]] = map.count(op.operands[i]) ? map[op.operands[i]] : op.operands[i];
      std::vector<ValueId> results;
      STABLERT_RETURN_IF_ERROR(Flatten(callee->body.blocks[0], inner, &results, depth + 1, out));
      if (results.size() != op.results.size()) return NotCovered("a call whose results do not match");
      for (size_t i = 0; i < results.size(); ++i) map[op.results[i]] = results[i];
      continue;
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
    if (!type.is_tensor()) return NotCovered("a parameter that is not a tensor");
    STABLERT_ASSIGN_OR_RETURN(Spec spec, ParseSpec(i < entry_->argument_attrs.size() ? entry_->argument_attrs[i]
                                                                                     : ir::Attribute::Dictionary{},
                                                   type.rank(), "parameter " + std::to_string(i)));
    param_specs_.push_back(spec);
  }
  for (size_t i = 0; i < returned_.size(); ++i) {
    const ir::Type type = out_.type_of(returned_[i]);
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
  std::optional<OpCode> reduction = op.regions.size() == 1 ? SimpleReduction(op.regions[0]) : std::nullopt;
  std::vector<int64_t> reduced = IntList(op, "dimensions");
  const Dims in_dims = DimsOf(op.operands[0]);
  // The operand is split as the result along kept dimensions; a single-operand reduction
  // with an identity init keeps its own split along reduced ones (leaving partials).
  bool partial_ok = false;
  if (n == 1 && reduction) {
    auto def = def_.find(op.operands[1]);
    if (def != def_.end() && def->second->code == OpCode::kConstant) {
      const ir::Attribute* value = def->second->attr("value");
      const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
      partial_ok = elements && *elements && IsIdentity(*reduction, (*elements)->type.dtype, (*elements)->bytes);
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
    Set(op.results[k], Local{results[k], spec, reduction.value_or(OpCode::kAdd)});
  }
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
  STABLERT_ASSIGN_OR_RETURN(Local l, Get(lhs));
  STABLERT_ASSIGN_OR_RETURN(l, Reshard(l, ls, ld));
  STABLERT_ASSIGN_OR_RETURN(Local rr, Get(rhs));
  STABLERT_ASSIGN_OR_RETURN(rr, Reshard(rr, rs, rd));
  ValueId value = Emit1(op.code, {l.value, rr.value}, LocalType(result, result_spec), op.attrs);
  std::sort(partial_axes.begin(), partial_axes.end());
  Spec spec = result_spec;
  spec.unreduced = partial_axes;
  Set(result, Local{value, spec, OpCode::kAdd});
  return OkStatus();
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
    if (!type.is_tensor()) return NotCovered("a manual region over tokens");
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
    if (ContainsHostTransfer(inner)) return NotCovered("host transfers in a manual region");
    block_->ops.push_back(Clone(inner, map));
  }
  return NotCovered("a manual region without a return");
}

Status Partitioner::RewriteOp(const ir::Operation& op) {
  if (op.code == OpCode::kSdyManualComputation) return RewriteManual(op);
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
        const size_t size = count > 0 ? data.bytes.size() / static_cast<size_t>(count) : 0;
        bool splat = size > 0 && data.bytes.size() == size * static_cast<size_t>(count);
        for (size_t i = size; splat && i < data.bytes.size(); i += size)
          splat = std::memcmp(data.bytes.data(), data.bytes.data() + i, size) == 0;
        if (splat) {
          auto local = std::make_shared<ir::ElementsData>();
          local->type = LocalType(result, spec);
          const int64_t local_count = ElementCount(local->type.dims);
          for (int64_t i = 0; i < local_count; ++i)
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
      auto dim = dim_attr ? dim_attr->AsInt() : std::nullopt;
      const ir::Type type = out_.type_of(result);
      if (!dim || *dim < 0 || *dim >= type.rank()) return NotCovered("a malformed iota");
      const std::vector<int>& axes = spec.dims[static_cast<size_t>(*dim)];
      if (!axes.empty() && !IsInteger(type.dtype)) {
        ValueId whole = Emit1(OpCode::kIota, {}, type, op.attrs);
        STABLERT_ASSIGN_OR_RETURN(Local local, Reshard(Local{whole, Replicated(spec.dims.size())}, spec, type.dims));
        Set(result, local);
        return OkStatus();
      }
      const ir::Type local_type = LocalType(result, spec);
      ValueId value = Emit1(OpCode::kIota, {}, local_type, op.attrs);
      if (!axes.empty()) {
        ValueId offset = Offset(axes, local_type.dims[static_cast<size_t>(*dim)]);
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

void Partitioner::KeepSumPartials(const Local& operand, Spec& operand_spec, Spec& result_spec) {
  if (operand.partial_op != OpCode::kAdd || operand.spec.unreduced.empty()) return;
  for (int a : operand.spec.unreduced)
    if (operand_spec.Uses(a) || result_spec.Uses(a)) return;
  operand_spec.unreduced = result_spec.unreduced = operand.spec.unreduced;
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
    bool needed = op.code == OpCode::kReturn || op.results.empty() ||
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

}  // namespace

StatusOr<PartitionedProgram> PartitionProgram(const ir::Module& module, int64_t num_partitions) {
  if (num_partitions <= 1) return NotCovered("a program on one partition");
  return Partitioner(module, num_partitions).Run();
}

}  // namespace stablert::plan
