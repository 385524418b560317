// PJRT_Plugin_* entry points: initialization and the attributes JAX reads at load time.
#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "stablehlo/version.h"

namespace stablert::capi {
namespace {

const NamedValueList& PluginAttributes() {
  static const NamedValueList* attributes = [] {
    auto* list = new NamedValueList;
    // xla_version: the XLA compatibility level of serialized programs JAX checks; 2 is the
    // value XLA's own plugins of the pinned jaxlib era report.
    list->AddInt64("xla_version", 2);
    const stablehlo::Version current = stablehlo::kCurrentVersion;
    const stablehlo::Version minimum = stablehlo::kMinimumVersion;
    list->AddInt64List("stablehlo_current_version", {current.major, current.minor, current.patch});
    list->AddInt64List("stablehlo_minimum_version", {minimum.major, minimum.minor, minimum.patch});
    list->AddBool("supports_executable_serialization", true);
    return list;
  }();
  return *attributes;
}

}  // namespace

PJRT_Error* PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Plugin_Initialize, args);
  return nullptr;
}

PJRT_Error* PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Plugin_Attributes, args);
  const NamedValueList& attributes = PluginAttributes();
  args->attributes = attributes.data();
  args->num_attributes = attributes.size();
  return nullptr;
}

}  // namespace stablert::capi
