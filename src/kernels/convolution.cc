// Direct convolution: "convolution.<T>" for f16, bf16, f32, f64 (f16/bf16 accumulate in
// f32), complex<f32>, complex<f64> and every integer type (accumulating in T, wrapping
// around as two's complement arithmetic does, as XLA's CPU backend computes it). Any
// dimension layout, strides, padding, dilations, window reversal, feature and batch groups.
// "convolution.i1" computes the or of the ands (true where any window product is true).
// A plain loop nest; f32 convolutions are lowered to "convolution_dnnl.f32"
// (convolution_dnnl.cc), which runs this kernel for the forms oneDNN cannot express. Operands of a narrower type than the
// result (preferred_element_type) are widened by the plan before this kernel.
//
//   in: lhs, rhs   out: result (same element type)
//   params: ConvolutionParams (convolution_params.h)
#include <type_traits>
#include <vector>

#include "kernels/complex_ops.h"
#include "kernels/convolution_params.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

template <DType D, typename A>
inline A MultiplyAdd(A sum, A a, A b) {
  if constexpr (D == DType::kPred) {
    return static_cast<A>((sum | (a & b)) != 0);  // or of ands, as XLA computes a pred convolution
  } else if constexpr (kIsComplex<A>) {
    return cx::Add(sum, cx::Multiply(a, b));
  } else if constexpr (std::is_integral_v<A>) {
    // Modulo 2^bits, without signed overflow.
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(sum) + static_cast<U>(static_cast<U>(a) * static_cast<U>(b))));
  } else {
    return sum + a * b;
  }
}

template <DType D>
Status ConvolutionKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  using Acc = std::conditional_t<kIsComplex<T> || D == DType::kF64 || std::is_integral_v<T>, T, float>;
  const BufferView& lhs = args.inputs[0];
  const BufferView& rhs = args.inputs[1];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const ConvolutionParams& conv = args.Params<ConvolutionParams>();
  const auto& [lhs_dims, rhs_dims, out_dims, strides, low, high, lhs_dilation, rhs_dilation, reversal, feature_groups,
               batch_groups] = conv;
  const size_t spatial = strides.size();

  DimVector lhs_strides = DenseStrides(lhs.dims), rhs_strides = DenseStrides(rhs.dims);
  const int64_t in_features_per_group = rhs.dims[static_cast<size_t>(rhs_dims[0])];
  const int64_t out_features = out.dims[static_cast<size_t>(out_dims[1])];
  const int64_t out_per_feature_group = out_features / feature_groups;
  const int64_t out_per_batch_group = out_features / batch_groups;
  const int64_t out_batch = out.dims[static_cast<size_t>(out_dims[0])];
  const int64_t lhs_batch_stride = lhs_strides[static_cast<size_t>(lhs_dims[0])];
  const int64_t lhs_feature_stride = lhs_strides[static_cast<size_t>(lhs_dims[1])];
  const int64_t rhs_in_stride = rhs_strides[static_cast<size_t>(rhs_dims[0])];
  const int64_t rhs_out_stride = rhs_strides[static_cast<size_t>(rhs_dims[1])];

  // Per spatial dim: for each (output position, kernel position) the lhs offset or -1.
  std::vector<std::vector<int64_t>> tables(spatial);
  DimVector window(spatial);
  for (size_t s = 0; s < spatial; ++s) {
    const int64_t out_size = out.dims[static_cast<size_t>(out_dims[2 + s])];
    const int64_t in_size = lhs.dims[static_cast<size_t>(lhs_dims[2 + s])];
    const int64_t k_size = rhs.dims[static_cast<size_t>(rhs_dims[2 + s])];
    window[s] = k_size;
    tables[s].assign(static_cast<size_t>(out_size * k_size), -1);
    for (int64_t o = 0; o < out_size; ++o) {
      for (int64_t k = 0; k < k_size; ++k) {
        int64_t position = o * strides[s] + k * rhs_dilation[s] - low[s];
        if (position < 0 || position % lhs_dilation[s] != 0 || position / lhs_dilation[s] >= in_size) continue;
        tables[s][static_cast<size_t>(o * k_size + k)] = position / lhs_dilation[s] * lhs_strides[static_cast<size_t>(lhs_dims[2 + s])];
      }
    }
  }
  int64_t window_count = 1;
  for (size_t s = 0; s < spatial; ++s) window_count *= window[s];

  const T* lhs_data = lhs.as<const T>();
  const T* rhs_data = rhs.as<const T>();
  T* out_data = out.as<T>();
  DimVector out_strides = DenseStrides(out.dims);
  DimVector out_position(spatial), k_index(spatial);
  // Visit outputs by logical coordinates (batch, feature, spatial...); this call's share is
  // a range of (batch, feature) pairs.
  const auto [first_pair, last_pair] = ShareOf(context, out_batch * out_features);
  for (int64_t pair = first_pair; pair < last_pair; ++pair) {
    const int64_t n = pair / out_features, o = pair % out_features;
    {
      const int64_t feature_group = o / out_per_feature_group;
      const int64_t batch_group = o / out_per_batch_group;
      const int64_t lhs_n = batch_group * out_batch + n;
      const T* lhs_base = lhs_data + lhs_n * lhs_batch_stride + feature_group * in_features_per_group * lhs_feature_stride;
      const T* rhs_base = rhs_data + o * rhs_out_stride;
      for (size_t s = 0; s < spatial; ++s) out_position[s] = 0;
      while (true) {
        Acc sum = 0;
        for (size_t s = 0; s < spatial; ++s) k_index[s] = 0;
        for (int64_t w = 0; w < window_count; ++w) {
          int64_t lhs_offset = 0, rhs_offset = 0;
          bool inside = true;
          for (size_t s = 0; s < spatial; ++s) {
            int64_t offset = tables[s][static_cast<size_t>(out_position[s] * window[s] + k_index[s])];
            if (offset < 0) inside = false;
            lhs_offset += offset;
            int64_t k = reversal[s] ? window[s] - 1 - k_index[s] : k_index[s];
            rhs_offset += k * rhs_strides[static_cast<size_t>(rhs_dims[2 + s])];
          }
          if (inside) {
            for (int64_t i = 0; i < in_features_per_group; ++i)
              sum = MultiplyAdd<D>(sum, static_cast<Acc>(Load(lhs_base[lhs_offset + i * lhs_feature_stride])),
                                static_cast<Acc>(Load(rhs_base[rhs_offset + i * rhs_in_stride])));
          }
          for (size_t s = spatial; s-- > 0;) {
            if (++k_index[s] < window[s]) break;
            k_index[s] = 0;
          }
        }
        int64_t out_offset = n * out_strides[static_cast<size_t>(out_dims[0])] + o * out_strides[static_cast<size_t>(out_dims[1])];
        for (size_t s = 0; s < spatial; ++s) out_offset += out_position[s] * out_strides[static_cast<size_t>(out_dims[2 + s])];
        if constexpr (kIsHalf<T>) out_data[out_offset] = StoreAs<T>(static_cast<float>(sum));
        else out_data[out_offset] = static_cast<T>(sum);
        size_t s = spatial;
        bool done = true;
        while (s > 0) {
          --s;
          if (++out_position[s] < out.dims[static_cast<size_t>(out_dims[2 + s])]) {
            done = false;
            break;
          }
          out_position[s] = 0;
        }
        if (done) break;
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status RegisterConvolutionKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(ForEachDType(FloatDTypes{}, [&]<DType D>() {
    return r.RegisterSplittable<ConvolutionParams>(KernelKey("convolution", {D}), &ConvolutionKernel<D>);
  }));
  STABLERT_RETURN_IF_ERROR(ForEachDType(IntDTypes{}, [&]<DType D>() {
    return r.RegisterSplittable<ConvolutionParams>(KernelKey("convolution", {D}), &ConvolutionKernel<D>);
  }));
  STABLERT_RETURN_IF_ERROR(ForEachDType(ComplexDTypes{}, [&]<DType D>() {
    return r.RegisterSplittable<ConvolutionParams>(KernelKey("convolution", {D}), &ConvolutionKernel<D>);
  }));
  STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<ConvolutionParams>(KernelKey("convolution", {DType::kPred}),
                                                                   &ConvolutionKernel<DType::kPred>));
  return RegisterDnnlConvolutionKernels(r, &ConvolutionKernel<DType::kF32>);
}

}  // namespace stablert::kernels
