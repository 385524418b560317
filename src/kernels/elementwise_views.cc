#include "kernels/elementwise_views.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "base/dtype.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

// Largest element (complex<f64>) and most inputs (select, clamp) of an elementwise kernel.
constexpr size_t kMaxElementBytes = 16;
constexpr size_t kMaxInputs = 3;
// Bytes of a gathered input per block (512 elements of the largest type): the gathered
// inputs of a block stay in L1. Blocks hold as many elements as the widest gathered input
// allows, so that each dense call does enough work to hide its own cost.
constexpr size_t kBlockBytes = 512 * kMaxElementBytes;

// A view repeating one element (all strides 0).
bool IsSplat(const BufferView& view) {
  for (int64_t stride : view.strides)
    if (stride != 0) return false;
  return !view.strides.empty();
}

bool AllDense(std::span<const BufferView> views) {
  for (const BufferView& v : views)
    if (!v.dense()) return false;
  return true;
}

template <typename T>
void GatherTyped(const BufferView& view, int64_t begin, int64_t count, T* dst) {
  const size_t rank = view.dims.size();
  const T* src = static_cast<const T*>(view.data);
  // Merge adjacent dims whose strides allow it (size-1 dims drop out).
  DimVector size(rank), stride(rank);
  size_t n = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (view.dims[i] == 1) continue;
    if (n > 0 && stride[n - 1] == view.strides[i] * view.dims[i]) {
      size[n - 1] *= view.dims[i];
      stride[n - 1] = view.strides[i];
      continue;
    }
    size[n] = view.dims[i];
    stride[n] = view.strides[i];
    ++n;
  }
  if (n == 0) {
    std::fill(dst, dst + count, src[0]);
    return;
  }
  // The odometer at `begin`.
  DimVector index(n, 0);
  int64_t offset = 0;
  for (size_t k = n, rest = static_cast<size_t>(begin); k-- > 0;) {
    index[k] = static_cast<int64_t>(rest % static_cast<size_t>(size[k]));
    rest /= static_cast<size_t>(size[k]);
    offset += index[k] * stride[k];
  }
  const int64_t inner = size[n - 1], inner_stride = stride[n - 1];
  while (count > 0) {
    const int64_t run = std::min(count, inner - index[n - 1]);
    CopyRow(dst, 1, src + offset, inner_stride, run);
    dst += run;
    count -= run;
    offset += run * inner_stride;
    index[n - 1] += run;
    // Carry into the outer dims.
    for (size_t k = n - 1; k > 0 && index[k] == size[k]; --k) {
      offset -= size[k] * stride[k];
      index[k] = 0;
      ++index[k - 1];
      offset += stride[k - 1];
    }
  }
}

}  // namespace

void GatherViewElements(const BufferView& view, int64_t begin, int64_t count, void* dst) {
  if (count <= 0) return;
  const size_t element = static_cast<size_t>(DTypeByteSize(view.dtype));
  if (view.dense()) {
    std::memcpy(dst, static_cast<const uint8_t*>(view.data) + static_cast<size_t>(begin) * element,
                static_cast<size_t>(count) * element);
    return;
  }
  switch (element) {
    case 1: return GatherTyped(view, begin, count, static_cast<uint8_t*>(dst));
    case 2: return GatherTyped(view, begin, count, static_cast<uint16_t*>(dst));
    case 4: return GatherTyped(view, begin, count, static_cast<uint32_t*>(dst));
    case 8: return GatherTyped(view, begin, count, static_cast<uint64_t*>(dst));
    default: {
      struct alignas(16) Bytes16 { uint64_t lo, hi; };
      return GatherTyped(view, begin, count, static_cast<Bytes16*>(dst));
    }
  }
}

Status RunTileOverShare(TileFn tile, const KernelContext& context, const KernelArgs& args) {
  const BufferView& out = args.outputs[0];
  const auto [begin, end] = ShareOf(context, out.num_elements);
  if (end <= begin) return OkStatus();
  const size_t num_inputs = args.inputs.size();
  if (num_inputs > kMaxInputs || args.outputs.size() != 1)
    return Internal("elementwise tile function: at most 3 inputs and one output");
  const void* inputs[kMaxInputs] = {};
  for (size_t k = 0; k < num_inputs; ++k)
    inputs[k] = static_cast<const uint8_t*>(args.inputs[k].data) +
                static_cast<size_t>(begin) * static_cast<size_t>(DTypeByteSize(args.inputs[k].dtype));
  tile(inputs, static_cast<uint8_t*>(out.data) + static_cast<size_t>(begin) * static_cast<size_t>(DTypeByteSize(out.dtype)),
       end - begin, args.params);
  return OkStatus();
}

Status RunElementwiseOverViews(KernelFn dense, const KernelContext& context, const KernelArgs& args) {
  if (AllDense(args.inputs)) return dense(context, args);
  const BufferView& out = args.outputs[0];
  const auto [begin, end] = ShareOf(context, out.num_elements);
  const size_t num_inputs = args.inputs.size();
  if (num_inputs > kMaxInputs || args.outputs.size() != 1)
    return Internal("elementwise kernel over strided views: at most 3 inputs and one output");
  alignas(64) std::array<std::array<uint8_t, kBlockBytes>, kMaxInputs> buffers;
  size_t widest = 1;
  for (const BufferView& in : args.inputs)
    if (!in.dense()) widest = std::max(widest, static_cast<size_t>(DTypeByteSize(in.dtype)));
  const auto block = static_cast<int64_t>(kBlockBytes / widest);
  std::array<BufferView, kMaxInputs> inputs;
  BufferView block_out;
  int64_t block_dims[1];
  const KernelContext one_call;
  KernelArgs block_args = args;
  block_args.inputs = std::span<const BufferView>(inputs.data(), num_inputs);
  block_args.outputs = std::span<const BufferView>(&block_out, 1);
  const size_t out_element = static_cast<size_t>(DTypeByteSize(out.dtype));
  // A view repeating one element (all strides 0) is the same in every block: filled once.
  std::array<bool, kMaxInputs> splat_filled = {};
  for (int64_t first = begin; first < end; first += block) {
    const int64_t count = std::min(block, end - first);
    block_dims[0] = count;
    for (size_t k = 0; k < num_inputs; ++k) {
      const BufferView& in = args.inputs[k];
      BufferView& view = inputs[k];
      view = in;
      if (in.dense() && in.rank() == 0) continue;  // a scalar the kernel broadcasts itself
      view.dims = std::span<const int64_t>(block_dims, 1);
      view.strides = {};
      view.num_elements = count;
      if (in.dense()) {
        view.data = static_cast<uint8_t*>(in.data) + static_cast<size_t>(first) * static_cast<size_t>(DTypeByteSize(in.dtype));
      } else if (IsSplat(in)) {
        // The first block is the longest: later ones read a prefix of what it filled.
        if (!splat_filled[k]) GatherViewElements(in, first, count, buffers[k].data());
        splat_filled[k] = true;
        view.data = buffers[k].data();
      } else {
        GatherViewElements(in, first, count, buffers[k].data());
        view.data = buffers[k].data();
      }
    }
    block_out = out;
    block_out.dims = std::span<const int64_t>(block_dims, 1);
    block_out.num_elements = count;
    block_out.data = static_cast<uint8_t*>(out.data) + static_cast<size_t>(first) * out_element;
    STABLERT_RETURN_IF_ERROR(dense(one_call, block_args));
  }
  return OkStatus();
}

}  // namespace stablert::kernels
