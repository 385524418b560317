// The profiler extension reached through the C API: found in the extension chain, records
// an execution between start and stop, returns it as an XSpace in both CollectData forms,
// and refuses misuse (stop before start, null profiler) with errors naming the function.
#include <cstring>
#include <string>
#include <vector>

#include "base/proto_wire.h"
#include "compile_options.h"
#include "program_fixture.h"
#include "xla/backends/profiler/plugin/profiler_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_profiler_extension.h"

namespace stablert::capi_test {
namespace {

class ProfilerTest : public ProgramTest {
 protected:
  const PLUGIN_Profiler_Api* Api() {
    for (const PJRT_Extension_Base* ext = api_->extension_start; ext; ext = ext->next)
      if (ext->type == PJRT_Extension_Type_Profiler)
        return reinterpret_cast<const PJRT_Profiler_Extension*>(ext)->profiler_api;
    return nullptr;
  }

  std::string Message(const PLUGIN_Profiler_Api* profiler, PLUGIN_Profiler_Error* error) {
    if (!error) return "";
    PLUGIN_Profiler_Error_Message_Args message{};
    message.struct_size = PLUGIN_Profiler_Error_Message_Args_STRUCT_SIZE;
    message.error = error;
    profiler->error_message(&message);
    std::string text(message.message, message.message_size);
    PLUGIN_Profiler_Error_Destroy_Args destroy{PLUGIN_Profiler_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
    profiler->error_destroy(&destroy);
    return text;
  }
};

// The names of the planes, lines and event metadata of a serialized XSpace.
std::vector<std::string> Names(const std::string& space) {
  std::vector<std::string> names;
  proto::WireReader planes(space);
  while (!planes.done()) {
    auto plane = planes.Next();
    if (!plane.ok() || plane->number != 1) continue;
    proto::WireReader fields(plane->bytes);
    while (!fields.done()) {
      auto field = fields.Next();
      if (!field.ok()) break;
      if (field->number == 2) names.emplace_back(field->bytes);
      if (field->number == 3 || field->number == 4) {  // a line, a metadata map entry
        proto::WireReader inner(field->bytes);
        while (!inner.done()) {
          auto item = inner.Next();
          if (!item.ok()) break;
          if (field->number == 3 && item->number == 2) names.emplace_back(item->bytes);
          if (field->number == 4 && item->number == 2) {
            proto::WireReader metadata(item->bytes);
            while (!metadata.done()) {
              auto m = metadata.Next();
              if (m.ok() && m->number == 2) names.emplace_back(m->bytes);
            }
          }
        }
      }
    }
  }
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& n : names)
    if (n == name) return true;
  return false;
}

TEST_F(ProfilerTest, RecordsAnExecutionBetweenStartAndStop) {
  const PLUGIN_Profiler_Api* profiler_api = Api();
  ASSERT_NE(profiler_api, nullptr);
  PLUGIN_Profiler_Create_Args create{};
  create.struct_size = PLUGIN_Profiler_Create_Args_STRUCT_SIZE;
  ASSERT_EQ(Message(profiler_api, profiler_api->create(&create)), "");
  PLUGIN_Profiler* profiler = create.profiler;

  PLUGIN_Profiler_Stop_Args stop{PLUGIN_Profiler_Stop_Args_STRUCT_SIZE, profiler};
  std::string error = Message(profiler_api, profiler_api->stop(&stop));
  EXPECT_NE(error.find("PLUGIN_Profiler_Stop"), std::string::npos) << error;
  PLUGIN_Profiler_Start_Args start{PLUGIN_Profiler_Start_Args_STRUCT_SIZE, nullptr};
  error = Message(profiler_api, profiler_api->start(&start));
  EXPECT_NE(error.find("profiler is null"), std::string::npos) << error;

  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_FALSE(Compile(Program("add_i32.1_17_0"), SingleDeviceOptions(), &executable).failed);
  int32_t one = 1, two = 2;
  PJRT_Buffer* x = ToDevice(&one, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  PJRT_Buffer* y = ToDevice(&two, PJRT_Buffer_Type_S32, {}, Devices(client_)[0]);
  start.profiler = profiler;
  ASSERT_EQ(Message(profiler_api, profiler_api->start(&start)), "");
  std::vector<PJRT_Buffer*> sum = Execute(executable, {x, y}, 1);
  ASSERT_EQ(Message(profiler_api, profiler_api->stop(&stop)), "");
  std::vector<PJRT_Buffer*> untraced = Execute(executable, {x, y}, 1);

  // The first call returns the profiler's own bytes; a second with a buffer copies them.
  PLUGIN_Profiler_CollectData_Args collect{};
  collect.struct_size = PLUGIN_Profiler_CollectData_Args_STRUCT_SIZE;
  collect.profiler = profiler;
  ASSERT_EQ(Message(profiler_api, profiler_api->collect_data(&collect)), "");
  ASSERT_NE(collect.buffer, nullptr);
  ASSERT_GT(collect.buffer_size_in_bytes, 0u);
  const std::string space(reinterpret_cast<const char*>(collect.buffer), collect.buffer_size_in_bytes);
  std::vector<uint8_t> copy(collect.buffer_size_in_bytes);
  collect.buffer = copy.data();
  ASSERT_EQ(Message(profiler_api, profiler_api->collect_data(&collect)), "");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(copy.data()), copy.size()), space);

  std::vector<std::string> names = Names(space);
  EXPECT_TRUE(Has(names, "/device:CUSTOM:0"));
  EXPECT_TRUE(Has(names, "XLA Modules"));
  EXPECT_TRUE(Has(names, "XLA Ops"));
  EXPECT_TRUE(Has(names, "stablehlo.add")) << space.size();

  PLUGIN_Profiler_Destroy_Args destroy{PLUGIN_Profiler_Destroy_Args_STRUCT_SIZE, profiler};
  EXPECT_EQ(Message(profiler_api, profiler_api->destroy(&destroy)), "");
  for (PJRT_Buffer* buffer : {x, y, sum[0], untraced[0]}) DestroyBuffer(buffer);
  Destroy(executable);
}

}  // namespace
}  // namespace stablert::capi_test
