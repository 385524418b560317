// Host transfers through the PJRT C API: the handler an execution's send/recv steps use,
// built from PJRT_ExecuteOptions.send_callbacks / recv_callbacks, and the
// PJRT_CopyToDeviceStream a recv callback pushes the received bytes through
// (defined in stream_api.cc).
//
// A send step copies the operand bytes into a new PJRT_Chunk (whose deleter frees them),
// calls the channel's send_callback with total_size_in_bytes = the chunk's size and
// done = true, and returns the callback's error, if any. A recv step creates a stream
// expecting the result's bytes (granule size 1), hands it to the channel's recv_callback
// (which owns it and destroys it), and waits until AddChunk has delivered all bytes; a
// stream destroyed before that fails the step.
//
// Thread-safety: the handler is immutable and shared by every device of the execution;
// streams are internally synchronized.
#pragma once

#include <memory>

#include "base/status.h"
#include "runtime/host_transfer.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// The handler for the send/recv callbacks in `options` (one list per argument list,
// `num_devices` of them), copied so that the option structs need not outlive the call;
// nullptr when the options carry no callbacks. InvalidArgument naming the field for null
// lists or callbacks, and for channels given twice for one device.
StatusOr<std::shared_ptr<const runtime::HostTransferHandler>> HostTransfersFromOptions(
    const PJRT_ExecuteOptions* options, size_t num_devices);

}  // namespace stablert::capi
