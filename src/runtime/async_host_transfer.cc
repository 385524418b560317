#include "runtime/async_host_transfer.h"

#include "runtime/array_layout.h"

#include <cstring>
#include <vector>
#include <string>
#include <utility>

namespace stablert::runtime {

namespace {

std::string ShapeString(DType dtype, const Dims& dims) { return std::string(DTypeName(dtype)) + DimsToString(dims); }

}  // namespace

StatusOr<std::unique_ptr<AsyncHostTransfer>> AsyncHostTransfer::Create(const std::vector<Spec>& specs,
                                                                        MemorySpace* memory) {
  if (!memory || memory->devices().empty()) return InvalidArgument("no memory space to create the buffers in");
  std::unique_ptr<AsyncHostTransfer> transfer(new AsyncHostTransfer(memory));
  transfer->slots_.resize(specs.size());
  Device* device = memory->devices().front();
  for (size_t i = 0; i < specs.size(); ++i) {
    Slot& slot = transfer->slots_[i];
    slot.dtype = specs[i].dtype;
    slot.dims = specs[i].dims;
    slot.layout = NormalizeLayout(specs[i].layout);
    STABLERT_RETURN_IF_ERROR(CheckLayout(slot.layout, slot.dims.size(), "buffer " + std::to_string(i) + "'s layout"));
    auto bytes = CheckedByteSize(slot.dims, DTypeByteSize(slot.dtype));
    if (!bytes.ok()) return bytes.status().WithPrefix("buffer " + std::to_string(i));
    auto storage = BufferStorage::Allocate(static_cast<size_t>(*bytes), device->memory_stats());
    if (!storage.ok()) return storage.status().WithPrefix("buffer " + std::to_string(i));
    slot.storage = *std::move(storage);
    slot.ready = Event::Create();
    slot.buffer =
        std::make_unique<Buffer>(slot.dtype, slot.dims, device, memory, slot.storage, slot.ready, slot.layout);
  }
  return transfer;
}

AsyncHostTransfer::~AsyncHostTransfer() {
  // No call can be running on this object any more: whatever is not closed never will be.
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.fired) continue;
    slot.fired = true;
    Status status = slot.closed ? slot.final_status
                                : FailedPrecondition("the async host-to-device transfer manager was destroyed before "
                                                     "buffer " + std::to_string(i) + " of " +
                                                     std::to_string(slots_.size()) + " received its last transfer");
    slot.ready->Set(std::move(status)).IgnoreError();
  }
}

Status AsyncHostTransfer::CheckIndex(int64_t index) const {
  if (index < 0 || static_cast<uint64_t>(index) >= slots_.size())
    return InvalidArgument("buffer_index " + std::to_string(index) + " is out of range; the transfer manager has " +
                           std::to_string(slots_.size()) + " buffers");
  return OkStatus();
}

StatusOr<size_t> AsyncHostTransfer::BufferSize(int64_t index) const {
  STABLERT_RETURN_IF_ERROR(CheckIndex(index));
  return slots_[static_cast<size_t>(index)].storage->size();
}

StatusOr<std::unique_ptr<Buffer>> AsyncHostTransfer::RetrieveBuffer(int64_t index) {
  STABLERT_RETURN_IF_ERROR(CheckIndex(index));
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[static_cast<size_t>(index)];
  if (!slot.buffer)
    return FailedPrecondition("buffer " + std::to_string(index) +
                              " has already been retrieved; each buffer can be retrieved once");
  return std::move(slot.buffer);
}

Status AsyncHostTransfer::BeginCopyLocked(int64_t index, bool closes) {
  Slot& slot = slots_[static_cast<size_t>(index)];
  if (slot.closed)
    return FailedPrecondition("buffer " + std::to_string(index) +
                              (slot.final_status.ok() ? " has already received its last transfer"
                                                      : " has already been set to an error") +
                              "; no transfer can follow");
  ++slot.in_flight;
  if (closes) {
    slot.closed = true;
    slot.final_status = OkStatus();
  }
  return OkStatus();
}

void AsyncHostTransfer::FinishCopy(int64_t index) {
  EventRef fire;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slots_[static_cast<size_t>(index)];
    if (--slot.in_flight == 0 && slot.closed && !slot.fired) {
      slot.fired = true;
      fire = slot.ready;
      status = slot.final_status;
    }
  }
  // Outside the lock: the event runs its waiters' callbacks on this thread.
  if (fire) fire->Set(std::move(status)).IgnoreError();
}

Status AsyncHostTransfer::TransferData(int64_t index, const void* data, int64_t offset, int64_t size, bool is_last) {
  STABLERT_RETURN_IF_ERROR(CheckIndex(index));
  Slot& slot = slots_[static_cast<size_t>(index)];
  const auto buffer_size = static_cast<int64_t>(slot.storage->size());
  // Written so that nothing overflows: offset + size is never computed unchecked.
  if (offset < 0 || size < 0 || offset > buffer_size || size > buffer_size - offset)
    return InvalidArgument("a transfer of " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                           " does not fit in buffer " + std::to_string(index) + " of " + std::to_string(buffer_size) +
                           " bytes (" + ShapeString(slot.dtype, slot.dims) + ")");
  if (size > 0 && data == nullptr) return InvalidArgument("data is null for a transfer of " + std::to_string(size) + " bytes");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    STABLERT_RETURN_IF_ERROR(BeginCopyLocked(index, is_last));
  }
  if (size > 0) std::memcpy(static_cast<char*>(slot.storage->data()) + offset, data, static_cast<size_t>(size));
  FinishCopy(index);
  return OkStatus();
}

Status AsyncHostTransfer::TransferLiteral(int64_t index, const void* data, DType dtype, const Dims& dims,
                                          const std::vector<int64_t>& byte_strides) {
  STABLERT_RETURN_IF_ERROR(CheckIndex(index));
  Slot& slot = slots_[static_cast<size_t>(index)];
  if (dtype != slot.dtype || dims != slot.dims)
    return InvalidArgument("the literal's shape " + ShapeString(dtype, dims) + " is not buffer " +
                           std::to_string(index) + "'s shape " + ShapeString(slot.dtype, slot.dims));
  if (slot.storage->size() > 0 && data == nullptr) return InvalidArgument("the literal's data is null");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    STABLERT_RETURN_IF_ERROR(BeginCopyLocked(index, /*closes=*/true));
  }
  if (slot.storage->size() > 0) {
    if (slot.layout.empty()) {
      CopyStridedToDense(data, dims, byte_strides, DTypeByteSize(dtype), slot.storage->data());
    } else if (byte_strides.empty()) {
      CopyRowMajorToLayout(data, dims, dtype, slot.layout, slot.storage->data());
    } else {
      // Host strides to row-major, then into the buffer's dimension order.
      std::vector<unsigned char> row_major(slot.storage->size());
      CopyStridedToDense(data, dims, byte_strides, DTypeByteSize(dtype), row_major.data());
      CopyRowMajorToLayout(row_major.data(), dims, dtype, slot.layout, slot.storage->data());
    }
  }
  FinishCopy(index);
  return OkStatus();
}

Status AsyncHostTransfer::SetBufferError(int64_t index, Status error) {
  STABLERT_RETURN_IF_ERROR(CheckIndex(index));
  if (error.ok()) return InvalidArgument("the error to set is OK");
  EventRef fire;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slots_[static_cast<size_t>(index)];
    if (slot.closed)
      return FailedPrecondition("buffer " + std::to_string(index) +
                                (slot.final_status.ok() ? " has already received its last transfer"
                                                        : " has already been set to an error") +
                                "; its error can no longer be set");
    slot.closed = true;
    slot.final_status = error;
    // The error is known now: consumers need not wait for copies still running.
    if (!slot.fired) {
      slot.fired = true;
      fire = slot.ready;
    }
  }
  if (fire) fire->Set(std::move(error)).IgnoreError();
  return OkStatus();
}

}  // namespace stablert::runtime
