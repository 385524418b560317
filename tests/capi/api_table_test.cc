// The PJRT_Api table: version, every slot filled, every slot rejecting misuse by name.
#include <set>

#include "plugin_fixture.h"

namespace stablert::capi_test {
namespace {

struct Slot {
  const char* name;
  void* function;
};

std::vector<Slot> AllSlots(const PJRT_Api* api) {
  std::vector<Slot> slots;
#define PJRT_API_SLOT(name) slots.push_back({#name, reinterpret_cast<void*>(api->name)});
#include "base/pjrt_api_slots.def"
#undef PJRT_API_SLOT
  return slots;
}

// Slots that legitimately succeed when given no handles at all (they create objects, free a
// null pointer, or need no arguments).
const std::set<std::string> kSucceedWithoutHandles = {
    "PJRT_Plugin_Initialize",    "PJRT_Plugin_Attributes",          "PJRT_Event_Create",
    "PJRT_Event_Destroy",        "PJRT_Client_Create",              "PJRT_Client_Destroy",
    "PJRT_Buffer_Destroy",       "PJRT_Executable_Destroy",         "PJRT_LoadedExecutable_Destroy",
    "PJRT_TopologyDescription_Create", "PJRT_TopologyDescription_Destroy",
    "PJRT_CopyToDeviceStream_Destroy",  // "stream can be nullptr"
    "PJRT_AsyncHostToDeviceTransferManager_Destroy",  // "transfer_manager can be nullptr"
    "PJRT_ExecuteContext_Create", "PJRT_ExecuteContext_Destroy", "PJRT_AsyncTrackingEvent_Destroy",
};

TEST(ApiTable, VersionMatchesHeader) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->struct_size, PJRT_Api_STRUCT_SIZE);
  EXPECT_EQ(api->pjrt_api_version.major_version, PJRT_API_MAJOR);
  EXPECT_EQ(api->pjrt_api_version.minor_version, PJRT_API_MINOR);
}

TEST(ApiTable, EverySlotIsFilled) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  auto slots = AllSlots(api);
  EXPECT_EQ(slots.size(), 138u);
  for (const Slot& slot : slots) EXPECT_NE(slot.function, nullptr) << slot.name;
}

// A zero struct_size is caller misuse: every non-void slot must say so, naming itself.
TEST(ApiTable, EverySlotRejectsTooSmallArgsByName) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  for (const Slot& slot : AllSlots(api)) {
    std::string name = slot.name;
    if (name == "PJRT_Error_Destroy" || name == "PJRT_Error_Message") continue;  // return void
    alignas(16) unsigned char args[4096] = {};
    auto fn = reinterpret_cast<PJRT_Error* (*)(void*)>(slot.function);
    ErrorInfo info = TakeError(api, fn(args));
    ASSERT_TRUE(info.failed) << name << " accepted struct_size 0";
    EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << name << ": " << info.message;
    EXPECT_NE(info.message.find(name), std::string::npos) << name << ": " << info.message;
  }
}

// With a large struct_size but no handles, a slot either fails naming itself (null handle
// or UNIMPLEMENTED) or is one of the few that need no handle.
TEST(ApiTable, EverySlotNamesItselfWhenCalledWithoutHandles) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  int unimplemented = 0;
  for (const Slot& slot : AllSlots(api)) {
    std::string name = slot.name;
    if (name == "PJRT_Error_Destroy" || name == "PJRT_Error_Message") continue;
    alignas(16) unsigned char args[4096] = {};
    size_t size = sizeof(args);
    std::memcpy(args, &size, sizeof(size));
    auto fn = reinterpret_cast<PJRT_Error* (*)(void*)>(slot.function);
    ErrorInfo info = TakeError(api, fn(args));
    if (kSucceedWithoutHandles.count(name)) {
      EXPECT_FALSE(info.failed) << name << ": " << info.message;
      if (name == "PJRT_Client_Create") {
        PJRT_Client* client = nullptr;
        std::memcpy(&client, args + offsetof(PJRT_Client_Create_Args, client), sizeof(client));
        PJRT_Client_Destroy_Args destroy{PJRT_Client_Destroy_Args_STRUCT_SIZE, nullptr, client};
        EXPECT_PJRT_OK(api, api->PJRT_Client_Destroy(&destroy));
      } else if (name == "PJRT_Event_Create") {
        PJRT_Event* event = nullptr;
        std::memcpy(&event, args + offsetof(PJRT_Event_Create_Args, event), sizeof(event));
        PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr, event};
        EXPECT_PJRT_OK(api, api->PJRT_Event_Destroy(&destroy));
      } else if (name == "PJRT_ExecuteContext_Create") {
        PJRT_ExecuteContext* context = nullptr;
        std::memcpy(&context, args + offsetof(PJRT_ExecuteContext_Create_Args, context), sizeof(context));
        PJRT_ExecuteContext_Destroy_Args destroy{PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE, nullptr, context};
        EXPECT_PJRT_OK(api, api->PJRT_ExecuteContext_Destroy(&destroy));
      } else if (name == "PJRT_TopologyDescription_Create") {
        PJRT_TopologyDescription* topology = nullptr;
        std::memcpy(&topology, args + offsetof(PJRT_TopologyDescription_Create_Args, topology), sizeof(topology));
        PJRT_TopologyDescription_Destroy_Args destroy{PJRT_TopologyDescription_Destroy_Args_STRUCT_SIZE, nullptr,
                                                      topology};
        EXPECT_PJRT_OK(api, api->PJRT_TopologyDescription_Destroy(&destroy));
      }
      continue;
    }
    ASSERT_TRUE(info.failed) << name << " succeeded without any handle";
    EXPECT_NE(info.message.find(name), std::string::npos) << name << ": " << info.message;
    EXPECT_TRUE(info.code == PJRT_Error_Code_INVALID_ARGUMENT || info.code == PJRT_Error_Code_UNIMPLEMENTED)
        << name << ": code " << info.code << " " << info.message;
    if (info.code == PJRT_Error_Code_UNIMPLEMENTED) ++unimplemented;
  }
  // Every slot is implemented: none answers a bare UNIMPLEMENTED.
  EXPECT_EQ(unimplemented, 0);
}

TEST(ApiTable, PluginAttributes) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  PJRT_Plugin_Attributes_Args args{};
  args.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE;
  ASSERT_PJRT_OK(api, api->PJRT_Plugin_Attributes(&args));
  std::set<std::string> names;
  for (size_t i = 0; i < args.num_attributes; ++i) {
    const PJRT_NamedValue& value = args.attributes[i];
    std::string name(value.name, value.name_size);
    EXPECT_TRUE(names.insert(name).second) << "duplicate attribute " << name;
    if (name == "xla_version") {
      EXPECT_EQ(value.type, PJRT_NamedValue_kInt64);
    }
    if (name == "stablehlo_current_version" || name == "stablehlo_minimum_version") {
      ASSERT_EQ(value.type, PJRT_NamedValue_kInt64List) << name;
      ASSERT_EQ(value.value_size, 3u) << name;
    }
  }
  EXPECT_TRUE(names.count("xla_version"));
  EXPECT_TRUE(names.count("stablehlo_current_version"));
  EXPECT_TRUE(names.count("stablehlo_minimum_version"));
}

TEST(ApiTable, ErrorVtableAgreesWithFunctions) {
  const PJRT_Api* api = LoadPlugin();
  ASSERT_NE(api, nullptr);
  PJRT_Client_LookupDevice_Args args{};
  args.struct_size = PJRT_Client_LookupDevice_Args_STRUCT_SIZE;
  PJRT_Error* error = api->PJRT_Client_LookupDevice(&args);
  ASSERT_NE(error, nullptr);
  ASSERT_NE(error->vtable, nullptr);
  EXPECT_GE(error->vtable->struct_size, PJRT_Error_FunctionTable_STRUCT_SIZE);
  EXPECT_EQ(error->vtable->get_code(error), PJRT_Error_Code_INVALID_ARGUMENT);
  const char* message = nullptr;
  size_t size = 0;
  error->vtable->message(error, &message, &size);
  EXPECT_NE(std::string(message, size).find("PJRT_Client_LookupDevice"), std::string::npos);
  int payloads = 0;
  PJRT_Error_ForEachPayload_Args each{};
  each.struct_size = PJRT_Error_ForEachPayload_Args_STRUCT_SIZE;
  each.error = error;
  each.visitor = [](const char*, size_t, const char*, size_t, void* count) { ++*static_cast<int*>(count); };
  each.user_arg = &payloads;
  EXPECT_PJRT_OK(api, api->PJRT_Error_ForEachPayload(&each));
  EXPECT_EQ(payloads, 0);
  error->vtable->destroy(error);
}

}  // namespace
}  // namespace stablert::capi_test
