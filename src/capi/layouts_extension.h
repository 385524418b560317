// The PJRT Layouts extension: the memory layout of every buffer, parameter and result, a
// dimension permutation without tiles (runtime/array_layout.h): row-major (minor_to_major =
// rank-1 .. 0) unless the program's entry asked for another (mhlo.layout_mode) or the buffer
// is an output of such a program. Defaults are row-major. Answering directly spares clients
// the fallback of parsing the executable's optimized program to learn its parameter and
// output layouts at every compilation.
//
// Layouts returned by Client_GetDefaultLayout, Topology_GetDefaultLayout and
// Buffer_MemoryLayout are owned by the caller (MemoryLayout_Destroy); those of an
// executable live as long as the executable. Serialized layouts are XLA's text form ("{1,0}").
// Thread-safe: the extension is static data; calls share nothing mutable.
#pragma once

#include <cstdint>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"

struct PJRT_Layouts_MemoryLayout {
  std::vector<int64_t> minor_to_major;
};

namespace stablert::capi {

// The dense row-major layout of an array of rank `rank`.
PJRT_Layouts_MemoryLayout RowMajorLayout(size_t rank);
// The layout of major_to_minor `m2m` (empty: row-major) for an array of rank `rank`.
PJRT_Layouts_MemoryLayout MemoryLayoutOf(const std::vector<int64_t>& m2m, size_t rank);

// The extension (last in the chain).
PJRT_Extension_Base* LayoutsExtension();

}  // namespace stablert::capi
