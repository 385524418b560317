// Buffers and events through the C API: host transfers under every semantics, strides,
// zero-copy views, reference counts, deletion and cross-device copies.
#include <cstdlib>
#include <numeric>

#include "plugin_fixture.h"
#include "layout_helpers.h"

namespace stablert::capi_test {
namespace {

using BufferApiTest = ClientTest;

std::vector<float> Iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 41.0f);
  return v;
}

TEST_F(BufferApiTest, RoundTripUnderEverySemantics) {
  PJRT_Device* device = Devices(client_)[0];
  for (auto semantics : {PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
                         PJRT_HostBufferSemantics_kImmutableZeroCopy, PJRT_HostBufferSemantics_kMutableZeroCopy}) {
    std::vector<float> host = Iota(24);
    PJRT_Buffer* buffer = ToDevice(host.data(), PJRT_Buffer_Type_F32, {2, 3, 4}, device, semantics);
    ASSERT_NE(buffer, nullptr);
    std::vector<char> back = ToHost(buffer);
    ASSERT_EQ(back.size(), host.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0) << "semantics " << semantics;
    DestroyBuffer(buffer);
  }
}

TEST_F(BufferApiTest, MetadataOfABuffer) {
  int16_t host[6] = {1, -2, 3, -4, 5, -6};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_S16, {3, 2}, Devices(client_)[0]);
  PJRT_Buffer_ElementType_Args type{};
  type.struct_size = PJRT_Buffer_ElementType_Args_STRUCT_SIZE;
  type.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_S16);
  PJRT_Buffer_Dimensions_Args dims{};
  dims.struct_size = PJRT_Buffer_Dimensions_Args_STRUCT_SIZE;
  dims.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims), (std::vector<int64_t>{3, 2}));
  PJRT_Buffer_OnDeviceSizeInBytes_Args size{};
  size.struct_size = PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE;
  size.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_OnDeviceSizeInBytes(&size));
  EXPECT_EQ(size.on_device_size_in_bytes, 12u);
  PJRT_Buffer_Device_Args device{};
  device.struct_size = PJRT_Buffer_Device_Args_STRUCT_SIZE;
  device.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(device.device, Devices(client_)[0]);
  PJRT_Buffer_IsOnCpu_Args on_cpu{};
  on_cpu.struct_size = PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE;
  on_cpu.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_IsOnCpu(&on_cpu));
  EXPECT_TRUE(on_cpu.is_on_cpu);
  PJRT_Buffer_ReadyEvent_Args ready{};
  ready.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
  ready.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
  AwaitAndDestroy(ready.event);
  DestroyBuffer(buffer);
}

TEST_F(BufferApiTest, ByteStridesAreHonouredBothWays) {
  // A 3x4 float matrix stored column-major (the transpose of a row-major 4x3).
  std::vector<float> host = Iota(12);
  PJRT_Buffer* buffer = ToDevice(host.data(), PJRT_Buffer_Type_F32, {3, 4}, Devices(client_)[0],
                                 PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, {4, 12});
  std::vector<char> back = ToHost(buffer);
  ASSERT_EQ(back.size(), 48u);
  const float* dense = reinterpret_cast<const float*>(back.data());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(dense[i * 4 + j], host[j * 3 + i]) << i << "," << j;

  // Read back column-major through a host layout with explicit strides.
  int64_t strides[2] = {4, 12};
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides.byte_strides = strides;
  layout.strides.num_byte_strides = 2;
  std::vector<float> column_major(12);
  PJRT_Buffer_ToHostBuffer_Args args{};
  args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  args.src = buffer;
  args.host_layout = &layout;
  args.dst = column_major.data();
  args.dst_size = 48;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  AwaitAndDestroy(args.event);
  EXPECT_EQ(column_major, host);
  DestroyBuffer(buffer);
}

// A device layout other than row-major: the buffer keeps its bytes in that order (as the
// Layouts extension reports), reads back row-major, and computes like any other buffer.
class DeviceLayoutTest : public BufferApiTest {
 protected:
  struct Made {
    PJRT_Buffer* buffer = nullptr;
    ErrorInfo error;
  };
  Made FromHost(const void* data, std::vector<int64_t> dims, const PJRT_Buffer_MemoryLayout* device_layout,
                std::vector<int64_t> byte_strides = {},
                PJRT_HostBufferSemantics semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall) {
    PJRT_Client_BufferFromHostBuffer_Args args{};
    args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.data = data;
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.byte_strides = byte_strides.empty() ? nullptr : byte_strides.data();
    args.num_byte_strides = byte_strides.size();
    args.host_buffer_semantics = semantics;
    args.memory = DefaultMemory(Devices(client_)[0]);
    args.device_layout = const_cast<PJRT_Buffer_MemoryLayout*>(device_layout);
    Made made;
    made.error = TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    if (made.error.failed) return made;
    PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, args.done_with_host_buffer};
    EXPECT_PJRT_OK(api_, api_->PJRT_Event_Destroy(&destroy));
    made.buffer = args.buffer;
    return made;
  }
};

TEST_F(DeviceLayoutTest, ColumnMajorDeviceLayoutFromRowMajorHost) {
  std::vector<float> host = Iota(12);  // row-major 3x4
  std::vector<int64_t> m2m = {0, 1};
  PJRT_Buffer_MemoryLayout layout = TiledLayout(m2m);
  Made made = FromHost(host.data(), {3, 4}, &layout);
  ASSERT_FALSE(made.error.failed) << made.error.message;
  EXPECT_EQ(BufferLayoutText(api_, made.buffer), "{0,1}");
  std::vector<float> device = DeviceFloats(api_, made.buffer, 12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(device[j * 3 + i], host[i * 4 + j]) << i << "," << j;
  std::vector<char> back = ToHost(made.buffer);
  ASSERT_EQ(back.size(), 48u);
  EXPECT_EQ(std::memcmp(back.data(), host.data(), 48), 0) << "read back row-major";
  DestroyBuffer(made.buffer);
}

TEST_F(DeviceLayoutTest, EveryPermutationOfARank3ArrayFromStridedAndDenseHosts) {
  const std::vector<int64_t> dims = {2, 3, 5};
  std::vector<float> host = Iota(30);  // row-major
  // The same array held column-major on the host: element (i,j,k) at k*6 + j*2 + i.
  std::vector<float> column_major(30);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) column_major[k * 6 + j * 2 + i] = host[i * 15 + j * 5 + k];
  const std::vector<int64_t> column_major_strides = {4, 8, 24};
  std::vector<std::vector<int64_t>> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& m2m : orders) {
    std::vector<int64_t> minor_to_major(m2m.rbegin(), m2m.rend());
    PJRT_Buffer_MemoryLayout layout = TiledLayout(minor_to_major);
    for (bool strided : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "major_to_minor " << m2m[0] << m2m[1] << m2m[2]
                                        << (strided ? " strided" : ""));
      Made made = strided ? FromHost(column_major.data(), dims, &layout, column_major_strides)
                          : FromHost(host.data(), dims, &layout);
      ASSERT_FALSE(made.error.failed) << made.error.message;
      // Expected bytes: the row-major array of the physical dims.
      std::vector<float> expected;
      int64_t extent[3] = {dims[m2m[0]], dims[m2m[1]], dims[m2m[2]]};
      for (int64_t a = 0; a < extent[0]; ++a)
        for (int64_t b = 0; b < extent[1]; ++b)
          for (int64_t c = 0; c < extent[2]; ++c) {
            int64_t index[3];
            index[m2m[0]] = a;
            index[m2m[1]] = b;
            index[m2m[2]] = c;
            expected.push_back(host[index[0] * 15 + index[1] * 5 + index[2]]);
          }
      EXPECT_EQ(DeviceFloats(api_, made.buffer, 30), expected);
      std::vector<char> back = ToHost(made.buffer);
      ASSERT_EQ(back.size(), 120u);
      EXPECT_EQ(std::memcmp(back.data(), host.data(), 120), 0);
      DestroyBuffer(made.buffer);
    }
  }
}

TEST_F(DeviceLayoutTest, StridesDeviceLayoutAndZeroCopyOfAHostInThatLayout) {
  // Device layout given as dense column-major byte strides; the host array is column-major
  // too and 64-byte aligned, so zero-copy semantics borrow it.
  auto* host = static_cast<float*>(std::aligned_alloc(64, 64 * sizeof(float)));
  for (int i = 0; i < 12; ++i) host[i] = static_cast<float>(100 + i);  // column-major 3x4
  int64_t strides[2] = {4, 12};
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides.byte_strides = strides;
  layout.strides.num_byte_strides = 2;
  Made made = FromHost(host, {3, 4}, &layout, {4, 12}, PJRT_HostBufferSemantics_kImmutableZeroCopy);
  ASSERT_FALSE(made.error.failed) << made.error.message;
  EXPECT_EQ(BufferLayoutText(api_, made.buffer), "{0,1}");
  PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
  pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
  pointer.buffer = made.buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer));
  EXPECT_EQ(pointer.device_memory_ptr, host) << "a host array already in the device layout is borrowed";
  std::vector<char> back = ToHost(made.buffer);
  ASSERT_EQ(back.size(), 48u);
  const float* row_major = reinterpret_cast<const float*>(back.data());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(row_major[i * 4 + j], host[j * 3 + i]) << i << "," << j;
  DestroyBuffer(made.buffer);
  std::free(host);
}

#define EXPECT_LAYOUT_ERROR(info, expected_code, fragment)                                       \
  do {                                                                                           \
    EXPECT_TRUE((info).failed);                                                                 \
    EXPECT_EQ((info).code, (expected_code)) << (info).message;                                  \
    EXPECT_NE((info).message.find(fragment), std::string::npos) << (info).message;              \
  } while (0)

TEST_F(DeviceLayoutTest, LayoutsStableRtCannotHoldAreRefusedByName) {
  std::vector<float> host = Iota(12);
  int64_t gapped[2] = {32, 4};  // rows padded to 8 floats
  PJRT_Buffer_MemoryLayout strides{};
  strides.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  strides.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  strides.strides.byte_strides = gapped;
  strides.strides.num_byte_strides = 2;
  Made made = FromHost(host.data(), {3, 4}, &strides);
  EXPECT_LAYOUT_ERROR(made.error, PJRT_Error_Code_UNIMPLEMENTED,
               "PJRT_Client_BufferFromHostBuffer: a device layout's byte strides must be those of a dense array");
  std::vector<int64_t> repeated = {0, 0};
  PJRT_Buffer_MemoryLayout not_a_permutation = TiledLayout(repeated);
  made = FromHost(host.data(), {3, 4}, &not_a_permutation);
  EXPECT_LAYOUT_ERROR(made.error, PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_BufferFromHostBuffer: minor_to_major is not a permutation of the dimensions");
  std::vector<int64_t> minor_to_major = {0, 1};
  int64_t tile[2] = {8, 128};
  size_t tile_size = 2;
  PJRT_Buffer_MemoryLayout tiled = TiledLayout(minor_to_major);
  tiled.tiled.tile_dims = tile;
  tiled.tiled.tile_dim_sizes = &tile_size;
  tiled.tiled.num_tiles = 1;
  made = FromHost(host.data(), {3, 4}, &tiled);
  EXPECT_LAYOUT_ERROR(made.error, PJRT_Error_Code_UNIMPLEMENTED,
               "PJRT_Client_BufferFromHostBuffer: tiled memory layouts are not supported");
}

TEST_F(BufferApiTest, ZeroCopyAliasesAlignedHostMemoryUntilReleased) {
  auto* host = static_cast<float*>(std::aligned_alloc(64, 64 * sizeof(float)));
  for (int i = 0; i < 64; ++i) host[i] = static_cast<float>(i);
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  args.client = client_;
  args.data = host;
  args.type = PJRT_Buffer_Type_F32;
  int64_t dims[1] = {64};
  args.dims = dims;
  args.num_dims = 1;
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
  args.memory = DefaultMemory(Devices(client_)[0]);
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  ASSERT_NE(args.done_with_host_buffer, nullptr);
  PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
  pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
  pointer.buffer = args.buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer));
  EXPECT_EQ(pointer.device_memory_ptr, host);
  PJRT_Event_IsReady_Args ready{};
  ready.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE;
  ready.event = args.done_with_host_buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Event_IsReady(&ready));
  EXPECT_FALSE(ready.is_ready) << "the host memory is still in use by the buffer";
  DestroyBuffer(args.buffer);
  AwaitAndDestroy(args.done_with_host_buffer);
  std::free(host);
}

// Whether a host array is borrowed depends on its address modulo 16 only: malloc (and so
// NumPy) gives 16-byte alignment, and a 64-byte rule made borrowing depend on where the
// allocator happened to put an array (1 in 4 heap blocks). At 16 mod 64 the array is
// borrowed and reads back intact; at 8 mod 16 it is copied.
TEST_F(BufferApiTest, ZeroCopyBorrowsSixteenByteAlignedHostMemoryAndCopiesLessAligned) {
  constexpr int kCount = 1 << 16;
  auto* block = static_cast<char*>(std::aligned_alloc(64, kCount * sizeof(float) + 64));
  for (const size_t offset : {size_t{16}, size_t{32}, size_t{48}, size_t{8}}) {
    auto* host = reinterpret_cast<float*>(block + offset);
    for (int i = 0; i < kCount; ++i) host[i] = static_cast<float>(i) * 0.5f;
    PJRT_Client_BufferFromHostBuffer_Args args{};
    args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.data = host;
    args.type = PJRT_Buffer_Type_F32;
    int64_t dims[1] = {kCount};
    args.dims = dims;
    args.num_dims = 1;
    args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
    args.memory = DefaultMemory(Devices(client_)[0]);
    ASSERT_PJRT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
    pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
    pointer.buffer = args.buffer;
    ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer));
    if (offset % 16 == 0)
      EXPECT_EQ(pointer.device_memory_ptr, host) << "offset " << offset << " mod 64 is borrowed";
    else
      EXPECT_NE(pointer.device_memory_ptr, host) << "offset " << offset << " mod 64 is copied";
    std::vector<char> back = ToHost(args.buffer);
    ASSERT_EQ(back.size(), kCount * sizeof(float));
    EXPECT_EQ(std::memcmp(back.data(), host, back.size()), 0) << "offset " << offset;
    DestroyBuffer(args.buffer);
    AwaitAndDestroy(args.done_with_host_buffer);
  }
  std::free(block);
}

TEST_F(BufferApiTest, ExternalReferencesAndDeletion) {
  float host[4] = {41, 42, 43, 44};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  PJRT_Buffer_IncreaseExternalReferenceCount_Args increase{};
  increase.struct_size = PJRT_Buffer_IncreaseExternalReferenceCount_Args_STRUCT_SIZE;
  increase.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase));
  PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
  pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
  pointer.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer));
  PJRT_Buffer_Delete_Args del{PJRT_Buffer_Delete_Args_STRUCT_SIZE, nullptr, buffer};
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Delete(&del));
  PJRT_Buffer_IsDeleted_Args deleted{};
  deleted.struct_size = PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE;
  deleted.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_IsDeleted(&deleted));
  EXPECT_TRUE(deleted.is_deleted);
  // The external reference keeps the bytes alive after deletion.
  EXPECT_EQ(static_cast<float*>(pointer.device_memory_ptr)[3], 44.0f);
  ErrorInfo error;
  ToHost(buffer, &error);
  EXPECT_TRUE(error.failed);
  EXPECT_NE(error.message.find("deleted"), std::string::npos) << error.message;
  PJRT_Buffer_DecreaseExternalReferenceCount_Args decrease{};
  decrease.struct_size = PJRT_Buffer_DecreaseExternalReferenceCount_Args_STRUCT_SIZE;
  decrease.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
  ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
  ASSERT_TRUE(info.failed);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "Attempting to decrease reference on a buffer with zero reference count.");
  DestroyBuffer(buffer);
}

TEST_F(BufferApiTest, CopiesBetweenDevicesAndMemories) {
  PJRT_Client* client = CreateClient({Int64Option("device_count", 2)});
  std::swap(client, client_);
  auto devices = Devices(client_);
  ASSERT_EQ(devices.size(), 2u);
  double host[3] = {1.5, -2.5, 1e300};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F64, {3}, devices[0]);
  PJRT_Buffer_CopyToDevice_Args to_device{};
  to_device.struct_size = PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE;
  to_device.buffer = buffer;
  to_device.dst_device = devices[1];
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToDevice(&to_device));
  PJRT_Buffer_Device_Args where{};
  where.struct_size = PJRT_Buffer_Device_Args_STRUCT_SIZE;
  where.buffer = to_device.dst_buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Device(&where));
  EXPECT_EQ(where.device, devices[1]);
  std::vector<char> back = ToHost(to_device.dst_buffer);
  EXPECT_EQ(std::memcmp(back.data(), host, sizeof host), 0);

  PJRT_Device_AddressableMemories_Args memories{};
  memories.struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE;
  memories.device = devices[1];
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_AddressableMemories(&memories));
  PJRT_Buffer_CopyToMemory_Args to_memory{};
  to_memory.struct_size = PJRT_Buffer_CopyToMemory_Args_STRUCT_SIZE;
  to_memory.buffer = buffer;
  to_memory.dst_memory = memories.memories[memories.num_memories - 1];
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToMemory(&to_memory));
  PJRT_Buffer_Memory_Args memory{};
  memory.struct_size = PJRT_Buffer_Memory_Args_STRUCT_SIZE;
  memory.buffer = to_memory.dst_buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, to_memory.dst_memory);
  back = ToHost(to_memory.dst_buffer);
  EXPECT_EQ(std::memcmp(back.data(), host, sizeof host), 0);
  DestroyBuffer(to_memory.dst_buffer);
  DestroyBuffer(to_device.dst_buffer);
  DestroyBuffer(buffer);
  std::swap(client, client_);
  DestroyClient(client);
}

TEST_F(BufferApiTest, BadTransfersFailWithClearErrors) {
  float host[4] = {};
  int64_t dims[2] = {2, -2};
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  args.client = client_;
  args.data = host;
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims;
  args.num_dims = 2;
  args.memory = DefaultMemory(Devices(client_)[0]);
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  ASSERT_TRUE(info.failed);
  EXPECT_NE(info.message.find("negative dimension"), std::string::npos) << info.message;
  dims[1] = 2;
  args.type = static_cast<PJRT_Buffer_Type>(99);
  info = TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  ASSERT_TRUE(info.failed);
  EXPECT_NE(info.message.find("PJRT_Buffer_Type 99"), std::string::npos) << info.message;
}

TEST(EventApi, CreateSetAwaitAndCallbacks) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  PJRT_Event_Create_Args create{PJRT_Event_Create_Args_STRUCT_SIZE, nullptr, nullptr};
  ASSERT_PJRT_OK(api, api->PJRT_Event_Create(&create));
  PJRT_Event_IsReady_Args ready{PJRT_Event_IsReady_Args_STRUCT_SIZE, nullptr, create.event, true};
  ASSERT_PJRT_OK(api, api->PJRT_Event_IsReady(&ready));
  EXPECT_FALSE(ready.is_ready);
  struct Seen {
    int calls = 0;
    PJRT_Error_Code code = PJRT_Error_Code_OK;
  } seen;
  PJRT_Event_OnReady_Args on_ready{};
  on_ready.struct_size = PJRT_Event_OnReady_Args_STRUCT_SIZE;
  on_ready.event = create.event;
  on_ready.user_arg = &seen;
  on_ready.callback = [](PJRT_Error* error, void* arg) {
    auto* s = static_cast<Seen*>(arg);
    ++s->calls;
    ErrorInfo info = TakeError(LoadPlugin(), error);
    s->code = info.code;
  };
  ASSERT_PJRT_OK(api, api->PJRT_Event_OnReady(&on_ready));
  EXPECT_EQ(seen.calls, 0);
  const char kMessage[] = "stopped on purpose";
  PJRT_Event_Set_Args set{PJRT_Event_Set_Args_STRUCT_SIZE, nullptr, create.event, PJRT_Error_Code_CANCELLED,
                          kMessage, sizeof(kMessage) - 1};
  ASSERT_PJRT_OK(api, api->PJRT_Event_Set(&set));
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.code, PJRT_Error_Code_CANCELLED);
  ErrorInfo second = TakeError(api, api->PJRT_Event_Set(&set));
  EXPECT_TRUE(second.failed) << "an event is set only once";
  PJRT_Event_Error_Args error{PJRT_Event_Error_Args_STRUCT_SIZE, nullptr, create.event};
  ErrorInfo info = TakeError(api, api->PJRT_Event_Error(&error));
  EXPECT_EQ(info.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(info.message, kMessage);
  PJRT_Event_Await_Args await{PJRT_Event_Await_Args_STRUCT_SIZE, nullptr, create.event};
  info = TakeError(api, api->PJRT_Event_Await(&await));
  EXPECT_EQ(info.message, kMessage);
  PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, create.event};
  EXPECT_PJRT_OK(api, api->PJRT_Event_Destroy(&destroy));
}

}  // namespace
}  // namespace stablert::capi_test
