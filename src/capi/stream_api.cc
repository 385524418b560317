// PJRT_CopyToDeviceStream_* entry points and the host transfer handler built from
// PJRT_ExecuteOptions (host_transfers.h).
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/host_transfers.h"

namespace stablert::capi {

// What one recv step expects: `total` bytes into `destination`. Shared by the step (which
// waits on it) and the stream handle (which the recv callback owns).
struct StreamState {
  std::mutex mutex;
  std::condition_variable changed;
  void* destination;  // null once the step stopped waiting
  int64_t total;
  int64_t current = 0;
  bool destroyed = false;
};

}  // namespace stablert::capi

struct PJRT_CopyToDeviceStream {
  std::shared_ptr<stablert::capi::StreamState> state;
};

namespace stablert::capi {
namespace {

PJRT_Error* MakeCallbackError(PJRT_Error_Code code, const char* message, size_t message_size) {
  // An error was reported: OK and codes PJRT does not define become UNKNOWN. This callback
  // returns to host code that cannot take an exception.
  int64_t raw = RawEnumValue(code);
  if (raw == PJRT_Error_Code_OK || !IsValidErrorCode(raw)) raw = PJRT_Error_Code_UNKNOWN;
  try {
    return ToPjrtError(CallerStatus(raw, message, message_size));
  } catch (...) {
    return ExceptionToPjrtError("PJRT_CallbackError", std::current_exception());
  }
}

void FreeChunk(void* data, void*) { std::free(data); }

// The status a callback returned, the error freed.
Status TakeError(PJRT_Error* error) {
  if (error == nullptr) return OkStatus();
  Status status = FromPjrtError(error);
  PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  ErrorDestroy(&destroy);
  return status;
}

class CallbackHostTransfers final : public runtime::HostTransferHandler {
 public:
  // [device] -> channel -> callback
  std::vector<std::map<int64_t, PJRT_SendCallbackInfo>> sends;
  std::vector<std::map<int64_t, PJRT_RecvCallbackInfo>> recvs;

  Status Send(int device, int64_t channel, const void* data, size_t size) const override {
    if (device < 0 || static_cast<size_t>(device) >= sends.size() || !sends[device].count(channel))
      return Missing("send", device, channel, sends);
    const PJRT_SendCallbackInfo& info = sends[device].at(channel);
    void* copy = std::malloc(size > 0 ? size : 1);
    if (copy == nullptr) return ResourceExhausted("cannot allocate " + std::to_string(size) + " bytes to send");
    if (size > 0) std::memcpy(copy, data, size);
    PJRT_Chunk chunk{copy, size, &FreeChunk, nullptr};
    PJRT_CallbackError error_fn = &MakeCallbackError;
    return TakeError(info.send_callback(&chunk, &error_fn, size, /*done=*/true, info.user_arg));
  }

  Status Recv(int device, int64_t channel, void* data, size_t size) const override {
    if (device < 0 || static_cast<size_t>(device) >= recvs.size() || !recvs[device].count(channel))
      return Missing("recv", device, channel, recvs);
    const PJRT_RecvCallbackInfo& info = recvs[device].at(channel);
    auto state = std::make_shared<StreamState>();
    state->destination = data;
    state->total = static_cast<int64_t>(size);
    info.recv_callback(new PJRT_CopyToDeviceStream{state}, info.user_arg);  // the callback owns the stream
    std::unique_lock<std::mutex> lock(state->mutex);
    state->changed.wait(lock, [&] { return state->current == state->total || state->destroyed; });
    state->destination = nullptr;
    if (state->current == state->total) return OkStatus();
    return Internal("the host closed the stream of channel " + std::to_string(channel) + " after " +
                    std::to_string(state->current) + " of " + std::to_string(state->total) + " bytes");
  }

 private:
  template <typename Maps>
  static Status Missing(const char* what, int device, int64_t channel, const Maps& maps) {
    std::string served;
    if (device >= 0 && static_cast<size_t>(device) < maps.size())
      for (const auto& [id, info] : maps[device]) served += (served.empty() ? "" : ", ") + std::to_string(id);
    return FailedPrecondition(std::string("no host ") + what + " callback for channel " + std::to_string(channel) +
                              " on device " + std::to_string(device) + " (the execution's " + what +
                              " callbacks serve channels: " + (served.empty() ? "none" : served) + ")");
  }
};

template <typename Info, typename Fn>
Status CopyLists(const char* field, Info** lists, size_t count, size_t num_devices,
                 std::vector<std::map<int64_t, Info>>& into, Fn Info::*callback) {
  into.resize(num_devices);
  if (count == 0) return OkStatus();
  if (lists == nullptr) return InvalidArgument(std::string("PJRT_ExecuteOptions: ") + field + " is null");
  for (size_t d = 0; d < num_devices; ++d) {
    if (lists[d] == nullptr)
      return InvalidArgument(std::string("PJRT_ExecuteOptions: ") + field + "[" + std::to_string(d) + "] is null");
    for (size_t i = 0; i < count; ++i) {
      const Info& info = lists[d][i];
      if (info.*callback == nullptr)
        return InvalidArgument(std::string("PJRT_ExecuteOptions: ") + field + "[" + std::to_string(d) + "][" +
                               std::to_string(i) + "] has no callback");
      if (!into[d].emplace(info.channel_id, info).second)
        return InvalidArgument(std::string("PJRT_ExecuteOptions: ") + field + "[" + std::to_string(d) +
                               "] names channel " + std::to_string(info.channel_id) + " twice");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::shared_ptr<const runtime::HostTransferHandler>> HostTransfersFromOptions(
    const PJRT_ExecuteOptions* options, size_t num_devices) {
  if (options == nullptr ||
      options->struct_size < offsetof(PJRT_ExecuteOptions, num_recv_ops) + sizeof(options->num_recv_ops) ||
      (options->num_send_ops == 0 && options->num_recv_ops == 0))
    return std::shared_ptr<const runtime::HostTransferHandler>();
  auto handler = std::make_shared<CallbackHostTransfers>();
  STABLERT_RETURN_IF_ERROR(CopyLists("send_callbacks", options->send_callbacks, options->num_send_ops, num_devices,
                                     handler->sends, &PJRT_SendCallbackInfo::send_callback));
  STABLERT_RETURN_IF_ERROR(CopyLists("recv_callbacks", options->recv_callbacks, options->num_recv_ops, num_devices,
                                     handler->recvs, &PJRT_RecvCallbackInfo::recv_callback));
  return std::shared_ptr<const runtime::HostTransferHandler>(std::move(handler));
}

PJRT_Error* PJRT_CopyToDeviceStream_Destroy(PJRT_CopyToDeviceStream_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_CopyToDeviceStream_Destroy, args);
  if (args->stream == nullptr) return nullptr;
  std::shared_ptr<StreamState> state = std::move(args->stream->state);
  delete args->stream;
  if (state) {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->destroyed = true;
    state->changed.notify_all();
  }
  return nullptr;
}

PJRT_Error* PJRT_CopyToDeviceStream_AddChunk(PJRT_CopyToDeviceStream_AddChunk_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_CopyToDeviceStream_AddChunk, args);
  STABLERT_CAPI_REQUIRE(PJRT_CopyToDeviceStream_AddChunk, args->stream);
  STABLERT_CAPI_REQUIRE(PJRT_CopyToDeviceStream_AddChunk, args->chunk);
  STABLERT_CAPI_GUARD(PJRT_CopyToDeviceStream_AddChunk, {
    PJRT_Chunk chunk = *args->chunk;
    Status status;
    {
      StreamState& state = *args->stream->state;
      std::lock_guard<std::mutex> lock(state.mutex);
      const size_t size = chunk.size;
      const auto remaining = static_cast<size_t>(state.total - state.current);
      if (size > 0 && chunk.data == nullptr) {
        status = InvalidArgument("PJRT_CopyToDeviceStream_AddChunk: the chunk's data is null");
      } else if (size > 0 && state.destination == nullptr) {
        status = FailedPrecondition("PJRT_CopyToDeviceStream_AddChunk: the stream is complete (" +
                                    std::to_string(state.current) + " of " + std::to_string(state.total) +
                                    " bytes) or its receiver has stopped");
      } else if (size > remaining) {
        status = InvalidArgument("PJRT_CopyToDeviceStream_AddChunk: a chunk of " + std::to_string(size) +
                                 " bytes exceeds the stream's total of " + std::to_string(state.total) + " bytes (" +
                                 std::to_string(state.current) + " received)");
      } else if (size > 0) {
        std::memcpy(static_cast<char*>(state.destination) + state.current, chunk.data, chunk.size);
        state.current += static_cast<int64_t>(size);
        if (state.current == state.total) state.changed.notify_all();
      }
    }
    if (chunk.deleter != nullptr) chunk.deleter(chunk.data, chunk.deleter_arg);  // the stream owns the chunk
    STABLERT_CAPI_RETURN_IF_ERROR(status);
    runtime::EventRef done = runtime::Event::Create();
    done->Set(OkStatus()).IgnoreError();
    args->transfer_complete = NewEvent(std::move(done));
    return nullptr;
  })
}

PJRT_Error* PJRT_CopyToDeviceStream_TotalBytes(PJRT_CopyToDeviceStream_TotalBytes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_CopyToDeviceStream_TotalBytes, args);
  STABLERT_CAPI_REQUIRE(PJRT_CopyToDeviceStream_TotalBytes, args->stream);
  args->total_bytes = args->stream->state->total;
  return nullptr;
}

PJRT_Error* PJRT_CopyToDeviceStream_GranuleSize(PJRT_CopyToDeviceStream_GranuleSize_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_CopyToDeviceStream_GranuleSize, args);
  STABLERT_CAPI_REQUIRE(PJRT_CopyToDeviceStream_GranuleSize, args->stream);
  args->granule_size_in_bytes = 1;
  return nullptr;
}

PJRT_Error* PJRT_CopyToDeviceStream_CurrentBytes(PJRT_CopyToDeviceStream_CurrentBytes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_CopyToDeviceStream_CurrentBytes, args);
  STABLERT_CAPI_REQUIRE(PJRT_CopyToDeviceStream_CurrentBytes, args->stream);
  std::lock_guard<std::mutex> lock(args->stream->state->mutex);
  args->current_bytes = args->stream->state->current;
  return nullptr;
}

}  // namespace stablert::capi
