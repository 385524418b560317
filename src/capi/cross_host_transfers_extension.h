// The PJRT cross-host transfers extension (type PJRT_Extension_Type_CrossHostTransfers,
// version 8 of XLA's xla/pjrt/extensions/cross_host_transfers/): jaxlib's C API client reports
// `supports_cross_host_transfers` when a plugin has it, and JAX then copies arrays onto another
// process's devices (jax.device_put) through
//   PJRT_Transfers_PJRT_Client_CrossHostSendBuffers     the sending process: buffer i goes to
//                                                       global device dst_global_device_ids[i]
//                                                       under transfer_keys[i]; send_events[i]
//                                                       is set once its bytes are written
//   PJRT_Transfers_PJRT_Client_CrossHostReceiveBuffers  the receiving process: buffers on
//                                                       `device` in layouts[i] (null: row-major;
//                                                       any dense dimension order), ready once
//                                                       the bytes from src_global_device_ids[i]
//                                                       arrived
// both over the job's collective transport (runtime/cross_host_transfer.h). A buffer is sent
// in whatever layout it has and converted on arrival into the layout asked for; tiled
// layouts are UNIMPLEMENTED naming the function (StableRT stores dense arrays). The older
// descriptor-based pair (MakeCrossHostReceiveBuffers, CopyToRemoteDevice) returns
// UNIMPLEMENTED: jaxlib only falls back to it when the pair above is unimplemented.
//
// Errors name the function, the buffer's index and devices; a peer that dies or never
// sends fails the receiving buffers' ready events (never a hang). In a single-process job
// every call is FAILED_PRECONDITION (there is no other process). Thread-safe: static data.
#pragma once

#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// The extension, whose `next` is `next`.
PJRT_Extension_Base* CrossHostTransfersExtension(PJRT_Extension_Base* next);

}  // namespace stablert::capi
