// The host library against the built StableRT plugin (any plugin: STABLERT_TEST_PLUGIN).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/proto_wire.h"
#include "host/buffer.h"
#include "host/client.h"
#include "host/executable.h"
#include "host/future.h"
#include "host/kv_store.h"
#include "host/plugin.h"

namespace stablert::host {
namespace {

std::string PluginPath() {
  const char* path = std::getenv("STABLERT_TEST_PLUGIN");
  return path ? path : STABLERT_PLUGIN_PATH;
}

std::string ReadProgram(const std::string& name) {
  std::ifstream in(std::string(STABLERT_TESTDATA_DIR) + "/programs/" + name + ".mlirbc", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::shared_ptr<const Plugin> LoadOrDie() {
  StatusOr<std::shared_ptr<const Plugin>> plugin = Plugin::Load(PluginPath());
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  return plugin.ok() ? *plugin : nullptr;
}

TEST(HostPlugin, LoadsAndReportsVersionSlotsAndAttributes) {
  std::shared_ptr<const Plugin> plugin = LoadOrDie();
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->major_version(), 0);
  EXPECT_GE(plugin->minor_version(), 57);
  std::vector<std::pair<std::string, bool>> slots = plugin->Slots();
  EXPECT_EQ(slots.size(), 138u);
  EXPECT_EQ(slots.front().first, "PJRT_Error_Destroy");
  for (const auto& [name, present] : slots) EXPECT_TRUE(present) << name;
  StatusOr<std::vector<NamedValue>> attributes = plugin->Attributes();
  ASSERT_TRUE(attributes.ok()) << attributes.status().ToString();
  bool has_stablehlo_version = false;
  for (const NamedValue& a : *attributes) has_stablehlo_version |= a.name == "stablehlo_current_version";
  EXPECT_TRUE(has_stablehlo_version);
  // Loading the same library again shares its table and initializes it once.
  StatusOr<std::shared_ptr<const Plugin>> again = Plugin::Load(PluginPath());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->api(), plugin->api());
}

TEST(HostPlugin, RefusesWhatIsNotAPlugin) {
  StatusOr<std::shared_ptr<const Plugin>> missing = Plugin::Load("/nonexistent/libnothing.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/libnothing.so"), std::string::npos);
  // A shared library without GetPjrtApi.
  StatusOr<std::shared_ptr<const Plugin>> libc = Plugin::Load("/lib/x86_64-linux-gnu/libm.so.6");
  if (std::ifstream("/lib/x86_64-linux-gnu/libm.so.6").good()) {
    ASSERT_FALSE(libc.ok());
    EXPECT_NE(libc.status().message().find("does not export GetPjrtApi"), std::string::npos)
        << libc.status().ToString();
  }
  StatusOr<std::string> unknown = FindPlugin("no_such_plugin_name");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("no_such_plugin_name"), std::string::npos);
}

TEST(HostPlugin, RefusesTablesOfAnotherVersionAndReportsMissingSlots) {
  std::shared_ptr<const Plugin> real = LoadOrDie();
  ASSERT_NE(real, nullptr);
  // A copy of the table claiming a major version 1.
  PJRT_Api other_major = *real->api();
  other_major.pjrt_api_version.major_version = 1;
  StatusOr<std::shared_ptr<const Plugin>> refused = Plugin::FromApi(&other_major, "major-1 table");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("PJRT 1."), std::string::npos) << refused.status().ToString();

  // A table cut at 0.81's size: the slots added later are reported missing, not called.
  PJRT_Api old = *real->api();
  old.pjrt_api_version.minor_version = 81;
  old.struct_size = offsetof(PJRT_Api, PJRT_LoadedExecutable_GetDeviceAssignment) + sizeof(void*);
  StatusOr<std::shared_ptr<const Plugin>> plugin = Plugin::FromApi(&old, "0.81 table");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_TRUE((*plugin)->Has(&PJRT_Api::PJRT_LoadedExecutable_GetDeviceAssignment));
  EXPECT_FALSE((*plugin)->Has(&PJRT_Api::PJRT_Client_Load));
  PJRT_Client_Load_Args args{};
  args.struct_size = PJRT_Client_Load_Args_STRUCT_SIZE;
  Status status = (*plugin)->Call(&PJRT_Api::PJRT_Client_Load, "PJRT_Client_Load", &args);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("PJRT_Client_Load is not provided by the plugin '0.81 table' (PJRT 0.81)"),
            std::string::npos)
      << status.ToString();
}

TEST(HostClient, DevicesMemoriesAndErrorsNameTheFunction) {
  std::shared_ptr<const Plugin> plugin = LoadOrDie();
  ASSERT_NE(plugin, nullptr);
  ClientOptions options;
  options.create_options.push_back({"device_count", int64_t{3}});
  StatusOr<std::shared_ptr<Client>> client = Client::Create(plugin, options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->platform_name(), "stablert");
  ASSERT_EQ((*client)->devices().size(), 3u);
  ASSERT_EQ((*client)->addressable_devices().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Device& device = (*client)->devices()[i];
    EXPECT_EQ(device.id, static_cast<int>(i));
    EXPECT_TRUE(device.addressable);
    EXPECT_FALSE(device.kind.empty());
  }
  StatusOr<Memory> memory = (*client)->DefaultMemory((*client)->devices()[0]);
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_EQ(memory->kind, "device");
  EXPECT_FALSE((*client)->DeviceById(7).ok());

  ClientOptions bad;
  bad.create_options.push_back({"device_count", std::string("many")});
  StatusOr<std::shared_ptr<Client>> refused = Client::Create(plugin, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message().rfind("PJRT_Client_Create: ", 0), 0u) << refused.status().ToString();
}

TEST(HostExecutable, CompilesRunsAndReadsBackWithBuffersOutlivingTheirHandles) {
  std::shared_ptr<const Plugin> plugin = LoadOrDie();
  ASSERT_NE(plugin, nullptr);
  StatusOr<std::shared_ptr<Client>> client = Client::Create(plugin);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  StatusOr<std::shared_ptr<LoadedExecutable>> executable =
      LoadedExecutable::Compile(*client, Program{ReadProgram("add_i32.1_17_0")});
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  EXPECT_EQ((*executable)->num_outputs(), 1u);
  ASSERT_EQ((*executable)->devices().size(), 1u);

  int32_t one = 1, two = 2;
  const Device& device = (*client)->addressable_devices()[0];
  StatusOr<Buffer> x = Buffer::FromHost(*client, {PJRT_Buffer_Type_S32, {}, {}, &one}, device);
  StatusOr<Buffer> y = Buffer::FromHost(*client, {PJRT_Buffer_Type_S32, {}, {}, &two}, device);
  ASSERT_TRUE(x.ok() && y.ok()) << x.status().ToString() << y.status().ToString();
  StatusOr<ExecuteResult> result = (*executable)->Execute({{&*x, &*y}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->outputs.size(), 1u);
  ASSERT_EQ(result->outputs[0].size(), 1u);
  // The future was made from the plugin's event, which is already destroyed.
  EXPECT_TRUE(result->done[0].Await().ok());
  EXPECT_TRUE(result->done[0].IsReady());
  StatusOr<Literal> sum = result->outputs[0][0].ToLiteral();
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  ASSERT_EQ(sum->bytes.size(), 4u);
  int32_t value;
  std::memcpy(&value, sum->bytes.data(), 4);
  EXPECT_EQ(value, 3);

  // Wrong argument counts are the host's error, before any plugin call.
  StatusOr<ExecuteResult> wrong = (*executable)->Execute({{&*x, &*y}, {&*x, &*y}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("argument lists for 2 devices"), std::string::npos);
  // The plugin's own argument checks come back naming the PJRT function.
  StatusOr<ExecuteResult> short_list = (*executable)->Execute({{&*x}});
  ASSERT_FALSE(short_list.ok());
  EXPECT_EQ(short_list.status().message().rfind("PJRT_LoadedExecutable_Execute: ", 0), 0u)
      << short_list.status().ToString();

  StatusOr<std::string> serialized = (*executable)->Serialize();
  ASSERT_TRUE(serialized.ok()) << serialized.status().ToString();
  EXPECT_FALSE(serialized->empty());
}

// An array of no elements needs no host data (an empty std::vector's data() is null), and
// reads back as no bytes; an array with elements still needs its data.
TEST(HostExecutable, OutputShardingsAreTheCompilersForAnUnannotatedResult) {
  std::shared_ptr<const Plugin> plugin = LoadOrDie();
  ASSERT_NE(plugin, nullptr);
  ClientOptions options;
  options.create_options = {{"cpu_device_count", int64_t{2}}};
  StatusOr<std::shared_ptr<Client>> client = Client::Create(plugin, options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  // x split by rows over 2 partitions; the result carries no sharding of its own.
  const std::string text =
      "module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
      "  sdy.mesh @mesh = <[\"d\"=2]>\n"
      "  func.func public @main(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"d\"}, {}]>}) -> "
      "tensor<4x2xf32> {\n"
      "    %0 = stablehlo.add %x, %x : tensor<4x2xf32>\n"
      "    return %0 : tensor<4x2xf32>\n  }\n}\n";
  CompileOptions compile;
  compile.num_partitions = 2;
  compile.use_shardy_partitioner = true;
  StatusOr<std::shared_ptr<LoadedExecutable>> executable = LoadedExecutable::Compile(*client, Program{text}, compile);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  StatusOr<std::optional<std::vector<std::string>>> shardings = (*executable)->OutputShardings();
  ASSERT_TRUE(shardings.ok()) << shardings.status().ToString();
  ASSERT_TRUE(shardings->has_value());
  ASSERT_EQ((*shardings)->size(), 1u);
  // xla.OpSharding: type OTHER (3), tiles [2, 1] (rows split in two).
  proto::WireReader reader((**shardings)[0]);
  uint64_t type = 0;
  std::vector<int64_t> tiles;
  while (!reader.done()) {
    StatusOr<proto::Field> field = reader.Next();
    ASSERT_TRUE(field.ok()) << field.status().ToString();
    if (field->number == 1) type = field->varint;
    if (field->number == 3) {
      ASSERT_TRUE(proto::WireReader::AppendPackedVarints(*field, &tiles).ok());
    }
  }
  EXPECT_EQ(type, 3u);
  EXPECT_EQ(tiles, (std::vector<int64_t>{2, 1}));
}

TEST(HostBuffer, ZeroElementArraysNeedNoHostData) {
  std::shared_ptr<const Plugin> plugin = LoadOrDie();
  ASSERT_NE(plugin, nullptr);
  StatusOr<std::shared_ptr<Client>> client = Client::Create(plugin);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const Device& device = (*client)->addressable_devices()[0];
  StatusOr<Buffer> empty = Buffer::FromHost(*client, {PJRT_Buffer_Type_F32, {0, 3}, {}, nullptr}, device);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  StatusOr<Literal> back = empty->ToLiteral();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->bytes.empty());
  EXPECT_EQ(back->dims, (std::vector<int64_t>{0, 3}));
  StatusOr<Buffer> missing = Buffer::FromHost(*client, {PJRT_Buffer_Type_F32, {2}, {}, nullptr}, device);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no host data"), std::string::npos);
}

TEST(HostExecutable, MalformedProgramIsInvalidArgumentNamingCompile) {
  std::shared_ptr<const Plugin> plugin = LoadOrDie();
  ASSERT_NE(plugin, nullptr);
  StatusOr<std::shared_ptr<Client>> client = Client::Create(plugin);
  ASSERT_TRUE(client.ok());
  StatusOr<std::shared_ptr<LoadedExecutable>> executable =
      LoadedExecutable::Compile(*client, Program{"not a program"});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(executable.status().message().rfind("PJRT_Client_Compile: ", 0), 0u) << executable.status().ToString();
}

TEST(HostFuture, CompletesCallbacksOnceAndJoins) {
  Promise a, b;
  int calls = 0;
  a.future().OnReady([&](Status s) {
    ++calls;
    EXPECT_TRUE(s.ok());
  });
  Future both = WhenAll({a.future(), b.future()});
  EXPECT_FALSE(both.IsReady());
  a.Set(OkStatus());
  a.Set(Internal("ignored: the first Set wins"));
  EXPECT_EQ(calls, 1);
  std::thread setter([&] { b.Set(Internal("b failed")); });
  Status joined = both.Await();
  setter.join();
  EXPECT_EQ(joined.code(), StatusCode::kInternal);
  EXPECT_EQ(joined.message(), "b failed");
  EXPECT_TRUE(a.future().Await().ok());
}

TEST(HostKeyValueStore, GetWaitsForPutAndTimesOut) {
  InMemoryKeyValueStore store;
  std::thread putter([&] { EXPECT_TRUE(store.Put("k", "v").ok()); });
  StatusOr<std::string> value = store.Get("k", std::chrono::milliseconds(5000));
  putter.join();
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "v");
  EXPECT_EQ(store.TryGet("missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.Get("missing", std::chrono::milliseconds(10)).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(store.Put("k", "v").ok());
  EXPECT_EQ(store.Put("k", "other").code(), StatusCode::kAlreadyExists);
}

TEST(HostElementTypes, SizesNamesAndOverflow) {
  EXPECT_EQ(ElementBits(PJRT_Buffer_Type_F32), 32);
  EXPECT_EQ(ElementBits(PJRT_Buffer_Type_S4), 4);
  EXPECT_EQ(ElementTypeName(PJRT_Buffer_Type_BF16), "bf16");
  EXPECT_EQ(ElementTypeName(PJRT_Buffer_Type_PRED), "i1");
  EXPECT_EQ(*ElementTypeByName("complex<f32>"), PJRT_Buffer_Type_C64);
  EXPECT_FALSE(ElementTypeByName("float").ok());
  EXPECT_FALSE(ElementTypeByName("token").ok());
  EXPECT_EQ(*DenseBytes(PJRT_Buffer_Type_S4, {3}), 3);
  EXPECT_EQ(*DenseBytes(PJRT_Buffer_Type_F32, {2, 0, 5}), 0);
  EXPECT_FALSE(DenseBytes(PJRT_Buffer_Type_F32, {-1}).ok());
  EXPECT_FALSE(DenseBytes(PJRT_Buffer_Type_F64, {int64_t{1} << 40, int64_t{1} << 40}).ok());
}

}  // namespace
}  // namespace stablert::host
