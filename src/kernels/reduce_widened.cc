#include "kernels/reduce_widened.h"

#include <algorithm>

#include "kernels/simd/reduce_simd.h"

namespace stablert::kernels {

void SumWidenedRows(const KernelContext& context, bool bf16, const uint16_t* src, int64_t rows, int64_t length,
                    int64_t segments, float start, float* out) {
  const int64_t per_segment = (length + segments - 1) / segments;
  const auto [begin, end] = ShareOf(context, rows * segments);
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t row = unit / segments, segment = unit % segments;
    const int64_t a = std::min(length, segment * per_segment), b = std::min(length, a + per_segment);
    out[unit] = start + simd::PairwiseSumWidened(bf16, src + row * length + a, b - a);
  }
}

}  // namespace stablert::kernels
