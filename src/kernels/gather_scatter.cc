// gather and scatter kernels (StableHLO semantics, XLA's out-of-bounds behaviour).
//
//   "gather.<T>"          in: operand, start_indices (any integer type)   out: result
//     params: GatherParams (gather_scatter_params.h)
//     Start indices are clamped so each slice lies inside the operand.
//     The index transform (gather_scatter_index.h): in its fill mode a third input, the
//     fill value (a scalar of T).
//   "scatter_add_gathered.<T>"  T in f32, f64; params: GatheredScatterParams
//     in: operand [S, W], scatter_indices, source [R, W], source row indices   out: result
//     A row gather folded into the row scatter-add reading it (segment_sum(table[ids])):
//     each update row is read from the source where the gather would have copied it from,
//     so the [N, W] gathered array is never written. Split across threads by column ranges
//     of whole cache lines; every call reads every index and applies its updates in order.
//   "scatter_<body>.<T>"  body in assign, add, mul, max, min, and, or
//   "scatter_program"     (ScatterParams::body: the body program, (current, update) -> new)
//     in: operand, scatter_indices (any integer type), updates   out: result
//     params: ScatterParams (gather_scatter_params.h)
//     The result starts as a copy of the operand (none when the result is the operand's
//     storage: scatters run in place, InPlace::kFirstInput); updates are applied in row-major order
//     of the update batch positions; a window that does not fit entirely inside the
//     operand is skipped, as XLA does.
//     The index transform (gather_scatter_index.h): wrap negative indices, clamp (JAX's
//     mode="clip").
//
// Row forms. The prepare functions recognize the forms JAX emits most and hand the kernel a
// RowForm; every other form walks the generic index arithmetic. A row form indexes one
// contiguous run of operand dims [axis, axis + k) (slice or window size 1 there), takes every
// other dim whole, has no batching dims, keeps the index vector last, and lays its result
// (gather) or updates (scatter) out as [outer][positions][inner]. Then each index vector
// names one row of `inner` contiguous elements in each of `outer` blocks: x[idx],
// jnp.take(x, idx, axis=a), table[ids], x.at[idx].set/add/mul/min/max, segment_sum/max.
// A gather copies one clamped row per index (split across threads by index ranges); single
// 4-byte elements and rows of 32 or 64 bytes named by int32 indices use vector gathers and
// moves (simd/gather_simd.h). A scatter applies one row update per in-bounds index, in index
// order, so that duplicates combine exactly as in the generic walk and as XLA's sequential
// scatter; it is split across threads by output blocks, column ranges or (rows of 256+
// bytes) destination row ranges, which no two threads share, and otherwise runs on one
// thread: single elements in one fused loop, f32/f64 add, mul, max and min rows of 4+
// elements with vector code (simd/scatter_simd.h) with the scalar semantics.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/complex_ops.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/gather_scatter_index.h"
#include "kernels/scalar_program.h"
#include "kernels/simd/gather_simd.h"
#include "kernels/simd/scatter_simd.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {


bool Contains(const std::vector<int64_t>& list, int64_t value) { return std::find(list.begin(), list.end(), value) != list.end(); }

template <typename I>
inline int64_t IndexValue(I value) {
  if constexpr (std::is_same_v<I, uint64_t>) return static_cast<int64_t>(std::min<uint64_t>(value, INT64_MAX));
  else return static_cast<int64_t>(value);
}

// The value of the index element at `p` (any integer dtype; u64 beyond INT64_MAX reads as
// INT64_MAX, out of bounds everywhere).
inline int64_t LoadIndex(const uint8_t* p, DType dtype) {
  auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return IndexValue(value);
  };
  switch (dtype) {
    case DType::kS8: return load(int8_t{});
    case DType::kS16: return load(int16_t{});
    case DType::kS32: return load(int32_t{});
    case DType::kS64: return load(int64_t{});
    case DType::kU8: return load(uint8_t{});
    case DType::kU16: return load(uint16_t{});
    case DType::kU32: return load(uint32_t{});
    case DType::kU64: return load(uint64_t{});
    default: return 0;
  }
}

// Reads start index vectors out of an index array of any integer type.
class IndexReader {
 public:
  IndexReader(const BufferView& indices, int64_t index_vector_dim)
      : data_(static_cast<const uint8_t*>(indices.data)), dtype_(indices.dtype), size_(DTypeByteSize(indices.dtype)) {
    strides_ = DenseStrides(indices.dims);
    const size_t rank = indices.dims.size();
    vector_stride_ = static_cast<size_t>(index_vector_dim) < rank ? strides_[static_cast<size_t>(index_vector_dim)] : 0;
    for (size_t d = 0; d < rank; ++d)
      if (static_cast<int64_t>(d) != index_vector_dim) batch_strides_.push_back(strides_[d]);
  }
  // Element offset of batch position `batch` (indices over the non-vector dims).
  int64_t BatchOffset(const DimVector& batch) const {
    int64_t offset = 0;
    for (size_t i = 0; i < batch_strides_.size(); ++i) offset += batch[i] * batch_strides_[i];
    return offset;
  }
  int64_t Read(int64_t batch_offset, int64_t k) const {
    return LoadIndex(data_ + (batch_offset + k * vector_stride_) * size_, dtype_);
  }

 private:
  const uint8_t* data_;
  DType dtype_;
  int size_;
  DimVector strides_{0};
  int64_t vector_stride_ = 0;
  std::vector<int64_t> batch_strides_;
};

// Advances a row-major odometer over `dims`; false when it wraps around.
bool Next(DimVector& index, std::span<const int64_t> dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

struct AssignBody {
  template <typename C> static C Apply(C, C update) { return update; }
};

// ---------------------------------------------------------------------------------------
// Row forms (see the top of the file).

constexpr int kMaxRowIndex = 8;

struct RowForm {
  int64_t outer = 1;      // product of the operand dims before the indexed run
  int64_t rows = 1;       // product of the indexed dims
  int64_t inner = 1;      // product of the operand dims after the indexed run
  int64_t positions = 1;  // index vectors (product of the indices' batch dims)
  int k = 0;              // index vector length
  int64_t sizes[kMaxRowIndex] = {};    // per component: size of its operand dim
  int64_t strides[kMaxRowIndex] = {};  // per component: stride in rows
};

// `window_positions`: dims of `target` (gather result, scatter updates) that are slice
// windows, matching in order the operand dims not in `dropped` (collapsed or inserted).
std::optional<RowForm> MatchRowForm(std::span<const int64_t> operand_dims, std::span<const int64_t> indices_dims,
                                    int64_t index_vector_dim, const std::vector<int64_t>& index_map, const std::vector<int64_t>& dropped,
                                    bool batching, const std::vector<int64_t>& window_positions,
                                    std::span<const int64_t> target_dims) {
  const int64_t k = static_cast<int64_t>(index_map.size());
  const int64_t indices_rank = static_cast<int64_t>(indices_dims.size());
  const int64_t operand_rank = static_cast<int64_t>(operand_dims.size());
  if (batching || k == 0 || k > kMaxRowIndex) return std::nullopt;
  if (index_vector_dim == indices_rank) {
    if (k != 1) return std::nullopt;
  } else if (index_vector_dim != indices_rank - 1) {
    return std::nullopt;
  }
  const int64_t axis = *std::min_element(index_map.begin(), index_map.end());
  if (*std::max_element(index_map.begin(), index_map.end()) != axis + k - 1) return std::nullopt;
  // Role of each target dim: 0 outer window, 1 batch, 2 inner window; size-1 dims do not
  // affect the layout. Roles must not decrease along the target's dims.
  std::vector<int> role(target_dims.size(), 1);
  size_t next = 0;
  for (int64_t d = 0; d < operand_rank; ++d) {
    const bool indexed = d >= axis && d < axis + k;
    if (Contains(dropped, d)) {
      if (!indexed) return std::nullopt;
      continue;
    }
    if (next >= window_positions.size()) return std::nullopt;
    const size_t t = static_cast<size_t>(window_positions[next++]);
    if (t >= target_dims.size()) return std::nullopt;
    if (target_dims[t] != (indexed ? 1 : operand_dims[static_cast<size_t>(d)])) return std::nullopt;
    role[t] = d < axis ? 0 : indexed ? 1 : 2;
  }
  int last = 0;
  for (size_t t = 0; t < target_dims.size(); ++t) {
    if (target_dims[t] == 1) continue;
    if (role[t] < last) return std::nullopt;
    last = role[t];
  }
  RowForm f;
  f.k = static_cast<int>(k);
  for (int64_t d = 0; d < operand_rank; ++d) {
    const int64_t size = operand_dims[static_cast<size_t>(d)];
    if (d < axis) f.outer *= size;
    else if (d < axis + k) f.rows *= size;
    else f.inner *= size;
  }
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = index_map[static_cast<size_t>(j)];
    f.sizes[j] = operand_dims[static_cast<size_t>(d)];
    f.strides[j] = 1;
    for (int64_t e = d + 1; e < axis + k; ++e) f.strides[j] *= operand_dims[static_cast<size_t>(e)];
  }
  for (int64_t d = 0; d < indices_rank; ++d)
    if (d != index_vector_dim) f.positions *= indices_dims[static_cast<size_t>(d)];
  return f;
}

// Calls fn(index type tag) with the C++ type of an integer index dtype.
template <typename Fn>
void WithIndexType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kS8: return fn(int8_t{});
    case DType::kS16: return fn(int16_t{});
    case DType::kS32: return fn(int32_t{});
    case DType::kS64: return fn(int64_t{});
    case DType::kU8: return fn(uint8_t{});
    case DType::kU16: return fn(uint16_t{});
    case DType::kU32: return fn(uint32_t{});
    case DType::kU64: return fn(uint64_t{});
    default: return;
  }
}

// What a prepared row-form step carries: the form and its index transform.
struct RowState {
  RowForm form;
  IndexTransform transform;
};

// The row an index vector names, each component transformed and clamped into its dim
// (gather); -1 when the transform's fill mode rejects it.
template <bool kFill, typename I>
inline int64_t GatherRow(const RowForm& f, const IndexTransform& t, const I* vector) {
  int64_t row = 0;
  for (int j = 0; j < f.k; ++j) {
    const int64_t v = t.Apply(static_cast<size_t>(j), IndexValue(vector[j]));
    if constexpr (kFill)
      if (!t.InRange(static_cast<size_t>(j), v)) return -1;
    row += std::clamp<int64_t>(v, 0, f.sizes[j] - 1) * f.strides[j];
  }
  return row;
}


// Whether the vector gathers (simd/gather_simd.h) compute what GatherRows' one-component
// loops do: 4-byte elements (or 4-byte words of rows of 8-byte elements), int32 indices that
// the transform does not narrow below 32 bits, and an int32-sized dim.
template <typename W, typename I>
bool VectorGatherApplies(const RowForm& f, const IndexTransform& t) {
  if constexpr ((sizeof(W) != 4 && sizeof(W) != 8) || !std::is_same_v<I, int32_t>) {
    return false;
  } else {
    return f.k == 1 && (t.shift == 0 || t.shift == 32) && f.sizes[0] <= INT32_MAX && t.wrap[0] <= INT32_MAX;
  }
}

// Gathers single 4-byte elements (inner 1) or rows of 32 or 64 bytes; false (nothing done)
// for a fill value whose 4-byte words differ.
template <typename W, typename I>
bool GatherVector(const RowForm& f, const IndexTransform& t, const W* block, const I* indices, W* out, W fill,
                          int64_t count, int64_t inner) {
  if constexpr ((sizeof(W) == 4 || sizeof(W) == 8) && std::is_same_v<I, int32_t>) {
    // v is an int32 after the wrap, so bounds outside int32 compare as the int32 extremes.
    auto narrow = [](int64_t b) { return static_cast<int32_t>(std::clamp<int64_t>(b, INT32_MIN, INT32_MAX)); };
    const bool fills = t.mode == IndexTransform::kFill;
    simd::ElementGather g{reinterpret_cast<const uint32_t*>(block), f.sizes[0], static_cast<int32_t>(t.wrap[0]), fills,
                          fills ? narrow(t.lo[0]) : 0, fills ? narrow(t.hi[0]) : 0, 0};
    // Rows are filled word by word, so the fill value must repeat every 4 bytes.
    uint32_t word[sizeof(W) / 4];
    std::memcpy(word, &fill, sizeof(W));
    for (size_t w = 1; w < sizeof(W) / 4; ++w)
      if (fills && word[w] != word[0]) return false;
    g.fill = word[0];
    const int64_t words = inner * static_cast<int64_t>(sizeof(W)) / 4;
    if (words == 1) {
      simd::GatherElements32(g, indices, reinterpret_cast<uint32_t*>(out), count);
      return true;
    }
    simd::GatherRowsOfWords32(g, words, indices, reinterpret_cast<uint32_t*>(out), count);
    return true;
  } else {
    return false;
  }
}

// Items [begin, end) of outer * positions: item = o * positions + p. kFill: rows whose
// index the transform rejects are `fill`.
template <bool kFill, typename W, typename I>
void GatherRows(const RowForm& f, const IndexTransform& t, const W* __restrict src, const I* __restrict indices,
                W* __restrict dst, W fill, int64_t begin, int64_t end) {
  const int64_t positions = f.positions, inner = f.inner;
  int64_t o = begin / positions, p = begin % positions;
  for (int64_t item = begin; item < end;) {
    const int64_t stop = std::min(end, item + (positions - p));  // end of this outer block
    const W* block = src + o * f.rows * inner;
    W* out = dst + item * inner;
    const int64_t count = stop - item;
    if (f.k == 1) {
      // The hot loops of x[i] and jnp.take: wrap, test, clamp and load, no branches for one
      // element per row; short rows copied element by element (no library call per row).
      const int64_t last = f.sizes[0] - 1, wrap = t.wrap[0];
      const int64_t lo = kFill ? t.lo[0] : 0, hi = kFill ? t.hi[0] : 0;
      const int shift = t.shift;
      const I* idx = indices + p;
      const int64_t words = inner * static_cast<int64_t>(sizeof(W)) / 4;
      const bool vector_form = (inner == 1 && sizeof(W) == 4) || words == 8 || words == 16;
      if (vector_form && VectorGatherApplies<W, I>(f, t) && GatherVector(f, t, block, idx, out, fill, count, inner)) {
        // done
      } else if (inner == 1) {
        for (int64_t i = 0; i < count; ++i) {
          int64_t v = IndexValue(idx[i]);
          v += v < 0 ? wrap : 0;
          v = IndexTransform::Narrow(v, shift);
          const W value = block[std::clamp<int64_t>(v, 0, last)];
          if constexpr (kFill) out[i] = (v >= lo && v <= hi) ? value : fill;
          else out[i] = value;
        }
      } else {
        // Rows of 8 to 64 bytes are copied with fixed-size moves, other short rows element
        // by element (no library call per row).
        const int64_t row_bytes = inner * static_cast<int64_t>(sizeof(W));
        auto copy_rows = [&](auto copy) {
          for (int64_t i = 0; i < count; ++i) {
            int64_t v = IndexValue(idx[i]);
            v += v < 0 ? wrap : 0;
            v = IndexTransform::Narrow(v, shift);
            W* target = out + i * inner;
            if (kFill && !(v >= lo && v <= hi)) {
              std::fill(target, target + inner, fill);
              continue;
            }
            copy(target, block + std::clamp<int64_t>(v, 0, last) * inner);
          }
        };
        auto fixed = [&]<size_t kRowBytes>() {
          copy_rows([](W* target, const W* row) { std::memcpy(target, row, kRowBytes); });
        };
        switch (row_bytes) {
          case 8: fixed.template operator()<8>(); break;
          case 16: fixed.template operator()<16>(); break;
          case 32: fixed.template operator()<32>(); break;
          case 64: fixed.template operator()<64>(); break;
          default:
            if (row_bytes <= 256)
              copy_rows([inner](W* target, const W* row) {
                for (int64_t c = 0; c < inner; ++c) target[c] = row[c];
              });
            else
              copy_rows([inner](W* target, const W* row) {
                std::memcpy(target, row, static_cast<size_t>(inner) * sizeof(W));
              });
        }
      }
    } else {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t row = GatherRow<kFill>(f, t, indices + (p + i) * f.k);
        W* target = out + i * inner;
        if (kFill && row < 0) std::fill(target, target + inner, fill);
        else std::memcpy(target, block + row * inner, static_cast<size_t>(inner) * sizeof(W));
      }
    }
    item = stop;
    ++o;
    p = 0;
  }
}

template <int kBytes>
Status GatherRowsKernel(const KernelContext& context, const KernelArgs& args, const RowState& state) {
  using W = WordType<kBytes>;
  const RowForm& f = state.form;
  const IndexTransform& t = state.transform;
  const BufferView& out = args.outputs[0];
  const auto [begin, end] = ShareOf(context, f.outer * f.positions);
  if (begin >= end) return OkStatus();
  W fill{};
  const bool fills = t.mode == IndexTransform::kFill;
  if (fills) std::memcpy(&fill, args.inputs[2].data, sizeof(W));
  WithIndexType(args.inputs[1].dtype, [&]<typename I>(I) {
    const W* src = args.inputs[0].as<const W>();
    const I* indices = args.inputs[1].as<const I>();
    if (fills) GatherRows<true, W, I>(f, t, src, indices, out.as<W>(), fill, begin, end);
    else GatherRows<false, W, I>(f, t, src, indices, out.as<W>(), fill, begin, end);
  });
  return OkStatus();
}

// The part of a row scatter one call does: outer blocks [o_begin, o_end), columns
// [c_begin, c_end) and rows [r_begin, r_end) of every block (rows count the indexed dims as
// one). Empty when this call has no share. Calls that share neither blocks nor columns split
// the rows: each reads every index and applies, in order, the updates that land in its rows,
// so each result element sees its updates in the same order as on one thread.
struct ScatterShare {
  int64_t o_begin = 0, o_end = 0, c_begin = 0, c_end = 0, r_begin = 0, r_end = 0;
  bool empty() const { return o_begin >= o_end || c_begin >= c_end || r_begin >= r_end; }
  bool all_rows(const RowForm& f) const { return r_begin == 0 && r_end == f.rows; }
};

// Row scatters with less work than this (update bytes plus the result's bytes, which start
// as a copy of the operand) run on one thread: a split costs a handoff to the pool (0.5 µs
// with polling workers, ~15 µs to wake sleeping ones) and, when the worker takes the first
// share, a wait on it.
constexpr int64_t kMinBytesToSplitScatter = int64_t{1} << 20;

ScatterShare ScatterShareOf(const KernelContext& context, const RowForm& f, int element_bytes) {
  if (context.thread_count == 1) return {0, f.outer, 0, f.inner, 0, f.rows};
  const int64_t work = (f.positions + f.rows) * f.outer * f.inner * element_bytes;
  if (work < kMinBytesToSplitScatter)
    return context.thread_index == 0 ? ScatterShare{0, f.outer, 0, f.inner, 0, f.rows} : ScatterShare{};
  if (f.outer >= context.thread_count) {
    const auto [b, e] = ShareOf(context, f.outer);
    return {b, e, 0, f.inner, 0, f.rows};
  }
  constexpr int64_t kMinColumnsPerThread = 64;
  if (f.inner >= kMinColumnsPerThread * context.thread_count) {
    const auto [b, e] = ShareOf(context, f.inner);
    return {0, f.outer, b, e, 0, f.rows};
  }
  // Row ranges start on 64-byte boundaries (no cache line written by two threads) where the
  // row size allows. Rows under 256 bytes stay on one thread: listing the updates of each
  // thread's rows costs more than applying half of them saves (segment_sum of 256K rows of
  // 16 f32 into 1K: 0.57-0.73 ms split in two, 0.32 ms on one thread's direct pass).
  const int64_t row_bytes = f.inner * element_bytes;
  constexpr int64_t kMinRowBytesToSplitRows = 256;
  if (row_bytes < kMinRowBytesToSplitRows) return context.thread_index == 0 ? ScatterShare{0, f.outer, 0, f.inner, 0, f.rows} : ScatterShare{};
  const int64_t align = row_bytes >= 64 ? 1 : 64 / std::gcd<int64_t>(64, row_bytes);
  const int64_t units = (f.rows + align - 1) / align;
  if (units >= context.thread_count) {
    const auto [b, e] = ShareOf(context, units);
    return {0, f.outer, 0, f.inner, b * align, std::min(f.rows, e * align)};
  }
  if (context.thread_index == 0) return {0, f.outer, 0, f.inner, 0, f.rows};
  return {};
}

// The vector row combiner for Body on T, if there is one (f32/f64 add, mul, max, min).
template <typename Body, typename T>
constexpr std::optional<simd::BinaryFn> VectorCombiner() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if constexpr (std::is_same_v<Body, ops::AddOp>) return simd::BinaryFn::kAdd;
    if constexpr (std::is_same_v<Body, ops::MultiplyOp>) return simd::BinaryFn::kMul;
    if constexpr (std::is_same_v<Body, ops::MaxOp>) return simd::BinaryFn::kMax;
    if constexpr (std::is_same_v<Body, ops::MinOp>) return simd::BinaryFn::kMin;
  }
  return std::nullopt;
}

// Whether narrowing component j to the transform's bits leaves every value an index of type
// I can take (after the wrap) unchanged, so the hot loops can skip it.
template <typename I>
bool NarrowIsIdentity(const IndexTransform& t, size_t j) {
  if (t.shift == 0) return true;
  const int bits = 64 - t.shift;
  if (!std::is_signed_v<I> || static_cast<int>(8 * sizeof(I)) > bits) return false;
  return t.wrap[j] < (int64_t{1} << (bits - 1));  // v + wrap < wrap for v < 0
}

// Applies one update element or row to `r`.
template <typename Body, typename T>
inline void CombineRow(T* __restrict r, const T* __restrict u, int64_t width) {
  if constexpr (std::is_same_v<Body, AssignBody>) {
    if (width == 1) *r = *u;
    else std::memcpy(r, u, static_cast<size_t>(width) * sizeof(T));
  } else if constexpr (kIsHalf<T>) {
    for (int64_t c = 0; c < width; ++c) r[c] = StoreAs<T>(Body::Apply(Load(r[c]), Load(u[c])));
  } else {
    for (int64_t c = 0; c < width; ++c) r[c] = Body::Apply(r[c], u[c]);
  }
}

// Applies this share's updates. row_of(p) is the row (in [0, f.rows)) that index vector p
// names, or -1 to skip it. Without a row split, single elements are updated in one fused
// loop; otherwise the updates of a chunk of positions that land in this share's rows are
// listed first (branch-free), then applied in order.
template <typename Body, DType D, typename RowOf>
void ScatterBlocks(const RowForm& f, const ScatterShare& share, Storage<D>* __restrict result,
                   const Storage<D>* __restrict updates, RowOf row_of) {
  using T = Storage<D>;
  const int64_t inner = f.inner, width = share.c_end - share.c_begin, positions = f.positions;
  const bool split = !share.all_rows(f);
  const uint64_t first_row = static_cast<uint64_t>(share.r_begin);
  const uint64_t row_count = static_cast<uint64_t>(share.r_end - share.r_begin);
  constexpr auto vector_fn = VectorCombiner<Body, T>();
  constexpr int64_t kChunk = 512;
  int64_t rows[kChunk], picked[kChunk];
  for (int64_t o = share.o_begin; o < share.o_end; ++o) {
    T* block = result + o * f.rows * inner + share.c_begin;
    const T* source = updates + o * positions * inner + share.c_begin;
    if (inner == 1 && !split) {
      // Four indices are read ahead of their updates (which still run in order).
      int64_t p = 0;
      for (; p + 4 <= positions; p += 4) {
        const int64_t r0 = row_of(p), r1 = row_of(p + 1), r2 = row_of(p + 2), r3 = row_of(p + 3);
        if (r0 >= 0) CombineRow<Body>(block + r0, source + p, 1);
        if (r1 >= 0) CombineRow<Body>(block + r1, source + p + 1, 1);
        if (r2 >= 0) CombineRow<Body>(block + r2, source + p + 2, 1);
        if (r3 >= 0) CombineRow<Body>(block + r3, source + p + 3, 1);
      }
      for (; p < positions; ++p) {
        const int64_t row = row_of(p);
        if (row >= 0) CombineRow<Body>(block + row, source + p, 1);
      }
      continue;
    }
    for (int64_t p0 = 0; p0 < positions; p0 += kChunk) {
      const int64_t n = std::min(kChunk, positions - p0);
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = row_of(p0 + i);
        rows[count] = row;
        picked[count] = i;
        count += static_cast<uint64_t>(row) - first_row < row_count;  // -1 wraps to a huge value
      }
      const T* chunk = source + p0 * inner;
      if constexpr (vector_fn.has_value()) {
        if (width >= 4) {
          simd::ScatterCombineRows(*vector_fn, block, inner, rows, chunk, inner, picked, count, width);
          continue;
        }
      }
      for (int64_t j = 0; j < count; ++j) CombineRow<Body>(block + rows[j] * inner, chunk + picked[j] * inner, width);
    }
  }
}

// Picks the index arithmetic for ScatterBlocks. One-component int32/int64 indices that the
// transform at most wraps (what JAX emits) get loops with only that arithmetic; every other
// form reads its indices through a dtype switch (one instantiation per body and type).
template <typename Body, DType D>
void ScatterRows(const RowForm& f, const IndexTransform& t, const ScatterShare& share, Storage<D>* __restrict result,
                 const BufferView& indices, const Storage<D>* __restrict updates) {
  const bool simple = f.k == 1 && t.mode != IndexTransform::kClamp;
  const uint64_t size = static_cast<uint64_t>(f.sizes[0]);
  const int64_t wrap = t.wrap[0];
  auto bounded = [size](int64_t v) -> int64_t { return static_cast<uint64_t>(v) < size ? v : -1; };
  auto fast = [&]<typename I>(const I* __restrict index) {
    if (wrap != 0) {
      ScatterBlocks<Body, D>(f, share, result, updates, [&](int64_t p) {
        const int64_t v = index[p];
        return bounded(v + (v < 0 ? wrap : 0));
      });
    } else {
      ScatterBlocks<Body, D>(f, share, result, updates, [&](int64_t p) { return bounded(index[p]); });
    }
  };
  const bool int32_simple = simple && indices.dtype == DType::kS32 && NarrowIsIdentity<int32_t>(t, 0);
  constexpr auto vector_fn = VectorCombiner<Body, Storage<D>>();
  if constexpr (vector_fn.has_value()) {
    // Vector rows named directly by int32 indices: one pass, no list of rows.
    const int64_t width = share.c_end - share.c_begin;
    if (int32_simple && share.all_rows(f) && width >= 4) {
      const simd::IndexedRows rows{indices.as<const int32_t>(), wrap, f.sizes[0]};
      for (int64_t o = share.o_begin; o < share.o_end; ++o)
        simd::ScatterCombineIndexed(*vector_fn, result + o * f.rows * f.inner + share.c_begin, f.inner, rows,
                                    updates + o * f.positions * f.inner + share.c_begin, f.inner, f.positions, width);
      return;
    }
  }
  if (int32_simple) return fast(indices.as<const int32_t>());
  if (simple && indices.dtype == DType::kS64 && NarrowIsIdentity<int64_t>(t, 0)) return fast(indices.as<const int64_t>());
  const int index_bytes = DTypeByteSize(indices.dtype);
  const auto* base = static_cast<const uint8_t*>(indices.data);
  ScatterBlocks<Body, D>(f, share, result, updates, [&](int64_t p) {
    int64_t row = 0;
    for (int j = 0; j < f.k; ++j) {
      const int64_t v = t.Apply(static_cast<size_t>(j), LoadIndex(base + (p * f.k + j) * index_bytes, indices.dtype));
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(f.sizes[j])) return int64_t{-1};
      row += v * f.strides[j];
    }
    return row;
  });
}

template <typename Body, DType D>
Status ScatterRowsKernel(const KernelContext& context, const KernelArgs& args, const RowState& state) {
  using T = Storage<D>;
  const RowForm& f = state.form;
  const ScatterShare share = ScatterShareOf(context, f, static_cast<int>(sizeof(T)));
  if (share.empty()) return OkStatus();
  const BufferView& operand = args.inputs[0];
  T* result = args.outputs[0].as<T>();
  if (result != operand.data) {
    // This call's share of the result starts as the operand's.
    const T* source = operand.as<const T>();
    const int64_t width = share.c_end - share.c_begin;
    for (int64_t o = share.o_begin; o < share.o_end; ++o) {
      if (width == f.inner) {
        const int64_t first = (o * f.rows + share.r_begin) * f.inner;
        std::memcpy(result + first, source + first,
                    static_cast<size_t>((share.r_end - share.r_begin) * f.inner) * sizeof(T));
        continue;
      }
      for (int64_t r = o * f.rows + share.r_begin; r < o * f.rows + share.r_end; ++r)
        std::memcpy(result + r * f.inner + share.c_begin, source + r * f.inner + share.c_begin,
                    static_cast<size_t>(width) * sizeof(T));
    }
  }
  if (f.positions == 0) return OkStatus();
  ScatterRows<Body, D>(f, state.transform, share, result, args.inputs[1], args.inputs[2].as<const T>());
  return OkStatus();
}

StatusOr<PreparedStep> PrepareGather(const KernelArgs& args) {
  const GatherParams& p = args.Params<GatherParams>();
  STABLERT_ASSIGN_OR_RETURN(IndexTransform transform,
                            MakeIndexTransform(p.index_transform, p.start_index_map.size(), "gather"));
  if (transform.mode == IndexTransform::kClamp) return InvalidArgument("gather: the clamp index mode is for scatter");
  const bool fills = transform.mode == IndexTransform::kFill;
  if (args.inputs.size() != (fills ? 3u : 2u))
    return InvalidArgument(fills ? "gather in fill mode expects operand, indices and a fill value"
                                 : "gather expects operand and indices");
  if (fills && (args.inputs[2].dtype != args.inputs[0].dtype || !args.inputs[2].dims.empty()))
    return InvalidArgument("gather: the fill value must be a scalar of the operand's element type");
  std::optional<RowForm> form =
      MatchRowForm(args.inputs[0].dims, args.inputs[1].dims, p.index_vector_dim, p.start_index_map,
                   p.collapsed_slice_dims, !p.operand_batching_dims.empty() || !p.start_indices_batching_dims.empty(),
                   p.offset_dims, args.outputs[0].dims);
  if (!form) return PreparedStep();
  return PreparedStep(std::make_shared<const RowState>(RowState{*form, std::move(transform)}));
}

StatusOr<IndexTransform> ParseScatterTransform(const KernelArgs& args) {
  const ScatterParams& p = args.Params<ScatterParams>();
  STABLERT_ASSIGN_OR_RETURN(IndexTransform transform,
                            MakeIndexTransform(p.index_transform, p.scatter_dims_to_operand_dims.size(), "scatter"));
  if (transform.mode == IndexTransform::kFill) return InvalidArgument("scatter: the fill index mode is for gather");
  return transform;
}

StatusOr<PreparedStep> PrepareScatter(const KernelArgs& args) {
  STABLERT_ASSIGN_OR_RETURN(IndexTransform transform, ParseScatterTransform(args));
  const ScatterParams& p = args.Params<ScatterParams>();
  std::optional<RowForm> form =
      MatchRowForm(args.inputs[0].dims, args.inputs[1].dims, p.index_vector_dim, p.scatter_dims_to_operand_dims,
                   p.inserted_window_dims, !p.input_batching_dims.empty() || !p.scatter_indices_batching_dims.empty(),
                   p.update_window_dims, args.inputs[2].dims);
  if (!form) return PreparedStep();
  return PreparedStep(std::make_shared<const RowState>(RowState{*form, std::move(transform)}));
}

// ---------------------------------------------------------------------------------------
// Scatter-add of gathered rows ("scatter_add_gathered.<T>").

struct GatheredScatterState {
  IndexTransform scatter, gather;
  int64_t segments = 0, width = 0, positions = 0, source_rows = 0;
};

// Dims [N, 1] or [N] of a one-component index operand: N, or -1 for any other form.
int64_t OneComponentPositions(const BufferView& indices) {
  if (!IsInteger(indices.dtype)) return -1;
  if (indices.dims.size() == 1) return indices.dims[0];
  if (indices.dims.size() == 2 && indices.dims[1] == 1) return indices.dims[0];
  return -1;
}

StatusOr<PreparedStep> PrepareGatheredScatter(const KernelArgs& args) {
  const GatheredScatterParams& p = args.Params<GatheredScatterParams>();
  if (args.inputs.size() != 4 || args.outputs.size() != 1)
    return InvalidArgument("scatter_add_gathered expects operand, scatter indices, source and source row indices");
  const BufferView &operand = args.inputs[0], &source = args.inputs[2], &out = args.outputs[0];
  const int64_t n = OneComponentPositions(args.inputs[1]);
  if (operand.dims.size() != 2 || source.dims.size() != 2 || !std::ranges::equal(out.dims, operand.dims) ||
      source.dims[1] != operand.dims[1] || source.dtype != operand.dtype || out.dtype != operand.dtype || n < 0 ||
      OneComponentPositions(args.inputs[3]) != n)
    return InvalidArgument("scatter_add_gathered expects an operand [S, W], indices [N, 1], a source [R, W] of the "
                           "operand's type and row indices [N, 1]");
  if (source.dims[0] == 0 && n > 0) return InvalidArgument("scatter_add_gathered: rows gathered from an empty source");
  STABLERT_ASSIGN_OR_RETURN(IndexTransform scatter, MakeIndexTransform(p.scatter_transform, 1, "scatter_add_gathered"));
  STABLERT_ASSIGN_OR_RETURN(IndexTransform gather, MakeIndexTransform(p.gather_transform, 1, "scatter_add_gathered"));
  if (scatter.mode != IndexTransform::kNone || gather.mode != IndexTransform::kNone)
    return InvalidArgument("scatter_add_gathered: only the wrap and narrowing index transforms are supported");
  return PreparedStep(std::make_shared<const GatheredScatterState>(
      GatheredScatterState{std::move(scatter), std::move(gather), operand.dims[0], operand.dims[1], n, source.dims[0]}));
}

template <DType D>
Status GatheredScatterKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  if (args.state == nullptr) return Internal("scatter_add_gathered ran without its prepared state");
  const auto& s = *static_cast<const GatheredScatterState*>(args.state);
  // Column ranges of whole 64-byte lines; small scatters on one thread (kMinBytesToSplitScatter).
  constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));
  int64_t c_begin = 0, c_end = s.width;
  if (context.thread_count > 1) {
    const int64_t work = (2 * s.positions + s.segments) * s.width * static_cast<int64_t>(sizeof(T));
    if (work < kMinBytesToSplitScatter || s.width < 2 * kLine) {
      if (context.thread_index != 0) return OkStatus();
    } else {
      const auto [b, e] = ShareOf(context, (s.width + kLine - 1) / kLine);
      c_begin = b * kLine;
      c_end = std::min(s.width, e * kLine);
      if (c_begin >= c_end) return OkStatus();
    }
  }
  const int64_t width = c_end - c_begin;
  T* result = args.outputs[0].as<T>();
  const T* operand = args.inputs[0].as<const T>();
  if (result != operand) {
    if (width == s.width) {
      std::memcpy(result, operand, static_cast<size_t>(s.segments * s.width) * sizeof(T));
    } else {
      for (int64_t r = 0; r < s.segments; ++r)
        std::memcpy(result + r * s.width + c_begin, operand + r * s.width + c_begin, static_cast<size_t>(width) * sizeof(T));
    }
  }
  const BufferView &scatter_indices = args.inputs[1], &source_indices = args.inputs[3];
  const T* source = args.inputs[2].as<const T>();
  const uint64_t segments = static_cast<uint64_t>(s.segments);
  const int64_t last = s.source_rows - 1;
  constexpr int64_t kChunk = 512;
  int64_t rows[kChunk], picked[kChunk];
  auto run = [&](auto segment_of, auto source_row_of) {
    for (int64_t p0 = 0; p0 < s.positions; p0 += kChunk) {
      const int64_t n = std::min(kChunk, s.positions - p0);
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = segment_of(p0 + i);
        rows[count] = row;
        picked[count] = std::clamp<int64_t>(source_row_of(p0 + i), 0, last);
        count += static_cast<uint64_t>(row) < segments;
      }
      simd::ScatterCombineRows(simd::BinaryFn::kAdd, result + c_begin, s.width, rows, source + c_begin, s.width,
                               picked, count, width);
    }
  };
  if (scatter_indices.dtype == DType::kS32 && source_indices.dtype == DType::kS32) {
    // JAX's default index type: the transforms' arithmetic inline.
    const int32_t* sx = scatter_indices.as<const int32_t>();
    const int32_t* gx = source_indices.as<const int32_t>();
    run([&](int64_t p) { return s.scatter.Apply(0, sx[p]); }, [&](int64_t p) { return s.gather.Apply(0, gx[p]); });
  } else {
    const auto* sb = static_cast<const uint8_t*>(scatter_indices.data);
    const auto* gb = static_cast<const uint8_t*>(source_indices.data);
    const int sw = DTypeByteSize(scatter_indices.dtype), gw = DTypeByteSize(source_indices.dtype);
    run([&](int64_t p) { return s.scatter.Apply(0, LoadIndex(sb + p * sw, scatter_indices.dtype)); },
        [&](int64_t p) { return s.gather.Apply(0, LoadIndex(gb + p * gw, source_indices.dtype)); });
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------
// The generic walks.

template <int kBytes>
Status GatherKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& operand = args.inputs[0];
  const BufferView& indices = args.inputs[1];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  if (args.state != nullptr) return GatherRowsKernel<kBytes>(context, args, *static_cast<const RowState*>(args.state));
  const GatherParams& p = args.Params<GatherParams>();
  const std::vector<int64_t>& offset_dims = p.offset_dims;
  const std::vector<int64_t>& collapsed = p.collapsed_slice_dims;
  const std::vector<int64_t>& operand_batching = p.operand_batching_dims;
  const std::vector<int64_t>& indices_batching = p.start_indices_batching_dims;
  const std::vector<int64_t>& start_index_map = p.start_index_map;
  const int64_t index_vector_dim = p.index_vector_dim;
  const std::vector<int64_t>& slice_sizes = p.slice_sizes;
  const size_t operand_rank = operand.dims.size();
  const size_t out_rank = out.dims.size();
  STABLERT_ASSIGN_OR_RETURN(IndexTransform transform,
                            MakeIndexTransform(p.index_transform, start_index_map.size(), "gather"));
  const bool fills = transform.mode == IndexTransform::kFill;
  W fill{};
  if (fills) std::memcpy(&fill, args.inputs[2].data, sizeof(W));

  DimVector operand_strides = DenseStrides(operand.dims), out_strides = DenseStrides(out.dims);
  // Result dims that are batch positions, and the slice dims copied per position.
  std::vector<int64_t> batch_positions;
  for (size_t d = 0; d < out_rank; ++d)
    if (!Contains(offset_dims, static_cast<int64_t>(d))) batch_positions.push_back(static_cast<int64_t>(d));
  std::vector<int64_t> slice_dims, dst_strides, src_strides;
  size_t next_offset = 0;
  for (size_t d = 0; d < operand_rank; ++d) {
    if (Contains(collapsed, static_cast<int64_t>(d)) || Contains(operand_batching, static_cast<int64_t>(d))) continue;
    slice_dims.push_back(slice_sizes[d]);
    src_strides.push_back(operand_strides[d]);
    dst_strides.push_back(out_strides[static_cast<size_t>(offset_dims[next_offset++])]);
  }
  DimVector batch_dims(batch_positions.size());
  for (size_t i = 0; i < batch_positions.size(); ++i) batch_dims[i] = out.dims[static_cast<size_t>(batch_positions[i])];

  IndexReader reader(indices, index_vector_dim);
  // This call's share: a range of batch positions (row-major), the first one unravelled.
  int64_t positions = 1;
  for (size_t i = 0; i < batch_dims.size(); ++i) positions *= batch_dims[i];
  const auto [first_position, last_position] = ShareOf(context, positions);
  if (first_position >= last_position) return OkStatus();
  DimVector batch(batch_positions.size(), 0), start(operand_rank, 0);
  for (int64_t rest = first_position, i = static_cast<int64_t>(batch.size()) - 1; i >= 0; --i) {
    batch[static_cast<size_t>(i)] = rest % batch_dims[static_cast<size_t>(i)];
    rest /= batch_dims[static_cast<size_t>(i)];
  }
  int64_t slice_elements = 1;
  for (size_t i = 0; i < slice_dims.size(); ++i) slice_elements *= slice_dims[i];
  const std::vector<int64_t> no_strides(slice_dims.size(), 0);
  for (int64_t position = first_position; position < last_position; ++position) {
    const int64_t index_offset = reader.BatchOffset(batch);
    for (size_t d = 0; d < operand_rank; ++d) start[d] = 0;
    bool in_range = true;
    for (size_t k = 0; k < start_index_map.size(); ++k) {
      const int64_t v = transform.Apply(k, reader.Read(index_offset, static_cast<int64_t>(k)));
      if (fills && !transform.InRange(k, v)) in_range = false;
      start[static_cast<size_t>(start_index_map[k])] = v;
    }
    for (size_t i = 0; i < operand_batching.size(); ++i) {
      int64_t d = indices_batching[i];
      size_t position = static_cast<size_t>(d < index_vector_dim ? d : d - 1);
      start[static_cast<size_t>(operand_batching[i])] = batch[position];
    }
    int64_t src_offset = 0, dst_offset = 0;
    for (size_t d = 0; d < operand_rank; ++d) {
      int64_t clamped = std::clamp<int64_t>(start[d], 0, operand.dims[d] - slice_sizes[d]);
      src_offset += clamped * operand_strides[d];
    }
    for (size_t i = 0; i < batch_positions.size(); ++i)
      dst_offset += batch[i] * out_strides[static_cast<size_t>(batch_positions[i])];
    if (!in_range) {
      StridedCopy(out.as<W>() + dst_offset, dst_strides, &fill, no_strides, slice_dims);  // the fill value
    } else if (slice_elements == 1) {
      out.as<W>()[dst_offset] = operand.as<const W>()[src_offset];  // one element: no strided walk
    } else {
      StridedCopy(out.as<W>() + dst_offset, dst_strides, operand.as<const W>() + src_offset, src_strides, slice_dims);
    }
    Next(batch, {batch_dims.data(), batch_dims.size()});
  }
  return OkStatus();
}

// Shared walk of scatter: calls apply(result_offset, update_offset) for every element of
// every in-bounds window, in row-major order of update positions.
template <typename Apply>
void ScatterWalk(const KernelArgs& args, const IndexTransform& transform, Apply apply) {
  const BufferView& operand = args.inputs[0];
  const BufferView& indices = args.inputs[1];
  const BufferView& updates = args.inputs[2];
  const ScatterParams& p = args.Params<ScatterParams>();
  const std::vector<int64_t>& window_dims = p.update_window_dims;
  const std::vector<int64_t>& inserted = p.inserted_window_dims;
  const std::vector<int64_t>& input_batching = p.input_batching_dims;
  const std::vector<int64_t>& indices_batching = p.scatter_indices_batching_dims;
  const std::vector<int64_t>& to_operand = p.scatter_dims_to_operand_dims;
  const int64_t index_vector_dim = p.index_vector_dim;
  const size_t operand_rank = operand.dims.size();
  const size_t updates_rank = updates.dims.size();
  if (updates.num_elements == 0) return;

  DimVector operand_strides = DenseStrides(operand.dims), update_strides = DenseStrides(updates.dims);
  std::vector<int64_t> scatter_positions;
  for (size_t d = 0; d < updates_rank; ++d)
    if (!Contains(window_dims, static_cast<int64_t>(d))) scatter_positions.push_back(static_cast<int64_t>(d));
  // Operand dims the window spans, with their update dim.
  std::vector<int64_t> window_operand_dims, window_sizes, window_operand_strides, window_update_strides;
  size_t next = 0;
  for (size_t d = 0; d < operand_rank; ++d) {
    if (Contains(inserted, static_cast<int64_t>(d)) || Contains(input_batching, static_cast<int64_t>(d))) continue;
    size_t u = static_cast<size_t>(window_dims[next++]);
    window_operand_dims.push_back(static_cast<int64_t>(d));
    window_sizes.push_back(updates.dims[u]);
    window_operand_strides.push_back(operand_strides[d]);
    window_update_strides.push_back(update_strides[u]);
  }
  DimVector scatter_dims(scatter_positions.size());
  for (size_t i = 0; i < scatter_positions.size(); ++i)
    scatter_dims[i] = updates.dims[static_cast<size_t>(scatter_positions[i])];

  IndexReader reader(indices, index_vector_dim);
  DimVector batch(scatter_positions.size(), 0), start(operand_rank, 0), window(window_sizes.size(), 0);
  do {
    const int64_t index_offset = reader.BatchOffset(batch);
    for (size_t d = 0; d < operand_rank; ++d) start[d] = 0;
    for (size_t k = 0; k < to_operand.size(); ++k)
      start[static_cast<size_t>(to_operand[k])] = transform.Apply(k, reader.Read(index_offset, static_cast<int64_t>(k)));
    for (size_t i = 0; i < input_batching.size(); ++i) {
      int64_t d = indices_batching[i];
      size_t position = static_cast<size_t>(d < index_vector_dim ? d : d - 1);
      start[static_cast<size_t>(input_batching[i])] = batch[position];
    }
    // Skip windows that do not fit entirely.
    bool fits = true;
    int64_t result_base = 0;
    for (size_t d = 0; d < operand_rank; ++d) {
      int64_t size = 1;
      for (size_t w = 0; w < window_operand_dims.size(); ++w)
        if (window_operand_dims[w] == static_cast<int64_t>(d)) size = window_sizes[w];
      if (start[d] < 0 || start[d] > operand.dims[d] - size) fits = false;
      result_base += start[d] * operand_strides[d];
    }
    if (!fits) continue;
    int64_t update_base = 0;
    for (size_t i = 0; i < scatter_positions.size(); ++i)
      update_base += batch[i] * update_strides[static_cast<size_t>(scatter_positions[i])];
    for (size_t w = 0; w < window.size(); ++w) window[w] = 0;
    do {
      int64_t result_offset = result_base, update_offset = update_base;
      for (size_t w = 0; w < window.size(); ++w) {
        result_offset += window[w] * window_operand_strides[w];
        update_offset += window[w] * window_update_strides[w];
      }
      apply(result_offset, update_offset);
    } while (Next(window, {window_sizes.data(), window_sizes.size()}));
  } while (Next(batch, {scatter_dims.data(), scatter_dims.size()}));
}

template <typename Body, DType D>
Status ScatterKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  if (args.state != nullptr) return ScatterRowsKernel<Body, D>(context, args, *static_cast<const RowState*>(args.state));
  if (context.thread_index != 0) return OkStatus();  // the generic walk runs in one call
  STABLERT_ASSIGN_OR_RETURN(IndexTransform transform, ParseScatterTransform(args));
  const BufferView& operand = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements > 0 && out.data != operand.data) std::memcpy(out.data, operand.data, static_cast<size_t>(out.num_elements) * sizeof(T));
  T* result = out.as<T>();
  const T* updates = args.inputs[2].as<const T>();
  ScatterWalk(args, transform, [&](int64_t r, int64_t u) {
    if constexpr (kIsHalf<T>) result[r] = StoreAs<T>(Body::Apply(Load(result[r]), Load(updates[u])));
    else result[r] = Body::Apply(result[r], updates[u]);
  });
  return OkStatus();
}

StatusOr<PreparedStep> PrepareScatterProgram(const KernelArgs& args) {
  STABLERT_RETURN_IF_ERROR(ParseScatterTransform(args).status());
  STABLERT_ASSIGN_OR_RETURN(ScalarProgram program, ScalarProgram::Decode(args.Params<ScatterParams>().body, CpuKernels()));
  const DType dtype = args.inputs[0].dtype;
  if (program.num_inputs() != 2 || program.outputs().size() != 1 || program.register_dtype(0) != dtype ||
      program.register_dtype(1) != dtype || program.register_dtype(program.outputs()[0]) != dtype)
    return InvalidArgument("scatter body types do not match the operand");
  return KernelState(std::make_shared<const ScalarProgram>(std::move(program)));
}

Status ScatterProgramKernel(const KernelContext&, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("ScatterProgram called without its prepared state");
  const auto& program = *static_cast<const ScalarProgram*>(args.state);
  STABLERT_ASSIGN_OR_RETURN(IndexTransform transform, ParseScatterTransform(args));
  const BufferView& operand = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const int size = DTypeByteSize(out.dtype);
  if (out.num_elements > 0 && out.data != operand.data)
    std::memcpy(out.data, operand.data, static_cast<size_t>(out.num_elements) * size);
  std::vector<ScalarSlot> registers(static_cast<size_t>(program.num_registers()));
  program.Initialize(registers.data());
  auto* result = static_cast<uint8_t*>(out.data);
  const auto* updates = static_cast<const uint8_t*>(args.inputs[2].data);
  const int32_t output = program.outputs()[0];
  ScatterWalk(args, transform, [&](int64_t r, int64_t u) {
    std::memcpy(&registers[0], result + r * size, size);
    std::memcpy(&registers[1], updates + u * size, size);
    program.Run(registers.data());
    std::memcpy(result + r * size, &registers[static_cast<size_t>(output)], size);
  });
  return OkStatus();
}

template <typename Body, DType... Ds>
Status RegisterScatter(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() {
    STABLERT_RETURN_IF_ERROR(
        registry.RegisterSplittable<ScatterParams>(KernelKey(name, {D}), &ScatterKernel<Body, D>, &PrepareScatter));
    return registry.DeclareInPlace(KernelKey(name, {D}), InPlace::kFirstInput);
  });
}

using Pred = DTypeList<DType::kPred>;
using IntAndFloatDTypes =
    DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
              DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;
using IntAndPredDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8,
                                   DType::kU16, DType::kU32, DType::kU64>;

}  // namespace

Status RegisterGatherScatterKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(ForEachDType(MovableDTypes{}, [&]<DType D>() {
    return r.RegisterSplittable<GatherParams>(KernelKey("gather", {D}), &GatherKernel<static_cast<int>(sizeof(Storage<D>))>,
                                &PrepareGather);
  }));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<AssignBody>(r, "scatter_assign", MovableDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<cx::AddOp>(r, "scatter_add", ComplexDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<cx::MultiplyOp>(r, "scatter_mul", ComplexDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::AddOp>(r, "scatter_add", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::OrOp>(r, "scatter_add", Pred{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::MultiplyOp>(r, "scatter_mul", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::AndOp>(r, "scatter_mul", Pred{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::MaxOp>(r, "scatter_max", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::MinOp>(r, "scatter_min", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::AndOp>(r, "scatter_and", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(RegisterScatter<ops::OrOp>(r, "scatter_or", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(r.Register<ScatterParams>("scatter_program", &ScatterProgramKernel, &PrepareScatterProgram));
  STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<GatheredScatterParams>(
      KernelKey("scatter_add_gathered", {DType::kF32}), &GatheredScatterKernel<DType::kF32>, &PrepareGatheredScatter));
  STABLERT_RETURN_IF_ERROR(r.DeclareInPlace(KernelKey("scatter_add_gathered", {DType::kF32}), InPlace::kFirstInput));
  STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<GatheredScatterParams>(
      KernelKey("scatter_add_gathered", {DType::kF64}), &GatheredScatterKernel<DType::kF64>, &PrepareGatheredScatter));
  STABLERT_RETURN_IF_ERROR(r.DeclareInPlace(KernelKey("scatter_add_gathered", {DType::kF64}), InPlace::kFirstInput));
  STABLERT_RETURN_IF_ERROR(r.DeclareInPlace("scatter_program", InPlace::kFirstInput));
  return OkStatus();
}

}  // namespace stablert::kernels
