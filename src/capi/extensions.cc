// PJRT extensions: Shardings (the partitioning of a compiled executable's parameters and
// outputs, which JAX reads to know the shardings of results it did not fix itself), then
// FFI (capi/ffi_extension.h), then Custom_Partitioner (capi/custom_partitioner_extension.h),
// then CrossHostTransfers (capi/cross_host_transfers_extension.h),
// then Profiler (capi/profiler_extension.h),
// then Layouts (capi/layouts_extension.h).
#include "capi/extensions.h"

#include "capi/cross_host_transfers_extension.h"
#include "capi/custom_partitioner_extension.h"
#include "capi/error.h"
#include "capi/ffi_extension.h"
#include "capi/handles.h"
#include "capi/layouts_extension.h"
#include "capi/profiler_extension.h"
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"

namespace stablert::capi {
namespace {

PJRT_Error* ParameterShardings(PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Shardings_PJRT_Executable_ParameterShardings, args);
  STABLERT_CAPI_REQUIRE(PJRT_Shardings_PJRT_Executable_ParameterShardings, args->executable);
  STABLERT_CAPI_GUARD(PJRT_Shardings_PJRT_Executable_ParameterShardings, {
    args->num_parameters = args->executable->parameter_shardings.size();
    args->shardings = args->executable->parameter_shardings.data();
    args->sharding_sizes = args->executable->parameter_sharding_sizes.data();
    return nullptr;
  })
}

PJRT_Error* OutputShardings(PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Shardings_PJRT_Executable_OutputShardings, args);
  STABLERT_CAPI_REQUIRE(PJRT_Shardings_PJRT_Executable_OutputShardings, args->executable);
  STABLERT_CAPI_GUARD(PJRT_Shardings_PJRT_Executable_OutputShardings, {
    args->num_outputs = args->executable->output_shardings.size();
    args->shardings = args->executable->output_shardings.data();
    args->sharding_sizes = args->executable->output_sharding_sizes.data();
    return nullptr;
  })
}

PJRT_Shardings_Extension kShardings = {
    {PJRT_Shardings_Extension_STRUCT_SIZE, PJRT_Extension_Type_Shardings, FfiExtension(CustomPartitionerExtension(CrossHostTransfersExtension(ProfilerExtension(LayoutsExtension()))))},
    &ParameterShardings,
    &OutputShardings,
};

}  // namespace

PJRT_Extension_Base* ExtensionChain() { return &kShardings.base; }

}  // namespace stablert::capi
