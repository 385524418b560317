// The counter-based bit generators behind stablehlo.rng_bit_generator and stablehlo.rng:
// Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds), as published by Salmon et al.
// (SC'11, "Parallel random numbers: as easy as 1, 2, 3"), and the ways XLA lays their
// outputs out over an array, so that results are bit-identical to XLA's CPU backend.
// Internal to kernels/ (and its tests). Pure functions: thread-safe, no failure modes.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace stablert::kernels::rng {

// One Threefry-2x32 block: 20 rounds over the counter (x0, x1) with key (k0, k1).
inline std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> counter) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + ks[0];
  uint32_t x1 = counter[1] + ks[1];
  for (int group = 0; group < 5; ++group) {
    const int* rotations = kRotations + (group % 2) * 4;
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = (x1 << rotations[r]) | (x1 >> (32 - rotations[r]));
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

// One Philox-4x32 block: 10 rounds over the 128-bit counter (least significant word
// first) with key (k0, k1).
inline std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 2> key, std::array<uint32_t, 4> x) {
  constexpr uint64_t kMulA = 0xD2511F53u, kMulB = 0xCD9E8D57u;
  constexpr uint32_t kBumpA = 0x9E3779B9u, kBumpB = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kMulA * x[0];
    const uint64_t p1 = kMulB * x[2];
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kBumpA;
    key[1] += kBumpB;
  }
  return x;
}

inline std::array<uint32_t, 2> Split64(uint64_t v) {
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}
inline uint64_t Join64(uint32_t lo, uint32_t hi) { return uint64_t{lo} | (uint64_t{hi} << 32); }

// A 128-bit counter, least significant half first.
struct U128 {
  uint64_t lo = 0, hi = 0;
  U128 Plus(uint64_t n) const {
    U128 r{lo + n, hi};
    if (r.lo < lo) ++r.hi;
    return r;
  }
};

// Fills `out` (`width_bytes` per element: 1, 2, 4 or 8) with Threefry bits for an array
// of shape `dims`, from `key` and the 64-bit counter `counter`, as XLA's
// ThreeFryBitGenerator does; returns the advanced counter.
//   64-bit elements: element i = block(counter + i), low word first.
//   narrower elements: the shape is halved along one dimension (the first of even size,
//   else the first of largest size); block h of the halved shape gives its two words to
//   positions 2j and 2j+1 along that dimension; 8- and 16-bit elements keep the low bits.
uint64_t ThreefryFill(uint64_t key, uint64_t counter, std::span<const int64_t> dims, int width_bytes, void* out);

// The same for Philox: block i (counter + i, 128-bit) gives elements 4i..4i+3 (32-bit and
// narrower, low bits kept) or 2i, 2i+1 (64-bit, words joined low first); returns the
// counter advanced by the number of blocks.
U128 PhiloxFill(uint64_t key, U128 counter, int64_t num_elements, int width_bytes, void* out);

}  // namespace stablert::kernels::rng
