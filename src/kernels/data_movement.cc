// Data movement kernels: copy, broadcast_in_dim, transpose, slice, concatenate, iota.
// Parameters: kernels/data_movement_params.h (copy takes none).
// All but iota only move bytes, so one instantiation per element width serves every dtype.
// All are splittable: each call of a split step writes its share of the output (rows of
// the merged strided copy, StridedCopyShare; transpose: tiles; iota: rows).
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/data_movement_params.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {


Status CopyKernel(const KernelContext& context, const KernelArgs& args) {
  const BufferView& in = args.inputs[0];
  void* out = args.outputs[0].data;
  if (out == in.data) return OkStatus();
  const auto size = static_cast<int64_t>(DTypeByteSize(in.dtype));
  const auto [begin, end] = ShareOf(context, in.num_elements);
  if (end > begin)
    std::memmove(static_cast<char*>(out) + begin * size, static_cast<const char*>(in.data) + begin * size,
                 static_cast<size_t>((end - begin) * size));
  return OkStatus();
}

template <int kBytes>
Status BroadcastInDimKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const std::vector<int64_t>& broadcast_dims = args.Params<BroadcastInDimParams>().dimensions;
  DimVector in_strides = DenseStrides(in.dims);
  DimVector src_strides(out.dims.size(), 0);
  for (size_t i = 0; i < broadcast_dims.size(); ++i) {
    if (in.dims[i] != 1) src_strides[broadcast_dims[i]] = in_strides[i];
  }
  DimVector dst_strides = DenseStrides(out.dims);
  StridedCopyShare(context, out.as<W>(), {dst_strides.data(), dst_strides.size()}, in.as<const W>(),
                   {src_strides.data(), src_strides.size()}, out.dims);
  return OkStatus();
}

// Transpose. The permutation is first reduced to its essential form: size-1 dims are
// dropped and runs of output dims that stay adjacent in the input are merged. If the
// innermost dim is then unchanged, each output row is a contiguous input row (a row copy).
// Otherwise the output's innermost dim `a` and the dim `b` that is innermost in the input
// swap places: the copy runs over square tiles of (b, a), each read along input rows and
// written along output rows, so both sides stay in cache. Arrays of kMinTransposeToSplit
// elements or more are split across the calls of a step by ranges of units (outer index,
// chunk of tiles along a, tile along b) or of rows for a row copy; smaller ones run on the
// first call alone.
constexpr int64_t kMinTransposeToSplit = int64_t{1} << 18;

// Elements per tile side: a tile row spans at least one 64-byte cache line.
// Tiles along a per unit of work.
constexpr int64_t kTransposeChunkTiles = 8;

template <int kBytes>
constexpr int64_t kTransposeTile = kBytes >= 4 ? 16 : 64 / kBytes;

// dst[i * ldd + j] = src[j * lds + i] for i < rows, j < cols.
template <typename W>
inline void TransposeBlockScalar(W* dst, int64_t ldd, const W* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    W* d = dst + i * ldd;
    const W* s = src + i;
    for (int64_t j = 0; j < cols; ++j) d[j] = s[j * lds];
  }
}

// One tile of at most kTransposeTile x kTransposeTile elements, as TransposeBlockScalar.
template <int kBytes>
inline void TransposeTile(WordType<kBytes>* dst, int64_t ldd, const WordType<kBytes>* src, int64_t lds,
                          int64_t rows, int64_t cols) {
#if defined(__SSE2__)
  if constexpr (kBytes == 4) {
    // 4x4 blocks: four 16-byte loads along input rows, four stores along output rows.
    const int64_t rows4 = rows & ~int64_t{3}, cols4 = cols & ~int64_t{3};
    for (int64_t i = 0; i < rows4; i += 4) {
      for (int64_t j = 0; j < cols4; j += 4) {
        const WordType<4>* s = src + j * lds + i;
        __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + lds));
        __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * lds));
        __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * lds));
        __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
        __m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
        WordType<4>* d = dst + i * ldd + j;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(t0, t2));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ldd), _mm_unpackhi_epi64(t0, t2));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * ldd), _mm_unpacklo_epi64(t1, t3));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * ldd), _mm_unpackhi_epi64(t1, t3));
      }
      if (cols4 < cols) TransposeBlockScalar(dst + i * ldd + cols4, ldd, src + cols4 * lds + i, lds, 4, cols - cols4);
    }
    if (rows4 < rows) TransposeBlockScalar(dst + rows4 * ldd, ldd, src + rows4, lds, rows - rows4, cols);
    return;
  }
  if constexpr (kBytes == 2) {
    // 8x8 blocks: eight 16-byte loads along input rows, interleaved by 16, 32 and 64 bits.
    const int64_t rows8 = rows & ~int64_t{7}, cols8 = cols & ~int64_t{7};
    for (int64_t i = 0; i < rows8; i += 8) {
      for (int64_t j = 0; j < cols8; j += 8) {
        const WordType<2>* s = src + j * lds + i;
        __m128i r[8];
        for (int k = 0; k < 8; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k * lds));
        __m128i t[8], u[8];
        for (int k = 0; k < 4; ++k) {
          t[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
          t[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
        }
        // u[0..3]: rows 0-3 of columns (0,1), (2,3), (4,5), (6,7); u[4..7]: rows 4-7.
        for (int h = 0; h < 2; ++h) {
          u[4 * h + 0] = _mm_unpacklo_epi32(t[4 * h + 0], t[4 * h + 2]);
          u[4 * h + 1] = _mm_unpackhi_epi32(t[4 * h + 0], t[4 * h + 2]);
          u[4 * h + 2] = _mm_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
          u[4 * h + 3] = _mm_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
        }
        WordType<2>* d = dst + i * ldd + j;
        for (int k = 0; k < 4; ++k) {
          _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k) * ldd), _mm_unpacklo_epi64(u[k], u[k + 4]));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k + 1) * ldd), _mm_unpackhi_epi64(u[k], u[k + 4]));
        }
      }
      if (cols8 < cols) TransposeBlockScalar(dst + i * ldd + cols8, ldd, src + cols8 * lds + i, lds, 8, cols - cols8);
    }
    if (rows8 < rows) TransposeBlockScalar(dst + rows8 * ldd, ldd, src + rows8, lds, rows - rows8, cols);
    return;
  }
  if constexpr (kBytes == 8) {
    const int64_t rows2 = rows & ~int64_t{1}, cols2 = cols & ~int64_t{1};
    for (int64_t i = 0; i < rows2; i += 2) {
      for (int64_t j = 0; j < cols2; j += 2) {
        const WordType<8>* s = src + j * lds + i;
        __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + lds));
        WordType<8>* d = dst + i * ldd + j;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(r0, r1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ldd), _mm_unpackhi_epi64(r0, r1));
      }
      if (cols2 < cols) TransposeBlockScalar(dst + i * ldd + cols2, ldd, src + cols2 * lds + i, lds, 2, cols - cols2);
    }
    if (rows2 < rows) TransposeBlockScalar(dst + rows2 * ldd, ldd, src + rows2, lds, rows - rows2, cols);
    return;
  }
#endif
  TransposeBlockScalar(dst, ldd, src, lds, rows, cols);
}

// Advances a row-major multi-index over `size` and the two offsets that follow it.
inline void StepIndex(DimVector& index, const DimVector& size, const DimVector& ss, const DimVector& ds,
                      int64_t& src_offset, int64_t& dst_offset) {
  for (size_t k = index.size(); k-- > 0;) {
    src_offset += ss[k];
    dst_offset += ds[k];
    if (++index[k] < size[k]) return;
    src_offset -= ss[k] * size[k];
    dst_offset -= ds[k] * size[k];
    index[k] = 0;
  }
}

// Sets `index` to the multi-index of `linear` over `size`, and the offsets it gives.
inline void SetIndex(int64_t linear, DimVector& index, const DimVector& size, const DimVector& ss,
                     const DimVector& ds, int64_t& src_offset, int64_t& dst_offset) {
  src_offset = dst_offset = 0;
  for (size_t k = index.size(); k-- > 0;) {
    index[k] = linear % size[k];
    linear /= size[k];
    src_offset += index[k] * ss[k];
    dst_offset += index[k] * ds[k];
  }
}

template <int kBytes>
Status TransposeKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const std::vector<int64_t>& permutation = args.Params<TransposeParams>().permutation;
  if (out.num_elements == 0) return OkStatus();
  const bool split = out.num_elements >= kMinTransposeToSplit;
  if (!split && context.thread_index != 0) return OkStatus();
  const KernelContext part = split ? context : KernelContext{};
  const W* src = in.as<const W>();
  W* dst = out.as<W>();

  // Essential form: per output dim (size > 1) its size and input stride; merged runs.
  const size_t rank = permutation.size();
  DimVector in_strides = DenseStrides(in.dims);
  DimVector size(rank), ss(rank);
  size_t n = 0;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = out.dims[i], s = in_strides[static_cast<size_t>(permutation[i])];
    if (d == 1) continue;
    if (n > 0 && ss[n - 1] == s * d) {
      size[n - 1] *= d;
      ss[n - 1] = s;
      continue;
    }
    size[n] = d;
    ss[n] = s;
    ++n;
  }
  if (n == 0) {
    dst[0] = src[0];
    return OkStatus();
  }
  DimVector ds(n);
  for (size_t i = n, stride = 1; i-- > 0;) {
    ds[i] = static_cast<int64_t>(stride);
    stride *= static_cast<size_t>(size[i]);
  }

  if (ss[n - 1] == 1) {
    // Row copy: the outer dims index rows of `inner` contiguous elements on both sides.
    const int64_t inner = size[n - 1];
    const size_t outer_rank = n - 1;
    DimVector index(outer_rank), osize(outer_rank), oss(outer_rank), ods(outer_rank);
    for (size_t k = 0; k < outer_rank; ++k) osize[k] = size[k], oss[k] = ss[k], ods[k] = ds[k];
    const auto [begin, end] = ShareOf(part, out.num_elements / inner);
    if (begin == end) return OkStatus();
    int64_t so = 0, dof = 0;
    SetIndex(begin, index, osize, oss, ods, so, dof);
    const size_t row_bytes = static_cast<size_t>(inner) * sizeof(W);
    for (int64_t r = begin; r < end; ++r) {
      std::memcpy(dst + dof, src + so, row_bytes);
      StepIndex(index, osize, oss, ods, so, dof);
    }
    return OkStatus();
  }

  // Tiled: a = n - 1 (innermost in the output), b = the dim innermost in the input.
  const size_t a = n - 1;
  size_t b = 0;
  while (ss[b] != 1) ++b;
  const int64_t size_a = size[a], size_b = size[b], lds = ss[a], ldd = ds[b];
  const size_t outer_rank = n - 2;
  DimVector index(outer_rank), osize(outer_rank), oss(outer_rank), ods(outer_rank);
  for (size_t i = 0, k = 0; i < n; ++i) {
    if (i == a || i == b) continue;
    osize[k] = size[i], oss[k] = ss[i], ods[k] = ds[i];
    ++k;
  }
  // Units: (outer index, chunk of kChunk tiles along a, tile along b), b fastest, so that
  // consecutive tiles read the same input rows (pages) further along.
  constexpr int64_t kTile = kTransposeTile<kBytes>, kChunk = kTile * kTransposeChunkTiles;
  const int64_t b_tiles = (size_b + kTile - 1) / kTile, a_chunks = (size_a + kChunk - 1) / kChunk;
  const int64_t outer = out.num_elements / (size_a * size_b);
  const auto [begin, end] = ShareOf(part, outer * a_chunks * b_tiles);
  if (begin == end) return OkStatus();
  int64_t so = 0, dof = 0;
  int64_t tb = begin % b_tiles, ca = begin / b_tiles % a_chunks;
  SetIndex(begin / b_tiles / a_chunks, index, osize, oss, ods, so, dof);
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t ib = tb * kTile, rows = std::min(kTile, size_b - ib);
    const int64_t a_end = std::min(size_a, (ca + 1) * kChunk);
    W* d = dst + dof + ib * ldd;
    const W* s = src + so + ib;
    for (int64_t ia = ca * kChunk; ia < a_end; ia += kTile)
      TransposeTile<kBytes>(d + ia, ldd, s + ia * lds, lds, rows, std::min(kTile, a_end - ia));
    if (++tb == b_tiles) {
      tb = 0;
      if (++ca == a_chunks) {
        ca = 0;
        StepIndex(index, osize, oss, ods, so, dof);
      }
    }
  }
  return OkStatus();
}

template <int kBytes>
Status SliceKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const std::vector<int64_t>& start = args.Params<SliceParams>().start;
  const std::vector<int64_t>& stride = args.Params<SliceParams>().stride;
  DimVector in_strides = DenseStrides(in.dims);
  DimVector src_strides(out.dims.size());
  int64_t offset = 0;
  for (size_t i = 0; i < out.dims.size(); ++i) {
    offset += start[i] * in_strides[i];
    src_strides[i] = stride[i] * in_strides[i];
  }
  DimVector dst_strides = DenseStrides(out.dims);
  StridedCopyShare(context, out.as<W>(), {dst_strides.data(), dst_strides.size()}, in.as<const W>() + offset,
                   {src_strides.data(), src_strides.size()}, out.dims);
  return OkStatus();
}

template <int kBytes>
Status ConcatenateKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& out = args.outputs[0];
  const size_t dim = static_cast<size_t>(args.Params<ConcatenateParams>().dimension);
  DimVector dst_strides = DenseStrides(out.dims);
  int64_t position = 0;
  for (const BufferView& in : args.inputs) {
    DimVector src_strides = DenseStrides(in.dims);
    StridedCopyShare(context, out.as<W>() + position * dst_strides[dim], {dst_strides.data(), dst_strides.size()},
                     in.as<const W>(), {src_strides.data(), src_strides.size()}, in.dims);
    position += in.dims[dim];
  }
  return OkStatus();
}

// Rows of `inner` equal values (out index, iota index): the share of the outer * size rows
// of this call; along the last dimension (inner = 1) the first row of values is written
// once and copied to the other rows.
template <DType D>
Status IotaKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  const BufferView& out = args.outputs[0];
  T* data = out.as<T>();
  if (out.num_elements == 0) return OkStatus();
  const size_t dim = static_cast<size_t>(args.Params<IotaParams>().dimension);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dim; ++i) outer *= out.dims[i];
  for (size_t i = dim + 1; i < out.dims.size(); ++i) inner *= out.dims[i];
  const int64_t size = out.dims[dim];
  auto value_of = [](int64_t i) {
    if constexpr (kIsHalf<T>) return StoreAs<T>(static_cast<float>(i));
    else if constexpr (kIsComplex<T>) return T(static_cast<Part<T>>(i), 0);
    else return static_cast<T>(i);
  };
  if (inner == 1) {
    const auto [begin, end] = ShareOf(context, outer);
    if (begin == end) return OkStatus();
    T* first = data + begin * size;
    for (int64_t i = 0; i < size; ++i) first[i] = value_of(i);
    for (int64_t o = begin + 1; o < end; ++o)
      std::memcpy(static_cast<void*>(data + o * size), first, static_cast<size_t>(size) * sizeof(T));
    return OkStatus();
  }
  const auto [begin, end] = ShareOf(context, outer * size);
  for (int64_t r = begin; r < end; ++r) {
    const T value = value_of(r % size);
    T* row = data + r * inner;
    for (int64_t k = 0; k < inner; ++k) row[k] = value;
  }
  return OkStatus();
}

}  // namespace

Status RegisterDataMovementKernels(KernelRegistry& r) {
  return ForEachDType(MovableDTypes{}, [&]<DType D>() {
    constexpr int kBytes = static_cast<int>(sizeof(Storage<D>));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable(KernelKey("copy", {D}), &CopyKernel));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<BroadcastInDimParams>(KernelKey("broadcast_in_dim", {D}), &BroadcastInDimKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<TransposeParams>(KernelKey("transpose", {D}), &TransposeKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<SliceParams>(KernelKey("slice", {D}), &SliceKernel<kBytes>));
    STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<ConcatenateParams>(KernelKey("concatenate", {D}), &ConcatenateKernel<kBytes>));
    if constexpr (D != DType::kPred && kNarrowIntBits<D> == 0 && !kIsMinifloat<Storage<D>>) {
      STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<IotaParams>(KernelKey("iota", {D}), &IotaKernel<D>));
    }
    return OkStatus();
  });
}

}  // namespace stablert::kernels
