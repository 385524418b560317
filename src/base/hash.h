// Stable, non-cryptographic hashing for fingerprints (executables, topologies).
// The values are part of observable behaviour (cache keys), so the algorithm never changes:
// 64-bit FNV-1a. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stablert {

inline constexpr uint64_t kFingerprintSeed = 14695981039346656037ull;

// Folds `data` into `hash` (start from kFingerprintSeed).
constexpr uint64_t Fingerprint64(std::string_view data, uint64_t hash = kFingerprintSeed) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// 16 lowercase hex digits.
std::string FingerprintToHex(uint64_t fingerprint);

}  // namespace stablert
