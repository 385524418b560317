// Cross-checks reduce_window against a naive loop on random windows.
#include <gtest/gtest.h>

#include <random>

#include "kernels/kernel_test_util.h"

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
    RunKernel(key, {&in, &init}, {&out}, {window, strides, base, wdil, low, high});

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

}  // namespace
}  // namespace stablert::kernels
