// Compiling against a topology (PJRT_Compile) and the topology's memory queries: an
// executable compiled without a client loads on a client and computes; bad input fails
// with errors naming the function.
#include <algorithm>
#include <vector>

#include "base/proto_wire.h"
#include "compile_options.h"
#include "program_fixture.h"

namespace stablert::capi_test {
namespace {

class TopologyCompileTest : public ProgramTest {
 protected:
  PJRT_TopologyDescription* StandaloneTopology(int64_t devices) {
    PJRT_NamedValue count = Int64Option("device_count", devices);
    PJRT_TopologyDescription_Create_Args args{};
    args.struct_size = PJRT_TopologyDescription_Create_Args_STRUCT_SIZE;
    args.create_options = &count;
    args.num_options = 1;
    EXPECT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Create(&args));
    return args.topology;
  }

  PJRT_TopologyDescription* ClientTopology() {
    PJRT_Client_TopologyDescription_Args args{};
    args.struct_size = PJRT_Client_TopologyDescription_Args_STRUCT_SIZE;
    args.client = client_;
    EXPECT_PJRT_OK(api_, api_->PJRT_Client_TopologyDescription(&args));
    return args.topology;
  }

  void DestroyTopology(PJRT_TopologyDescription* topology) {
    PJRT_TopologyDescription_Destroy_Args args{PJRT_TopologyDescription_Destroy_Args_STRUCT_SIZE, nullptr, topology};
    EXPECT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Destroy(&args));
  }

  ErrorInfo CompileFor(const PJRT_TopologyDescription* topology, const std::string& code, PJRT_Executable** out,
                       PJRT_Client* client = nullptr, const std::string& options = SingleDeviceOptions()) {
    PJRT_Program program{};
    program.struct_size = PJRT_Program_STRUCT_SIZE;
    program.code = const_cast<char*>(code.data());
    program.code_size = code.size();
    program.format = "mlir";
    program.format_size = 4;
    PJRT_Compile_Args args{};
    args.struct_size = PJRT_Compile_Args_STRUCT_SIZE;
    args.topology = topology;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    args.client = client;
    ErrorInfo info = TakeError(api_, api_->PJRT_Compile(&args));
    *out = info.failed ? nullptr : args.executable;
    return info;
  }

  PJRT_LoadedExecutable* Load(PJRT_Executable* executable) {
    PJRT_Client_Load_Args args{};
    args.struct_size = PJRT_Client_Load_Args_STRUCT_SIZE;
    args.client = client_;
    args.executable = executable;
    EXPECT_PJRT_OK(api_, api_->PJRT_Client_Load(&args));
    return args.loaded_executable;
  }

  void DestroyExecutable(PJRT_Executable* executable) {
    PJRT_Executable_Destroy_Args args{PJRT_Executable_Destroy_Args_STRUCT_SIZE, nullptr, executable};
    EXPECT_PJRT_OK(api_, api_->PJRT_Executable_Destroy(&args));
  }

  // Runs add_i32 loaded from `executable` on 1 + 2.
  int32_t AddOneAndTwo(PJRT_Executable* executable) {
    PJRT_LoadedExecutable* loaded = Load(executable);
    if (!loaded) return -1;
    PJRT_Device* device = Devices(client_)[0];
    int32_t one = 1, two = 2;
    PJRT_Buffer* x = ToDevice(&one, PJRT_Buffer_Type_S32, {}, device);
    PJRT_Buffer* y = ToDevice(&two, PJRT_Buffer_Type_S32, {}, device);
    std::vector<PJRT_Buffer*> outputs = Execute(loaded, {x, y}, 1);
    int32_t sum = -1;
    if (outputs.size() == 1) {
      std::vector<char> bytes = ToHost(outputs[0]);
      if (bytes.size() == sizeof(sum)) std::memcpy(&sum, bytes.data(), sizeof(sum));
      DestroyBuffer(outputs[0]);
    }
    DestroyBuffer(x);
    DestroyBuffer(y);
    Destroy(loaded);
    return sum;
  }
};

TEST_F(TopologyCompileTest, StandaloneTopologyCompilesAnExecutableThatLoadsAndRuns) {
  PJRT_TopologyDescription* topology = StandaloneTopology(2);
  ASSERT_NE(topology, nullptr);
  PJRT_Executable* executable = nullptr;
  ErrorInfo info = CompileFor(topology, Program("add_i32.1_17_0"), &executable);
  ASSERT_FALSE(info.failed) << info.message;
  PJRT_Executable_NumOutputs_Args outputs{};
  outputs.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
  outputs.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_NumOutputs(&outputs));
  EXPECT_EQ(outputs.num_outputs, 1u);
  // The topology may go before the executable compiled against it.
  DestroyTopology(topology);
  EXPECT_EQ(AddOneAndTwo(executable), 3);
  // A second compile against a new topology of the same shape gives the same fingerprint.
  PJRT_TopologyDescription* again = StandaloneTopology(2);
  PJRT_Executable* second = nullptr;
  ASSERT_FALSE(CompileFor(again, Program("add_i32.1_17_0"), &second).failed);
  auto fingerprint = [&](PJRT_Executable* e) {
    PJRT_Executable_Fingerprint_Args args{};
    args.struct_size = PJRT_Executable_Fingerprint_Args_STRUCT_SIZE;
    args.executable = e;
    EXPECT_PJRT_OK(api_, api_->PJRT_Executable_Fingerprint(&args));
    return std::string(args.executable_fingerprint, args.executable_fingerprint_size);
  };
  EXPECT_EQ(fingerprint(executable), fingerprint(second));
  DestroyExecutable(second);
  DestroyTopology(again);
  DestroyExecutable(executable);
}

TEST_F(TopologyCompileTest, ClientTopologyCompilesWithTheClient) {
  PJRT_Executable* executable = nullptr;
  ErrorInfo info = CompileFor(ClientTopology(), Program("add_i32.1_17_0"), &executable, client_);
  ASSERT_FALSE(info.failed) << info.message;
  EXPECT_EQ(AddOneAndTwo(executable), 3);
  DestroyExecutable(executable);
}

TEST_F(TopologyCompileTest, BadInputFailsNamingTheFunction) {
  PJRT_Executable* executable = nullptr;
  ErrorInfo info = CompileFor(nullptr, Program("add_i32.1_17_0"), &executable);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("PJRT_Compile"), std::string::npos) << info.message;

  PJRT_TopologyDescription* topology = StandaloneTopology(2);
  info = CompileFor(topology, "not a program", &executable);
  EXPECT_TRUE(info.failed);
  EXPECT_NE(info.message.find("PJRT_Compile"), std::string::npos) << info.message;

  // A device assignment naming a device the topology lacks.
  info = CompileFor(topology, Program("add_i32.1_17_0"), &executable, nullptr, SingleDeviceOptions(7));
  EXPECT_TRUE(info.failed);
  EXPECT_NE(info.message.find("PJRT_Compile"), std::string::npos) << info.message;

  // The fixture's client has one device; this topology has two.
  info = CompileFor(topology, Program("add_i32.1_17_0"), &executable, client_);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("devices"), std::string::npos) << info.message;

  PJRT_Compile_Args args{};
  args.struct_size = PJRT_Compile_Args_STRUCT_SIZE;
  args.topology = topology;
  info = TakeError(api_, api_->PJRT_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("program"), std::string::npos) << info.message;
  args.struct_size = 8;
  info = TakeError(api_, api_->PJRT_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyTopology(topology);
}

TEST_F(TopologyCompileTest, MemoryKindIdsAreTheDevicesMemoryKinds) {
  PJRT_TopologyDescription_GetMemorySpaceKindIds_Args args{};
  args.struct_size = PJRT_TopologyDescription_GetMemorySpaceKindIds_Args_STRUCT_SIZE;
  args.topology = ClientTopology();
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args));
  std::vector<int> topology_ids(args.memory_space_kind_ids, args.memory_space_kind_ids + args.num_memory_space_kind_ids);

  PJRT_Device_AddressableMemories_Args memories{};
  memories.struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE;
  memories.device = Devices(client_)[0];
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_AddressableMemories(&memories));
  std::vector<int> device_ids;
  for (size_t i = 0; i < memories.num_memories; ++i) {
    PJRT_Memory_Kind_Id_Args kind{};
    kind.struct_size = PJRT_Memory_Kind_Id_Args_STRUCT_SIZE;
    kind.memory = memories.memories[i];
    ASSERT_PJRT_OK(api_, api_->PJRT_Memory_Kind_Id(&kind));
    device_ids.push_back(kind.kind_id);
  }
  std::sort(device_ids.begin(), device_ids.end());
  EXPECT_EQ(topology_ids, device_ids);

  args.topology = nullptr;
  EXPECT_EQ(TakeError(api_, api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(TopologyCompileTest, CanonicalShapeIsDenseRowMajorInTheKindsMemorySpace) {
  const std::vector<int64_t> dims = {2, 3, 5};
  PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args args{};
  args.struct_size = PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args_STRUCT_SIZE;
  args.topology = ClientTopology();
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.element_type = PJRT_Buffer_Type_BF16;
  for (int kind : {0, 1}) {
    args.memory_space_kind_id = kind;
    ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args));
    ASSERT_NE(args.serialized_shape_deleter, nullptr);
    std::string bytes(args.serialized_shape, args.serialized_shape_size);
    args.serialized_shape_deleter(args.serialized_shape);
    int64_t element_type = 0, memory_space = 0;
    std::vector<int64_t> shape_dims, minor_to_major;
    proto::WireReader shape(bytes);
    while (!shape.done()) {
      auto field = shape.Next();
      ASSERT_TRUE(field.ok());
      if (field->number == 2) element_type = static_cast<int64_t>(field->varint);
      if (field->number == 3) ASSERT_TRUE(proto::WireReader::AppendPackedVarints(*field, &shape_dims).ok());
      if (field->number == 5) {
        proto::WireReader layout(field->bytes);
        while (!layout.done()) {
          auto inner = layout.Next();
          ASSERT_TRUE(inner.ok());
          if (inner->number == 1) ASSERT_TRUE(proto::WireReader::AppendPackedVarints(*inner, &minor_to_major).ok());
          if (inner->number == 8) memory_space = static_cast<int64_t>(inner->varint);
        }
      }
    }
    EXPECT_EQ(element_type, 16);  // xla.PrimitiveType BF16
    EXPECT_EQ(shape_dims, dims);
    EXPECT_EQ(minor_to_major, (std::vector<int64_t>{2, 1, 0}));
    EXPECT_EQ(memory_space, kind == 0 ? 0 : 5);
  }

  args.memory_space_kind_id = 9;
  ErrorInfo info = TakeError(api_, api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("memory_space_kind_id"), std::string::npos) << info.message;
  args.memory_space_kind_id = 0;
  const std::vector<int64_t> negative = {2, -1};
  args.dims = negative.data();
  args.num_dims = negative.size();
  info = TakeError(api_, api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("MakeCanonicalShapeForMemorySpace"), std::string::npos) << info.message;
}

}  // namespace
}  // namespace stablert::capi_test
