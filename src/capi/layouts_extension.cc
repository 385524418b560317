#include "capi/layouts_extension.h"

#include <memory>
#include <string>

#include "capi/error.h"
#include "capi/handles.h"
#include "capi/layout.h"

struct PJRT_Layouts_SerializedLayout {
  std::string bytes;
};

namespace stablert::capi {
namespace {

// XLA's text form of a layout: "{1,0}" (minor_to_major), "{}" for a scalar.
std::string LayoutText(const PJRT_Layouts_MemoryLayout& layout) {
  std::string text = "{";
  for (size_t i = 0; i < layout.minor_to_major.size(); ++i) {
    if (i > 0) text.push_back(',');
    text.append(std::to_string(layout.minor_to_major[i]));
  }
  text.push_back('}');
  return text;
}

PJRT_Error* Destroy(PJRT_Layouts_MemoryLayout_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_MemoryLayout_Destroy, args);
  delete args->layout;
  return nullptr;
}

PJRT_Error* Serialize(PJRT_Layouts_MemoryLayout_Serialize_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_MemoryLayout_Serialize, args);
  STABLERT_CAPI_REQUIRE(PJRT_Layouts_MemoryLayout_Serialize, args->layout);
  STABLERT_CAPI_GUARD(PJRT_Layouts_MemoryLayout_Serialize, {
    auto serialized = std::make_unique<PJRT_Layouts_SerializedLayout>();
    serialized->bytes = LayoutText(*args->layout);
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_layout = serialized.release();
    args->serialized_layout_deleter = [](PJRT_Layouts_SerializedLayout* s) { delete s; };
    return nullptr;
  })
}

PJRT_Error* ClientDefault(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_PJRT_Client_GetDefaultLayout, args);
  STABLERT_CAPI_REQUIRE(PJRT_Layouts_PJRT_Client_GetDefaultLayout, args->client);
  STABLERT_CAPI_GUARD(PJRT_Layouts_PJRT_Client_GetDefaultLayout, {
    STABLERT_CAPI_RETURN_IF_ERROR(
        ToDType("PJRT_Layouts_PJRT_Client_GetDefaultLayout", RawEnumValue(args->type)).status());
    STABLERT_CAPI_RETURN_IF_ERROR(ToDims("PJRT_Layouts_PJRT_Client_GetDefaultLayout", args->dims, args->num_dims).status());
    args->layout = new PJRT_Layouts_MemoryLayout(RowMajorLayout(args->num_dims));
    return nullptr;
  })
}

PJRT_Error* TopologyDefault(PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_PJRT_Topology_GetDefaultLayout, args);
  STABLERT_CAPI_REQUIRE(PJRT_Layouts_PJRT_Topology_GetDefaultLayout, args->topology_description);
  STABLERT_CAPI_GUARD(PJRT_Layouts_PJRT_Topology_GetDefaultLayout, {
    STABLERT_CAPI_RETURN_IF_ERROR(
        ToDType("PJRT_Layouts_PJRT_Topology_GetDefaultLayout", RawEnumValue(args->type)).status());
    STABLERT_CAPI_RETURN_IF_ERROR(
        ToDims("PJRT_Layouts_PJRT_Topology_GetDefaultLayout", args->dims, args->num_dims).status());
    args->layout = new PJRT_Layouts_MemoryLayout(RowMajorLayout(args->num_dims));
    return nullptr;
  })
}

PJRT_Error* BufferLayout(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_PJRT_Buffer_MemoryLayout, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Layouts_PJRT_Buffer_MemoryLayout, args->buffer);
  STABLERT_CAPI_GUARD(PJRT_Layouts_PJRT_Buffer_MemoryLayout, {
    const runtime::Buffer& buffer = *args->buffer->buffer;
    args->layout = new PJRT_Layouts_MemoryLayout(MemoryLayoutOf(buffer.layout(), buffer.dims().size()));
    return nullptr;
  })
}

PJRT_Error* OutputLayouts(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_PJRT_Executable_GetOutputLayouts, args);
  STABLERT_CAPI_REQUIRE(PJRT_Layouts_PJRT_Executable_GetOutputLayouts, args->executable);
  args->num_outputs = args->executable->output_layout_pointers.size();
  args->layouts = args->executable->output_layout_pointers.data();
  return nullptr;
}

PJRT_Error* ParameterLayouts(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Layouts_PJRT_Executable_GetParameterLayouts, args);
  STABLERT_CAPI_REQUIRE(PJRT_Layouts_PJRT_Executable_GetParameterLayouts, args->executable);
  args->num_parameters = args->executable->parameter_layout_pointers.size();
  args->layouts = args->executable->parameter_layout_pointers.data();
  return nullptr;
}

PJRT_Layouts_Extension kLayouts = {
    {PJRT_Layouts_Extension_STRUCT_SIZE, PJRT_Extension_Type_Layouts, nullptr},
    &Destroy,
    &Serialize,
    &ClientDefault,
    &BufferLayout,
    &TopologyDefault,
    &OutputLayouts,
    &ParameterLayouts,
};

}  // namespace

PJRT_Layouts_MemoryLayout RowMajorLayout(size_t rank) {
  PJRT_Layouts_MemoryLayout layout;
  for (size_t d = rank; d-- > 0;) layout.minor_to_major.push_back(static_cast<int64_t>(d));
  return layout;
}

PJRT_Layouts_MemoryLayout MemoryLayoutOf(const std::vector<int64_t>& m2m, size_t rank) {
  if (m2m.empty()) return RowMajorLayout(rank);
  PJRT_Layouts_MemoryLayout layout;
  layout.minor_to_major.assign(m2m.rbegin(), m2m.rend());
  return layout;
}

PJRT_Extension_Base* LayoutsExtension() { return &kLayouts.base; }

}  // namespace stablert::capi
