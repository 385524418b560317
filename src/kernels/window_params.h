// The parameters of the window kernels of kernels/window.cc ("reduce_window_<body>.<T>",
// "reduce_window_program", "select_and_scatter.<T>"), built by plan/lower_window.cc. Every
// list has one entry per operand dimension, outermost first.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

// The windows of "reduce_window_<body>.<T>": output index o along dimension d reads the
// window positions w < window_dimensions[d] at (dilated, padded) input position
// o * window_strides[d] + w * window_dilations[d] - padding_low[d], where the input is
// dilated by base_dilations[d] (holes between its elements) and padded by padding_low[d]
// before and padding_high[d] after.
struct WindowParams {
  static constexpr std::string_view kFamily = "reduce_window";
  std::vector<int64_t> window_dimensions;  // window size (>= 0)
  std::vector<int64_t> window_strides;     // step between windows (>= 1)
  std::vector<int64_t> base_dilations;     // input dilation (>= 1; 1: none)
  std::vector<int64_t> window_dilations;   // step between window positions (>= 1)
  std::vector<int64_t> padding_low;        // padding before the (dilated) input
  std::vector<int64_t> padding_high;       // padding after the (dilated) input

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("window_dimensions", window_dimensions);
    visit("window_strides", window_strides);
    visit("base_dilations", base_dilations);
    visit("window_dilations", window_dilations);
    visit("padding_low", padding_low);
    visit("padding_high", padding_high);
  }
};

// "reduce_window_program": the windows of WindowParams, folded by a body program.
struct ReduceWindowProgramParams {
  static constexpr std::string_view kFamily = "reduce_window_program";
  WindowParams window;
  // The body (accumulators..., elements...) -> accumulators..., encoded as
  // kernels/scalar_program.h encodes programs; decoded when the plan is loaded.
  std::vector<int64_t> body;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("window", window);
    visit("body", body);
  }
};

// "select_and_scatter.<T>": windows over the operand (no dilation); for each window the
// element `select` keeps gets `scatter`(its value, the source element).
struct SelectAndScatterParams {
  static constexpr std::string_view kFamily = "select_and_scatter";
  std::vector<int64_t> window_dimensions;  // window size (>= 1)
  std::vector<int64_t> window_strides;     // step between windows (>= 1)
  std::vector<int64_t> padding_low;        // padding before the operand (>= 0)
  std::vector<int64_t> padding_high;       // padding after the operand (>= 0)
  // The bodies, encoded as kernels/scalar_program.h encodes programs: select (a, b) -> i1
  // (true: keep a) and scatter (a, b) -> T.
  std::vector<int64_t> select;
  std::vector<int64_t> scatter;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("window_dimensions", window_dimensions);
    visit("window_strides", window_strides);
    visit("padding_low", padding_low);
    visit("padding_high", padding_high);
    visit("select", select);
    visit("scatter", scatter);
  }
};

}  // namespace stablert::kernels
