// The parameters of the convolution kernels ("convolution.<T>", "convolution_dnnl.f32"),
// read from the plan's positional lists in one place. Layout of the lists (written by
// plan/lower_convolution.cc):
//   [0] lhs dims: batch, feature, spatial...      [1] rhs dims: in feature, out feature, spatial...
//   [2] out dims: batch, feature, spatial...      [3] window strides
//   [4] padding low   [5] padding high   [6] lhs dilation   [7] rhs dilation
//   [8] window reversal (0/1)             [9] feature_group_count, batch_group_count
// A view: the lists are borrowed from the KernelArgs and must outlive it.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/kernel.h"

namespace stablert::kernels {

struct ConvolutionParams {
  explicit ConvolutionParams(std::span<const ParamList> p)
      : lhs_dims(p[0]), rhs_dims(p[1]), out_dims(p[2]), strides(p[3]), padding_low(p[4]), padding_high(p[5]),
        lhs_dilation(p[6]), rhs_dilation(p[7]), reversal(p[8]), feature_groups(p[9][0]), batch_groups(p[9][1]) {}

  const ParamList& lhs_dims;
  const ParamList& rhs_dims;
  const ParamList& out_dims;
  const ParamList& strides;
  const ParamList& padding_low;
  const ParamList& padding_high;
  const ParamList& lhs_dilation;
  const ParamList& rhs_dilation;
  const ParamList& reversal;
  int64_t feature_groups;
  int64_t batch_groups;
};

}  // namespace stablert::kernels
