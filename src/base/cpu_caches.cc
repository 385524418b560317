#include "base/cpu_caches.h"

#include <unistd.h>

namespace stablert {

int64_t L1DataCacheBytes() {
  static const int64_t bytes = [] {
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const long reported = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (reported >= 16 * 1024 && reported <= 1024 * 1024) return static_cast<int64_t>(reported);
#endif
    return kFallbackL1DataBytes;
  }();
  return bytes;
}

int64_t L2CacheBytes() {
  static const int64_t bytes = [] {
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (reported >= 128 * 1024 && reported <= 64 * 1024 * 1024) return static_cast<int64_t>(reported);
#endif
    return kFallbackL2Bytes;
  }();
  return bytes;
}

}  // namespace stablert
