// Which implementation a prepared "dot.<T>" step runs (dot.cc): for tests and benchmarks.
#pragma once

namespace stablert::kernels {

enum class DotPath {
  kLoops,   // StableRT's loop nest (no prepared state)
  kSmall,   // libxsmm's generated kernel (xsmm_matmul.h)
  kOneDnn,  // oneDNN's matmul primitive, in tiles (onednn_matmul.h)
  kMatVec,  // one row times a [K,N] matrix, its k split over the pool (dot.cc)
};

// The path of a step whose prepare function returned `state` (KernelArgs::state).
DotPath PreparedDotPath(const void* state);

}  // namespace stablert::kernels
