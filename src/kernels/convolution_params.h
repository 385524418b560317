// The parameters of the convolution kernels ("convolution.<T>", "convolution_dnnl.f32"),
// built by plan/lower_convolution.cc.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

struct ConvolutionParams {
  static constexpr std::string_view kFamily = "convolution";
  // Dimension numbers: which operand dimension plays which role.
  std::vector<int64_t> lhs_dims;  // batch, feature, spatial...
  std::vector<int64_t> rhs_dims;  // input feature, output feature, spatial...
  std::vector<int64_t> out_dims;  // batch, feature, spatial...
  // One entry per spatial dimension.
  std::vector<int64_t> strides;
  std::vector<int64_t> padding_low;
  std::vector<int64_t> padding_high;
  std::vector<int64_t> lhs_dilation;
  std::vector<int64_t> rhs_dilation;
  std::vector<int64_t> reversal;  // 0/1: the window is reversed along that dimension
  int64_t feature_groups = 1;
  int64_t batch_groups = 1;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("lhs_dims", lhs_dims);
    visit("rhs_dims", rhs_dims);
    visit("out_dims", out_dims);
    visit("strides", strides);
    visit("padding_low", padding_low);
    visit("padding_high", padding_high);
    visit("lhs_dilation", lhs_dilation);
    visit("rhs_dilation", rhs_dilation);
    visit("reversal", reversal);
    visit("feature_groups", feature_groups);
    visit("batch_groups", batch_groups);
  }
};

}  // namespace stablert::kernels
