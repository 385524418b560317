// Device layouts other than row-major on every C API path a layout reaches besides
// BufferFromHostBuffer and CreateViewOfDeviceBuffer (tests/capi/buffer_test.cc): async
// host-to-device transfers, uninitialized buffers, alias buffers, bitcasts, copies to other
// devices and memories, reads to the host in a host layout, and executables whose entry asks
// for layouts. Each checks the bytes on the device and the values read back.
#include <cstring>
#include <utility>
#include <string>
#include <vector>

#include "compile_options.h"
#include "program_fixture.h"
#include "layout_helpers.h"

namespace stablert::capi_test {
namespace {

std::vector<float> Iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

// The row-major 3x4 array `host` held column-major (minor_to_major {0, 1}).
std::vector<float> ColumnMajor(const std::vector<float>& host) {
  std::vector<float> out(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) out[j * 3 + i] = host[i * 4 + j];
  return out;
}

std::vector<float> Floats(const std::vector<char>& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

class DeviceLayoutPathsTest : public ProgramTest {
 protected:
  size_t OnDeviceSize(PJRT_Buffer* buffer) {
    PJRT_Buffer_OnDeviceSizeInBytes_Args args{};
    args.struct_size = PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_OnDeviceSizeInBytes(&args));
    return args.on_device_size_in_bytes;
  }

  // A 3x4 f32 buffer held column-major, from the row-major `host`.
  PJRT_Buffer* ColumnMajorBuffer(const std::vector<float>& host, PJRT_Device* device) {
    std::vector<int64_t> m2m = {0, 1};
    PJRT_Buffer_MemoryLayout layout = TiledLayout(m2m);
    std::vector<int64_t> dims = {3, 4};
    PJRT_Client_BufferFromHostBuffer_Args args{};
    args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.data = host.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.memory = DefaultMemory(device);
    args.device_layout = &layout;
    EXPECT_PJRT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    AwaitAndDestroy(args.done_with_host_buffer);
    return args.buffer;
  }
};

TEST_F(DeviceLayoutPathsTest, AsyncTransferKeepsTheDeviceLayout) {
  std::vector<int64_t> dims = {3, 4};
  PJRT_ShapeSpec specs[2]{};
  for (auto& spec : specs) {
    spec.struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
    spec.dims = dims.data();
    spec.num_dims = dims.size();
    spec.element_type = PJRT_Buffer_Type_F32;
  }
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout column = TiledLayout(m2m);
  PJRT_Buffer_MemoryLayout* layouts[2] = {&column, &column};
  PJRT_Client_CreateBuffersForAsyncHostToDevice_Args create{};
  create.struct_size = PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE;
  create.client = client_;
  create.shape_specs = specs;
  create.num_shape_specs = 2;
  create.device_layouts = layouts;
  create.num_device_layouts = 2;
  create.memory = DefaultMemory(Devices(client_)[0]);
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create));
  PJRT_AsyncHostToDeviceTransferManager* manager = create.transfer_manager;

  const std::vector<float> host = Iota(12);
  const std::vector<float> device_order = ColumnMajor(host);
  // Buffer 0: raw chunks of the on-device (column-major) bytes, in two pieces.
  PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args size{};
  size.struct_size = PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args_STRUCT_SIZE;
  size.transfer_manager = manager;
  size.buffer_index = 0;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size));
  EXPECT_EQ(size.buffer_size, 48u);
  for (int part = 0; part < 2; ++part) {
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args data{};
    data.struct_size = PJRT_AsyncHostToDeviceTransferManager_TransferData_Args_STRUCT_SIZE;
    data.transfer_manager = manager;
    data.buffer_index = 0;
    data.data = device_order.data() + part * 6;
    data.offset = part * 24;
    data.transfer_size = 24;
    data.is_last_transfer = part == 1;
    ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferData(&data));
    AwaitAndDestroy(data.done_with_h2d_transfer);
  }
  // Buffer 1: a row-major literal, stored column-major.
  PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args literal{};
  literal.struct_size = PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args_STRUCT_SIZE;
  literal.transfer_manager = manager;
  literal.buffer_index = 1;
  literal.data = host.data();
  literal.shape_dims = dims.data();
  literal.shape_num_dims = 2;
  literal.shape_element_type = PJRT_Buffer_Type_F32;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&literal));
  AwaitAndDestroy(literal.done_with_h2d_transfer);

  for (int index = 0; index < 2; ++index) {
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args retrieve{};
    retrieve.struct_size = PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args_STRUCT_SIZE;
    retrieve.transfer_manager = manager;
    retrieve.buffer_index = index;
    ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&retrieve));
    PJRT_Buffer* buffer = retrieve.buffer_out;
    EXPECT_EQ(BufferLayoutText(api_, buffer), "{0,1}") << index;
    EXPECT_EQ(DeviceFloats(api_, buffer, 12), device_order) << index;
    EXPECT_EQ(Floats(ToHost(buffer)), host) << "read back row-major, buffer " << index;
    DestroyBuffer(buffer);
  }
  PJRT_AsyncHostToDeviceTransferManager_Destroy_Args destroy{
      PJRT_AsyncHostToDeviceTransferManager_Destroy_Args_STRUCT_SIZE, nullptr, manager};
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
}

TEST_F(DeviceLayoutPathsTest, AsyncTransferLiteralFromAStridedHostIntoARank3Layout) {
  // f32[2,3,5] held with major_to_minor {2, 0, 1} (minor_to_major {1, 0, 2}), from a host
  // literal laid out column-major.
  std::vector<int64_t> dims = {2, 3, 5};
  PJRT_ShapeSpec spec{};
  spec.struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
  spec.dims = dims.data();
  spec.num_dims = 3;
  spec.element_type = PJRT_Buffer_Type_F32;
  std::vector<int64_t> device_m2m = {1, 0, 2};
  PJRT_Buffer_MemoryLayout device_layout = TiledLayout(device_m2m);
  PJRT_Buffer_MemoryLayout* layouts[1] = {&device_layout};
  PJRT_Client_CreateBuffersForAsyncHostToDevice_Args create{};
  create.struct_size = PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE;
  create.client = client_;
  create.shape_specs = &spec;
  create.num_shape_specs = 1;
  create.device_layouts = layouts;
  create.num_device_layouts = 1;
  create.memory = DefaultMemory(Devices(client_)[0]);
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&create));

  const std::vector<float> host = Iota(30);  // row-major (i, j, k) at i*15 + j*5 + k
  std::vector<float> column_major(30);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) column_major[k * 6 + j * 2 + i] = host[i * 15 + j * 5 + k];
  std::vector<int64_t> host_m2m = {0, 1, 2};
  PJRT_Buffer_MemoryLayout host_layout = TiledLayout(host_m2m);
  PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args literal{};
  literal.struct_size = PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args_STRUCT_SIZE;
  literal.transfer_manager = create.transfer_manager;
  literal.buffer_index = 0;
  literal.data = column_major.data();
  literal.shape_dims = dims.data();
  literal.shape_num_dims = 3;
  literal.shape_element_type = PJRT_Buffer_Type_F32;
  literal.shape_layout = &host_layout;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&literal));
  AwaitAndDestroy(literal.done_with_h2d_transfer);
  PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args retrieve{};
  retrieve.struct_size = PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args_STRUCT_SIZE;
  retrieve.transfer_manager = create.transfer_manager;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&retrieve));
  EXPECT_EQ(BufferLayoutText(api_, retrieve.buffer_out), "{1,0,2}");
  // major_to_minor {2, 0, 1}: element (i, j, k) at k*6 + i*3 + j.
  std::vector<float> device = DeviceFloats(api_, retrieve.buffer_out, 30);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) EXPECT_EQ(device[k * 6 + i * 3 + j], host[i * 15 + j * 5 + k]) << i << j << k;
  EXPECT_EQ(Floats(ToHost(retrieve.buffer_out)), host);
  DestroyBuffer(retrieve.buffer_out);
  PJRT_AsyncHostToDeviceTransferManager_Destroy_Args destroy{
      PJRT_AsyncHostToDeviceTransferManager_Destroy_Args_STRUCT_SIZE, nullptr, create.transfer_manager};
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
}

TEST_F(DeviceLayoutPathsTest, UninitializedBufferTakesTheLayoutAndRefusesTiles) {
  std::vector<int64_t> dims = {3, 4};
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout column = TiledLayout(m2m);
  PJRT_Client_CreateUninitializedBuffer_Args args{};
  args.struct_size = PJRT_Client_CreateUninitializedBuffer_Args_STRUCT_SIZE;
  args.client = client_;
  args.shape_dims = dims.data();
  args.shape_num_dims = 2;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.shape_layout = &column;
  args.memory = DefaultMemory(Devices(client_)[0]);
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
  EXPECT_EQ(BufferLayoutText(api_, args.buffer), "{0,1}");
  EXPECT_EQ(OnDeviceSize(args.buffer), 48u);
  // Written through its device pointer in its own layout, it reads back row-major.
  const std::vector<float> host = Iota(12);
  PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
  pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
  pointer.buffer = args.buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer));
  std::vector<float> device_order = ColumnMajor(host);
  std::memcpy(pointer.device_memory_ptr, device_order.data(), 48);
  EXPECT_EQ(Floats(ToHost(args.buffer)), host);
  DestroyBuffer(args.buffer);

  // Tiles and a malformed permutation fail, naming the function.
  std::vector<int64_t> row = {1, 0};
  OneTileLayout tiled(row);
  args.shape_layout = &tiled.layout;
  ErrorInfo error = TakeError(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_UNIMPLEMENTED) << error.message;
  EXPECT_NE(error.message.find("PJRT_Client_CreateUninitializedBuffer: tiled memory layouts are not supported"),
            std::string::npos)
      << error.message;
  std::vector<int64_t> repeated = {0, 0};
  PJRT_Buffer_MemoryLayout bad = TiledLayout(repeated);
  args.shape_layout = &bad;
  error = TakeError(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error.message;
  EXPECT_NE(error.message.find("PJRT_Client_CreateUninitializedBuffer: minor_to_major is not a permutation"),
            std::string::npos)
      << error.message;
}

TEST_F(DeviceLayoutPathsTest, AliasBufferInALayoutTakesABufferInTheSameLayout) {
  PJRT_Device* device = Devices(client_)[0];
  std::vector<int64_t> dims = {3, 4};
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout column = TiledLayout(m2m);
  PJRT_Client_CreateAliasBuffer_Args create{};
  create.struct_size = PJRT_Client_CreateAliasBuffer_Args_STRUCT_SIZE;
  create.client = client_;
  create.memory = DefaultMemory(device);
  create.shape_dims = dims.data();
  create.shape_num_dims = 2;
  create.shape_element_type = PJRT_Buffer_Type_F32;
  create.shape_layout = &column;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_CreateAliasBuffer(&create));
  EXPECT_EQ(BufferLayoutText(api_, create.alias_buffer), "{0,1}");

  const std::vector<float> host = Iota(12);
  auto fulfil = [&](PJRT_Buffer* buffer) {
    PJRT_Client_FulfillAliasBuffer_Args args{};
    args.struct_size = PJRT_Client_FulfillAliasBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.buffer = buffer;
    args.status_code = PJRT_Error_Code_OK;
    args.fulfill_alias_buffer_cb = create.fulfill_alias_buffer_cb;
    return TakeError(api_, api_->PJRT_Client_FulfillAliasBuffer(&args));
  };
  // A row-major buffer's bytes would be read in the wrong order: refused, promise kept.
  PJRT_Buffer* row_major = ToDevice(host.data(), PJRT_Buffer_Type_F32, dims, device);
  ErrorInfo error = fulfil(row_major);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error.message;
  EXPECT_NE(error.message.find("PJRT_Client_FulfillAliasBuffer: buffer has layout {1,0}, the alias {0,1}"),
            std::string::npos)
      << error.message;
  PJRT_Buffer* column_major = ColumnMajorBuffer(host, device);
  ErrorInfo fulfilled = fulfil(column_major);
  ASSERT_FALSE(fulfilled.failed) << fulfilled.message;
  EXPECT_EQ(DeviceFloats(api_, create.alias_buffer, 12), ColumnMajor(host));
  EXPECT_EQ(Floats(ToHost(create.alias_buffer)), host);
  for (PJRT_Buffer* buffer : {create.alias_buffer, row_major, column_major}) DestroyBuffer(buffer);
}

TEST_F(DeviceLayoutPathsTest, BitcastReadsTheBytesInTheLayoutGiven) {
  PJRT_Device* device = Devices(client_)[0];
  const std::vector<float> host = Iota(12);
  PJRT_Buffer* source = ToDevice(host.data(), PJRT_Buffer_Type_F32, {3, 4}, device);  // row-major 3x4
  // The same bytes as a 4x3 array held column-major are the transpose of the source.
  std::vector<int64_t> dims = {4, 3};
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout column = TiledLayout(m2m);
  PJRT_Buffer_Bitcast_Args args{};
  args.struct_size = PJRT_Buffer_Bitcast_Args_STRUCT_SIZE;
  args.buffer = source;
  args.element_type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 2;
  args.device_layout = &column;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Bitcast(&args));
  EXPECT_EQ(BufferLayoutText(api_, args.out_buffer), "{0,1}");
  std::vector<float> transposed = Floats(ToHost(args.out_buffer));
  ASSERT_EQ(transposed.size(), 12u);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(transposed[i * 3 + j], host[j * 4 + i]) << i << "," << j;
  DestroyBuffer(args.out_buffer);
  DestroyBuffer(source);
}

TEST_F(DeviceLayoutPathsTest, CopiesKeepTheLayoutWithinAMemoryKindAndAreRowMajorAcrossKinds) {
  PJRT_Client* two = CreateClient({Int64Option("device_count", 2)});
  ASSERT_NE(two, nullptr);
  std::swap(two, client_);
  std::vector<PJRT_Device*> devices = Devices(client_);
  ASSERT_EQ(devices.size(), 2u);
  const std::vector<float> host = Iota(12);
  PJRT_Buffer* source = ColumnMajorBuffer(host, devices[0]);

  PJRT_Buffer_CopyToDevice_Args to_device{};
  to_device.struct_size = PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE;
  to_device.buffer = source;
  to_device.dst_device = devices[1];
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToDevice(&to_device));
  // Each copy with whether it keeps the layout: a copy into memory of the source's kind
  // does; a copy into a host memory kind is row-major, as XLA's CPU client gives it.
  std::vector<std::pair<PJRT_Buffer*, bool>> copies = {{to_device.dst_buffer, true}};

  PJRT_Device_AddressableMemories_Args memories{};
  memories.struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE;
  memories.device = devices[0];
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_AddressableMemories(&memories));
  for (size_t m = 0; m < memories.num_memories; ++m) {
    PJRT_Buffer_CopyToMemory_Args to_memory{};
    to_memory.struct_size = PJRT_Buffer_CopyToMemory_Args_STRUCT_SIZE;
    to_memory.buffer = source;
    to_memory.dst_memory = memories.memories[m];
    ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToMemory(&to_memory));
    PJRT_Memory_Kind_Args kind{};
    kind.struct_size = PJRT_Memory_Kind_Args_STRUCT_SIZE;
    kind.memory = memories.memories[m];
    ASSERT_PJRT_OK(api_, api_->PJRT_Memory_Kind(&kind));
    copies.push_back({to_memory.dst_buffer, std::string(kind.kind, kind.kind_size) == "device"});
  }
  EXPECT_GE(copies.size(), 3u) << "a device memory and at least one host memory";
  // Back from a host memory into the device memory: row-major as well.
  PJRT_Buffer_CopyToMemory_Args back{};
  back.struct_size = PJRT_Buffer_CopyToMemory_Args_STRUCT_SIZE;
  back.buffer = copies.back().first;
  back.dst_memory = DefaultMemory(devices[0]);
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToMemory(&back));
  copies.push_back({back.dst_buffer, false});
  int kept = 0;
  for (auto [copy, keeps_layout] : copies) {
    EXPECT_EQ(BufferLayoutText(api_, copy), keeps_layout ? "{0,1}" : "{1,0}");
    EXPECT_EQ(DeviceFloats(api_, copy, 12), keeps_layout ? ColumnMajor(host) : host);
    EXPECT_EQ(Floats(ToHost(copy)), host);
    kept += keeps_layout;
    DestroyBuffer(copy);
  }
  EXPECT_EQ(kept, 2) << "the copy to device 1 and the one into device 0's own memory";
  DestroyBuffer(source);
  std::swap(two, client_);
  DestroyClient(two);
}

TEST_F(DeviceLayoutPathsTest, ToHostBufferInAHostLayoutFromABufferInAnother) {
  // f32[2,3,5] held with minor_to_major {1, 0, 2}, read into every host layout.
  std::vector<int64_t> dims = {2, 3, 5};
  const std::vector<float> host = Iota(30);
  std::vector<int64_t> device_m2m = {1, 0, 2};
  PJRT_Buffer_MemoryLayout device_layout = TiledLayout(device_m2m);
  PJRT_Client_BufferFromHostBuffer_Args put{};
  put.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  put.client = client_;
  put.data = host.data();
  put.type = PJRT_Buffer_Type_F32;
  put.dims = dims.data();
  put.num_dims = 3;
  put.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  put.memory = DefaultMemory(Devices(client_)[0]);
  put.device_layout = &device_layout;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&put));
  AwaitAndDestroy(put.done_with_host_buffer);

  const std::vector<std::vector<int64_t>> host_layouts = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const std::vector<int64_t>& minor_to_major : host_layouts) {
    PJRT_Buffer_MemoryLayout host_layout = TiledLayout(minor_to_major);
    PJRT_Buffer_ToHostBuffer_Args args{};
    args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
    args.src = put.buffer;
    args.host_layout = &host_layout;
    std::vector<float> out(30, -1.0f);
    args.dst = out.data();
    args.dst_size = out.size() * sizeof(float);
    ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
    AwaitAndDestroy(args.event);
    // Element (i, j, k) at the offset the minor_to_major order gives.
    int64_t strides[3];
    int64_t stride = 1;
    for (int64_t d : minor_to_major) {
      strides[d] = stride;
      stride *= dims[static_cast<size_t>(d)];
    }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 5; ++k)
          EXPECT_EQ(out[i * strides[0] + j * strides[1] + k * strides[2]], host[i * 15 + j * 5 + k])
              << "minor_to_major " << minor_to_major[0] << minor_to_major[1] << minor_to_major[2] << " at " << i << j
              << k;
  }
  DestroyBuffer(put.buffer);
}

// An entry asking for a column-major parameter and result: the executable reports those
// layouts, takes arguments in any layout, and returns the result in the one it asked for.
constexpr char kColumnMajorAdd[] = R"(
module @column_major_add {
  func.func public @main(%a: tensor<3x4xf32> {mhlo.layout_mode = "{0,1}"},
                         %b: tensor<3x4xf32> {mhlo.layout_mode = "default"})
      -> (tensor<3x4xf32> {jax.result_info = "result", mhlo.layout_mode = "{0,1}"}) {
    %0 = stablehlo.add %a, %b : tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
)";

TEST_F(DeviceLayoutPathsTest, ExecutableInputAndOutputLayouts) {
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo compiled = Compile(kColumnMajorAdd, SingleDeviceOptions(), &loaded);
  ASSERT_FALSE(compiled.failed) << compiled.message;
  const PJRT_Layouts_Extension* layouts = FindLayoutsExtension(api_);
  ASSERT_NE(layouts, nullptr);
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = loaded;
  ASSERT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_GetExecutable(&get));
  PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args parameters{};
  parameters.struct_size = PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args_STRUCT_SIZE;
  parameters.executable = get.executable;
  ASSERT_PJRT_OK(api_, layouts->PJRT_Layouts_PJRT_Executable_GetParameterLayouts(&parameters));
  ASSERT_EQ(parameters.num_parameters, 2u);
  EXPECT_EQ(SerializeLayout(api_, layouts, parameters.layouts[0], false), "{0,1}");
  EXPECT_EQ(SerializeLayout(api_, layouts, parameters.layouts[1], false), "{1,0}");
  PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args outputs{};
  outputs.struct_size = PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args_STRUCT_SIZE;
  outputs.executable = get.executable;
  ASSERT_PJRT_OK(api_, layouts->PJRT_Layouts_PJRT_Executable_GetOutputLayouts(&outputs));
  ASSERT_EQ(outputs.num_outputs, 1u);
  EXPECT_EQ(SerializeLayout(api_, layouts, outputs.layouts[0], false), "{0,1}");
  PJRT_Executable_Destroy_Args destroy_executable{PJRT_Executable_Destroy_Args_STRUCT_SIZE, nullptr, get.executable};
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_Destroy(&destroy_executable));

  PJRT_Device* device = Devices(client_)[0];
  const std::vector<float> a = Iota(12);
  std::vector<float> b(12);
  for (int i = 0; i < 12; ++i) b[i] = static_cast<float>(i * i) - 20.0f;
  std::vector<float> sum(12);
  for (int i = 0; i < 12; ++i) sum[i] = a[i] + b[i];
  // Arguments in the asked layouts, and swapped (each converted at the boundary).
  PJRT_Buffer* a_column = ColumnMajorBuffer(a, device);
  PJRT_Buffer* b_column = ColumnMajorBuffer(b, device);
  PJRT_Buffer* a_row = ToDevice(a.data(), PJRT_Buffer_Type_F32, {3, 4}, device);
  PJRT_Buffer* b_row = ToDevice(b.data(), PJRT_Buffer_Type_F32, {3, 4}, device);
  for (auto [x, y] : {std::pair{a_column, b_row}, std::pair{a_row, b_column}, std::pair{a_row, b_row}}) {
    std::vector<PJRT_Buffer*> out = Execute(loaded, {x, y}, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(BufferLayoutText(api_, out[0]), "{0,1}");
    EXPECT_EQ(DeviceFloats(api_, out[0], 12), ColumnMajor(sum));
    EXPECT_EQ(Floats(ToHost(out[0])), sum);
    DestroyBuffer(out[0]);
  }
  for (PJRT_Buffer* buffer : {a_column, b_column, a_row, b_row}) DestroyBuffer(buffer);
  Destroy(loaded);
}

}  // namespace
}  // namespace stablert::capi_test
