// Helpers of the C API suite around device layouts: a tile-free PJRT_Buffer_MemoryLayout,
// the Layouts extension and its serialized layouts ("{0,1}"), and a buffer's bytes as they lie
// on the device. Free functions over the loaded api; failures are gtest expectations.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin_fixture.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"

namespace stablert::capi_test {

// A layout in `minor_to_major` order with no tiles; it points into the caller's vector.
inline PJRT_Buffer_MemoryLayout TiledLayout(const std::vector<int64_t>& minor_to_major) {
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  return layout;
}

// A Strides layout of `byte_strides`; it points into the caller's vector.
inline PJRT_Buffer_MemoryLayout StridesLayout(const std::vector<int64_t>& byte_strides) {
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides.struct_size = PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE;
  layout.strides.byte_strides = byte_strides.data();
  layout.strides.num_byte_strides = byte_strides.size();
  return layout;
}

// A Tiled layout in `minor_to_major` order with one 8x128 tile (a layout StableRT cannot
// hold). `layout` points into the caller's vector and into this object, which stays put.
struct OneTileLayout {
  explicit OneTileLayout(const std::vector<int64_t>& minor_to_major) : layout(TiledLayout(minor_to_major)) {
    layout.tiled.tile_dims = tile_dims;
    layout.tiled.tile_dim_sizes = tile_dim_sizes;
    layout.tiled.num_tiles = 1;
  }
  OneTileLayout(const OneTileLayout&) = delete;
  OneTileLayout& operator=(const OneTileLayout&) = delete;

  int64_t tile_dims[2] = {8, 128};
  size_t tile_dim_sizes[1] = {2};
  PJRT_Buffer_MemoryLayout layout;
};

// The plugin's Layouts extension, or nullptr.
inline const PJRT_Layouts_Extension* FindLayoutsExtension(const PJRT_Api* api) {
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next)
    if (e->type == PJRT_Extension_Type_Layouts) return reinterpret_cast<const PJRT_Layouts_Extension*>(e);
  return nullptr;
}

// `layout` serialized ("{1,0}"); destroys it when `destroy`.
inline std::string SerializeLayout(const PJRT_Api* api, const PJRT_Layouts_Extension* layouts,
                                   PJRT_Layouts_MemoryLayout* layout, bool destroy) {
  PJRT_Layouts_MemoryLayout_Serialize_Args serialize{};
  serialize.struct_size = PJRT_Layouts_MemoryLayout_Serialize_Args_STRUCT_SIZE;
  serialize.layout = layout;
  EXPECT_PJRT_OK(api, layouts->PJRT_Layouts_MemoryLayout_Serialize(&serialize));
  std::string text(serialize.serialized_bytes, serialize.serialized_bytes_size);
  serialize.serialized_layout_deleter(serialize.serialized_layout);
  if (destroy) {
    PJRT_Layouts_MemoryLayout_Destroy_Args args{PJRT_Layouts_MemoryLayout_Destroy_Args_STRUCT_SIZE, nullptr, layout};
    EXPECT_PJRT_OK(api, layouts->PJRT_Layouts_MemoryLayout_Destroy(&args));
  }
  return text;
}

// The device layout of `buffer`, serialized.
inline std::string BufferLayoutText(const PJRT_Api* api, PJRT_Buffer* buffer) {
  const PJRT_Layouts_Extension* layouts = FindLayoutsExtension(api);
  if (!layouts) return "no Layouts extension";
  PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args of_buffer{};
  of_buffer.struct_size = PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args_STRUCT_SIZE;
  of_buffer.buffer = buffer;
  EXPECT_PJRT_OK(api, layouts->PJRT_Layouts_PJRT_Buffer_MemoryLayout(&of_buffer));
  return SerializeLayout(api, layouts, of_buffer.layout, /*destroy=*/true);
}

// The first `count` floats of an f32 buffer as they lie on the device, once it is ready.
inline std::vector<float> DeviceFloats(const PJRT_Api* api, PJRT_Buffer* buffer, size_t count) {
  PJRT_Buffer_ReadyEvent_Args ready{};
  ready.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
  ready.buffer = buffer;
  EXPECT_PJRT_OK(api, api->PJRT_Buffer_ReadyEvent(&ready));
  PJRT_Event_Await_Args await{PJRT_Event_Await_Args_STRUCT_SIZE, nullptr, ready.event};
  EXPECT_PJRT_OK(api, api->PJRT_Event_Await(&await));
  PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, ready.event};
  EXPECT_PJRT_OK(api, api->PJRT_Event_Destroy(&destroy));
  PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
  pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
  pointer.buffer = buffer;
  EXPECT_PJRT_OK(api, api->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer));
  const float* data = static_cast<const float*>(pointer.device_memory_ptr);
  return std::vector<float>(data, data + count);
}

}  // namespace stablert::capi_test
