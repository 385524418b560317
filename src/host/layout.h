// Memory layouts of arrays (PJRT_Buffer_MemoryLayout) as owned values: an order of the
// dimensions (minor_to_major, with XLA's optional tiles) or byte strides; their checks, their
// XLA text form (what the Layouts extension serializes), the C struct that views one, and the
// byte strides of a dense array in a tile-free order.
//
// Plain values and pure functions; thread-safe. Failures are InvalidArgument values naming the
// function the caller passes and what was expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::host {

struct MemoryLayout {
  enum class Kind { kMinorToMajor, kStrides };
  Kind kind = Kind::kMinorToMajor;
  // kMinorToMajor: dimension indices, the fastest-varying first ({1, 0} is row-major for
  // rank 2, {0, 1} column-major), and XLA's tiles (each a list of sizes; empty: no tiling).
  std::vector<int64_t> minor_to_major;
  std::vector<std::vector<int64_t>> tiles;
  // kStrides: bytes to step per dimension.
  std::vector<int64_t> byte_strides;

  static MemoryLayout RowMajor(size_t rank);     // {rank-1, ..., 1, 0}
  static MemoryLayout ColumnMajor(size_t rank);  // {0, 1, ..., rank-1}
  static MemoryLayout MinorToMajor(std::vector<int64_t> minor_to_major);
  static MemoryLayout Strides(std::vector<int64_t> byte_strides);

  // A tile-free order of the dimensions from the last to the first (dense row-major bytes).
  bool IsRowMajorOrder() const;
  // XLA's text for an order ("{1,0}", "{1,0:T(8,128)}"); "strides{12,4}" for byte strides.
  std::string ToString() const;
  bool operator==(const MemoryLayout& other) const = default;
};

// OK if `layout` describes arrays of rank `rank`: minor_to_major a permutation of 0..rank-1
// with tiles of positive sizes (tiles are checked for form only: a plugin may still refuse
// them), or one byte stride per dimension. Otherwise InvalidArgument naming `function` and
// `what` ("device_layout", "host_layout").
Status CheckLayout(const MemoryLayout& layout, size_t rank, std::string_view function, std::string_view what);

// A copy of a layout a plugin returned; InvalidArgument naming `function` for an unknown type.
StatusOr<MemoryLayout> LayoutFromPjrt(const PJRT_Buffer_MemoryLayout& layout, std::string_view function);

// Reads XLA's text form: "{}", "{1,0}", "{0,1:T(8,128)(2,1)}". Annotations other than tiles
// (E(bits) element size, S(n) memory space, ...) say nothing about where the host-visible
// elements lie and are skipped. InvalidArgument naming `function` for anything else.
StatusOr<MemoryLayout> ParseLayoutText(std::string_view text, std::string_view function);

// A PJRT_Buffer_MemoryLayout viewing `layout`, which must outlive it unchanged. Not copyable
// (the C struct points into it).
class PjrtLayoutView {
 public:
  explicit PjrtLayoutView(const MemoryLayout& layout);
  PjrtLayoutView(const PjrtLayoutView&) = delete;
  PjrtLayoutView& operator=(const PjrtLayoutView&) = delete;
  PJRT_Buffer_MemoryLayout* get() { return &c_; }

 private:
  std::vector<int64_t> tile_dims_;
  std::vector<size_t> tile_sizes_;
  PJRT_Buffer_MemoryLayout c_{};
};

// The byte strides of a dense array of `dims` (`element_bytes` each) laid out in `layout`:
// its own strides for kStrides; for a tile-free order, each dimension's stride is the product
// of the extents of the dimensions more minor than it. InvalidArgument naming `function` for
// tiles (no strides describe them) and for a layout that does not fit `dims`.
StatusOr<std::vector<int64_t>> LayoutByteStrides(const MemoryLayout& layout, const std::vector<int64_t>& dims,
                                                 int64_t element_bytes, std::string_view function);

}  // namespace stablert::host
