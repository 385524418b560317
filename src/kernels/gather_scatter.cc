// gather and scatter kernels (StableHLO semantics, XLA's out-of-bounds behaviour).
//
//   "gather.<T>"          in: operand, start_indices (any integer type)   out: result
//     params: [[offset_dims], [collapsed_slice_dims], [operand_batching_dims],
//              [start_indices_batching_dims], [start_index_map], [index_vector_dim],
//              [slice_sizes]]
//     Start indices are clamped so each slice lies inside the operand.
//   "scatter_<body>.<T>"  body in assign, add, mul, max, min, and, or
//   "scatter_program"     (last param: the body program, (current, update) -> new)
//     in: operand, scatter_indices (any integer type), updates   out: result
//     params: [[update_window_dims], [inserted_window_dims], [input_batching_dims],
//              [scatter_indices_batching_dims], [scatter_dims_to_operand_dims],
//              [index_vector_dim]] (+ [program])
//     The result starts as a copy of the operand; updates are applied in row-major order
//     of the update batch positions; a window that does not fit entirely inside the
//     operand is skipped, as XLA does.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/complex_ops.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/scalar_program.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {


bool Contains(const ParamList& list, int64_t value) { return std::find(list.begin(), list.end(), value) != list.end(); }

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
    const uint8_t* p = data_ + (batch_offset + k * vector_stride_) * size_;
    auto load = [p](auto value) {
      std::memcpy(&value, p, sizeof(value));
      return value;
    };
    switch (dtype_) {
      case DType::kS8: return load(int8_t{});
      case DType::kS16: return load(int16_t{});
      case DType::kS32: return load(int32_t{});
      case DType::kS64: return load(int64_t{});
      case DType::kU8: return load(uint8_t{});
      case DType::kU16: return load(uint16_t{});
      case DType::kU32: return load(uint32_t{});
      case DType::kU64: return static_cast<int64_t>(std::min<uint64_t>(load(uint64_t{}), INT64_MAX));
      default: return 0;
    }
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

template <int kBytes>
Status GatherKernel(const KernelContext& context, const KernelArgs& args) {
  using W = WordType<kBytes>;
  const BufferView& operand = args.inputs[0];
  const BufferView& indices = args.inputs[1];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const ParamList& offset_dims = args.params[0];
  const ParamList& collapsed = args.params[1];
  const ParamList& operand_batching = args.params[2];
  const ParamList& indices_batching = args.params[3];
  const ParamList& start_index_map = args.params[4];
  const int64_t index_vector_dim = args.params[5][0];
  const ParamList& slice_sizes = args.params[6];
  const size_t operand_rank = operand.dims.size();
  const size_t out_rank = out.dims.size();

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
  for (int64_t position = first_position; position < last_position; ++position) {
    const int64_t index_offset = reader.BatchOffset(batch);
    for (size_t d = 0; d < operand_rank; ++d) start[d] = 0;
    for (size_t k = 0; k < start_index_map.size(); ++k)
      start[static_cast<size_t>(start_index_map[k])] = reader.Read(index_offset, static_cast<int64_t>(k));
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
    if (slice_elements == 1) {
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
void ScatterWalk(const KernelArgs& args, Apply apply) {
  const BufferView& operand = args.inputs[0];
  const BufferView& indices = args.inputs[1];
  const BufferView& updates = args.inputs[2];
  const ParamList& window_dims = args.params[0];
  const ParamList& inserted = args.params[1];
  const ParamList& input_batching = args.params[2];
  const ParamList& indices_batching = args.params[3];
  const ParamList& to_operand = args.params[4];
  const int64_t index_vector_dim = args.params[5][0];
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
      start[static_cast<size_t>(to_operand[k])] = reader.Read(index_offset, static_cast<int64_t>(k));
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

struct AssignBody {
  template <typename C> static C Apply(C, C update) { return update; }
};

template <typename Body, DType D>
Status ScatterKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const BufferView& operand = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements > 0) std::memcpy(out.data, operand.data, static_cast<size_t>(out.num_elements) * sizeof(T));
  T* result = out.as<T>();
  const T* updates = args.inputs[2].as<const T>();
  ScatterWalk(args, [&](int64_t r, int64_t u) {
    if constexpr (kIsHalf<T>) result[r] = StoreAs<T>(Body::Apply(Load(result[r]), Load(updates[u])));
    else result[r] = Body::Apply(result[r], updates[u]);
  });
  return OkStatus();
}

StatusOr<PreparedStep> PrepareScatterProgram(const KernelArgs& args) {
  if (args.params.size() != 7) return InvalidArgument("scatter_program expects seven parameter lists");
  STABLERT_ASSIGN_OR_RETURN(ScalarProgram program, ScalarProgram::Decode(args.params[6], CpuKernels()));
  const DType dtype = args.inputs[0].dtype;
  if (program.num_inputs() != 2 || program.outputs().size() != 1 || program.register_dtype(0) != dtype ||
      program.register_dtype(1) != dtype || program.register_dtype(program.outputs()[0]) != dtype)
    return InvalidArgument("scatter body types do not match the operand");
  return KernelState(std::make_shared<const ScalarProgram>(std::move(program)));
}

Status ScatterProgramKernel(const KernelContext&, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("ScatterProgram called without its prepared state");
  const auto& program = *static_cast<const ScalarProgram*>(args.state);
  const BufferView& operand = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const int size = DTypeByteSize(out.dtype);
  if (out.num_elements > 0) std::memcpy(out.data, operand.data, static_cast<size_t>(out.num_elements) * size);
  std::vector<ScalarSlot> registers(static_cast<size_t>(program.num_registers()));
  program.Initialize(registers.data());
  auto* result = static_cast<uint8_t*>(out.data);
  const auto* updates = static_cast<const uint8_t*>(args.inputs[2].data);
  const int32_t output = program.outputs()[0];
  ScatterWalk(args, [&](int64_t r, int64_t u) {
    std::memcpy(&registers[0], result + r * size, size);
    std::memcpy(&registers[1], updates + u * size, size);
    program.Run(registers.data());
    std::memcpy(result + r * size, &registers[static_cast<size_t>(output)], size);
  });
  return OkStatus();
}

template <typename Body, DType... Ds>
Status RegisterScatter(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() { return registry.Register(KernelKey(name, {D}), &ScatterKernel<Body, D>); });
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
    return r.RegisterSplittable(KernelKey("gather", {D}), &GatherKernel<static_cast<int>(sizeof(Storage<D>))>);
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
  STABLERT_RETURN_IF_ERROR(r.Register("scatter_program", &ScatterProgramKernel, &PrepareScatterProgram));
  return OkStatus();
}

}  // namespace stablert::kernels
