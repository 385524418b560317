// Internal to plan/: the SPMD partitioner's state and helpers, shared by partition.cc
// (flattening, sharding propagation, the driver), partition_reshard.cc (emitting ops,
// resharding, collectives) and partition_rules.cc (one rewrite per op kind). See
// partition.h for what it does. One Partitioner per PartitionProgram call; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "passes/sharding/partition.h"

namespace stablert::passes::partitioning {

using ir::OpCode;
using ir::ValueId;

// Ops without a partitioning rule run on whole operands when their values are at most this
// many elements; a larger one would repeat real work on every partition, so the program is
// left to the global view.
constexpr int64_t kMaxReplicatedElements = 1 << 14;
constexpr int kMaxInlineDepth = 64;

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

// A link between dimension `a_dim` of value `a` and dimension `b_dim` of value `b` of one
// op: a sharding of one carries over to the other.
struct Link {
  ValueId a;
  int64_t a_dim;
  ValueId b;
  int64_t b_dim;
};

// A value of the partitioned program: one partition's block of a global value.
struct Local {
  ValueId value;
  Spec spec;
  OpCode partial_op = OpCode::kAdd;  // how partials along spec.unreduced combine
};

// The status of a program left to the global view: Unimplemented, "not partitioned: <why>".
Status NotCovered(std::string why);
// The sharding of a whole value of `rank` dimensions.
Spec Replicated(size_t rank);
bool SameMesh(const Mesh& a, const Mesh& b);
// The block shape of a value of `global` dims sharded as `spec`.
Dims LocalDims(const Dims& global, const Spec& spec, const MeshGeometry& mesh);

// Whether `spec` splits `dims` evenly and uses no axis twice.
bool Fits(const Spec& spec, const Dims& dims, const MeshGeometry& mesh);

// Attributes as the reader builds them: an i64, an i64 tensor, a 1-D i64 list; and a list
// attribute's values (empty if absent).
ir::Attribute IntAttr(int64_t value);
ir::Attribute IntElementsAttr(const std::vector<int64_t>& values, Dims dims);
ir::Attribute IntListAttr(const std::vector<int64_t>& values);
std::vector<int64_t> IntList(const ir::Operation& op, std::string_view name);

// The reduction of a body `return op(arg0, arg1)`: add, multiply, maximum, minimum, and,
// or; nullopt for another body.
std::optional<OpCode> SimpleReduction(const ir::Region& region);

// Whether the scalar constant `bytes` of `dtype` is the identity of `reduction`: combining
// partials computed from it then counts it once.
bool IsIdentity(OpCode reduction, DType dtype, const std::vector<uint8_t>& bytes);

// Elementwise-like ops: each operand of the result's rank is laid out as the result.
bool IsSameShapeOp(const ir::Module& module, const ir::Operation& op);

// Which result dimension each operand dimension of a reshape becomes: dimensions whose
// preceding dimensions hold the same number of elements split the same way.
std::vector<std::pair<int64_t, int64_t>> ReshapeDimPairs(const Dims& from, const Dims& to);

// A manual region's manual_axes, and its in_shardings/out_shardings lists.
std::set<std::string> ManualAxes(const ir::Operation& op);
const ir::Attribute::Array* ShardingArray(const ir::Operation& op, std::string_view name);

// (indices dimension, result dimension) of a gather's batch dimensions: the result
// dimensions not in offset_dims, in order, and the indices dimensions but index_vector_dim.
std::vector<std::pair<int64_t, int64_t>> GatherBatchDims(const ir::Operation& op, const ir::Module& module);

// Per dimension of a reduce_window/select_and_scatter operand of `rank` dimensions, whether
// the window is one element there (size, stride, dilations 1, no padding): each element of
// the result depends on the same element of the operand, so the dimension may stay split.
std::vector<bool> PointwiseWindowDims(const ir::Operation& op, size_t rank);

// Whether `op` is or holds a manual region (sdy.manual_computation).
bool ContainsManualRegion(const ir::Operation& op);
// Send, recv and custom calls with side effects (host callbacks), in `op` or its regions.
bool ContainsHostTransfer(const ir::Operation& op);
// Ops that cannot run whole on every partition: side effects, collectives and partition
// identities (which mean something else once partitioned), Shardy ops.
bool RunsOnlyOnce(const ir::Operation& op);
// Ops in `region` that a partitioned program cannot hold (calls are not inlined there).
Status CheckRegion(const ir::Region& region);

class Partitioner {
 public:
  Partitioner(const ir::Module& module, int64_t partitions) : in_(module), out_(module), partitions_(partitions) {}

  StatusOr<PartitionedProgram> Run();

 private:
  // --- Step 1: the entry function (its calls inlined by passes/) with every value fresh. ---
  // Appends the block's ops to `out` (ops_ if null), every value fresh.
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
  // The two-operand contraction `op` (dot_general, convolution) with its operands resharded
  // to `lhs_spec`/`rhs_spec`: its result is split as `result_spec` and partial along
  // `partial_axes` (the axes splitting the contracted dimensions).
  Status EmitContraction(const ir::Operation& op, const Spec& lhs_spec, const Spec& rhs_spec, const Spec& result_spec,
                         std::vector<int> partial_axes);
  // Ungrouped convolutions split along batch and output features; input features split
  // alike in both operands leave partials.
  Status RewriteConvolution(const ir::Operation& op);
  // reduce_window and select_and_scatter (pooling and its gradient) split along the
  // dimensions their windows do not span.
  Status RewriteWindow(const ir::Operation& op);
  Status RewriteManual(const ir::Operation& op);
  // A scatter-add of sharded updates: each partition adds its updates into its partial of
  // the operand (the operand on the first partition, zeros on the others).
  Status RewriteScatterAdd(const ir::Operation& op);
  // A gather of sharded index rows from a whole operand: each partition gathers its rows.
  Status RewriteGather(const ir::Operation& op);
  Status RewriteWhole(const ir::Operation& op);
  // A custom call to a batch partitionable target (batch_partitionable.h): each partition
  // calls it on its shards of the leading `batch_dims` dimensions.
  Status RewriteBatchCustomCall(const ir::Operation& op, int64_t batch_dims);
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

}  // namespace stablert::passes::partitioning
