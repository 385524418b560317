// The parameters of the steps the executor runs itself (plan.h): kManual steps and the
// collective steps (StepKind::kCollective), built by plan/lower_manual.cc and read by
// runtime/executor.cc. They are parameter structs like the kernels' (kernels/params.h) and
// travel in Step::params; the executor checks each step's struct type when it loads
// a plan, so running a step reads its struct without checking.
//
// Partitions are named by their partition id (0 .. num_partitions - 1).
//
// Thread-safety: plain data, immutable once in a plan.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/params.h"

namespace stablert::plan {

// A kManual step: regions[0] runs once per partition.
struct ManualParams {
  static constexpr std::string_view kFamily = "manual";
  int64_t num_partitions = 1;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("num_partitions", num_partitions);
  }
};

// "manual_operand": each partition takes its block of the global operand.
struct ManualOperandParams {
  static constexpr std::string_view kFamily = "manual_operand";
  // Per partition (indexed by id), the start of its block in the global array: one entry
  // per dimension of the local block.
  std::vector<std::vector<int64_t>> block_starts;
  // An unreduced operand: per partition, 1 if it takes zeros instead of its block (the
  // partitions off position 0 along the unreduced mesh axes); empty: every partition
  // takes its block.
  std::vector<int64_t> takes_zeros;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("block_starts", block_starts);
    visit("takes_zeros", takes_zeros);
  }
};

// "manual_result": each block of the global result is written by the first partition
// (lowest id) holding it.
struct ManualResultParams {
  static constexpr std::string_view kFamily = "manual_result";
  std::vector<std::vector<int64_t>> block_starts;  // as ManualOperandParams::block_starts

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("block_starts", block_starts);
  }
};

// The groups of partitions a collective communicates in (StableHLO replica groups,
// resolved to partition ids by the lowering).
struct PartitionGroups {
  // Each group's members, in group order. Empty: one group of all partitions.
  std::vector<std::vector<int64_t>> groups;
  // The members of every group (with `groups` empty: the number of partitions); 0 when
  // the groups differ in size, which only all_reduce accepts.
  int64_t group_size = 1;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
    visit("group_size", group_size);
  }
};

// "all_reduce.<binary kernel key>" and "all_reduce_program".
struct AllReduceParams {
  static constexpr std::string_view kFamily = "all_reduce";
  PartitionGroups groups;
  // all_reduce_program: the reduction body (kernels/scalar_program.h encoding, two
  // arguments, one result); empty for a binary kernel.
  std::vector<int64_t> body;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
    visit("body", body);
  }
};

// "reduce_scatter.<binary kernel key>" and "reduce_scatter_program".
struct ReduceScatterParams {
  static constexpr std::string_view kFamily = "reduce_scatter";
  PartitionGroups groups;
  int64_t dimension = 0;      // scatter_dimension
  std::vector<int64_t> body;  // as AllReduceParams::body

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
    visit("dimension", dimension);
    visit("body", body);
  }
};

// "all_gather": the members' operands concatenated along `dimension`, in group order.
struct AllGatherParams {
  static constexpr std::string_view kFamily = "all_gather";
  PartitionGroups groups;
  int64_t dimension = 0;  // all_gather_dim

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
    visit("dimension", dimension);
  }
};

// "all_to_all": the operand split into group_size chunks along split_dimension, chunk k
// sent to member k, received chunks concatenated along concat_dimension.
struct AllToAllParams {
  static constexpr std::string_view kFamily = "all_to_all";
  PartitionGroups groups;
  int64_t split_dimension = 0;
  int64_t concat_dimension = 0;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
    visit("split_dimension", split_dimension);
    visit("concat_dimension", concat_dimension);
  }
};

// "collective_broadcast": every member takes the first member's operand.
struct CollectiveBroadcastParams {
  static constexpr std::string_view kFamily = "collective_broadcast";
  PartitionGroups groups;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
  }
};

// "collective_permute": each source sends its operand to its target; partitions that are
// no target get zeros.
struct CollectivePermuteParams {
  static constexpr std::string_view kFamily = "collective_permute";
  std::vector<std::vector<int64_t>> pairs;  // {source, target} partition ids

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("pairs", pairs);
  }
};

// "gather_blocks" (a result of a nested manual region): the members' blocks, each placed
// at its partition's start in the whole array.
struct GatherBlocksParams {
  static constexpr std::string_view kFamily = "gather_blocks";
  PartitionGroups groups;
  std::vector<std::vector<int64_t>> block_starts;  // per partition id, as in ManualOperandParams

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("groups", groups);
    visit("block_starts", block_starts);
  }
};

}  // namespace stablert::plan
