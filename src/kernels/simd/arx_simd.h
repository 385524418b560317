// Add-rotate-xor chains over pairs of u32 words, the round structure of Threefry-2x32 (the
// hash behind jax.random's default PRNG), evaluated with the pair held in vector registers
// from the first step to the last (the host's ISA, dispatch.h).
//
// A chain is a list of steps applied in order to every element pair (x0, x1):
//   kRound, rotation r (1..31):  x0 = x0 + x1;  x1 = rotl(x1, r) ^ x0
//   kAdd0, addend c:             x0 = x0 + c
//   kAdd1, addend c:             x1 = x1 + c
// (all arithmetic mod 2^32). The result is bit for bit what the scalar steps compute.
// Pure function: thread-safe, no failure modes; a step of another kind or a rotation
// outside 1..31 is a caller error (checked in debug builds only, skipped otherwise).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stablert::kernels::simd {

enum class ArxKind : uint32_t { kRound = 0, kAdd0 = 1, kAdd1 = 2 };

struct ArxStep {
  ArxKind kind = ArxKind::kRound;
  uint32_t value = 0;  // the rotation (kRound) or the addend (kAdd0, kAdd1)
};

// y0[i], y1[i] = the chain applied to (x0[i], x1[i]) for i < n. y0/y1 may alias x0/x1
// exactly (each element is read before it is written), not partially.
void ArxChain(const ArxStep* steps, size_t num_steps, const uint32_t* x0, const uint32_t* x1, uint32_t* y0,
              uint32_t* y1, size_t n);

// The scalar reference of one pair (also the kernel's tail).
inline void ArxChainScalar(const ArxStep* steps, size_t num_steps, uint32_t& x0, uint32_t& x1) {
  for (size_t s = 0; s < num_steps; ++s) {
    const ArxStep step = steps[s];
    switch (step.kind) {
      case ArxKind::kRound:
        x0 += x1;
        x1 = ((x1 << step.value) | (x1 >> ((32 - step.value) & 31))) ^ x0;
        break;
      case ArxKind::kAdd0: x0 += step.value; break;
      case ArxKind::kAdd1: x1 += step.value; break;
    }
  }
}

}  // namespace stablert::kernels::simd
