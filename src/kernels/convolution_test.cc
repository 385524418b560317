// Cross-checks the convolution kernel against a naive loop over random configurations
// (layouts, strides, padding, dilations, reversal, feature and batch groups).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "kernels/convolution_params.h"
#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

TEST(ConvolutionTest, RandomConfigurationsMatchNaiveLoop) {
  std::mt19937 rng(71);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t spatial = rng() % 3;
    const size_t rank = spatial + 2;
    const int64_t groups = 1 + rng() % 2;
    const bool batch_grouped = groups > 1 && rng() % 2;
    const int64_t feature_groups = batch_grouped ? 1 : groups, batch_groups = batch_grouped ? groups : 1;
    const int64_t batch = batch_groups * (1 + rng() % 2);
    const int64_t in_per_group = 1 + rng() % 3;
    const int64_t features = in_per_group * feature_groups;
    const int64_t out_features = groups * (1 + rng() % 2);
    std::vector<int64_t> in_size(spatial), k_size(spatial), strides(spatial), low(spatial), high(spatial),
        lhs_dil(spatial), rhs_dil(spatial), reversal(spatial), out_size(spatial);
    for (size_t s = 0; s < spatial; ++s) {
      in_size[s] = 1 + rng() % 5;
      k_size[s] = 1 + rng() % 3;
      strides[s] = 1 + rng() % 2;
      low[s] = rng() % 3;
      high[s] = rng() % 2;
      lhs_dil[s] = 1 + rng() % 2;
      rhs_dil[s] = 1 + rng() % 2;
      reversal[s] = rng() % 2;
      int64_t padded = (in_size[s] - 1) * lhs_dil[s] + 1 + low[s] + high[s];
      int64_t span = (k_size[s] - 1) * rhs_dil[s] + 1;
      out_size[s] = padded < span ? 0 : (padded - span) / strides[s] + 1;
    }
    // Random layouts: logical (batch, feature, spatial...) -> physical dims.
    auto random_layout = [&] {
      std::vector<int64_t> layout(rank);
      std::iota(layout.begin(), layout.end(), 0);
      std::shuffle(layout.begin(), layout.end(), rng);
      return layout;
    };
    std::vector<int64_t> lhs_layout = random_layout(), rhs_layout = random_layout(), out_layout = random_layout();
    auto physical = [&](const std::vector<int64_t>& layout, int64_t a, int64_t b, const std::vector<int64_t>& rest) {
      Dims dims(rank);
      dims[static_cast<size_t>(layout[0])] = a;
      dims[static_cast<size_t>(layout[1])] = b;
      for (size_t s = 0; s < spatial; ++s) dims[static_cast<size_t>(layout[2 + s])] = rest[s];
      return dims;
    };
    Dims lhs_dims = physical(lhs_layout, batch, features, in_size);
    Dims rhs_dims = physical(rhs_layout, in_per_group, out_features, k_size);
    Dims out_dims = physical(out_layout, batch / batch_groups, out_features, out_size);
    Array lhs(DType::kF64, lhs_dims), rhs(DType::kF64, rhs_dims), out(DType::kF64, out_dims);
    for (int64_t i = 0; i < lhs.size(); ++i) SetDouble(lhs, i, static_cast<double>(rng() % 7) - 3);
    for (int64_t i = 0; i < rhs.size(); ++i) SetDouble(rhs, i, static_cast<double>(rng() % 7) - 3);
    RunKernel("convolution.f64", {&lhs, &rhs}, {&out},
              ConvolutionParams{lhs_layout, rhs_layout, out_layout, strides, low, high, lhs_dil, rhs_dil,
                                reversal, feature_groups, batch_groups});

    auto at = [&](const Array& a, const std::vector<int64_t>& layout, int64_t x, int64_t y, const Dims& rest) {
      Dims index(rank);
      index[static_cast<size_t>(layout[0])] = x;
      index[static_cast<size_t>(layout[1])] = y;
      for (size_t s = 0; s < spatial; ++s) index[static_cast<size_t>(layout[2 + s])] = rest[s];
      int64_t linear = 0;
      for (size_t d = 0; d < rank; ++d) linear = linear * a.dims[d] + index[d];
      return linear;
    };
    const int64_t out_per_fg = out_features / feature_groups, out_per_bg = out_features / batch_groups;
    for (int64_t n = 0; n < batch / batch_groups; ++n) {
      for (int64_t o = 0; o < out_features; ++o) {
        for (int64_t p = 0; p < ElementCount(out_size); ++p) {
          Dims position(spatial);
          for (int64_t rem = p, s = static_cast<int64_t>(spatial) - 1; s >= 0; --s) {
            position[static_cast<size_t>(s)] = rem % out_size[static_cast<size_t>(s)];
            rem /= out_size[static_cast<size_t>(s)];
          }
          double sum = 0;
          for (int64_t w = 0; w < ElementCount(k_size); ++w) {
            Dims k(spatial), in(spatial), kr(spatial);
            for (int64_t rem = w, s = static_cast<int64_t>(spatial) - 1; s >= 0; --s) {
              k[static_cast<size_t>(s)] = rem % k_size[static_cast<size_t>(s)];
              rem /= k_size[static_cast<size_t>(s)];
            }
            bool inside = true;
            for (size_t s = 0; s < spatial; ++s) {
              int64_t pos = position[s] * strides[s] + k[s] * rhs_dil[s] - low[s];
              inside = inside && pos >= 0 && pos % lhs_dil[s] == 0 && pos / lhs_dil[s] < in_size[s];
              in[s] = inside ? pos / lhs_dil[s] : 0;
              kr[s] = reversal[s] ? k_size[s] - 1 - k[s] : k[s];
            }
            if (!inside) continue;
            for (int64_t i = 0; i < in_per_group; ++i) {
              int64_t channel = (o / out_per_fg) * in_per_group + i;
              int64_t lhs_batch = (o / out_per_bg) * (batch / batch_groups) + n;
              sum += GetDouble(lhs, at(lhs, lhs_layout, lhs_batch, channel, in)) *
                     GetDouble(rhs, at(rhs, rhs_layout, i, o, kr));
            }
          }
          ASSERT_EQ(GetDouble(out, at(out, out_layout, n, o, position)), sum) << "trial " << trial;
        }
      }
    }
  }
}

TEST(ConvolutionTest, PredIsTheOrOfTheAnds) {
  // 1-D, one feature: lhs [1, 0, 0, 1, 1, 0], window [1, 1] -> each output is
  // lhs[i] & 1 | lhs[i + 1] & 1, never a count (two true products give true, not 2 or 0).
  Array lhs = ArrayOf<uint8_t>(DType::kPred, {1, 1, 6}, {1, 0, 0, 1, 1, 0});
  Array rhs = ArrayOf<uint8_t>(DType::kPred, {1, 1, 2}, {1, 1});
  Array out(DType::kPred, {1, 1, 5});
  RunKernel("convolution.i1", {&lhs, &rhs}, {&out},
            ConvolutionParams{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {1}, {0}, {0}, {1}, {1}, {0}, 1, 1});
  EXPECT_EQ(out.bytes, (std::vector<uint8_t>{1, 0, 1, 1, 1}));
  // A false window entry masks its product.
  Array masked = ArrayOf<uint8_t>(DType::kPred, {1, 1, 2}, {0, 1});
  RunKernel("convolution.i1", {&lhs, &masked}, {&out},
            ConvolutionParams{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {1}, {0}, {0}, {1}, {1}, {0}, 1, 1});
  EXPECT_EQ(out.bytes, (std::vector<uint8_t>{0, 0, 1, 1, 0}));
}

}  // namespace
}  // namespace stablert::kernels
