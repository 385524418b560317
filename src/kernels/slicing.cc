// dynamic_slice, dynamic_update_slice, pad and reverse kernels. Byte movement only, so
// one instantiation per element width serves every dtype.
//
//   "dynamic_slice.<T>"         in: x, start index scalars (any integer type, one per dim)
//                               out: the slice (its dims are the slice sizes)
//   "dynamic_update_slice.<T>"  in: x, update, start index scalars
//                               in place (InPlace::kFirstInput): the output may be x's
//                               storage; then only the update's elements are written
//   "pad.<T>"                   in: x, padding value (scalar)    params: PadParams
//   "reverse.<T>"               params: ReverseParams
// (kernels/slicing_params.h).
// Start indices are clamped so the slice stays inside x, as StableHLO specifies.
// pad and reverse are splittable: each call of a split step writes its share of the output
// (pad: a range of output rows along the first dimension, filled and then given the input
// elements that land there; reverse: StridedCopyShare).
#include <algorithm>
#include <cstring>
#include <tuple>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/slicing_params.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

// An index scalar of any integer dtype, saturated to int64.
int64_t ReadIndex(const BufferView& view) {
  const void* p = view.data;
  auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (view.dtype) {
    case DType::kS8: return load(int8_t{});
    case DType::kS16: return load(int16_t{});
    case DType::kS32: return load(int32_t{});
    case DType::kS64: return load(int64_t{});
    case DType::kU8: return load(uint8_t{});
    case DType::kU16: return load(uint16_t{});
    case DType::kU32: return load(uint32_t{});
    case DType::kU64: return static_cast<int64_t>(std::min<uint64_t>(load(uint64_t{}), INT64_MAX));
    default: return 0;
  }
}

// Clamped start offsets (in elements) of a window of `sizes` inside `dims`, read from
// index scalars inputs[first..].
int64_t ClampedOffset(const KernelArgs& args, size_t first, std::span<const int64_t> dims,
                      std::span<const int64_t> sizes, const DimVector& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t start = std::clamp<int64_t>(ReadIndex(args.inputs[first + d]), 0, dims[d] - sizes[d]);
    offset += start * strides[d];
  }
  return offset;
}

template <int kBytes>
Status DynamicSliceKernel(const KernelContext&, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  DimVector in_strides = DenseStrides(in.dims);
  int64_t offset = ClampedOffset(args, 1, in.dims, out.dims, in_strides);
  DimVector out_strides = DenseStrides(out.dims);
  StridedCopy(out.as<W>(), {out_strides.data(), out_strides.size()}, in.as<const W>() + offset,
              {in_strides.data(), in_strides.size()}, out.dims);
  return OkStatus();
}

template <int kBytes>
Status DynamicUpdateSliceKernel(const KernelContext&, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& update = args.inputs[1];
  const BufferView& out = args.outputs[0];
  // In place (out is x's storage): x's other elements are already where they belong.
  if (out.data != in.data && out.num_elements > 0)
    std::memcpy(out.data, in.data, static_cast<size_t>(out.num_elements) * kBytes);
  if (update.num_elements == 0) return OkStatus();
  DimVector out_strides = DenseStrides(out.dims);
  int64_t offset = ClampedOffset(args, 2, out.dims, update.dims, out_strides);
  DimVector update_strides = DenseStrides(update.dims);
  StridedCopy(out.as<W>() + offset, {out_strides.data(), out_strides.size()}, update.as<const W>(),
              {update_strides.data(), update_strides.size()}, update.dims);
  return OkStatus();
}

template <int kBytes>
Status PadKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const size_t rank = in.dims.size();
  if (rank == 0 && context.thread_index != 0) return OkStatus();
  // This call's output rows [row_begin, row_end) along dim 0 (everything for rank 0).
  int64_t row_begin = 0, row_end = 1;
  if (rank > 0) std::tie(row_begin, row_end) = ShareOf(context, out.dims[0]);
  if (row_begin >= row_end) return OkStatus();
  const int64_t row_elements = rank > 0 ? out.num_elements / out.dims[0] : 1;
  const W value = args.inputs[1].as<const W>()[0];
  W* dst = out.as<W>();
  for (int64_t i = row_begin * row_elements; i < row_end * row_elements; ++i) dst[i] = value;
  if (in.num_elements == 0) return OkStatus();
  const std::vector<int64_t>& low = args.Params<PadParams>().low;
  const std::vector<int64_t>& interior = args.Params<PadParams>().interior;
  // Input element i of dim d lands at low + i * (interior + 1); with negative padding some
  // land outside and are dropped.
  DimVector in_strides = DenseStrides(in.dims), out_strides = DenseStrides(out.dims);
  DimVector count(rank), src_strides(rank), dst_strides(rank);
  int64_t src_offset = 0, dst_offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t step = interior[d] + 1;
    // The input indices [first, last] whose positions are inside the output (for dim 0:
    // inside this call's rows).
    const int64_t lo = d == 0 ? row_begin : 0, hi = d == 0 ? row_end : out.dims[d];
    int64_t first = low[d] >= lo ? 0 : (lo - low[d] + step - 1) / step;
    int64_t last = in.dims[d] - 1;
    if (low[d] + last * step >= hi) {
      if (hi - 1 - low[d] < 0) return OkStatus();
      last = (hi - 1 - low[d]) / step;
    }
    if (first > last) return OkStatus();
    count[d] = last - first + 1;
    src_offset += first * in_strides[d];
    dst_offset += (low[d] + first * step) * out_strides[d];
    src_strides[d] = in_strides[d];
    dst_strides[d] = step * out_strides[d];
  }
  StridedCopy(dst + dst_offset, {dst_strides.data(), rank}, in.as<const W>() + src_offset, {src_strides.data(), rank},
              {count.data(), rank});
  return OkStatus();
}

template <int kBytes>
Status ReverseKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  DimVector src_strides = DenseStrides(in.dims);
  int64_t offset = 0;
  for (int64_t d : args.Params<ReverseParams>().dimensions) {
    offset += (in.dims[static_cast<size_t>(d)] - 1) * src_strides[static_cast<size_t>(d)];
    src_strides[static_cast<size_t>(d)] = -src_strides[static_cast<size_t>(d)];
  }
  DimVector dst_strides = DenseStrides(out.dims);
  StridedCopyShare(context, out.as<W>(), {dst_strides.data(), dst_strides.size()}, in.as<const W>() + offset,
                   {src_strides.data(), src_strides.size()}, out.dims);
  return OkStatus();
}

}  // namespace

Status RegisterSlicingKernels(KernelRegistry& r) {
  return ForEachDType(MovableDTypes{}, [&]<DType D>() {
    constexpr int kBytes = static_cast<int>(sizeof(Storage<D>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("dynamic_slice", {D}), &DynamicSliceKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("dynamic_update_slice", {D}), &DynamicUpdateSliceKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.DeclareInPlace(KernelKey("dynamic_update_slice", {D}), InPlace::kFirstInput));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<PadParams>(KernelKey("pad", {D}), &PadKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<ReverseParams>(KernelKey("reverse", {D}), &ReverseKernel<kBytes>));
    return OkStatus();
  });
}

}  // namespace stablert::kernels
