// Buffers on another buffer's bytes: PJRT_Buffer_Bitcast (a second buffer of another type
// or shape over the same bytes), PJRT_Buffer_DonateWithControlDependency (the bytes handed
// to a new buffer that becomes ready only when the caller says so) and alias buffers
// (PJRT_Client_CreateAliasBuffer: a buffer whose bytes another buffer supplies later,
// through PJRT_Client_FulfillAliasBuffer).
#include <memory>
#include <string>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/layout.h"
#include "capi/live_handles.h"
#include "runtime/array_layout.h"

namespace stablert::capi {
namespace {

// What PJRT_Buffer_DonateWithControlDependency hands the caller: the event its callback
// sets. The callback frees it.
struct ControlDependency {
  runtime::EventRef event;
};

void FulfilControlDependency(PJRT_Buffer_DonateWithControlDependency_Callback_Args* args) {
  if (!args || !args->callback_data) return;
  auto* dependency = static_cast<ControlDependency*>(args->callback_data);
  dependency->event->Set(CallerStatus(RawEnumValue(args->error_code), args->error_message, args->error_message_size))
      .IgnoreError();
  delete dependency;
}

}  // namespace

PJRT_Error* PJRT_Buffer_Bitcast(PJRT_Buffer_Bitcast_Args* args) {
  constexpr const char* kFn = "PJRT_Buffer_Bitcast";
  STABLERT_CAPI_ARGS(PJRT_Buffer_Bitcast, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_Bitcast, args->buffer);
  STABLERT_CAPI_GUARD(PJRT_Buffer_Bitcast, {
    const runtime::Buffer& source = *args->buffer->buffer;
    STABLERT_CAPI_ASSIGN_OR_RETURN(DType dtype, ToDType(kFn, RawEnumValue(args->element_type)));
    STABLERT_CAPI_ASSIGN_OR_RETURN(Dims dims, ToDims(kFn, args->dims, args->num_dims));
    STABLERT_CAPI_ASSIGN_OR_RETURN(int64_t bytes, ArrayByteSize(kFn, dims, dtype));
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> layout, DeviceLayoutOrder(kFn, args->device_layout, dims, dtype));
    if (static_cast<size_t>(bytes) != source.size_in_bytes())
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": the new shape holds " + std::to_string(bytes) +
                                         " bytes, the buffer " + std::to_string(source.size_in_bytes()) +
                                         "; a bitcast keeps the size"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::shared_ptr<runtime::BufferStorage> storage, source.storage(kFn));
    storage->MarkShared();
    // The bytes stay where they are; `layout` says in which dimension order the new shape reads them.
    auto bitcast = std::make_unique<runtime::Buffer>(dtype, std::move(dims), source.device(), source.memory(),
                                                     std::move(storage), source.ready_event(), std::move(layout));
    args->out_buffer = NewBufferHandle(std::move(bitcast), args->buffer->client);
    return nullptr;
  })
}

PJRT_Error* PJRT_Buffer_DonateWithControlDependency(PJRT_Buffer_DonateWithControlDependency_Args* args) {
  constexpr const char* kFn = "PJRT_Buffer_DonateWithControlDependency";
  STABLERT_CAPI_ARGS(PJRT_Buffer_DonateWithControlDependency, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_DonateWithControlDependency, args->buffer);
  STABLERT_CAPI_GUARD(PJRT_Buffer_DonateWithControlDependency, {
    runtime::Buffer& source = *args->buffer->buffer;
    if (source.HasExternalReferences())
      return ToPjrtError(FailedPrecondition(std::string(kFn) +
                                            ": the buffer has external references (a zero-copy view holds its bytes)"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::shared_ptr<runtime::BufferStorage> storage, source.storage(kFn));
    auto dependency = std::make_unique<ControlDependency>();
    dependency->event = runtime::Event::Create();
    runtime::EventRef ready = runtime::Event::AfterAll({source.ready_event(), dependency->event});
    auto donated = std::make_unique<runtime::Buffer>(source.dtype(), source.dims(), source.device(), source.memory(),
                                                     std::move(storage), std::move(ready), source.layout());
    // Whoever writes into the bytes through the new buffer waits for the old one's readers.
    for (runtime::EventRef& usage : source.TakeUsages()) donated->AddUsage(std::move(usage));
    source.Delete();
    args->out_buffer = NewBufferHandle(std::move(donated), args->buffer->client);
    args->callback_data = dependency.release();
    args->dependency_ready_callback = &FulfilControlDependency;
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_CreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Client_CreateAliasBuffer";
  STABLERT_CAPI_ARGS(PJRT_Client_CreateAliasBuffer, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateAliasBuffer, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateAliasBuffer, args->memory);
  STABLERT_CAPI_GUARD(PJRT_Client_CreateAliasBuffer, {
    STABLERT_CAPI_RETURN_IF_ERROR(CheckOwnMemory(kFn, "memory", args->client, args->memory));
    STABLERT_CAPI_ASSIGN_OR_RETURN(DType dtype, ToDType(kFn, RawEnumValue(args->shape_element_type)));
    STABLERT_CAPI_ASSIGN_OR_RETURN(Dims dims, ToDims(kFn, args->shape_dims, args->shape_num_dims));
    STABLERT_CAPI_ASSIGN_OR_RETURN(int64_t bytes, ArrayByteSize(kFn, dims, dtype));
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> layout, DeviceLayoutOrder(kFn, args->shape_layout, dims, dtype));
    runtime::MemorySpace* memory = AsMemoryHandle(args->memory)->memory;
    if (memory->devices().empty())
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": memory has no device"));
    auto promise = std::make_unique<PJRT_FulfillAliasBufferCallback>();
    promise->client = args->client;
    promise->storage = runtime::BufferStorage::Deferred(static_cast<size_t>(bytes));
    promise->ready = runtime::Event::Create();
    promise->dtype = dtype;
    promise->dims = dims;
    promise->layout = runtime::NormalizeLayout(layout);
    auto alias = std::make_unique<runtime::Buffer>(dtype, std::move(dims), memory->devices().front(), memory,
                                                   promise->storage, promise->ready, std::move(layout));
    args->alias_buffer = NewBufferHandle(std::move(alias), args->client);
    LiveHandles<PJRT_FulfillAliasBufferCallback>::Of().Add(promise.get());
    args->fulfill_alias_buffer_cb = promise.release();
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_FulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Client_FulfillAliasBuffer";
  STABLERT_CAPI_ARGS(PJRT_Client_FulfillAliasBuffer, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_FulfillAliasBuffer, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_FulfillAliasBuffer, args->fulfill_alias_buffer_cb);
  STABLERT_CAPI_GUARD(PJRT_Client_FulfillAliasBuffer, {
    PJRT_FulfillAliasBufferCallback* promise = args->fulfill_alias_buffer_cb;
    auto& live = LiveHandles<PJRT_FulfillAliasBufferCallback>::Of();
    if (!live.Check(promise))
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": fulfill_alias_buffer_cb is not a live promise "
                                         "(fulfilled already, or not made by this plugin)"));
    if (promise->client != args->client)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": fulfill_alias_buffer_cb belongs to another client"));
    const int64_t code = RawEnumValue(args->status_code);
    STABLERT_CAPI_RETURN_IF_ERROR(CheckCallerErrorCode(kFn, "status_code", code, /*allow_ok=*/true));
    if (code != PJRT_Error_Code_OK) {
      // The alias fails with the caller's error; the promise is consumed.
      promise->ready->Set(CallerStatus(code, args->error_message, args->error_message_size)).IgnoreError();
      live.Check(promise, /*remove=*/true);
      delete promise;
      return nullptr;
    }
    STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Client_FulfillAliasBuffer, args->buffer);
    const runtime::Buffer& target = *args->buffer->buffer;
    if (target.dtype() != promise->dtype || target.dims() != promise->dims)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": buffer is " + std::string(DTypeName(target.dtype())) +
                                         DimsToString(target.dims()) + ", the alias " +
                                         std::string(DTypeName(promise->dtype)) + DimsToString(promise->dims)));
    if (target.layout() != promise->layout)
      return ToPjrtError(InvalidArgument(
          std::string(kFn) + ": buffer has layout " +
          runtime::LayoutToString(target.layout(), target.dims().size()) + ", the alias " +
          runtime::LayoutToString(promise->layout, promise->dims.size()) +
          " (minor_to_major); the alias takes the buffer's bytes as they are, so the layouts must match"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::shared_ptr<runtime::BufferStorage> storage, target.storage(kFn));
    storage->MarkShared();
    promise->storage->Bind(std::move(storage));
    runtime::EventRef ready = promise->ready;
    target.ready_event()->OnReady([ready](const Status& status) { ready->Set(status).IgnoreError(); });
    live.Check(promise, /*remove=*/true);
    delete promise;
    return nullptr;
  })
}

}  // namespace stablert::capi
