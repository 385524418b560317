// Reductions with a recognized body: "reduce_<body>.<T>" for body in add, mul, max, min,
// and, or. out = init op x[...] over the reduced dimensions. Complex add/mul use
// complex_ops.h.
//
// f32/f64/c64/c128 sums accumulate pairwise (kernels/accumulate.h): a contiguous reduced
// row is summed in 16 (f32) or 8 (f64) vectorized lanes, 8 elements per lane and leaf, the
// leaves' lane vectors combined pairwise (a binary carry cascade) and the lanes as a tree;
// rows (or, when the innermost dimension is kept, whole output vectors) reaching the same
// output are added 32 at a time, those leaves combined pairwise. The init value is folded
// in first. Each element goes through at most ~12 + log2 n roundings in a row, 32 + log2 n
// across rows, so the error of an n-element sum is about (c + log2 n) u sum |x| instead of
// n u sum |x|: 25,165,824 copies of 0.1f sum to 2516582.5 exactly rounded, at least as
// accurate as XLA's CPU backend. Products, max, min, and, or and integer sums (exact,
// wrapping) accumulate in row-major order of the reduced elements.
//
// f16/bf16 follow XLA's CPU backend exactly: every step rounds to the storage format, and
// a reduction with a reduced dimension longer than 32 runs as XLA's tree-reduction rewrite
// does: first a reduce_window over the reduced dimensions (window and stride min(size, 32),
// "SAME" padding with the init value, the lower half of the padding first), then the
// reduction of those partial results, repeated while a reduced dimension is longer than 32.
// (Long f16/bf16 sums therefore keep their precision: 300 bf16 ones sum to 300, not 256.)
// Float max/min follow the elementwise maximum/minimum semantics (NaN propagates, -0 < +0).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kernels/accumulate.h"
#include "kernels/complex_ops.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/reduce_params.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/reduce_simd.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

using AddBody = ops::AddOp;
using MulBody = ops::MultiplyOp;
using MaxBody = ops::MaxOp;
using MinBody = ops::MinOp;
using AndBody = ops::AndOp;
using OrBody = ops::OrOp;

// Sums of f32/f64/c64/c128: accumulated pairwise.
template <typename Body, typename T>
inline constexpr bool kPairwiseSum = !kIsHalf<T> && ((std::is_same_v<Body, AddBody> && std::is_floating_point_v<T>) ||
                                                     std::is_same_v<Body, cx::AddOp>);

// f32/f64 sum, max and min: vector loops (simd/reduce_simd.h), split across threads when
// large (ReduceLayout).
template <typename Body, typename T>
inline constexpr bool kVectorReduce =
    (std::is_same_v<T, float> || std::is_same_v<T, double>) &&
    (std::is_same_v<Body, AddBody> || std::is_same_v<Body, MaxBody> || std::is_same_v<Body, MinBody>);

// Integer add, max and min: vector loops too (exact, so in any order).
template <typename Body, typename T>
inline constexpr bool kIntVector =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 8 &&
    (std::is_same_v<Body, AddBody> || std::is_same_v<Body, MaxBody> || std::is_same_v<Body, MinBody>);

template <typename Body>
inline constexpr simd::ReduceOp kSimdOp = std::is_same_v<Body, MaxBody>   ? simd::ReduceOp::kMax
                                          : std::is_same_v<Body, MinBody> ? simd::ReduceOp::kMin
                                                                          : simd::ReduceOp::kAdd;

// Reduces a contiguous row into `acc`.
template <typename Body, typename C, typename T>
inline C ReduceRow(C acc, const T* row, int64_t n) {
  if constexpr (kVectorReduce<Body, T>) {
    if constexpr (std::is_same_v<Body, AddBody>) return acc + simd::PairwiseSum(row, n);
    else return simd::ReduceRow(kSimdOp<Body>, acc, row, n);
  } else if constexpr (kIntVector<Body, T>) {
    return simd::ReduceRow(kSimdOp<Body>, acc, row, n);
  } else if constexpr (kPairwiseSum<Body, T>) {
    return Body::Apply(acc, pairwise::Sum(row, n));
  } else if constexpr (kIsHalf<T>) {
    for (int64_t i = 0; i < n; ++i) acc = Load(StoreAs<T>(Body::Apply(acc, Load(row[i]))));
    return acc;
  } else {
    for (int64_t i = 0; i < n; ++i) acc = Body::Apply(acc, static_cast<C>(Load(row[i])));
    return acc;
  }
}

// dst[i] = Body(dst[i], rows[r * stride + i]) for r < count, per element in row order
// (for T whose Compute type is T).
template <typename Body, typename T>
inline void AccumulateRows(T* dst, const T* rows, int64_t stride, int64_t count, int64_t width) {
  if constexpr (kVectorReduce<Body, T> && std::is_same_v<Body, AddBody>) {
    simd::AddRows(dst, rows, stride, count, width);
  } else if constexpr (kVectorReduce<Body, T> || kIntVector<Body, T>) {
    simd::ReduceRows(kSimdOp<Body>, dst, rows, stride, count, width);
  } else {
    for (int64_t r = 0; r < count; ++r) {
      const T* row = rows + r * stride;
      for (int64_t i = 0; i < width; ++i) dst[i] = Body::Apply(dst[i], row[i]);
    }
  }
}

// One accumulation step, rounded to the storage format for f16/bf16.
template <typename Body, typename T>
inline Compute<T> Step(Compute<T> acc, T x) {
  if constexpr (kIsHalf<T>) return Load(StoreAs<T>(Body::Apply(acc, Load(x))));
  else return Body::Apply(acc, x);
}

constexpr int64_t kTreeWindow = 32;

// XLA's first tree-reduction stage for f16/bf16 (see the file comment): the partial results
// of windows over the reduced dimensions; `dims` becomes the partial results' shape.
template <typename Body, typename T>
std::vector<T> TreeStage(const T* src, std::vector<int64_t>& dims, const std::vector<int64_t>& reduced, T init) {
  const size_t rank = dims.size();
  std::vector<int64_t> window(rank, 1), low(rank, 0), out_dims = dims;
  for (int64_t d : reduced) {
    const auto i = static_cast<size_t>(d);
    window[i] = std::min(dims[i], kTreeWindow);
    out_dims[i] = (dims[i] + window[i] - 1) / window[i];
    low[i] = std::max<int64_t>(out_dims[i] * window[i] - dims[i], 0) / 2;
  }
  const DimVector in_strides = DenseStrides({dims.data(), dims.size()});
  int64_t count = 1;
  for (int64_t d : out_dims) count *= d;
  std::vector<T> partial(static_cast<size_t>(count));
  std::vector<int64_t> o(rank, 0), k(rank, 0);
  for (int64_t p = 0; p < count; ++p) {
    Compute<T> acc = Load(init);
    std::fill(k.begin(), k.end(), 0);
    while (true) {
      int64_t offset = 0;
      bool inside = true;
      for (size_t i = 0; i < rank; ++i) {
        const int64_t x = o[i] * window[i] - low[i] + k[i];
        if (x < 0 || x >= dims[i]) inside = false;
        offset += x * in_strides[i];
      }
      acc = Step<Body>(acc, inside ? src[offset] : init);
      size_t i = rank;
      while (i > 0 && ++k[i - 1] == window[i - 1]) k[--i] = 0;
      if (i == 0) break;
    }
    partial[static_cast<size_t>(p)] = StoreAs<T>(acc);
    size_t i = rank;
    while (i > 0 && ++o[i - 1] == out_dims[i - 1]) o[--i] = 0;
  }
  dims = out_dims;
  return partial;
}

// Groups `dims` into runs of dimensions that are all reduced (flag 1) or all kept (flag 0),
// dropping dimensions of size 1; returns the number of runs (size and flag: rank entries).
inline size_t CollapseRuns(std::span<const int64_t> dims, const std::vector<int64_t>& reduced, DimVector& size,
                           DimVector& flag) {
  const size_t rank = dims.size();
  DimVector is_reduced(rank, 0);
  for (int64_t d : reduced) is_reduced[static_cast<size_t>(d)] = 1;
  size_t n = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] == 1) continue;
    if (n > 0 && flag[n - 1] == is_reduced[i]) {
      size[n - 1] *= dims[i];
      continue;
    }
    size[n] = dims[i];
    flag[n] = is_reduced[i];
    ++n;
  }
  return n;
}

// Reduces `rows` rows of `width` elements (row r at src + r * stride) into acc[0..width),
// which holds the init value: sums in leaves of kLeafRows rows combined pairwise, the other
// bodies row after row, kLeafRows rows per pass over acc (which stays in cache).
template <typename Body, typename T>
void ReduceColumns(T* acc, const T* src, int64_t stride, int64_t rows, int64_t width) {
  if constexpr (kPairwiseSum<Body, T>) {
    const int64_t leaves = (rows + pairwise::kLeafRows - 1) / pairwise::kLeafRows;
    pairwise::VectorCascade<T> cascade(acc, width, 1, leaves * pairwise::kLeafRows);
    for (int64_t first = 0; first < rows; first += pairwise::kLeafRows) {
      T* dst = cascade.NextLeaf(0);
      AccumulateRows<Body>(dst, src + first * stride, stride, std::min(rows - first, pairwise::kLeafRows), width);
    }
    cascade.Finish();
  } else {
    for (int64_t first = 0; first < rows; first += pairwise::kLeafRows)
      AccumulateRows<Body>(acc, src + first * stride, stride, std::min(rows - first, pairwise::kLeafRows), width);
  }
}

// The layouts with their own loops, for element types computed in themselves (not f16, bf16
// or the minifloats), after CollapseRuns:
//   - [K, R] (row reductions): each output is its row reduced (ReduceRow);
//   - [K, R, I] (a middle dimension reduced; [R, I], column reductions, is K = 1): each
//     output column is ReduceColumns over the R rows of its slab;
//   - [R] (a reduction to one element): ReduceRow, or, split, see below.
// These do per output exactly what the generic loops of ReduceKernel do, so the results
// are the same bits. Split across the calls of a large step (`split`): rows by share of the
// K rows; slabs and columns by share of the K x ceil(I / chunk) chunks of columns of 512
// bytes (each output still sees the same operations, so results do not depend on the thread
// count), or, with fewer chunks than calls (narrow columns: [256K, 16] would keep one core
// busy and the other idle), the R rows by share for the bodies kSplitAll names
// (ReduceColumnsSplit); [R] only for those bodies: each call reduces its share of the R
// elements to a partial and the last call to finish combines the partials in call order
// (init first, then f32/f64 sums pairwise, the exact integer bodies and max/min left to
// right). Max/min and the integer bodies are exact; an f32/f64 sum split by rows or to one
// element is the pairwise sum of the calls' pairwise partial sums, so it depends on the
// thread count (within the same error bound) but not on timing: the same machine and thread
// pool give the same bits on every run. Returns false for other layouts.
constexpr int64_t kMinElementsToSplit = int64_t{1} << 18;

template <typename T>
inline constexpr bool kFastLayouts = std::is_same_v<Compute<T>, T>;

template <typename Body, typename T>
inline constexpr bool kSplitAll = kVectorReduce<Body, T> || (std::is_integral_v<T> && sizeof(T) <= 8);

// Partials of the calls of one split step, keyed by its output buffer (distinct for calls
// running concurrently).
struct PartialTable {
  std::mutex mu;
  struct Pending {
    std::vector<std::byte> partials;  // `count` values of T per call, call after call
    int arrived = 0;
  };
  std::map<const void*, Pending> pending;
};

inline PartialTable& Partials() {
  static PartialTable* table = new PartialTable;
  return *table;
}

// Deposits this call's `count` partial values under `key`. The last call of the step to
// arrive gets every call's in `all` (call t's at [t * count, (t + 1) * count)) and true; the
// others false.
template <typename T>
bool CollectPartials(const KernelContext& context, const void* key, const T* mine, int64_t count,
                     std::vector<T>& all) {
  const size_t bytes = static_cast<size_t>(count) * sizeof(T);
  PartialTable& table = Partials();
  std::vector<std::byte> partials;
  {
    std::lock_guard<std::mutex> lock(table.mu);
    PartialTable::Pending& pending = table.pending[key];
    pending.partials.resize(static_cast<size_t>(context.thread_count) * bytes);
    if (bytes > 0) std::memcpy(&pending.partials[static_cast<size_t>(context.thread_index) * bytes], mine, bytes);
    if (++pending.arrived < context.thread_count) return false;
    partials = std::move(pending.partials);
    table.pending.erase(key);
  }
  all.resize(static_cast<size_t>(context.thread_count * count));
  if (!partials.empty()) std::memcpy(all.data(), partials.data(), partials.size());
  return true;
}

// A value x such that Body(x, first) == first as the fold sees it: the identity of the
// integer bodies, `first` itself for max/min (op(first, first) is first, flushed). Starting
// a partial there keeps the vector loops on the share's own (aligned) start.
template <typename Body, typename T>
T Seed(T first) {
  if constexpr (std::is_same_v<Body, MaxBody>) {
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
    else return first;
  } else if constexpr (std::is_same_v<Body, MinBody>) {
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
    else return first;
  } else if constexpr (std::is_same_v<Body, MulBody>) {
    return T(1);
  } else if constexpr (std::is_same_v<Body, AndBody>) {
    return static_cast<T>(~T(0));
  } else {
    static_assert(std::is_integral_v<T>);
    return T(0);  // add (integer), or
  }
}

// Folds the calls' partials of one output into init: f32/f64 sums pairwise, the other bodies
// in call order (calls with an empty share skipped).
template <typename Body, typename T>
T CombinePartials(T init, const std::vector<T>& all, int64_t count, int64_t index, const std::vector<bool>& empty) {
  const auto calls = static_cast<int64_t>(empty.size());
  if constexpr (kVectorReduce<Body, T> && std::is_same_v<Body, AddBody>) {
    pairwise::ScalarCascade<T> cascade;
    for (int64_t t = 0; t < calls; ++t) cascade.Push(all[static_cast<size_t>(t * count + index)]);
    return init + cascade.Result();
  } else {
    T result = init;
    for (int64_t t = 0; t < calls; ++t)
      if (!empty[static_cast<size_t>(t)]) result = Body::Apply(result, all[static_cast<size_t>(t * count + index)]);
    return result;
  }
}

// Which calls of a split over `length` items get none.
inline std::vector<bool> EmptyShares(const KernelContext& context, int64_t length) {
  std::vector<bool> empty(static_cast<size_t>(context.thread_count));
  for (int t = 0; t < context.thread_count; ++t) {
    const auto [b, e] = ShareOf(KernelContext{t, context.thread_count}, length);
    empty[static_cast<size_t>(t)] = b == e;
  }
  return empty;
}

template <typename Body, typename T>
bool ReduceAllSplit(const KernelContext& context, const T* src, int64_t length, T* out, T init) {
  const auto [begin, end] = ShareOf(context, length);
  T partial{};
  if constexpr (kVectorReduce<Body, T> && std::is_same_v<Body, AddBody>) partial = simd::PairwiseSum(src + begin, end - begin);
  else if (begin < end) partial = ReduceRow<Body>(Seed<Body>(src[begin]), src + begin, end - begin);
  std::vector<T> partials;
  if (!CollectPartials(context, out, &partial, 1, partials)) return true;
  out[0] = CombinePartials<Body>(init, partials, 1, 0, EmptyShares(context, length));
  return true;
}

// Column reductions ([K, R, I] with few column chunks) split by rows: each call reduces its
// share of the R rows of every slab into partial columns (sums from -0, the identity of
// addition; the other bodies from a seed), and the last call to finish folds them into init
// as ReduceAllSplit does, so the bits depend on the thread count, not on timing.
template <typename Body, typename T>
bool ReduceColumnsSplit(const KernelContext& context, const T* src, int64_t slabs, int64_t rows, int64_t width,
                        T* out, T init) {
  const auto [begin, end] = ShareOf(context, rows);
  std::vector<T> partial(static_cast<size_t>(slabs * width));
  for (int64_t slab = 0; slab < slabs && begin < end; ++slab) {
    T* acc = partial.data() + slab * width;
    const T* first = src + (slab * rows + begin) * width;
    if constexpr (kVectorReduce<Body, T> && std::is_same_v<Body, AddBody>) {
      std::fill(acc, acc + width, pairwise::NegativeZero<T>());
    } else {
      for (int64_t c = 0; c < width; ++c) acc[c] = Seed<Body>(first[c]);
    }
    ReduceColumns<Body>(acc, first, width, end - begin, width);
  }
  std::vector<T> partials;
  if (!CollectPartials(context, out, partial.data(), slabs * width, partials)) return true;
  const std::vector<bool> empty = EmptyShares(context, rows);
  for (int64_t i = 0; i < slabs * width; ++i) out[i] = CombinePartials<Body>(init, partials, slabs * width, i, empty);
  return true;
}

template <typename Body, typename T>
bool ReduceLayout(const KernelContext& context, bool split, const BufferView& in, const std::vector<int64_t>& reduced,
                  T* out, T init) {
  const size_t rank = in.dims.size();
  DimVector size(rank), flag(rank);
  const size_t n = CollapseRuns(in.dims, reduced, size, flag);
  const T* src = in.as<const T>();
  const KernelContext share_context = split ? context : KernelContext{};
  if (n == 1 && flag[0] == 1) {
    if constexpr (kSplitAll<Body, T>) {
      if (split) return ReduceAllSplit<Body>(context, src, size[0], out, init);
    }
    if (context.thread_index == 0) out[0] = ReduceRow<Body>(init, src, size[0]);
    return true;
  }
  if (n == 2 && flag[0] == 0) {
    const int64_t length = size[1];
    const auto [begin, end] = ShareOf(share_context, size[0]);
    if constexpr (kVectorReduce<Body, T> && std::is_same_v<Body, AddBody>) {
      // The row sums written to out first, then init added: the same bits as ReduceRow.
      const void* src_end = src + size[0] * length;
      if (static_cast<const void*>(out + end) <= src || src_end <= out) {
        simd::PairwiseSumRows(src + begin * length, end - begin, length, out + begin);
        for (int64_t r = begin; r < end; ++r) out[r] = init + out[r];
        return true;
      }
    }
    for (int64_t r = begin; r < end; ++r) out[r] = ReduceRow<Body>(init, src + r * length, length);
    return true;
  }
  int64_t slabs, rows, width;
  if (n == 2 && flag[0] == 1) {
    slabs = 1, rows = size[0], width = size[1];
  } else if (n == 3 && flag[0] == 0 && flag[1] == 1 && flag[2] == 0) {
    slabs = size[0], rows = size[1], width = size[2];
  } else {
    return false;
  }
  // Chunks of whole vector strips (simd/reduce_simd.cc), at least 512 bytes.
  const int64_t chunk = std::max<int64_t>(16, 512 / static_cast<int64_t>(sizeof(T)));
  const int64_t chunks = (width + chunk - 1) / chunk;
  if constexpr (kSplitAll<Body, T>) {
    if (split && slabs * chunks < context.thread_count && rows >= context.thread_count)
      return ReduceColumnsSplit<Body>(context, src, slabs, rows, width, out, init);
  }
  const auto [unit_begin, unit_end] = ShareOf(share_context, slabs * chunks);
  for (int64_t unit = unit_begin; unit < unit_end;) {
    const int64_t slab = unit / chunks, first = unit % chunks;
    const int64_t last = std::min(chunks, first + (unit_end - unit));
    const int64_t begin = first * chunk, end = std::min(width, last * chunk);
    T* acc = out + slab * width + begin;
    std::fill(acc, acc + (end - begin), init);
    ReduceColumns<Body>(acc, src + slab * rows * width + begin, width, rows, end - begin);
    unit += last - first;
  }
  return true;
}

template <typename Body, DType D>
Status ReduceKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  using C = Compute<T>;
  BufferView in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const C init = Load(args.inputs[1].as<const T>()[0]);
  const std::vector<int64_t>& reduced = args.Params<ReduceParams>().dimensions;
  if constexpr (kFastLayouts<T>) {
    const bool split = context.thread_count > 1 && in.num_elements >= kMinElementsToSplit;
    if (!split && context.thread_index != 0) return OkStatus();
    if (in.num_elements > 0 && ReduceLayout<Body>(context, split, in, reduced, out.as<T>(), init)) return OkStatus();
  }
  if (context.thread_index != 0) return OkStatus();

  std::vector<T> partial;
  std::vector<int64_t> partial_dims;
  if constexpr (kIsHalf<T>) {
    // XLA repeats the rewrite until no reduced dimension is longer than the window.
    auto needs_tree = [&] {
      for (int64_t d : reduced)
        if (in.dims[static_cast<size_t>(d)] > kTreeWindow) return in.num_elements > 0;
      return false;
    };
    while (needs_tree()) {
      partial_dims = std::vector<int64_t>(in.dims.begin(), in.dims.end());  // in.dims may view partial_dims
      partial = TreeStage<Body>(in.as<const T>(), partial_dims, reduced, args.inputs[1].as<const T>()[0]);
      in.data = partial.data();
      in.dims = {partial_dims.data(), partial_dims.size()};
      in.num_elements = static_cast<int64_t>(partial.size());
    }
  }

  // Accumulate in the output directly, or in a float scratch array for f16/bf16.
  std::vector<C> scratch;
  C* acc;
  if constexpr (kIsHalf<T>) {
    scratch.resize(static_cast<size_t>(out.num_elements));
    acc = scratch.data();
  } else {
    acc = out.as<C>();
  }
  for (int64_t i = 0; i < out.num_elements; ++i) acc[i] = init;

  if (in.num_elements > 0) {
    // Group the input dims into runs that are all reduced or all kept; the output stride
    // of a reduced run is 0.
    const size_t rank = in.dims.size();
    DimVector size(rank), out_stride(rank), flag(rank);
    const size_t n = CollapseRuns(in.dims, reduced, size, flag);
    int64_t stride = 1;
    for (size_t i = n; i-- > 0;) {
      out_stride[i] = flag[i] ? 0 : stride;
      if (!flag[i]) stride *= size[i];
    }
    const T* src = in.as<const T>();
    if (n == 0) {
      acc[0] = Step<Body>(acc[0], src[0]);
    } else {
      const int64_t inner = size[n - 1];
      const bool inner_reduced = flag[n - 1] != 0;
      // Calls visit(out_offset, row) for every contiguous input row of `inner` elements, in
      // memory order.
      auto for_each_row = [&](auto visit) {
        DimVector index(n, 0);
        int64_t out_offset = 0;
        const T* row = src;
        while (true) {
          visit(out_offset, row);
          row += inner;
          size_t dim = n - 1;
          while (true) {
            if (dim == 0) return;
            --dim;
            if (++index[dim] < size[dim]) {
              out_offset += out_stride[dim];
              break;
            }
            out_offset -= out_stride[dim] * (size[dim] - 1);
            index[dim] = 0;
          }
        }
      };
      if constexpr (kPairwiseSum<Body, T>) {
        if (inner_reduced) {
          // Each output receives `per_output` row sums, combined pairwise.
          int64_t per_output = 1;
          for (size_t i = 0; i + 1 < n; ++i)
            if (flag[i]) per_output *= size[i];
          pairwise::VectorCascade<C> cascade(acc, 1, out.num_elements, per_output);
          for_each_row([&](int64_t out_offset, const T* row) {
            C* dst = cascade.Next(out_offset);
            dst[0] = ReduceRow<Body>(dst[0], row, inner);
          });
          cascade.Finish();
        } else {
          // The rows of the (reduced) dimension before the kept inner one are consecutive
          // and reach the same output vector: add them a leaf at a time, leaves combined
          // pairwise.
          const int64_t group = n >= 2 ? size[n - 2] : 1;
          const int64_t leaves = (group + pairwise::kLeafRows - 1) / pairwise::kLeafRows;
          int64_t per_output = leaves * pairwise::kLeafRows;
          for (size_t i = 0; i + 2 < n; ++i)
            if (flag[i]) per_output *= size[i];
          pairwise::VectorCascade<C> cascade(acc, inner, out.num_elements / inner, per_output);
          const size_t outer = n >= 2 ? n - 2 : 0;
          DimVector index(n, 0);
          int64_t out_offset = 0;
          const T* rows = src;
          while (true) {
            for (int64_t first = 0; first < group; first += pairwise::kLeafRows) {
              C* dst = cascade.NextLeaf(out_offset / inner);
              const int64_t last = std::min(group, first + pairwise::kLeafRows);
              AccumulateRows<Body>(dst, rows + first * inner, inner, last - first, inner);
            }
            rows += group * inner;
            size_t dim = outer;
            bool done = true;
            while (dim > 0) {
              --dim;
              if (++index[dim] < size[dim]) {
                out_offset += out_stride[dim];
                done = false;
                break;
              }
              out_offset -= out_stride[dim] * (size[dim] - 1);
              index[dim] = 0;
            }
            if (done) break;
          }
          cascade.Finish();
        }
      } else if (inner_reduced) {
        for_each_row([&](int64_t out_offset, const T* row) {
          acc[out_offset] = ReduceRow<Body>(acc[out_offset], row, inner);
        });
      } else {
        for_each_row([&](int64_t out_offset, const T* row) {
          C* dst = acc + out_offset;
          if constexpr (kFastLayouts<T>) AccumulateRows<Body>(dst, row, inner, 1, inner);
          else for (int64_t i = 0; i < inner; ++i) dst[i] = Step<Body>(dst[i], row[i]);
        });
      }
    }
  }
  if constexpr (kIsHalf<T>) {
    T* dst = out.as<T>();
    for (int64_t i = 0; i < out.num_elements; ++i) dst[i] = StoreAs<T>(acc[i]);
  }
  return OkStatus();
}

template <typename Body, DType... Ds>
Status Register(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() { return registry.RegisterSplittable<ReduceParams>(KernelKey(name, {D}), &ReduceKernel<Body, D>); });
}

using Pred = DTypeList<DType::kPred>;
using IntAndFloatDTypes =
    DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
              DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;
using IntAndPredDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8,
                                   DType::kU16, DType::kU32, DType::kU64>;

}  // namespace

Status RegisterReduceKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(Register<AddBody>(r, "reduce_add", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrBody>(r, "reduce_add", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<cx::AddOp>(r, "reduce_add", ComplexDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<cx::MultiplyOp>(r, "reduce_mul", ComplexDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MulBody>(r, "reduce_mul", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndBody>(r, "reduce_mul", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<MaxBody>(r, "reduce_max", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MinBody>(r, "reduce_min", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndBody>(r, "reduce_and", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrBody>(r, "reduce_or", IntAndPredDTypes{}));
  return OkStatus();
}

}  // namespace stablert::kernels
