// Custom call targets registered as batch partitionable (jax.ffi.
// register_ffi_target_as_batch_partitionable, through PJRT_Custom_Partitioner_Extension's
// register_batch_partitionable; capi/custom_partitioner_extension.cc): a call to one, marked
// with the frontend attribute `num_batch_dims` = k, computes each index of its operands'
// leading k dimensions independently, so the SPMD partitioner runs it on every partition's
// shards (partition_rules.cc) instead of leaving the program to the global view.
//
// Registrations last for the life of the process. Thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "ir/module.h"

namespace stablert::passes {

void RegisterBatchPartitionable(std::string_view target);
bool IsBatchPartitionable(std::string_view target);

// For a custom_call to a batch partitionable target with a valid `num_batch_dims` frontend
// attribute (a decimal, at least 1 and below every operand's and result's rank): that
// number; otherwise nullopt.
std::optional<int64_t> BatchPartitionableDims(const ir::Module& module, const ir::Operation& op);

}  // namespace stablert::passes
