// Memory blocks for large arrays: buffers, execution arenas, kernel workspaces.
//
// A block of at least kHugePageMinBytes starts on a 2 MiB boundary and its whole 2 MiB pages
// are marked for transparent huge pages (madvise MADV_HUGEPAGE; Linux with THP in "madvise" or
// "always" mode; elsewhere, or when the kernel refuses, the block stays on 4 KiB pages). A
// matrix product whose operands span thousands of 4 KiB pages misses the TLB on most panel
// switches: 2048^3 f32 on two cores took 67-77 ms with 4 KiB pages against 58-61 ms with
// huge pages (docs/benchmarks.md, "Matrix products on huge pages"). Smaller blocks are plain
// 64-byte aligned allocations. Only whole 2 MiB pages inside the block are advised, so a
// block never holds more physical memory than its size rounded up to 4 KiB.
//
// Ownership: the caller owns the block and returns it with FreeLargeBlock (std::free).
// Thread-safe. Failure: nullptr when the system has no memory for the block.
#pragma once

#include <cstddef>

namespace stablert {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
// Blocks from this size on are huge-page backed: below it, the 2 MiB alignment's virtual
// reservation and the page's fault cost are not repaid.
inline constexpr size_t kHugePageMinBytes = size_t{4} << 20;

// `bytes` (> 0) of memory aligned to at least 64 bytes; see above.
void* AllocateLargeBlock(size_t bytes);
void FreeLargeBlock(void* block);

// Whether AllocateLargeBlock advises huge pages for a block of `bytes` (tests, benchmarks).
bool LargeBlockUsesHugePages(size_t bytes);

}  // namespace stablert
