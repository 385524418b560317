// Order-preserving unsigned keys for the sort kernels (sort.cc).
//
// A value's bits map to an unsigned key of the same width whose unsigned order is the
// comparator's order, so an integer sort (vqsort, a counting sort) sorts the values:
//   kInteger     signed: flip the sign bit; unsigned and i1: the bits themselves;
//   kTotalOrder  floats in IEEE total order, -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN,
//                NaNs ordered by payload (compare TOTALORDER on the raw values);
//   kCanonical   the comparator JAX emits for floats: -0 is taken as +0 and every NaN as
//                the positive canonical NaN before a TOTALORDER compare, so all zeros are
//                equal and all NaNs are equal and greater than +inf.
// A descending sort inverts the key. FromKey inverts ToKey; under kCanonical it returns the
// class's canonical member (+0, the positive quiet NaN), which the kernel replaces by the
// input's members where they differ.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/sort_params.h"  // sort::Order

namespace stablert::kernels::sort {

template <typename U>
struct KeyMap {
  static_assert(std::is_unsigned_v<U>);
  static constexpr int kBits = 8 * static_cast<int>(sizeof(U));
  static constexpr U kSign = static_cast<U>(U{1} << (kBits - 1));

  Order order = Order::kInteger;
  bool is_signed = false;  // kInteger: a signed integer type
  bool descending = false;
  U inf = 0;  // floats: the bits of +inf (f16 0x7c00, bf16 0x7f80, f32 0x7f800000, ...)

  U QuietNaN() const { return static_cast<U>(inf | ((inf >> 1) & ~inf)); }
  bool IsNaN(U bits) const { return static_cast<U>(bits & ~kSign) > inf; }
  // The class representative under kCanonical (the value itself otherwise).
  U Canonical(U bits) const {
    if (order != Order::kCanonical) return bits;
    const U magnitude = static_cast<U>(bits & ~kSign);
    return magnitude > inf ? QuietNaN() : magnitude == 0 ? U{0} : bits;
  }
  // True when the value differs from its class representative (a -0 or a NaN other than
  // the positive quiet NaN under kCanonical).
  bool IsNonCanonical(U bits) const { return order == Order::kCanonical && Canonical(bits) != bits; }

  U ToKey(U bits) const {
    U key;
    if (order == Order::kInteger) {
      key = is_signed ? static_cast<U>(bits ^ kSign) : bits;
    } else {
      bits = Canonical(bits);
      // Negative: all bits inverted; positive: the sign bit set.
      const U negative = static_cast<U>(U{0} - static_cast<U>(bits >> (kBits - 1)));
      key = static_cast<U>(bits ^ (negative | kSign));
    }
    return descending ? static_cast<U>(~key) : key;
  }

  U FromKey(U key) const {
    if (descending) key = static_cast<U>(~key);
    if (order == Order::kInteger) return is_signed ? static_cast<U>(key ^ kSign) : key;
    const U negative = static_cast<U>(U{0} - static_cast<U>((key >> (kBits - 1)) ^ 1));
    return static_cast<U>(key ^ (negative | kSign));
  }
};

}  // namespace stablert::kernels::sort
