// Host transfers through the C API: a program that sends x to the host on channel 1 and
// receives y on channel 2 (testdata host_transfer: returns x + y), run with
// PJRT_ExecuteOptions send/recv callbacks; the PJRT_CopyToDeviceStream functions; missing
// callbacks and callback errors fail the execution with their message.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/proto_wire.h"
#include "compile_options.h"
#include "program_fixture.h"

namespace stablert::capi_test {
namespace {

// What the host side of one execution saw and does.
struct Host {
  const PJRT_Api* api = nullptr;
  std::vector<float> sent;           // bytes the send callback got
  size_t send_total = 0;
  bool send_done = false;
  std::vector<float> reply;          // what the recv callback pushes, in two chunks
  int64_t total_bytes = -1, granule = -1, current_after_first = -1;
  bool fail_send = false;
  std::string chunk_error;
};

PJRT_Error* OnSend(PJRT_Chunk* chunk, PJRT_CallbackError* callback_error, size_t total_size_in_bytes, bool done,
                   void* user_arg) {
  auto* host = static_cast<Host*>(user_arg);
  host->sent.resize(chunk->size / sizeof(float));
  std::memcpy(host->sent.data(), chunk->data, chunk->size);
  host->send_total = total_size_in_bytes;
  host->send_done = done;
  chunk->deleter(chunk->data, chunk->deleter_arg);
  if (host->fail_send) {
    const char message[] = "the host callback raised ValueError";
    return (*callback_error)(PJRT_Error_Code_INVALID_ARGUMENT, message, sizeof(message) - 1);
  }
  return nullptr;
}

void DeleteVector(void* data, void* arg) { delete static_cast<std::vector<char>*>(arg); }

// Pushes `bytes` as a chunk the stream owns.
void AddChunk(Host* host, PJRT_CopyToDeviceStream* stream, const void* bytes, size_t size) {
  auto* owned = new std::vector<char>(static_cast<const char*>(bytes), static_cast<const char*>(bytes) + size);
  PJRT_Chunk chunk{owned->data(), owned->size(), &DeleteVector, owned};
  PJRT_CopyToDeviceStream_AddChunk_Args add{};
  add.struct_size = PJRT_CopyToDeviceStream_AddChunk_Args_STRUCT_SIZE;
  add.stream = stream;
  add.chunk = &chunk;
  ErrorInfo info = TakeError(host->api, host->api->PJRT_CopyToDeviceStream_AddChunk(&add));
  if (info.failed) {
    host->chunk_error = info.message;
    return;
  }
  PJRT_Event_Await_Args await{PJRT_Event_Await_Args_STRUCT_SIZE, nullptr, add.transfer_complete};
  EXPECT_PJRT_OK(host->api, host->api->PJRT_Event_Await(&await));
  PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, add.transfer_complete};
  EXPECT_PJRT_OK(host->api, host->api->PJRT_Event_Destroy(&destroy));
}

void OnRecv(PJRT_CopyToDeviceStream* stream, void* user_arg) {
  auto* host = static_cast<Host*>(user_arg);
  const PJRT_Api* api = host->api;
  PJRT_CopyToDeviceStream_TotalBytes_Args total{};
  total.struct_size = PJRT_CopyToDeviceStream_TotalBytes_Args_STRUCT_SIZE;
  total.stream = stream;
  EXPECT_PJRT_OK(api, api->PJRT_CopyToDeviceStream_TotalBytes(&total));
  host->total_bytes = total.total_bytes;
  PJRT_CopyToDeviceStream_GranuleSize_Args granule{};
  granule.struct_size = PJRT_CopyToDeviceStream_GranuleSize_Args_STRUCT_SIZE;
  granule.stream = stream;
  EXPECT_PJRT_OK(api, api->PJRT_CopyToDeviceStream_GranuleSize(&granule));
  host->granule = granule.granule_size_in_bytes;
  const size_t all = host->reply.size() * sizeof(float);
  AddChunk(host, stream, host->reply.data(), sizeof(float));
  PJRT_CopyToDeviceStream_CurrentBytes_Args current{};
  current.struct_size = PJRT_CopyToDeviceStream_CurrentBytes_Args_STRUCT_SIZE;
  current.stream = stream;
  EXPECT_PJRT_OK(api, api->PJRT_CopyToDeviceStream_CurrentBytes(&current));
  host->current_after_first = current.current_bytes;
  AddChunk(host, stream, reinterpret_cast<const char*>(host->reply.data()) + sizeof(float), all - sizeof(float));
  // The stream is complete: one more byte is refused.
  char extra = 0;
  AddChunk(host, stream, &extra, 1);
  PJRT_CopyToDeviceStream_Destroy_Args destroy{PJRT_CopyToDeviceStream_Destroy_Args_STRUCT_SIZE, nullptr, stream};
  EXPECT_PJRT_OK(api, api->PJRT_CopyToDeviceStream_Destroy(&destroy));
}

// A recv callback that gives up: destroys the stream without data.
void OnRecvDestroyOnly(PJRT_CopyToDeviceStream* stream, void* user_arg) {
  auto* host = static_cast<Host*>(user_arg);
  PJRT_CopyToDeviceStream_Destroy_Args destroy{PJRT_CopyToDeviceStream_Destroy_Args_STRUCT_SIZE, nullptr, stream};
  EXPECT_PJRT_OK(host->api, host->api->PJRT_CopyToDeviceStream_Destroy(&destroy));
}

// A recv callback that first claims a chunk larger than any stream (its size turns negative
// as int64), then delivers the real bytes.
void OnRecvHugeChunkFirst(PJRT_CopyToDeviceStream* stream, void* user_arg) {
  auto* host = static_cast<Host*>(user_arg);
  char byte = 0;
  PJRT_Chunk chunk{&byte, std::numeric_limits<size_t>::max(), nullptr, nullptr};
  PJRT_CopyToDeviceStream_AddChunk_Args add{};
  add.struct_size = PJRT_CopyToDeviceStream_AddChunk_Args_STRUCT_SIZE;
  add.stream = stream;
  add.chunk = &chunk;
  ErrorInfo info = TakeError(host->api, host->api->PJRT_CopyToDeviceStream_AddChunk(&add));
  if (info.failed) {
    host->chunk_error = info.message;
  } else {
    PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, add.transfer_complete};
    EXPECT_PJRT_OK(host->api, host->api->PJRT_Event_Destroy(&destroy));
  }
  AddChunk(host, stream, host->reply.data(), host->reply.size() * sizeof(float));
  PJRT_CopyToDeviceStream_Destroy_Args destroy{PJRT_CopyToDeviceStream_Destroy_Args_STRUCT_SIZE, nullptr, stream};
  EXPECT_PJRT_OK(host->api, host->api->PJRT_CopyToDeviceStream_Destroy(&destroy));
}

// A send callback that reports an error with a code PJRT does not define.
PJRT_Error* OnSendWithUndefinedCode(PJRT_Chunk* chunk, PJRT_CallbackError* callback_error, size_t, bool, void*) {
  chunk->deleter(chunk->data, chunk->deleter_arg);
  return (*callback_error)(static_cast<PJRT_Error_Code>(99), "odd code", 8);
}

class HostTransferApiTest : public ProgramTest {
 protected:
  void SetUp() override {
    ProgramTest::SetUp();
    ErrorInfo info = Compile(Program("host_transfer.1_17_0"), SingleDeviceOptions(), &executable_);
    ASSERT_FALSE(info.failed) << info.message;
    host_.api = api_;
    host_.reply = {10, 20, 30};
  }
  void TearDown() override {
    if (executable_) Destroy(executable_);
    ProgramTest::TearDown();
  }

  // Runs the program on x = {1, 2, 3} with `sends`/`recvs` (may be empty); the output's
  // bytes, or the execution's error in `error`.
  std::vector<float> Run(std::vector<PJRT_SendCallbackInfo> sends, std::vector<PJRT_RecvCallbackInfo> recvs,
                         ErrorInfo* error) {
    const float x[3] = {1, 2, 3};
    PJRT_Buffer* input = ToDevice(x, PJRT_Buffer_Type_F32, {3}, Devices(client_)[0]);
    PJRT_Buffer* const* argument_list = &input;
    PJRT_Buffer* output = nullptr;
    PJRT_Buffer** output_list = &output;
    PJRT_Event* complete = nullptr;
    PJRT_SendCallbackInfo* send_list = sends.data();
    PJRT_RecvCallbackInfo* recv_list = recvs.data();
    PJRT_ExecuteOptions options{};
    options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
    options.send_callbacks = sends.empty() ? nullptr : &send_list;
    options.recv_callbacks = recvs.empty() ? nullptr : &recv_list;
    options.num_send_ops = sends.size();
    options.num_recv_ops = recvs.size();
    PJRT_LoadedExecutable_Execute_Args args{};
    args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
    args.executable = executable_;
    args.options = &options;
    args.argument_lists = &argument_list;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = &output_list;
    args.device_complete_events = &complete;
    *error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
    std::vector<float> result;
    if (!error->failed) {
      AwaitAndDestroy(complete, error);
      if (!error->failed) {
        std::vector<char> bytes = ToHost(output);
        result.resize(bytes.size() / sizeof(float));
        std::memcpy(result.data(), bytes.data(), bytes.size());
      }
      DestroyBuffer(output);
    }
    DestroyBuffer(input);
    return result;
  }

  PJRT_LoadedExecutable* executable_ = nullptr;
  Host host_;
};

TEST_F(HostTransferApiTest, SendsTheOperandAndReceivesTheResultThroughTheStream) {
  ErrorInfo error;
  std::vector<float> out = Run({{1, &host_, &OnSend}}, {{2, &host_, &OnRecv}}, &error);
  ASSERT_FALSE(error.failed) << error.message;
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(host_.sent, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(host_.send_total, 12u);
  EXPECT_TRUE(host_.send_done);
  EXPECT_EQ(host_.total_bytes, 12);
  EXPECT_EQ(host_.granule, 1);
  EXPECT_EQ(host_.current_after_first, 4);
  EXPECT_NE(host_.chunk_error.find("PJRT_CopyToDeviceStream_AddChunk"), std::string::npos) << host_.chunk_error;
}

TEST_F(HostTransferApiTest, WithoutCallbacksTheExecutionFailsNamingTheChannel) {
  ErrorInfo error;
  Run({}, {}, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_NE(error.message.find("stablehlo.send"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("channel 1"), std::string::npos) << error.message;
}

TEST_F(HostTransferApiTest, AMissingChannelIsNamed) {
  ErrorInfo error;
  Run({{1, &host_, &OnSend}}, {{7, &host_, &OnRecv}}, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_NE(error.message.find("no host recv callback for channel 2"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("serve channels: 7"), std::string::npos) << error.message;
}

TEST_F(HostTransferApiTest, ACallbackErrorFailsTheExecutionWithItsMessage) {
  host_.fail_send = true;
  ErrorInfo error;
  Run({{1, &host_, &OnSend}}, {{2, &host_, &OnRecv}}, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("the host callback raised ValueError"), std::string::npos) << error.message;
}

TEST_F(HostTransferApiTest, AStreamDestroyedBeforeItsBytesFailsTheRecv) {
  ErrorInfo error;
  Run({{1, &host_, &OnSend}}, {{2, &host_, &OnRecvDestroyOnly}}, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_NE(error.message.find("after 0 of 12 bytes"), std::string::npos) << error.message;
}

TEST_F(HostTransferApiTest, AChunkLargerThanTheStreamIsRefused) {
  ErrorInfo error;
  std::vector<float> out = Run({{1, &host_, &OnSend}}, {{2, &host_, &OnRecvHugeChunkFirst}}, &error);
  ASSERT_FALSE(error.failed) << error.message;
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33}));
  EXPECT_NE(host_.chunk_error.find("PJRT_CopyToDeviceStream_AddChunk: a chunk of 18446744073709551615 bytes exceeds"),
            std::string::npos)
      << host_.chunk_error;
}

TEST_F(HostTransferApiTest, ACallbackErrorWithAnUndefinedCodeIsUnknown) {
  ErrorInfo error;
  Run({{1, &host_, &OnSendWithUndefinedCode}}, {{2, &host_, &OnRecv}}, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_UNKNOWN);
  EXPECT_NE(error.message.find("odd code"), std::string::npos) << error.message;
}

TEST_F(HostTransferApiTest, NullCallbackListsAreInvalidArgument) {
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  options.num_send_ops = 1;  // but no lists
  const float x[3] = {1, 2, 3};
  PJRT_Buffer* input = ToDevice(x, PJRT_Buffer_Type_F32, {3}, Devices(client_)[0]);
  PJRT_Buffer* const* argument_list = &input;
  PJRT_Buffer* output = nullptr;
  PJRT_Buffer** output_list = &output;
  PJRT_LoadedExecutable_Execute_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  args.executable = executable_;
  args.options = &options;
  args.argument_lists = &argument_list;
  args.num_devices = 1;
  args.num_args = 1;
  args.output_lists = &output_list;
  ErrorInfo error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("send_callbacks is null"), std::string::npos) << error.message;
  DestroyBuffer(input);
}

TEST_F(HostTransferApiTest, StreamFunctionsRejectNullStreams) {
  PJRT_CopyToDeviceStream_TotalBytes_Args total{};
  total.struct_size = PJRT_CopyToDeviceStream_TotalBytes_Args_STRUCT_SIZE;
  ErrorInfo info = TakeError(api_, api_->PJRT_CopyToDeviceStream_TotalBytes(&total));
  EXPECT_TRUE(info.failed);
  EXPECT_NE(info.message.find("PJRT_CopyToDeviceStream_TotalBytes"), std::string::npos) << info.message;
  PJRT_CopyToDeviceStream_Destroy_Args destroy{PJRT_CopyToDeviceStream_Destroy_Args_STRUCT_SIZE, nullptr, nullptr};
  EXPECT_PJRT_OK(api_, api_->PJRT_CopyToDeviceStream_Destroy(&destroy));
}

}  // namespace
}  // namespace stablert::capi_test
