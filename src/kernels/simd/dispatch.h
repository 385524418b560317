// Run-time selection of the host's vector instruction set (Highway's dynamic dispatch).
// The plugin is compiled for baseline x86-64; each vector kernel is compiled once per
// Highway target (SSE4, AVX2, AVX-512 on x86-64; NEON/SVE on arm64) and the best target the
// CPU offers is chosen at the first call. STABLERT_ISA (base/env.h) caps the level;
// PJRT_Client_Create applies it through ApplyIsaSetting, which caps the code oneDNN and
// libxsmm generate as well.
//
// How to add a vector kernel:
//   1. In the family's file under kernels/simd/ (unary_simd.cc, binary_simd.cc; a new family
//      gets a new file following their pattern), write the loop inside the per-target block
//        #define HWY_TARGET_INCLUDE "kernels/simd/<file>.cc"
//        #include "hwy/foreach_target.h"
//        #include "hwy/highway.h"
//        HWY_BEFORE_NAMESPACE(); namespace stablert::kernels::simd::HWY_NAMESPACE { ... }
//        HWY_AFTER_NAMESPACE();
//      and export it once, outside that block (#if HWY_ONCE): HWY_EXPORT(Fn) and a plain
//      function that calls HWY_DYNAMIC_DISPATCH(Fn)(args...).
//   2. Declare the plain function in the family's header (unary_simd.h, binary_simd.h) and
//      call it from the kernel in kernels/<family>.cc for the dtypes it covers.
//   3. Lanes whose inputs the vector code does not handle exactly as the scalar semantics in
//      scalar_ops.h (special values, ranges where a polynomial is not accurate) must go to the
//      scalar op: see VectorMap in unary_simd.cc.
//   4. Test it at every level (vector_math_test.cc runs each level the CPU has).
// Math functions of our own (where Highway's contrib math has none) go into
// special_math-inl.h, included by the family files inside their per-target block.
#pragma once

#include <cstdint>
#include <string>

#include "base/env.h"
#include "base/status.h"

namespace stablert::kernels::simd {

// Caps the instruction set at `level` (kBest: no cap). InvalidArgument naming STABLERT_ISA
// if the CPU lacks the level. Affects every later call of a vector kernel in the process.
Status SetIsa(env::Isa level);
// Reads STABLERT_ISA and applies it.
Status ApplyIsaSetting();
// The name of the target vector kernels run on now ("AVX3", "AVX2", "SSE4", ...).
std::string CurrentTarget();
// Whether the CPU has `level` (regardless of the current cap).
bool CpuHas(env::Isa level);

}  // namespace stablert::kernels::simd
