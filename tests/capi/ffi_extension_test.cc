// The PJRT FFI extension: registration misuse is an error naming the function, and a
// registered handler (written against xla/ffi/api/c_api.h alone) runs through
// PJRT_Client_Compile / Execute on a custom call, with its attributes, and its errors fail
// the execution with their message; handlers read their execution's PJRT_ExecuteContext user
// data; batch partitionable targets register through the custom partitioner extension.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "compile_options.h"
#include "program_fixture.h"
#include "xla/ffi/api/c_api.h"
#include "xla/pjrt/c/pjrt_c_api_custom_partitioner_extension.h"
#include "xla/pjrt/c/pjrt_c_api_ffi_extension.h"

namespace stablert::capi_test {
namespace {

const PJRT_FFI_Extension* FindFfi(const PJRT_Api* api) {
  for (const PJRT_Extension_Base* ext = api->extension_start; ext; ext = ext->next)
    if (ext->type == PJRT_Extension_Type_FFI) return reinterpret_cast<const PJRT_FFI_Extension*>(ext);
  return nullptr;
}

XLA_FFI_Error* MakeError(const XLA_FFI_Api* api, const char* message) {
  XLA_FFI_Error_Create_Args args{XLA_FFI_Error_Create_Args_STRUCT_SIZE, nullptr, message,
                                 XLA_FFI_Error_Code_INVALID_ARGUMENT};
  return api->XLA_FFI_Error_Create(&args);
}

// y = x + bias for f32 arrays; checks what the call frame carries on the way.
XLA_FFI_Error* AddBias(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return nullptr;  // a metadata query: nothing to report
  const XLA_FFI_Api* api = frame->api;
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return MakeError(api, "expected the execute stage");
  if (frame->args.size != 1 || frame->rets.size != 1 || frame->attrs.size != 1)
    return MakeError(api, "expected one argument, one result and one attribute");
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* y = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  if (x->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32 || x->rank != 1 || x->dims[0] != 4)
    return MakeError(api, "expected f32[4] buffers");
  if (frame->attrs.types[0] != XLA_FFI_AttrType_SCALAR ||
      std::string(frame->attrs.names[0]->ptr, frame->attrs.names[0]->len) != "bias")
    return MakeError(api, "expected the scalar attribute 'bias'");
  auto* bias = static_cast<XLA_FFI_Scalar*>(frame->attrs.attrs[0]);
  if (bias->dtype != XLA_FFI_DataType_F32) return MakeError(api, "expected an f32 bias");
  // State of a stage other than instantiate is refused, naming the function.
  XLA_FFI_TypeId type{1};
  XLA_FFI_State_Set_Args set{XLA_FFI_State_Set_Args_STRUCT_SIZE, nullptr, frame->ctx, XLA_FFI_ExecutionStage_EXECUTE,
                             &type, nullptr};
  XLA_FFI_Error* refused = api->XLA_FFI_State_Set(&set);
  if (refused == nullptr) return MakeError(api, "State_Set during execute should fail");
  XLA_FFI_Error_GetMessage_Args message{XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, nullptr, refused, nullptr};
  api->XLA_FFI_Error_GetMessage(&message);
  const bool named = std::strstr(message.message, "XLA_FFI_State_Set") != nullptr;
  XLA_FFI_Error_Destroy_Args destroy{XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, nullptr, refused};
  api->XLA_FFI_Error_Destroy(&destroy);
  if (!named) return MakeError(api, "State_Set error does not name the function");
  const float b = *static_cast<float*>(bias->value);
  for (int i = 0; i < 4; ++i) static_cast<float*>(y->data)[i] = static_cast<float*>(x->data)[i] + b;
  return nullptr;
}

XLA_FFI_Error* AlwaysFails(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return nullptr;
  return MakeError(frame->api, "the handler refuses");
}

// Reports (through the metadata query) an FFI API major version StableRT does not implement.
XLA_FFI_Error* FromTheFuture(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr && frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    extension->metadata->api_version = XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, 1, 0};
    return nullptr;
  }
  return MakeError(frame->api, "never executed");
}

// The type id of the user data ScaleByUserData reads: any id the handler and the caller agree on.
constexpr int64_t kScaleType = 0x5eed0001;

// y = x * scale + bias, `scale` (a float) from the execution's user data of kScaleType; also
// checks the device ordinal and run id the context reports.
XLA_FFI_Error* ScaleByUserData(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) return nullptr;
  const XLA_FFI_Api* api = frame->api;
  XLA_FFI_TypeId type{kScaleType};
  XLA_FFI_ExecutionContext_Get_Args get{XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, nullptr, frame->ctx, &type,
                                        nullptr};
  if (XLA_FFI_Error* error = api->XLA_FFI_ExecutionContext_Get(&get)) return error;
  if (get.data == nullptr) return MakeError(api, "ExecutionContext_Get returned no data without an error");
  XLA_FFI_DeviceOrdinal_Get_Args ordinal{XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, nullptr, frame->ctx, -1};
  if (XLA_FFI_Error* error = api->XLA_FFI_DeviceOrdinal_Get(&ordinal)) return error;
  if (ordinal.device_ordinal != 0) return MakeError(api, "expected device ordinal 0");
  XLA_FFI_RunId_Get_Args run{XLA_FFI_RunId_Get_Args_STRUCT_SIZE, nullptr, frame->ctx, 0};
  if (XLA_FFI_Error* error = api->XLA_FFI_RunId_Get(&run)) return error;
  if (run.run_id == 0) return MakeError(api, "expected a run id");
  const float scale = *static_cast<const float*>(get.data);
  const float bias = *static_cast<float*>(static_cast<XLA_FFI_Scalar*>(frame->attrs.attrs[0])->value);
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* y = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  for (int i = 0; i < 4; ++i) static_cast<float*>(y->data)[i] = static_cast<float*>(x->data)[i] * scale + bias;
  return nullptr;
}

class FfiExtensionTest : public ProgramTest {
 protected:
  void SetUp() override {
    ProgramTest::SetUp();
    ffi_ = FindFfi(api_);
    ASSERT_NE(ffi_, nullptr);
  }

  ErrorInfo Register(const char* target, void* handler, const char* platform) {
    PJRT_FFI_Register_Handler_Args args{};
    args.struct_size = PJRT_FFI_Register_Handler_Args_STRUCT_SIZE;
    args.target_name = target;
    args.target_name_size = target ? std::strlen(target) : 0;
    args.handler = handler;
    args.platform_name = platform;
    args.platform_name_size = platform ? std::strlen(platform) : 0;
    return TakeError(api_, ffi_->register_handler(&args));
  }

  const PJRT_FFI_Extension* ffi_ = nullptr;
};

TEST_F(FfiExtensionTest, RegistrationMisuseNamesTheFunction) {
  void* handler = reinterpret_cast<void*>(&AddBias);
  for (const ErrorInfo& info : {Register(nullptr, handler, "stablert"), Register("capi_ffi_x", nullptr, "stablert"),
                                Register("capi_ffi_x", handler, nullptr)}) {
    EXPECT_TRUE(info.failed);
    EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_NE(info.message.find("PJRT_FFI_Register_Handler"), std::string::npos) << info.message;
  }
  ErrorInfo empty = Register("", handler, "stablert");
  EXPECT_TRUE(empty.failed);
  EXPECT_NE(empty.message.find("PJRT_FFI_Register_Handler"), std::string::npos) << empty.message;
  ErrorInfo platform = Register("capi_ffi_x", handler, "CUDA");
  EXPECT_TRUE(platform.failed);
  EXPECT_NE(platform.message.find("'CUDA'"), std::string::npos) << platform.message;

  PJRT_FFI_Register_Handler_Args small{};
  small.struct_size = 8;
  ErrorInfo size = TakeError(api_, ffi_->register_handler(&small));
  EXPECT_TRUE(size.failed);
  EXPECT_NE(size.message.find("PJRT_FFI_Register_Handler"), std::string::npos) << size.message;
}

TEST_F(FfiExtensionTest, HandlersOfAnotherFfiApiVersionAreRefused) {
  ErrorInfo info = Register("capi_ffi_future", reinterpret_cast<void*>(&FromTheFuture), "stablert");
  EXPECT_TRUE(info.failed);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("PJRT_FFI_Register_Handler"), std::string::npos) << info.message;
  EXPECT_NE(info.message.find("1.0"), std::string::npos) << info.message;
}

TEST_F(FfiExtensionTest, ReRegisteringATargetNeedsTheSameHandler) {
  EXPECT_FALSE(Register("capi_ffi_twice", reinterpret_cast<void*>(&AddBias), "stablert").failed);
  EXPECT_FALSE(Register("capi_ffi_twice", reinterpret_cast<void*>(&AddBias), "cpu").failed);
  ErrorInfo other = Register("capi_ffi_twice", reinterpret_cast<void*>(&AlwaysFails), "STABLERT");
  EXPECT_TRUE(other.failed);
  EXPECT_EQ(other.code, PJRT_Error_Code_ALREADY_EXISTS);
  EXPECT_NE(other.message.find("capi_ffi_twice"), std::string::npos) << other.message;
}

TEST_F(FfiExtensionTest, TypeIdsAreAssignedAndChecked) {
  PJRT_FFI_Type_Register_Args args{};
  args.struct_size = PJRT_FFI_Type_Register_Args_STRUCT_SIZE;
  args.type_name = "capi_ffi_type";
  args.type_name_size = std::strlen(args.type_name);
  args.type_id = 0;
  EXPECT_PJRT_OK(api_, ffi_->type_register(&args));
  const int64_t id = args.type_id;
  EXPECT_GT(id, 0);
  args.type_id = 0;
  EXPECT_PJRT_OK(api_, ffi_->type_register(&args));
  EXPECT_EQ(args.type_id, id);
  args.type_id = id + 1000;
  ErrorInfo conflict = TakeError(api_, ffi_->type_register(&args));
  EXPECT_TRUE(conflict.failed);
  EXPECT_NE(conflict.message.find("PJRT_FFI_Type_Register"), std::string::npos) << conflict.message;
  args.type_name = nullptr;
  ErrorInfo null_name = TakeError(api_, ffi_->type_register(&args));
  EXPECT_TRUE(null_name.failed);
  EXPECT_NE(null_name.message.find("PJRT_FFI_Type_Register"), std::string::npos) << null_name.message;
}

TEST_F(FfiExtensionTest, UserDataNeedsALiveContext) {
  PJRT_FFI_UserData_Add_Args args{};
  args.struct_size = PJRT_FFI_UserData_Add_Args_STRUCT_SIZE;
  args.user_data = {7, nullptr};
  // No context: user data of the process, which must point somewhere.
  ErrorInfo null_context = TakeError(api_, ffi_->user_data_add(&args));
  EXPECT_TRUE(null_context.failed);
  EXPECT_NE(null_context.message.find("PJRT_FFI_UserData_Add"), std::string::npos) << null_context.message;

  PJRT_ExecuteContext_Create_Args create{PJRT_ExecuteContext_Create_Args_STRUCT_SIZE, nullptr, nullptr};
  ASSERT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Create(&create));
  args.context = create.context;
  EXPECT_PJRT_OK(api_, ffi_->user_data_add(&args));
  ErrorInfo twice = TakeError(api_, ffi_->user_data_add(&args));
  EXPECT_TRUE(twice.failed);
  EXPECT_EQ(twice.code, PJRT_Error_Code_ALREADY_EXISTS);
  PJRT_ExecuteContext_Destroy_Args destroy{PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE, nullptr, create.context};
  EXPECT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Destroy(&destroy));
  ErrorInfo dead = TakeError(api_, ffi_->user_data_add(&args));
  EXPECT_TRUE(dead.failed);
  EXPECT_NE(dead.message.find("PJRT_FFI_UserData_Add"), std::string::npos) << dead.message;
}

TEST_F(FfiExtensionTest, RegisteredHandlerRunsOnACustomCall) {
  ASSERT_FALSE(Register("capi_ffi_add_bias", reinterpret_cast<void*>(&AddBias), "stablert").failed);
  // The oldest and the current StableHLO version JAX writes.
  for (const char* program : {"ffi_add_bias.0_9_0", "ffi_add_bias.1_17_0"}) {
    SCOPED_TRACE(program);
    PJRT_LoadedExecutable* executable = nullptr;
    ErrorInfo compiled = Compile(Program(program), SingleDeviceOptions(), &executable);
    ASSERT_FALSE(compiled.failed) << compiled.message;
    const float x[4] = {1, 2, 3, 4};
    PJRT_Buffer* input = ToDevice(x, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
    std::vector<PJRT_Buffer*> outputs = Execute(executable, {input}, 1);
    ASSERT_EQ(outputs.size(), 1u);
    std::vector<char> bytes = ToHost(outputs[0]);
    ASSERT_EQ(bytes.size(), sizeof(x));
    const float* y = reinterpret_cast<const float*>(bytes.data());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], x[i] + 1.5f);
    DestroyBuffer(outputs[0]);
    DestroyBuffer(input);
    Destroy(executable);
  }
}

TEST_F(FfiExtensionTest, HandlerErrorsFailTheExecutionNamingTheTarget) {
  ASSERT_FALSE(Register("capi_ffi_fails", reinterpret_cast<void*>(&AlwaysFails), "stablert").failed);
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo compiled = Compile(Program("ffi_fails.1_17_0"), SingleDeviceOptions(), &executable);
  ASSERT_FALSE(compiled.failed) << compiled.message;
  const float x[4] = {1, 2, 3, 4};
  PJRT_Buffer* input = ToDevice(x, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  PJRT_Event* complete = nullptr;
  ErrorInfo launch;
  std::vector<PJRT_Buffer*> outputs = ExecuteAsync(executable, {input}, 1, &complete, &launch);
  std::string message = launch.message;
  if (!launch.failed) {
    ErrorInfo done;
    AwaitAndDestroy(complete, &done);
    EXPECT_TRUE(done.failed);
    message = done.message;
    for (PJRT_Buffer* out : outputs) DestroyBuffer(out);
  }
  EXPECT_NE(message.find("capi_ffi_fails"), std::string::npos) << message;
  EXPECT_NE(message.find("the handler refuses"), std::string::npos) << message;
  DestroyBuffer(input);
  Destroy(executable);
}

class FfiUserDataTest : public FfiExtensionTest {
 protected:
  void SetUp() override {
    FfiExtensionTest::SetUp();
    ErrorInfo registered = Register("capi_ffi_user_data", reinterpret_cast<void*>(&ScaleByUserData), "stablert");
    ASSERT_FALSE(registered.failed) << registered.message;
    ErrorInfo compiled = Compile(Program("ffi_user_data.1_17_0"), SingleDeviceOptions(), &executable_);
    ASSERT_FALSE(compiled.failed) << compiled.message;
    input_ = ToDevice(x_, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  }
  void TearDown() override {
    if (input_) DestroyBuffer(input_);
    if (executable_) Destroy(executable_);
    FfiExtensionTest::TearDown();
  }

  PJRT_ExecuteContext* NewContext(const float* scale) {
    PJRT_ExecuteContext_Create_Args create{PJRT_ExecuteContext_Create_Args_STRUCT_SIZE, nullptr, nullptr};
    EXPECT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Create(&create));
    PJRT_FFI_UserData_Add_Args add{};
    add.struct_size = PJRT_FFI_UserData_Add_Args_STRUCT_SIZE;
    add.context = create.context;
    add.user_data = {kScaleType, const_cast<float*>(scale)};
    EXPECT_PJRT_OK(api_, ffi_->user_data_add(&add));
    return create.context;
  }
  void DestroyContext(PJRT_ExecuteContext* context) {
    PJRT_ExecuteContext_Destroy_Args destroy{PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE, nullptr, context};
    EXPECT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Destroy(&destroy));
  }
  // Runs the program with `context` (may be null); the result, or the error in `*error`.
  std::vector<float> Run(PJRT_ExecuteContext* context, ErrorInfo* error = nullptr) {
    PJRT_Event* complete = nullptr;
    ErrorInfo launch;
    std::vector<PJRT_Buffer*> outputs = ExecuteAsync(executable_, {input_}, 1, &complete, &launch, context);
    ErrorInfo done = launch;
    if (!launch.failed) AwaitAndDestroy(complete, &done);
    if (error) *error = done;
    else EXPECT_FALSE(done.failed) << done.message;
    std::vector<float> y;
    if (!done.failed && outputs.size() == 1) {
      std::vector<char> bytes = ToHost(outputs[0]);
      y.resize(bytes.size() / sizeof(float));
      std::memcpy(y.data(), bytes.data(), bytes.size());
    }
    for (PJRT_Buffer* out : outputs) DestroyBuffer(out);
    return y;
  }
  std::vector<float> Expected(float scale) const {
    std::vector<float> y;
    for (float v : x_) y.push_back(v * scale + 1.5f);
    return y;
  }

  const float x_[4] = {1, 2, 3, 4};
  PJRT_LoadedExecutable* executable_ = nullptr;
  PJRT_Buffer* input_ = nullptr;
};

TEST_F(FfiUserDataTest, HandlersFindTheirExecutionsUserData) {
  const float two = 2, three = 3;
  PJRT_ExecuteContext* a = NewContext(&two);
  PJRT_ExecuteContext* b = NewContext(&three);
  EXPECT_EQ(Run(a), Expected(2));
  EXPECT_EQ(Run(b), Expected(3));
  EXPECT_EQ(Run(a), Expected(2));
  DestroyContext(a);
  DestroyContext(b);
}

TEST_F(FfiUserDataTest, TheContextMayBeDestroyedOnceExecuteReturns) {
  // As jaxlib does: the context lives for the Execute call; the data for the execution.
  const float four = 4;
  for (int round = 0; round < 20; ++round) {
    PJRT_ExecuteContext* context = NewContext(&four);
    PJRT_Event* complete = nullptr;
    std::vector<PJRT_Buffer*> outputs = ExecuteAsync(executable_, {input_}, 1, &complete, nullptr, context);
    DestroyContext(context);
    ErrorInfo done;
    AwaitAndDestroy(complete, &done);
    ASSERT_FALSE(done.failed) << done.message;
    ASSERT_EQ(outputs.size(), 1u);
    std::vector<char> bytes = ToHost(outputs[0]);
    std::vector<float> y(bytes.size() / sizeof(float));
    std::memcpy(y.data(), bytes.data(), bytes.size());
    EXPECT_EQ(y, Expected(4));
    DestroyBuffer(outputs[0]);
  }
}

TEST_F(FfiUserDataTest, MissingUserDataFailsNamingTheTypeThenProcessUserDataServes) {
  // A context without that type, and no context at all: NotFound naming the type id.
  PJRT_ExecuteContext_Create_Args create{PJRT_ExecuteContext_Create_Args_STRUCT_SIZE, nullptr, nullptr};
  ASSERT_PJRT_OK(api_, api_->PJRT_ExecuteContext_Create(&create));
  for (PJRT_ExecuteContext* context : {create.context, static_cast<PJRT_ExecuteContext*>(nullptr)}) {
    ErrorInfo error;
    EXPECT_TRUE(Run(context, &error).empty());
    EXPECT_TRUE(error.failed);
    EXPECT_EQ(error.code, PJRT_Error_Code_NOT_FOUND) << error.message;
    EXPECT_NE(error.message.find(std::to_string(kScaleType)), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("capi_ffi_user_data"), std::string::npos) << error.message;
  }
  DestroyContext(create.context);
  // User data of the process (a null context) serves executions whose context lacks the type;
  // an execution's own user data comes first.
  static const float five = 5;
  PJRT_FFI_UserData_Add_Args add{};
  add.struct_size = PJRT_FFI_UserData_Add_Args_STRUCT_SIZE;
  add.user_data = {kScaleType, const_cast<float*>(&five)};
  ASSERT_PJRT_OK(api_, ffi_->user_data_add(&add));
  EXPECT_PJRT_OK(api_, ffi_->user_data_add(&add));  // the same data again
  static const float six = 6;
  add.user_data.data = const_cast<float*>(&six);
  ErrorInfo other = TakeError(api_, ffi_->user_data_add(&add));
  EXPECT_TRUE(other.failed);
  EXPECT_EQ(other.code, PJRT_Error_Code_ALREADY_EXISTS);
  EXPECT_EQ(Run(nullptr), Expected(5));
  const float seven = 7;
  PJRT_ExecuteContext* own = NewContext(&seven);
  EXPECT_EQ(Run(own), Expected(7));
  DestroyContext(own);
}

TEST_F(FfiExtensionTest, BatchPartitionableTargetsRegisterThroughTheCustomPartitionerExtension) {
  const PJRT_Custom_Partitioner_Extension* partitioner = nullptr;
  for (const PJRT_Extension_Base* ext = api_->extension_start; ext; ext = ext->next)
    if (ext->type == PJRT_Extension_Type_Custom_Partitioner)
      partitioner = reinterpret_cast<const PJRT_Custom_Partitioner_Extension*>(ext);
  ASSERT_NE(partitioner, nullptr);
  PJRT_Register_Batch_Partitionable_Args args{PJRT_Register_Batch_Partitionable_Args_STRUCT_SIZE, "capi_ffi_batch",
                                              std::strlen("capi_ffi_batch")};
  EXPECT_PJRT_OK(api_, partitioner->register_batch_partitionable(&args));
  EXPECT_PJRT_OK(api_, partitioner->register_batch_partitionable(&args));  // again: fine
  for (auto [name, size] : {std::pair<const char*, size_t>{nullptr, 0}, {"", 0}}) {
    args.name = name;
    args.name_size = size;
    ErrorInfo bad = TakeError(api_, partitioner->register_batch_partitionable(&args));
    EXPECT_TRUE(bad.failed);
    EXPECT_EQ(bad.code, PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_NE(bad.message.find("PJRT_Register_Batch_Partitionable"), std::string::npos) << bad.message;
  }
  PJRT_Register_Batch_Partitionable_Args small{8, "x", 1};
  ErrorInfo size = TakeError(api_, partitioner->register_batch_partitionable(&small));
  EXPECT_TRUE(size.failed);
  EXPECT_NE(size.message.find("PJRT_Register_Batch_Partitionable"), std::string::npos) << size.message;
}

TEST_F(FfiExtensionTest, UnregisteredTargetIsUnimplementedNamingIt) {
  ErrorInfo compiled = Compile(Program("ffi_unregistered.1_17_0"), SingleDeviceOptions(), nullptr);
  EXPECT_TRUE(compiled.failed);
  EXPECT_EQ(compiled.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_NE(compiled.message.find("capi_ffi_never_registered"), std::string::npos) << compiled.message;
}

}  // namespace
}  // namespace stablert::capi_test
