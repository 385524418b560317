// The sizes of the CPU's data caches, for kernels that size their tiles to them.
//
// Read once (sysconf; on x86-64 glibc answers from CPUID) and kept; where the system does not
// say, or says something implausible, the answer is a size most cores of the last decade have
// (32 KiB L1 data and 1 MiB L2 per core). Thread-safe.
#pragma once

#include <cstdint>

namespace stablert {

inline constexpr int64_t kFallbackL1DataBytes = 32 * 1024;
inline constexpr int64_t kFallbackL2Bytes = 1024 * 1024;

// The L1 data cache of one core, in bytes (16 KiB .. 1 MiB).
int64_t L1DataCacheBytes();
// The L2 cache of one core, in bytes (128 KiB .. 64 MiB).
int64_t L2CacheBytes();

}  // namespace stablert
