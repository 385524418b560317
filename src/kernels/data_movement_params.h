// The parameters of the data movement kernels of kernels/data_movement.cc
// ("broadcast_in_dim.<T>", "transpose.<T>", "slice.<T>", "concatenate.<T>", "iota.<T>";
// "copy.<T>" takes none), built by plan/lower_shape.cc and the other lowerings that move
// operands into shape (lower_dot.cc, lower_narrow.cc, lower_linalg.cc,
// lower_approx_top_k.cc). Dimension numbers count from 0, outermost first.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

// out[...] = in[...] with input dimension i placed at output dimension dimensions[i]; an
// input dimension of size 1 is repeated along its output dimension, the output dimensions
// not named are repeated.
struct BroadcastInDimParams {
  static constexpr std::string_view kFamily = "broadcast_in_dim";
  std::vector<int64_t> dimensions;  // one per input dimension: its output dimension

  template <typename Visit>
  void Fields(Visit&& visit) const { visit("dimensions", dimensions); }
};

// Output dimension i is input dimension permutation[i].
struct TransposeParams {
  static constexpr std::string_view kFamily = "transpose";
  std::vector<int64_t> permutation;  // one per dimension

  template <typename Visit>
  void Fields(Visit&& visit) const { visit("permutation", permutation); }
};

// Per dimension d, the output takes input indices start[d], start[d] + stride[d], ... below
// limit[d] (the output's size there).
struct SliceParams {
  static constexpr std::string_view kFamily = "slice";
  std::vector<int64_t> start;   // first input index, per dimension
  std::vector<int64_t> limit;   // one past the last input index, per dimension
  std::vector<int64_t> stride;  // step between input indices (>= 1), per dimension

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("start", start);
    visit("limit", limit);
    visit("stride", stride);
  }
};

// The inputs placed one after another along `dimension` (they agree on every other one).
struct ConcatenateParams {
  static constexpr std::string_view kFamily = "concatenate";
  int64_t dimension = 0;  // the dimension the inputs are joined along

  template <typename Visit>
  void Fields(Visit&& visit) const { visit("dimension", dimension); }
};

// out[...] = the output index along `dimension`.
struct IotaParams {
  static constexpr std::string_view kFamily = "iota";
  int64_t dimension = 0;  // the dimension whose index each element holds

  template <typename Visit>
  void Fields(Visit&& visit) const { visit("dimension", dimension); }
};

}  // namespace stablert::kernels
