// What JAX relies on at client creation and after jax.distributed.initialize: every slot
// jaxlib treats as fatal (LOG(FATAL) on error) succeeds on valid use, UpdateGlobalProcessInfo
// accepts what one process can honour, and the names a bug report shows tell StableRT from
// XLA (docs/jax_integration.md).
#include <string>

#include "plugin_fixture.h"

namespace stablert::capi_test {
namespace {

using JaxIntegrationTest = ClientTest;

// Calls `fn` with its args zeroed, struct_size set and `field` = `value`; expects success.
#define CALL_OK(fn, field, value)                    \
  [&] {                                              \
    fn##_Args call_args{};                           \
    call_args.struct_size = fn##_Args_STRUCT_SIZE;   \
    call_args.field = (value);                       \
    EXPECT_PJRT_OK(api_, api_->fn(&call_args));      \
    return call_args;                                \
  }()

PJRT_ProcessInfo Process(int task_id, PJRT_ProcessState state) {
  PJRT_ProcessInfo info{};
  info.struct_size = PJRT_ProcessInfo_STRUCT_SIZE;
  info.task_id = task_id;
  info.incarnation_id = 0x1234abcdu + task_id;
  info.state = state;
  return info;
}

ErrorInfo UpdateGlobalProcessInfo(const PJRT_Api* api, PJRT_Client* client, PJRT_ProcessInfo* infos, size_t count) {
  PJRT_Client_UpdateGlobalProcessInfo_Args args{};
  args.struct_size = PJRT_Client_UpdateGlobalProcessInfo_Args_STRUCT_SIZE;
  args.client = client;
  args.process_infos = infos;
  args.num_process_infos = count;
  return TakeError(api, api->PJRT_Client_UpdateGlobalProcessInfo(&args));
}

TEST_F(JaxIntegrationTest, UpdateGlobalProcessInfoAcceptsTheOwnProcessInEveryState) {
  for (PJRT_ProcessState state : {PJRT_ProcessState_kUnspecified, PJRT_ProcessState_kUninitialized,
                                  PJRT_ProcessState_kConnected, PJRT_ProcessState_kDisconnected,
                                  PJRT_ProcessState_kError}) {
    PJRT_ProcessInfo info = Process(0, state);
    if (state == PJRT_ProcessState_kError) {
      info.error_code = 14;
      info.error_message = "heartbeat lost";
      info.error_message_size = 14;
    }
    ErrorInfo error = UpdateGlobalProcessInfo(api_, client_, &info, 1);
    EXPECT_FALSE(error.failed) << "state " << state << ": " << error.message;
  }
  EXPECT_FALSE(UpdateGlobalProcessInfo(api_, client_, nullptr, 0).failed);
}

TEST_F(JaxIntegrationTest, UpdateGlobalProcessInfoAfterDistributedCreateOptions) {
  // What jax.distributed.initialize(num_processes=1) makes JAX pass.
  PJRT_Client* client = CreateClient({Int64Option("node_id", 0), Int64Option("num_nodes", 1)});
  ASSERT_NE(client, nullptr);
  PJRT_ProcessInfo info = Process(0, PJRT_ProcessState_kConnected);
  ErrorInfo error = UpdateGlobalProcessInfo(api_, client, &info, 1);
  EXPECT_FALSE(error.failed) << error.message;
  DestroyClient(client);
}

TEST_F(JaxIntegrationTest, UpdateGlobalProcessInfoRejectsWhatOneProcessCannotHonour) {
  PJRT_ProcessInfo two[] = {Process(0, PJRT_ProcessState_kConnected), Process(1, PJRT_ProcessState_kConnected)};
  ErrorInfo error = UpdateGlobalProcessInfo(api_, client_, two, 2);
  ASSERT_TRUE(error.failed);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("task 1"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("job of 1 process"), std::string::npos) << error.message;

  PJRT_ProcessInfo twice[] = {Process(0, PJRT_ProcessState_kConnected), Process(0, PJRT_ProcessState_kError)};
  error = UpdateGlobalProcessInfo(api_, client_, twice, 2);
  ASSERT_TRUE(error.failed);
  EXPECT_NE(error.message.find("listed twice"), std::string::npos) << error.message;

  error = UpdateGlobalProcessInfo(api_, client_, nullptr, 1);
  ASSERT_TRUE(error.failed);
  EXPECT_NE(error.message.find("process_infos is null"), std::string::npos) << error.message;
}

TEST_F(JaxIntegrationTest, NamesTellStableRtFromXla) {
  auto version = CALL_OK(PJRT_Client_PlatformVersion, client, client_);
  std::string platform_version(version.platform_version, version.platform_version_size);
  EXPECT_EQ(platform_version.rfind("StableRT ", 0), 0u) << platform_version;
  EXPECT_NE(platform_version.find("(PJRT 0."), std::string::npos) << platform_version;
  EXPECT_NE(platform_version.find(", StableHLO "), std::string::npos) << platform_version;
  for (PJRT_Device* device : Devices(client_)) {
    auto description = CALL_OK(PJRT_Device_GetDescription, device, device).device_description;
    auto kind = CALL_OK(PJRT_DeviceDescription_Kind, device_description, description);
    std::string device_kind(kind.device_kind, kind.device_kind_size);
    EXPECT_EQ(device_kind.rfind("StableRT CPU", 0), 0u) << device_kind;
  }
  auto topology = CALL_OK(PJRT_Client_TopologyDescription, client, client_).topology;
  auto topology_version = CALL_OK(PJRT_TopologyDescription_PlatformVersion, topology, topology);
  EXPECT_EQ(std::string(topology_version.platform_version, topology_version.platform_version_size), platform_version);
}

// Every slot jaxlib's client constructor calls and treats as fatal (LOG(FATAL) / CHECK on any
// error), called as it calls them, for a plain client and for one created as
// jax.distributed.initialize(num_processes=1) creates it.
TEST_F(JaxIntegrationTest, SlotsJaxTreatsAsFatalSucceedAtClientCreation) {
  PJRT_Client* distributed = CreateClient({Int64Option("node_id", 0), Int64Option("num_nodes", 1)});
  ASSERT_NE(distributed, nullptr);
  for (PJRT_Client* client : {client_, distributed}) {
    CALL_OK(PJRT_Plugin_Attributes, extension_start, nullptr);
    CALL_OK(PJRT_Client_PlatformName, client, client);
    CALL_OK(PJRT_Client_PlatformVersion, client, client);
    CALL_OK(PJRT_Client_ProcessIndex, client, client);
    auto devices = CALL_OK(PJRT_Client_Devices, client, client);
    ASSERT_GT(devices.num_devices, 0u);
    auto addressable = CALL_OK(PJRT_Client_AddressableDevices, client, client);
    ASSERT_GT(addressable.num_addressable_devices, 0u);
    for (size_t i = 0; i < devices.num_devices; ++i) {
      PJRT_Device* device = devices.devices[i];
      auto description = CALL_OK(PJRT_Device_GetDescription, device, device).device_description;
      CALL_OK(PJRT_DeviceDescription_Id, device_description, description);
      CALL_OK(PJRT_DeviceDescription_ProcessIndex, device_description, description);
      CALL_OK(PJRT_DeviceDescription_Attributes, device_description, description);
      CALL_OK(PJRT_DeviceDescription_Kind, device_description, description);
      CALL_OK(PJRT_DeviceDescription_DebugString, device_description, description);
      CALL_OK(PJRT_DeviceDescription_ToString, device_description, description);
      CALL_OK(PJRT_Device_IsAddressable, device, device);
      CALL_OK(PJRT_Device_LocalHardwareId, device, device);
      auto attributes = CALL_OK(PJRT_Device_GetAttributes, device, device);
      if (attributes.attributes_deleter) attributes.attributes_deleter(attributes.device_attributes);
      auto memories = CALL_OK(PJRT_Device_AddressableMemories, device, device);
      ASSERT_GT(memories.num_memories, 0u);
      CALL_OK(PJRT_Device_DefaultMemory, device, device);
    }
    auto memories = CALL_OK(PJRT_Client_AddressableMemories, client, client);
    for (size_t i = 0; i < memories.num_addressable_memories; ++i) {
      PJRT_Memory* memory = memories.addressable_memories[i];
      CALL_OK(PJRT_Memory_Id, memory, memory);
      CALL_OK(PJRT_Memory_Kind, memory, memory);
      CALL_OK(PJRT_Memory_Kind_Id, memory, memory);
      CALL_OK(PJRT_Memory_DebugString, memory, memory);
      CALL_OK(PJRT_Memory_ToString, memory, memory);
      EXPECT_GT(CALL_OK(PJRT_Memory_AddressableByDevices, memory, memory).num_devices, 0u);
    }
    auto topology = CALL_OK(PJRT_Client_TopologyDescription, client, client).topology;
    CALL_OK(PJRT_TopologyDescription_PlatformName, topology, topology);
    CALL_OK(PJRT_TopologyDescription_PlatformVersion, topology, topology);
    CALL_OK(PJRT_TopologyDescription_Attributes, topology, topology);
    CALL_OK(PJRT_TopologyDescription_GetDeviceDescriptions, topology, topology);
    PJRT_ProcessInfo info = Process(0, PJRT_ProcessState_kConnected);
    EXPECT_FALSE(UpdateGlobalProcessInfo(api_, client, &info, 1).failed);
  }
  DestroyClient(distributed);
}

}  // namespace
}  // namespace stablert::capi_test
