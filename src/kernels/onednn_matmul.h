// Batched matrix products on oneDNN's matmul primitive (internal to kernels/).
//
// The primitive is created once per plan step (PrepareMatmul, from the dot kernel's prepare
// function) for the step's fixed shapes and layouts; every call then only wraps the
// buffers and executes it. Transposed operands are expressed through memory-descriptor
// strides, so no operand is copied. oneDNN runs on its own OpenMP threads: a step on this
// path is called once, never split across StableRT's pool. oneDNN's exceptions never leave
// these functions; they become Status errors.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "base/status.h"
#include "kernels/kernel.h"

namespace stablert::kernels::onednn {

// The product of one "dot.<T>" step: out[b] = lhs[b] (M x K) * rhs[b] (K x N).
struct MatmulShape {
  DType dtype = DType::kInvalid;
  int64_t batch = 0, m = 0, n = 0, k = 0;
  bool lhs_bkm = false;  // lhs stored [B,K,M]
  bool rhs_bnk = false;  // rhs stored [B,N,K]
  bool single_thread = false;  // run on the calling thread alone, not on oneDNN's OpenMP team
};

// The shape of the dot step `args` describes (kernel ABI of "dot.<T>", registry.h).
MatmulShape DotShape(const KernelArgs& args);

// Creates the primitive for `shape`. Unimplemented if oneDNN has no implementation for the
// element type on this CPU other than its slow reference one, or if a dimension is zero
// (oneDNN does not accept empty products; the loops handle them).
StatusOr<KernelState> PrepareMatmul(const MatmulShape& shape);

// Runs the product with the state PrepareMatmul returned, on the buffers of `args`.
// Thread-safe: calls may run concurrently on other buffers.
Status RunMatmul(const void* state, const KernelArgs& args);

// The implementation oneDNN chose for a prepared product ("brg:avx512_core", ...).
const char* ImplementationName(const void* state);

}  // namespace stablert::kernels::onednn
