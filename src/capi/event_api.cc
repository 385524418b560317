// PJRT_Event_* entry points.
#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"

namespace stablert::capi {

PJRT_Error* PJRT_Event_Destroy(PJRT_Event_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_Destroy, args);
  delete args->event;
  return nullptr;
}

PJRT_Error* PJRT_Event_IsReady(PJRT_Event_IsReady_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_IsReady, args);
  STABLERT_CAPI_REQUIRE(PJRT_Event_IsReady, args->event);
  args->is_ready = args->event->event->IsReady();
  return nullptr;
}

PJRT_Error* PJRT_Event_Error(PJRT_Event_Error_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_Error, args);
  STABLERT_CAPI_REQUIRE(PJRT_Event_Error, args->event);
  if (!args->event->event->IsReady())
    return ToPjrtError(FailedPrecondition("PJRT_Event_Error: the event is not ready; check PJRT_Event_IsReady first"));
  return ToPjrtError(args->event->event->status());
}

PJRT_Error* PJRT_Event_Await(PJRT_Event_Await_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_Await, args);
  STABLERT_CAPI_REQUIRE(PJRT_Event_Await, args->event);
  return ToPjrtError(args->event->event->Await());
}

PJRT_Error* PJRT_Event_OnReady(PJRT_Event_OnReady_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_OnReady, args);
  STABLERT_CAPI_REQUIRE(PJRT_Event_OnReady, args->event);
  STABLERT_CAPI_REQUIRE(PJRT_Event_OnReady, args->callback);
  STABLERT_CAPI_GUARD(PJRT_Event_OnReady, {
    PJRT_Event_OnReadyCallback callback = args->callback;
    void* user_arg = args->user_arg;
    args->event->event->OnReady([callback, user_arg](const Status& status) { callback(ToPjrtError(status), user_arg); });
    return nullptr;
  })
}

PJRT_Error* PJRT_Event_Create(PJRT_Event_Create_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_Create, args);
  STABLERT_CAPI_GUARD(PJRT_Event_Create, {
    args->event = NewEvent(runtime::Event::Create());
    return nullptr;
  })
}

PJRT_Error* PJRT_Event_Set(PJRT_Event_Set_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Event_Set, args);
  STABLERT_CAPI_REQUIRE(PJRT_Event_Set, args->event);
  STABLERT_CAPI_RETURN_IF_ERROR(CheckCallerErrorCode("PJRT_Event_Set", "error_code", RawEnumValue(args->error_code),
                                                     /*allow_ok=*/true));
  STABLERT_CAPI_GUARD(PJRT_Event_Set, {
    return ToPjrtError(args->event->event->Set(
        CallerStatus(RawEnumValue(args->error_code), args->error_message, args->error_message_size)));
  })
}

}  // namespace stablert::capi
