#include "capi/cross_host_transfers_extension.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capi/error.h"
#include "capi/handles.h"
#include "capi/layout.h"

// The extension's argument structs, laid out as the framework passes them (XLA's
// pjrt_c_api_cross_host_transfers_extension.h, version 8). A global device id is a 32-bit int
// and a transfer key a 64-bit int in jaxlib's C++ API. Fields after the ones read here
// (version 8's alive-task snapshot) are accepted and ignored.
extern "C" {

struct PJRT_Transfers_PJRT_Client_CrossHostSendBuffers_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  size_t num_buffers;
  PJRT_Buffer** buffers;
  const int32_t* dst_global_device_ids;
  const int64_t* transfer_keys;
  PJRT_Event** send_events;  // out
  size_t num_tasks;
  const int* task_ids;
  const int64_t* incarnation_ids;
};

struct PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  size_t num_shapes;
  size_t* shape_num_dims;
  const int64_t** num_dims;
  PJRT_Buffer_Type* element_types;
  PJRT_Buffer_MemoryLayout** layouts;
  PJRT_Device* device;
  const int32_t* src_global_device_ids;
  const int64_t* transfer_keys;
  PJRT_Buffer** buffers;  // out
  size_t num_tasks;
  const int* task_ids;
  const int64_t* incarnation_ids;
};

struct PJRT_Transfers_CrossHostRecvNotifierInfo {
  void* user_arg;
  void (*notifier)();  // not called: the descriptor-based API is not implemented
};

struct PJRT_Transfers_PJRT_Client_MakeCrossHostReceiveBuffers_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  size_t num_shapes;
  size_t* shape_num_dims;
  const int64_t** num_dims;
  PJRT_Buffer_Type* element_types;
  PJRT_Buffer_MemoryLayout** layouts;
  PJRT_Device* device;
  PJRT_Transfers_CrossHostRecvNotifierInfo notifier;
  PJRT_Buffer** buffers;
  size_t num_buffers;
  bool allow_cancel_notifier;
};

struct PJRT_Transfers_CrossHostRemoteSendCallbackInfo {
  void* user_arg;
  void (*on_done)(PJRT_Error* error, bool sends_were_enqueued, void* user_arg);
};

struct PJRT_Transfers_PJRT_Buffer_CopyToRemoteDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Event* event;  // owned by the callee
  char** serialized_descriptor;
  size_t* serialized_descriptor_size;
  PJRT_Transfers_CrossHostRemoteSendCallbackInfo on_done;
  void (*descriptor_destructor)(char** descriptor_data, size_t* descriptor_size);
};

struct PJRT_CrossHostTransfers_Extension {
  PJRT_Extension_Base base;
  PJRT_Error* (*make_cross_host_receive_buffers)(PJRT_Transfers_PJRT_Client_MakeCrossHostReceiveBuffers_Args*);
  void (*copy_to_remote_device)(PJRT_Transfers_PJRT_Buffer_CopyToRemoteDevice_Args*);
  PJRT_Error* (*cross_host_receive_buffers)(PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers_Args*);
  PJRT_Error* (*cross_host_send_buffers)(PJRT_Transfers_PJRT_Client_CrossHostSendBuffers_Args*);
};

}  // extern "C"

namespace stablert::capi {
namespace {

constexpr const char kSend[] = "PJRT_Transfers_PJRT_Client_CrossHostSendBuffers";
constexpr const char kReceive[] = "PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers";

// The job's transfers, or FailedPrecondition naming `function` in a single-process job.
StatusOr<runtime::CrossHostTransfers*> Transfers(const char* function, PJRT_Client* client) {
  runtime::CrossHostTransfers* transfers = client->client->cross_host_transfers();
  if (!transfers)
    return FailedPrecondition(std::string(function) +
                              ": this client is a single-process job; cross-host transfers need a job of several "
                              "processes (jax.distributed.initialize)");
  return transfers;
}

// Device `id` of another process of the job.
StatusOr<runtime::Device*> RemoteDevice(const char* function, const PJRT_Client* client, size_t index, int64_t id,
                                        const char* role) {
  StatusOr<runtime::Device*> device = client->client->LookupDevice(id);
  if (!device.ok())
    return InvalidArgument(std::string(function) + ": buffer " + std::to_string(index) + "'s " + role +
                           " device id " + std::to_string(id) + " is not a device of the job");
  if ((*device)->is_addressable())
    return InvalidArgument(std::string(function) + ": buffer " + std::to_string(index) + "'s " + role + " device " +
                           std::to_string(id) +
                           " is in this process; a cross-host transfer is between this process and another");
  return *device;
}

PJRT_Error* CrossHostSendBuffers(PJRT_Transfers_PJRT_Client_CrossHostSendBuffers_Args* args) {
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Transfers_PJRT_Client_CrossHostSendBuffers, args, send_events);
  STABLERT_CAPI_REQUIRE(PJRT_Transfers_PJRT_Client_CrossHostSendBuffers, args->client);
  STABLERT_CAPI_GUARD(PJRT_Transfers_PJRT_Client_CrossHostSendBuffers, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::CrossHostTransfers * transfers, Transfers(kSend, args->client));
    if (args->num_buffers == 0) return nullptr;
    if (!args->buffers || !args->dst_global_device_ids || !args->transfer_keys || !args->send_events)
      return ToPjrtError(InvalidArgument(std::string(kSend) +
                                         ": buffers, dst_global_device_ids, transfer_keys and send_events must be "
                                         "non-null when num_buffers > 0"));
    // Everything is checked before the first send starts.
    std::vector<runtime::Device*> destinations;
    for (size_t i = 0; i < args->num_buffers; ++i) {
      const PJRT_Buffer* buffer = args->buffers[i];
      if (!IsLiveBuffer(buffer) || buffer->client != args->client)
        return ToPjrtError(InvalidArgument(std::string(kSend) + ": buffers[" + std::to_string(i) +
                                           "] is not a live buffer of this client"));
      if (!buffer->buffer->device()->is_addressable())
        return ToPjrtError(InvalidArgument(std::string(kSend) + ": buffers[" + std::to_string(i) +
                                           "] is not on a device of this process"));
      STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::Device * destination,
                                     RemoteDevice(kSend, args->client, i, args->dst_global_device_ids[i], "destination"));
      destinations.push_back(destination);
    }
    std::vector<runtime::EventRef> events;
    for (size_t i = 0; i < args->num_buffers; ++i) {
      StatusOr<runtime::EventRef> sent = transfers->Send(kSend, *args->buffers[i]->buffer, destinations[i]->id(),
                                                         destinations[i]->process_index(), args->transfer_keys[i]);
      // A send that cannot start (a deleted buffer) fails its own event: the ones before it
      // are under way and the receiver expects every buffer.
      events.push_back(sent.ok() ? *sent : runtime::Event::Ready(sent.status()));
    }
    for (size_t i = 0; i < events.size(); ++i) args->send_events[i] = NewEvent(events[i]);
    return nullptr;
  })
}

PJRT_Error* CrossHostReceiveBuffers(PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers_Args* args) {
  STABLERT_CAPI_ARGS_UP_TO(PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers, args, buffers);
  STABLERT_CAPI_REQUIRE(PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers, args->device);
  STABLERT_CAPI_GUARD(PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::CrossHostTransfers * transfers, Transfers(kReceive, args->client));
    STABLERT_CAPI_RETURN_IF_ERROR(CheckOwnDevice(kReceive, "device", args->client, args->device));
    runtime::Device* device = args->device->device;
    if (!device->is_addressable() || !device->default_memory())
      return ToPjrtError(InvalidArgument(std::string(kReceive) + ": device " + std::to_string(device->id()) +
                                         " is not a device of this process"));
    if (args->num_shapes == 0) return nullptr;
    if (!args->shape_num_dims || !args->num_dims || !args->element_types || !args->src_global_device_ids ||
        !args->transfer_keys || !args->buffers)
      return ToPjrtError(InvalidArgument(std::string(kReceive) +
                                         ": shape_num_dims, num_dims, element_types, src_global_device_ids, "
                                         "transfer_keys and buffers must be non-null when num_shapes > 0"));
    struct Shape {
      DType dtype;
      Dims dims;
      std::vector<int64_t> layout;
      runtime::Device* source;
    };
    std::vector<Shape> shapes;
    for (size_t i = 0; i < args->num_shapes; ++i) {
      const std::string fn = std::string(kReceive) + " (shape " + std::to_string(i) + ")";
      STABLERT_CAPI_ASSIGN_OR_RETURN(DType dtype, ToDType(fn.c_str(), RawEnumValue(args->element_types[i])));
      if (args->shape_num_dims[i] > 0 && !args->num_dims[i])
        return ToPjrtError(InvalidArgument(fn + ": num_dims is null for a shape of rank " +
                                           std::to_string(args->shape_num_dims[i])));
      STABLERT_CAPI_ASSIGN_OR_RETURN(Dims dims, ToDims(fn.c_str(), args->num_dims[i], args->shape_num_dims[i]));
      // The layout the buffer is to have (null: row-major): any dense dimension order.
      std::vector<int64_t> layout;
      if (args->layouts && args->layouts[i]) {
        STABLERT_CAPI_ASSIGN_OR_RETURN(layout, DeviceLayoutOrder(fn.c_str(), args->layouts[i], dims, dtype));
      }
      STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::Device * source,
                                     RemoteDevice(kReceive, args->client, i, args->src_global_device_ids[i], "source"));
      shapes.push_back(Shape{dtype, std::move(dims), std::move(layout), source});
    }
    std::vector<std::unique_ptr<runtime::Buffer>> buffers;
    for (size_t i = 0; i < shapes.size(); ++i) {
      STABLERT_CAPI_ASSIGN_OR_RETURN(
          std::unique_ptr<runtime::Buffer> buffer,
          transfers->Receive(kReceive, shapes[i].dtype, shapes[i].dims, shapes[i].layout, device,
                             device->default_memory(), shapes[i].source->id(), shapes[i].source->process_index(),
                             args->transfer_keys[i]));
      buffers.push_back(std::move(buffer));
    }
    for (size_t i = 0; i < buffers.size(); ++i) args->buffers[i] = NewBufferHandle(std::move(buffers[i]), args->client);
    return nullptr;
  })
}

PJRT_Error* MakeCrossHostReceiveBuffers(PJRT_Transfers_PJRT_Client_MakeCrossHostReceiveBuffers_Args* args) {
  (void)args;
  return ToPjrtError(Unimplemented(
      "PJRT_Transfers_PJRT_Client_MakeCrossHostReceiveBuffers: not implemented; StableRT implements "
      "PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers"));
}

void CopyToRemoteDevice(PJRT_Transfers_PJRT_Buffer_CopyToRemoteDevice_Args* args) {
  if (!args) return;
  if (args->on_done.on_done)
    args->on_done.on_done(ToPjrtError(Unimplemented("PJRT_Transfers_PJRT_Buffer_CopyToRemoteDevice: not implemented; "
                                                    "StableRT implements "
                                                    "PJRT_Transfers_PJRT_Client_CrossHostSendBuffers")),
                          /*sends_were_enqueued=*/false, args->on_done.user_arg);
  delete args->event;
}

PJRT_CrossHostTransfers_Extension kCrossHostTransfers = {
    {sizeof(PJRT_CrossHostTransfers_Extension), PJRT_Extension_Type_CrossHostTransfers, nullptr},
    &MakeCrossHostReceiveBuffers,
    &CopyToRemoteDevice,
    &CrossHostReceiveBuffers,
    &CrossHostSendBuffers,
};

}  // namespace

PJRT_Extension_Base* CrossHostTransfersExtension(PJRT_Extension_Base* next) {
  kCrossHostTransfers.base.next = next;
  return &kCrossHostTransfers.base;
}

}  // namespace stablert::capi
