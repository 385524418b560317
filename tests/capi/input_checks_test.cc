// Input checks at the C API: sizes computed from caller input never overflow, host
// strides never reach outside the caller's memory, handles of another client are
// rejected, create options and error codes are validated, and no exception crosses the
// C boundary. Each case is a probe that once corrupted memory, crashed or was accepted.
#include <cstdint>
#include <limits>

#include "plugin_fixture.h"

namespace stablert::capi_test {
namespace {

constexpr int64_t kWrapsTo64Bytes = (int64_t{1} << 62) + 16;  // f32 count whose byte size wraps to 64

class InputChecksTest : public ClientTest {
 protected:
  ErrorInfo FromHost(PJRT_Client* client, const void* data, std::vector<int64_t> dims,
                     std::vector<int64_t> byte_strides, PJRT_Memory* memory, PJRT_Device* device = nullptr,
                     PJRT_Buffer** out = nullptr) {
    PJRT_Client_BufferFromHostBuffer_Args args{};
    args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    args.client = client;
    args.data = data;
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.byte_strides = byte_strides.empty() ? nullptr : byte_strides.data();
    args.num_byte_strides = byte_strides.size();
    args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.memory = memory;
    args.device = device;
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    if (!info.failed) {
      AwaitAndDestroy(args.done_with_host_buffer);
      if (out) *out = args.buffer;
      else DestroyBuffer(args.buffer);
    }
    return info;
  }

  ErrorInfo Uninitialized(PJRT_Client* client, std::vector<int64_t> dims, PJRT_Memory* memory,
                          PJRT_Device* device = nullptr, PJRT_Buffer_Type type = PJRT_Buffer_Type_F32) {
    PJRT_Client_CreateUninitializedBuffer_Args args{};
    args.struct_size = PJRT_Client_CreateUninitializedBuffer_Args_STRUCT_SIZE;
    args.client = client;
    args.shape_dims = dims.data();
    args.shape_num_dims = dims.size();
    args.shape_element_type = type;
    args.memory = memory;
    args.device = device;
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
    if (!info.failed) DestroyBuffer(args.buffer);
    return info;
  }

  ErrorInfo ToHostWithStrides(PJRT_Buffer* buffer, std::vector<int64_t> strides, void* dst, size_t dst_size) {
    PJRT_Buffer_MemoryLayout layout{};
    layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
    layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
    layout.strides.byte_strides = strides.data();
    layout.strides.num_byte_strides = strides.size();
    PJRT_Buffer_ToHostBuffer_Args args{};
    args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
    args.src = buffer;
    args.host_layout = &layout;
    args.dst = dst;
    args.dst_size = dst_size;
    ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
    if (!info.failed) AwaitAndDestroy(args.event);
    return info;
  }

  PJRT_Memory* Memory0() { return DefaultMemory(Devices(client_)[0]); }
};

#define EXPECT_ERROR(info, expected_code, fragment)                                  \
  do {                                                                              \
    EXPECT_TRUE((info).failed) << "accepted; expected an error with: " << (fragment); \
    EXPECT_EQ((info).code, (expected_code)) << (info).message;                      \
    EXPECT_NE((info).message.find(fragment), std::string::npos) << (info).message;  \
  } while (0)

// ---- Finding 1: byte sizes of shapes wrap -------------------------------------------------

TEST_F(InputChecksTest, BufferFromHostBufferRejectsAByteSizeThatOverflows) {
  float host[64] = {};
  ErrorInfo info = FromHost(client_, host, {kWrapsTo64Bytes}, {}, Memory0());
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_BufferFromHostBuffer");
  EXPECT_NE(info.message.find("overflow"), std::string::npos) << info.message;
  // The element count itself overflowing, and a negative dimension.
  info = FromHost(client_, host, {int64_t{1} << 32, int64_t{1} << 32}, {}, Memory0());
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "overflow");
  info = FromHost(client_, host, {4, -1}, {}, Memory0());
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "negative dimension");
}

TEST_F(InputChecksTest, CreateUninitializedBufferRejectsAByteSizeThatOverflows) {
  EXPECT_ERROR(Uninitialized(client_, {kWrapsTo64Bytes}, Memory0()), PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_CreateUninitializedBuffer");
  EXPECT_ERROR(Uninitialized(client_, {2, int64_t{1} << 61}, Memory0(), nullptr, PJRT_Buffer_Type_F64),
               PJRT_Error_Code_INVALID_ARGUMENT, "overflow");
  // A size that is valid but cannot be allocated is RESOURCE_EXHAUSTED.
  EXPECT_ERROR(Uninitialized(client_, {int64_t{1} << 60}, Memory0()), PJRT_Error_Code_RESOURCE_EXHAUSTED,
               "PJRT_Client_CreateUninitializedBuffer");
}

TEST_F(InputChecksTest, CreateViewAndErrorBufferRejectAByteSizeThatOverflows) {
  float host[16] = {};
  int64_t dims[1] = {kWrapsTo64Bytes};
  PJRT_Client_CreateViewOfDeviceBuffer_Args view{};
  view.struct_size = PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE;
  view.client = client_;
  view.device_buffer_ptr = host;
  view.dims = dims;
  view.num_dims = 1;
  view.element_type = PJRT_Buffer_Type_F32;
  view.device = Devices(client_)[0];
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_CreateViewOfDeviceBuffer(&view));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_CreateViewOfDeviceBuffer");
  if (!info.failed) DestroyBuffer(view.buffer);

  PJRT_Client_CreateErrorBuffer_Args error{};
  error.struct_size = PJRT_Client_CreateErrorBuffer_Args_STRUCT_SIZE;
  error.client = client_;
  error.error_code = PJRT_Error_Code_INTERNAL;
  error.error_message = "x";
  error.error_message_size = 1;
  error.shape_dims = dims;
  error.shape_num_dims = 1;
  error.shape_element_type = PJRT_Buffer_Type_F32;
  error.memory = Memory0();
  info = TakeError(api_, api_->PJRT_Client_CreateErrorBuffer(&error));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_CreateErrorBuffer");
  if (!info.failed) DestroyBuffer(error.buffer);
}

// ---- Finding 2: host strides reach outside host memory -------------------------------------

TEST_F(InputChecksTest, ToHostBufferRejectsNegativeStrides) {
  float host[2] = {1, 2};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {2}, Devices(client_)[0]);
  ASSERT_NE(buffer, nullptr);
  alignas(8) char dst[64] = {};
  ErrorInfo info = ToHostWithStrides(buffer, {-4}, dst + 32, 8);
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Buffer_ToHostBuffer: host byte_strides[0] = -4");
  for (int i = 0; i < 32; ++i) EXPECT_EQ(dst[i], 0) << "byte " << i << " before dst was written";
  DestroyBuffer(buffer);
}

TEST_F(InputChecksTest, ToHostBufferRejectsStridesWhoseExtentOverflows) {
  float host[5] = {1, 2, 3, 4, 5};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {5}, Devices(client_)[0]);
  ASSERT_NE(buffer, nullptr);
  alignas(8) char dst[8] = {};
  // 4 + 4 * 2^62 wraps to 4 bytes.
  ErrorInfo info = ToHostWithStrides(buffer, {int64_t{1} << 62}, dst, sizeof dst);
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Buffer_ToHostBuffer");
  // The size query fails the same way instead of reporting a wrapped size.
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  int64_t strides[1] = {int64_t{1} << 62};
  layout.strides.byte_strides = strides;
  layout.strides.num_byte_strides = 1;
  PJRT_Buffer_ToHostBuffer_Args query{};
  query.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  query.src = buffer;
  query.host_layout = &layout;
  info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&query));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Buffer_ToHostBuffer");
  DestroyBuffer(buffer);
}

TEST_F(InputChecksTest, ToHostBufferNeedsRoomForTheLastStridedElement) {
  float host[4] = {1, 2, 3, 4};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {2, 2}, Devices(client_)[0]);
  ASSERT_NE(buffer, nullptr);
  alignas(8) char dst[64] = {};
  // Column-major with padding: the last element ends at 4 + 4 + 16 = 24 bytes.
  ErrorInfo info = ToHostWithStrides(buffer, {4, 16}, dst, 8);
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "dst_size 8 is smaller than the 24 bytes");
  for (int i = 0; i < 64; ++i) EXPECT_EQ(dst[i], 0) << "byte " << i;
  info = ToHostWithStrides(buffer, {4, 16}, dst, 24);
  EXPECT_FALSE(info.failed) << info.message;
  float out[6];
  std::memcpy(out, dst, 24);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[4], 2);
  EXPECT_EQ(out[5], 4);
  DestroyBuffer(buffer);
}

TEST_F(InputChecksTest, ToHostBufferRejectsATiledHostLayoutThatOverflows) {
  float host[4] = {1, 2, 3, 4};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {2, 2}, Devices(client_)[0]);
  ASSERT_NE(buffer, nullptr);
  int64_t minor_to_major[2] = {0, 5};  // not a permutation
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = minor_to_major;
  layout.tiled.minor_to_major_size = 2;
  char dst[16];
  PJRT_Buffer_ToHostBuffer_Args args{};
  args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  args.src = buffer;
  args.host_layout = &layout;
  args.dst = dst;
  args.dst_size = sizeof dst;
  ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "minor_to_major");
  layout.type = static_cast<PJRT_Buffer_MemoryLayout_Type>(7);
  info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "layout type 7");
  DestroyBuffer(buffer);
}

TEST_F(InputChecksTest, BufferFromHostBufferRejectsStridesWhoseOffsetsOverflow) {
  float host[8] = {};
  ErrorInfo info = FromHost(client_, host, {3}, {int64_t{1} << 62}, Memory0());
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_BufferFromHostBuffer");
  EXPECT_NE(info.message.find("byte_strides"), std::string::npos) << info.message;
  info = FromHost(client_, host, {3, 2}, {std::numeric_limits<int64_t>::min(), 4}, Memory0());
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "byte_strides");
  info = FromHost(client_, host, {2}, {4, 4}, Memory0());
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "2 byte strides for rank 1");
  // Negative strides describe memory before `data` (NumPy's reversed views) and stay legal.
  float reversed[4] = {4, 3, 2, 1};
  PJRT_Buffer* buffer = nullptr;
  info = FromHost(client_, reversed + 3, {4}, {-4}, Memory0(), nullptr, &buffer);
  ASSERT_FALSE(info.failed) << info.message;
  std::vector<char> back = ToHost(buffer);
  ASSERT_EQ(back.size(), 16u);
  const float* values = reinterpret_cast<const float*>(back.data());
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[3], 4);
  DestroyBuffer(buffer);
}

TEST_F(InputChecksTest, CopyRawToHostRejectsRangesOutsideTheBuffer) {
  float host[4] = {1, 2, 3, 4};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  ASSERT_NE(buffer, nullptr);
  char dst[16] = {};
  struct Range {
    int64_t offset, size;
  };
  for (Range range : {Range{8, std::numeric_limits<int64_t>::max()}, Range{std::numeric_limits<int64_t>::max(), 8},
                      Range{-4, 8}, Range{4, -1}, Range{12, 8}}) {
    PJRT_Buffer_CopyRawToHost_Args args{};
    args.struct_size = PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE;
    args.buffer = buffer;
    args.dst = dst;
    args.offset = range.offset;
    args.transfer_size = range.size;
    ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_CopyRawToHost(&args));
    if (!info.failed) AwaitAndDestroy(args.event, &info);
    EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "invalid offset");
  }
  for (char c : dst) EXPECT_EQ(c, 0);
  PJRT_Buffer_CopyRawToHost_Args args{};
  args.struct_size = PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE;
  args.buffer = buffer;
  args.dst = dst;
  args.offset = 8;
  args.transfer_size = 8;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyRawToHost(&args));
  AwaitAndDestroy(args.event);
  EXPECT_EQ(std::memcmp(dst, host + 2, 8), 0);
  DestroyBuffer(buffer);
}

// ---- Finding 3: handles of another client ---------------------------------------------------

TEST_F(InputChecksTest, BuffersAreNotCreatedOnAnotherClientsMemoryOrDevice) {
  PJRT_Client* other = CreateClient({});
  ASSERT_NE(other, nullptr);
  PJRT_Device* foreign_device = Devices(other)[0];
  PJRT_Memory* foreign_memory = DefaultMemory(foreign_device);
  float host[4] = {};
  EXPECT_ERROR(FromHost(client_, host, {4}, {}, foreign_memory), PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_BufferFromHostBuffer: memory belongs to another client");
  EXPECT_ERROR(FromHost(client_, host, {4}, {}, nullptr, foreign_device), PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_BufferFromHostBuffer: device belongs to another client");
  EXPECT_ERROR(Uninitialized(client_, {4}, foreign_memory), PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_CreateUninitializedBuffer: memory belongs to another client");
  EXPECT_ERROR(Uninitialized(client_, {4}, nullptr, foreign_device), PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_CreateUninitializedBuffer: device belongs to another client");

  int64_t dims[1] = {4};
  PJRT_Client_CreateErrorBuffer_Args error{};
  error.struct_size = PJRT_Client_CreateErrorBuffer_Args_STRUCT_SIZE;
  error.client = client_;
  error.error_code = PJRT_Error_Code_INTERNAL;
  error.shape_dims = dims;
  error.shape_num_dims = 1;
  error.shape_element_type = PJRT_Buffer_Type_F32;
  error.memory = foreign_memory;
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_CreateErrorBuffer(&error));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_CreateErrorBuffer: memory belongs to another client");
  if (!info.failed) DestroyBuffer(error.buffer);

  PJRT_Client_CreateViewOfDeviceBuffer_Args view{};
  view.struct_size = PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE;
  view.client = client_;
  view.device_buffer_ptr = host;
  view.dims = dims;
  view.num_dims = 1;
  view.element_type = PJRT_Buffer_Type_F32;
  view.device = foreign_device;
  info = TakeError(api_, api_->PJRT_Client_CreateViewOfDeviceBuffer(&view));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_CreateViewOfDeviceBuffer: device belongs to another client");
  if (!info.failed) DestroyBuffer(view.buffer);
  DestroyClient(other);
}

TEST_F(InputChecksTest, CopiesToAnotherClientBelongToThatClient) {
  PJRT_Client* other = CreateClient({});
  ASSERT_NE(other, nullptr);
  PJRT_Device* foreign_device = Devices(other)[0];
  float host[3] = {1, 2, 3};
  PJRT_Buffer* buffer = ToDevice(host, PJRT_Buffer_Type_F32, {3}, Devices(client_)[0]);
  ASSERT_NE(buffer, nullptr);

  PJRT_Buffer_CopyToDevice_Args to_device{};
  to_device.struct_size = PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE;
  to_device.buffer = buffer;
  to_device.dst_device = foreign_device;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToDevice(&to_device));
  PJRT_Buffer_CopyToMemory_Args to_memory{};
  to_memory.struct_size = PJRT_Buffer_CopyToMemory_Args_STRUCT_SIZE;
  to_memory.buffer = buffer;
  to_memory.dst_memory = DefaultMemory(foreign_device);
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_CopyToMemory(&to_memory));
  DestroyBuffer(buffer);

  // The copies live on the other client: their device and memory are its own, and they
  // stay usable after the source client is gone.
  DestroyClient(client_);
  client_ = nullptr;
  for (PJRT_Buffer* copy : {to_device.dst_buffer, to_memory.dst_buffer}) {
    PJRT_Buffer_Device_Args where{};
    where.struct_size = PJRT_Buffer_Device_Args_STRUCT_SIZE;
    where.buffer = copy;
    ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Device(&where));
    EXPECT_EQ(where.device, foreign_device);
    PJRT_Buffer_Memory_Args memory{};
    memory.struct_size = PJRT_Buffer_Memory_Args_STRUCT_SIZE;
    memory.buffer = copy;
    ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Memory(&memory));
    EXPECT_EQ(memory.memory, DefaultMemory(foreign_device));
    std::vector<char> back = ToHost(copy);
    ASSERT_EQ(back.size(), sizeof host);
    EXPECT_EQ(std::memcmp(back.data(), host, sizeof host), 0);
    DestroyBuffer(copy);
  }
  DestroyClient(other);
}

// ---- Finding 4: create options ---------------------------------------------------------------

TEST_F(InputChecksTest, CreateOptionsWithNullValuesAreRejected) {
  PJRT_NamedValue text{};
  text.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  text.name = "device_count";
  text.name_size = 12;
  text.type = PJRT_NamedValue_kString;
  text.string_value = nullptr;
  text.value_size = 5;
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.create_options = &text;
  args.num_options = 1;
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_Create(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_Create: create option 'device_count' has a null string_value");

  PJRT_NamedValue list = text;
  list.type = PJRT_NamedValue_kInt64List;
  list.int64_array_value = nullptr;
  list.value_size = 3;
  args.create_options = &list;
  info = TakeError(api_, api_->PJRT_Client_Create(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT,
               "PJRT_Client_Create: create option 'device_count' has a null int64_array_value");

  PJRT_NamedValue unnamed = Int64Option("device_count", 1);
  unnamed.name = nullptr;
  args.create_options = &unnamed;
  info = TakeError(api_, api_->PJRT_Client_Create(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "has no name");
}

TEST_F(InputChecksTest, NodeIdAndNumNodesOutOfRangeAreRejectedNotTruncated) {
  for (const char* name : {"node_id", "num_nodes"}) {
    for (int64_t value : {(int64_t{1} << 32), (int64_t{1} << 32) + 1, int64_t{-1},
                          std::numeric_limits<int64_t>::min()}) {
      std::vector<PJRT_NamedValue> options = {Int64Option(name, value)};
      PJRT_Client_Create_Args args{};
      args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
      args.create_options = options.data();
      args.num_options = 1;
      ErrorInfo info = TakeError(api_, api_->PJRT_Client_Create(&args));
      EXPECT_TRUE(info.failed) << name << " = " << value << " was accepted";
      if (!info.failed) {
        DestroyClient(args.client);
        continue;
      }
      EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << info.message;
      EXPECT_NE(info.message.find(std::string("PJRT_Client_Create: option '") + name + "'"), std::string::npos)
          << info.message;
      EXPECT_NE(info.message.find(std::to_string(value)), std::string::npos) << info.message;
    }
  }
  // In range and consistent stays accepted.
  PJRT_Client* client = CreateClient({Int64Option("node_id", 0), Int64Option("num_nodes", 1)});
  ASSERT_NE(client, nullptr);
  DestroyClient(client);
}

// ---- Finding 5: error codes --------------------------------------------------------------------

TEST_F(InputChecksTest, EventSetAndErrorBuffersRejectInvalidErrorCodes) {
  for (int code : {17, 99, -1, 1 << 30}) {
    PJRT_Event_Create_Args create{PJRT_Event_Create_Args_STRUCT_SIZE, nullptr, nullptr};
    ASSERT_PJRT_OK(api_, api_->PJRT_Event_Create(&create));
    PJRT_Event_Set_Args set{PJRT_Event_Set_Args_STRUCT_SIZE, nullptr, create.event,
                            static_cast<PJRT_Error_Code>(code), "bad", 3};
    ErrorInfo info = TakeError(api_, api_->PJRT_Event_Set(&set));
    EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Event_Set: error_code " + std::to_string(code));
    // The event stays unset and can still be set properly.
    PJRT_Event_IsReady_Args ready{PJRT_Event_IsReady_Args_STRUCT_SIZE, nullptr, create.event, true};
    ASSERT_PJRT_OK(api_, api_->PJRT_Event_IsReady(&ready));
    EXPECT_FALSE(ready.is_ready);
    set.error_code = PJRT_Error_Code_ABORTED;
    ASSERT_PJRT_OK(api_, api_->PJRT_Event_Set(&set));
    ErrorInfo result;
    AwaitAndDestroy(create.event, &result);
    EXPECT_EQ(result.code, PJRT_Error_Code_ABORTED);

    int64_t dims[1] = {2};
    PJRT_Client_CreateErrorBuffer_Args error{};
    error.struct_size = PJRT_Client_CreateErrorBuffer_Args_STRUCT_SIZE;
    error.client = client_;
    error.error_code = static_cast<PJRT_Error_Code>(code);
    error.shape_dims = dims;
    error.shape_num_dims = 1;
    error.shape_element_type = PJRT_Buffer_Type_F32;
    error.memory = Memory0();
    info = TakeError(api_, api_->PJRT_Client_CreateErrorBuffer(&error));
    EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT,
                 "PJRT_Client_CreateErrorBuffer: error_code " + std::to_string(code));
    if (!info.failed) DestroyBuffer(error.buffer);
  }
}

// ---- Finding 6: exceptions never cross the C boundary ------------------------------------------

TEST_F(InputChecksTest, ExceptionsBecomeErrors) {
  PJRT_Event_Create_Args create{PJRT_Event_Create_Args_STRUCT_SIZE, nullptr, nullptr};
  ASSERT_PJRT_OK(api_, api_->PJRT_Event_Create(&create));
  // A message size no string can hold: copying it throws inside the plugin.
  PJRT_Event_Set_Args set{PJRT_Event_Set_Args_STRUCT_SIZE, nullptr, create.event, PJRT_Error_Code_INTERNAL, "x",
                          std::numeric_limits<size_t>::max() / 2};
  ErrorInfo info;
  EXPECT_NO_THROW(info = TakeError(api_, api_->PJRT_Event_Set(&set)));
  EXPECT_ERROR(info, PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Event_Set");
  PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, create.event};
  EXPECT_PJRT_OK(api_, api_->PJRT_Event_Destroy(&destroy));

  // An int64 list longer than any vector can hold.
  int64_t one = 1;
  PJRT_NamedValue list{};
  list.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  list.name = "device_count";
  list.name_size = 12;
  list.type = PJRT_NamedValue_kInt64List;
  list.int64_array_value = &one;
  list.value_size = std::numeric_limits<size_t>::max() / 2;
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.create_options = &list;
  args.num_options = 1;
  EXPECT_NO_THROW(info = TakeError(api_, api_->PJRT_Client_Create(&args)));
  EXPECT_TRUE(info.failed);
  EXPECT_NE(info.message.find("PJRT_Client_Create"), std::string::npos) << info.message;
}

// ---- Finding 7: other sizes taken from the caller --------------------------------------------

TEST_F(InputChecksTest, TopologyDeserializeRefusesOversizedInput) {
  const char text[] = "stablert-topology:1";
  PJRT_TopologyDescription_Deserialize_Args args{};
  args.struct_size = PJRT_TopologyDescription_Deserialize_Args_STRUCT_SIZE;
  args.serialized_topology = text;
  args.serialized_topology_size = std::numeric_limits<size_t>::max() / 2;
  ErrorInfo info = TakeError(api_, api_->PJRT_TopologyDescription_Deserialize(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_TopologyDescription_Deserialize");
  args.serialized_topology = nullptr;
  args.serialized_topology_size = 8;
  info = TakeError(api_, api_->PJRT_TopologyDescription_Deserialize(&args));
  EXPECT_ERROR(info, PJRT_Error_Code_INVALID_ARGUMENT, "serialized_topology is null");
  // The real thing still loads.
  args.serialized_topology = text;
  args.serialized_topology_size = sizeof(text) - 1;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Deserialize(&args));
  PJRT_TopologyDescription_Destroy_Args destroy{PJRT_TopologyDescription_Destroy_Args_STRUCT_SIZE, nullptr,
                                                args.topology};
  EXPECT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Destroy(&destroy));
}

}  // namespace
}  // namespace stablert::capi_test
