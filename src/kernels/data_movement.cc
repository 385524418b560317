// Data movement kernels: copy, broadcast_in_dim, transpose, slice, concatenate, iota.
// Parameters: kernels/data_movement_params.h (copy takes none).
// All but iota only move bytes, so one instantiation per element width serves every dtype.
// All are splittable: each call of a split step writes its share of the output (rows of
// the merged strided copy, StridedCopyShare; transpose: tiles; iota: rows).
#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/data_movement_params.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/simd/movement_simd.h"
#include "kernels/simd/transpose_simd.h"
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
// written along output rows, so both sides stay in cache; within a tile, 2-, 4- and 8-byte
// elements move as in-register blocks of the host's vector width (simd/transpose_simd.h:
// 16x16 f32 with AVX-512, each block row one whole cache line). Arrays of kMinTransposeToSplit
// elements or more are split across the calls of a step by ranges of units (outer index,
// chunk of tiles along a, tile along b) or of rows for a row copy; smaller ones run on the
// first call alone.
constexpr int64_t kMinTransposeToSplit = int64_t{1} << 18;

// Tiles along a per unit of work. (Measured with benchmarks/transpose_kernel_benchmark: tiles of
// 16-256 along b and 16-256 along a per unit are within the machine's noise of each other.)
constexpr int64_t kTransposeChunkTiles = 8;

// Elements per tile side: a tile row spans at least one 64-byte cache line.
template <int kBytes>
constexpr int64_t kTransposeTile = kBytes >= 4 ? 16 : 64 / kBytes;

// Outputs of 16 MiB or more (half the 32 MiB L3 of the reference machine) are written with
// non-temporal stores: they would mostly not stay in the cache for the next step anyway,
// streaming saves reading each output line before it is overwritten, and it leaves the cache
// to the input. It took a 2048x2048 f32 transpose (16 MiB out) from 30 to 65 GB/s and a
// 4096x4096 one from 20 to 33 GB/s (docs/benchmarks.md); row copies of such outputs stream
// too (64x512x512 (1,0,2) f32: 3.4-3.8 -> 2.5-2.7 ms). A constant, not the cache size the
// system reports: glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) says 384 MiB in the VM (the host's).
constexpr int64_t kMinTransposeBytesToStream = int64_t{16} << 20;

// dst[i * ldd + j] = src[j * lds + i] for i < rows, j < cols.
template <typename W>
inline void TransposeBlockScalar(W* dst, int64_t ldd, const W* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    W* d = dst + i * ldd;
    const W* s = src + i;
    for (int64_t j = 0; j < cols; ++j) d[j] = s[j * lds];
  }
}

// dst[i * ldd + j] = src[j * lds + i] for i < rows, j < cols: in-register blocks for 2-, 4-
// and 8-byte elements (simd/transpose_simd.h), element copies for 1 and 16 bytes.
template <int kBytes>
inline void TransposeTile(WordType<kBytes>* dst, int64_t ldd, const WordType<kBytes>* src, int64_t lds,
                          int64_t rows, int64_t cols, bool stream) {
  if constexpr (kBytes == 2 || kBytes == 4 || kBytes == 8) simd::TransposeTile(dst, ldd, src, lds, rows, cols, stream);
  else TransposeBlockScalar(dst, ldd, src, lds, rows, cols);
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
    // The rows are visited in input order (outer dims sorted by input stride, largest
    // first), so the reads run through the input as one stream and the writes go to a
    // few output streams: with perm (1, 0, 2) of 64x256x256 the output order would read 64
    // rows 256 KiB apart for every 64 KiB written.
    const int64_t inner = size[n - 1];
    const size_t outer_rank = n - 1;
    DimVector index(outer_rank), osize(outer_rank), oss(outer_rank), ods(outer_rank);
    for (size_t k = 0; k < outer_rank; ++k) osize[k] = size[k], oss[k] = ss[k], ods[k] = ds[k];
    for (size_t k = 1; k < outer_rank; ++k) {  // insertion sort by input stride, descending
      for (size_t j = k; j > 0 && oss[j - 1] < oss[j]; --j) {
        std::swap(osize[j - 1], osize[j]);
        std::swap(oss[j - 1], oss[j]);
        std::swap(ods[j - 1], ods[j]);
      }
    }
    const auto [begin, end] = ShareOf(part, out.num_elements / inner);
    if (begin == end) return OkStatus();
    int64_t so = 0, dof = 0;
    SetIndex(begin, index, osize, oss, ods, so, dof);
    const size_t row_bytes = static_cast<size_t>(inner) * sizeof(W);
    const bool stream = out.num_elements * kBytes >= kMinTransposeBytesToStream;
    for (int64_t r = begin; r < end; ++r) {
      if (stream) simd::StreamCopy(dst + dof, src + so, static_cast<int64_t>(row_bytes));
      else std::memcpy(dst + dof, src + so, row_bytes);
      StepIndex(index, osize, oss, ods, so, dof);
    }
    if (stream) simd::TransposeStreamFence();
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
  const bool stream = out.num_elements * kBytes >= kMinTransposeBytesToStream;
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t ib = tb * kTile, rows = std::min(kTile, size_b - ib);
    const int64_t a_begin = ca * kChunk, a_end = std::min(size_a, a_begin + kChunk);
    TransposeTile<kBytes>(dst + dof + ib * ldd + a_begin, ldd, src + so + ib + a_begin * lds, lds, rows,
                          a_end - a_begin, stream);
    if (++tb == b_tiles) {
      tb = 0;
      if (++ca == a_chunks) {
        ca = 0;
        StepIndex(index, osize, oss, ods, so, dof);
      }
    }
  }
  if (stream) simd::TransposeStreamFence();
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
    if constexpr (D == DType::kS32 || D == DType::kS64) {
      // Every row computed in vectors: stores only, no second pass reading a first row.
      for (int64_t o = begin; o < end; ++o) simd::IotaRow(data + o * size, size, T{0});
      return OkStatus();
    }
    T* first = data + begin * size;
    for (int64_t i = 0; i < size; ++i) first[i] = value_of(i);
    for (int64_t o = begin + 1; o < end; ++o)
      std::memcpy(static_cast<void*>(data + o * size), first, static_cast<size_t>(size) * sizeof(T));
    return OkStatus();
  }
  // Rows of equal values: vector fills (CopyRow from a step-0 source).
  const auto [begin, end] = ShareOf(context, outer * size);
  for (int64_t r = begin; r < end; ++r) {
    const T value = value_of(r % size);
    CopyRow(data + r * inner, 1, &value, 0, inner);
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
