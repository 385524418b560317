// Reductions with a recognized body: "reduce_<body>.<T>" for body in add, mul, max, min,
// and, or. out = init op x[...] over the reduced dimensions, each output accumulated in
// row-major order of the reduced elements. f16/bf16 round to their format after every
// step, as XLA's CPU backend does (f32 holds each exact sum/product before rounding);
// f32/f64 sums of contiguous rows use several partial sums. Float max/min follow the
// elementwise maximum/minimum semantics (NaN propagates, -0 < +0).
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

using AddBody = ops::AddOp;
using MulBody = ops::MultiplyOp;
using MaxBody = ops::MaxOp;
using MinBody = ops::MinOp;
using AndBody = ops::AndOp;
using OrBody = ops::OrOp;

// Reduces a contiguous row into `acc`. Float sums use several partial accumulators so
// the loop vectorizes without reassociation flags.
template <typename Body, typename C, typename T>
inline C ReduceRow(C acc, const T* row, int64_t n) {
  if constexpr (std::is_same_v<Body, AddBody> && std::is_floating_point_v<C> && !kIsHalf<T>) {
    constexpr int kLanes = 8;
    C partial[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) partial[j] += row[i + j];
    C sum = 0;
    for (int j = 0; j < kLanes; ++j) sum += partial[j];
    for (; i < n; ++i) sum += row[i];
    return acc + sum;
  } else if constexpr (kIsHalf<T>) {
    for (int64_t i = 0; i < n; ++i) acc = Load(StoreAs<T>(Body::Apply(acc, Load(row[i]))));
    return acc;
  } else {
    for (int64_t i = 0; i < n; ++i) acc = Body::Apply(acc, static_cast<C>(Load(row[i])));
    return acc;
  }
}

// One accumulation step, rounded to the storage format for f16/bf16.
template <typename Body, typename T>
inline Compute<T> Step(Compute<T> acc, T x) {
  if constexpr (kIsHalf<T>) return Load(StoreAs<T>(Body::Apply(acc, Load(x))));
  else return Body::Apply(acc, x);
}

template <typename Body, DType D>
Status ReduceKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  using C = Compute<T>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const C init = Load(args.inputs[1].as<const T>()[0]);
  const ParamList& reduced = args.params[0];

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
    DimVector is_reduced(rank, 0);
    for (int64_t d : reduced) is_reduced[static_cast<size_t>(d)] = 1;
    DimVector size(rank), out_stride(rank), flag(rank);
    size_t n = 0;
    for (size_t i = 0; i < rank; ++i) {
      if (in.dims[i] == 1) continue;
      if (n > 0 && flag[n - 1] == is_reduced[i]) {
        size[n - 1] *= in.dims[i];
        continue;
      }
      size[n] = in.dims[i];
      flag[n] = is_reduced[i];
      ++n;
    }
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
      DimVector index(n, 0);
      int64_t out_offset = 0;
      const T* row = src;
      while (true) {
        if (inner_reduced) {
          acc[out_offset] = ReduceRow<Body>(acc[out_offset], row, inner);
        } else {
          C* dst = acc + out_offset;
          for (int64_t i = 0; i < inner; ++i) dst[i] = Step<Body>(dst[i], row[i]);
        }
        row += inner;
        size_t dim = n - 1;
        bool done = false;
        while (true) {
          if (dim == 0) {
            done = true;
            break;
          }
          --dim;
          if (++index[dim] < size[dim]) {
            out_offset += out_stride[dim];
            break;
          }
          out_offset -= out_stride[dim] * (size[dim] - 1);
          index[dim] = 0;
        }
        if (done) break;
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
  return ForEachDType(list, [&]<DType D>() { return registry.Register(KernelKey(name, {D}), &ReduceKernel<Body, D>); });
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
  STABLERT_RETURN_IF_ERROR(Register<MulBody>(r, "reduce_mul", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndBody>(r, "reduce_mul", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<MaxBody>(r, "reduce_max", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MinBody>(r, "reduce_min", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndBody>(r, "reduce_and", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrBody>(r, "reduce_or", IntAndPredDTypes{}));
  return OkStatus();
}

}  // namespace stablert::kernels
