// Compilation and execution through the C API: a real StableHLO artifact end to end,
// executable metadata, serialization, and every kind of bad input failing cleanly.
#include <map>
#include <random>

#include "base/proto_wire.h"
#include "compile_options.h"
#include "program_fixture.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"

namespace stablert::capi_test {
namespace {

using CompileApiTest = ProgramTest;

TEST_F(CompileApiTest, AddsTwoIntegers) {
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo info = Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable);
  ASSERT_FALSE(info.failed) << info.message;
  PJRT_Device* device = Devices(client_)[0];
  int32_t one = 1, two = 2;
  PJRT_Buffer* x = ToDevice(&one, PJRT_Buffer_Type_S32, {}, device);
  PJRT_Buffer* y = ToDevice(&two, PJRT_Buffer_Type_S32, {}, device);
  std::vector<PJRT_Buffer*> outputs = Execute(executable, {x, y}, 1);
  ASSERT_EQ(outputs.size(), 1u);
  std::vector<char> result = ToHost(outputs[0]);
  ASSERT_EQ(result.size(), 4u);
  int32_t sum;
  std::memcpy(&sum, result.data(), 4);
  EXPECT_EQ(sum, 3);
  for (PJRT_Buffer* buffer : {x, y, outputs[0]}) DestroyBuffer(buffer);
  Destroy(executable);
}

TEST_F(CompileApiTest, ExecutableMetadataAndSerializationRoundTrip) {
  PJRT_LoadedExecutable* loaded = nullptr;
  std::string options = SingleDeviceOptions();
  ASSERT_FALSE(Compile(Program("mul_const.1_17_0"), options, &loaded).failed);
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = loaded;
  ASSERT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_GetExecutable(&get));
  PJRT_Executable* executable = get.executable;

  // Cost analysis: flops, transcendentals and bytes accessed as floats, owned by the
  // executable and the same on every call (plan/cost_analysis.h).
  PJRT_Executable_GetCostAnalysis_Args cost{};
  cost.struct_size = PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE;
  cost.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_GetCostAnalysis(&cost));
  ASSERT_EQ(cost.num_properties, 3u);
  std::map<std::string, float> properties;
  for (size_t i = 0; i < cost.num_properties; ++i) {
    ASSERT_EQ(cost.properties[i].type, PJRT_NamedValue_kFloat);
    properties[std::string(cost.properties[i].name, cost.properties[i].name_size)] = cost.properties[i].float_value;
  }
  EXPECT_EQ(properties["flops"], 4.0f);  // one multiply per element of f32[4]
  EXPECT_EQ(properties["transcendentals"], 0.0f);
  EXPECT_GE(properties["bytes accessed"], 32.0f);
  const PJRT_NamedValue* first = cost.properties;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_GetCostAnalysis(&cost));
  EXPECT_EQ(cost.properties, first);

  PJRT_Executable_NumOutputs_Args outputs{};
  outputs.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
  outputs.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_NumOutputs(&outputs));
  EXPECT_EQ(outputs.num_outputs, 1u);
  PJRT_Executable_OutputElementTypes_Args types{};
  types.struct_size = PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE;
  types.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_OutputElementTypes(&types));
  ASSERT_EQ(types.num_output_types, 1u);
  EXPECT_EQ(types.output_types[0], PJRT_Buffer_Type_F32);
  PJRT_Executable_OutputDimensions_Args dims{};
  dims.struct_size = PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE;
  dims.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_OutputDimensions(&dims));
  ASSERT_EQ(dims.num_outputs, 1u);
  ASSERT_EQ(dims.dim_sizes[0], 1u);
  EXPECT_EQ(dims.dims[0], 4);
  PJRT_Executable_OutputMemoryKinds_Args kinds{};
  kinds.struct_size = PJRT_Executable_OutputMemoryKinds_Args_STRUCT_SIZE;
  kinds.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_OutputMemoryKinds(&kinds));
  ASSERT_EQ(kinds.num_outputs, 1u);
  EXPECT_EQ(std::string(kinds.memory_kinds[0], kinds.memory_kind_sizes[0]), "device");
  PJRT_Executable_Name_Args name{};
  name.struct_size = PJRT_Executable_Name_Args_STRUCT_SIZE;
  name.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_Name(&name));
  EXPECT_EQ(std::string(name.executable_name, name.executable_name_size).rfind("jit_", 0), 0u);
  PJRT_Executable_NumPartitions_Args partitions{};
  partitions.struct_size = PJRT_Executable_NumPartitions_Args_STRUCT_SIZE;
  partitions.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_NumPartitions(&partitions));
  EXPECT_EQ(partitions.num_partitions, 1);
  PJRT_Executable_Fingerprint_Args fingerprint{};
  fingerprint.struct_size = PJRT_Executable_Fingerprint_Args_STRUCT_SIZE;
  fingerprint.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_Fingerprint(&fingerprint));
  EXPECT_GT(fingerprint.executable_fingerprint_size, 0u);

  PJRT_Executable_GetCompileOptions_Args compile_options{};
  compile_options.struct_size = PJRT_Executable_GetCompileOptions_Args_STRUCT_SIZE;
  compile_options.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_GetCompileOptions(&compile_options));
  EXPECT_EQ(std::string(compile_options.serialized_bytes, compile_options.serialized_bytes_size), options);
  compile_options.serialized_compile_options_deleter(compile_options.serialized_compile_options);

  PJRT_LoadedExecutable_GetDeviceAssignment_Args assignment{};
  assignment.struct_size = PJRT_LoadedExecutable_GetDeviceAssignment_Args_STRUCT_SIZE;
  assignment.executable = loaded;
  ASSERT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_GetDeviceAssignment(&assignment));
  // replica_count 1, computation_count 1, computation_devices {replica_device_ids: 0}
  EXPECT_EQ(std::string(assignment.serialized_bytes, assignment.serialized_bytes_size),
            std::string("\x08\x01\x10\x01\x1a\x02\x08\x00", 8));
  assignment.serialized_device_assignment_deleter(assignment.serialized_device_assignment);

  PJRT_LogicalDeviceIds ids[1] = {{-1, -1}};
  PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args logical{};
  logical.struct_size = PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args_STRUCT_SIZE;
  logical.executable = loaded;
  logical.addressable_device_logical_ids = ids;
  logical.num_addressable_device_logical_ids = 1;
  ASSERT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&logical));
  EXPECT_EQ(ids[0].replica, 0);
  EXPECT_EQ(ids[0].partition, 0);

  PJRT_Executable_Serialize_Args serialize{};
  serialize.struct_size = PJRT_Executable_Serialize_Args_STRUCT_SIZE;
  serialize.executable = executable;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_Serialize(&serialize));
  PJRT_Executable_DeserializeAndLoad_Args deserialize{};
  deserialize.struct_size = PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE;
  deserialize.client = client_;
  deserialize.serialized_executable = serialize.serialized_bytes;
  deserialize.serialized_executable_size = serialize.serialized_bytes_size;
  ASSERT_PJRT_OK(api_, api_->PJRT_Executable_DeserializeAndLoad(&deserialize));
  serialize.serialized_executable_deleter(serialize.serialized_executable);

  float host[4] = {1.5f, -2.0f, 0.0f, 1e30f};
  PJRT_Buffer* x = ToDevice(host, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  for (PJRT_LoadedExecutable* run : {loaded, deserialize.loaded_executable}) {
    std::vector<PJRT_Buffer*> out = Execute(run, {x}, 1);
    ASSERT_EQ(out.size(), 1u);
    std::vector<char> bytes = ToHost(out[0]);
    const float* doubled = reinterpret_cast<const float*>(bytes.data());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(doubled[i], host[i] * 2) << i;
    DestroyBuffer(out[0]);
  }
  DestroyBuffer(x);
  PJRT_Executable_Destroy_Args destroy{PJRT_Executable_Destroy_Args_STRUCT_SIZE, nullptr, executable};
  EXPECT_PJRT_OK(api_, api_->PJRT_Executable_Destroy(&destroy));
  Destroy(deserialize.loaded_executable);
  Destroy(loaded);
}

// The Layouts extension: dense row-major layouts for executables, buffers and defaults,
// serialized in XLA's text form; bad arguments are errors.
TEST_F(CompileApiTest, LayoutsExtensionAnswersRowMajorLayouts) {
  const PJRT_Layouts_Extension* layouts = nullptr;
  for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next)
    if (e->type == PJRT_Extension_Type_Layouts) layouts = reinterpret_cast<const PJRT_Layouts_Extension*>(e);
  ASSERT_NE(layouts, nullptr);
  auto text = [&](PJRT_Layouts_MemoryLayout* layout) {
    PJRT_Layouts_MemoryLayout_Serialize_Args args{};
    args.struct_size = PJRT_Layouts_MemoryLayout_Serialize_Args_STRUCT_SIZE;
    args.layout = layout;
    EXPECT_PJRT_OK(api_, layouts->PJRT_Layouts_MemoryLayout_Serialize(&args));
    std::string serialized(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_layout_deleter(args.serialized_layout);
    return serialized;
  };
  auto destroy = [&](PJRT_Layouts_MemoryLayout* layout) {
    PJRT_Layouts_MemoryLayout_Destroy_Args args{PJRT_Layouts_MemoryLayout_Destroy_Args_STRUCT_SIZE, nullptr, layout};
    EXPECT_PJRT_OK(api_, layouts->PJRT_Layouts_MemoryLayout_Destroy(&args));
  };

  PJRT_LoadedExecutable* loaded = nullptr;
  ASSERT_FALSE(Compile(Program("mul_const.1_17_0"), SingleDeviceOptions(), &loaded).failed);
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = loaded;
  ASSERT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_GetExecutable(&get));
  PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args parameters{};
  parameters.struct_size = PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args_STRUCT_SIZE;
  parameters.executable = get.executable;
  ASSERT_PJRT_OK(api_, layouts->PJRT_Layouts_PJRT_Executable_GetParameterLayouts(&parameters));
  ASSERT_EQ(parameters.num_parameters, 1u);
  EXPECT_EQ(text(parameters.layouts[0]), "{0}");  // f32[4]
  PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args outputs{};
  outputs.struct_size = PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args_STRUCT_SIZE;
  outputs.executable = get.executable;
  ASSERT_PJRT_OK(api_, layouts->PJRT_Layouts_PJRT_Executable_GetOutputLayouts(&outputs));
  ASSERT_EQ(outputs.num_outputs, 1u);
  EXPECT_EQ(text(outputs.layouts[0]), "{0}");

  const int64_t dims[] = {2, 3, 5};
  PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args client_default{};
  client_default.struct_size = PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args_STRUCT_SIZE;
  client_default.client = client_;
  client_default.type = PJRT_Buffer_Type_F32;
  client_default.dims = dims;
  client_default.num_dims = 3;
  ASSERT_PJRT_OK(api_, layouts->PJRT_Layouts_PJRT_Client_GetDefaultLayout(&client_default));
  EXPECT_EQ(text(client_default.layout), "{2,1,0}");
  destroy(client_default.layout);
  client_default.type = static_cast<PJRT_Buffer_Type>(9999);
  ErrorInfo bad_type = TakeError(api_, layouts->PJRT_Layouts_PJRT_Client_GetDefaultLayout(&client_default));
  EXPECT_EQ(bad_type.code, PJRT_Error_Code_INVALID_ARGUMENT) << bad_type.message;

  float scalar = 1.5f;
  PJRT_Buffer* buffer = ToDevice(&scalar, PJRT_Buffer_Type_F32, {}, Devices(client_)[0]);
  PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args of_buffer{};
  of_buffer.struct_size = PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args_STRUCT_SIZE;
  of_buffer.buffer = buffer;
  ASSERT_PJRT_OK(api_, layouts->PJRT_Layouts_PJRT_Buffer_MemoryLayout(&of_buffer));
  EXPECT_EQ(text(of_buffer.layout), "{}");
  destroy(of_buffer.layout);
  destroy(nullptr);  // allowed

  of_buffer.buffer = nullptr;
  ErrorInfo null_buffer = TakeError(api_, layouts->PJRT_Layouts_PJRT_Buffer_MemoryLayout(&of_buffer));
  EXPECT_EQ(null_buffer.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(null_buffer.message.find("PJRT_Layouts_PJRT_Buffer_MemoryLayout"), std::string::npos);
  parameters.struct_size = 8;
  ErrorInfo short_args = TakeError(api_, layouts->PJRT_Layouts_PJRT_Executable_GetParameterLayouts(&parameters));
  EXPECT_EQ(short_args.code, PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyBuffer(buffer);
  PJRT_Executable_Destroy_Args destroy_executable{PJRT_Executable_Destroy_Args_STRUCT_SIZE, nullptr, get.executable};
  EXPECT_PJRT_OK(api_, api_->PJRT_Executable_Destroy(&destroy_executable));
  Destroy(loaded);
}

TEST_F(CompileApiTest, WrongArgumentsAreRejectedBeforeRunning) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("mul_const.1_17_0"), SingleDeviceOptions(), &executable).failed);
  int32_t host[4] = {};
  PJRT_Buffer* wrong_type = ToDevice(host, PJRT_Buffer_Type_S32, {4}, Devices(client_)[0]);
  ErrorInfo error;
  Execute(executable, {wrong_type}, 1, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("expected f32[4]"), std::string::npos) << error.message;
  Execute(executable, {}, 1, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_NE(error.message.find("takes 1 arguments, got 0"), std::string::npos) << error.message;
  // A program with results needs somewhere to put them.
  PJRT_Buffer* argument = ToDevice(host, PJRT_Buffer_Type_F32, {4}, Devices(client_)[0]);
  PJRT_Buffer* const* argument_list = &argument;
  PJRT_LoadedExecutable_Execute_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  args.executable = executable;
  args.argument_lists = &argument_list;
  args.num_devices = 1;
  args.num_args = 1;
  error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_LoadedExecutable_Execute: output_lists is null"), std::string::npos)
      << error.message;
  DestroyBuffer(argument);
  DestroyBuffer(wrong_type);
  Destroy(executable);
}

TEST_F(CompileApiTest, DonatedArgumentsAreConsumedUnlessListedAsNonDonatable) {
  // main(%0 {tf.aliasing_output = 0}, %1) -> (%0 + %1, %0 * %1). The product is computed
  // last: it, not the sum, may be written into the donated %0 (plan/donation.h).
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("donated_add.1_17_0"), SingleDeviceOptions(), &executable).failed);
  PJRT_Device* device = Devices(client_)[0];
  float a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  for (bool allow_donation : {true, false}) {
    PJRT_Buffer* x = ToDevice(a, PJRT_Buffer_Type_F32, {3}, device);
    PJRT_Buffer* y = ToDevice(b, PJRT_Buffer_Type_F32, {3}, device);
    auto pointer = [&](PJRT_Buffer* buffer) {
      PJRT_Buffer_UnsafePointer_Args args{};
      args.struct_size = PJRT_Buffer_UnsafePointer_Args_STRUCT_SIZE;
      args.buffer = buffer;
      EXPECT_PJRT_OK(api_, api_->PJRT_Buffer_UnsafePointer(&args));
      return args.buffer_pointer;
    };
    const uintptr_t x_bytes = pointer(x);
    std::vector<PJRT_Buffer*> outputs(2);
    PJRT_Buffer* arguments[2] = {x, y};
    PJRT_Buffer* const* argument_list = arguments;
    PJRT_Buffer** output_list = outputs.data();
    int64_t keep[1] = {0};
    PJRT_ExecuteOptions options{};
    options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
    options.non_donatable_input_indices = allow_donation ? nullptr : keep;
    options.num_non_donatable_input_indices = allow_donation ? 0 : 1;
    PJRT_LoadedExecutable_Execute_Args args{};
    args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
    args.executable = executable;
    args.options = &options;
    args.argument_lists = &argument_list;
    args.num_devices = 1;
    args.num_args = 2;
    args.output_lists = &output_list;
    ASSERT_PJRT_OK(api_, api_->PJRT_LoadedExecutable_Execute(&args));
    for (PJRT_Buffer* input : {x, y}) {
      PJRT_Buffer_IsDeleted_Args deleted{};
      deleted.struct_size = PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE;
      deleted.buffer = input;
      ASSERT_PJRT_OK(api_, api_->PJRT_Buffer_IsDeleted(&deleted));
      EXPECT_EQ(deleted.is_deleted, allow_donation && input == x);
    }
    // A donated %0 becomes the product's storage; a kept one is left alone.
    EXPECT_EQ(pointer(outputs[1]) == x_bytes, allow_donation);
    EXPECT_NE(pointer(outputs[0]), x_bytes);
    if (!allow_donation) {
      std::vector<char> kept = ToHost(x);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(reinterpret_cast<const float*>(kept.data())[i], a[i]);
    }
    std::vector<char> sum = ToHost(outputs[0]), product = ToHost(outputs[1]);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(reinterpret_cast<const float*>(sum.data())[i], a[i] + b[i]);
      EXPECT_EQ(reinterpret_cast<const float*>(product.data())[i], a[i] * b[i]);
    }
    for (PJRT_Buffer* buffer : {x, y, outputs[0], outputs[1]}) DestroyBuffer(buffer);
  }
  Destroy(executable);
}

// Execute checks every handle against the executable's client and devices before reading
// the lists any further: buffers and execute_device of another client, arguments on
// another device than the one their list runs on, and lists longer than the executable's.
TEST_F(CompileApiTest, ExecuteRejectsHandlesOfAnotherClient) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable).failed);
  PJRT_Client* other = CreateClient({});
  ASSERT_NE(other, nullptr);
  int32_t one = 1;
  PJRT_Buffer* local = ToDevice(&one, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  std::swap(client_, other);
  PJRT_Buffer* foreign = ToDevice(&one, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  PJRT_Device* foreign_device = Devices(client_)[0];
  std::swap(client_, other);

  ErrorInfo error;
  Execute(executable, {local, foreign}, 1, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_LoadedExecutable_Execute: argument 1 of argument list 0 belongs to another client"),
            std::string::npos)
      << error.message;

  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer* arguments[2] = {local, local};
  PJRT_Buffer* const* argument_list = arguments;
  PJRT_Buffer** output_list = outputs;
  PJRT_LoadedExecutable_Execute_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  args.executable = executable;
  args.argument_lists = &argument_list;
  args.num_devices = 1;
  args.num_args = 2;
  args.output_lists = &output_list;
  args.execute_device = foreign_device;
  error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_LoadedExecutable_Execute: execute_device belongs to another client"),
            std::string::npos)
      << error.message;
  EXPECT_EQ(outputs[0], nullptr);
  DestroyBuffer(local);
  DestroyBuffer(foreign);
  Destroy(executable);
  DestroyClient(other);
}

TEST_F(CompileApiTest, ExecuteRejectsArgumentsOnAnotherDevice) {
  PJRT_Client* two = CreateClient({Int64Option("device_count", 2)});
  ASSERT_NE(two, nullptr);
  std::swap(client_, two);
  auto devices = Devices(client_);
  ASSERT_EQ(devices.size(), 2u);
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(0), &executable).failed);
  int32_t one = 1;
  PJRT_Buffer* on0 = ToDevice(&one, PJRT_Buffer_Type_S32, {}, devices[0]);
  PJRT_Buffer* on1 = ToDevice(&one, PJRT_Buffer_Type_S32, {}, devices[1]);
  ErrorInfo error;
  Execute(executable, {on0, on1}, 1, &error);
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("argument 1"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("is on device 1"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("runs on device 0"), std::string::npos) << error.message;
  // Both on the right device runs.
  std::vector<PJRT_Buffer*> outputs = Execute(executable, {on0, on0}, 1);
  ASSERT_EQ(outputs.size(), 1u);
  DestroyBuffer(outputs[0]);
  for (PJRT_Buffer* buffer : {on0, on1}) DestroyBuffer(buffer);
  Destroy(executable);
  std::swap(client_, two);
  DestroyClient(two);
}

TEST_F(CompileApiTest, ExecuteRejectsListCountsBeforeReadingThem) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable).failed);
  int32_t one = 1;
  PJRT_Buffer* x = ToDevice(&one, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  // Lists the plugin must not read: a second list of garbage and a third argument.
  PJRT_Buffer* arguments[3] = {x, x, reinterpret_cast<PJRT_Buffer*>(uintptr_t{16})};
  PJRT_Buffer* const* argument_lists[2] = {arguments, reinterpret_cast<PJRT_Buffer* const*>(uintptr_t{16})};
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_lists[2] = {outputs, reinterpret_cast<PJRT_Buffer**>(uintptr_t{16})};
  PJRT_LoadedExecutable_Execute_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  args.executable = executable;
  args.argument_lists = argument_lists;
  args.num_devices = 2;
  args.num_args = 2;
  args.output_lists = output_lists;
  ErrorInfo error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("2 argument lists"), std::string::npos) << error.message;
  args.num_devices = 1;
  args.num_args = 3;
  error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("takes 2 arguments, got 3"), std::string::npos) << error.message;
  DestroyBuffer(x);
  Destroy(executable);
}

TEST_F(CompileApiTest, GarbageCompileOptionsAreInvalidArgument) {
  ErrorInfo info = Compile(Program("add_i32.1_17_0"), "\xff\xff\xff\xff garbage options", nullptr);
  ASSERT_TRUE(info.failed);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("failed to deserialize CompileOptionsProto"), std::string::npos) << info.message;
}

TEST_F(CompileApiTest, UnknownProgramFormatIsInvalidArgument) {
  ErrorInfo info = Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), nullptr, "invalid");
  ASSERT_TRUE(info.failed);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message, "Unknown program format 'invalid'.");
}

TEST_F(CompileApiTest, RandomBytesAreInvalidArgument) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::string code(rng() % 512, '\0');
    for (char& c : code) c = static_cast<char>(rng());
    if (trial % 2) code.replace(0, std::min<size_t>(4, code.size()), std::string("ML\xEFR", 4));
    ErrorInfo info = Compile(code, SingleDeviceOptions(), nullptr);
    ASSERT_TRUE(info.failed) << "trial " << trial;
    EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << info.message;
    EXPECT_FALSE(info.message.empty());
  }
}

TEST_F(CompileApiTest, EveryTruncationOfARealProgramIsInvalidArgument) {
  std::string program = Program("mul_const.1_17_0");
  ASSERT_GT(program.size(), 16u);
  for (size_t length = 0; length < program.size(); ++length) {
    ErrorInfo info = Compile(program.substr(0, length), SingleDeviceOptions(), nullptr);
    ASSERT_TRUE(info.failed) << "a prefix of " << length << " bytes compiled";
    EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << length << ": " << info.message;
  }
}

}  // namespace
}  // namespace stablert::capi_test
