#include "capi/profiler_extension.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "base/proto_wire.h"
#include "runtime/trace.h"
#include "xla/backends/profiler/plugin/profiler_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_profiler_extension.h"

struct PLUGIN_Profiler_Error {
  int code;  // absl/PJRT status code
  std::string message;
};

struct PLUGIN_Profiler {
  bool recording = false;
  int64_t since_ns = 0;
  std::vector<stablert::runtime::trace::Event> events;  // of the last start..stop
  std::string serialized;                               // CollectData's bytes
};

struct PLUGIN_Profiler_ConsumeResult {
  std::string serialized;
};

namespace stablert::capi {
namespace {

using runtime::trace::Event;
using runtime::trace::EventKind;

constexpr int kInvalidArgument = 3;
constexpr int kFailedPrecondition = 9;

PLUGIN_Profiler_Error* ProfilerError(int code, std::string message) {
  return new (std::nothrow) PLUGIN_Profiler_Error{code, std::move(message)};
}

// tensorflow.profiler.XSpace (xplane.proto): XSpace.planes 1; XPlane id 1, name 2, lines 3,
// event_metadata 4 (map<int64, XEventMetadata>), stat_metadata 5; XLine id 1, name 2,
// timestamp_ns 3, events 4, display_name 11; XEvent metadata_id 1, offset_ps 2,
// duration_ps 3, stats 4; XStat metadata_id 1, str_value 5; XEventMetadata id 1, name 2;
// XStatMetadata id 1, name 2.
std::string SerializeXSpace(const std::vector<Event>& events) {
  std::map<int, std::vector<const Event*>> by_device;
  for (const Event& event : events) by_device[event.device_id].push_back(&event);
  constexpr int64_t kSourceStat = 1;
  proto::WireWriter space;
  for (const auto& [device, device_events] : by_device) {
    proto::WireWriter plane;
    plane.Varint(1, static_cast<uint64_t>(device + 1));
    plane.Bytes(2, "/device:CUSTOM:" + std::to_string(std::max(device, 0)));
    std::map<std::string, int64_t> metadata_ids;
    for (const Event* event : device_events) metadata_ids.emplace(event->name, 0);
    int64_t next_id = 1;
    for (auto& [name, id] : metadata_ids) id = next_id++;
    int64_t first_ns = device_events.front()->start_ns;
    for (const Event* event : device_events) first_ns = std::min(first_ns, event->start_ns);
    for (EventKind kind : {EventKind::kExecution, EventKind::kStep}) {
      proto::WireWriter line;
      line.Varint(1, kind == EventKind::kExecution ? 1 : 2);
      line.Bytes(2, kind == EventKind::kExecution ? "XLA Modules" : "XLA Ops");
      line.Varint(3, static_cast<uint64_t>(first_ns));
      for (const Event* event : device_events) {
        if (event->kind != kind) continue;
        proto::WireWriter x;
        x.Varint(1, static_cast<uint64_t>(metadata_ids[event->name]));
        x.Varint(2, static_cast<uint64_t>((event->start_ns - first_ns) * 1000));
        x.Varint(3, static_cast<uint64_t>(std::max<int64_t>(event->end_ns - event->start_ns, 0) * 1000));
        if (!event->detail.empty()) {
          proto::WireWriter stat;
          stat.Varint(1, kSourceStat);
          stat.Bytes(5, event->detail);
          x.Bytes(4, stat.data());
        }
        line.Bytes(4, x.data());
      }
      plane.Bytes(3, line.data());
    }
    for (const auto& [name, id] : metadata_ids) {
      proto::WireWriter metadata;
      metadata.Varint(1, static_cast<uint64_t>(id));
      metadata.Bytes(2, name);
      proto::WireWriter entry;
      entry.Varint(1, static_cast<uint64_t>(id));
      entry.Bytes(2, metadata.data());
      plane.Bytes(4, entry.data());
    }
    proto::WireWriter stat_metadata;
    stat_metadata.Varint(1, kSourceStat);
    stat_metadata.Bytes(2, "source");
    proto::WireWriter stat_entry;
    stat_entry.Varint(1, kSourceStat);
    stat_entry.Bytes(2, stat_metadata.data());
    plane.Bytes(5, stat_entry.data());
    space.Bytes(1, plane.data());
  }
  return space.Take();
}

// Only null args are refused: jaxlib's tracer (0.10.2) leaves some args' struct_size unset,
// and every field these functions use is in the version-1 layout.
#define STABLERT_PROFILER_ARGS(fn, args, struct_name) \
  do {                                                \
    if ((args) == nullptr) return ProfilerError(kInvalidArgument, fn ": args is null"); \
  } while (0)

void ErrorDestroy(PLUGIN_Profiler_Error_Destroy_Args* args) {
  if (args) delete args->error;
}

void ErrorMessage(PLUGIN_Profiler_Error_Message_Args* args) {
  if (!args || !args->error) return;
  args->message = args->error->message.data();
  args->message_size = args->error->message.size();
}

PLUGIN_Profiler_Error* ErrorGetCode(PLUGIN_Profiler_Error_GetCode_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Error_GetCode", args, PLUGIN_Profiler_Error_GetCode_Args);
  if (!args->error) return ProfilerError(kInvalidArgument, "PLUGIN_Profiler_Error_GetCode: error is null");
  args->code = args->error->code;
  return nullptr;
}

PLUGIN_Profiler_Error* Create(PLUGIN_Profiler_Create_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Create", args, PLUGIN_Profiler_Create_Args);
  // The options (a serialized tensorflow.ProfileOptions) select nothing StableRT records.
  args->profiler = new (std::nothrow) PLUGIN_Profiler;
  if (!args->profiler) return ProfilerError(8, "PLUGIN_Profiler_Create: out of memory");
  return nullptr;
}

PLUGIN_Profiler_Error* Destroy(PLUGIN_Profiler_Destroy_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Destroy", args, PLUGIN_Profiler_Destroy_Args);
  if (args->profiler && args->profiler->recording) runtime::trace::Stop(args->profiler->since_ns);
  delete args->profiler;
  return nullptr;
}

PLUGIN_Profiler_Error* Start(PLUGIN_Profiler_Start_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Start", args, PLUGIN_Profiler_Start_Args);
  if (!args->profiler) return ProfilerError(kInvalidArgument, "PLUGIN_Profiler_Start: profiler is null");
  if (args->profiler->recording)
    return ProfilerError(kFailedPrecondition, "PLUGIN_Profiler_Start: the profiler is already recording");
  args->profiler->events.clear();
  args->profiler->serialized.clear();
  args->profiler->since_ns = runtime::trace::Start();
  args->profiler->recording = true;
  return nullptr;
}

PLUGIN_Profiler_Error* Stop(PLUGIN_Profiler_Stop_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Stop", args, PLUGIN_Profiler_Stop_Args);
  if (!args->profiler) return ProfilerError(kInvalidArgument, "PLUGIN_Profiler_Stop: profiler is null");
  if (!args->profiler->recording)
    return ProfilerError(kFailedPrecondition, "PLUGIN_Profiler_Stop: the profiler is not recording");
  args->profiler->events = runtime::trace::Stop(args->profiler->since_ns);
  args->profiler->recording = false;
  return nullptr;
}

PLUGIN_Profiler_Error* CollectData(PLUGIN_Profiler_CollectData_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_CollectData", args, PLUGIN_Profiler_CollectData_Args);
  PLUGIN_Profiler* profiler = args->profiler;
  if (!profiler) return ProfilerError(kInvalidArgument, "PLUGIN_Profiler_CollectData: profiler is null");
  if (args->buffer == nullptr) {
    // First call: the bytes, in the profiler's own buffer (valid until the next call or
    // Destroy; jaxlib reads them there), and their size. A caller following the header's
    // two-call form then passes a buffer of its own to have them copied.
    try {
      profiler->serialized = SerializeXSpace(profiler->events);
    } catch (const std::bad_alloc&) {
      return ProfilerError(8, "PLUGIN_Profiler_CollectData: out of memory serializing the trace");
    }
    args->buffer = reinterpret_cast<uint8_t*>(profiler->serialized.data());
    args->buffer_size_in_bytes = profiler->serialized.size();
    return nullptr;
  }
  if (args->buffer == reinterpret_cast<uint8_t*>(profiler->serialized.data())) return nullptr;
  std::memcpy(args->buffer, profiler->serialized.data(), profiler->serialized.size());
  args->buffer_size_in_bytes = profiler->serialized.size();
  return nullptr;
}

PLUGIN_Profiler_Error* Consume(PLUGIN_Profiler_Consume_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Consume", args, PLUGIN_Profiler_Consume_Args);
  if (!args->profiler) return ProfilerError(kInvalidArgument, "PLUGIN_Profiler_Consume: profiler is null");
  try {
    auto result = std::make_unique<PLUGIN_Profiler_ConsumeResult>();
    result->serialized = SerializeXSpace(args->profiler->events);
    args->profiler->events.clear();
    args->result = result.release();
  } catch (const std::bad_alloc&) {
    return ProfilerError(8, "PLUGIN_Profiler_Consume: out of memory serializing the trace");
  }
  return nullptr;
}

void ConsumeResultDestroy(PLUGIN_Profiler_ConsumeResult_Destroy_Args* args) {
  if (args) delete args->consume_result;
}

PLUGIN_Profiler_Error* Serialize(PLUGIN_Profiler_Serialize_Args* args) {
  STABLERT_PROFILER_ARGS("PLUGIN_Profiler_Serialize", args, PLUGIN_Profiler_Serialize_Args);
  if (!args->consume_result)
    return ProfilerError(kInvalidArgument, "PLUGIN_Profiler_Serialize: consume_result is null");
  args->serialized_bytes = reinterpret_cast<const uint8_t*>(args->consume_result->serialized.data());
  args->serialized_size = args->consume_result->serialized.size();
  return nullptr;
}

// jaxlib (0.10.2) requires struct_size to equal the version-1 API's, which ends at
// collect_data; the Consume/Serialize functions stay in the struct for callers that look
// past it, but are not announced.
constexpr size_t kAnnouncedApiSize = PROFILER_STRUCT_SIZE(PLUGIN_Profiler_Api, collect_data);

PLUGIN_Profiler_Api kProfilerApi = {
    kAnnouncedApiSize, nullptr, &ErrorDestroy, &ErrorMessage, &ErrorGetCode, &Create, &Destroy,
    &Start, &Stop, &CollectData, &Consume, &ConsumeResultDestroy, &Serialize,
};

PJRT_Profiler_Extension kProfilerExtension = {
    {PJRT_Profiler_Extension_STRUCT_SIZE, PJRT_Extension_Type_Profiler, nullptr},
    &kProfilerApi,
    0,
};

}  // namespace

PJRT_Extension_Base* ProfilerExtension(PJRT_Extension_Base* next) {
  kProfilerExtension.base.next = next;
  return &kProfilerExtension.base;
}

}  // namespace stablert::capi
