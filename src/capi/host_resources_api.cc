// Entry points that hand the plugin host-side resources to hold: PJRT_Client_DmaMap /
// DmaUnmap, asynchronous tracking events and execute contexts.
//
// DMA mapping: a StableRT device computes in the host's memory, so there is nothing to pin
// or register with hardware; the client records the ranges so that misuse (an overlapping
// map, an unmap of a range never mapped) is reported as it would be on a device that pins.
#include <memory>
#include <string>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/live_handles.h"

namespace stablert::capi {

Status CheckLiveExecuteContext(const char* function, const PJRT_ExecuteContext* context) {
  if (!context || LiveHandles<PJRT_ExecuteContext>::Of().Check(context)) return OkStatus();
  return InvalidArgument(std::string(function) + ": context is not a live PJRT_ExecuteContext of this plugin");
}

PJRT_Error* PJRT_Client_DmaMap(PJRT_Client_DmaMap_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_DmaMap, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_DmaMap, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_DmaMap, args->data);
  STABLERT_CAPI_GUARD(PJRT_Client_DmaMap, {
    const auto start = reinterpret_cast<uintptr_t>(args->data);
    if (args->size == 0) return ToPjrtError(InvalidArgument("PJRT_Client_DmaMap: size is 0"));
    if (args->size > UINTPTR_MAX - start)
      return ToPjrtError(InvalidArgument("PJRT_Client_DmaMap: data + size overflows the address space"));
    PJRT_Client& client = *args->client;
    std::lock_guard<std::mutex> lock(client.dma_mutex);
    auto next = client.dma_ranges.lower_bound(start);
    const bool overlaps_next = next != client.dma_ranges.end() && next->first < start + args->size;
    const bool overlaps_previous =
        next != client.dma_ranges.begin() && std::prev(next)->first + std::prev(next)->second > start;
    if (overlaps_next || overlaps_previous)
      return ToPjrtError(InvalidArgument("PJRT_Client_DmaMap: [data, data + " + std::to_string(args->size) +
                                         ") overlaps a range already mapped"));
    client.dma_ranges.emplace(start, args->size);
    return nullptr;
  })
}

PJRT_Error* PJRT_Client_DmaUnmap(PJRT_Client_DmaUnmap_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Client_DmaUnmap, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_DmaUnmap, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_DmaUnmap, args->data);
  PJRT_Client& client = *args->client;
  std::lock_guard<std::mutex> lock(client.dma_mutex);
  if (client.dma_ranges.erase(reinterpret_cast<uintptr_t>(args->data)) == 0)
    return ToPjrtError(InvalidArgument("PJRT_Client_DmaUnmap: data is not the start of a range mapped with "
                                       "PJRT_Client_DmaMap on this client"));
  return nullptr;
}

PJRT_Error* PJRT_Device_CreateAsyncTrackingEvent(PJRT_Device_CreateAsyncTrackingEvent_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Device_CreateAsyncTrackingEvent, args);
  STABLERT_CAPI_REQUIRE(PJRT_Device_CreateAsyncTrackingEvent, args->device);
  STABLERT_CAPI_GUARD(PJRT_Device_CreateAsyncTrackingEvent, {
    if (args->description_size > 0 && !args->description)
      return ToPjrtError(InvalidArgument("PJRT_Device_CreateAsyncTrackingEvent: description is null"));
    auto event = std::make_unique<PJRT_AsyncTrackingEvent>();
    event->device = args->device;
    event->description.assign(args->description ? args->description : "", args->description_size);
    LiveHandles<PJRT_AsyncTrackingEvent>::Of().Add(event.get());
    args->event = event.release();
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncTrackingEvent_Destroy(PJRT_AsyncTrackingEvent_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_AsyncTrackingEvent_Destroy, args);
  if (!args->event) return nullptr;
  if (!LiveHandles<PJRT_AsyncTrackingEvent>::Of().Check(args->event, /*remove=*/true))
    return ToPjrtError(InvalidArgument("PJRT_AsyncTrackingEvent_Destroy: event is not a live tracking event "
                                       "(destroyed already, or not made by this plugin)"));
  delete args->event;
  return nullptr;
}

PJRT_Error* PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_ExecuteContext_Create, args);
  STABLERT_CAPI_GUARD(PJRT_ExecuteContext_Create, {
    auto context = std::make_unique<PJRT_ExecuteContext>();
    LiveHandles<PJRT_ExecuteContext>::Of().Add(context.get());
    args->context = context.release();
    return nullptr;
  })
}

PJRT_Error* PJRT_ExecuteContext_Destroy(PJRT_ExecuteContext_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_ExecuteContext_Destroy, args);
  if (!args->context) return nullptr;
  if (!LiveHandles<PJRT_ExecuteContext>::Of().Check(args->context, /*remove=*/true))
    return ToPjrtError(InvalidArgument("PJRT_ExecuteContext_Destroy: context is not a live PJRT_ExecuteContext "
                                       "(destroyed already, or not made by this plugin)"));
  delete args->context;
  return nullptr;
}

}  // namespace stablert::capi
