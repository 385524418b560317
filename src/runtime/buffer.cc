#include "runtime/buffer.h"

#include "runtime/array_layout.h"

#include "base/large_blocks.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace stablert::runtime {

namespace {

constexpr size_t kAlignment = 64;

size_t Rounded(size_t size) {
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  return rounded == 0 ? kAlignment : rounded;
}

// Released large blocks kept for reuse (see buffer.h): most recently released last. Not
// under AddressSanitizer, whose use-after-free reports need every block really freed.
#if defined(__SANITIZE_ADDRESS__)
#define STABLERT_CACHE_BUFFERS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STABLERT_CACHE_BUFFERS 0
#endif
#endif
#ifndef STABLERT_CACHE_BUFFERS
#define STABLERT_CACHE_BUFFERS 1
#endif
constexpr size_t kMinCachedBytes = size_t{1} << 20;
constexpr size_t kMaxCachedBytes = STABLERT_CACHE_BUFFERS ? size_t{256} << 20 : 0;

struct FreeBlocks {
  std::mutex mutex;
  std::vector<std::pair<size_t, void*>> blocks;  // (rounded size, data)
  size_t total = 0;
};

FreeBlocks& Cache() {
  static auto* cache = new FreeBlocks;  // never destroyed: buffers may be released at exit
  return *cache;
}

void* TakeCached(size_t rounded) {
  if (rounded < kMinCachedBytes || rounded > kMaxCachedBytes) return nullptr;
  FreeBlocks& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (size_t i = cache.blocks.size(); i-- > 0;) {
    if (cache.blocks[i].first != rounded) continue;
    void* data = cache.blocks[i].second;
    cache.blocks.erase(cache.blocks.begin() + static_cast<std::ptrdiff_t>(i));
    cache.total -= rounded;
    return data;
  }
  return nullptr;
}

void Release(void* data, size_t rounded) {
  if (rounded < kMinCachedBytes || rounded > kMaxCachedBytes) {
    FreeLargeBlock(data);
    return;
  }
  std::vector<void*> evicted;
  {
    FreeBlocks& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.blocks.emplace_back(rounded, data);
    cache.total += rounded;
    size_t drop = 0;
    while (cache.total > kMaxCachedBytes) {
      cache.total -= cache.blocks[drop].first;
      evicted.push_back(cache.blocks[drop].second);
      ++drop;
    }
    cache.blocks.erase(cache.blocks.begin(), cache.blocks.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  for (void* p : evicted) FreeLargeBlock(p);
}

}  // namespace

StatusOr<std::shared_ptr<BufferStorage>> BufferStorage::Allocate(size_t size, std::shared_ptr<MemoryStats> stats) {
  const size_t rounded = Rounded(size);
  void* data = TakeCached(rounded);
  if (!data) data = AllocateLargeBlock(rounded);  // huge pages from 4 MiB (base/large_blocks.h)
  if (!data) return ResourceExhausted("failed to allocate " + std::to_string(size) + " bytes for a buffer");
  if (stats) stats->Allocated(static_cast<int64_t>(size));
  return std::shared_ptr<BufferStorage>(new BufferStorage(data, size, true, {}, std::move(stats)));
}

std::shared_ptr<BufferStorage> BufferStorage::Borrow(void* data, size_t size, std::function<void()> release) {
  return std::shared_ptr<BufferStorage>(new BufferStorage(data, size, false, std::move(release)));
}

std::shared_ptr<BufferStorage> BufferStorage::Deferred(size_t size) {
  return std::shared_ptr<BufferStorage>(new BufferStorage(nullptr, size, false, nullptr));
}

void BufferStorage::Bind(std::shared_ptr<BufferStorage> target) {
  data_ = target->data();
  bound_ = std::move(target);
}

BufferStorage::~BufferStorage() {
  if (stats_) stats_->Released(static_cast<int64_t>(size_));
  if (owned_) Release(data_, Rounded(size_));
  if (release_) release_();
}

Buffer::Buffer(DType dtype, Dims dims, Device* device, MemorySpace* memory, std::shared_ptr<BufferStorage> storage,
               EventRef ready, std::vector<int64_t> layout)
    : dtype_(dtype),
      dims_(std::move(dims)),
      layout_(NormalizeLayout(std::move(layout))),
      device_(device),
      memory_(memory),
      ready_(std::move(ready)),
      storage_(std::move(storage)) {}

size_t Buffer::size_in_bytes() const { return static_cast<size_t>(ElementCount(dims_)) * DTypeByteSize(dtype_); }

StatusOr<std::shared_ptr<BufferStorage>> Buffer::storage(const char* caller) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!storage_) return FailedPrecondition(std::string(caller) + ": the buffer has been deleted or donated");
  return storage_;
}

void Buffer::Delete() {
  std::shared_ptr<BufferStorage> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  dropped.swap(storage_);
}

bool Buffer::IsDeleted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return storage_ == nullptr;
}

void Buffer::AddUsage(EventRef done) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(usages_, [](const EventRef& event) { return event->IsReady(); });
  usages_.push_back(std::move(done));
}

std::vector<EventRef> Buffer::TakeUsages() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(usages_, {});
}

bool Buffer::HasPendingUsages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(usages_.begin(), usages_.end(), [](const EventRef& event) { return !event->IsReady(); });
}

bool Buffer::HasExternalReferences() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !external_refs_.empty();
}

void Buffer::IncreaseExternalReferenceCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  external_refs_.push_back(storage_);
}

Status Buffer::DecreaseExternalReferenceCount() {
  std::shared_ptr<BufferStorage> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  if (external_refs_.empty())
    return InvalidArgument("Attempting to decrease reference on a buffer with zero reference count.");
  dropped = std::move(external_refs_.back());
  external_refs_.pop_back();
  return OkStatus();
}

namespace {

// Walks every element of a strided array; `fn(dense_index_bytes, strided_offset_bytes)`.
template <typename Fn>
void ForEachStrided(const Dims& dims, const std::vector<int64_t>& byte_strides, size_t element_size, Fn fn) {
  int64_t count = ElementCount(dims);
  if (count == 0) return;
  size_t rank = dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(static_cast<size_t>(linear) * element_size, offset);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < dims[d]) {
        offset += byte_strides[d];
        break;
      }
      offset -= byte_strides[d] * (dims[d] - 1);
      index[d] = 0;
    }
  }
}

bool IsDenseRowMajor(const Dims& dims, const std::vector<int64_t>& byte_strides, size_t element_size) {
  if (byte_strides.empty()) return true;
  int64_t expected = static_cast<int64_t>(element_size);
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] != 1 && byte_strides[d] != expected) return false;
    expected *= dims[d];
  }
  return true;
}

}  // namespace

namespace {

// Copies between dense row-major and strided layouts; `to_dense` picks the direction.
void CopyBetweenLayouts(const void* src, const Dims& dims, const std::vector<int64_t>& byte_strides,
                        size_t element_size, void* dst, bool to_dense) {
  if (IsDenseRowMajor(dims, byte_strides, element_size)) {
    std::memcpy(dst, src, static_cast<size_t>(ElementCount(dims)) * element_size);
    return;
  }
  const char* in = static_cast<const char*>(src);
  char* out = static_cast<char*>(dst);
  ForEachStrided(dims, byte_strides, element_size, [&](size_t dense, int64_t strided) {
    if (to_dense) std::memcpy(out + dense, in + strided, element_size);
    else std::memcpy(out + strided, in + dense, element_size);
  });
}

}  // namespace

void CopyStridedToDense(const void* src, const Dims& dims, const std::vector<int64_t>& byte_strides,
                        size_t element_size, void* dst) {
  CopyBetweenLayouts(src, dims, byte_strides, element_size, dst, /*to_dense=*/true);
}

void CopyDenseToStrided(const void* src, const Dims& dims, const std::vector<int64_t>& byte_strides,
                        size_t element_size, void* dst) {
  CopyBetweenLayouts(src, dims, byte_strides, element_size, dst, /*to_dense=*/false);
}

}  // namespace stablert::runtime
