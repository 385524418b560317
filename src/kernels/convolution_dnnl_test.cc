// Cross-checks "convolution_dnnl.f32" (oneDNN) against the loop kernel "convolution.f32" over
// random configurations (layouts, strides, padding incl. negative, dilations, reversal,
// feature and batch groups, 1-3 spatial dims) and the forms of convolution gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "base/thread_pool.h"
#include "kernels/convolution_params.h"
#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

struct Config {
  std::vector<int64_t> lhs_layout, rhs_layout, out_layout;
  Dims lhs_dims, rhs_dims, out_dims;
  ConvolutionParams params;
};

// Small integers: every sum is exact in f32, so both kernels agree exactly.
void ExpectSameAsLoops(const Config& c) {
  std::mt19937 rng(5);
  Array lhs(DType::kF32, c.lhs_dims), rhs(DType::kF32, c.rhs_dims);
  Array loops(DType::kF32, c.out_dims), dnnl(DType::kF32, c.out_dims);
  for (int64_t i = 0; i < lhs.size(); ++i) SetDouble(lhs, i, static_cast<double>(rng() % 7) - 3);
  for (int64_t i = 0; i < rhs.size(); ++i) SetDouble(rhs, i, static_cast<double>(rng() % 7) - 3);
  RunKernel("convolution.f32", {&lhs, &rhs}, {&loops}, c.params);
  for (int64_t i = 0; i < dnnl.size(); ++i) SetDouble(dnnl, i, 12345.0);
  RunKernel("convolution_dnnl.f32", {&lhs, &rhs}, {&dnnl}, c.params);
  for (int64_t i = 0; i < loops.size(); ++i)
    ASSERT_EQ(GetDouble(dnnl, i), GetDouble(loops, i)) << "element " << i;
}

Dims Physical(const std::vector<int64_t>& layout, int64_t a, int64_t b, const std::vector<int64_t>& rest) {
  Dims dims(layout.size());
  dims[static_cast<size_t>(layout[0])] = a;
  dims[static_cast<size_t>(layout[1])] = b;
  for (size_t s = 0; s < rest.size(); ++s) dims[static_cast<size_t>(layout[2 + s])] = rest[s];
  return dims;
}

TEST(DnnlConvolutionTest, RandomConfigurationsMatchLoops) {
  std::mt19937 rng(72);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    const size_t spatial = 1 + rng() % 3;
    const size_t rank = spatial + 2;
    const int64_t groups = 1 + rng() % 3;
    const bool batch_grouped = groups > 1 && rng() % 4 == 0;
    const int64_t feature_groups = batch_grouped ? 1 : groups, batch_groups = batch_grouped ? groups : 1;
    const int64_t batch = batch_groups * (1 + rng() % 3);
    const int64_t in_per_group = 1 + rng() % 4;
    const int64_t out_features = groups * (1 + rng() % 3);
    std::vector<int64_t> in(spatial), k(spatial), strides(spatial), low(spatial), high(spatial), lhs_dil(spatial),
        rhs_dil(spatial), reversal(spatial), out(spatial);
    for (size_t s = 0; s < spatial; ++s) {
      in[s] = 1 + rng() % 7;
      k[s] = 1 + rng() % 3;
      strides[s] = 1 + rng() % 2;
      low[s] = static_cast<int64_t>(rng() % 4) - 1;
      high[s] = static_cast<int64_t>(rng() % 4) - 1;
      lhs_dil[s] = rng() % 3 == 0 ? 2 : 1;
      rhs_dil[s] = 1 + rng() % 2;
      reversal[s] = rng() % 5 == 0;
      int64_t padded = (in[s] - 1) * lhs_dil[s] + 1 + low[s] + high[s];
      int64_t span = (k[s] - 1) * rhs_dil[s] + 1;
      out[s] = padded < span ? 0 : (padded - span) / strides[s] + 1;
    }
    if (std::find(out.begin(), out.end(), 0) != out.end()) continue;
    auto random_layout = [&] {
      std::vector<int64_t> layout(rank);
      std::iota(layout.begin(), layout.end(), 0);
      std::shuffle(layout.begin(), layout.end(), rng);
      return layout;
    };
    Config c;
    c.lhs_layout = random_layout();
    c.rhs_layout = random_layout();
    c.out_layout = random_layout();
    c.lhs_dims = Physical(c.lhs_layout, batch, in_per_group * feature_groups, in);
    c.rhs_dims = Physical(c.rhs_layout, in_per_group, out_features, k);
    c.out_dims = Physical(c.out_layout, batch / batch_groups, out_features, out);
    c.params = {c.lhs_layout, c.rhs_layout, c.out_layout, strides, low, high, lhs_dil, rhs_dil, reversal,
                feature_groups, batch_groups};
    ExpectSameAsLoops(c);
  }
}

TEST(DnnlConvolutionTest, NchwOihw) {
  const std::vector<int64_t> nchw = {0, 1, 2, 3};
  Config c{nchw, nchw, nchw, {2, 3, 7, 6}, {3, 4, 3, 2}, {2, 4, 5, 5},
           {nchw, {1, 0, 2, 3}, nchw, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {0, 0}, 1, 1}};
  c.rhs_dims = {4, 3, 3, 2};
  ExpectSameAsLoops(c);
}

// Batch groups stay on the loops, on threads of the step's own when the result is large.
TEST(DnnlConvolutionTest, LargeFallbackOnThreads) {
  const std::vector<int64_t> nchw = {0, 1, 2, 3}, iohw = {1, 0, 2, 3};
  Config c{nchw, iohw, nchw, {4, 8, 40, 40}, {16, 8, 3, 3}, {2, 16, 38, 38},
           {nchw, iohw, nchw, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {0, 0}, 1, 2}};
  ExpectSameAsLoops(c);
}

// Forward NHWC/HWIO, and the input and kernel gradients JAX emits for it (stride 2, SAME).
TEST(DnnlConvolutionTest, GradientForms) {
  const std::vector<int64_t> nhwc = {0, 3, 1, 2}, hwio = {2, 3, 0, 1};
  // Forward: x [4, 9, 9, 5], w [3, 3, 5, 6], stride 2, padding (1, 1) -> y [4, 5, 5, 6].
  Config forward{nhwc, hwio, nhwc, {4, 9, 9, 5}, {3, 3, 5, 6}, {4, 5, 5, 6},
                 {nhwc, hwio, nhwc, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("forward"); ExpectSameAsLoops(forward); }
  // Input gradient: dy [4, 5, 5, 6] (lhs, dilated by 2) * reversed w with I/O swapped
  // ("HWOI": rhs in = w's out) -> dx [4, 9, 9, 5].
  const std::vector<int64_t> hwoi = {3, 2, 0, 1};
  Config input_grad{nhwc, hwoi, nhwc, {4, 5, 5, 6}, {3, 3, 5, 6}, {4, 9, 9, 5},
                    {nhwc, hwoi, nhwc, {1, 1}, {1, 1}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("input_grad"); ExpectSameAsLoops(input_grad); }
  // Kernel gradient: x as lhs with batch and feature swapped ("CHWN"), dy as the kernel
  // ("NHWC" read as I = batch, spatial, O = features), rhs dilation 2 -> dw [3, 3, 5, 6].
  const std::vector<int64_t> lhs_swapped = {3, 0, 1, 2}, dy_as_kernel = {0, 3, 1, 2}, out_hwio = {2, 3, 0, 1};
  Config kernel_grad{lhs_swapped, dy_as_kernel, out_hwio, {4, 9, 9, 5}, {4, 5, 5, 6}, {3, 3, 5, 6},
                     {lhs_swapped, dy_as_kernel, out_hwio, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 2}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("kernel_grad"); ExpectSameAsLoops(kernel_grad); }
}

// Large enough to be cut into tiles over the batch (images for the forward and input-gradient
// forms, input features for the kernel gradient) when the process has two or more cores;
// oneDNN never starts threads of its own for them.
TEST(DnnlConvolutionTest, TiledGradientFormsMatchLoopsWithoutThreadsOfTheirOwn) {
  ThreadPool::Shared();  // the budget's workers
  const int before = ProcessThreadCount();
  const std::vector<int64_t> nhwc = {0, 3, 1, 2}, hwio = {2, 3, 0, 1}, hwoi = {3, 2, 0, 1};
  Config forward{nhwc, hwio, nhwc, {7, 24, 24, 16}, {3, 3, 16, 32}, {7, 24, 24, 32},
                 {nhwc, hwio, nhwc, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("forward"); ExpectSameAsLoops(forward); }
  Config input_grad{nhwc, hwoi, nhwc, {7, 24, 24, 32}, {3, 3, 16, 32}, {7, 24, 24, 16},
                    {nhwc, hwoi, nhwc, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, 1}};
  { SCOPED_TRACE("input_grad"); ExpectSameAsLoops(input_grad); }
  const std::vector<int64_t> lhs_swapped = {3, 0, 1, 2}, dy_as_kernel = {0, 3, 1, 2};
  Config kernel_grad{lhs_swapped, dy_as_kernel, hwio, {7, 24, 24, 16}, {7, 24, 24, 32}, {3, 3, 16, 32},
                     {lhs_swapped, dy_as_kernel, hwio, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("kernel_grad"); ExpectSameAsLoops(kernel_grad); }
  EXPECT_EQ(ProcessThreadCount(), before);
}

// Kernel gradients large enough to be cut into tiles over the sum (oneDNN's minibatch: the
// images, the lhs feature dim of this form), each tile a partial result added up after: an
// uneven split (5 images), output features that are not a multiple of oneDNN's block (20),
// strides (rhs dilation 2), NCHW, and a layout whose images are not the outermost dim.
TEST(DnnlConvolutionTest, KernelGradientsSummedInTilesMatchLoops) {
  ThreadPool::Shared();
  const int before = ProcessThreadCount();
  // NHWC x [5, 33, 33, 24], w [3, 3, 24, 20], stride 2, SAME -> dy [5, 17, 17, 20].
  const std::vector<int64_t> lhs_swapped = {3, 0, 1, 2}, dy_as_kernel = {0, 3, 1, 2}, hwio = {2, 3, 0, 1};
  Config nhwc{lhs_swapped, dy_as_kernel, hwio, {5, 33, 33, 24}, {5, 17, 17, 20}, {3, 3, 24, 20},
              {lhs_swapped, dy_as_kernel, hwio, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 2}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("nhwc_stride2"); ExpectSameAsLoops(nhwc); }
  // NCHW x [6, 16, 20, 20], OIHW w [32, 16, 3, 3], VALID -> dy [6, 32, 18, 18].
  const std::vector<int64_t> nchw_swapped = {1, 0, 2, 3}, dy_nchw = {0, 1, 2, 3}, oihw_out = {1, 0, 2, 3};
  Config nchw{nchw_swapped, dy_nchw, oihw_out, {6, 16, 20, 20}, {6, 32, 18, 18}, {32, 16, 3, 3},
              {nchw_swapped, dy_nchw, oihw_out, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("nchw_valid"); ExpectSameAsLoops(nchw); }
  // HNWC x [24, 4, 24, 16] (images second), dy HNWC [24, 4, 24, 32], SAME -> dw HWIO.
  const std::vector<int64_t> hnwc_swapped = {3, 1, 0, 2}, dy_hnwc = {1, 3, 0, 2};
  Config hnwc{hnwc_swapped, dy_hnwc, hwio, {24, 4, 24, 16}, {24, 4, 24, 32}, {3, 3, 16, 32},
              {hnwc_swapped, dy_hnwc, hwio, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 1}};
  { SCOPED_TRACE("images_not_outermost"); ExpectSameAsLoops(hnwc); }
  EXPECT_EQ(ProcessThreadCount(), before);
}

}  // namespace
}  // namespace stablert::kernels
