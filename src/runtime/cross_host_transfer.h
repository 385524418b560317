// CrossHostTransfers: copies of buffers between the devices of different processes of a
// multi-process job (PJRT's cross-host transfers: jax.device_put onto another process's
// devices), over the job's collective transport (collectives/tcp_transport.h).
//
// A transfer is named by a key the framework draws in the same order on every process, the
// source device and the destination device; the sending process calls Send and the
// receiving process Receive with the same three. The message is tagged (kRun, key,
// source id << 32 | destination id), a tag space of its own: collective run ids are hashes
// of a program and are never kRun.
//
// Send waits (off the caller's thread) for the source buffer to be ready, then writes a
// header (element type, dimensions, the buffer's layout) and the bytes as they lie, in that
// layout; its event is set once the bytes were handed to the connection, with the error if
// the source failed or the peer is gone. Receive returns at once a buffer on the destination
// device, in the layout it is asked for, whose ready event is set when the bytes have arrived
// and were put in that layout (a copy when the sender's layout is the same, else one pass of
// the transpose kernel) — or with an error naming the function, the devices and the
// processes when the peer dies (at once), does not send within the collective timeout, or
// sends another shape.
//
// Ownership and threads: owned by the Client, used by any thread. Sends run in request order
// on one thread, receives in request order on another (a receive waits only for its own
// message; the transport files messages as they come, so the order in which they arrive
// does not matter). The destructor finishes the queued work (a receive from a live peer
// waits at most the timeout) and must run before the transport is destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "collectives/tcp_transport.h"
#include "runtime/array_layout.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/event.h"
#include "runtime/work_queue.h"

namespace stablert::runtime {

class CrossHostTransfers {
 public:
  static constexpr uint64_t kRun = 0x63726f7373686f73;  // "crosshos": not a program's run id

  CrossHostTransfers(collectives::TcpTransport* transport, std::chrono::milliseconds timeout);
  ~CrossHostTransfers();
  CrossHostTransfers(const CrossHostTransfers&) = delete;
  CrossHostTransfers& operator=(const CrossHostTransfers&) = delete;

  // Sends `buffer` (on a device of this process, in any layout) to device `destination` of
  // process `destination_process`. `function` names the caller in errors. A buffer that
  // cannot be sent (deleted) is an error here, and the receiver is told (its buffer fails at
  // once instead of waiting for the timeout).
  StatusOr<EventRef> Send(const char* function, const Buffer& buffer, int destination_id, int destination_process,
                          int64_t key);
  // A buffer of `dtype`/`dims` in `layout` (empty: row-major; else a permutation of the
  // dims, InvalidArgument naming `function` otherwise) on `device` (of this process) that
  // receives the array device `source_id` of process `source_process` sends under `key`,
  // whatever layout the sender's buffer has.
  StatusOr<std::unique_ptr<Buffer>> Receive(const char* function, DType dtype, const Dims& dims,
                                            const MajorToMinor& layout, Device* device, MemorySpace* memory,
                                            int source_id, int source_process, int64_t key);

 private:
  collectives::TcpTransport* transport_;
  std::chrono::milliseconds timeout_;
  WorkQueue senders_;
  WorkQueue receivers_;
};

}  // namespace stablert::runtime
