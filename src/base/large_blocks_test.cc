#include "base/large_blocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace stablert {
namespace {

// The "THPeligible" flag /proc/self/smaps gives the mapping that holds `address` (Linux 5.x
// and later print it), or -1 when the file or the flag is absent.
int ThpEligible(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return -1;
  const auto target = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= target && target < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

bool TransparentHugePagesAvailable() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(mode, text);
  return text.find("[madvise]") != std::string::npos || text.find("[always]") != std::string::npos;
}

TEST(LargeBlocks, SmallBlocksAreCacheLineAlignedAndUsable) {
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{4096}, kHugePageMinBytes - 1}) {
    void* block = AllocateLargeBlock(bytes);
    ASSERT_NE(block, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u) << bytes;
    EXPECT_FALSE(LargeBlockUsesHugePages(bytes));
    std::memset(block, 0x5a, bytes);  // every byte is the caller's (AddressSanitizer checks)
    FreeLargeBlock(block);
  }
}

TEST(LargeBlocks, LargeBlocksStartOnAHugePageAndAreMarkedForHugePages) {
  const size_t bytes = 3 * kHugePageBytes + 12345;  // a tail beyond the last whole page
  void* block = AllocateLargeBlock(bytes);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kHugePageBytes, 0u);
  std::memset(block, 1, bytes);
  EXPECT_EQ(static_cast<unsigned char*>(block)[bytes - 1], 1);
  if (LargeBlockUsesHugePages(bytes) && TransparentHugePagesAvailable()) {
    // madvise splits the mapping: the advised whole pages are eligible, the tail is not.
    const int eligible = ThpEligible(block);
    if (eligible >= 0) {
      EXPECT_EQ(eligible, 1);
      EXPECT_EQ(ThpEligible(static_cast<char*>(block) + bytes - 1), 0);
    }
  }
  FreeLargeBlock(block);
}

TEST(LargeBlocks, ZeroBytesGivesAFreeableBlock) {
  void* block = AllocateLargeBlock(0);
  ASSERT_NE(block, nullptr);
  FreeLargeBlock(block);
}

}  // namespace
}  // namespace stablert
