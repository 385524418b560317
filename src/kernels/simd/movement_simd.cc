// Vector row loops for strided copies (movement_simd.h), compiled once per Highway target
// (dispatch.h).
#include "kernels/simd/movement_simd.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/movement_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Four vectors per iteration, then single vectors, then the tail element by element.
template <typename T>
HWY_INLINE void FillImpl(T* HWY_RESTRICT dst, int64_t count, T value) {
  const hn::ScalableTag<T> d;
  const size_t n = hn::Lanes(d), total = static_cast<size_t>(count);
  const auto v = hn::Set(d, value);
  size_t i = 0;
  for (; i + 4 * n <= total; i += 4 * n) {
    hn::StoreU(v, d, dst + i);
    hn::StoreU(v, d, dst + i + n);
    hn::StoreU(v, d, dst + i + 2 * n);
    hn::StoreU(v, d, dst + i + 3 * n);
  }
  for (; i + n <= total; i += n) hn::StoreU(v, d, dst + i);
  for (; i < total; ++i) dst[i] = value;
}

template <typename T>
HWY_INLINE void GatherEvenImpl(T* HWY_RESTRICT dst, const T* HWY_RESTRICT src, int64_t count) {
  const hn::ScalableTag<T> d;
  const size_t n = hn::Lanes(d), total = static_cast<size_t>(count);
  size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  // Each pair of source vectors (2n elements, even and odd) gives n destination elements.
  // The last source element read is src[2 * (i + n) - 1] < src[2 * total - 1]: in bounds
  // only while i + n < total, so the last full vector pair goes to the scalar tail.
  for (; i + n < total; i += n) {
    const auto lo = hn::LoadU(d, src + 2 * i);
    const auto hi = hn::LoadU(d, src + 2 * i + n);
    hn::StoreU(hn::ConcatEven(d, hi, lo), d, dst + i);
  }
#else
  (void)d;
  (void)n;
#endif
  for (; i < total; ++i) dst[i] = src[2 * i];
}

// The destination's unaligned head and tail by memcpy, the aligned vectors between with
// non-temporal stores.
HWY_INLINE void StreamCopyImpl(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, int64_t bytes) {
  const hn::ScalableTag<uint8_t> d;
  const auto n = static_cast<int64_t>(hn::Lanes(d));
  int64_t head = static_cast<int64_t>((n - reinterpret_cast<uintptr_t>(dst) % static_cast<uintptr_t>(n)) %
                                      static_cast<uintptr_t>(n));
  head = std::min(head, bytes);
  std::memcpy(dst, src, static_cast<size_t>(head));
  int64_t i = head;
  for (; i + n <= bytes; i += n) hn::Stream(hn::LoadU(d, src + i), d, dst + i);
  std::memcpy(dst + i, src + i, static_cast<size_t>(bytes - i));
}

template <typename T>
HWY_INLINE void IotaImpl(T* HWY_RESTRICT dst, int64_t count, T first) {
  const hn::ScalableTag<T> d;
  const size_t n = hn::Lanes(d), total = static_cast<size_t>(count);
  auto v = hn::Iota(d, first);
  const auto step = hn::Set(d, static_cast<T>(n));
  size_t i = 0;
  for (; i + n <= total; i += n) {
    hn::StoreU(v, d, dst + i);
    v = hn::Add(v, step);
  }
  for (; i < total; ++i) dst[i] = static_cast<T>(first + static_cast<T>(i));
}

void Fill8(uint8_t* dst, int64_t count, uint8_t value) { FillImpl(dst, count, value); }
void Fill16(uint16_t* dst, int64_t count, uint16_t value) { FillImpl(dst, count, value); }
void Fill32(uint32_t* dst, int64_t count, uint32_t value) { FillImpl(dst, count, value); }
void Fill64(uint64_t* dst, int64_t count, uint64_t value) { FillImpl(dst, count, value); }
void Even16(uint16_t* dst, const uint16_t* src, int64_t count) { GatherEvenImpl(dst, src, count); }
void Even32(uint32_t* dst, const uint32_t* src, int64_t count) { GatherEvenImpl(dst, src, count); }
void Even64(uint64_t* dst, const uint64_t* src, int64_t count) { GatherEvenImpl(dst, src, count); }
void StreamCopyBytes(uint8_t* dst, const uint8_t* src, int64_t bytes) { StreamCopyImpl(dst, src, bytes); }
void Iota32(int32_t* dst, int64_t count, int32_t first) { IotaImpl(dst, count, first); }
void Iota64(int64_t* dst, int64_t count, int64_t first) { IotaImpl(dst, count, first); }

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(Fill8);
HWY_EXPORT(Fill16);
HWY_EXPORT(Fill32);
HWY_EXPORT(Fill64);
HWY_EXPORT(Even16);
HWY_EXPORT(Even32);
HWY_EXPORT(Even64);
HWY_EXPORT(StreamCopyBytes);
HWY_EXPORT(Iota32);
HWY_EXPORT(Iota64);

void FillRow(uint8_t* dst, int64_t count, uint8_t value) { HWY_DYNAMIC_DISPATCH(Fill8)(dst, count, value); }
void FillRow(uint16_t* dst, int64_t count, uint16_t value) { HWY_DYNAMIC_DISPATCH(Fill16)(dst, count, value); }
void FillRow(uint32_t* dst, int64_t count, uint32_t value) { HWY_DYNAMIC_DISPATCH(Fill32)(dst, count, value); }
void FillRow(uint64_t* dst, int64_t count, uint64_t value) { HWY_DYNAMIC_DISPATCH(Fill64)(dst, count, value); }
void GatherEvenRow(uint16_t* dst, const uint16_t* src, int64_t count) {
  HWY_DYNAMIC_DISPATCH(Even16)(dst, src, count);
}
void GatherEvenRow(uint32_t* dst, const uint32_t* src, int64_t count) {
  HWY_DYNAMIC_DISPATCH(Even32)(dst, src, count);
}
void GatherEvenRow(uint64_t* dst, const uint64_t* src, int64_t count) {
  HWY_DYNAMIC_DISPATCH(Even64)(dst, src, count);
}
void StreamCopy(void* dst, const void* src, int64_t bytes) {
  HWY_DYNAMIC_DISPATCH(StreamCopyBytes)(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
}
void IotaRow(int32_t* dst, int64_t count, int32_t first) { HWY_DYNAMIC_DISPATCH(Iota32)(dst, count, first); }
void IotaRow(int64_t* dst, int64_t count, int64_t first) { HWY_DYNAMIC_DISPATCH(Iota64)(dst, count, first); }

}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
