// L1DataCacheBytes, L2CacheBytes: what the system reports when plausible, a fixed fallback otherwise.
#include "base/cpu_caches.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace stablert {
namespace {

TEST(CpuCachesTest, L1DataCacheIsTheReportedSizeOrTheFallback) {
  const int64_t bytes = L1DataCacheBytes();
  EXPECT_GE(bytes, 16 * 1024);
  EXPECT_LE(bytes, 1024 * 1024);
  EXPECT_EQ(bytes, L1DataCacheBytes());  // read once
#ifdef _SC_LEVEL1_DCACHE_SIZE
  const long reported = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (reported >= 16 * 1024 && reported <= 1024 * 1024) EXPECT_EQ(bytes, reported);
  else EXPECT_EQ(bytes, kFallbackL1DataBytes);
#else
  EXPECT_EQ(bytes, kFallbackL1DataBytes);
#endif
}

TEST(CpuCachesTest, L2CacheIsTheReportedSizeOrTheFallback) {
  const int64_t bytes = L2CacheBytes();
  EXPECT_GE(bytes, 128 * 1024);
  EXPECT_LE(bytes, 64 * 1024 * 1024);
  EXPECT_EQ(bytes, L2CacheBytes());  // read once
#ifdef _SC_LEVEL2_CACHE_SIZE
  const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (reported >= 128 * 1024 && reported <= 64 * 1024 * 1024) EXPECT_EQ(bytes, reported);
  else EXPECT_EQ(bytes, kFallbackL2Bytes);
#else
  EXPECT_EQ(bytes, kFallbackL2Bytes);
#endif
}

}  // namespace
}  // namespace stablert
