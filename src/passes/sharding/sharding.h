// Shardings: how a global array is cut into per-device shards.
//
// JAX sends multi-device programs unpartitioned: parameters and results carry a Shardy
// `sdy.sharding` (a mesh plus, per dimension, the mesh axes that split it) or, with Shardy
// off, an `mhlo.sharding` string. ParseSharding turns either into a TensorSharding, and
// LayoutShards computes, for every partition, the block of the global array it holds.
// Uneven splits (a dimension not divisible by its number of pieces) are rejected.
// Pure functions over value types; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/shape.h"
#include "base/status.h"
#include "ir/module.h"

namespace stablert::passes {

struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

struct Mesh {
  std::vector<MeshAxis> axes;
  // device_ids[i] = partition at row-major mesh position i; empty means the identity.
  std::vector<int64_t> device_ids;
  int64_t num_positions() const;
};

// One mesh axis, or a sub-axis (`pre_size` and `size` pick a factor of the axis).
struct AxisRef {
  int axis = 0;           // index into Mesh::axes
  int64_t pre_size = 1;   // the axis is viewed as [pre_size, size, rest]; this is the middle
  int64_t size = 0;       // 0: the whole axis
};

struct TensorSharding {
  Mesh mesh;
  std::vector<std::vector<AxisRef>> dims;  // per dimension, major axis first
  // Unreduced (partial-sum) axes: the array is the sum of one partial value per position
  // along these axes.
  std::vector<AxisRef> unreduced;
  // Set for a maximal sharding: the whole array lives on that one partition.
  int64_t maximal_partition = -1;
  bool IsReplicated() const;
  std::string ToString() const;
};

// Reads `sdy.sharding` or `mhlo.sharding` from an argument/result attribute dictionary; a
// value without either is replicated. Meshes referenced by name come from `module`.
// `rank` is the array's rank. Errors are InvalidArgument/Unimplemented naming `what`.
StatusOr<TensorSharding> ParseSharding(const ir::Module& module, const ir::Attribute::Dictionary& attrs, int64_t rank,
                                       int64_t num_partitions, const std::string& what);

// For a result of `function` that carries no sharding (or an open, empty one): the sharding
// of the data it is computed from, found by following it back through sharding
// constraints, manual regions, elementwise ops, transposes, broadcasts, reshapes, slices,
// concatenates, gathers, reductions, dot_general and control flow (rules in
// result_sharding.cc) to the parameters. This picks
// what a sharding propagation pass would for such programs; nullopt if nothing sharded is
// found (the result is then replicated).
std::optional<TensorSharding> PropagatedResultSharding(const ir::Module& module, const ir::Function& function,
                                                       size_t result_index, int64_t num_partitions);

// The sharding of any value of `function`'s body (or of a region nested in it), found by the
// same rules; nullopt if it is replicated or its origin is not followed.
std::optional<TensorSharding> PropagatedValueSharding(const ir::Module& module, const ir::Function& function,
                                                      ir::ValueId value, int64_t num_partitions);

// Whether an sdy.sharding leaves every dimension open and unsharded (`[{?}, {?}]`): the
// program lets the compiler choose.
bool IsUnconstrainedSharding(const ir::Attribute& sdy_sharding);

// Where each partition's shard sits in the global array.
struct ShardLayout {
  Dims local_dims;                   // the same for every partition
  std::vector<Dims> starts;          // starts[partition][dim]
  // owner[partition] = the first partition holding the same block (itself if first).
  std::vector<int64_t> first_holder;
  // With unreduced axes, a block is the sum of the partial blocks of the partitions that
  // differ only along those axes. StableRT holds such arrays summed: the partition at
  // position 0 along the unreduced axes (partial_index[partition]) holds the block, the
  // others zeros. partial_groups lists the partitions group by group (the members of a
  // group sum to one block), partial_group_size each; 1 without unreduced axes.
  std::vector<int64_t> partial_index;
  std::vector<int64_t> partial_groups;
  int64_t partial_group_size = 1;
};

StatusOr<ShardLayout> LayoutShards(const TensorSharding& sharding, const Dims& global_dims, int64_t num_partitions,
                                   const std::string& what);

// The layout as a serialized xla.OpSharding (what frameworks read back from a compiled
// executable): REPLICATED when every partition holds the whole array, else a tile
// assignment over partition ids, with replication on a last tile dimension if needed.
std::string SerializeOpSharding(const ShardLayout& layout, const Dims& global_dims);

// The inverse, for a sharding a compiled executable reports (op_sharding.cc): where each of
// `num_partitions` partitions' shard of an array of `global_dims` lies under the serialized
// xla.OpSharding `serialized` (REPLICATED, MAXIMAL, or OTHER with an explicit or iota tile
// assignment over partition ids, optionally replicated or unreduced on last tile
// dimensions). Uneven tiles, MANUAL and TUPLE shardings are Unimplemented, a malformed
// proto InvalidArgument, each naming `what`.
StatusOr<ShardLayout> LayoutFromOpSharding(std::string_view serialized, const Dims& global_dims, int64_t num_partitions,
                                           const std::string& what);

}  // namespace stablert::passes
