// Clients, devices, memories and topology through the C API.
#include <set>

#include "plugin_fixture.h"

namespace stablert::capi_test {
namespace {

using ClientApiTest = ClientTest;

TEST_F(ClientApiTest, PlatformNameAndVersion) {
  PJRT_Client_PlatformName_Args name{};
  name.struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE;
  name.client = client_;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_PlatformName(&name));
  EXPECT_EQ(std::string(name.platform_name, name.platform_name_size), "stablert");
  PJRT_Client_PlatformVersion_Args version{};
  version.struct_size = PJRT_Client_PlatformVersion_Args_STRUCT_SIZE;
  version.client = client_;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_PlatformVersion(&version));
  EXPECT_GT(version.platform_version_size, 0u);
  PJRT_Client_ProcessIndex_Args index{};
  index.struct_size = PJRT_Client_ProcessIndex_Args_STRUCT_SIZE;
  index.client = client_;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_ProcessIndex(&index));
  EXPECT_EQ(index.process_index, 0);
}

TEST_F(ClientApiTest, OneDeviceByDefaultWithDescription) {
  auto devices = Devices(client_);
  ASSERT_EQ(devices.size(), 1u);
  PJRT_Device_GetDescription_Args get{};
  get.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
  get.device = devices[0];
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_GetDescription(&get));
  PJRT_DeviceDescription_Id_Args id{};
  id.struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE;
  id.device_description = get.device_description;
  ASSERT_PJRT_OK(api_, api_->PJRT_DeviceDescription_Id(&id));
  EXPECT_EQ(id.id, 0);
  PJRT_DeviceDescription_Attributes_Args attributes{};
  attributes.struct_size = PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE;
  attributes.device_description = get.device_description;
  ASSERT_PJRT_OK(api_, api_->PJRT_DeviceDescription_Attributes(&attributes));
  for (size_t i = 0; i < attributes.num_attributes; ++i) {
    // XLA's client accepts only string, int64 and int64-list device attributes.
    PJRT_NamedValue_Type type = attributes.attributes[i].type;
    EXPECT_TRUE(type == PJRT_NamedValue_kString || type == PJRT_NamedValue_kInt64 ||
                type == PJRT_NamedValue_kInt64List);
  }
  PJRT_Device_IsAddressable_Args addressable{};
  addressable.struct_size = PJRT_Device_IsAddressable_Args_STRUCT_SIZE;
  addressable.device = devices[0];
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_IsAddressable(&addressable));
  EXPECT_TRUE(addressable.is_addressable);
}

TEST_F(ClientApiTest, DeviceCountFromCreateOptionAndEnvironment) {
  PJRT_Client* four = CreateClient({Int64Option("device_count", 4)});
  ASSERT_NE(four, nullptr);
  auto devices = Devices(four);
  ASSERT_EQ(devices.size(), 4u);
  std::set<int> ids;
  for (PJRT_Device* device : devices) {
    PJRT_Device_LocalHardwareId_Args local{};
    local.struct_size = PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE;
    local.device = device;
    ASSERT_PJRT_OK(api_, api_->PJRT_Device_LocalHardwareId(&local));
    ids.insert(local.local_hardware_id);
  }
  EXPECT_EQ(ids, (std::set<int>{0, 1, 2, 3}));
  DestroyClient(four);

  setenv("STABLERT_DEVICE_COUNT", "3", 1);
  PJRT_Client* three = CreateClient({});
  unsetenv("STABLERT_DEVICE_COUNT");
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(Devices(three).size(), 3u);
  DestroyClient(three);
}

TEST_F(ClientApiTest, BadCreateOptionsAreRejectedByName) {
  std::vector<PJRT_NamedValue> options = {Int64Option("no_such_option", 1)};
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.create_options = options.data();
  args.num_options = options.size();
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_Create(&args));
  ASSERT_TRUE(info.failed);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("no_such_option"), std::string::npos) << info.message;

  options = {Int64Option("device_count", 0)};
  args.create_options = options.data();
  info = TakeError(api_, api_->PJRT_Client_Create(&args));
  ASSERT_TRUE(info.failed);
  EXPECT_NE(info.message.find("device_count"), std::string::npos) << info.message;

  setenv("STABLERT_DEVICE_COUNT", "lots", 1);
  args.num_options = 0;
  info = TakeError(api_, api_->PJRT_Client_Create(&args));
  unsetenv("STABLERT_DEVICE_COUNT");
  ASSERT_TRUE(info.failed);
  EXPECT_NE(info.message.find("STABLERT_DEVICE_COUNT"), std::string::npos) << info.message;
}

TEST_F(ClientApiTest, LookupDevice) {
  PJRT_Client_LookupDevice_Args args{};
  args.struct_size = PJRT_Client_LookupDevice_Args_STRUCT_SIZE;
  args.client = client_;
  args.id = 0;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_LookupDevice(&args));
  EXPECT_EQ(args.device, Devices(client_)[0]);
  for (int bad : {-1, 7}) {
    args.id = bad;
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_LookupDevice(&args));
    ASSERT_TRUE(info.failed);
    EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_EQ(info.message, "No matching device found for device_id " + std::to_string(bad));
  }
  PJRT_Client_LookupAddressableDevice_Args local{};
  local.struct_size = PJRT_Client_LookupAddressableDevice_Args_STRUCT_SIZE;
  local.client = client_;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_LookupAddressableDevice(&local));
  EXPECT_EQ(local.addressable_device, Devices(client_)[0]);
}

TEST_F(ClientApiTest, DefaultDeviceAssignment) {
  PJRT_Client* client = CreateClient({Int64Option("device_count", 8)});
  int assignment[8] = {};
  PJRT_Client_DefaultDeviceAssignment_Args args{};
  args.struct_size = PJRT_Client_DefaultDeviceAssignment_Args_STRUCT_SIZE;
  args.client = client;
  args.num_replicas = 2;
  args.num_partitions = 1;
  args.default_assignment_size = 8;
  args.default_assignment = assignment;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_NE(assignment[0], assignment[1]);
  args.num_replicas = 4;
  args.num_partitions = 2;
  args.default_assignment_size = 7;
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args));
  ASSERT_TRUE(info.failed);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` 7 < `num_replicas * num_partitions`, "
            "4 * 2 = 8");
  DestroyClient(client);
}

TEST_F(ClientApiTest, MemoriesPerDevice) {
  PJRT_Device* device = Devices(client_)[0];
  PJRT_Device_AddressableMemories_Args args{};
  args.struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE;
  args.device = device;
  ASSERT_PJRT_OK(api_, api_->PJRT_Device_AddressableMemories(&args));
  ASSERT_GE(args.num_memories, 1u);
  std::set<std::string> kinds;
  std::set<int> kind_ids;
  for (size_t i = 0; i < args.num_memories; ++i) {
    PJRT_Memory_Kind_Args kind{};
    kind.struct_size = PJRT_Memory_Kind_Args_STRUCT_SIZE;
    kind.memory = args.memories[i];
    ASSERT_PJRT_OK(api_, api_->PJRT_Memory_Kind(&kind));
    kinds.insert(std::string(kind.kind, kind.kind_size));
    PJRT_Memory_Kind_Id_Args kind_id{};
    kind_id.struct_size = PJRT_Memory_Kind_Id_Args_STRUCT_SIZE;
    kind_id.memory = args.memories[i];
    ASSERT_PJRT_OK(api_, api_->PJRT_Memory_Kind_Id(&kind_id));
    kind_ids.insert(kind_id.kind_id);
    PJRT_Memory_AddressableByDevices_Args by{};
    by.struct_size = PJRT_Memory_AddressableByDevices_Args_STRUCT_SIZE;
    by.memory = args.memories[i];
    ASSERT_PJRT_OK(api_, api_->PJRT_Memory_AddressableByDevices(&by));
    ASSERT_EQ(by.num_devices, 1u);
    EXPECT_EQ(by.devices[0], device);
    // The memory user-data vtable the framework uses.
    static int key, value;
    args.memories[i]->vtable->set_user_data(args.memories[i], &key, &value, nullptr);
    EXPECT_EQ(args.memories[i]->vtable->get_user_data(args.memories[i], &key), &value);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"device", "pinned_host", "unpinned_host"}));
  EXPECT_EQ(kind_ids.size(), kinds.size());
  PJRT_Memory* default_memory = DefaultMemory(device);
  PJRT_Memory_Kind_Args kind{};
  kind.struct_size = PJRT_Memory_Kind_Args_STRUCT_SIZE;
  kind.memory = default_memory;
  ASSERT_PJRT_OK(api_, api_->PJRT_Memory_Kind(&kind));
  EXPECT_EQ(std::string(kind.kind, kind.kind_size), "device");
}

TEST_F(ClientApiTest, TopologyDescribesTheDevices) {
  PJRT_Client_TopologyDescription_Args args{};
  args.struct_size = PJRT_Client_TopologyDescription_Args_STRUCT_SIZE;
  args.client = client_;
  ASSERT_PJRT_OK(api_, api_->PJRT_Client_TopologyDescription(&args));
  PJRT_TopologyDescription_GetDeviceDescriptions_Args descriptions{};
  descriptions.struct_size = PJRT_TopologyDescription_GetDeviceDescriptions_Args_STRUCT_SIZE;
  descriptions.topology = args.topology;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_GetDeviceDescriptions(&descriptions));
  EXPECT_EQ(descriptions.num_descriptions, 1u);
  PJRT_TopologyDescription_Attributes_Args attributes{};
  attributes.struct_size = PJRT_TopologyDescription_Attributes_Args_STRUCT_SIZE;
  attributes.topology = args.topology;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Attributes(&attributes));
  PJRT_TopologyDescription_Fingerprint_Args first{};
  first.struct_size = PJRT_TopologyDescription_Fingerprint_Args_STRUCT_SIZE;
  first.topology = args.topology;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Fingerprint(&first));
  PJRT_TopologyDescription_Serialize_Args serialize{};
  serialize.struct_size = PJRT_TopologyDescription_Serialize_Args_STRUCT_SIZE;
  serialize.topology = args.topology;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Serialize(&serialize));
  PJRT_TopologyDescription_Deserialize_Args deserialize{};
  deserialize.struct_size = PJRT_TopologyDescription_Deserialize_Args_STRUCT_SIZE;
  deserialize.serialized_topology = serialize.serialized_bytes;
  deserialize.serialized_topology_size = serialize.serialized_bytes_size;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Deserialize(&deserialize));
  serialize.serialized_topology_deleter(serialize.serialized_topology);
  PJRT_TopologyDescription_Fingerprint_Args second{};
  second.struct_size = PJRT_TopologyDescription_Fingerprint_Args_STRUCT_SIZE;
  second.topology = deserialize.topology;
  ASSERT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Fingerprint(&second));
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  PJRT_TopologyDescription_Destroy_Args destroy{PJRT_TopologyDescription_Destroy_Args_STRUCT_SIZE, nullptr,
                                                deserialize.topology};
  EXPECT_PJRT_OK(api_, api_->PJRT_TopologyDescription_Destroy(&destroy));
}

}  // namespace
}  // namespace stablert::capi_test
