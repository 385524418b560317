// The parameters of the gather and scatter kernels ("gather.<T>", "scatter_<body>.<T>",
// "scatter_program", "scatter_add_gathered.<T>"; kernels/gather_scatter.cc), built by
// plan/lower_gather_scatter.cc and refined by plan/fold_gather_scatter.cc (the index
// transform; a row gather folded into the row scatter-add that is its only reader).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

// The index arithmetic applied to each start index component before it indexes the operand
// (gather_scatter_index.h has the semantics). The default is the identity.
struct IndexTransformParams {
  enum class Mode : int64_t { kNone = 0, kFill = 1, kClamp = 2 };
  Mode mode = Mode::kNone;      // kFill: gather only (a third input holds the fill value);
                                // kClamp: scatter only
  int64_t bits = 0;             // 0, or narrow each component to its low 8, 16 or 32 bits
  std::vector<int64_t> wrap;    // per component: v < 0 becomes v + wrap (0: none); empty: none
  std::vector<int64_t> lo, hi;  // per component bounds (modes kFill and kClamp)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("mode", mode);
    visit("bits", bits);
    visit("wrap", wrap);
    visit("lo", lo);
    visit("hi", hi);
  }
};

struct GatherParams {
  static constexpr std::string_view kFamily = "gather";
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
  IndexTransformParams index_transform;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("offset_dims", offset_dims);
    visit("collapsed_slice_dims", collapsed_slice_dims);
    visit("operand_batching_dims", operand_batching_dims);
    visit("start_indices_batching_dims", start_indices_batching_dims);
    visit("start_index_map", start_index_map);
    visit("index_vector_dim", index_vector_dim);
    visit("slice_sizes", slice_sizes);
    visit("index_transform", index_transform);
  }
};

struct ScatterParams {
  static constexpr std::string_view kFamily = "scatter";
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  IndexTransformParams index_transform;
  std::vector<int64_t> body;  // "scatter_program" only: the encoded body program (scalar_program.h)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("update_window_dims", update_window_dims);
    visit("inserted_window_dims", inserted_window_dims);
    visit("input_batching_dims", input_batching_dims);
    visit("scatter_indices_batching_dims", scatter_indices_batching_dims);
    visit("scatter_dims_to_operand_dims", scatter_dims_to_operand_dims);
    visit("index_vector_dim", index_vector_dim);
    visit("index_transform", index_transform);
    visit("body", body);
  }
};

// "scatter_add_gathered.<T>": a row scatter-add whose update rows are rows of a source,
// segment_sum(table[ids], segments) without the gathered [N, W] array. Inputs: operand
// [S, W], scatter indices [N, 1] or [N], source [R, W], source row indices [N, 1] or [N];
// output [S, W]. Computes what gather(source, ids) followed by scatter_add(operand,
// segments, gathered) computes: for i in order, row segment(i) (after `scatter_transform`;
// out of [0, S): skipped) gains row ids(i) of the source (after `gather_transform`, clamped
// to [0, R)).
struct GatheredScatterParams {
  static constexpr std::string_view kFamily = "scatter_gathered";
  IndexTransformParams scatter_transform;
  IndexTransformParams gather_transform;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("scatter_transform", scatter_transform);
    visit("gather_transform", gather_transform);
  }
};

}  // namespace stablert::kernels
