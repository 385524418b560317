// Async host-to-device transfers through the C API: PJRT_Client_CreateBuffersForAsyncHostToDevice
// and the PJRT_AsyncHostToDeviceTransferManager_* functions (chunks in any order, a 64 MiB
// buffer in 1 MiB chunks run through a program, literals, errors set on buffers, several
// threads), PJRT_Buffer_CopyRawToHostFuture, and every kind of misuse failing cleanly.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "base/proto_wire.h"
#include "compile_options.h"
#include "program_fixture.h"

namespace stablert::capi_test {
namespace {

using Manager = PJRT_AsyncHostToDeviceTransferManager;

struct Shape {
  int type;  // a PJRT_Buffer_Type, held as int so that invalid values can be copied
  std::vector<int64_t> dims;
};

class AsyncTransferTest : public ProgramTest {
 protected:
  PJRT_Memory* Memory() { return DefaultMemory(Devices(client_)[0]); }

  ErrorInfo Create(const std::vector<Shape>& shapes, Manager** out, PJRT_Memory* memory = nullptr,
                   std::vector<PJRT_Buffer_MemoryLayout*> layouts = {}) {
    std::vector<PJRT_ShapeSpec> specs;
    for (const Shape& shape : shapes) {
      PJRT_ShapeSpec spec{};
      spec.struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
      spec.dims = shape.dims.data();
      spec.num_dims = shape.dims.size();
      spec.element_type = static_cast<PJRT_Buffer_Type>(shape.type);
      specs.push_back(spec);
    }
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args args{};
    args.struct_size = PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE;
    args.client = client_;
    args.shape_specs = specs.data();
    args.num_shape_specs = specs.size();
    args.device_layouts = layouts.empty() ? nullptr : layouts.data();
    args.num_device_layouts = layouts.size();
    args.memory = memory ? memory : Memory();
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args));
    *out = info.failed ? nullptr : args.transfer_manager;
    return info;
  }

  Manager* CreateOk(const std::vector<Shape>& shapes) {
    Manager* manager = nullptr;
    ErrorInfo info = Create(shapes, &manager);
    EXPECT_FALSE(info.failed) << info.message;
    return manager;
  }

  ErrorInfo DestroyManager(Manager* manager) {
    PJRT_AsyncHostToDeviceTransferManager_Destroy_Args args{
        PJRT_AsyncHostToDeviceTransferManager_Destroy_Args_STRUCT_SIZE, nullptr, manager};
    return TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_Destroy(&args));
  }

  // One TransferData call; its done event is awaited.
  ErrorInfo Transfer(Manager* manager, int index, const void* data, int64_t offset, int64_t size, bool last) {
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args args{};
    args.struct_size = PJRT_AsyncHostToDeviceTransferManager_TransferData_Args_STRUCT_SIZE;
    args.transfer_manager = manager;
    args.buffer_index = index;
    args.data = data;
    args.offset = offset;
    args.transfer_size = size;
    args.is_last_transfer = last;
    ErrorInfo info = TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferData(&args));
    if (!info.failed) {
      EXPECT_NE(args.done_with_h2d_transfer, nullptr);
      AwaitAndDestroy(args.done_with_h2d_transfer);
    }
    return info;
  }

  ErrorInfo Retrieve(Manager* manager, int index, PJRT_Buffer** out) {
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args args{};
    args.struct_size = PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args_STRUCT_SIZE;
    args.transfer_manager = manager;
    args.buffer_index = index;
    ErrorInfo info = TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&args));
    *out = info.failed ? nullptr : args.buffer_out;
    return info;
  }

  PJRT_Buffer* RetrieveOk(Manager* manager, int index) {
    PJRT_Buffer* buffer = nullptr;
    ErrorInfo info = Retrieve(manager, index, &buffer);
    EXPECT_FALSE(info.failed) << info.message;
    return buffer;
  }

  ErrorInfo SetError(Manager* manager, int index, int code, const std::string& message) {
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args args{};
    args.struct_size = PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args_STRUCT_SIZE;
    args.transfer_manager = manager;
    args.buffer_index = index;
    args.error_code = static_cast<PJRT_Error_Code>(code);
    args.error_message = message.data();
    args.error_message_size = message.size();
    return TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&args));
  }

  PJRT_Event* ReadyEvent(PJRT_Buffer* buffer) {
    PJRT_Buffer_ReadyEvent_Args args{};
    args.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&args));
    return args.event;
  }

  bool IsReady(PJRT_Event* event) {
    PJRT_Event_IsReady_Args args{PJRT_Event_IsReady_Args_STRUCT_SIZE, nullptr, event, false};
    EXPECT_PJRT_OK(api_, api_->PJRT_Event_IsReady(&args));
    return args.is_ready;
  }

  bool BufferReady(PJRT_Buffer* buffer) {
    PJRT_Event* event = ReadyEvent(buffer);
    bool ready = IsReady(event);
    PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, event};
    EXPECT_PJRT_OK(api_, api_->PJRT_Event_Destroy(&destroy));
    return ready;
  }

  // The status a buffer's ready event ends with.
  ErrorInfo AwaitBuffer(PJRT_Buffer* buffer) {
    ErrorInfo info;
    AwaitAndDestroy(ReadyEvent(buffer), &info);
    return info;
  }

  // Compiles `code` for device 0 (the fixture's Compile with single-device options).
  PJRT_LoadedExecutable* Compile(const std::string& code) {
    PJRT_LoadedExecutable* executable = nullptr;
    ErrorInfo info = ProgramTest::Compile(code, SingleDeviceOptions(), &executable);
    EXPECT_FALSE(info.failed) << info.message;
    return executable;
  }

  void DestroyExecutable(PJRT_LoadedExecutable* executable) { Destroy(executable); }

  // Queues one execution; returns its outputs and completion event without waiting.
  std::vector<PJRT_Buffer*> Launch(PJRT_LoadedExecutable* executable, std::vector<PJRT_Buffer*> arguments,
                                   size_t num_outputs, PJRT_Event** complete) {
    return ExecuteAsync(executable, std::move(arguments), num_outputs, complete);
  }
};

template <typename T>
std::vector<T> AsVector(const std::vector<char>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

TEST_F(AsyncTransferTest, SeveralBuffersFilledInChunksInAnyOrder) {
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {2, 3}}, {PJRT_Buffer_Type_S8, {5}}, {PJRT_Buffer_Type_F64, {0}}});
  ASSERT_NE(manager, nullptr);

  PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args count{};
  count.struct_size = PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args_STRUCT_SIZE;
  count.transfer_manager = manager;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_BufferCount(&count));
  EXPECT_EQ(count.buffer_count, 3u);
  const size_t expected_sizes[3] = {24, 5, 0};
  for (int i = 0; i < 3; ++i) {
    PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args size{};
    size.struct_size = PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args_STRUCT_SIZE;
    size.transfer_manager = manager;
    size.buffer_index = i;
    ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size));
    EXPECT_EQ(size.buffer_size, expected_sizes[i]) << i;
  }
  PJRT_AsyncHostToDeviceTransferManager_Device_Args device{};
  device.struct_size = PJRT_AsyncHostToDeviceTransferManager_Device_Args_STRUCT_SIZE;
  device.transfer_manager = manager;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_Device(&device));
  EXPECT_EQ(device.device_out, Devices(client_)[0]);

  // Buffer 0 is retrieved before any transfer, buffer 1 in between, buffer 2 after.
  PJRT_Buffer* b0 = RetrieveOk(manager, 0);
  ASSERT_NE(b0, nullptr);
  EXPECT_FALSE(BufferReady(b0));
  const float f[6] = {1.5f, -2.0f, 3.25f, 4.0f, -5.5f, 6.0f};
  // Chunks of 8 bytes, last chunk first; the one marked last is the middle one.
  ASSERT_FALSE(Transfer(manager, 0, reinterpret_cast<const char*>(f) + 16, 16, 8, false).failed);
  ASSERT_FALSE(Transfer(manager, 0, f, 0, 8, false).failed);
  EXPECT_FALSE(BufferReady(b0)) << "ready before its last transfer";
  ASSERT_FALSE(Transfer(manager, 0, reinterpret_cast<const char*>(f) + 8, 8, 8, true).failed);
  EXPECT_FALSE(AwaitBuffer(b0).failed);

  const int8_t s[5] = {-1, 2, -3, 4, -5};
  ASSERT_FALSE(Transfer(manager, 1, s + 3, 3, 2, false).failed);
  PJRT_Buffer* b1 = RetrieveOk(manager, 1);
  EXPECT_FALSE(BufferReady(b1));
  ASSERT_FALSE(Transfer(manager, 1, s, 0, 3, true).failed);
  ASSERT_FALSE(Transfer(manager, 2, nullptr, 0, 0, true).failed);  // the empty buffer
  PJRT_Buffer* b2 = RetrieveOk(manager, 2);
  EXPECT_FALSE(AwaitBuffer(b2).failed);
  EXPECT_FALSE(DestroyManager(manager).failed);  // buffers outlive their manager

  EXPECT_EQ(AsVector<float>(ToHost(b0)), std::vector<float>(f, f + 6));
  EXPECT_EQ(AsVector<int8_t>(ToHost(b1)), std::vector<int8_t>(s, s + 5));
  EXPECT_TRUE(ToHost(b2).empty());
  PJRT_Buffer_Dimensions_Args dims{};
  dims.struct_size = PJRT_Buffer_Dimensions_Args_STRUCT_SIZE;
  dims.buffer = b0;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims), (std::vector<int64_t>{2, 3}));
  PJRT_Buffer_ElementType_Args type{};
  type.struct_size = PJRT_Buffer_ElementType_Args_STRUCT_SIZE;
  type.buffer = b1;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_S8);
  for (PJRT_Buffer* buffer : {b0, b1, b2}) DestroyBuffer(buffer);
}

// A 64 MiB buffer filled in 1 MiB chunks in shuffled order, consumed by an execution that
// was queued before the first byte arrived.
TEST_F(AsyncTransferTest, LargeBufferInShuffledChunksFeedsAQueuedExecution) {
  constexpr int64_t kCount = 16 * 1024 * 1024;  // f32: 64 MiB
  constexpr int64_t kChunk = 1 << 20;
  std::vector<float> host(kCount);
  for (int64_t i = 0; i < kCount; ++i) host[i] = static_cast<float>(i % 4099) * 0.25f - 512.0f;
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {kCount}}});
  ASSERT_NE(manager, nullptr);
  PJRT_Buffer* input = RetrieveOk(manager, 0);
  PJRT_LoadedExecutable* executable = Compile(Program("scale_shift_16m.1_17_0"));
  ASSERT_NE(executable, nullptr);
  PJRT_Event* complete = nullptr;
  std::vector<PJRT_Buffer*> outputs = Launch(executable, {input}, 1, &complete);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_FALSE(IsReady(complete)) << "the execution finished before its input was transferred";

  std::vector<int64_t> chunks(kCount * 4 / kChunk);
  std::iota(chunks.begin(), chunks.end(), 0);
  std::shuffle(chunks.begin(), chunks.end(), std::mt19937(7));
  for (size_t k = 0; k < chunks.size(); ++k) {
    const int64_t offset = chunks[k] * kChunk;
    ASSERT_FALSE(Transfer(manager, 0, reinterpret_cast<const char*>(host.data()) + offset, offset, kChunk,
                          k + 1 == chunks.size())
                     .failed);
  }
  AwaitAndDestroy(complete);
  std::vector<float> result = AsVector<float>(ToHost(outputs[0]));
  ASSERT_EQ(result.size(), static_cast<size_t>(kCount));
  int64_t mismatches = 0;
  for (int64_t i = 0; i < kCount; ++i) mismatches += result[i] != host[i] * 2.0f + 1.0f;
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(AsVector<float>(ToHost(input)), host);
  EXPECT_FALSE(DestroyManager(manager).failed);
  DestroyBuffer(outputs[0]);
  DestroyBuffer(input);
  DestroyExecutable(executable);
}

// Several threads copy chunks of one buffer at once; the last transfer follows them.
TEST_F(AsyncTransferTest, ChunksFromSeveralThreadsAtOnce) {
  constexpr int64_t kBytes = 16 << 20, kChunk = 256 << 10;
  std::vector<uint8_t> host(kBytes);
  for (int64_t i = 0; i < kBytes; ++i) host[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
  Manager* manager = CreateOk({{PJRT_Buffer_Type_U8, {kBytes}}});
  PJRT_Buffer* buffer = RetrieveOk(manager, 0);
  const int64_t chunks = kBytes / kChunk;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t c = t; c < chunks - 1; c += 4)
        failures += Transfer(manager, 0, host.data() + c * kChunk, c * kChunk, kChunk, false).failed;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(BufferReady(buffer));
  ASSERT_FALSE(Transfer(manager, 0, host.data() + (chunks - 1) * kChunk, (chunks - 1) * kChunk, kChunk, true).failed);
  EXPECT_TRUE(ToHost(buffer) == std::vector<char>(host.begin(), host.end()));
  EXPECT_FALSE(DestroyManager(manager).failed);
  DestroyBuffer(buffer);
}

TEST_F(AsyncTransferTest, TransferLiteralInAnyTileFreeLayout) {
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {3, 4}}, {PJRT_Buffer_Type_S32, {4}}});
  // Buffer 0 from a column-major literal (minor_to_major {0, 1}).
  std::vector<float> column_major(12);
  for (int i = 0; i < 12; ++i) column_major[i] = static_cast<float>(i) + 0.5f;
  int64_t dims[2] = {3, 4};
  int64_t minor_to_major[2] = {0, 1};
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = minor_to_major;
  layout.tiled.minor_to_major_size = 2;
  PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args args{};
  args.struct_size = PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args_STRUCT_SIZE;
  args.transfer_manager = manager;
  args.buffer_index = 0;
  args.data = column_major.data();
  args.shape_dims = dims;
  args.shape_num_dims = 2;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.shape_layout = &layout;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  AwaitAndDestroy(args.done_with_h2d_transfer);
  PJRT_Buffer* b0 = RetrieveOk(manager, 0);
  std::vector<float> dense = AsVector<float>(ToHost(b0));
  ASSERT_EQ(dense.size(), 12u);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(dense[i * 4 + j], column_major[j * 3 + i]) << i << "," << j;
  // No transfer may follow a literal.
  ErrorInfo after = Transfer(manager, 0, column_major.data(), 0, 4, false);
  EXPECT_EQ(after.code, PJRT_Error_Code_FAILED_PRECONDITION) << after.message;
  EXPECT_NE(after.message.find("PJRT_AsyncHostToDeviceTransferManager_TransferData: buffer 0 has already received "
                               "its last transfer"),
            std::string::npos)
      << after.message;

  // Buffer 1: a dense literal of the wrong shape, then the right one.
  int32_t values[4] = {7, -8, 9, -10};
  int64_t wrong_dims[1] = {3};
  args.buffer_index = 1;
  args.data = values;
  args.shape_dims = wrong_dims;
  args.shape_num_dims = 1;
  args.shape_element_type = PJRT_Buffer_Type_S32;
  args.shape_layout = nullptr;
  ErrorInfo wrong = TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_EQ(wrong.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(wrong.message.find("PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: the literal's shape i32[3] is "
                               "not buffer 1's shape i32[4]"),
            std::string::npos)
      << wrong.message;
  int64_t right_dims[1] = {4};
  args.shape_dims = right_dims;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  AwaitAndDestroy(args.done_with_h2d_transfer);
  PJRT_Buffer* b1 = RetrieveOk(manager, 1);
  EXPECT_EQ(AsVector<int32_t>(ToHost(b1)), std::vector<int32_t>(values, values + 4));
  EXPECT_FALSE(DestroyManager(manager).failed);
  DestroyBuffer(b0);
  DestroyBuffer(b1);
}

TEST_F(AsyncTransferTest, SetBufferErrorFailsTheBufferAndItsExecutions) {
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {4}}, {PJRT_Buffer_Type_F32, {4}}});
  PJRT_Buffer* failed = RetrieveOk(manager, 0);
  PJRT_LoadedExecutable* executable = Compile(Program("mul_const.1_17_0"));
  ASSERT_NE(executable, nullptr);
  PJRT_Event* complete = nullptr;
  std::vector<PJRT_Buffer*> outputs = Launch(executable, {failed}, 1, &complete);
  ASSERT_EQ(outputs.size(), 1u);
  const float part[2] = {1, 2};
  ASSERT_FALSE(Transfer(manager, 0, part, 0, 8, false).failed);
  ASSERT_FALSE(SetError(manager, 0, PJRT_Error_Code_DATA_LOSS, "the input file is truncated").failed);

  ErrorInfo ready = AwaitBuffer(failed);
  EXPECT_EQ(ready.code, PJRT_Error_Code_DATA_LOSS);
  EXPECT_EQ(ready.message, "the input file is truncated");
  ErrorInfo run;
  AwaitAndDestroy(complete, &run);
  EXPECT_EQ(run.code, PJRT_Error_Code_DATA_LOSS);
  EXPECT_NE(run.message.find("the input file is truncated"), std::string::npos) << run.message;
  ErrorInfo output = AwaitBuffer(outputs[0]);
  EXPECT_EQ(output.code, PJRT_Error_Code_DATA_LOSS) << output.message;
  ErrorInfo to_host;
  ToHost(failed, &to_host);
  EXPECT_EQ(to_host.code, PJRT_Error_Code_DATA_LOSS);

  // Nothing may follow an error; an OK "error" is refused.
  ErrorInfo again = SetError(manager, 0, PJRT_Error_Code_INTERNAL, "again");
  EXPECT_EQ(again.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_NE(again.message.find("PJRT_AsyncHostToDeviceTransferManager_SetBufferError: buffer 0 has already been set "
                               "to an error"),
            std::string::npos)
      << again.message;
  ErrorInfo transfer = Transfer(manager, 0, part, 0, 8, true);
  EXPECT_EQ(transfer.code, PJRT_Error_Code_FAILED_PRECONDITION) << transfer.message;
  ErrorInfo ok_code = SetError(manager, 1, PJRT_Error_Code_OK, "");
  EXPECT_EQ(ok_code.code, PJRT_Error_Code_INVALID_ARGUMENT) << ok_code.message;
  ErrorInfo bad_code = SetError(manager, 1, 999, "");
  EXPECT_EQ(bad_code.code, PJRT_Error_Code_INVALID_ARGUMENT) << bad_code.message;
  // After the last transfer, no error can be set.
  const float full[4] = {1, 2, 3, 4};
  ASSERT_FALSE(Transfer(manager, 1, full, 0, 16, true).failed);
  ErrorInfo late = SetError(manager, 1, PJRT_Error_Code_INTERNAL, "late");
  EXPECT_EQ(late.code, PJRT_Error_Code_FAILED_PRECONDITION) << late.message;
  PJRT_Buffer* fine = RetrieveOk(manager, 1);
  EXPECT_EQ(AsVector<float>(ToHost(fine)), std::vector<float>(full, full + 4));

  EXPECT_FALSE(DestroyManager(manager).failed);
  for (PJRT_Buffer* buffer : {failed, fine, outputs[0]}) DestroyBuffer(buffer);
  DestroyExecutable(executable);
}

// Destroying the manager fails the buffers still waiting for their last transfer (nothing
// waits forever) and frees those never retrieved.
TEST_F(AsyncTransferTest, DestroyFailsBuffersStillWaiting) {
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {1024}}, {PJRT_Buffer_Type_F32, {1024}}, {PJRT_Buffer_Type_U8, {3}}});
  PJRT_Buffer* waiting = RetrieveOk(manager, 0);
  std::vector<float> half(512, 1.0f);
  ASSERT_FALSE(Transfer(manager, 0, half.data(), 0, 2048, false).failed);
  ASSERT_FALSE(Transfer(manager, 1, half.data(), 0, 2048, false).failed);  // never retrieved
  EXPECT_FALSE(DestroyManager(manager).failed);
  ErrorInfo info = AwaitBuffer(waiting);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_NE(info.message.find("destroyed before buffer 0 of 3 received its last transfer"), std::string::npos)
      << info.message;
  DestroyBuffer(waiting);
}

TEST_F(AsyncTransferTest, MisuseOfTheManagerFailsCleanly) {
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {4}}, {PJRT_Buffer_Type_F32, {2}}});
  ASSERT_NE(manager, nullptr);
  const float data[4] = {1, 2, 3, 4};
  auto expect = [](const ErrorInfo& info, PJRT_Error_Code code, const std::string& text) {
    EXPECT_TRUE(info.failed) << text;
    EXPECT_EQ(info.code, code) << info.message;
    EXPECT_NE(info.message.find(text), std::string::npos) << info.message;
  };
  const std::string kData = "PJRT_AsyncHostToDeviceTransferManager_TransferData: ";
  expect(Transfer(manager, 2, data, 0, 4, false), PJRT_Error_Code_INVALID_ARGUMENT,
         kData + "buffer_index 2 is out of range; the transfer manager has 2 buffers");
  expect(Transfer(manager, -1, data, 0, 4, false), PJRT_Error_Code_INVALID_ARGUMENT, "buffer_index -1 is out of range");
  expect(Transfer(manager, 0, data, 12, 8, false), PJRT_Error_Code_INVALID_ARGUMENT,
         kData + "a transfer of 8 bytes at offset 12 does not fit in buffer 0 of 16 bytes (f32[4])");
  expect(Transfer(manager, 0, data, 17, 0, false), PJRT_Error_Code_INVALID_ARGUMENT, "at offset 17 does not fit");
  expect(Transfer(manager, 0, data, -4, 4, false), PJRT_Error_Code_INVALID_ARGUMENT, "at offset -4 does not fit");
  expect(Transfer(manager, 0, data, 0, -1, false), PJRT_Error_Code_INVALID_ARGUMENT, "a transfer of -1 bytes");
  expect(Transfer(manager, 0, data, 8, INT64_MAX, false), PJRT_Error_Code_INVALID_ARGUMENT, "does not fit");
  expect(Transfer(manager, 0, data, INT64_MAX, INT64_MAX, false), PJRT_Error_Code_INVALID_ARGUMENT, "does not fit");
  expect(Transfer(manager, 0, nullptr, 0, 4, false), PJRT_Error_Code_INVALID_ARGUMENT, kData + "data is null");
  // None of the failed calls closed the buffer.
  ASSERT_FALSE(Transfer(manager, 0, data, 0, 16, true).failed);
  expect(Transfer(manager, 0, data, 0, 4, false), PJRT_Error_Code_FAILED_PRECONDITION,
         kData + "buffer 0 has already received its last transfer; no transfer can follow");
  expect(Transfer(manager, 0, data, 0, 4, true), PJRT_Error_Code_FAILED_PRECONDITION, "already received");

  PJRT_Buffer* buffer = nullptr;
  ASSERT_FALSE(Retrieve(manager, 0, &buffer).failed);
  PJRT_Buffer* twice = nullptr;
  expect(Retrieve(manager, 0, &twice), PJRT_Error_Code_FAILED_PRECONDITION,
         "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer: buffer 0 has already been retrieved");
  EXPECT_EQ(twice, nullptr);
  expect(Retrieve(manager, 5, &twice), PJRT_Error_Code_INVALID_ARGUMENT, "buffer_index 5 is out of range");
  PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args size{};
  size.struct_size = PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args_STRUCT_SIZE;
  size.transfer_manager = manager;
  size.buffer_index = 2;
  expect(TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&size)),
         PJRT_Error_Code_INVALID_ARGUMENT,
         "PJRT_AsyncHostToDeviceTransferManager_BufferSize: buffer_index 2 is out of range");
  expect(SetError(manager, 9, PJRT_Error_Code_INTERNAL, "x"), PJRT_Error_Code_INVALID_ARGUMENT,
         "PJRT_AsyncHostToDeviceTransferManager_SetBufferError: buffer_index 9 is out of range");

  // Metadata is accepted and ignored; a null list with entries is not.
  PJRT_NamedValue entry = Int64Option("request_id", 42);
  PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args metadata{};
  metadata.struct_size = PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args_STRUCT_SIZE;
  metadata.transfer_manager = manager;
  metadata.transfer_metadata = &entry;
  metadata.num_metadata = 1;
  EXPECT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&metadata));
  metadata.transfer_metadata = nullptr;
  expect(TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&metadata)),
         PJRT_Error_Code_INVALID_ARGUMENT, "transfer_metadata is null");

  // Too small struct_size, null args, null manager.
  PJRT_AsyncHostToDeviceTransferManager_TransferData_Args small{};
  small.struct_size = 8;
  small.transfer_manager = manager;
  expect(TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_TransferData(&small)),
         PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_AsyncHostToDeviceTransferManager_TransferData");
  expect(TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(nullptr)),
         PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer: args is null");
  expect(Transfer(nullptr, 0, data, 0, 4, false), PJRT_Error_Code_INVALID_ARGUMENT,
         kData + "transfer_manager is null");

  // A destroyed manager is reported as such by every function, and cannot be destroyed twice.
  EXPECT_FALSE(DestroyManager(manager).failed);
  Manager* other = CreateOk({{PJRT_Buffer_Type_F32, {4}}});  // a new manager never reuses the handle
  EXPECT_NE(other, manager);
  expect(Transfer(manager, 1, data, 0, 8, true), PJRT_Error_Code_INVALID_ARGUMENT,
         kData + "transfer_manager is not a live transfer manager (it was destroyed");
  PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args count{};
  count.struct_size = PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args_STRUCT_SIZE;
  count.transfer_manager = manager;
  expect(TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_BufferCount(&count)),
         PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_AsyncHostToDeviceTransferManager_BufferCount: transfer_manager is not");
  PJRT_AsyncHostToDeviceTransferManager_Device_Args device{};
  device.struct_size = PJRT_AsyncHostToDeviceTransferManager_Device_Args_STRUCT_SIZE;
  device.transfer_manager = manager;
  expect(TakeError(api_, api_->PJRT_AsyncHostToDeviceTransferManager_Device(&device)),
         PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_AsyncHostToDeviceTransferManager_Device: transfer_manager is not");
  expect(Retrieve(manager, 1, &twice), PJRT_Error_Code_INVALID_ARGUMENT, "is not a live transfer manager");
  expect(DestroyManager(manager), PJRT_Error_Code_INVALID_ARGUMENT,
         "PJRT_AsyncHostToDeviceTransferManager_Destroy: transfer_manager is not a live transfer manager");
  int not_a_manager = 0;
  expect(Transfer(reinterpret_cast<Manager*>(&not_a_manager), 0, data, 0, 4, false), PJRT_Error_Code_INVALID_ARGUMENT,
         "is not a live transfer manager");
  EXPECT_FALSE(DestroyManager(nullptr).failed);  // "transfer_manager can be nullptr"
  EXPECT_FALSE(DestroyManager(other).failed);
  EXPECT_EQ(AsVector<float>(ToHost(buffer)), std::vector<float>(data, data + 4));
  DestroyBuffer(buffer);
}

TEST_F(AsyncTransferTest, CreateChecksItsArguments) {
  Manager* manager = nullptr;
  auto expect = [&](const ErrorInfo& info, PJRT_Error_Code code, const std::string& text) {
    EXPECT_TRUE(info.failed) << text;
    EXPECT_EQ(info.code, code) << info.message;
    EXPECT_NE(info.message.find(text), std::string::npos) << info.message;
    EXPECT_EQ(manager, nullptr);
  };
  const std::string kFn = "PJRT_Client_CreateBuffersForAsyncHostToDevice: ";
  expect(Create({{PJRT_Buffer_Type_F32, {-1, 2}}}, &manager), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "shape_specs[0]: negative dimension");
  expect(Create({{PJRT_Buffer_Type_F32, {2}}, {250, {2}}}, &manager),
         PJRT_Error_Code_INVALID_ARGUMENT, kFn + "shape_specs[1]: unsupported PJRT_Buffer_Type 250");
  expect(Create({{PJRT_Buffer_Type_F64, {INT64_MAX / 4, 4}}}, &manager), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "shape_specs[0]");

  // Device layouts: any dense dimension order (or none) is accepted (values and bytes in
  // tests/capi/device_layout_paths_test.cc); tiles and strides with gaps are UNIMPLEMENTED.
  int64_t row_major[2] = {1, 0}, column_major[2] = {0, 1};
  PJRT_Buffer_MemoryLayout dense{}, transposed{}, tiled{}, gapped{};
  for (auto* layout : {&dense, &transposed, &tiled}) {
    layout->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
    layout->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
    layout->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
    layout->tiled.minor_to_major_size = 2;
  }
  dense.tiled.minor_to_major = row_major;
  transposed.tiled.minor_to_major = column_major;
  tiled.tiled.minor_to_major = row_major;
  int64_t tile_dims[2] = {8, 128};
  size_t tile_sizes[1] = {2};
  tiled.tiled.tile_dims = tile_dims;
  tiled.tiled.tile_dim_sizes = tile_sizes;
  tiled.tiled.num_tiles = 1;
  const std::vector<Shape> two = {{PJRT_Buffer_Type_F32, {2, 3}}, {PJRT_Buffer_Type_F32, {3, 2}}};
  Manager* ok = nullptr;
  ErrorInfo accepted = Create(two, &ok, nullptr, {&dense, nullptr});
  ASSERT_FALSE(accepted.failed) << accepted.message;
  EXPECT_FALSE(DestroyManager(ok).failed);
  accepted = Create(two, &ok, nullptr, {nullptr, &transposed});
  ASSERT_FALSE(accepted.failed) << accepted.message;
  EXPECT_FALSE(DestroyManager(ok).failed);
  int64_t gapped_strides[2] = {32, 4};  // f32[3,2] rows 32 bytes apart: 24 bytes of gaps
  gapped.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  gapped.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  gapped.strides.byte_strides = gapped_strides;
  gapped.strides.num_byte_strides = 2;
  expect(Create(two, &manager, nullptr, {nullptr, &gapped}), PJRT_Error_Code_UNIMPLEMENTED,
         kFn + "device_layouts[1]: a device layout's byte strides must be those of a dense array");
  expect(Create(two, &manager, nullptr, {&tiled, nullptr}), PJRT_Error_Code_UNIMPLEMENTED,
         kFn + "device_layouts[0]: tiled memory layouts are not supported");
  expect(Create(two, &manager, nullptr, {&dense}), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "1 device layouts for 2 shape specs");

  // Null and foreign handles, null spec list, short structs.
  PJRT_Client_CreateBuffersForAsyncHostToDevice_Args args{};
  args.struct_size = PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE;
  args.client = client_;
  args.num_shape_specs = 1;
  args.memory = Memory();
  expect(TakeError(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args)), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "shape_specs is null for 1 shape specs");
  args.memory = nullptr;
  expect(TakeError(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args)), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "args->memory is null");
  args.memory = Memory();
  args.client = nullptr;
  expect(TakeError(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args)), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "args->client is null");
  args.client = client_;
  args.struct_size = 16;
  expect(TakeError(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args)), PJRT_Error_Code_INVALID_ARGUMENT,
         "PJRT_Client_CreateBuffersForAsyncHostToDevice");
  int64_t dims[1] = {4};
  PJRT_ShapeSpec short_spec{};
  short_spec.struct_size = 8;
  short_spec.dims = dims;
  short_spec.num_dims = 1;
  short_spec.element_type = PJRT_Buffer_Type_F32;
  args.struct_size = PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE;
  args.shape_specs = &short_spec;
  expect(TakeError(api_, api_->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args)), PJRT_Error_Code_INVALID_ARGUMENT,
         kFn + "shape_specs[0]");
  PJRT_Client* other = CreateClient({});
  ASSERT_NE(other, nullptr);
  expect(Create({{PJRT_Buffer_Type_F32, {4}}}, &manager, DefaultMemory(Devices(other)[0])),
         PJRT_Error_Code_INVALID_ARGUMENT, kFn + "memory belongs to another client");
  DestroyClient(other);
}

TEST_F(AsyncTransferTest, BuffersGoToTheMemoryAsked) {
  PJRT_Client* two = CreateClient({Int64Option("device_count", 2)});
  ASSERT_NE(two, nullptr);
  std::swap(two, client_);
  PJRT_Device* second = Devices(client_)[1];
  Manager* manager = nullptr;
  ASSERT_FALSE(Create({{PJRT_Buffer_Type_S32, {2}}}, &manager, DefaultMemory(second)).failed);
  PJRT_AsyncHostToDeviceTransferManager_Device_Args device{};
  device.struct_size = PJRT_AsyncHostToDeviceTransferManager_Device_Args_STRUCT_SIZE;
  device.transfer_manager = manager;
  ASSERT_PJRT_OK(api_, api_->PJRT_AsyncHostToDeviceTransferManager_Device(&device));
  EXPECT_EQ(device.device_out, second);
  PJRT_Buffer* buffer = RetrieveOk(manager, 0);
  PJRT_Buffer_Memory_Args memory{};
  memory.struct_size = PJRT_Buffer_Memory_Args_STRUCT_SIZE;
  memory.buffer = buffer;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, DefaultMemory(second));
  const int32_t values[2] = {3, 4};
  ASSERT_FALSE(Transfer(manager, 0, values, 0, 8, true).failed);
  EXPECT_EQ(AsVector<int32_t>(ToHost(buffer)), std::vector<int32_t>(values, values + 2));
  EXPECT_FALSE(DestroyManager(manager).failed);
  DestroyBuffer(buffer);
  std::swap(two, client_);
  DestroyClient(two);
}

// PJRT_Buffer_CopyRawToHostFuture: the copy waits for the caller's destination (delivered
// through future_ready_callback) and for the buffer to be ready.
class RawCopyFutureTest : public AsyncTransferTest {
 protected:
  PJRT_Buffer_CopyRawToHostFuture_Args Request(PJRT_Buffer* buffer, int64_t offset, int64_t size) {
    PJRT_Buffer_CopyRawToHostFuture_Args args{};
    args.struct_size = PJRT_Buffer_CopyRawToHostFuture_Args_STRUCT_SIZE;
    args.buffer = buffer;
    args.offset = offset;
    args.transfer_size = size;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_CopyRawToHostFuture(&args));
    EXPECT_NE(args.event, nullptr);
    EXPECT_NE(args.future_ready_callback, nullptr);
    return args;
  }
  static void Deliver(const PJRT_Buffer_CopyRawToHostFuture_Args& request, void* dst,
                      PJRT_Error_Code code = PJRT_Error_Code_OK, const std::string& message = "") {
    PJRT_Buffer_CopyRawToHostFuture_Callback_Args args{};
    args.struct_size = PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE;
    args.callback_data = request.callback_data;
    args.error_code = code;
    args.error_message = message.data();
    args.error_message_size = message.size();
    args.dst = dst;
    request.future_ready_callback(&args);
  }
};

TEST_F(RawCopyFutureTest, CopiesOnceTheDestinationArrives) {
  std::vector<int32_t> host(1000);
  std::iota(host.begin(), host.end(), -500);
  PJRT_Buffer* buffer = ToDevice(host.data(), PJRT_Buffer_Type_S32, {1000}, Devices(client_)[0]);
  auto request = Request(buffer, 400, 40);
  EXPECT_FALSE(IsReady(request.event)) << "copied before the destination was known";
  std::vector<int32_t> dst(10, 0);
  Deliver(request, dst.data());
  AwaitAndDestroy(request.event);
  EXPECT_EQ(dst, std::vector<int32_t>(host.begin() + 100, host.begin() + 110));

  // The destination's error becomes the copy's.
  auto failed = Request(buffer, 0, 4);
  Deliver(failed, nullptr, PJRT_Error_Code_CANCELLED, "no destination after all");
  ErrorInfo info;
  AwaitAndDestroy(failed.event, &info);
  EXPECT_EQ(info.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(info.message, "no destination after all");

  // A range outside the buffer fails the event at once; the callback still frees the copy.
  auto outside = Request(buffer, 3990, 40);
  EXPECT_TRUE(IsReady(outside.event));
  Deliver(outside, dst.data());
  AwaitAndDestroy(outside.event, &info);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("invalid offset 3990"), std::string::npos) << info.message;

  // A null destination for a non-empty copy.
  auto null_dst = Request(buffer, 0, 4);
  Deliver(null_dst, nullptr);
  AwaitAndDestroy(null_dst.event, &info);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("PJRT_Buffer_CopyRawToHostFuture"), std::string::npos) << info.message;
  DestroyBuffer(buffer);

  ErrorInfo no_buffer = TakeError(api_, [&] {
    PJRT_Buffer_CopyRawToHostFuture_Args args{};
    args.struct_size = PJRT_Buffer_CopyRawToHostFuture_Args_STRUCT_SIZE;
    return api_->PJRT_Buffer_CopyRawToHostFuture(&args);
  }());
  EXPECT_EQ(no_buffer.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(no_buffer.message.find("PJRT_Buffer_CopyRawToHostFuture: args->buffer is null"), std::string::npos)
      << no_buffer.message;
}

TEST_F(RawCopyFutureTest, WaitsForABufferStillBeingTransferred) {
  Manager* manager = CreateOk({{PJRT_Buffer_Type_F32, {8}}});
  PJRT_Buffer* buffer = RetrieveOk(manager, 0);
  auto request = Request(buffer, 16, 16);
  std::vector<float> dst(4, 0.0f);
  Deliver(request, dst.data());
  EXPECT_FALSE(IsReady(request.event)) << "copied before the buffer was ready";
  const float values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_FALSE(Transfer(manager, 0, values, 0, 32, true).failed);
  AwaitAndDestroy(request.event);
  EXPECT_EQ(dst, (std::vector<float>{4, 5, 6, 7}));
  EXPECT_FALSE(DestroyManager(manager).failed);
  DestroyBuffer(buffer);
}

}  // namespace
}  // namespace stablert::capi_test
