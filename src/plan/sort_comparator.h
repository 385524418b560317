// Recognition of sort comparators that are an order on the first operand's values, as JAX
// emits them (lax.sort, jnp.sort, jnp.argsort): such sorts run on order-preserving integer
// keys ("sort_keys.<T>", "sort_by_key.<T>", kernels/sort.cc) instead of calling the
// comparator per comparison.
#pragma once

#include <optional>

#include "kernels/sort_params.h"
#include "plan/lowering.h"

namespace stablert::plan {

struct SortComparatorOrder {
  kernels::sort::Order order = kernels::sort::Order::kInteger;
  bool descending = false;
};

// The order `region` (a comparator over `num_operands` operand pairs) compares by, when it
// depends only on the first pair and is one of:
//   compare LT/GT (a, b) SIGNED/UNSIGNED (or NOTYPE) on an integer or i1 key;
//   compare LT/GT (a, b) TOTALORDER on a float key;
//   compare LT/GT (canon(a), canon(b)) TOTALORDER on a float key, where canon replaces zeros
//     by a zero constant (select(compare EQ x 0, 0, x)) and NaNs by a positive NaN constant
//     (select(compare NE x x, NaN, x)), in either nesting (JAX's comparator).
// LT with (a, b) swapped is GT and vice versa. nullopt for anything else.
std::optional<SortComparatorOrder> MatchSortComparator(const Lowering& l, const ir::Region& region,
                                                       size_t num_operands);

}  // namespace stablert::plan
