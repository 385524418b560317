// The conformance suite's tests: the C API contracts frameworks rely on, checked through the
// host library (and through the raw table where a test misuses the API on purpose).
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <cstring>
#include <string_view>
#include <thread>

#include "conformance.h"
#include "host/buffer.h"
#include "host/call.h"
#include "host/executable.h"

namespace stablert::conform {

extern const std::string_view k_add_i32_program;
extern const std::string_view k_donated_add_program;

namespace {

// The pretty-printed form `jax.jit(lambda x, y: x + y).lower(1, 2).as_text()` gives.
constexpr char kAddI32Text[] = R"(module @jit_add attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<i32>) -> (tensor<i32> {jax.result_info = "result"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<i32>
    return %0 : tensor<i32>
  }
}
)";

Status Expect(bool condition, const std::string& what) { return condition ? OkStatus() : Internal(what); }

// A plugin call that must fail: OK if it did with `code`, else a failure naming what happened.
Status ExpectError(const Status& status, StatusCode code, const std::string& call) {
  if (status.ok()) return Internal(call + " succeeded; expected " + std::string(StatusCodeName(code)));
  if (status.code() != code)
    return Internal(call + " failed with " + std::string(StatusCodeName(status.code())) + " (expected " +
                    std::string(StatusCodeName(code)) + "): " + std::string(status.message()));
  return OkStatus();
}

const host::Device& FirstDevice(const Context& c) { return c.client->addressable_devices().at(0); }

StatusOr<host::Buffer> F32Buffer(const Context& c, const std::vector<float>& values, std::vector<int64_t> dims) {
  return host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_F32, std::move(dims), {}, values.data()}, FirstDevice(c));
}

StatusOr<std::shared_ptr<host::LoadedExecutable>> CompileAdd(const Context& c) {
  return host::LoadedExecutable::Compile(c.client, host::Program{std::string(k_add_i32_program)});
}

StatusOr<int32_t> RunAdd(const Context& c, const host::LoadedExecutable& executable, int32_t a, int32_t b) {
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &a}, FirstDevice(c)));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer y,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &b}, FirstDevice(c)));
  STABLERT_ASSIGN_OR_RETURN(host::ExecuteResult result, executable.Execute({{&x, &y}}));
  STABLERT_RETURN_IF_ERROR(result.done.at(0).Await());
  STABLERT_ASSIGN_OR_RETURN(host::Literal sum, result.outputs.at(0).at(0).ToLiteral());
  int32_t value;
  std::memcpy(&value, sum.bytes.data(), 4);
  return value;
}

// --- plugin and client --------------------------------------------------------------------

Status PluginAttributes(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<host::NamedValue> attributes, c.plugin->Attributes());
  for (size_t i = 0; i < attributes.size(); ++i)
    for (size_t j = i + 1; j < attributes.size(); ++j)
      if (attributes[i].name == attributes[j].name) return Internal("attribute '" + attributes[i].name + "' twice");
  for (const host::NamedValue& a : attributes)
    if (a.name == "stablehlo_current_version" || a.name == "stablehlo_minimum_version") {
      const auto* version = std::get_if<std::vector<int64_t>>(&a.value);
      if (!version || version->size() != 3) return Internal(a.name + " is not a list of 3 integers");
    }
  return OkStatus();
}

Status ClientFacts(Context& c) {
  STABLERT_RETURN_IF_ERROR(Expect(!c.client->platform_name().empty(), "empty platform name"));
  STABLERT_RETURN_IF_ERROR(Expect(!c.client->devices().empty(), "no devices"));
  STABLERT_RETURN_IF_ERROR(Expect(!c.client->addressable_devices().empty(), "no addressable devices"));
  // A second client in the same process, destroyed before the first.
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::Client> second, host::Client::Create(c.plugin));
  return Expect(second->platform_name() == c.client->platform_name(), "two clients name different platforms");
}

Status DeviceIdsAndLookup(Context& c) {
  std::vector<int> ids;
  for (const host::Device& d : c.client->devices()) {
    for (int id : ids)
      if (id == d.id) return Internal("device id " + std::to_string(id) + " twice");
    ids.push_back(d.id);
    STABLERT_HOST_ARGS(PJRT_Client_LookupDevice, args);
    args.client = c.client->handle();
    args.id = d.id;
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_Client_LookupDevice, &args));
    if (args.device != d.handle) return Internal("LookupDevice(" + std::to_string(d.id) + ") returned another device");
  }
  for (const host::Device& d : c.client->addressable_devices()) {
    if (d.process_index != c.client->process_index())
      return Internal("addressable device " + std::to_string(d.id) + " is in process " +
                      std::to_string(d.process_index));
  }
  STABLERT_HOST_ARGS(PJRT_Client_LookupDevice, missing);
  missing.client = c.client->handle();
  missing.id = 1 << 30;
  return ExpectError(STABLERT_HOST_CALL(*c.plugin, PJRT_Client_LookupDevice, &missing), StatusCode::kInvalidArgument,
                     "LookupDevice of an unknown id");
}

Status DefaultMemoryIsAddressable(Context& c) {
  for (const host::Device& d : c.client->addressable_devices()) {
    STABLERT_ASSIGN_OR_RETURN(host::Memory memory, c.client->DefaultMemory(d));
    STABLERT_ASSIGN_OR_RETURN(std::vector<host::Memory> memories, c.client->Memories(d));
    bool found = false;
    for (const host::Memory& m : memories) found |= m.handle == memory.handle;
    if (!found) return Internal("device " + std::to_string(d.id) + "'s default memory is not among its memories");
    if (memory.kind.empty()) return Internal("memory without a kind");
  }
  return OkStatus();
}

// --- buffers -------------------------------------------------------------------------------

Status BufferRoundTripF32(Context& c) {
  std::vector<float> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 1e3f;
  values[1] = -0.0f;
  values[2] = INFINITY;
  values[3] = NAN;
  STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, F32Buffer(c, values, {64, 64}));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, buffer.dims());
  STABLERT_RETURN_IF_ERROR(Expect(dims == std::vector<int64_t>{64, 64}, "dimensions changed"));
  STABLERT_ASSIGN_OR_RETURN(PJRT_Buffer_Type type, buffer.element_type());
  STABLERT_RETURN_IF_ERROR(Expect(type == PJRT_Buffer_Type_F32, "element type changed"));
  STABLERT_ASSIGN_OR_RETURN(host::Literal back, buffer.ToLiteral());
  return Expect(std::memcmp(back.bytes.data(), values.data(), values.size() * 4) == 0, "bytes changed (bitwise)");
}

Status BufferRoundTripTypes(Context& c) {
  for (PJRT_Buffer_Type type : {PJRT_Buffer_Type_PRED, PJRT_Buffer_Type_S8, PJRT_Buffer_Type_S16,
                                PJRT_Buffer_Type_S32, PJRT_Buffer_Type_S64, PJRT_Buffer_Type_U8,
                                PJRT_Buffer_Type_U32, PJRT_Buffer_Type_U64, PJRT_Buffer_Type_F16,
                                PJRT_Buffer_Type_BF16, PJRT_Buffer_Type_F64, PJRT_Buffer_Type_C64,
                                PJRT_Buffer_Type_C128}) {
    STABLERT_ASSIGN_OR_RETURN(int64_t bytes, host::DenseBytes(type, {5, 3}));
    std::vector<uint8_t> data(static_cast<size_t>(bytes));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = type == PJRT_Buffer_Type_PRED ? static_cast<uint8_t>(i % 2) : static_cast<uint8_t>(i * 7 % 61);
    StatusOr<host::Buffer> buffer =
        host::Buffer::FromHost(c.client, {type, {5, 3}, {}, data.data()}, FirstDevice(c));
    if (!buffer.ok()) return buffer.status().WithPrefix(host::ElementTypeName(type));
    STABLERT_ASSIGN_OR_RETURN(host::Literal back, buffer->ToLiteral());
    if (back.bytes != data) return Internal(host::ElementTypeName(type) + ": bytes changed");
  }
  return OkStatus();
}

Status BufferFromStridedHost(Context& c) {
  // A 3x2 column-major host array: byte strides {4, 12}.
  std::vector<float> column_major = {1, 2, 3, 4, 5, 6};
  StatusOr<host::Buffer> buffer = host::Buffer::FromHost(
      c.client, {PJRT_Buffer_Type_F32, {3, 2}, {4, 12}, column_major.data()}, FirstDevice(c));
  if (!buffer.ok()) return buffer.status();
  STABLERT_ASSIGN_OR_RETURN(host::Literal back, buffer->ToLiteral());
  std::vector<float> row_major(6);
  std::memcpy(row_major.data(), back.bytes.data(), 24);
  return Expect(row_major == std::vector<float>{1, 4, 2, 5, 3, 6}, "strided host data read wrongly");
}

Status DeletedBufferIsAnError(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, F32Buffer(c, {1, 2, 3}, {3}));
  STABLERT_RETURN_IF_ERROR(buffer.Delete());
  STABLERT_HOST_ARGS(PJRT_Buffer_IsDeleted, args);
  args.buffer = buffer.handle();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_Buffer_IsDeleted, &args));
  STABLERT_RETURN_IF_ERROR(Expect(args.is_deleted, "IsDeleted is false after Delete"));
  StatusOr<host::Literal> read = buffer.ToLiteral();
  if (read.ok()) return Internal("reading a deleted buffer succeeded");
  return OkStatus();
}

Status ReadyFutureOutlivesBuffer(Context& c) {
  host::Future ready = host::Future::Ready();
  {
    STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, F32Buffer(c, {1, 2, 3}, {3}));
    ready = buffer.Ready();
  }
  return ready.Await();
}


// --- events --------------------------------------------------------------------------------

// What an OnReady callback saw: how often it ran and the error code it got (-1: none).
struct CallbackRecord {
  std::mutex mutex;
  std::condition_variable done;
  int calls = 0;
  int code = -1;
  const PJRT_Api* api = nullptr;
};

void RecordCallback(PJRT_Error* error, void* user_arg) {
  auto* record = static_cast<CallbackRecord*>(user_arg);
  int code = -1;
  if (error) {
    PJRT_Error_GetCode_Args get{};
    get.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
    get.error = error;
    code = record->api->PJRT_Error_GetCode(&get) == nullptr ? static_cast<int>(get.code) : -2;
    PJRT_Error_Destroy_Args destroy{};
    destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
    destroy.error = error;
    record->api->PJRT_Error_Destroy(&destroy);
  }
  std::lock_guard<std::mutex> lock(record->mutex);
  ++record->calls;
  record->code = code;
  record->done.notify_all();
}

// Waits up to 30 s for the first call, then 100 ms more for a wrong second one.
Status ExpectOneSuccessfulCall(CallbackRecord& record, const std::string& what) {
  std::unique_lock<std::mutex> lock(record.mutex);
  if (!record.done.wait_for(lock, std::chrono::seconds(30), [&] { return record.calls > 0; }))
    return Internal(what + ": the OnReady callback did not run within 30 s");
  record.done.wait_for(lock, std::chrono::milliseconds(100), [&] { return record.calls > 1; });
  if (record.calls != 1) return Internal(what + ": the OnReady callback ran " + std::to_string(record.calls) + " times");
  if (record.code != -1) return Internal(what + ": the OnReady callback got error code " + std::to_string(record.code));
  return OkStatus();
}

Status OnReady(const Context& c, PJRT_Event* event, CallbackRecord& record) {
  record.api = c.plugin->api();
  STABLERT_HOST_ARGS(PJRT_Event_OnReady, args);
  args.event = event;
  args.callback = &RecordCallback;
  args.user_arg = &record;
  return STABLERT_HOST_CALL(*c.plugin, PJRT_Event_OnReady, &args);
}

void DestroyEvent(const Context& c, PJRT_Event* event) {
  STABLERT_HOST_ARGS(PJRT_Event_Destroy, args);
  args.event = event;
  STABLERT_HOST_CALL(*c.plugin, PJRT_Event_Destroy, &args).IgnoreError();
}

Status EventAwaitAndOnReady(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, F32Buffer(c, {1, 2, 3}, {3}));
  STABLERT_HOST_ARGS(PJRT_Buffer_ReadyEvent, ready);
  ready.buffer = buffer.handle();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_Buffer_ReadyEvent, &ready));
  STABLERT_HOST_ARGS(PJRT_Event_Await, await);
  await.event = ready.event;
  Status awaited = STABLERT_HOST_CALL(*c.plugin, PJRT_Event_Await, &await);
  STABLERT_HOST_ARGS(PJRT_Event_IsReady, is_ready);
  is_ready.event = ready.event;
  Status queried = STABLERT_HOST_CALL(*c.plugin, PJRT_Event_IsReady, &is_ready);
  // OnReady on an event that is already complete runs the callback (at once or soon).
  CallbackRecord record;
  Status registered = OnReady(c, ready.event, record);
  Status called = registered.ok() ? ExpectOneSuccessfulCall(record, "OnReady after Await") : registered;
  DestroyEvent(c, ready.event);
  STABLERT_RETURN_IF_ERROR(awaited.WithPrefix("Await"));
  STABLERT_RETURN_IF_ERROR(queried);
  STABLERT_RETURN_IF_ERROR(Expect(is_ready.is_ready, "IsReady is false after Await returned"));
  return called;
}

Status EventOnReadyThenDestroy(Context& c) {
  // An execution's completion event: OnReady registered, the event destroyed at once (as JAX
  // does when it turns an event into a future); the callback must still run, once, with OK.
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  int32_t a = 1, b = 2;
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &a}, FirstDevice(c)));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer y,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &b}, FirstDevice(c)));
  PJRT_Buffer* arguments[2] = {x.handle(), y.handle()};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_lists[1] = {outputs};
  PJRT_Event* done[1] = {nullptr};
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_Execute, execute);
  execute.executable = executable->handle();
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 2;
  execute.output_lists = output_lists;
  execute.device_complete_events = done;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_LoadedExecutable_Execute, &execute));
  host::Buffer out(c.client, outputs[0]);
  if (!done[0]) return Internal("Execute returned no completion event");
  CallbackRecord record;
  Status registered = OnReady(c, done[0], record);
  DestroyEvent(c, done[0]);
  STABLERT_RETURN_IF_ERROR(registered);
  STABLERT_RETURN_IF_ERROR(ExpectOneSuccessfulCall(record, "OnReady, then Destroy"));
  STABLERT_ASSIGN_OR_RETURN(host::Literal sum, out.ToLiteral());
  int32_t value;
  std::memcpy(&value, sum.bytes.data(), 4);
  return Expect(value == 3, "1 + 2 = " + std::to_string(value));
}

// --- donation and deleted inputs -----------------------------------------------------------

Status DonatedInputIsConsumed(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable,
                            host::LoadedExecutable::Compile(c.client, host::Program{std::string(k_donated_add_program)}));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x, F32Buffer(c, {1, 2, 3}, {3}));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer y, F32Buffer(c, {10, 20, 30}, {3}));
  // Argument 0 is donated by the program and not listed as non-donatable: after Execute the
  // caller's buffer is consumed (deleted), the outputs correct.
  STABLERT_ASSIGN_OR_RETURN(host::ExecuteResult result, executable->Execute({{&x, &y}}));
  STABLERT_RETURN_IF_ERROR(result.done.at(0).Await());
  STABLERT_ASSIGN_OR_RETURN(host::Literal sum, result.outputs.at(0).at(0).ToLiteral());
  std::vector<float> values(3);
  std::memcpy(values.data(), sum.bytes.data(), 12);
  STABLERT_RETURN_IF_ERROR(Expect(values == std::vector<float>{11, 22, 33}, "wrong sum"));
  STABLERT_HOST_ARGS(PJRT_Buffer_IsDeleted, deleted);
  deleted.buffer = x.handle();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_Buffer_IsDeleted, &deleted));
  STABLERT_RETURN_IF_ERROR(Expect(deleted.is_deleted, "the donated input is not marked deleted"));
  STABLERT_ASSIGN_OR_RETURN(host::Literal kept, y.ToLiteral());
  std::memcpy(values.data(), kept.bytes.data(), 12);
  return Expect(values == std::vector<float>{10, 20, 30}, "the undonated input changed");
}

Status DeletedInputToExecuteIsAnError(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  int32_t one = 1;
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &one}, FirstDevice(c)));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer y,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &one}, FirstDevice(c)));
  STABLERT_RETURN_IF_ERROR(y.Delete());
  StatusOr<host::ExecuteResult> result = executable->Execute({{&x, &y}});
  Status status = result.status();
  // A plugin may refuse at Execute or report the error through the completion event.
  if (result.ok()) status = result->done.at(0).Await();
  if (status.ok()) return Internal("Execute with a deleted input succeeded");
  if (status.code() != StatusCode::kInvalidArgument && status.code() != StatusCode::kFailedPrecondition)
    return Internal("failed with " + std::string(StatusCodeName(status.code())) +
                    " (expected INVALID_ARGUMENT or FAILED_PRECONDITION): " + std::string(status.message()));
  return OkStatus();
}

// --- host-to-device misuse -----------------------------------------------------------------

// BufferFromHostBuffer of 3 floats with the given dims / strides / type; the Status.
Status RawFromHost(const Context& c, PJRT_Buffer_Type type, std::vector<int64_t> dims,
                   std::optional<std::vector<int64_t>> strides) {
  static const float data[16] = {};
  STABLERT_HOST_ARGS(PJRT_Client_BufferFromHostBuffer, args);
  args.client = c.client->handle();
  args.data = data;
  args.type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  if (strides) {
    args.byte_strides = strides->data();
    args.num_byte_strides = strides->size();
  }
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = FirstDevice(c).handle;
  Status status = STABLERT_HOST_CALL(*c.plugin, PJRT_Client_BufferFromHostBuffer, &args);
  if (status.ok()) {
    host::Buffer adopted(c.client, args.buffer);
    if (args.done_with_host_buffer) DestroyEvent(c, args.done_with_host_buffer);
  }
  return status;
}

Status WrongStrideCountIsRejected(Context& c) {
  return ExpectError(RawFromHost(c, PJRT_Buffer_Type_F32, {2, 2}, std::vector<int64_t>{4}), StatusCode::kInvalidArgument,
                     "1 byte stride for 2 dimensions");
}

Status NegativeDimensionIsRejected(Context& c) {
  return ExpectError(RawFromHost(c, PJRT_Buffer_Type_F32, {-3}, std::nullopt), StatusCode::kInvalidArgument,
                     "dimension -3");
}

Status InvalidElementTypeIsRejected(Context& c) {
  return ExpectError(RawFromHost(c, PJRT_Buffer_Type_INVALID, {3}, std::nullopt), StatusCode::kInvalidArgument,
                     "element type INVALID");
}

// --- compile and execute -------------------------------------------------------------------

Status ExecuteAdd(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  STABLERT_RETURN_IF_ERROR(Expect(executable->num_outputs() == 1, "add has " +
                                                                       std::to_string(executable->num_outputs()) +
                                                                       " outputs"));
  STABLERT_ASSIGN_OR_RETURN(int32_t sum, RunAdd(c, *executable, 40, 2));
  return Expect(sum == 42, "40 + 2 = " + std::to_string(sum));
}

Status ExecuteConcurrently(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  std::vector<StatusOr<int32_t>> sums(8, Internal("not run"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { sums[static_cast<size_t>(t)] = RunAdd(c, *executable, t, 100); });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    STABLERT_RETURN_IF_ERROR(sums[static_cast<size_t>(t)].status());
    if (*sums[static_cast<size_t>(t)] != t + 100) return Internal("thread " + std::to_string(t) + " got a wrong sum");
  }
  return OkStatus();
}

Status ExecuteWrongArgumentCount(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  int32_t one = 1;
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &one}, FirstDevice(c)));
  return ExpectError(executable->Execute({{&x}}).status(), StatusCode::kInvalidArgument,
                     "Execute with 1 argument for 2 parameters");
}

Status SerializeDeserializeRoundTrip(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  STABLERT_ASSIGN_OR_RETURN(std::string bytes, executable->Serialize());
  STABLERT_HOST_ARGS(PJRT_Executable_DeserializeAndLoad, args);
  args.client = c.client->handle();
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_Executable_DeserializeAndLoad, &args));
  // Ownership of the loaded executable goes to a LoadedExecutable-like guard.
  struct Guard {
    const host::Plugin& plugin;
    PJRT_LoadedExecutable* executable;
    ~Guard() {
      STABLERT_HOST_ARGS(PJRT_LoadedExecutable_Destroy, destroy);
      destroy.executable = executable;
      STABLERT_HOST_CALL(plugin, PJRT_LoadedExecutable_Destroy, &destroy).IgnoreError();
    }
  } guard{*c.plugin, args.loaded_executable};
  int32_t a = 5, b = 6;
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &a}, FirstDevice(c)));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer y,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &b}, FirstDevice(c)));
  PJRT_Buffer* arguments[2] = {x.handle(), y.handle()};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_lists[1] = {outputs};
  PJRT_Event* done[1] = {nullptr};
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  STABLERT_HOST_ARGS(PJRT_LoadedExecutable_Execute, execute);
  execute.executable = args.loaded_executable;
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 2;
  execute.output_lists = output_lists;
  execute.device_complete_events = done;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*c.plugin, PJRT_LoadedExecutable_Execute, &execute));
  host::Buffer out(c.client, outputs[0]);
  STABLERT_RETURN_IF_ERROR(host::Future::FromEvent(c.plugin, done[0], "execution").Await());
  STABLERT_ASSIGN_OR_RETURN(host::Literal sum, out.ToLiteral());
  int32_t value;
  std::memcpy(&value, sum.bytes.data(), 4);
  return Expect(value == 11, "the deserialized executable computed 5 + 6 = " + std::to_string(value));
}

Status NonDonatableInputSurvives(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable,
                            host::LoadedExecutable::Compile(c.client, host::Program{std::string(k_donated_add_program)}));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer x, F32Buffer(c, {1, 2, 3}, {3}));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer y, F32Buffer(c, {10, 20, 30}, {3}));
  // Argument 0 is donated by the program; listed as non-donatable it must stay readable.
  STABLERT_ASSIGN_OR_RETURN(host::ExecuteResult result, executable->Execute({{&x, &y}}, {0}));
  STABLERT_RETURN_IF_ERROR(result.done.at(0).Await());
  STABLERT_ASSIGN_OR_RETURN(host::Literal kept, x.ToLiteral());
  std::vector<float> values(3);
  std::memcpy(values.data(), kept.bytes.data(), 12);
  STABLERT_RETURN_IF_ERROR(Expect(values == std::vector<float>{1, 2, 3}, "the non-donatable input changed"));
  STABLERT_ASSIGN_OR_RETURN(host::Literal sum, result.outputs.at(0).at(0).ToLiteral());
  std::memcpy(values.data(), sum.bytes.data(), 12);
  return Expect(values == std::vector<float>{11, 22, 33}, "wrong sum");
}

Status CompileMlirText(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable,
                            host::LoadedExecutable::Compile(c.client, host::Program{kAddI32Text}));
  STABLERT_ASSIGN_OR_RETURN(int32_t sum, RunAdd(c, *executable, 3, 4));
  return Expect(sum == 7, "3 + 4 = " + std::to_string(sum));
}

Status MalformedProgramIsInvalidArgument(Context& c) {
  return ExpectError(host::LoadedExecutable::Compile(c.client, host::Program{"\x01\x02 not a program"}).status(),
                     StatusCode::kInvalidArgument, "Compile of malformed bytes");
}

// --- misuse --------------------------------------------------------------------------------

Status ShortArgsAreRejected(Context& c) {
  // An args struct smaller than any version of it: the plugin must refuse, not read past it.
  STABLERT_HOST_ARGS(PJRT_Client_PlatformName, args);
  args.struct_size = sizeof(size_t);
  args.client = c.client->handle();
  return ExpectError(STABLERT_HOST_CALL(*c.plugin, PJRT_Client_PlatformName, &args), StatusCode::kInvalidArgument,
                     "PlatformName with struct_size 8");
}

Status NullClientIsAnError(Context& c) {
  STABLERT_HOST_ARGS(PJRT_Client_PlatformName, args);
  args.client = nullptr;
  return ExpectError(STABLERT_HOST_CALL(*c.plugin, PJRT_Client_PlatformName, &args), StatusCode::kInvalidArgument,
                     "PlatformName of a null client");
}

Status DestroyedBufferIsAnError(Context& c) {
  PJRT_Buffer* dangling = nullptr;
  {
    STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, F32Buffer(c, {1}, {1}));
    dangling = buffer.handle();
  }
  STABLERT_HOST_ARGS(PJRT_Buffer_ElementType, args);
  args.buffer = dangling;
  return ExpectError(STABLERT_HOST_CALL(*c.plugin, PJRT_Buffer_ElementType, &args), StatusCode::kInvalidArgument,
                     "ElementType of a destroyed buffer");
}

Status ForeignBufferIsAnError(Context& c) {
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::LoadedExecutable> executable, CompileAdd(c));
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<host::Client> other, host::Client::Create(c.plugin));
  int32_t one = 1;
  STABLERT_ASSIGN_OR_RETURN(host::Buffer mine,
                            host::Buffer::FromHost(c.client, {PJRT_Buffer_Type_S32, {}, {}, &one}, FirstDevice(c)));
  STABLERT_ASSIGN_OR_RETURN(host::Buffer foreign, host::Buffer::FromHost(other, {PJRT_Buffer_Type_S32, {}, {}, &one},
                                                                         other->addressable_devices().at(0)));
  return ExpectError(executable->Execute({{&mine, &foreign}}).status(), StatusCode::kInvalidArgument,
                     "Execute with a buffer of another client");
}

Status OverflowingDimensionsAreRejected(Context& c) {
  float value = 0;
  STABLERT_HOST_ARGS(PJRT_Client_BufferFromHostBuffer, args);
  int64_t dims[2] = {int64_t{1} << 40, int64_t{1} << 40};
  args.client = c.client->handle();
  args.data = &value;
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims;
  args.num_dims = 2;
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = FirstDevice(c).handle;
  Status status = STABLERT_HOST_CALL(*c.plugin, PJRT_Client_BufferFromHostBuffer, &args);
  if (status.ok()) {
    host::Buffer adopted(c.client, args.buffer);
    return Internal("a 2^80-element buffer was created");
  }
  if (status.code() != StatusCode::kInvalidArgument && status.code() != StatusCode::kResourceExhausted)
    return Internal("failed with " + std::string(StatusCodeName(status.code())) +
                    " (expected INVALID_ARGUMENT or RESOURCE_EXHAUSTED)");
  return OkStatus();
}

}  // namespace

const std::vector<TestCase>& AllTests() {
  static const std::vector<TestCase> tests = {
      {"plugin.attributes", "attributes have unique names; StableHLO versions are 3 integers", PluginAttributes},
      {"client.facts", "platform name, devices, a second client", ClientFacts},
      {"client.device_ids_and_lookup", "unique ids, LookupDevice finds each, unknown id is INVALID_ARGUMENT",
       DeviceIdsAndLookup},
      {"device.default_memory", "each device's default memory is one of its memories", DefaultMemoryIsAddressable},
      {"buffer.round_trip_f32", "64x64 f32 with -0, inf, NaN back bitwise", BufferRoundTripF32},
      {"buffer.round_trip_types", "13 element types back bytewise", BufferRoundTripTypes},
      {"buffer.strided_host_input", "column-major host data via byte strides", BufferFromStridedHost},
      {"buffer.deleted_is_error", "IsDeleted after Delete; reading it fails", DeletedBufferIsAnError},
      {"event.ready_future_outlives_buffer", "a ready event awaited after its buffer is destroyed",
       ReadyFutureOutlivesBuffer},
      {"event.await_and_on_ready", "Await, IsReady, and OnReady on a completed event (called once, OK)",
       EventAwaitAndOnReady},
      {"event.on_ready_then_destroy", "OnReady on an execution's event destroyed at once still runs, once",
       EventOnReadyThenDestroy},
      {"execute.add", "bytecode compiled and run: 40 + 2", ExecuteAdd},
      {"execute.concurrent", "one executable run from 8 threads at once", ExecuteConcurrently},
      {"execute.wrong_argument_count", "INVALID_ARGUMENT, not a crash", ExecuteWrongArgumentCount},
      {"execute.serialize_round_trip", "Serialize, DeserializeAndLoad, run", SerializeDeserializeRoundTrip},
      {"execute.non_donatable_input", "a donated parameter listed non-donatable stays readable",
       NonDonatableInputSurvives},
      {"execute.donated_input_consumed", "a donated input not listed non-donatable is deleted by Execute",
       DonatedInputIsConsumed},
      {"execute.deleted_input", "a deleted buffer passed to Execute: INVALID_ARGUMENT or FAILED_PRECONDITION",
       DeletedInputToExecuteIsAnError},
      {"compile.mlir_text", "StableHLO as MLIR text (format mlir)", CompileMlirText},
      {"compile.malformed_program", "INVALID_ARGUMENT for bytes that are no program", MalformedProgramIsInvalidArgument},
      {"misuse.short_args", "an args struct_size smaller than any version is INVALID_ARGUMENT", ShortArgsAreRejected},
      {"misuse.null_client", "a null client handle is INVALID_ARGUMENT", NullClientIsAnError},
      {"misuse.destroyed_buffer", "a destroyed buffer's handle is INVALID_ARGUMENT", DestroyedBufferIsAnError},
      {"misuse.foreign_buffer", "a buffer of another client passed to Execute is INVALID_ARGUMENT",
       ForeignBufferIsAnError},
      {"misuse.host_buffer_stride_count", "BufferFromHostBuffer with 1 byte stride for 2 dimensions: INVALID_ARGUMENT",
       WrongStrideCountIsRejected},
      {"misuse.host_buffer_negative_dimension", "BufferFromHostBuffer with dimension -3: INVALID_ARGUMENT",
       NegativeDimensionIsRejected},
      {"misuse.host_buffer_invalid_type", "BufferFromHostBuffer with element type INVALID: INVALID_ARGUMENT",
       InvalidElementTypeIsRejected},
      {"misuse.overflowing_dimensions", "2^80 elements: INVALID_ARGUMENT or RESOURCE_EXHAUSTED",
       OverflowingDimensionsAreRejected},
  };
  return tests;
}

}  // namespace stablert::conform
