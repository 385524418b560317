// Ascending in-place sorts of unsigned keys for the sort kernels (kernels/sort.cc): Highway's
// vqsort (hwy/contrib/sort/vqsort-inl.h) instantiated here for the four key types the
// kernels use, with StableRT's own choice of target (docs/decisions.md, "Sort target"):
//   - the best target the dispatcher allows (dispatch.h, honouring STABLERT_ISA), except
//   - an AVX-512 target is replaced by AVX2 for a key type when a one-time probe finds
//     AVX-512 vqsort of that key type slower than AVX2 vqsort on this CPU (AVX-512
//     compress-store to memory, which vqsort's partition uses, is microcoded on AMD Zen 4:
//     32-bit keys sort ~10x slower there, 64-bit keys still faster than at AVX2).
// The probes run once, at the first sort of at least 256 keys that could use AVX-512
// (a few ms for the four key types), and their results are kept for the process. The sorted output is the same at every target (the keys
// are totally ordered; equal keys are equal bits).
// Thread-safe (the probe is a function-local static). Failure: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace stablert::kernels::simd {

// A 128-bit key ordered by (hi, lo); the layout of hwy::uint128_t.
struct SortKey128 {
  uint64_t lo, hi;
};

void SortAscending(uint16_t* keys, size_t n);
void SortAscending(uint32_t* keys, size_t n);
void SortAscending(uint64_t* keys, size_t n);
void SortAscending(SortKey128* keys, size_t n);

// The Highway target the sorts above use now for keys of key_bits (16, 32, 64, 128) and at
// least 256 keys (e.g. "AVX2"), running the probes if needed.
std::string SortTargetName(int key_bits);

// The probe's finding for keys of key_bits: true when AVX-512 vqsort is slower than AVX2
// vqsort on this CPU (false where the CPU or the build has no AVX-512 or no AVX2).
bool AvxSortIsSlowerThanAvx2(int key_bits);

}  // namespace stablert::kernels::simd
