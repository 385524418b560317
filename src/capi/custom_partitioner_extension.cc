#include "capi/custom_partitioner_extension.h"

#include <string_view>

#include "capi/error.h"
#include "passes/sharding/batch_partitionable.h"
#include "xla/pjrt/c/pjrt_c_api_custom_partitioner_extension.h"

namespace stablert::capi {
namespace {

PJRT_Error* RegisterBatchPartitionable(PJRT_Register_Batch_Partitionable_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Register_Batch_Partitionable, args);
  STABLERT_CAPI_REQUIRE(PJRT_Register_Batch_Partitionable, args->name);
  STABLERT_CAPI_GUARD(PJRT_Register_Batch_Partitionable, {
    const std::string_view name(args->name, args->name_size);
    if (name.empty())
      return ToPjrtError(InvalidArgument("PJRT_Register_Batch_Partitionable: the target name is empty"));
    passes::RegisterBatchPartitionable(name);
    return nullptr;
  })
}

PJRT_Error* RegisterCustomPartitioner(PJRT_Register_Custom_Partitioner_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Register_Custom_Partitioner, args);
  // Accepted and not kept: StableRT does not call partitioning callbacks. jaxlib registers
  // every jax.experimental.custom_partitioning rule with every plugin as the rule is defined,
  // so an error here would fail that definition for all backends. The callbacks (owned by
  // the plugin once registered) are never freed, as a registration lasts for the process.
  return nullptr;
}

PJRT_Custom_Partitioner_Extension kCustomPartitioner = {
    {PJRT_Custom_Partitioner_Extension_STRUCT_SIZE, PJRT_Extension_Type_Custom_Partitioner, nullptr},
    &RegisterCustomPartitioner,
    &RegisterBatchPartitionable,
};

}  // namespace

PJRT_Extension_Base* CustomPartitionerExtension(PJRT_Extension_Base* next) {
  kCustomPartitioner.base.next = next;
  return &kCustomPartitioner.base;
}

}  // namespace stablert::capi
