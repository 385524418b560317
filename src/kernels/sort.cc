// Sorts whose comparator the lowering recognized as an order on the first operand's values
// (plan/sort_comparator.cc): integer sorts on order-preserving keys (sort_keys.h) instead of
// a comparator call per comparison.
//
//   "sort_keys.<T>"    in: x   out: x sorted along `dimension`
//   "sort_by_key.<T>"  in: key (T), N-1 further operands (any types, key's shape)
//                      out: the N operands permuted by the stable sort of the key
//   params: SortParams (sort_params.h)
//
// Both are stable: equal keys keep their input order. sort_keys sorts the keys in place
// (vqsort at the target simd/sort_simd.h chooses; a counting sort for 8-bit types) and maps them back; under the canonical float
// order the blocks of zeros and of NaNs, whose members may differ in bits, are then
// refilled with the input's members in input order. sort_by_key sorts (key, index) pairs
// (index in the low bits, so ties stay in input order) and gathers every operand, the key
// included, through the resulting permutation. NaNs of bf16 operands come out as XLA's
// (sign kept, quiet NaN). Rows (all elements along `dimension`, at a
// stride when it is not the last) are split across threads.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/simd/sort_simd.h"
#include "kernels/sort_keys.h"
#include "kernels/sort_params.h"

namespace stablert::kernels {
namespace {

using sort::KeyMap;
using sort::Order;

template <int Bytes> struct UnsignedOf;
template <> struct UnsignedOf<1> { using type = uint8_t; };
template <> struct UnsignedOf<2> { using type = uint16_t; };
template <> struct UnsignedOf<4> { using type = uint32_t; };
template <> struct UnsignedOf<8> { using type = uint64_t; };

constexpr int ByteSizeOf(DType d) {
  switch (d) {
    case DType::kPred: case DType::kS8: case DType::kU8: return 1;
    case DType::kS16: case DType::kU16: case DType::kF16: case DType::kBF16: return 2;
    case DType::kS32: case DType::kU32: case DType::kF32: return 4;
    default: return 8;
  }
}

constexpr uint64_t InfBits(DType d) {
  switch (d) {
    case DType::kF16: return 0x7c00;
    case DType::kBF16: return 0x7f80;
    case DType::kF32: return 0x7f800000;
    case DType::kF64: return 0x7ff0000000000000;
    default: return 0;
  }
}

template <DType D>
using KeyBits = typename UnsignedOf<ByteSizeOf(D)>::type;

template <DType D>
KeyMap<KeyBits<D>> MakeKeyMap(const KernelArgs& args) {
  KeyMap<KeyBits<D>> map;
  map.order = args.Params<SortParams>().order;
  map.descending = args.Params<SortParams>().descending;
  map.is_signed = D == DType::kS8 || D == DType::kS16 || D == DType::kS32 || D == DType::kS64;
  map.inf = static_cast<KeyBits<D>>(InfBits(D));
  return map;
}

// One sort's rows: `count` rows of `length` elements; row r starts at RowStart(r) and
// steps by `stride` elements.
struct Rows {
  int64_t outer = 1, inner = 1, length = 0;
  int64_t count() const { return outer * inner; }
  int64_t stride() const { return inner; }
  int64_t RowStart(int64_t r) const { return (r / inner) * length * inner + r % inner; }
};

Rows RowsOf(const BufferView& view, size_t dim) {
  Rows rows;
  for (size_t d = 0; d < dim; ++d) rows.outer *= view.dims[d];
  for (size_t d = dim + 1; d < view.dims.size(); ++d) rows.inner *= view.dims[d];
  rows.length = view.dims[dim];
  return rows;
}

// XLA's CPU backend sorts bf16 operands in f32 and converts back: a NaN keeps its sign and
// becomes the quiet NaN. The sort kernels give every bf16 operand the same treatment.
void QuietBF16NaNs(void* data, int64_t start, int64_t stride, int64_t n) {
  uint16_t* row = static_cast<uint16_t*>(data) + start;
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t bits = row[i * stride];
    if ((bits & 0x7fff) > 0x7f80) row[i * stride] = static_cast<uint16_t>((bits & 0x8000) | 0x7fc0);
  }
}

template <typename U>
void VectorSort(U* keys, size_t n) {
  simd::SortAscending(keys, n);
}

// Sorts one row of keys in place: `keys` holds ToKey of the row's values.
template <typename U>
void SortKeyRow(U* keys, int64_t n) {
  if constexpr (sizeof(U) == 1) {
    std::array<int64_t, 256> count{};
    for (int64_t i = 0; i < n; ++i) ++count[keys[i]];
    int64_t p = 0;
    for (int k = 0; k < 256; ++k)
      for (int64_t c = count[static_cast<size_t>(k)]; c > 0; --c) keys[p++] = static_cast<U>(k);
  } else {
    VectorSort(keys, static_cast<size_t>(n));
  }
}

template <DType D>
Status SortKeysKernel(const KernelContext& context, const KernelArgs& args) {
  using U = KeyBits<D>;
  const BufferView& in = args.inputs[0];
  if (in.num_elements == 0) return OkStatus();
  const KeyMap<U> map = MakeKeyMap<D>(args);
  const Rows rows = RowsOf(in, static_cast<size_t>(args.Params<SortParams>().dimension));
  const auto [begin, end] = ShareOf(context, rows.count());
  if (begin >= end) return OkStatus();
  const U* src = static_cast<const U*>(in.data);
  U* dst = static_cast<U*>(args.outputs[0].data);
  const int64_t n = rows.length, stride = rows.stride();
  std::vector<U> scratch(stride == 1 ? 0 : static_cast<size_t>(n));
  for (int64_t r = begin; r < end; ++r) {
    const U* row_in = src + rows.RowStart(r);
    U* row_out = dst + rows.RowStart(r);
    U* keys = stride == 1 ? row_out : scratch.data();
    bool noncanonical = false;
    for (int64_t i = 0; i < n; ++i) {
      const U bits = row_in[i * stride];
      noncanonical |= map.IsNonCanonical(bits);
      keys[i] = map.ToKey(bits);
    }
    SortKeyRow(keys, n);
    // Where the zeros and the NaNs are, before the keys turn back into values.
    int64_t block[2][2] = {{0, 0}, {0, 0}};
    const U representative[2] = {U{0}, map.QuietNaN()};
    if (noncanonical) {
      for (int c = 0; c < 2; ++c) {
        const U key = map.ToKey(representative[c]);
        auto range = std::equal_range(keys, keys + n, key);
        block[c][0] = range.first - keys;
        block[c][1] = range.second - keys;
      }
    }
    for (int64_t i = 0; i < n; ++i) row_out[i * stride] = map.FromKey(keys[i]);
    if (noncanonical) {
      // Refill each block with the input's members of that class, in input order.
      for (int c = 0; c < 2; ++c) {
        int64_t p = block[c][0];
        if (p == block[c][1]) continue;
        for (int64_t i = 0; i < n && p < block[c][1]; ++i) {
          const U bits = row_in[i * stride];
          if (map.Canonical(bits) == representative[c]) row_out[(p++) * stride] = bits;
        }
      }
    }
    if constexpr (D == DType::kBF16) QuietBF16NaNs(dst, rows.RowStart(r), stride, n);
  }
  return OkStatus();
}

// out[i] = in[perm[i]] along one row, for elements of `bytes` bytes.
template <typename T>
void GatherRow(const void* in, void* out, int64_t start, int64_t stride, const uint32_t* perm, int64_t n) {
  const T* src = static_cast<const T*>(in) + start;
  T* dst = static_cast<T*>(out) + start;
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[perm[i]];
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * stride] = src[static_cast<int64_t>(perm[i]) * stride];
  }
}

struct Bytes16 {
  uint64_t lo, hi;
};

void GatherOperand(const BufferView& in, const BufferView& out, int64_t start, int64_t stride, const uint32_t* perm,
                   int64_t n) {
  switch (DTypeByteSize(in.dtype)) {
    case 1: return GatherRow<uint8_t>(in.data, out.data, start, stride, perm, n);
    case 2: return GatherRow<uint16_t>(in.data, out.data, start, stride, perm, n);
    case 4: return GatherRow<uint32_t>(in.data, out.data, start, stride, perm, n);
    case 8: return GatherRow<uint64_t>(in.data, out.data, start, stride, perm, n);
    default: return GatherRow<Bytes16>(in.data, out.data, start, stride, perm, n);
  }
}

// The stable sorting permutation of one row of keys.
template <typename U>
void SortPermutation(const KeyMap<U>& map, const U* row, int64_t stride, int64_t n,
                     uint64_t* pairs, simd::SortKey128* wide, uint32_t* perm) {
  if constexpr (sizeof(U) == 1) {
    // Counting sort: stable by construction.
    std::array<int64_t, 257> start{};
    for (int64_t i = 0; i < n; ++i) ++start[static_cast<size_t>(map.ToKey(row[i * stride])) + 1];
    for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
    for (int64_t i = 0; i < n; ++i) perm[start[map.ToKey(row[i * stride])]++] = static_cast<uint32_t>(i);
  } else if constexpr (sizeof(U) <= 4) {
    for (int64_t i = 0; i < n; ++i)
      pairs[static_cast<size_t>(i)] = (uint64_t{map.ToKey(row[i * stride])} << 32) | static_cast<uint64_t>(i);
    VectorSort(pairs, static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = static_cast<uint32_t>(pairs[static_cast<size_t>(i)]);
  } else {
    for (int64_t i = 0; i < n; ++i) wide[static_cast<size_t>(i)] = {static_cast<uint64_t>(i), map.ToKey(row[i * stride])};
    VectorSort(wide, static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = static_cast<uint32_t>(wide[static_cast<size_t>(i)].lo);
  }
}

// The scratch one call of a key-value sort needs for rows of n keys: the (key, index) pairs
// the vector sort orders (8 bytes each for 2- and 4-byte keys, 16 for 8-byte keys; none for
// the counting sort of 1-byte keys), then the permutation (4 bytes per key).
struct SortScratch {
  int64_t perm_offset = 0;
  int64_t bytes = 0;
};
template <typename U>
SortScratch SortScratchOf(int64_t n) {
  const int64_t pair_bytes = sizeof(U) == 1 ? 0 : sizeof(U) == 8 ? 16 : 8;
  SortScratch s;
  s.perm_offset = (pair_bytes * n + 63) / 64 * 64;
  s.bytes = s.perm_offset + 4 * n;
  return s;
}

template <DType D>
int64_t SortByKeyWorkspace(const KernelArgs& args) {
  const BufferView& key = args.inputs[0];
  if (key.num_elements == 0) return 0;
  return SortScratchOf<KeyBits<D>>(RowsOf(key, static_cast<size_t>(args.Params<SortParams>().dimension)).length).bytes;
}

template <DType D>
Status SortByKeyKernel(const KernelContext& context, const KernelArgs& args) {
  using U = KeyBits<D>;
  const BufferView& key = args.inputs[0];
  if (key.num_elements == 0) return OkStatus();
  const KeyMap<U> map = MakeKeyMap<D>(args);
  const Rows rows = RowsOf(key, static_cast<size_t>(args.Params<SortParams>().dimension));
  const auto [begin, end] = ShareOf(context, rows.count());
  if (begin >= end) return OkStatus();
  const int64_t n = rows.length, stride = rows.stride();
  // The step's workspace (SortByKeyWorkspace); callers outside a plan may pass none.
  const SortScratch layout = SortScratchOf<U>(n);
  std::vector<std::byte> own;
  std::byte* scratch = args.workspace.data();
  if (args.workspace.size() < static_cast<size_t>(layout.bytes)) {
    own.resize(static_cast<size_t>(layout.bytes) + 64);
    scratch = own.data() + (64 - reinterpret_cast<uintptr_t>(own.data()) % 64) % 64;
  }
  auto* keys = scratch;
  auto* perm = reinterpret_cast<uint32_t*>(scratch + layout.perm_offset);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t start = rows.RowStart(r);
    SortPermutation(map, static_cast<const U*>(key.data) + start, stride, n, reinterpret_cast<uint64_t*>(keys),
                    reinterpret_cast<simd::SortKey128*>(keys), perm);
    for (size_t i = 0; i < args.inputs.size(); ++i) {
      GatherOperand(args.inputs[i], args.outputs[i], start, stride, perm, n);
      if (args.inputs[i].dtype == DType::kBF16) QuietBF16NaNs(args.outputs[i].data, start, stride, n);
    }
  }
  return OkStatus();
}

template <DType... Ds>
Status RegisterAll(KernelRegistry& r) {
  Status status = OkStatus();
  auto one = [&](std::string_view name, KernelFn fn, DType d) {
    if (status.ok()) status = r.RegisterSplittable<SortParams>(KernelKey(name, {d}), fn);
  };
  (one("sort_keys", &SortKeysKernel<Ds>, Ds), ...);
  (one("sort_by_key", &SortByKeyKernel<Ds>, Ds), ...);
  if (status.ok()) ((status = status.ok() ? r.DeclareWorkspace(KernelKey("sort_by_key", {Ds}), &SortByKeyWorkspace<Ds>) : status), ...);
  return status;
}

}  // namespace

Status RegisterSortKernels(KernelRegistry& r) {
  return RegisterAll<DType::kPred, DType::kS8, DType::kU8, DType::kS16, DType::kU16, DType::kS32, DType::kU32,
                     DType::kS64, DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>(r);
}

}  // namespace stablert::kernels
