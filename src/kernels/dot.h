// Which implementation a prepared "dot.<T>" or "dot_epilogue.f32" step runs (dot.cc): for
// tests and benchmarks.
#pragma once

namespace stablert::kernels {

enum class DotPath {
  kLoops,   // StableRT's loop nest (no prepared state)
  kSmall,   // libxsmm's generated kernel (xsmm_matmul.h)
  kOneDnn,  // oneDNN's matmul primitive, in tiles (onednn_matmul.h)
  kMatVec,  // f32 matrix-vector product (M or N is 1) on vector loops (dot_matvec.h)
  kWidened,  // bf16 product widened to f32 for oneDNN's f32 path (no native bf16 matmul)
};

// The path of a step whose prepare function returned `state` (KernelArgs::state).
DotPath PreparedDotPath(const void* state);

// For a prepared "dot_epilogue.f32" step: whether the library path applies its ops (oneDNN
// as post-ops, libxsmm to each tile as it is written; else the kernel applies them over the
// written product).
bool PreparedEpilogueByLibrary(const void* state);

}  // namespace stablert::kernels
