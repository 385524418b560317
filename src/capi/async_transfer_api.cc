// PJRT_Client_CreateBuffersForAsyncHostToDevice and the
// PJRT_AsyncHostToDeviceTransferManager_* entry points, over runtime::AsyncHostTransfer
// (runtime/async_host_transfer.h, which states the transfer rules).
//
// Handles: a PJRT_AsyncHostToDeviceTransferManager* is a token, never dereferenced: a
// process-wide registry maps the live tokens to their managers, and tokens are never reused.
// So a destroyed (or made-up) handle is reported as such instead of being read, and a call
// racing with PJRT_AsyncHostToDeviceTransferManager_Destroy keeps the manager alive until
// it returns. The caller owns the manager (freed with _Destroy) and every buffer and event
// it returns; a manager must not outlive its client, as buffers must not.
//
// Layouts: a device layout that is a dense dimension order (a tile-free minor_to_major, or
// strides of a dense array in some order) gives the buffer that layout: TransferData's
// chunks are its on-device bytes in that order (as BufferSize counts them), TransferLiteral
// reads a host literal in any tile-free layout (minor_to_major order or byte strides) and
// stores it in the buffer's. Tiled layouts and strides with gaps are UNIMPLEMENTED naming the
// function and the layout's index.
// AddMetadata accepts the metadata and ignores it (XLA uses it for debugging only).
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/layout.h"
#include "runtime/async_host_transfer.h"

namespace stablert::capi {
namespace {

struct TransferManager {
  std::unique_ptr<runtime::AsyncHostTransfer> transfer;
  PJRT_Client* client = nullptr;
};

// The live managers by token. Never destroyed: entry points may run during static destruction.
class ManagerRegistry {
 public:
  PJRT_AsyncHostToDeviceTransferManager* Add(std::shared_ptr<TransferManager> manager) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uintptr_t token = kTokenBase + (next_++ << 4);
    live_.emplace(token, std::move(manager));
    return reinterpret_cast<PJRT_AsyncHostToDeviceTransferManager*>(token);
  }
  std::shared_ptr<TransferManager> Find(const PJRT_AsyncHostToDeviceTransferManager* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
    return it == live_.end() ? nullptr : it->second;
  }
  std::shared_ptr<TransferManager> Remove(const PJRT_AsyncHostToDeviceTransferManager* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
    if (it == live_.end()) return nullptr;
    std::shared_ptr<TransferManager> manager = std::move(it->second);
    live_.erase(it);
    return manager;
  }

 private:
  // Tokens look like 16-byte aligned user-space addresses, so tools printing them are not
  // surprised; nothing ever reads through them.
  static constexpr uintptr_t kTokenBase = uintptr_t{0x5354'0000'0000};
  std::mutex mutex_;
  uintptr_t next_ = 1;
  std::unordered_map<uintptr_t, std::shared_ptr<TransferManager>> live_;
};

ManagerRegistry& Registry() {
  static auto* registry = new ManagerRegistry;
  return *registry;
}

StatusOr<std::shared_ptr<TransferManager>> LiveManager(const char* function,
                                                       const PJRT_AsyncHostToDeviceTransferManager* handle) {
  if (handle == nullptr) return InvalidArgument(std::string(function) + ": transfer_manager is null");
  std::shared_ptr<TransferManager> manager = Registry().Find(handle);
  if (!manager)
    return InvalidArgument(std::string(function) +
                           ": transfer_manager is not a live transfer manager (it was destroyed, or was not "
                           "returned by PJRT_Client_CreateBuffersForAsyncHostToDevice)");
  return manager;
}

PJRT_Event* ReadyEvent() { return NewEvent(runtime::Event::Ready()); }

// The buffer spec at `index`, checked; errors name `function` and the spec.
StatusOr<runtime::AsyncHostTransfer::Spec> ReadSpec(const char* function, const PJRT_ShapeSpec& spec, size_t index,
                                                    const PJRT_Buffer_MemoryLayout* layout) {
  const std::string where = std::string(function) + ": shape_specs[" + std::to_string(index) + "]";
  STABLERT_RETURN_IF_ERROR(CheckStructSize(where.c_str(), "PJRT_ShapeSpec", spec.struct_size, PJRT_ShapeSpec_STRUCT_SIZE));
  STABLERT_ASSIGN_OR_RETURN(DType dtype, ToDType(where.c_str(), RawEnumValue(spec.element_type)));
  STABLERT_ASSIGN_OR_RETURN(Dims dims, ToDims(where.c_str(), spec.dims, spec.num_dims));
  STABLERT_RETURN_IF_ERROR(ArrayByteSize(where.c_str(), dims, dtype).status());
  const std::string layout_where = std::string(function) + ": device_layouts[" + std::to_string(index) + "]";
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> order, DeviceLayoutOrder(layout_where.c_str(), layout, dims, dtype));
  return runtime::AsyncHostTransfer::Spec{dtype, std::move(dims), std::move(order)};
}

}  // namespace

PJRT_Error* PJRT_Client_CreateBuffersForAsyncHostToDevice(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args* args) {
  constexpr const char* kFn = "PJRT_Client_CreateBuffersForAsyncHostToDevice";
  STABLERT_CAPI_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice, args);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateBuffersForAsyncHostToDevice, args->client);
  STABLERT_CAPI_REQUIRE(PJRT_Client_CreateBuffersForAsyncHostToDevice, args->memory);
  STABLERT_CAPI_GUARD(PJRT_Client_CreateBuffersForAsyncHostToDevice, {
    if (args->num_shape_specs > 0 && !args->shape_specs)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": shape_specs is null for " +
                                         std::to_string(args->num_shape_specs) + " shape specs"));
    if (args->num_device_layouts > 0) {
      if (!args->device_layouts) return ToPjrtError(InvalidArgument(std::string(kFn) + ": device_layouts is null"));
      if (args->num_device_layouts != args->num_shape_specs)
        return ToPjrtError(InvalidArgument(std::string(kFn) + ": " + std::to_string(args->num_device_layouts) +
                                           " device layouts for " + std::to_string(args->num_shape_specs) +
                                           " shape specs; expected none or one per shape spec"));
    }
    STABLERT_CAPI_RETURN_IF_ERROR(CheckOwnMemory(kFn, "memory", args->client, args->memory));
    std::vector<runtime::AsyncHostTransfer::Spec> specs;
    specs.reserve(args->num_shape_specs);
    for (size_t i = 0; i < args->num_shape_specs; ++i) {
      const PJRT_Buffer_MemoryLayout* layout = args->num_device_layouts > 0 ? args->device_layouts[i] : nullptr;
      STABLERT_CAPI_ASSIGN_OR_RETURN(auto spec, ReadSpec(kFn, args->shape_specs[i], i, layout));
      specs.push_back(std::move(spec));
    }
    STABLERT_CAPI_ASSIGN_OR_RETURN(
        auto transfer, NameFunction(kFn, runtime::AsyncHostTransfer::Create(specs, AsMemoryHandle(args->memory)->memory)));
    auto manager = std::make_shared<TransferManager>();
    manager->transfer = std::move(transfer);
    manager->client = args->client;
    args->transfer_manager = Registry().Add(std::move(manager));
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_Destroy(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy, args);
  if (args->transfer_manager == nullptr) return nullptr;
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_Destroy, {
    std::shared_ptr<TransferManager> manager = Registry().Remove(args->transfer_manager);
    if (!manager)
      return ToPjrtError(InvalidArgument(
          "PJRT_AsyncHostToDeviceTransferManager_Destroy: transfer_manager is not a live transfer manager (it was "
          "destroyed already, or was not returned by PJRT_Client_CreateBuffersForAsyncHostToDevice)"));
    return nullptr;  // the manager goes with the last call using it
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_TransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_TransferData";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_TransferData, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    STABLERT_CAPI_RETURN_IF_ERROR(NameFunction(
        kFn, manager->transfer->TransferData(args->buffer_index, args->data, args->offset, args->transfer_size,
                                             args->is_last_transfer)));
    args->done_with_h2d_transfer = ReadyEvent();  // the bytes were copied during the call
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    STABLERT_CAPI_ASSIGN_OR_RETURN(DType dtype, ToDType(kFn, RawEnumValue(args->shape_element_type)));
    STABLERT_CAPI_ASSIGN_OR_RETURN(Dims dims, ToDims(kFn, args->shape_dims, args->shape_num_dims));
    STABLERT_CAPI_RETURN_IF_ERROR(ArrayByteSize(kFn, dims, dtype).status());
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> strides, HostByteStrides(kFn, args->shape_layout, dims, dtype));
    STABLERT_CAPI_RETURN_IF_ERROR(CheckHostSourceStrides(kFn, dims, dtype, strides));
    STABLERT_CAPI_RETURN_IF_ERROR(
        NameFunction(kFn, manager->transfer->TransferLiteral(args->buffer_index, args->data, dtype, dims, strides)));
    args->done_with_h2d_transfer = ReadyEvent();
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto buffer, NameFunction(kFn, manager->transfer->RetrieveBuffer(args->buffer_index)));
    args->buffer_out = NewBufferHandle(std::move(buffer), manager->client);
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_Device(PJRT_AsyncHostToDeviceTransferManager_Device_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_Device";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_Device, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_Device, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    args->device_out = manager->client->Wrap(manager->transfer->device());
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_BufferCount(
    PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_BufferCount";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferCount, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_BufferCount, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    args->buffer_count = manager->transfer->buffer_count();
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_BufferSize(
    PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_BufferSize";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferSize, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_BufferSize, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    STABLERT_CAPI_ASSIGN_OR_RETURN(args->buffer_size, NameFunction(kFn, manager->transfer->BufferSize(args->buffer_index)));
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_SetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_SetBufferError";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, {
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto manager, LiveManager(kFn, args->transfer_manager));
    const int64_t code = RawEnumValue(args->error_code);
    STABLERT_CAPI_RETURN_IF_ERROR(CheckCallerErrorCode(kFn, "error_code", code, /*allow_ok=*/false));
    if (args->error_message_size > 0 && !args->error_message)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": error_message is null with error_message_size " +
                                         std::to_string(args->error_message_size)));
    STABLERT_CAPI_RETURN_IF_ERROR(NameFunction(
        kFn, manager->transfer->SetBufferError(args->buffer_index,
                                               CallerStatus(code, args->error_message, args->error_message_size))));
    return nullptr;
  })
}

PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_AddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args* args) {
  constexpr const char* kFn = "PJRT_AsyncHostToDeviceTransferManager_AddMetadata";
  STABLERT_CAPI_ARGS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata, args);
  STABLERT_CAPI_GUARD(PJRT_AsyncHostToDeviceTransferManager_AddMetadata, {
    STABLERT_CAPI_RETURN_IF_ERROR(LiveManager(kFn, args->transfer_manager).status());
    if (args->num_metadata > 0 && !args->transfer_metadata)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": transfer_metadata is null for " +
                                         std::to_string(args->num_metadata) + " entries"));
    return nullptr;  // accepted and ignored: the metadata only labels transfers for debugging
  })
}

}  // namespace stablert::capi
