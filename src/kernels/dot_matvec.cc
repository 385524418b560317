#include "kernels/dot_matvec.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/accumulate.h"
#include "kernels/simd/dot_simd.h"

namespace stablert::kernels::matvec {
namespace {

// Rows of the matrix accumulated flatly into the output before a pairwise carry (as the
// loops in dot.cc accumulate rows).
constexpr int64_t kRowLeaf = 128;

struct MatVec {
  enum Form { kAxpy, kDots } form = kAxpy;
  bool matrix_is_lhs = false;  // else rhs
  int64_t batch = 0, k = 0, width = 0;  // width: the output's length per batch entry
  int parts = 1;
  bool split_k = false;  // kAxpy: parts are blocks of k of one product (else whole batches)
};

// out[0..width) = sum over k in [k_begin, k_end) of x[k] * matrix[k, :], pairwise over leaves.
void AxpyBlock(float* out, const float* x, const float* matrix, int64_t width, int64_t k_begin, int64_t k_end) {
  std::fill(out, out + width, 0.0f);
  pairwise::VectorCascade<float, kRowLeaf> cascade(out, width, 1, k_end - k_begin);
  for (int64_t first = k_begin; first < k_end; first += kRowLeaf) {
    float* dst = cascade.NextLeaf(0);
    simd::AxpyRows(dst, x + first, matrix + first * width, width, std::min(kRowLeaf, k_end - first), width);
  }
  cascade.Finish();
}

}  // namespace

bool IsMatVec(const onednn::MatmulShape& shape) {
  if (shape.dtype != DType::kF32 || shape.batch <= 0 || shape.m <= 0 || shape.n <= 0 || shape.k <= 0) return false;
  return (shape.m == 1) != (shape.n == 1);
}

StatusOr<KernelState> PrepareMatVec(const onednn::MatmulShape& shape, int threads) {
  if (!IsMatVec(shape)) return Unimplemented("matrix-vector path: not an f32 matrix-vector product");
  if (threads <= 0) threads = CoreBudget();
  auto s = std::make_shared<MatVec>();
  s->batch = shape.batch;
  s->k = shape.k;
  if (shape.m == 1) {  // x[1,K] . rhs
    s->matrix_is_lhs = false;
    s->width = shape.n;
    s->form = shape.rhs_bnk ? MatVec::kDots : MatVec::kAxpy;
  } else {  // lhs . x[K,1]
    s->matrix_is_lhs = true;
    s->width = shape.m;
    s->form = shape.lhs_bkm ? MatVec::kAxpy : MatVec::kDots;
  }
  const double per_product = static_cast<double>(s->k) * static_cast<double>(s->width);
  const double macs = per_product * static_cast<double>(s->batch);
  if (threads > 1 && macs >= kMinSplitMacs) {
    if (s->form == MatVec::kDots) {
      s->parts = static_cast<int>(std::min<int64_t>(threads, s->batch * s->width));
    } else if (per_product >= kMinSplitMacs || s->batch < threads) {
      const int64_t leaves = (s->k + kRowLeaf - 1) / kRowLeaf;
      s->parts = static_cast<int>(std::min<int64_t>(threads, leaves));
      s->split_k = true;
    } else {
      s->parts = static_cast<int>(std::min<int64_t>(threads, s->batch));
    }
  }
  return KernelState(std::move(s));
}

Status RunMatVec(const void* state, const KernelArgs& args) {
  const auto& s = *static_cast<const MatVec*>(state);
  const float* matrix = args.inputs[s.matrix_is_lhs ? 0 : 1].as<const float>();
  const float* x = args.inputs[s.matrix_is_lhs ? 1 : 0].as<const float>();  // contiguous in k in either layout
  float* out = args.outputs[0].as<float>();
  const int64_t matrix_size = s.k * s.width;
  ThreadPool& pool = ThreadPool::Shared();
  if (s.form == MatVec::kDots) {
    // Output rows (b, r) flattened, one contiguous range per part.
    const int64_t rows = s.batch * s.width;
    auto run = [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t b = begin / s.width, r = begin % s.width;
        const int64_t count = std::min(end - begin, s.width - r);
        simd::DotRows(out + begin, matrix + b * matrix_size + r * s.k, s.k, count, x + b * s.k, s.k);
        begin += count;
      }
    };
    if (s.parts <= 1) run(0, rows);
    else pool.ParallelFor(s.parts, [&](int p) { run(rows * p / s.parts, rows * (p + 1) / s.parts); });
    return OkStatus();
  }
  if (!s.split_k) {
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
        AxpyBlock(out + b * s.width, x + b * s.k, matrix + b * matrix_size, s.width, 0, s.k);
    };
    if (s.parts <= 1) run(0, s.batch);
    else pool.ParallelFor(s.parts, [&](int p) { run(s.batch * p / s.parts, s.batch * (p + 1) / s.parts); });
    return OkStatus();
  }
  // Blocks of whole leaves, so each block's pairwise tree is the one-thread tree's subtree;
  // the blocks' rows are added in order.
  const int64_t leaves = (s.k + kRowLeaf - 1) / kRowLeaf;
  std::vector<float> partial(static_cast<size_t>(s.parts - 1) * static_cast<size_t>(s.width));
  for (int64_t b = 0; b < s.batch; ++b) {
    float* o = out + b * s.width;
    pool.ParallelFor(s.parts, [&](int p) {
      const int64_t k_begin = leaves * p / s.parts * kRowLeaf;
      const int64_t k_end = std::min(s.k, leaves * (p + 1) / s.parts * kRowLeaf);
      float* row = p == 0 ? o : partial.data() + static_cast<size_t>(p - 1) * static_cast<size_t>(s.width);
      AxpyBlock(row, x + b * s.k, matrix + b * matrix_size, s.width, k_begin, k_end);
    });
    for (int p = 1; p < s.parts; ++p) {
      const float* row = partial.data() + static_cast<size_t>(p - 1) * static_cast<size_t>(s.width);
      for (int64_t i = 0; i < s.width; ++i) o[i] += row[i];
    }
  }
  return OkStatus();
}

int PreparedParts(const void* state) { return static_cast<const MatVec*>(state)->parts; }

}  // namespace stablert::kernels::matvec
