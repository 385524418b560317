// Entry tokens at the executable's boundary: a `!stablehlo.token` result is a buffer of type
// TOKEN and rank 0 holding no bytes (as XLA's CPU client gives it), which the C API's buffer
// functions describe as such and which cannot be read to the host; a token parameter takes
// such a buffer, or the bool[0] array JAX passes for the tokens of ordered effects.
#include <string>
#include <utility>
#include <vector>

#include "compile_options.h"
#include "program_fixture.h"

namespace stablert::capi_test {
namespace {

constexpr char kTokenIdentity[] = R"(
module @token_identity {
  func.func public @main(%x: tensor<4xf32>, %t: !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) {
    %0 = stablehlo.add %x, %x : tensor<4xf32>
    %1 = stablehlo.after_all %t : !stablehlo.token
    return %0, %1 : tensor<4xf32>, !stablehlo.token
  }
}
)";

constexpr char kCreateToken[] = R"(
module @create_token {
  func.func public @main() -> !stablehlo.token {
    %0 = stablehlo.create_token : !stablehlo.token
    return %0 : !stablehlo.token
  }
}
)";

class TokenBufferTest : public ProgramTest {
 protected:
  PJRT_Buffer_Type ElementType(PJRT_Buffer* buffer) {
    PJRT_Buffer_ElementType_Args args{};
    args.struct_size = PJRT_Buffer_ElementType_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_ElementType(&args));
    return args.type;
  }
  std::vector<int64_t> Dims(PJRT_Buffer* buffer) {
    PJRT_Buffer_Dimensions_Args args{};
    args.struct_size = PJRT_Buffer_Dimensions_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_Dimensions(&args));
    return std::vector<int64_t>(args.dims, args.dims + args.num_dims);
  }
  size_t OnDeviceSize(PJRT_Buffer* buffer) {
    PJRT_Buffer_OnDeviceSizeInBytes_Args args{};
    args.struct_size = PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE;
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_OnDeviceSizeInBytes(&args));
    return args.on_device_size_in_bytes;
  }
  // The executable's output element types and ranks.
  std::pair<std::vector<PJRT_Buffer_Type>, std::vector<size_t>> OutputTypes(PJRT_LoadedExecutable* loaded) {
    PJRT_LoadedExecutable_GetExecutable_Args get{};
    get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
    get.loaded_executable = loaded;
    EXPECT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_GetExecutable(&get));
    PJRT_Executable_OutputElementTypes_Args types{};
    types.struct_size = PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE;
    types.executable = get.executable;
    EXPECT_PJRT_OK(api_, api_->PJRT_Executable_OutputElementTypes(&types));
    PJRT_Executable_OutputDimensions_Args dims{};
    dims.struct_size = PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE;
    dims.executable = get.executable;
    EXPECT_PJRT_OK(api_, api_->PJRT_Executable_OutputDimensions(&dims));
    std::pair<std::vector<PJRT_Buffer_Type>, std::vector<size_t>> out;
    out.first.assign(types.output_types, types.output_types + types.num_output_types);
    out.second.assign(dims.dim_sizes, dims.dim_sizes + dims.num_outputs);
    PJRT_Executable_Destroy_Args destroy{PJRT_Executable_Destroy_Args_STRUCT_SIZE, nullptr, get.executable};
    EXPECT_PJRT_OK(api_, api_->PJRT_Executable_Destroy(&destroy));
    return out;
  }
};

TEST_F(TokenBufferTest, TokenResultsAreTokenBuffersThatFeedTokenParameters) {
  PJRT_LoadedExecutable* create = nullptr;
  ErrorInfo compiled = Compile(kCreateToken, SingleDeviceOptions(), &create);
  ASSERT_FALSE(compiled.failed) << compiled.message;
  PJRT_LoadedExecutable* identity = nullptr;
  compiled = Compile(kTokenIdentity, SingleDeviceOptions(), &identity);
  ASSERT_FALSE(compiled.failed) << compiled.message;
  auto [types, ranks] = OutputTypes(identity);
  EXPECT_EQ(types, (std::vector<PJRT_Buffer_Type>{PJRT_Buffer_Type_F32, PJRT_Buffer_Type_TOKEN}));
  EXPECT_EQ(ranks, (std::vector<size_t>{1, 0}));

  std::vector<PJRT_Buffer*> token = Execute(create, {}, 1);
  ASSERT_EQ(token.size(), 1u);
  EXPECT_EQ(ElementType(token[0]), PJRT_Buffer_Type_TOKEN);
  EXPECT_TRUE(Dims(token[0]).empty());
  EXPECT_EQ(OnDeviceSize(token[0]), 0u);
  // Reading a token to the host is an error naming the function, both the size query and the copy.
  PJRT_Buffer_ToHostBuffer_Args to_host{};
  to_host.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  to_host.src = token[0];
  ErrorInfo error = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&to_host));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error.message;
  EXPECT_NE(error.message.find("PJRT_Buffer_ToHostBuffer: the buffer is a token"), std::string::npos)
      << error.message;

  // The token goes back in; so does a bool[0] array (what JAX passes for effect tokens).
  const float x[4] = {1, -2, 3.5f, 0};
  PJRT_Buffer* input = ToDevice(x, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  PJRT_Buffer* empty_bool = ToDevice(nullptr, PJRT_Buffer_Type_PRED, {0}, Devices(client_)[0]);
  for (PJRT_Buffer* t : {token[0], empty_bool}) {
    std::vector<PJRT_Buffer*> out = Execute(identity, {input, t}, 2);
    ASSERT_EQ(out.size(), 2u);
    std::vector<char> doubled = ToHost(out[0]);
    ASSERT_EQ(doubled.size(), 16u);
    const float* values = reinterpret_cast<const float*>(doubled.data());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(values[i], 2 * x[i]);
    EXPECT_EQ(ElementType(out[1]), PJRT_Buffer_Type_TOKEN);
    EXPECT_TRUE(Dims(out[1]).empty());
    for (PJRT_Buffer* b : out) DestroyBuffer(b);
  }
  // A token where an array is expected is refused, naming the argument.
  ErrorInfo wrong;
  std::vector<PJRT_Buffer*> none = Execute(identity, {token[0], token[0]}, 2, &wrong);
  EXPECT_TRUE(wrong.failed);
  EXPECT_NE(wrong.message.find("argument 0"), std::string::npos) << wrong.message;
  for (PJRT_Buffer* b : {token[0], input, empty_bool}) DestroyBuffer(b);
  Destroy(create);
  Destroy(identity);
}

}  // namespace
}  // namespace stablert::capi_test
