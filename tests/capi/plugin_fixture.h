// Test fixture for the C API suite: loads a PJRT plugin with dlopen, as a framework does,
// and offers small helpers around the raw C API. The suite takes any plugin path
// (STABLERT_TEST_PLUGIN overrides the built one).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi_test {

inline const PJRT_Api* LoadPlugin() {
  static const PJRT_Api* api = [] {
    const char* path = std::getenv("STABLERT_TEST_PLUGIN");
    if (!path) path = STABLERT_PLUGIN_PATH;
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      ADD_FAILURE() << "dlopen(" << path << "): " << dlerror();
      return static_cast<const PJRT_Api*>(nullptr);
    }
    using GetApi = const PJRT_Api* (*)();
    auto get = reinterpret_cast<GetApi>(dlsym(handle, "GetPjrtApi"));
    if (!get) {
      ADD_FAILURE() << "GetPjrtApi not found in " << path;
      return static_cast<const PJRT_Api*>(nullptr);
    }
    const PJRT_Api* loaded = get();
    PJRT_Plugin_Initialize_Args init{PJRT_Plugin_Initialize_Args_STRUCT_SIZE, nullptr};
    if (PJRT_Error* error = loaded->PJRT_Plugin_Initialize(&init)) {
      ADD_FAILURE() << "PJRT_Plugin_Initialize failed";
      PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
      loaded->PJRT_Error_Destroy(&destroy);
    }
    return loaded;
  }();
  return api;
}

// An error's code and message; frees the error.
struct ErrorInfo {
  bool failed = false;
  PJRT_Error_Code code = PJRT_Error_Code_OK;
  std::string message;
};

inline ErrorInfo TakeError(const PJRT_Api* api, PJRT_Error* error) {
  ErrorInfo info;
  if (!error) return info;
  info.failed = true;
  PJRT_Error_GetCode_Args code_args{PJRT_Error_GetCode_Args_STRUCT_SIZE, nullptr, error, {}};
  if (PJRT_Error* inner = api->PJRT_Error_GetCode(&code_args)) {
    info.message = "<GetCode failed>";
    PJRT_Error_Destroy_Args d{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, inner};
    api->PJRT_Error_Destroy(&d);
  }
  info.code = code_args.code;
  PJRT_Error_Message_Args message_args{PJRT_Error_Message_Args_STRUCT_SIZE, nullptr, error, nullptr, 0};
  api->PJRT_Error_Message(&message_args);
  info.message.assign(message_args.message, message_args.message_size);
  PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  api->PJRT_Error_Destroy(&destroy);
  return info;
}

#define EXPECT_PJRT_OK(api, call)                                   \
  do {                                                              \
    auto _info = ::stablert::capi_test::TakeError((api), (call));   \
    EXPECT_FALSE(_info.failed) << #call << ": " << _info.message;   \
  } while (0)

#define ASSERT_PJRT_OK(api, call)                                   \
  do {                                                              \
    auto _info = ::stablert::capi_test::TakeError((api), (call));   \
    ASSERT_FALSE(_info.failed) << #call << ": " << _info.message;   \
  } while (0)

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A PJRT client for one test; destroyed at the end of the test.
class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = LoadPlugin();
    ASSERT_NE(api_, nullptr);
    client_ = CreateClient({});
    ASSERT_NE(client_, nullptr);
  }
  void TearDown() override {
    if (client_) DestroyClient(client_);
  }

  PJRT_Client* CreateClient(const std::vector<PJRT_NamedValue>& options) {
    PJRT_Client_Create_Args args{};
    args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
    args.create_options = options.data();
    args.num_options = options.size();
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_Create(&args));
    EXPECT_FALSE(info.failed) << info.message;
    return info.failed ? nullptr : args.client;
  }

  void DestroyClient(PJRT_Client* client) {
    PJRT_Client_Destroy_Args args{PJRT_Client_Destroy_Args_STRUCT_SIZE, nullptr, client};
    EXPECT_PJRT_OK(api_, api_->PJRT_Client_Destroy(&args));
  }

  std::vector<PJRT_Device*> Devices(PJRT_Client* client) {
    PJRT_Client_AddressableDevices_Args args{};
    args.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
    args.client = client;
    EXPECT_PJRT_OK(api_, api_->PJRT_Client_AddressableDevices(&args));
    return {args.addressable_devices, args.addressable_devices + args.num_addressable_devices};
  }

  PJRT_Memory* DefaultMemory(PJRT_Device* device) {
    PJRT_Device_DefaultMemory_Args args{};
    args.struct_size = PJRT_Device_DefaultMemory_Args_STRUCT_SIZE;
    args.device = device;
    EXPECT_PJRT_OK(api_, api_->PJRT_Device_DefaultMemory(&args));
    return args.memory;
  }

  void AwaitAndDestroy(PJRT_Event* event, ErrorInfo* result = nullptr) {
    if (!event) return;
    PJRT_Event_Await_Args await{PJRT_Event_Await_Args_STRUCT_SIZE, nullptr, event};
    ErrorInfo info = TakeError(api_, api_->PJRT_Event_Await(&await));
    if (result) *result = info;
    else EXPECT_FALSE(info.failed) << info.message;
    PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, event};
    EXPECT_PJRT_OK(api_, api_->PJRT_Event_Destroy(&destroy));
  }

  // Transfers `data` (dense unless byte_strides given) to `device`'s default memory.
  PJRT_Buffer* ToDevice(const void* data, PJRT_Buffer_Type type, std::vector<int64_t> dims, PJRT_Device* device,
                        PJRT_HostBufferSemantics semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                        std::vector<int64_t> byte_strides = {}) {
    PJRT_Client_BufferFromHostBuffer_Args args{};
    args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    args.client = client_;
    args.data = data;
    args.type = type;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.byte_strides = byte_strides.empty() ? nullptr : byte_strides.data();
    args.num_byte_strides = byte_strides.size();
    args.host_buffer_semantics = semantics;
    args.memory = DefaultMemory(device);
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_FALSE(info.failed) << info.message;
    if (info.failed) return nullptr;
    bool zero_copy = semantics == PJRT_HostBufferSemantics_kImmutableZeroCopy ||
                     semantics == PJRT_HostBufferSemantics_kMutableZeroCopy;
    if (zero_copy) {
      // The plugin may keep using the host memory until the buffer is gone; the event
      // can be dropped unawaited.
      PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, args.done_with_host_buffer};
      EXPECT_PJRT_OK(api_, api_->PJRT_Event_Destroy(&destroy));
    } else {
      AwaitAndDestroy(args.done_with_host_buffer);
    }
    return args.buffer;
  }

  std::vector<char> ToHost(PJRT_Buffer* buffer, ErrorInfo* error = nullptr) {
    PJRT_Buffer_ToHostBuffer_Args args{};
    args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
    args.src = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
    std::vector<char> out(args.dst_size);
    args.dst = out.data();
    ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
    if (error) *error = info;
    if (info.failed) return {};
    AwaitAndDestroy(args.event, error);
    return out;
  }

  void DestroyBuffer(PJRT_Buffer* buffer) {
    PJRT_Buffer_Destroy_Args args{PJRT_Buffer_Destroy_Args_STRUCT_SIZE, nullptr, buffer};
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_Destroy(&args));
  }

  const PJRT_Api* api_ = nullptr;
  PJRT_Client* client_ = nullptr;
};

inline PJRT_NamedValue Int64Option(const char* name, int64_t value) {
  PJRT_NamedValue option{};
  option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  option.name = name;
  option.name_size = std::strlen(name);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = value;
  option.value_size = 1;
  return option;
}

}  // namespace stablert::capi_test
