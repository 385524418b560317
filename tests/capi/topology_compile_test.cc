// Compiling against a topology (PJRT_Compile) and the topology's memory queries: an
// executable compiled without a client loads on a client and computes; canonical shapes
// keep every dense dimension order a buffer can have; bad input fails with errors naming
// the function.
#include <algorithm>
#include <vector>

#include "base/proto_wire.h"
#include "compile_options.h"
#include "layout_helpers.h"
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

  // An xla.ShapeProto's fields as MakeCanonicalShapeForMemorySpace writes them.
  struct CanonicalShape {
    int64_t element_type = -1, memory_space = -1;
    std::vector<int64_t> dims, minor_to_major;
  };

  // Calls MakeCanonicalShapeForMemorySpace on the client's topology and parses its result
  // into `out`; returns the call's error.
  PJRT_Error* MakeCanonicalShape(int kind, const std::vector<int64_t>& dims, PJRT_Buffer_Type type,
                                 const PJRT_Buffer_MemoryLayout* layout, CanonicalShape* out) {
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args args{};
    args.struct_size = PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args_STRUCT_SIZE;
    args.topology = ClientTopology();
    args.memory_space_kind_id = kind;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.element_type = type;
    args.layout = layout;
    if (PJRT_Error* error = api_->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args)) return error;
    EXPECT_NE(args.serialized_shape_deleter, nullptr);
    std::string bytes(args.serialized_shape, args.serialized_shape_size);
    args.serialized_shape_deleter(args.serialized_shape);
    *out = CanonicalShape{.element_type = -1, .memory_space = 0};
    proto::WireReader shape(bytes);
    while (!shape.done()) {
      auto field = shape.Next();
      EXPECT_TRUE(field.ok());
      if (!field.ok()) break;
      if (field->number == 2) out->element_type = static_cast<int64_t>(field->varint);
      if (field->number == 3) {
        EXPECT_TRUE(proto::WireReader::AppendPackedVarints(*field, &out->dims).ok());
      }
      if (field->number != 5) continue;
      proto::WireReader layout_fields(field->bytes);
      while (!layout_fields.done()) {
        auto inner = layout_fields.Next();
        EXPECT_TRUE(inner.ok());
        if (!inner.ok()) break;
        if (inner->number == 1) {
          EXPECT_TRUE(proto::WireReader::AppendPackedVarints(*inner, &out->minor_to_major).ok());
        }
        if (inner->number == 8) out->memory_space = static_cast<int64_t>(inner->varint);
      }
    }
    return nullptr;
  }

  // The first memory of kind `kind` addressable by the client's first device.
  PJRT_Memory* MemoryOfKind(int kind) {
    PJRT_Device_AddressableMemories_Args memories{};
    memories.struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE;
    memories.device = Devices(client_)[0];
    EXPECT_PJRT_OK(api_, api_->PJRT_Device_AddressableMemories(&memories));
    for (size_t i = 0; i < memories.num_memories; ++i) {
      PJRT_Memory_Kind_Id_Args id{};
      id.struct_size = PJRT_Memory_Kind_Id_Args_STRUCT_SIZE;
      id.memory = memories.memories[i];
      EXPECT_PJRT_OK(api_, api_->PJRT_Memory_Kind_Id(&id));
      if (id.kind_id == kind) return memories.memories[i];
    }
    return nullptr;
  }

  // "{0,2,1}", as the Layouts extension serializes a minor_to_major order.
  static std::string LayoutText(const std::vector<int64_t>& minor_to_major) {
    std::string text = "{";
    for (size_t i = 0; i < minor_to_major.size(); ++i) text += (i ? "," : "") + std::to_string(minor_to_major[i]);
    return text + "}";
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
  for (int kind : {0, 1, 2}) {
    CanonicalShape shape;
    ASSERT_PJRT_OK(api_, MakeCanonicalShape(kind, dims, PJRT_Buffer_Type_BF16, nullptr, &shape));
    EXPECT_EQ(shape.element_type, 16);  // xla.PrimitiveType BF16
    EXPECT_EQ(shape.dims, dims);
    EXPECT_EQ(shape.minor_to_major, (std::vector<int64_t>{2, 1, 0}));
    EXPECT_EQ(shape.memory_space, kind == 0 ? 0 : 5);
  }

  CanonicalShape shape;
  ErrorInfo info = TakeError(api_, MakeCanonicalShape(9, dims, PJRT_Buffer_Type_BF16, nullptr, &shape));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("memory_space_kind_id"), std::string::npos) << info.message;
  info = TakeError(api_, MakeCanonicalShape(0, {2, -1}, PJRT_Buffer_Type_BF16, nullptr, &shape));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("MakeCanonicalShapeForMemorySpace"), std::string::npos) << info.message;
}

// Every dense dimension order a StableRT buffer can have, in every memory kind, is the
// canonical shape's layout, and a buffer made with that layout reports the same one.
TEST_F(TopologyCompileTest, CanonicalShapeKeepsEveryDenseDimensionOrder) {
  const std::vector<int64_t> dims = {2, 3, 5};
  const std::vector<std::vector<int64_t>> orders = {{2, 1, 0}, {0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}};
  for (int kind : {0, 1, 2}) {
    PJRT_Memory* memory = MemoryOfKind(kind);
    ASSERT_NE(memory, nullptr) << kind;
    for (const std::vector<int64_t>& minor_to_major : orders) {
      PJRT_Buffer_MemoryLayout layout = TiledLayout(minor_to_major);
      CanonicalShape shape;
      ASSERT_PJRT_OK(api_, MakeCanonicalShape(kind, dims, PJRT_Buffer_Type_F32, &layout, &shape));
      EXPECT_EQ(shape.element_type, 11);  // xla.PrimitiveType F32
      EXPECT_EQ(shape.dims, dims);
      EXPECT_EQ(shape.minor_to_major, minor_to_major);
      EXPECT_EQ(shape.memory_space, kind == 0 ? 0 : 5);

      PJRT_Client_CreateUninitializedBuffer_Args create{};
      create.struct_size = PJRT_Client_CreateUninitializedBuffer_Args_STRUCT_SIZE;
      create.client = client_;
      create.shape_dims = dims.data();
      create.shape_num_dims = dims.size();
      create.shape_element_type = PJRT_Buffer_Type_F32;
      create.shape_layout = &layout;
      create.memory = memory;
      ASSERT_PJRT_OK(api_, api_->PJRT_Client_CreateUninitializedBuffer(&create));
      EXPECT_EQ(BufferLayoutText(api_, create.buffer), LayoutText(shape.minor_to_major));
      DestroyBuffer(create.buffer);
    }
  }

  // The byte strides of a dense column-major array are the layout {0,1,2}.
  const std::vector<int64_t> column_strides = {4, 8, 24};
  PJRT_Buffer_MemoryLayout strides = StridesLayout(column_strides);
  CanonicalShape shape;
  ASSERT_PJRT_OK(api_, MakeCanonicalShape(1, dims, PJRT_Buffer_Type_F32, &strides, &shape));
  EXPECT_EQ(shape.minor_to_major, (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(TopologyCompileTest, CanonicalShapeRefusesTilesAndMalformedLayoutsNamingTheFunction) {
  const std::vector<int64_t> dims = {16, 256};
  const std::vector<int64_t> row = {1, 0};
  OneTileLayout tiled(row);
  CanonicalShape shape;
  ErrorInfo info = TakeError(api_, MakeCanonicalShape(0, dims, PJRT_Buffer_Type_F32, &tiled.layout, &shape));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED) << info.message;
  EXPECT_NE(info.message.find("PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace: tiled memory layouts are "
                              "not supported"),
            std::string::npos)
      << info.message;
  EXPECT_NE(info.message.find("expected a Tiled layout without tiles"), std::string::npos) << info.message;

  const std::vector<int64_t> repeated = {0, 0};
  PJRT_Buffer_MemoryLayout bad = TiledLayout(repeated);
  info = TakeError(api_, MakeCanonicalShape(0, dims, PJRT_Buffer_Type_F32, &bad, &shape));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << info.message;
  EXPECT_NE(info.message.find("PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace: minor_to_major is not a "
                              "permutation"),
            std::string::npos)
      << info.message;
  const std::vector<int64_t> short_order = {0};
  PJRT_Buffer_MemoryLayout rank_one = TiledLayout(short_order);
  info = TakeError(api_, MakeCanonicalShape(0, dims, PJRT_Buffer_Type_F32, &rank_one, &shape));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << info.message;
  EXPECT_NE(info.message.find("minor_to_major has 1 entries for rank 2"), std::string::npos) << info.message;

  // Strides with gaps are not a dense array in any order.
  const std::vector<int64_t> padded = {2048, 4};
  PJRT_Buffer_MemoryLayout strides = StridesLayout(padded);
  info = TakeError(api_, MakeCanonicalShape(0, dims, PJRT_Buffer_Type_F32, &strides, &shape));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED) << info.message;
  EXPECT_NE(info.message.find("PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace"), std::string::npos)
      << info.message;
}

}  // namespace
}  // namespace stablert::capi_test
