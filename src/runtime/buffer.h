// Buffer: an array on a device, with a ready event.
//
// The bytes live in BufferStorage, shared by reference counting between the Buffer, running
// executions that read or write it, and external references (zero-copy NumPy views). The
// storage is either owned (64-byte aligned allocation) or borrowed from the caller
// (zero-copy host buffers), in which case its release callback runs when the last
// reference goes away. Data is dense, one element per DTypeByteSize(dtype) bytes, row-major
// (major-to-minor) unless the buffer has a layout: then its bytes are the row-major array of
// the dims in that major_to_minor order (runtime/array_layout.h).
//
// Thread-safety: all Buffer methods are thread-safe. Reading the bytes is only valid once
// the ready event has fired without error.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "runtime/device.h"
#include "runtime/event.h"
#include "runtime/memory_stats.h"

namespace stablert::runtime {

class BufferStorage {
 public:
  // Owned, 64-byte aligned, uninitialized storage of `size` bytes (size may be 0).
  // Owned blocks of 1 MiB to 256 MiB are not returned to the system when released but kept
  // in a process-wide cache (at most 256 MiB in all, the oldest freed first when it is full)
  // and handed out again for the same size rounded to 64 bytes: a fresh large block is
  // mapped anew by glibc and costs a page fault per 4 KiB on first touch (about 6 GB/s on
  // the reference VM, slower than DRAM), which dominated every large op's time (see
  // docs/decisions.md, "Released large buffers are reused"). Thread-safe. Not under
  // AddressSanitizer, so that its use-after-free checks still see every release.
  // `stats`, if given, counts the allocation and its release (a device's counters,
  // runtime/memory_stats.h).
  static StatusOr<std::shared_ptr<BufferStorage>> Allocate(size_t size, std::shared_ptr<MemoryStats> stats = nullptr);
  // Borrowed storage: `release` (may be empty) runs when the last reference is dropped.
  static std::shared_ptr<BufferStorage> Borrow(void* data, size_t size, std::function<void()> release);
  // Storage whose bytes will be another storage's, named later (PJRT alias buffers): data()
  // is null until Bind. Not owned, so never written in place.
  static std::shared_ptr<BufferStorage> Deferred(size_t size);
  // Points deferred storage at `target`'s bytes (of the same size) and keeps `target` alive
  // as long as this storage. Called once, before the ready event of the buffers on this
  // storage fires: that event orders it before every read.
  void Bind(std::shared_ptr<BufferStorage> target);

  ~BufferStorage();
  BufferStorage(const BufferStorage&) = delete;
  BufferStorage& operator=(const BufferStorage&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool owned() const { return owned_; }
  // Whether more than one Buffer was ever made on these bytes (PJRT_Buffer_Bitcast): an
  // execution then never writes a result into them in place, since the other buffer would
  // see it. Stays set for the storage's life.
  void MarkShared() { shared_.store(true, std::memory_order_relaxed); }
  bool shared() const { return shared_.load(std::memory_order_relaxed); }

 private:
  BufferStorage(void* data, size_t size, bool owned, std::function<void()> release,
                std::shared_ptr<MemoryStats> stats = nullptr)
      : data_(data), size_(size), owned_(owned), release_(std::move(release)), stats_(std::move(stats)) {}
  void* data_;
  size_t size_;
  bool owned_;
  std::atomic<bool> shared_{false};
  std::function<void()> release_;
  std::shared_ptr<MemoryStats> stats_;
  std::shared_ptr<BufferStorage> bound_;  // Deferred storage's target
};

class Buffer {
 public:
  // `layout`: the major_to_minor order of the bytes; empty (or row-major) for row-major.
  Buffer(DType dtype, Dims dims, Device* device, MemorySpace* memory, std::shared_ptr<BufferStorage> storage,
         EventRef ready, std::vector<int64_t> layout = {});
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  // The major_to_minor order of the bytes; empty for row-major (never a row-major list).
  const std::vector<int64_t>& layout() const { return layout_; }
  Device* device() const { return device_; }
  MemorySpace* memory() const { return memory_; }
  const EventRef& ready_event() const { return ready_; }
  // Bytes of the dense array.
  size_t size_in_bytes() const;

  // The storage, or FailedPrecondition naming `caller` if the buffer was deleted.
  StatusOr<std::shared_ptr<BufferStorage>> storage(const char* caller) const;
  // Drops this buffer's reference to its storage. Idempotent.
  void Delete();
  bool IsDeleted() const;

  // Usages: events of queued work that reads the storage outside the device's queue order
  // (executions, copies to the host or to other devices), each firing when that work is
  // done. An execution that takes this buffer's storage for a result (donation) waits for
  // them before it writes. AddUsage drops the events that have fired already.
  void AddUsage(EventRef done) const;
  // Removes and returns the pending usages.
  std::vector<EventRef> TakeUsages();
  // Whether a usage has not fired yet.
  bool HasPendingUsages() const;
  // Whether external references (below) hold the storage.
  bool HasExternalReferences() const;
  // External references (PJRT_Buffer_Increase/DecreaseExternalReferenceCount) keep the
  // storage alive even after Delete().
  void IncreaseExternalReferenceCount();
  Status DecreaseExternalReferenceCount();

 private:
  DType dtype_;
  Dims dims_;
  std::vector<int64_t> layout_;
  Device* device_;
  MemorySpace* memory_;
  EventRef ready_;
  mutable std::mutex mutex_;
  std::shared_ptr<BufferStorage> storage_;  // null once deleted
  std::vector<std::shared_ptr<BufferStorage>> external_refs_;
  mutable std::vector<EventRef> usages_;
};

// Copies a strided host array into dense row-major `dst`. `byte_strides` empty means the
// source is already dense row-major.
void CopyStridedToDense(const void* src, const Dims& dims, const std::vector<int64_t>& byte_strides,
                        size_t element_size, void* dst);
// Copies dense row-major `src` into a strided host array.
void CopyDenseToStrided(const void* src, const Dims& dims, const std::vector<int64_t>& byte_strides,
                        size_t element_size, void* dst);

}  // namespace stablert::runtime
