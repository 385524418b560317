// Host transfers: how a running program hands data to host code and takes data back.
//
// A `stablehlo.send` / `stablehlo.recv` marked `is_host_transfer` moves the bytes of one
// array to or from the host over a numbered channel (JAX's host callbacks: the operands of
// a callback are sent, its results received). The plan runs them as kHostTransfer steps;
// the executor passes the bytes to a HostTransferHandler that the caller of an execution
// provides (capi/ builds one from PJRT_ExecuteOptions.send_callbacks/recv_callbacks).
//
// Thread-safety: a handler is shared by every device of one execution. Calls for one device
// come one at a time, in program order; different devices (partitions of a manual region,
// replicas) may call at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace stablert::runtime {

class HostTransferHandler {
 public:
  virtual ~HostTransferHandler() = default;
  // Hands the `size` bytes at `data` (dense row-major) to the host on `channel` for device
  // `device` (an index into the loaded executable's addressable devices). Returns once the
  // host has taken them; the host's error (a failed callback) is returned as is.
  virtual Status Send(int device, int64_t channel, const void* data, size_t size) const = 0;
  // Fills the `size` bytes at `data` with what the host sends on `channel` for `device`.
  // Returns once all of them have arrived, or the host's error.
  virtual Status Recv(int device, int64_t channel, void* data, size_t size) const = 0;
};

// Where one run of a plan sends its host transfers: `handler` (null: a host transfer fails
// with an error naming its channel) and the device each partition stands for.
struct HostTransfers {
  const HostTransferHandler* handler = nullptr;
  // device_of_partition[p]: the device of partition p of a manual region; a program outside
  // manual regions runs as partition 0. Empty: every partition is `device`.
  std::vector<int> device_of_partition;
  int device = 0;

  int DeviceOf(int partition) const {
    if (partition >= 0 && static_cast<size_t>(partition) < device_of_partition.size())
      return device_of_partition[static_cast<size_t>(partition)];
    return device;
  }
};

}  // namespace stablert::runtime
