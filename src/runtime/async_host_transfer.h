// AsyncHostTransfer: a set of buffers on one memory space whose bytes arrive from the host
// later, piece by piece (what PJRT_Client_CreateBuffersForAsyncHostToDevice returns).
//
// Each buffer's storage is allocated at creation (dense, in the spec's layout: row-major
// unless the spec names another major_to_minor order, runtime/array_layout.h) and its ready
// event is unset. The host fills a buffer with raw chunks of its on-device bytes at byte
// offsets (TransferData, in any order, possibly from several threads), or all at once from a
// host literal (TransferLiteral, which puts the literal's elements into the buffer's layout). The chunk marked last, the literal, or SetBufferError closes
// the buffer: no transfer or error may follow. A closed buffer's ready event fires once
// every copy into it has finished — OK after the last transfer, with the given error after
// SetBufferError. Bytes no transfer wrote are unspecified (not zeroed).
//
// The Buffer of each index can be taken once (RetrieveBuffer), before, during or after its
// transfers; work using it (executions, copies to the host) waits on its ready event like on
// any other buffer's. Destroying the AsyncHostTransfer fails the ready event of every buffer
// not closed yet with FailedPrecondition ("... destroyed before buffer i received its last
// transfer"), so nothing waits forever; buffers already retrieved keep their storage.
//
// Copies run on the caller's thread: when TransferData/TransferLiteral return, the host
// bytes have been copied and may be reused.
//
// Thread-safety: all methods are thread-safe; chunks of one buffer may be copied
// concurrently. Must not outlive the client owning `memory`.
// Failure: misuse (index out of range, chunk outside the buffer, transfer into a closed
// buffer, second retrieval, shape mismatch) is InvalidArgument or FailedPrecondition with
// the buffer's index; nothing is changed then.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/event.h"

namespace stablert::runtime {

class AsyncHostTransfer {
 public:
  struct Spec {
    DType dtype;
    Dims dims;
    std::vector<int64_t> layout = {};  // major_to_minor order of the bytes; empty: row-major
  };

  // Allocates one buffer per spec in `memory` (counted in its first device's memory stats).
  // ResourceExhausted if an allocation fails; InvalidArgument for sizes beyond int64 and for
  // a layout that is not a permutation of the spec's dimensions.
  static StatusOr<std::unique_ptr<AsyncHostTransfer>> Create(const std::vector<Spec>& specs, MemorySpace* memory);
  ~AsyncHostTransfer();
  AsyncHostTransfer(const AsyncHostTransfer&) = delete;
  AsyncHostTransfer& operator=(const AsyncHostTransfer&) = delete;

  size_t buffer_count() const { return slots_.size(); }
  MemorySpace* memory() const { return memory_; }
  Device* device() const { return memory_->devices().front(); }
  // The byte size of buffer `index` (dense row-major).
  StatusOr<size_t> BufferSize(int64_t index) const;

  // The buffer of `index`; FailedPrecondition if it was taken already.
  StatusOr<std::unique_ptr<Buffer>> RetrieveBuffer(int64_t index);
  // Copies `size` bytes from `data` to byte `offset` of buffer `index`; `is_last` closes it.
  Status TransferData(int64_t index, const void* data, int64_t offset, int64_t size, bool is_last);
  // Copies a whole host array of `dtype` and `dims` (which must be the buffer's), laid out
  // with `byte_strides` (empty: dense row-major), into buffer `index` in the buffer's layout
  // and closes it.
  Status TransferLiteral(int64_t index, const void* data, DType dtype, const Dims& dims,
                         const std::vector<int64_t>& byte_strides);
  // Closes buffer `index` with `error` (not OK): its ready event fails with it.
  Status SetBufferError(int64_t index, Status error);

 private:
  struct Slot {
    DType dtype;
    Dims dims;
    std::vector<int64_t> layout;  // normalized: empty for row-major
    std::shared_ptr<BufferStorage> storage;
    EventRef ready;
    std::unique_ptr<Buffer> buffer;  // null once retrieved
    bool closed = false;             // the last transfer, the literal or an error was given
    bool fired = false;              // `ready` has been (or is being) set
    Status final_status;             // what `ready` carries once closed
    int in_flight = 0;               // copies running now
  };

  explicit AsyncHostTransfer(MemorySpace* memory) : memory_(memory) {}
  Status CheckIndex(int64_t index) const;
  // Checks that buffer `index` is open and registers one copy into it (closing it if
  // `closes`); the caller runs the copy and then calls FinishCopy. Holds mutex_.
  Status BeginCopyLocked(int64_t index, bool closes);
  void FinishCopy(int64_t index);

  MemorySpace* memory_;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
};

}  // namespace stablert::runtime
