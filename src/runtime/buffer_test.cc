#include "runtime/buffer.h"

#include <gtest/gtest.h>

#include <numeric>

namespace stablert::runtime {
namespace {

TEST(StridedCopy, GathersAndScattersAnyStrides) {
  // A 2x3x4 int32 array stored with its dimensions permuted (strides of a 4x2x3 array).
  std::vector<int32_t> storage(24);
  std::iota(storage.begin(), storage.end(), 0);
  Dims dims = {2, 3, 4};
  std::vector<int64_t> strides = {3 * 4, 4, 2 * 3 * 4};
  std::vector<int32_t> dense(24);
  CopyStridedToDense(storage.data(), dims, strides, 4, dense.data());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(dense[(i * 3 + j) * 4 + k], storage[i * 3 + j + k * 6]);
  std::vector<int32_t> back(24, -1);
  CopyDenseToStrided(dense.data(), dims, strides, 4, back.data());
  EXPECT_EQ(back, storage);
}

TEST(Buffer, DeleteKeepsStorageAliveForExternalReferences) {
  auto storage = BufferStorage::Allocate(16);
  ASSERT_TRUE(storage.ok());
  void* data = (*storage)->data();
  Buffer buffer(DType::kF32, {4}, nullptr, nullptr, *storage, Event::Ready());
  storage = StatusOr<std::shared_ptr<BufferStorage>>(Internal("moved"));
  buffer.IncreaseExternalReferenceCount();
  buffer.Delete();
  EXPECT_TRUE(buffer.IsDeleted());
  EXPECT_FALSE(buffer.storage("test").ok());
  EXPECT_NE(data, nullptr);
  EXPECT_TRUE(buffer.DecreaseExternalReferenceCount().ok());
  EXPECT_FALSE(buffer.DecreaseExternalReferenceCount().ok());
}

TEST(BufferStorage, LargeReleasedBlocksAreReusedForTheSameSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "no reuse under AddressSanitizer";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "no reuse under AddressSanitizer";
#endif
#endif
  constexpr size_t kLarge = size_t{3} << 20;
  void* first = nullptr;
  {
    auto storage = BufferStorage::Allocate(kLarge);
    ASSERT_TRUE(storage.ok());
    first = (*storage)->data();
    static_cast<char*>(first)[kLarge - 1] = 1;  // writable to the end
  }
  auto again = BufferStorage::Allocate(kLarge - 10);  // same size rounded to 64 bytes
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->data(), first);
  EXPECT_EQ((*again)->size(), kLarge - 10);
  auto other = BufferStorage::Allocate(kLarge);  // the cached block is taken: a new one
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)->data(), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*other)->data()) % 64, 0u);
  // Small blocks are not cached (glibc reuses them cheaply); any size still works.
  auto small = BufferStorage::Allocate(100);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*small)->data()) % 64, 0u);
}

TEST(BufferStorage, BorrowedStorageRunsItsReleaseOnce) {
  int released = 0;
  int value = 7;
  {
    auto storage = BufferStorage::Borrow(&value, sizeof value, [&] { ++released; });
    auto copy = storage;
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
}

TEST(MemoryStats, CountsAllocationsCachedOrNotAndTheirRelease) {
  auto stats = std::make_shared<MemoryStats>();
  constexpr size_t kLarge = size_t{3} << 20;
  {
    auto first = BufferStorage::Allocate(kLarge, stats);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(stats->Get().bytes_in_use, static_cast<int64_t>(kLarge));
  }
  EXPECT_EQ(stats->Get().bytes_in_use, 0);
  auto again = BufferStorage::Allocate(kLarge, stats);  // from the cache: still new storage
  auto small = BufferStorage::Allocate(100, stats);
  ASSERT_TRUE(again.ok() && small.ok());
  const MemoryStats::Snapshot snapshot = stats->Get();
  EXPECT_EQ(snapshot.num_allocs, 3);
  EXPECT_EQ(snapshot.bytes_in_use, static_cast<int64_t>(kLarge + 100));
  EXPECT_EQ(snapshot.peak_bytes_in_use, static_cast<int64_t>(kLarge + 100));
  EXPECT_EQ(snapshot.largest_alloc_size, static_cast<int64_t>(kLarge));
  auto uncounted = BufferStorage::Allocate(64);
  EXPECT_EQ(stats->Get().num_allocs, 3);
}

TEST(Buffer, UsagesAreKeptUntilTakenAndFiredOnesDropped) {
  auto storage = BufferStorage::Allocate(16);
  ASSERT_TRUE(storage.ok());
  Buffer buffer(DType::kF32, {4}, nullptr, nullptr, *storage, Event::Ready());
  EventRef fired = Event::Create();
  EventRef pending = Event::Create();
  buffer.AddUsage(fired);
  ASSERT_TRUE(fired->Set(OkStatus()).ok());
  EXPECT_FALSE(buffer.HasPendingUsages());
  buffer.AddUsage(pending);  // drops the fired one
  EXPECT_TRUE(buffer.HasPendingUsages());
  std::vector<EventRef> taken = buffer.TakeUsages();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0], pending);
  EXPECT_FALSE(buffer.HasPendingUsages());
  EXPECT_TRUE(buffer.TakeUsages().empty());
}

}  // namespace
}  // namespace stablert::runtime
