// Device memory around executions: once an execution's completion event is ready, the
// execution holds none of its arrays any more, so a caller that destroys the results finds
// their memory released at once (PJRT_Device_MemoryStats), and a loop that runs, reads and
// frees its results never has two generations of outputs alive.
#include <string>
#include <vector>

#include "compile_options.h"
#include "program_fixture.h"

namespace stablert::capi_test {
namespace {

// 4 MiB in, 4 MiB out: sizes the plugin keeps in its cache of released blocks.
constexpr char kDouble[] = R"(
module @double_it {
  func.func public @main(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
    %0 = stablehlo.add %x, %x : tensor<1048576xf32>
    return %0 : tensor<1048576xf32>
  }
}
)";

class ExecutionMemoryTest : public ProgramTest {
 protected:
  int64_t BytesInUse(PJRT_Device* device) {
    PJRT_Device_MemoryStats_Args args{};
    args.struct_size = PJRT_Device_MemoryStats_Args_STRUCT_SIZE;
    args.device = device;
    EXPECT_PJRT_OK(api_, api_->PJRT_Device_MemoryStats(&args));
    return args.bytes_in_use;
  }
};

TEST_F(ExecutionMemoryTest, ResultsDestroyedAfterCompletionAreReleasedAtOnce) {
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo compiled = Compile(kDouble, SingleDeviceOptions(), &executable);
  ASSERT_FALSE(compiled.failed) << compiled.message;
  PJRT_Device* device = Devices(client_)[0];
  std::vector<float> x(1 << 20, 1.5f);
  const int64_t before_input = BytesInUse(device);
  PJRT_Buffer* input = ToDevice(x.data(), PJRT_Buffer_Type_F32, {1 << 20}, device);
  ASSERT_NE(input, nullptr);
  const int64_t with_input = BytesInUse(device);
  EXPECT_EQ(with_input - before_input, int64_t{4} << 20);
  // Run and free many times: each time, the moment the results are destroyed, only the
  // input is left.
  for (int round = 0; round < 200; ++round) {
    std::vector<PJRT_Buffer*> out = Execute(executable, {input}, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(BytesInUse(device), with_input + (int64_t{4} << 20)) << "round " << round;
    DestroyBuffer(out[0]);
    ASSERT_EQ(BytesInUse(device), with_input) << "round " << round << ": the finished execution still holds its output";
  }
  DestroyBuffer(input);
  EXPECT_EQ(BytesInUse(device), before_input);
  Destroy(executable);
}

}  // namespace
}  // namespace stablert::capi_test
