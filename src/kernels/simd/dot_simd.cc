// Vector loops of the f32 matrix-vector products (dot_simd.h), compiled once per Highway
// target (dispatch.h).
#include "kernels/simd/dot_simd.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "kernels/accumulate.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/dot_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void AxpyRowsF32(float* dst, const float* x, const float* rows, int64_t stride, int64_t count, int64_t width) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;  // the tails, one lane at a time
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const float* r0 = rows + r * stride;
    const float* r1 = r0 + stride;
    const float* r2 = r1 + stride;
    const float* r3 = r2 + stride;
    const auto a0 = hn::Set(d, x[r]), a1 = hn::Set(d, x[r + 1]), a2 = hn::Set(d, x[r + 2]), a3 = hn::Set(d, x[r + 3]);
    int64_t i = 0;
    for (; i + lanes <= width; i += lanes) {
      auto s = hn::LoadU(d, dst + i);
      s = hn::MulAdd(a0, hn::LoadU(d, r0 + i), s);
      s = hn::MulAdd(a1, hn::LoadU(d, r1 + i), s);
      s = hn::MulAdd(a2, hn::LoadU(d, r2 + i), s);
      s = hn::MulAdd(a3, hn::LoadU(d, r3 + i), s);
      hn::StoreU(s, d, dst + i);
    }
    for (; i < width; ++i) {  // one lane: the vector body's MulAdd, so the same roundings
      auto s = hn::LoadU(d1, dst + i);
      s = hn::MulAdd(hn::Set(d1, x[r]), hn::LoadU(d1, r0 + i), s);
      s = hn::MulAdd(hn::Set(d1, x[r + 1]), hn::LoadU(d1, r1 + i), s);
      s = hn::MulAdd(hn::Set(d1, x[r + 2]), hn::LoadU(d1, r2 + i), s);
      s = hn::MulAdd(hn::Set(d1, x[r + 3]), hn::LoadU(d1, r3 + i), s);
      hn::StoreU(s, d1, dst + i);
    }
  }
  for (; r < count; ++r) {
    const float* row = rows + r * stride;
    const auto a = hn::Set(d, x[r]);
    int64_t i = 0;
    for (; i + lanes <= width; i += lanes) hn::StoreU(hn::MulAdd(a, hn::LoadU(d, row + i), hn::LoadU(d, dst + i)), d, dst + i);
    for (; i < width; ++i) hn::StoreU(hn::MulAdd(hn::Set(d1, x[r]), hn::LoadU(d1, row + i), hn::LoadU(d1, dst + i)), d1, dst + i);
  }
}

// Up to four rows' dot products with x, sharing x's loads. Each row's products are summed
// in 16 lanes (as many vectors as 16 lanes take) at three levels: flatly within a block of
// pairwise::kBlock products, the blocks flatly within a chunk of kChunkBlocks blocks (in
// registers: nothing is stored while the rows stream), and the chunks pairwise by a binary
// carry cascade of lane vectors; the 16 lanes by a tree at the end.
constexpr int64_t kChunkBlocks = 32;

template <int kRows>
void DotRowsGroup(float* out, const float* const* row, const float* x, int64_t k) {
  constexpr int kLanes = 16;
  const hn::CappedTag<float, kLanes> d;
  using V = decltype(hn::Zero(d));
  constexpr int lanes = static_cast<int>(hn::MaxLanes(d));  // x86 and NEON: fixed vector sizes
  constexpr int vectors = kLanes / lanes;  // per 16 lanes
  HWY_ALIGN float level[kRows][64][kLanes];
  HWY_ALIGN float p[kLanes];
  uint64_t chunks = 0;
  constexpr int64_t kChunk = kChunkBlocks * pairwise::kBlock;
  for (int64_t chunk = 0; chunk < k; chunk += kChunk, ++chunks) {
    const int64_t chunk_end = std::min(k, chunk + kChunk);
    // The 16 lanes' vectors side by side in one pass (on 8- and 4-lane vectors too): each
    // row is read once, front to back, a whole cache line per step. One pass per vector
    // would read each chunk (kChunk floats of kRows rows and x, 160 KB) again from L2.
    V sum[vectors][kRows];
    for (int v = 0; v < vectors; ++v)
      for (int r = 0; r < kRows; ++r) sum[v][r] = hn::Set(d, -0.0f);
    for (int64_t begin = chunk; begin < chunk_end; begin += pairwise::kBlock) {
      const int64_t count = std::min(pairwise::kBlock, chunk_end - begin);
      const int64_t whole = count / kLanes * kLanes;
      V acc[vectors][kRows];
      for (int v = 0; v < vectors; ++v)
        for (int r = 0; r < kRows; ++r) acc[v][r] = hn::Set(d, -0.0f);
      const auto block = [&](int64_t end) HWY_ATTR {
        for (int64_t i = 0; i < end; i += kLanes)
          for (int v = 0; v < vectors; ++v) {
            const auto xv = hn::LoadU(d, x + begin + i + v * lanes);
            for (int r = 0; r < kRows; ++r)
              acc[v][r] = hn::MulAdd(xv, hn::LoadU(d, row[r] + begin + i + v * lanes), acc[v][r]);
          }
      };
      if (whole == pairwise::kBlock) block(pairwise::kBlock);  // a constant trip count
      else block(whole);
      for (int v = 0; v < vectors; ++v) {
        if (whole < count) {  // the last block's tail, one product per lane
          for (int r = 0; r < kRows; ++r) {
            hn::Store(acc[v][r], d, p);
            for (int64_t i = whole + v * lanes; i < std::min(count, whole + (v + 1) * lanes); ++i)
              p[i - whole - v * lanes] += x[begin + i] * row[r][begin + i];
            acc[v][r] = hn::Load(d, p);
          }
        }
        for (int r = 0; r < kRows; ++r) sum[v][r] = hn::Add(sum[v][r], acc[v][r]);
      }
    }
    for (int v = 0; v < vectors; ++v)
      for (int r = 0; r < kRows; ++r) {
        int l = 0;
        for (; (chunks >> l) & 1; ++l) sum[v][r] = hn::Add(hn::Load(d, &level[r][l][v * lanes]), sum[v][r]);
        hn::Store(sum[v][r], d, &level[r][l][v * lanes]);
      }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < kLanes; ++j) p[j] = -0.0f;
    for (int l = 0; l < std::bit_width(chunks); ++l)
      if ((chunks >> l) & 1)
        for (int j = 0; j < kLanes; ++j) p[j] = level[r][l][j] + p[j];
    for (int h = kLanes / 2; h >= 1; h /= 2)
      for (int j = 0; j < h; ++j) p[j] += p[j + h];
    out[r] = 0.0f + p[0];
  }
}

void DotRowsF32(float* out, const float* rows, int64_t stride, int64_t count, const float* x, int64_t k) {
  if (hn::Lanes(hn::CappedTag<float, 16>()) != hn::MaxLanes(hn::CappedTag<float, 16>())) {
    // Scalable vectors (SVE, RVV): one row at a time in scalar code.
    for (int64_t r = 0; r < count; ++r) {
      pairwise::ScalarCascade<float> cascade;
      float p[16];
      for (int64_t begin = 0; begin < k; begin += pairwise::kBlock) {
        for (float& v : p) v = -0.0f;
        for (int64_t i = begin; i < std::min(k, begin + pairwise::kBlock); ++i) p[(i - begin) % 16] += x[i] * rows[r * stride + i];
        for (int h = 8; h >= 1; h /= 2)
          for (int j = 0; j < h; ++j) p[j] += p[j + h];
        cascade.Push(p[0]);
      }
      out[r] = 0.0f + cascade.Result();
    }
    return;
  }
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const float* group[4] = {rows + r * stride, rows + (r + 1) * stride, rows + (r + 2) * stride,
                             rows + (r + 3) * stride};
    DotRowsGroup<4>(out + r, group, x, k);
  }
  for (; r < count; ++r) {
    const float* one[1] = {rows + r * stride};
    DotRowsGroup<1>(out + r, one, x, k);
  }
}

}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace stablert::kernels::simd {
HWY_EXPORT(AxpyRowsF32);
HWY_EXPORT(DotRowsF32);

void AxpyRows(float* dst, const float* x, const float* rows, int64_t stride, int64_t count, int64_t width) {
  HWY_DYNAMIC_DISPATCH(AxpyRowsF32)(dst, x, rows, stride, count, width);
}
void DotRows(float* out, const float* rows, int64_t stride, int64_t count, const float* x, int64_t k) {
  HWY_DYNAMIC_DISPATCH(DotRowsF32)(out, rows, stride, count, x, k);
}
}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
