// Buffers over another buffer's bytes (PJRT_Buffer_Bitcast,
// PJRT_Buffer_DonateWithControlDependency) and the host resources a client or device holds
// for the caller (DMA ranges, tracking events, execute contexts).
#include <cstring>
#include <vector>

#include "compile_options.h"
#include "program_fixture.h"

namespace stablert::capi_test {
namespace {

class BufferAliasTest : public ProgramTest {
 protected:
  PJRT_Buffer* Bitcast(PJRT_Buffer* buffer, PJRT_Buffer_Type type, std::vector<int64_t> dims, ErrorInfo* error) {
    PJRT_Buffer_Bitcast_Args args{};
    args.struct_size = PJRT_Buffer_Bitcast_Args_STRUCT_SIZE;
    args.buffer = buffer;
    args.element_type = type;
    args.dims = dims.data();
    args.num_dims = dims.size();
    *error = TakeError(api_, api_->PJRT_Buffer_Bitcast(&args));
    return error->failed ? nullptr : args.out_buffer;
  }

  uintptr_t Pointer(PJRT_Buffer* buffer) {
    PJRT_Buffer_UnsafePointer_Args args{};
    args.struct_size = PJRT_Buffer_UnsafePointer_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_UnsafePointer(&args));
    return args.buffer_pointer;
  }

  bool IsDeleted(PJRT_Buffer* buffer) {
    PJRT_Buffer_IsDeleted_Args args{};
    args.struct_size = PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_IsDeleted(&args));
    return args.is_deleted;
  }

  bool IsReady(PJRT_Buffer* buffer) {
    PJRT_Buffer_ReadyEvent_Args ready{};
    ready.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
    ready.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
    PJRT_Event_IsReady_Args is_ready{};
    is_ready.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE;
    is_ready.event = ready.event;
    EXPECT_PJRT_OK(api_, api_->PJRT_Event_IsReady(&is_ready));
    PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, ready.event};
    EXPECT_PJRT_OK(api_, api_->PJRT_Event_Destroy(&destroy));
    return is_ready.is_ready;
  }
};

TEST_F(BufferAliasTest, BitcastSeesTheSameBytesAsAnotherTypeAndShape) {
  const float values[4] = {1.5f, -2.0f, 3.25f, 1e-30f};
  PJRT_Buffer* x = ToDevice(values, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  ErrorInfo error;
  PJRT_Buffer* bits = Bitcast(x, PJRT_Buffer_Type_U32, {2, 2}, &error);
  ASSERT_NE(bits, nullptr) << error.message;
  EXPECT_EQ(Pointer(bits), Pointer(x));
  std::vector<char> bytes = ToHost(bits);
  ASSERT_EQ(bytes.size(), sizeof(values));
  EXPECT_EQ(std::memcmp(bytes.data(), values, sizeof(values)), 0);
  PJRT_Buffer_Dimensions_Args dims{};
  dims.struct_size = PJRT_Buffer_Dimensions_Args_STRUCT_SIZE;
  dims.buffer = bits;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims), (std::vector<int64_t>{2, 2}));
  // Either may go first: the bytes live while one of them does.
  DestroyBuffer(x);
  bytes = ToHost(bits);
  EXPECT_EQ(std::memcmp(bytes.data(), values, sizeof(values)), 0);
  DestroyBuffer(bits);
}

TEST_F(BufferAliasTest, DonatingABitcastSourceNeverWritesUnderTheOtherBuffer) {
  // main(%0 {tf.aliasing_output = 0}, %1) -> (%0 + %1, %0 * %1): a donated %0 normally
  // becomes the product's storage (CompileApiTest.DonatedArgumentsAre...).
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("donated_add.1_17_0"), SingleDeviceOptions(), &executable).failed);
  PJRT_Device* device = Devices(client_)[0];
  const float a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  PJRT_Buffer* x = ToDevice(a, PJRT_Buffer_Type_F32, {3}, device);
  PJRT_Buffer* y = ToDevice(b, PJRT_Buffer_Type_F32, {3}, device);
  ErrorInfo error;
  PJRT_Buffer* alias = Bitcast(x, PJRT_Buffer_Type_S32, {3}, &error);
  ASSERT_NE(alias, nullptr) << error.message;
  std::vector<PJRT_Buffer*> outputs = Execute(executable, {x, y}, 2);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(IsDeleted(x));
  EXPECT_NE(Pointer(outputs[1]), Pointer(alias));
  std::vector<char> kept = ToHost(alias);
  EXPECT_EQ(std::memcmp(kept.data(), a, sizeof(a)), 0);
  std::vector<char> product = ToHost(outputs[1]);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reinterpret_cast<const float*>(product.data())[i], a[i] * b[i]);
  for (PJRT_Buffer* buffer : {x, y, alias, outputs[0], outputs[1]}) DestroyBuffer(buffer);
  Destroy(executable);
}

TEST_F(BufferAliasTest, BitcastRejectsOtherSizesLayoutsAndDeletedBuffers) {
  const float values[4] = {1, 2, 3, 4};
  PJRT_Buffer* x = ToDevice(values, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  ErrorInfo error;
  EXPECT_EQ(Bitcast(x, PJRT_Buffer_Type_F64, {4}, &error), nullptr);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_Buffer_Bitcast"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("keeps the size"), std::string::npos) << error.message;
  EXPECT_EQ(Bitcast(x, static_cast<PJRT_Buffer_Type>(99), {4}, &error), nullptr);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(Bitcast(x, PJRT_Buffer_Type_F32, {-4}, &error), nullptr);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(Bitcast(nullptr, PJRT_Buffer_Type_F32, {4}, &error), nullptr);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  PJRT_Buffer_Delete_Args del{PJRT_Buffer_Delete_Args_STRUCT_SIZE, nullptr, x};
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Delete(&del));
  EXPECT_EQ(Bitcast(x, PJRT_Buffer_Type_S32, {4}, &error), nullptr);
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_NE(error.message.find("PJRT_Buffer_Bitcast"), std::string::npos) << error.message;
  DestroyBuffer(x);
}

TEST_F(BufferAliasTest, DonationWithControlDependencyIsReadyOnlyAfterTheCallback) {
  const float values[3] = {7, 8, 9};
  for (bool fail : {false, true}) {
    PJRT_Buffer* x = ToDevice(values, PJRT_Buffer_Type_F32, {3}, Devices(client_)[0]);
    const uintptr_t bytes = Pointer(x);
    PJRT_Buffer_DonateWithControlDependency_Args args{};
    args.struct_size = PJRT_Buffer_DonateWithControlDependency_Args_STRUCT_SIZE;
    args.buffer = x;
    ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_DonateWithControlDependency(&args));
    ASSERT_NE(args.out_buffer, nullptr);
    ASSERT_NE(args.dependency_ready_callback, nullptr);
    EXPECT_TRUE(IsDeleted(x));
    EXPECT_FALSE(IsReady(args.out_buffer));
    EXPECT_EQ(Pointer(args.out_buffer), bytes);
    const std::string message = "the producer failed";
    PJRT_Buffer_DonateWithControlDependency_Callback_Args done{};
    done.struct_size = PJRT_Buffer_DonateWithControlDependency_Callback_Args_STRUCT_SIZE;
    done.callback_data = args.callback_data;
    done.error_code = fail ? PJRT_Error_Code_ABORTED : PJRT_Error_Code_OK;
    done.error_message = fail ? message.c_str() : nullptr;
    done.error_message_size = fail ? message.size() : 0;
    args.dependency_ready_callback(&done);
    EXPECT_TRUE(IsReady(args.out_buffer));
    ErrorInfo error;
    std::vector<char> host = ToHost(args.out_buffer, &error);
    if (fail) {
      EXPECT_EQ(error.code, PJRT_Error_Code_ABORTED);
      EXPECT_NE(error.message.find(message), std::string::npos) << error.message;
    } else {
      ASSERT_FALSE(error.failed) << error.message;
      EXPECT_EQ(std::memcmp(host.data(), values, sizeof(values)), 0);
    }
    DestroyBuffer(args.out_buffer);
    DestroyBuffer(x);
  }
  // A deleted buffer cannot be donated.
  PJRT_Buffer* x = ToDevice(values, PJRT_Buffer_Type_F32, {3}, Devices(client_)[0]);
  PJRT_Buffer_Delete_Args del{PJRT_Buffer_Delete_Args_STRUCT_SIZE, nullptr, x};
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Delete(&del));
  PJRT_Buffer_DonateWithControlDependency_Args args{};
  args.struct_size = PJRT_Buffer_DonateWithControlDependency_Args_STRUCT_SIZE;
  args.buffer = x;
  ErrorInfo error = TakeError(api_, api_->PJRT_Buffer_DonateWithControlDependency(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_NE(error.message.find("DonateWithControlDependency"), std::string::npos) << error.message;
  DestroyBuffer(x);
}

TEST_F(BufferAliasTest, DmaRangesMapOnceAndUnmapByTheirStart) {
  std::vector<char> host(1 << 20);
  auto map = [&](void* data, size_t size) {
    PJRT_Client_DmaMap_Args args{};
    args.struct_size = PJRT_Client_DmaMap_Args_STRUCT_SIZE;
    args.client = client_;
    args.data = data;
    args.size = size;
    return TakeError(api_, api_->PJRT_Client_DmaMap(&args));
  };
  auto unmap = [&](void* data) {
    PJRT_Client_DmaUnmap_Args args{};
    args.struct_size = PJRT_Client_DmaUnmap_Args_STRUCT_SIZE;
    args.client = client_;
    args.data = data;
    return TakeError(api_, api_->PJRT_Client_DmaUnmap(&args));
  };
  EXPECT_FALSE(map(host.data(), 4096).failed);
  EXPECT_FALSE(map(host.data() + 8192, 4096).failed);
  ErrorInfo error = map(host.data() + 100, 10);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("overlaps"), std::string::npos) << error.message;
  EXPECT_TRUE(map(host.data() + 4000, 200).failed);
  EXPECT_TRUE(map(host.data() + 4096, 0).failed);
  EXPECT_TRUE(map(nullptr, 10).failed);
  EXPECT_FALSE(map(host.data() + 4096, 4096).failed);  // exactly between the two
  error = unmap(host.data() + 1);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_Client_DmaUnmap"), std::string::npos) << error.message;
  for (size_t offset : {0, 4096, 8192}) EXPECT_FALSE(unmap(host.data() + offset).failed);
  EXPECT_TRUE(unmap(host.data()).failed);
}

TEST_F(BufferAliasTest, TrackingEventsAndExecuteContextsLiveUntilDestroyed) {
  const std::string description = "waiting on a host transfer";
  PJRT_Device_CreateAsyncTrackingEvent_Args track{};
  track.struct_size = PJRT_Device_CreateAsyncTrackingEvent_Args_STRUCT_SIZE;
  track.device = Devices(client_)[0];
  track.description = description.c_str();
  track.description_size = description.size();
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_CreateAsyncTrackingEvent(&track));
  ASSERT_NE(track.event, nullptr);
  PJRT_AsyncTrackingEvent_Destroy_Args untrack{PJRT_AsyncTrackingEvent_Destroy_Args_STRUCT_SIZE, nullptr, track.event};
  EXPECT_PJRT_OK(api_, api_->PJRT_AsyncTrackingEvent_Destroy(&untrack));
  ErrorInfo twice = TakeError(api_, api_->PJRT_AsyncTrackingEvent_Destroy(&untrack));
  EXPECT_EQ(twice.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(twice.message.find("PJRT_AsyncTrackingEvent_Destroy"), std::string::npos) << twice.message;
  track.device = nullptr;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Device_CreateAsyncTrackingEvent(&track)).code, PJRT_Error_Code_INVALID_ARGUMENT);

  PJRT_ExecuteContext_Create_Args create{};
  create.struct_size = PJRT_ExecuteContext_Create_Args_STRUCT_SIZE;
  ASSERT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Create(&create));
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable).failed);
  int32_t one = 1, two = 2;
  PJRT_Buffer* x = ToDevice(&one, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  PJRT_Buffer* y = ToDevice(&two, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  std::vector<PJRT_Buffer*> outputs = Execute(executable, {x, y}, 1, nullptr, create.context);
  ASSERT_EQ(outputs.size(), 1u);
  std::vector<char> sum = ToHost(outputs[0]);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(sum.data()), 3);
  DestroyBuffer(outputs[0]);
  PJRT_ExecuteContext_Destroy_Args destroy{PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE, nullptr, create.context};
  EXPECT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Destroy(&destroy));
  // A destroyed context is refused, by the executions and by a second destroy.
  ErrorInfo error;
  EXPECT_TRUE(Execute(executable, {x, y}, 1, &error, create.context).empty());
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("context"), std::string::npos) << error.message;
  error = TakeError(api_, api_->PJRT_ExecuteContext_Destroy(&destroy));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyBuffer(x);
  DestroyBuffer(y);
  Destroy(executable);
}

}  // namespace
}  // namespace stablert::capi_test

namespace stablert::capi_test {
namespace {

// An execution queued behind one that waits for its input can be poisoned by its launch id:
// its outputs then carry the poison and it never runs; the running one is not touched.
TEST_F(BufferAliasTest, PoisonFailsTheEarliestQueuedExecutionOfALaunch) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable).failed);
  PJRT_Device* device = Devices(client_)[0];
  int32_t one = 1, two = 2;
  PJRT_Buffer* x = ToDevice(&one, PJRT_Buffer_Type_S32, {}, device);
  PJRT_Buffer* y = ToDevice(&two, PJRT_Buffer_Type_S32, {}, device);
  // `held` becomes ready only when the control dependency's callback runs.
  PJRT_Buffer_DonateWithControlDependency_Args donate{};
  donate.struct_size = PJRT_Buffer_DonateWithControlDependency_Args_STRUCT_SIZE;
  donate.buffer = x;
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_DonateWithControlDependency(&donate));
  PJRT_Buffer* held = donate.out_buffer;

  PJRT_Event* first_done = nullptr;
  PJRT_Event* second_done = nullptr;
  PJRT_Event* third_done = nullptr;
  std::vector<PJRT_Buffer*> first = ExecuteAsync(executable, {held, y}, 1, &first_done, nullptr, nullptr, 5);
  std::vector<PJRT_Buffer*> second = ExecuteAsync(executable, {y, y}, 1, &second_done, nullptr, nullptr, 7);
  std::vector<PJRT_Buffer*> third = ExecuteAsync(executable, {y, y}, 1, &third_done, nullptr, nullptr, 7);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_EQ(third.size(), 1u);

  const std::string message = "peer process lost";
  auto poison = [&](int launch_id, PJRT_Error_Code code = PJRT_Error_Code_CANCELLED, ErrorInfo* error = nullptr) {
    PJRT_Device_PoisonExecution_Args args{};
    args.struct_size = PJRT_Device_PoisonExecution_Args_STRUCT_SIZE;
    args.device = device;
    args.launch_id = launch_id;
    args.error_code = code;
    args.error_message = message.c_str();
    args.error_message_size = message.size();
    ErrorInfo info = TakeError(api_, api_->PJRT_Device_PoisonExecution(&args));
    if (error) *error = info;
    else EXPECT_FALSE(info.failed) << info.message;
    return args.poisoned;
  };
  EXPECT_TRUE(poison(7));    // the second execution
  EXPECT_FALSE(poison(42));  // no such launch
  ErrorInfo error;
  poison(7, PJRT_Error_Code_OK, &error);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_Device_PoisonExecution"), std::string::npos) << error.message;

  PJRT_Buffer_DonateWithControlDependency_Callback_Args release{};
  release.struct_size = PJRT_Buffer_DonateWithControlDependency_Callback_Args_STRUCT_SIZE;
  release.callback_data = donate.callback_data;
  release.error_code = PJRT_Error_Code_OK;
  donate.dependency_ready_callback(&release);
  AwaitAndDestroy(first_done);
  AwaitAndDestroy(second_done, &error);
  AwaitAndDestroy(third_done);
  std::vector<char> sum = ToHost(first[0]);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(sum.data()), 3);
  ToHost(second[0], &error);
  EXPECT_EQ(error.code, PJRT_Error_Code_CANCELLED);
  EXPECT_NE(error.message.find(message), std::string::npos) << error.message;
  sum = ToHost(third[0]);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(sum.data()), 4);
  for (PJRT_Buffer* buffer : {x, y, held, first[0], second[0], third[0]}) DestroyBuffer(buffer);
  Destroy(executable);
}

}  // namespace
}  // namespace stablert::capi_test

namespace stablert::capi_test {
namespace {

// An alias buffer is usable (as an execution's input) before it has bytes; it computes once
// fulfilled with another buffer, or fails with the error it is fulfilled with.
TEST_F(BufferAliasTest, AliasBuffersTakeTheirBytesWhenFulfilled) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable).failed);
  PJRT_Device* device = Devices(client_)[0];
  auto create = [&](PJRT_Buffer_Type type, std::vector<int64_t> dims, PJRT_FulfillAliasBufferCallback** promise) {
    PJRT_Client_CreateAliasBuffer_Args args{};
    args.struct_size = PJRT_Client_CreateAliasBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.memory = DefaultMemory(device);
    args.shape_dims = dims.data();
    args.shape_num_dims = dims.size();
    args.shape_element_type = type;
    EXPECT_PJRT_OK(api_, api_->PJRT_Client_CreateAliasBuffer(&args));
    *promise = args.fulfill_alias_buffer_cb;
    return args.alias_buffer;
  };
  auto fulfil = [&](PJRT_Buffer* buffer, PJRT_FulfillAliasBufferCallback* promise, PJRT_Error_Code code,
                    const std::string& message = "") {
    PJRT_Client_FulfillAliasBuffer_Args args{};
    args.struct_size = PJRT_Client_FulfillAliasBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.buffer = buffer;
    args.status_code = code;
    args.error_message = message.c_str();
    args.error_message_size = message.size();
    args.fulfill_alias_buffer_cb = promise;
    return TakeError(api_, api_->PJRT_Client_FulfillAliasBuffer(&args));
  };
  int32_t two = 2, forty = 40;
  PJRT_Buffer* y = ToDevice(&two, PJRT_Buffer_Type_S32, {}, device);
  PJRT_FulfillAliasBufferCallback* promise = nullptr;
  PJRT_Buffer* alias = create(PJRT_Buffer_Type_S32, {}, &promise);
  ASSERT_NE(alias, nullptr);
  PJRT_Event* done = nullptr;
  std::vector<PJRT_Buffer*> sum = ExecuteAsync(executable, {alias, y}, 1, &done);
  ASSERT_EQ(sum.size(), 1u);
  PJRT_Buffer* source = ToDevice(&forty, PJRT_Buffer_Type_S32, {}, device);
  // A buffer of another shape cannot fulfil it; the promise stays usable.
  int32_t pair[2] = {0, 0};
  PJRT_Buffer* wrong = ToDevice(pair, PJRT_Buffer_Type_S32, {2}, device);
  ErrorInfo error = fulfil(wrong, promise, PJRT_Error_Code_OK);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_Client_FulfillAliasBuffer"), std::string::npos) << error.message;
  ASSERT_FALSE(fulfil(source, promise, PJRT_Error_Code_OK).failed);
  AwaitAndDestroy(done);
  std::vector<char> bytes = ToHost(sum[0]);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(bytes.data()), 42);
  // The source may go first: the alias keeps the bytes.
  PJRT_Buffer_Delete_Args delete_source{PJRT_Buffer_Delete_Args_STRUCT_SIZE, nullptr, source};
  ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_Delete(&delete_source));
  bytes = ToHost(alias);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(bytes.data()), 40);

  // A promise is consumed by its fulfilment: using it again is an error, not a crash.
  error = fulfil(source, promise, PJRT_Error_Code_OK);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("not a live promise"), std::string::npos) << error.message;

  PJRT_Buffer* failing = create(PJRT_Buffer_Type_S32, {}, &promise);
  ASSERT_FALSE(fulfil(nullptr, promise, PJRT_Error_Code_UNAVAILABLE, "producer gone").failed);
  ToHost(failing, &error);
  EXPECT_EQ(error.code, PJRT_Error_Code_UNAVAILABLE);
  EXPECT_NE(error.message.find("producer gone"), std::string::npos) << error.message;
  for (PJRT_Buffer* buffer : {y, source, alias, wrong, failing, sum[0]}) DestroyBuffer(buffer);
  Destroy(executable);
}

}  // namespace
}  // namespace stablert::capi_test
