#include "kernels/onednn_matmul.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

namespace stablert::kernels::onednn {
namespace {

// One CPU engine per process, created on first use (thread-safe) and never destroyed, so
// that no primitive outlives it at exit.
const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// Streams are cheap but not free; each thread keeps one (a CPU stream executes in order on
// the calling thread, which forks oneDNN's OpenMP team).
dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

struct MatmulState {
  dnnl::memory::desc lhs, rhs, out;
  dnnl::matmul primitive;
  std::string implementation;
  bool single_thread = false;
};

// While alive, OpenMP regions started from this thread (oneDNN's) run on this thread alone
// if `single` (OpenMP's thread-count setting is per thread; it is restored after).
class ScopedSingleThread {
 public:
  explicit ScopedSingleThread(bool single) : saved_(single ? omp_get_max_threads() : 0) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~ScopedSingleThread() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  ScopedSingleThread(const ScopedSingleThread&) = delete;
  ScopedSingleThread& operator=(const ScopedSingleThread&) = delete;

 private:
  int saved_;
};

Status FromDnnlError(const dnnl::error& error, const char* what) {
  return Internal(std::string("oneDNN ") + what + ": " + error.what() + " (status " +
                  std::to_string(static_cast<int>(error.status)) + ")");
}

StatusOr<dnnl::memory::data_type> DnnlType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return dnnl::memory::data_type::f32;
    case DType::kBF16: return dnnl::memory::data_type::bf16;
    case DType::kF16: return dnnl::memory::data_type::f16;
    default: return Unimplemented("oneDNN matmul does not take " + std::string(DTypeName(dtype)));
  }
}

}  // namespace

MatmulShape DotShape(const KernelArgs& args) {
  MatmulShape shape;
  const BufferView& lhs = args.inputs[0];
  const BufferView& out = args.outputs[0];
  shape.dtype = out.dtype;
  shape.lhs_bkm = args.params[0][0] != 0;
  shape.rhs_bnk = args.params[0][1] != 0;
  shape.batch = out.dims[0];
  shape.m = out.dims[1];
  shape.n = out.dims[2];
  shape.k = shape.lhs_bkm ? lhs.dims[1] : lhs.dims[2];
  return shape;
}

StatusOr<KernelState> PrepareMatmul(const MatmulShape& shape) {
  auto type = DnnlType(shape.dtype);
  if (!type.ok()) return type.status();
  const int64_t b = shape.batch, m = shape.m, n = shape.n, k = shape.k;
  if (b <= 0 || m <= 0 || n <= 0 || k <= 0) return Unimplemented("oneDNN matmul of an empty product");
  try {
    using dims = dnnl::memory::dims;
    // oneDNN fixes its work decomposition (thread count included) when it creates the
    // primitive, so creation runs under the same setting as execution.
    ScopedSingleThread threads(shape.single_thread);
    auto state = std::make_shared<MatmulState>();
    state->single_thread = shape.single_thread;
    // Logical dims are [B,M,K] x [B,K,N] -> [B,M,N]; the stored layouts become strides.
    state->lhs = dnnl::memory::desc(dims{b, m, k}, *type, shape.lhs_bkm ? dims{m * k, 1, m} : dims{m * k, k, 1});
    state->rhs = dnnl::memory::desc(dims{b, k, n}, *type, shape.rhs_bnk ? dims{k * n, 1, k} : dims{k * n, n, 1});
    state->out = dnnl::memory::desc(dims{b, m, n}, *type, dims{m * n, n, 1});
    dnnl::matmul::primitive_desc descriptor(dnnl::matmul::desc(state->lhs, state->rhs, state->out), Engine());
    state->implementation = descriptor.impl_info_str();
    // The reference implementation is a plain loop nest, slower than StableRT's own.
    if (state->implementation.find("ref") != std::string::npos)
      return Unimplemented("oneDNN has only its reference matmul for " + std::string(DTypeName(shape.dtype)));
    state->primitive = dnnl::matmul(descriptor);
    return KernelState(std::move(state));
  } catch (const dnnl::error& error) {
    if (error.status == dnnl_unimplemented)
      return Unimplemented("oneDNN has no matmul for " + std::string(DTypeName(shape.dtype)) + " on this CPU");
    return FromDnnlError(error, "matmul creation failed");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory creating a oneDNN matmul");
  } catch (const std::exception& error) {
    return Internal(std::string("oneDNN matmul creation failed: ") + error.what());
  }
}

Status RunMatmul(const void* state_ptr, const KernelArgs& args) {
  const auto& state = *static_cast<const MatmulState*>(state_ptr);
  try {
    const dnnl::engine& engine = Engine();
    // Memory objects only wrap the buffers (no copy); oneDNN takes non-const handles.
    dnnl::memory lhs(state.lhs, engine, args.inputs[0].data);
    dnnl::memory rhs(state.rhs, engine, args.inputs[1].data);
    dnnl::memory out(state.out, engine, args.outputs[0].data);
    dnnl::stream& stream = ThreadStream();
    ScopedSingleThread threads(state.single_thread);
    state.primitive.execute(stream, {{DNNL_ARG_SRC, lhs}, {DNNL_ARG_WEIGHTS, rhs}, {DNNL_ARG_DST, out}});
    stream.wait();
    return OkStatus();
  } catch (const dnnl::error& error) {
    return FromDnnlError(error, "matmul failed");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory running a oneDNN matmul");
  } catch (const std::exception& error) {
    return Internal(std::string("oneDNN matmul failed: ") + error.what());
  }
}

const char* ImplementationName(const void* state) {
  return static_cast<const MatmulState*>(state)->implementation.c_str();
}

}  // namespace stablert::kernels::onednn
