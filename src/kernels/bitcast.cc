// "bitcast_convert.<From>.<To>" between a sub-byte type (i1: 1 bit, as the StableHLO
// specification counts it; i4, ui4, f4E2M1FN: 4 bits; i2, ui2: 2 bits) and a type of another
// width (8, 16, 32 or 64 bits, or another sub-byte width). Bitcasts between byte-sized types
// are plain aliases in the plan and need no kernel.
//
// A sub-byte element takes one byte in StableRT buffers (its bits in the low bits, the others
// zero; an i1 is 0 or 1; kernels/dtype_traits.h), so such a bitcast repacks: the narrow
// side's elements are the wide element's bits from the lowest up, element 0 in the lowest
// bits, and the wide element's bytes are little-endian, as XLA bitcasts its sub-byte types and
// the StableHLO reference interpreter bitcasts every type, i1 included (docs/decisions.md,
// "bitcast_convert of i1"). Narrow -> wide:
//   in: x [..., r]  out: y [...]  (r = wide bits / narrow bits)
// wide -> narrow:
//   in: x [...]     out: y [..., r]
// params: none. Splittable by wide elements; reentrant, no state.
#include <cstdint>
#include <cstring>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

// The bits of one element of a type `kBits` wide, stored in ceil(kBits / 8) bytes.
template <int kBits>
inline uint64_t LoadBits(const uint8_t* p) {
  if constexpr (kBits < 8) {
    return *p & ((1u << kBits) - 1);
  } else {
    uint64_t v = 0;
    std::memcpy(&v, p, kBits / 8);  // little-endian host (x86-64, AArch64 Linux)
    return v;
  }
}

template <int kBits>
inline void StoreBits(uint8_t* p, uint64_t v) {
  if constexpr (kBits < 8) *p = static_cast<uint8_t>(v);
  else std::memcpy(p, &v, kBits / 8);
}

template <int kBits>
constexpr int64_t kStride = kBits < 8 ? 1 : kBits / 8;

// kNarrow-bit elements, kRatio per wide element, into kWide-bit elements.
template <int kNarrow, int kWide>
Status PackKernel(const KernelContext& context, const KernelArgs& args) {
  constexpr int kRatio = kWide / kNarrow;
  const auto* in = static_cast<const uint8_t*>(args.inputs[0].data);
  auto* out = static_cast<uint8_t*>(args.outputs[0].data);
  const auto [begin, end] = ShareOf(context, args.outputs[0].num_elements);
  for (int64_t i = begin; i < end; ++i) {
    const uint8_t* group = in + i * kRatio;
    uint64_t v = 0;
    for (int j = 0; j < kRatio; ++j) v |= static_cast<uint64_t>(group[j] & ((1u << kNarrow) - 1)) << (j * kNarrow);
    StoreBits<kWide>(out + i * kStride<kWide>, v);
  }
  return OkStatus();
}

// kWide-bit elements into kNarrow-bit elements, kRatio per wide element.
template <int kWide, int kNarrow>
Status UnpackKernel(const KernelContext& context, const KernelArgs& args) {
  constexpr int kRatio = kWide / kNarrow;
  const auto* in = static_cast<const uint8_t*>(args.inputs[0].data);
  auto* out = static_cast<uint8_t*>(args.outputs[0].data);
  const auto [begin, end] = ShareOf(context, args.inputs[0].num_elements);
  for (int64_t i = begin; i < end; ++i) {
    const uint64_t v = LoadBits<kWide>(in + i * kStride<kWide>);
    uint8_t* group = out + i * kRatio;
    for (int j = 0; j < kRatio; ++j) group[j] = static_cast<uint8_t>((v >> (j * kNarrow)) & ((1u << kNarrow) - 1));
  }
  return OkStatus();
}

using SubByteDTypes = DTypeList<DType::kPred, DType::kS4, DType::kU4, DType::kF4E2M1FN, DType::kS2, DType::kU2>;
// Every non-complex type of 8 to 64 bits.
using WideDTypes = DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16,
                             DType::kU32, DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64,
                             DType::kF8E5M2, DType::kF8E4M3FN, DType::kF8E4M3B11FNUZ, DType::kF8E5M2FNUZ,
                             DType::kF8E4M3FNUZ, DType::kF8E4M3, DType::kF8E3M4, DType::kF8E8M0FNU>;

template <DType D>
constexpr int kBitsOf = D == DType::kPred       ? 1
                        : D == DType::kF4E2M1FN ? 4
                        : kNarrowIntBits<D> > 0 ? kNarrowIntBits<D>
                                                : static_cast<int>(sizeof(Storage<D>) * 8);

// Registers From -> To (and To -> From) if their widths differ.
template <DType Narrow, DType Other>
Status RegisterPair(KernelRegistry& r) {
  constexpr int kNarrow = kBitsOf<Narrow>, kOther = kBitsOf<Other>;
  if constexpr (kOther > kNarrow) {
    STABLERT_RETURN_IF_ERROR(
        r.RegisterSplittable(KernelKey("bitcast_convert", {Narrow, Other}), &PackKernel<kNarrow, kOther>));
    return r.RegisterSplittable(KernelKey("bitcast_convert", {Other, Narrow}), &UnpackKernel<kOther, kNarrow>);
  }
  return OkStatus();
}

}  // namespace

Status RegisterBitcastKernels(KernelRegistry& r) {
  return ForEachDType(SubByteDTypes{}, [&]<DType Narrow>() {
    STABLERT_RETURN_IF_ERROR(ForEachDType(WideDTypes{}, [&]<DType Other>() { return RegisterPair<Narrow, Other>(r); }));
    // Between two sub-byte widths (1 <-> 2, 1 <-> 4, 2 <-> 4): registered once, from the
    // narrower side.
    return ForEachDType(SubByteDTypes{}, [&]<DType Other>() { return RegisterPair<Narrow, Other>(r); });
  });
}

}  // namespace stablert::kernels
