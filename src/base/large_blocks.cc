#include "base/large_blocks.h"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace stablert {

bool LargeBlockUsesHugePages(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  return bytes >= kHugePageMinBytes;
#else
  (void)bytes;
  return false;
#endif
}

void* AllocateLargeBlock(size_t bytes) {
  if (bytes == 0) bytes = 1;
  constexpr size_t kLine = 64;
  if (!LargeBlockUsesHugePages(bytes)) return std::aligned_alloc(kLine, (bytes + kLine - 1) / kLine * kLine);
  // aligned_alloc needs a size that is a multiple of the alignment; the rounding is virtual
  // address space only (pages past `bytes` are never touched, nor advised).
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* block = std::aligned_alloc(kHugePageBytes, rounded);
  if (block == nullptr) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // The whole 2 MiB pages that lie inside [block, block + bytes). A refusal (THP off, an
  // old kernel) leaves 4 KiB pages, which is correct, only slower: the result is not checked.
  const size_t advised = bytes / kHugePageBytes * kHugePageBytes;
  if (advised > 0) madvise(block, advised, MADV_HUGEPAGE);
#endif
  return block;
}

void FreeLargeBlock(void* block) { std::free(block); }

}  // namespace stablert
