// What every oneDNN-backed kernel shares (internal to kernels/): the process's CPU engine,
// a stream per thread, the threading rule, and the error conversion.
//
// Threading: StableRT's process has one thread budget (base/thread_pool.h). oneDNN (Debian's
// build) would fork an OpenMP team of its own for every primitive; instead every oneDNN call
// runs on the calling thread alone (OneDnnThreadScope), and a kernel that wants both cores
// splits its step into tiles itself and runs them on ThreadPool::Shared(). So no OpenMP
// thread is ever started, and oneDNN work never competes with the pool.
#pragma once

#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "base/dtype.h"
#include "base/env.h"
#include "base/status.h"

namespace stablert::kernels::onednn {

// The process's CPU engine: created on first use (thread-safe), never destroyed, so no
// primitive outlives it at exit.
const dnnl::engine& Engine();

// This thread's in-order CPU stream (a stream executes on the calling thread).
dnnl::stream& ThreadStream();

// Put one on the stack around any oneDNN primitive creation or execution: OpenMP regions
// oneDNN opens from this thread then run on this thread alone. (OpenMP's thread count is a
// per-thread setting; it is set once per thread and left so, which costs nothing after.)
class OneDnnThreadScope {
 public:
  OneDnnThreadScope();
};

// A Status for an exception thrown by oneDNN while doing `what`.
Status FromDnnlError(const dnnl::error& error, const std::string& what);

// oneDNN's element type for f32, bf16 and f16; Unimplemented for others.
StatusOr<dnnl::memory::data_type> DnnlType(DType dtype);

// Caps the instruction set oneDNN generates code for (STABLERT_ISA); kBest leaves its own
// choice. oneDNN accepts this only before its first primitive; later calls change nothing.
void CapIsa(env::Isa level);

// Bytes of scratch memory for this thread, at least `bytes`, 64-byte aligned. The buffer
// belongs to the thread and is reused by its next call: valid until the thread asks again.
void* ThreadScratch(size_t bytes);

}  // namespace stablert::kernels::onednn
