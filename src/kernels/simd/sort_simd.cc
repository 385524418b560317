// vqsort for the sort kernels with StableRT's choice of target (sort_simd.h), compiled once
// per Highway target (dispatch.h).
#include "kernels/simd/sort_simd.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/simd/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/sort_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/sort/traits-inl.h"
#include "hwy/contrib/sort/traits128-inl.h"
#include "hwy/contrib/sort/vqsort-inl.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if VQSORT_ENABLED
// vqsort of `num` lanes of T under the traits St (one lane per key, or two u64 lanes per
// 128-bit key).
template <class St, typename T>
HWY_INLINE void VQSort(T* keys, size_t num) {
  const hn::SortTag<T> d;
  const St st;
#if HWY_HAVE_SCALABLE
  auto buf = hwy::AllocateAligned<T>(hwy::SortConstants::BufNum<T>(hn::Lanes(d)));
  hn::Sort(d, st, keys, num, buf.get());
#else
  hn::Sort(d, st, keys, num, static_cast<T*>(nullptr));  // uses a buffer on its stack
#endif
}
template <typename T>
using LaneTraits = hn::detail::SharedTraits<hn::detail::TraitsLane<hn::detail::OrderAscending<T>>>;
using Traits128 = hn::detail::SharedTraits<hn::detail::Traits128<hn::detail::OrderAscending128>>;

void SortU16(uint16_t* keys, size_t n) { VQSort<LaneTraits<uint16_t>>(keys, n); }
void SortU32(uint32_t* keys, size_t n) { VQSort<LaneTraits<uint32_t>>(keys, n); }
void SortU64(uint64_t* keys, size_t n) { VQSort<LaneTraits<uint64_t>>(keys, n); }
void SortU128(SortKey128* keys, size_t n) { VQSort<Traits128>(reinterpret_cast<uint64_t*>(keys), 2 * n); }
#else
// Targets without vqsort (HWY_SCALAR): the standard library's sort.
void SortU16(uint16_t* keys, size_t n) { std::sort(keys, keys + n); }
void SortU32(uint32_t* keys, size_t n) { std::sort(keys, keys + n); }
void SortU64(uint64_t* keys, size_t n) { std::sort(keys, keys + n); }
void SortU128(SortKey128* keys, size_t n) {
  std::sort(keys, keys + n, [](const SortKey128& a, const SortKey128& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  });
}
#endif

// The target this translation unit was compiled for, as chosen by the dispatcher.
int64_t SortTargetBit() { return HWY_TARGET; }

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(SortU16);
HWY_EXPORT(SortU32);
HWY_EXPORT(SortU64);
HWY_EXPORT(SortU128);
HWY_EXPORT(SortTargetBit);

namespace {

#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX3) && (HWY_TARGETS & HWY_AVX2)
#define STABLERT_SORT_PROBE 1
// The probe for one key type: vqsort of the same 32768 pseudo-random keys (16384 for
// 128-bit keys; in L2, about 8 partition levels' worth of compress-stores) at AVX3 and at
// AVX2, alternating, three rounds; the best time of each. About 0.1-0.5 ms at AVX2 and
// 0.3-2 ms at AVX3 on Zen 4 per key type.
template <typename K>
bool ProbeAvx3SlowerThanAvx2(void (*avx3)(K*, size_t), void (*avx2)(K*, size_t)) {
  if (!CpuHas(env::Isa::kAvx512)) return false;
  const size_t keys_count = sizeof(K) == 16 ? 16384 : 32768;
  std::vector<K> input(keys_count), keys(keys_count);
  uint64_t state = 0x9e3779b97f4a7c15u;
  auto next = [&] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return state ^ (state >> 29);
  };
  for (K& k : input) {
    if constexpr (sizeof(K) == 16) k = {next(), next()};
    else k = static_cast<K>(next() >> (64 - 8 * sizeof(K)));
  }
  using Clock = std::chrono::steady_clock;
  auto time = [&](void (*sort)(K*, size_t)) {
    keys = input;
    const auto start = Clock::now();
    sort(keys.data(), keys_count);
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double best[2] = {1e30, 1e30};
  for (int round = 0; round < 3; ++round) {
    best[0] = std::min(best[0], time(avx3));
    best[1] = std::min(best[1], time(avx2));
  }
  return best[0] > best[1];
}

bool Slower(int key_bits) {
  static const bool slower16 = ProbeAvx3SlowerThanAvx2<uint16_t>(&N_AVX3::SortU16, &N_AVX2::SortU16);
  static const bool slower32 = ProbeAvx3SlowerThanAvx2<uint32_t>(&N_AVX3::SortU32, &N_AVX2::SortU32);
  static const bool slower64 = ProbeAvx3SlowerThanAvx2<uint64_t>(&N_AVX3::SortU64, &N_AVX2::SortU64);
  static const bool slower128 = ProbeAvx3SlowerThanAvx2<SortKey128>(&N_AVX3::SortU128, &N_AVX2::SortU128);
  switch (key_bits) {
    case 16: return slower16;
    case 32: return slower32;
    case 64: return slower64;
    default: return slower128;
  }
}
#endif

// Below this many keys vqsort only runs its sorting network (no partition, no
// compress-store): the dispatcher's target, without the probe.
constexpr size_t kProbeFrom = 256;

// True when this sort of n keys of key_bits goes to AVX2 instead of the dispatcher's
// AVX-512 target.
bool UseAvx2(int key_bits, size_t n) {
#ifdef STABLERT_SORT_PROBE
  if (n < kProbeFrom) return false;
  const int64_t chosen = HWY_DYNAMIC_DISPATCH(SortTargetBit)();
  return (chosen == HWY_AVX3 || chosen == HWY_AVX3_DL) && AvxSortIsSlowerThanAvx2(key_bits);
#else
  (void)key_bits;
  (void)n;
  return false;
#endif
}

}  // namespace

bool AvxSortIsSlowerThanAvx2(int key_bits) {
#ifdef STABLERT_SORT_PROBE
  return Slower(key_bits);
#else
  (void)key_bits;
  return false;
#endif
}

#ifdef STABLERT_SORT_PROBE
#define STABLERT_SORT_AT_AVX2_IF_FASTER(FN, BITS, keys, n) \
  if (UseAvx2(BITS, n)) return N_AVX2::FN(keys, n)
#else
#define STABLERT_SORT_AT_AVX2_IF_FASTER(FN, BITS, keys, n) (void)0
#endif

void SortAscending(uint16_t* keys, size_t n) {
  if (n < 2) return;
  STABLERT_SORT_AT_AVX2_IF_FASTER(SortU16, 16, keys, n);
  HWY_DYNAMIC_DISPATCH(SortU16)(keys, n);
}
void SortAscending(uint32_t* keys, size_t n) {
  if (n < 2) return;
  STABLERT_SORT_AT_AVX2_IF_FASTER(SortU32, 32, keys, n);
  HWY_DYNAMIC_DISPATCH(SortU32)(keys, n);
}
void SortAscending(uint64_t* keys, size_t n) {
  if (n < 2) return;
  STABLERT_SORT_AT_AVX2_IF_FASTER(SortU64, 64, keys, n);
  HWY_DYNAMIC_DISPATCH(SortU64)(keys, n);
}
void SortAscending(SortKey128* keys, size_t n) {
  if (n < 2) return;
  STABLERT_SORT_AT_AVX2_IF_FASTER(SortU128, 128, keys, n);
  HWY_DYNAMIC_DISPATCH(SortU128)(keys, n);
}

std::string SortTargetName(int key_bits) {
  if (UseAvx2(key_bits, kProbeFrom)) return hwy::TargetName(HWY_AVX2);
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(SortTargetBit)());
}

}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
