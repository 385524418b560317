// Data movement kernels: copy, broadcast_in_dim, transpose, slice, concatenate, iota.
// All but iota only move bytes, so one instantiation per element width serves every dtype.
#include <cstring>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {


Status CopyKernel(const KernelContext&, const KernelArgs& args) {
  const BufferView& in = args.inputs[0];
  size_t bytes = static_cast<size_t>(in.num_elements) * DTypeByteSize(in.dtype);
  if (bytes != 0) std::memmove(args.outputs[0].data, in.data, bytes);
  return OkStatus();
}

template <int kBytes>
Status BroadcastInDimKernel(const KernelContext&, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const ParamList& broadcast_dims = args.params[0];
  DimVector in_strides = DenseStrides(in.dims);
  DimVector src_strides(out.dims.size(), 0);
  for (size_t i = 0; i < broadcast_dims.size(); ++i) {
    if (in.dims[i] != 1) src_strides[broadcast_dims[i]] = in_strides[i];
  }
  DimVector dst_strides = DenseStrides(out.dims);
  StridedCopy(out.as<W>(), {dst_strides.data(), dst_strides.size()}, in.as<const W>(),
              {src_strides.data(), src_strides.size()}, out.dims);
  return OkStatus();
}

template <int kBytes>
Status TransposeKernel(const KernelContext&, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const ParamList& permutation = args.params[0];
  DimVector in_strides = DenseStrides(in.dims);
  DimVector src_strides(out.dims.size());
  for (size_t i = 0; i < permutation.size(); ++i) src_strides[i] = in_strides[permutation[i]];
  DimVector dst_strides = DenseStrides(out.dims);
  StridedCopy(out.as<W>(), {dst_strides.data(), dst_strides.size()}, in.as<const W>(),
              {src_strides.data(), src_strides.size()}, out.dims);
  return OkStatus();
}

template <int kBytes>
Status SliceKernel(const KernelContext&, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const ParamList& start = args.params[0];
  const ParamList& stride = args.params[2];
  DimVector in_strides = DenseStrides(in.dims);
  DimVector src_strides(out.dims.size());
  int64_t offset = 0;
  for (size_t i = 0; i < out.dims.size(); ++i) {
    offset += start[i] * in_strides[i];
    src_strides[i] = stride[i] * in_strides[i];
  }
  DimVector dst_strides = DenseStrides(out.dims);
  StridedCopy(out.as<W>(), {dst_strides.data(), dst_strides.size()}, in.as<const W>() + offset,
              {src_strides.data(), src_strides.size()}, out.dims);
  return OkStatus();
}

template <int kBytes>
Status ConcatenateKernel(const KernelContext&, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& out = args.outputs[0];
  const size_t dim = static_cast<size_t>(args.params[0][0]);
  DimVector dst_strides = DenseStrides(out.dims);
  int64_t position = 0;
  for (const BufferView& in : args.inputs) {
    DimVector src_strides = DenseStrides(in.dims);
    StridedCopy(out.as<W>() + position * dst_strides[dim], {dst_strides.data(), dst_strides.size()},
                in.as<const W>(), {src_strides.data(), src_strides.size()}, in.dims);
    position += in.dims[dim];
  }
  return OkStatus();
}

template <DType D>
Status IotaKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const BufferView& out = args.outputs[0];
  T* data = out.as<T>();
  if (out.num_elements == 0) return OkStatus();
  const size_t dim = static_cast<size_t>(args.params[0][0]);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dim; ++i) outer *= out.dims[i];
  for (size_t i = dim + 1; i < out.dims.size(); ++i) inner *= out.dims[i];
  const int64_t size = out.dims[dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < size; ++i) {
      T value;
      if constexpr (kIsHalf<T>) value = StoreAs<T>(static_cast<float>(i));
      else if constexpr (kIsComplex<T>) value = T(static_cast<Part<T>>(i), 0);
      else value = static_cast<T>(i);
      T* row = data + (o * size + i) * inner;
      for (int64_t k = 0; k < inner; ++k) row[k] = value;
    }
  }
  return OkStatus();
}

}  // namespace

Status RegisterDataMovementKernels(KernelRegistry& r) {
  return ForEachDType(MovableDTypes{}, [&]<DType D>() {
    constexpr int kBytes = static_cast<int>(sizeof(Storage<D>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("copy", {D}), &CopyKernel));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("broadcast_in_dim", {D}), &BroadcastInDimKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("transpose", {D}), &TransposeKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("slice", {D}), &SliceKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("concatenate", {D}), &ConcatenateKernel<kBytes>));
    if constexpr (D != DType::kPred && kNarrowIntBits<D> == 0 && !kIsMinifloat<Storage<D>>) {
      STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("iota", {D}), &IotaKernel<D>));
    }
    return OkStatus();
  });
}

}  // namespace stablert::kernels
