// Cross-checks reduce_window against a naive loop on random windows.
#include <gtest/gtest.h>

#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/window_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

TEST(WindowTest, RandomWindowsMatchNaiveLoop) {
  std::mt19937 rng(51);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = static_cast<int>(rng() % 4);
    const bool use_max = trial % 2;
    const DType dtype = trial % 3 == 0 ? DType::kS32 : DType::kF64;
    Dims dims(static_cast<size_t>(rank)), out_dims(static_cast<size_t>(rank));
    std::vector<int64_t> window(rank), strides(rank), base(rank), wdil(rank), low(rank), high(rank);
    for (int d = 0; d < rank; ++d) {
      dims[d] = static_cast<int64_t>(rng() % 5);
      window[d] = static_cast<int64_t>(rng() % 4);
      strides[d] = 1 + static_cast<int64_t>(rng() % 3);
      base[d] = 1 + static_cast<int64_t>(rng() % 2);
      wdil[d] = 1 + static_cast<int64_t>(rng() % 2);
      low[d] = static_cast<int64_t>(rng() % 3);
      high[d] = static_cast<int64_t>(rng() % 3);
      int64_t dilated = dims[d] == 0 ? 0 : (dims[d] - 1) * base[d] + 1;
      int64_t padded = dilated + low[d] + high[d];
      int64_t span = window[d] == 0 ? 0 : (window[d] - 1) * wdil[d] + 1;
      out_dims[d] = padded < span ? 0 : (padded - span) / strides[d] + 1;
    }
    Array in(dtype, dims), init(dtype, {}), out(dtype, out_dims);
    for (int64_t i = 0; i < in.size(); ++i) {
      if (dtype == DType::kS32) SetInt(in, i, static_cast<int64_t>(rng() % 200) - 100);
      else SetDouble(in, i, static_cast<double>(rng() % 200) / 8 - 12);
    }
    if (dtype == DType::kS32) SetInt(init, 0, use_max ? -1000 : 3);
    else SetDouble(init, 0, use_max ? -1000 : 0.5);
    std::string key = std::string(use_max ? "reduce_window_max." : "reduce_window_add.") + std::string(DTypeName(dtype));
    RunKernel(key, {&in, &init}, {&out},
              WindowParams{.window_dimensions = window,
                           .window_strides = strides,
                           .base_dilations = base,
                           .window_dilations = wdil,
                           .padding_low = low,
                           .padding_high = high});

    // Naive: every output index, every window index.
    const int64_t out_count = ElementCount(out_dims);
    Dims o(static_cast<size_t>(rank), 0);
    for (int64_t oi = 0; oi < out_count; ++oi) {
      double acc = dtype == DType::kS32 ? static_cast<double>(GetInt(init, 0)) : GetDouble(init, 0);
      const int64_t window_count = ElementCount(window);
      Dims w(static_cast<size_t>(rank), 0);
      for (int64_t wi = 0; wi < window_count; ++wi) {
        int64_t linear = 0;
        bool inside = true;
        for (int d = 0; d < rank; ++d) {
          int64_t p = o[d] * strides[d] + w[d] * wdil[d] - low[d];
          if (p < 0 || p % base[d] != 0 || p / base[d] >= dims[d]) inside = false;
          else linear = linear * dims[d] + p / base[d];
        }
        if (inside) {
          double v = dtype == DType::kS32 ? static_cast<double>(GetInt(in, linear)) : GetDouble(in, linear);
          acc = use_max ? std::max(acc, v) : acc + v;
        }
        for (int d = rank - 1; d >= 0; --d) {
          if (++w[d] < window[d]) break;
          w[d] = 0;
        }
      }
      double got = dtype == DType::kS32 ? static_cast<double>(GetInt(out, oi)) : GetDouble(out, oi);
      ASSERT_EQ(got, acc) << key << " trial " << trial << " output " << oi;
      for (int d = rank - 1; d >= 0; --d) {
        if (++o[d] < out_dims[d]) break;
        o[d] = 0;
      }
    }
  }
}

// select = (a >= b), scatter = a + b on f64: max-pool's gradient.
TEST(WindowTest, SelectAndScatterMatchesNaiveLoop) {
  const int64_t f64 = static_cast<int64_t>(DType::kF64), pred = static_cast<int64_t>(DType::kPred);
  const std::vector<int64_t> select = {1, 3, f64, f64, pred, 2, 0, 1, 70, 2, 0, 1, 0, 2 * 8 + 1, 1, 2};
  const std::vector<int64_t> scatter = {1, 3, f64, f64, f64, 2, 0, 1, 40, 2, 0, 1, 0, 0, 1, 2};
  std::mt19937 rng(52);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    Dims dims(static_cast<size_t>(rank)), src_dims(static_cast<size_t>(rank));
    std::vector<int64_t> window(rank), strides(rank), low(rank), high(rank);
    for (int d = 0; d < rank; ++d) {
      dims[d] = 1 + static_cast<int64_t>(rng() % 5);
      window[d] = 1 + static_cast<int64_t>(rng() % 3);
      strides[d] = 1 + static_cast<int64_t>(rng() % 2);
      low[d] = static_cast<int64_t>(rng() % 2);
      high[d] = static_cast<int64_t>(rng() % 2);
      int64_t padded = dims[d] + low[d] + high[d];
      src_dims[d] = padded < window[d] ? 0 : (padded - window[d]) / strides[d] + 1;
    }
    Array operand(DType::kF64, dims), source(DType::kF64, src_dims), init(DType::kF64, {}), out(DType::kF64, dims);
    for (int64_t i = 0; i < operand.size(); ++i) SetDouble(operand, i, static_cast<double>(rng() % 5));  // ties
    for (int64_t i = 0; i < source.size(); ++i) SetDouble(source, i, static_cast<double>(1 + rng() % 9));
    SetDouble(init, 0, 0.25);
    RunKernel("select_and_scatter.f64", {&operand, &source, &init}, {&out},
              SelectAndScatterParams{.window_dimensions = window,
                                     .window_strides = strides,
                                     .padding_low = low,
                                     .padding_high = high,
                                     .select = select,
                                     .scatter = scatter});
    std::vector<double> want(static_cast<size_t>(operand.size()), 0.25);
    for (int64_t s = 0; s < source.size(); ++s) {
      Dims o(static_cast<size_t>(rank));
      for (int64_t rem = s, d = rank - 1; d >= 0; --d) {
        o[static_cast<size_t>(d)] = rem % src_dims[static_cast<size_t>(d)];
        rem /= src_dims[static_cast<size_t>(d)];
      }
      int64_t best = -1;
      for (int64_t w = 0; w < ElementCount(window); ++w) {
        int64_t linear = 0;
        bool inside = true;
        for (int64_t rem = w, d = rank - 1, scale = 1; d >= 0; --d) {
          int64_t k = rem % window[static_cast<size_t>(d)];
          rem /= window[static_cast<size_t>(d)];
          int64_t p = o[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)] + k - low[static_cast<size_t>(d)];
          inside = inside && p >= 0 && p < dims[static_cast<size_t>(d)];
          linear += p * scale;
          scale *= dims[static_cast<size_t>(d)];
        }
        if (!inside) continue;
        if (best < 0 || !(GetDouble(operand, best) >= GetDouble(operand, linear))) best = linear;
      }
      if (best >= 0) want[static_cast<size_t>(best)] += GetDouble(source, s);
    }
    for (int64_t i = 0; i < operand.size(); ++i) ASSERT_EQ(GetDouble(out, i), want[static_cast<size_t>(i)]) << trial;
  }
}

}  // namespace
}  // namespace stablert::kernels
