// PJRT_Buffer_* entry points.
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/live_handles.h"
#include "capi/layout.h"
#include "runtime/array_layout.h"

namespace stablert::capi {
namespace {

// Copies into `memory`, a memory of `destination` (which may be another client than the
// source's: all StableRT clients share the host's memory). The copy belongs to `destination`.
PJRT_Error* CopyTo(const char* function, PJRT_Buffer* buffer, PJRT_Client* destination, runtime::MemorySpace* memory,
                   PJRT_Buffer** out) {
  STABLERT_CAPI_ASSIGN_OR_RETURN(auto copy,
                                 NameFunction(function, destination->client->CopyBuffer(*buffer->buffer, memory)));
  *out = NewBufferHandle(std::move(copy), destination);
  return nullptr;
}

}  // namespace

PJRT_Error* PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_Destroy, args);
  if (!args->buffer) return nullptr;  // like free(nullptr)
  if (!LiveHandles<PJRT_Buffer>::Of().Check(args->buffer, /*remove=*/true))
    return ToPjrtError(InvalidArgument(
        "PJRT_Buffer_Destroy: buffer is not a live buffer of this plugin (destroyed already, or another plugin's)"));
  delete args->buffer;
  return nullptr;
}

PJRT_Error* PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_ElementType, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_ElementType, args->buffer);
  args->type = static_cast<PJRT_Buffer_Type>(args->buffer->buffer->dtype());
  return nullptr;
}

PJRT_Error* PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_Dimensions, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_Dimensions, args->buffer);
  args->dims = args->buffer->dims.data();
  args->num_dims = args->buffer->dims.size();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_UnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_UnpaddedDimensions, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_UnpaddedDimensions, args->buffer);
  args->unpadded_dims = args->buffer->dims.data();
  args->num_dims = args->buffer->dims.size();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_DynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_DynamicDimensionIndices, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_DynamicDimensionIndices, args->buffer);
  args->dynamic_dim_indices = nullptr;  // StableRT arrays are always static
  args->num_dynamic_dims = 0;
  return nullptr;
}

PJRT_Error* PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_GetMemoryLayout, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_GetMemoryLayout, args->buffer);
  return ToPjrtError(Unimplemented(
      "PJRT_Buffer_GetMemoryLayout is deprecated and not implemented; the Layouts extension's "
      "PJRT_Layouts_PJRT_Buffer_MemoryLayout gives a buffer's layout"));
}

PJRT_Error* PJRT_Buffer_OnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_OnDeviceSizeInBytes, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_OnDeviceSizeInBytes, args->buffer);
  args->on_device_size_in_bytes = args->buffer->buffer->size_in_bytes();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_Device(PJRT_Buffer_Device_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_Device, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_Device, args->buffer);
  args->device = args->buffer->client->Wrap(args->buffer->buffer->device());
  return nullptr;
}

PJRT_Error* PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_Memory, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_Memory, args->buffer);
  args->memory = args->buffer->client->Wrap(args->buffer->buffer->memory());
  return nullptr;
}

PJRT_Error* PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_Delete, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_Delete, args->buffer);
  args->buffer->buffer->Delete();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_IsDeleted, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_IsDeleted, args->buffer);
  args->is_deleted = args->buffer->buffer->IsDeleted();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_CopyToDevice, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_CopyToDevice, args->buffer);
  STABLERT_CAPI_REQUIRE(PJRT_Buffer_CopyToDevice, args->dst_device);
  STABLERT_CAPI_GUARD(PJRT_Buffer_CopyToDevice, {
    PJRT_Device* device = args->dst_device;
    return CopyTo("PJRT_Buffer_CopyToDevice", args->buffer, device->client, device->device->default_memory(),
                  &args->dst_buffer);
  })
}

PJRT_Error* PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_CopyToMemory, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_CopyToMemory, args->buffer);
  STABLERT_CAPI_REQUIRE(PJRT_Buffer_CopyToMemory, args->dst_memory);
  STABLERT_CAPI_GUARD(PJRT_Buffer_CopyToMemory, {
    MemoryHandle* memory = AsMemoryHandle(args->dst_memory);
    return CopyTo("PJRT_Buffer_CopyToMemory", args->buffer, memory->client, memory->memory, &args->dst_buffer);
  })
}

namespace {

// The byte strides of an array of `dims` held in major_to_minor `layout` (non-empty).
std::vector<int64_t> LayoutByteStrides(const std::vector<int64_t>& layout, const Dims& dims, size_t element_size) {
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = static_cast<int64_t>(element_size);
  for (size_t q = layout.size(); q-- > 0;) {
    strides[static_cast<size_t>(layout[q])] = stride;
    stride *= dims[static_cast<size_t>(layout[q])];
  }
  return strides;
}

}  // namespace

PJRT_Error* PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args) {
  constexpr const char* kFn = "PJRT_Buffer_ToHostBuffer";
  STABLERT_CAPI_ARGS(PJRT_Buffer_ToHostBuffer, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_ToHostBuffer, args->src);
  STABLERT_CAPI_GUARD(PJRT_Buffer_ToHostBuffer, {
    const runtime::Buffer& buffer = *args->src->buffer;
    if (buffer.dtype() == DType::kToken)
      return ToPjrtError(InvalidArgument(std::string(kFn) +
                                         ": the buffer is a token (an ordering of effects, not an array); it has no "
                                         "value to copy to the host"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                                   HostByteStrides(kFn, args->host_layout, buffer.dims(), buffer.dtype()));
    // Every element lands inside [dst, dst + needed): strides are non-negative and their
    // offsets checked for overflow.
    STABLERT_CAPI_ASSIGN_OR_RETURN(size_t needed, HostDestinationBytes(kFn, buffer.dims(), buffer.dtype(), strides));
    if (!args->dst) {  // size query
      args->dst_size = needed;
      args->event = nullptr;
      return nullptr;
    }
    if (args->dst_size < needed)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": dst_size " + std::to_string(args->dst_size) +
                                         " is smaller than the " + std::to_string(needed) + " bytes needed"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto storage, buffer.storage(kFn));
    runtime::EventRef done = runtime::Event::Create();
    void* dst = args->dst;
    Dims dims = buffer.dims();
    size_t element_size = DTypeByteSize(buffer.dtype());
    runtime::EventRef ready = buffer.ready_event();
    // A buffer in another layout goes through the transpose kernel: straight into a dense
    // row-major destination, else into a row-major copy first.
    std::vector<int64_t> layout = buffer.layout();
    if (!layout.empty() && strides == LayoutByteStrides(layout, dims, element_size)) {
      layout.clear();  // the host asks for the buffer's own layout: its bytes as they are
      strides.clear();
    }
    const DType dtype = buffer.dtype();
    auto copy = [storage, dst, dims, strides, element_size, done, layout, dtype](const Status& status) {
      if (status.ok() && ElementCount(dims) > 0) {
        if (layout.empty()) {
          runtime::CopyDenseToStrided(storage->data(), dims, strides, element_size, dst);
        } else if (strides.empty()) {
          runtime::CopyLayoutToRowMajor(storage->data(), dims, dtype, layout, dst);
        } else {
          std::vector<std::byte> row_major(storage->size());
          runtime::CopyLayoutToRowMajor(storage->data(), dims, dtype, layout, row_major.data());
          runtime::CopyDenseToStrided(row_major.data(), dims, strides, element_size, dst);
        }
      }
      done->Set(status).IgnoreError();
    };
    buffer.AddUsage(done);  // a later donation must not overwrite the bytes before they are copied
    ready->OnReady(copy);
    args->event = NewEvent(done);
    return nullptr;
  })
}

PJRT_Error* PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_IsOnCpu, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_IsOnCpu, args->buffer);
  args->is_on_cpu = true;
  return nullptr;
}

PJRT_Error* PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_ReadyEvent, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_ReadyEvent, args->buffer);
  args->event = NewEvent(args->buffer->buffer->ready_event());
  return nullptr;
}

PJRT_Error* PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_UnsafePointer, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_UnsafePointer, args->buffer);
  STABLERT_CAPI_ASSIGN_OR_RETURN(auto storage, args->buffer->buffer->storage("PJRT_Buffer_UnsafePointer"));
  args->buffer_pointer = reinterpret_cast<uintptr_t>(storage->data());
  return nullptr;
}

PJRT_Error* PJRT_Buffer_IncreaseExternalReferenceCount(PJRT_Buffer_IncreaseExternalReferenceCount_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_IncreaseExternalReferenceCount, args->buffer);
  STABLERT_CAPI_RETURN_IF_ERROR(
      args->buffer->buffer->storage("PJRT_Buffer_IncreaseExternalReferenceCount").status());
  args->buffer->buffer->IncreaseExternalReferenceCount();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_DecreaseExternalReferenceCount(PJRT_Buffer_DecreaseExternalReferenceCount_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_DecreaseExternalReferenceCount, args->buffer);
  return ToPjrtError(args->buffer->buffer->DecreaseExternalReferenceCount());
}

PJRT_Error* PJRT_Buffer_OpaqueDeviceMemoryDataPointer(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, args->buffer);
  STABLERT_CAPI_ASSIGN_OR_RETURN(auto storage,
                                 args->buffer->buffer->storage("PJRT_Buffer_OpaqueDeviceMemoryDataPointer"));
  args->device_memory_ptr = storage->data();
  return nullptr;
}

PJRT_Error* PJRT_Buffer_CopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args) {
  constexpr const char* kFn = "PJRT_Buffer_CopyRawToHost";
  STABLERT_CAPI_ARGS(PJRT_Buffer_CopyRawToHost, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_CopyRawToHost, args->buffer);
  STABLERT_CAPI_GUARD(PJRT_Buffer_CopyRawToHost, {
    const runtime::Buffer& buffer = *args->buffer->buffer;
    int64_t size = static_cast<int64_t>(buffer.size_in_bytes());
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto storage, buffer.storage(kFn));
    if (args->transfer_size > 0 && !args->dst) return ToPjrtError(InvalidArgument(std::string(kFn) + ": dst is null"));
    runtime::EventRef done = runtime::Event::Create();
    args->event = NewEvent(done);
    if (args->offset < 0 || args->transfer_size < 0 || args->offset > size || args->transfer_size > size - args->offset) {
      done->Set(InvalidArgument(std::string("Copy raw buffer called on buffer size ") + std::to_string(size) +
                                " with invalid offset " + std::to_string(args->offset) + ", transfer size " +
                                std::to_string(args->transfer_size)))
          .IgnoreError();
      return nullptr;
    }
    void* dst = args->dst;
    int64_t offset = args->offset, count = args->transfer_size;
    buffer.AddUsage(done);
    buffer.ready_event()->OnReady([storage, dst, offset, count, done](const Status& status) {
      if (status.ok() && count > 0) std::memcpy(dst, static_cast<const char*>(storage->data()) + offset, count);
      done->Set(status).IgnoreError();
    });
    return nullptr;
  })
}


namespace {

// What PJRT_Buffer_CopyRawToHostFuture hands the caller as callback_data: the copy to run
// once the caller's destination is known. Freed by RawCopyFutureReady, which the caller must
// call exactly once.
struct RawCopyFuture {
  std::shared_ptr<runtime::BufferStorage> storage;
  runtime::EventRef ready;  // the source buffer's
  runtime::EventRef done;   // the caller's PJRT_Event
  int64_t offset = 0;
  int64_t size = 0;
};

constexpr const char* kRawCopyFutureFn = "PJRT_Buffer_CopyRawToHostFuture";

// The future_ready_callback: runs (or fails) the copy into the destination the caller got.
// Returns nothing, so every failure goes to the copy's event; without a readable
// callback_data there is nothing to report it to.
void RawCopyFutureReady(PJRT_Buffer_CopyRawToHostFuture_Callback_Args* args) noexcept {
  constexpr size_t kDataEnd = offsetof(PJRT_Buffer_CopyRawToHostFuture_Callback_Args, callback_data) + sizeof(void*);
  if (args == nullptr || args->struct_size < kDataEnd || args->callback_data == nullptr) return;
  std::unique_ptr<RawCopyFuture> copy(static_cast<RawCopyFuture*>(args->callback_data));
  runtime::EventRef done = copy->done;
  try {
    if (done->IsReady()) return;  // failed when the copy was requested (offset or size)
    Status status = CheckStructSize(kRawCopyFutureFn, "PJRT_Buffer_CopyRawToHostFuture_Callback_Args",
                                    args->struct_size, PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE);
    if (status.ok() && RawEnumValue(args->error_code) != PJRT_Error_Code_OK) {
      status = CallerStatus(RawEnumValue(args->error_code), args->error_message, args->error_message_size);
    } else if (status.ok() && copy->size > 0 && args->dst == nullptr) {
      status = InvalidArgument(std::string(kRawCopyFutureFn) + ": the destination the future delivered is null");
    }
    if (!status.ok()) {
      done->Set(std::move(status)).IgnoreError();
      return;
    }
    void* dst = args->dst;
    auto storage = std::move(copy->storage);
    const int64_t offset = copy->offset, size = copy->size;
    copy->ready->OnReady([storage, dst, offset, size, done](const Status& ready) {
      if (ready.ok() && size > 0) std::memcpy(dst, static_cast<const char*>(storage->data()) + offset, size);
      done->Set(ready).IgnoreError();
    });
  } catch (...) {
    PJRT_Error* error = ExceptionToPjrtError(kRawCopyFutureFn, std::current_exception());
    try {
      done->Set(FromPjrtError(error)).IgnoreError();
    } catch (...) {
    }
    PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
    ErrorDestroy(&destroy);
  }
}

}  // namespace

PJRT_Error* PJRT_Buffer_CopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_Buffer_CopyRawToHostFuture, args);
  STABLERT_CAPI_REQUIRE_BUFFER(PJRT_Buffer_CopyRawToHostFuture, args->buffer);
  STABLERT_CAPI_GUARD(PJRT_Buffer_CopyRawToHostFuture, {
    const runtime::Buffer& buffer = *args->buffer->buffer;
    const auto size = static_cast<int64_t>(buffer.size_in_bytes());
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto storage, buffer.storage(kRawCopyFutureFn));
    auto copy = std::make_unique<RawCopyFuture>();
    copy->storage = std::move(storage);
    copy->ready = buffer.ready_event();
    copy->done = runtime::Event::Create();
    copy->offset = args->offset;
    copy->size = args->transfer_size;
    // As PJRT_Buffer_CopyRawToHost: a range outside the buffer fails the event, not the call.
    if (args->offset < 0 || args->transfer_size < 0 || args->offset > size || args->transfer_size > size - args->offset)
      copy->done->Set(InvalidArgument(std::string("Copy raw buffer called on buffer size ") + std::to_string(size) +
                                      " with invalid offset " + std::to_string(args->offset) + ", transfer size " +
                                      std::to_string(args->transfer_size)))
          .IgnoreError();
    else
      buffer.AddUsage(copy->done);  // a donation waits until the copy has read the bytes
    args->event = NewEvent(copy->done);
    args->future_ready_callback = &RawCopyFutureReady;
    args->callback_data = copy.release();
    return nullptr;
  })
}

}  // namespace stablert::capi
