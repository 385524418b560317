// The parameters of the kernels whose per-element work is a body program
// (kernels/program_kernels.cc): "reduce_program" and "sort_program", built by
// plan/lower_reduce.cc and plan/lower_approx_top_k.cc. A body stays in its int64 encoding
// (scalar_program.h), decoded once per plan step by the kernel's prepare function.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

struct ReduceProgramParams {
  static constexpr std::string_view kFamily = "reduce_program";
  std::vector<int64_t> dimensions;  // the operands' reduced dimensions, each once
  // The body: (acc_0..acc_{N-1}, x_0..x_{N-1}) -> the N new accumulators.
  std::vector<int64_t> body;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("dimensions", dimensions);
    visit("body", body);
  }
};

struct SortProgramParams {
  static constexpr std::string_view kFamily = "sort_program";
  int64_t dimension = 0;   // the dimension sorted along
  bool is_stable = false;  // the op's is_stable (the kernel sorts stably either way)
  // The comparator: (lhs_0, rhs_0, lhs_1, rhs_1, ...) -> one i1, "lhs < rhs".
  std::vector<int64_t> comparator;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("dimension", dimension);
    visit("is_stable", is_stable);
    visit("comparator", comparator);
  }
};

}  // namespace stablert::kernels
