// SPMD partitioning: the program one partition runs, from a program over global arrays.
//
// JAX sends a multi-device program unpartitioned: global shapes, with the shardings of the
// parameters, results and sharding constraints as annotations. PartitionProgram gives every
// value a sharding over the program's mesh (from those annotations, propagated forwards and
// backwards through elementwise ops, broadcasts, iotas, transposes, reshapes, reductions and
// dot_general), then rewrites the entry function so that each value holds only one
// partition's block:
//   - ops whose sharded dimensions stay independent run on blocks (elementwise, broadcast,
//     iota with the block's offset, transpose, reshape, reduce and dot_general over
//     unsharded dimensions, splat constants);
//   - a reduction or contraction over a sharded dimension leaves per-partition partials,
//     summed (or maxed, ...) by an all_reduce over the partitions that hold them, unless the
//     value is wanted `unreduced` (then the partials are the result, as frameworks expect);
//   - where an op needs another sharding than its operand has, the operand is resharded:
//     all_reduce of partials, all_gather of sharded dimensions, and a dynamic_slice at the
//     partition's offset (a table indexed by partition_id) for newly sharded ones;
//   - ops without a partitioning rule run on whole (replicated) operands, if small;
//   - fully manual regions (shard_map over every mesh axis) are inlined: their bodies
//     already compute on blocks; host transfers in them (host callbacks) stay, so each
//     partition calls back with its own block, and tokens (ordered effects) are values
//     every partition holds.
// The result runs once per partition (the plan lowered with LowerToPlan(module,
// partitions)), with real collectives between the partitions.
//
// Programs it does not cover are left to the global view (compile.cc): PartitionProgram
// then returns an Unimplemented status naming the reason (partially manual regions,
// control flow, host transfers, custom calls and collectives outside manual regions,
// sub-axes, uneven splits, large replicated computations, programs with nothing sharded).
// Pure function of its input; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "passes/sharding/sharding.h"

namespace stablert::passes {

struct PartitionedProgram {
  // Entry function over blocks (one partition's view); no Shardy ops or meshes.
  ir::Module module;
  // The sharding of every parameter and result of the original entry function: where each
  // partition's block sits (an unreduced result's blocks are per-partition partials).
  std::vector<TensorSharding> parameter_shardings;
  std::vector<TensorSharding> result_shardings;
};

StatusOr<PartitionedProgram> PartitionProgram(const ir::Module& module, int64_t num_partitions);

}  // namespace stablert::passes
