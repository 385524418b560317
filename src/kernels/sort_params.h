// The parameters of the key sorts "sort_keys.<T>" and "sort_by_key.<T>" (kernels/sort.cc),
// built by plan/lower_reduce.cc when plan/sort_comparator.cc recognizes the comparator.
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::kernels {

namespace sort {
// The order the comparator sorts the first operand's values by (sort_keys.h maps each to
// order-preserving unsigned keys).
enum class Order : int64_t {
  kInteger = 0,     // signed or unsigned integers, i1
  kTotalOrder = 1,  // floats in IEEE total order (compare TOTALORDER)
  kCanonical = 2,   // floats as JAX compares them: -0 as +0, every NaN as +NaN
};
}  // namespace sort

struct SortParams {
  static constexpr std::string_view kFamily = "sort";
  int64_t dimension = 0;  // the dimension sorted along
  sort::Order order = sort::Order::kInteger;
  bool descending = false;  // greatest first (else least first)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("dimension", dimension);
    visit("order", order);
    visit("descending", descending);
  }
};

}  // namespace stablert::kernels
