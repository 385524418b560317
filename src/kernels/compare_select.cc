// compare, select and clamp kernels. All three are splittable: each call of a split step
// does its ShareOf the elements. f32/f64/s32 compares (not TOTALORDER), selects of every
// element width up to 8 bytes and f32/f64 clamps run on the host's vector ISA
// (simd/compare_select_simd.h), with the same results as the scalar loops here.
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/compare_params.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/scalar_program.h"
#include "kernels/simd/compare_select_simd.h"

namespace stablert::kernels {
namespace {

using Direction = CompareDirection;
constexpr Direction kEq = Direction::kEq, kNe = Direction::kNe, kGe = Direction::kGe, kGt = Direction::kGt,
                    kLe = Direction::kLe, kLt = Direction::kLt;

template <Direction kDir, typename C>
inline uint8_t Compare(C a, C b) {
  if constexpr (kDir == kEq) return a == b;
  else if constexpr (kDir == kNe) return a != b;
  else if constexpr (kDir == kGe) return a >= b;
  else if constexpr (kDir == kGt) return a > b;
  else if constexpr (kDir == kLe) return a <= b;
  else return a < b;
}

template <Direction kDir, bool kTotal, typename T>
void CompareLoop(const T* a, const T* b, uint8_t* out, int64_t n) {
  if constexpr (kTotal) {
    for (int64_t i = 0; i < n; ++i) out[i] = Compare<kDir>(ops::TotalOrderKey(a[i]), ops::TotalOrderKey(b[i]));
  } else if constexpr (kIsHalf<T>) {
    for (int64_t i = 0; i < n; ++i) out[i] = Compare<kDir>(Load(a[i]), Load(b[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Compare<kDir>(a[i], b[i]);
  }
}

template <bool kTotal, typename T>
void CompareDispatch(Direction direction, const T* a, const T* b, uint8_t* out, int64_t n) {
  switch (direction) {
    case kEq: return CompareLoop<kEq, kTotal>(a, b, out, n);
    case kNe: return CompareLoop<kNe, kTotal>(a, b, out, n);
    case kGe: return CompareLoop<kGe, kTotal>(a, b, out, n);
    case kGt: return CompareLoop<kGt, kTotal>(a, b, out, n);
    case kLe: return CompareLoop<kLe, kTotal>(a, b, out, n);
    default: return CompareLoop<kLt, kTotal>(a, b, out, n);
  }
}

template <DType D>
void CompareTile(const void* const* inputs, void* output, int64_t n, const void* params) {
  using T = Storage<D>;
  const auto& p = *static_cast<const CompareParams*>(params);
  const bool total_order = p.type == CompareType::kTotalOrder;
  const T* a = static_cast<const T*>(inputs[0]);
  const T* b = static_cast<const T*>(inputs[1]);
  auto* out = static_cast<uint8_t*>(output);
  if (n <= 0) return;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    if (!total_order) return simd::Compare(static_cast<int>(p.direction), a, b, out, n);
  }
  if constexpr (IsFloatStorage<T>()) {
    if (total_order) return CompareDispatch<true>(p.direction, a, b, out, n);
  }
  CompareDispatch<false>(p.direction, a, b, out, n);
}

// select on dense operands (the kernel also takes a rank-0 predicate).
template <DType D>
void SelectTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  const auto* pred = static_cast<const uint8_t*>(inputs[0]);
  const T* on_true = static_cast<const T*>(inputs[1]);
  const T* on_false = static_cast<const T*>(inputs[2]);
  T* out = static_cast<T*>(output);
  if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
    using W = WordType<sizeof(T)>;
    simd::Select(pred, reinterpret_cast<const W*>(on_true), reinterpret_cast<const W*>(on_false),
                 reinterpret_cast<W*>(out), n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = pred[i] ? on_true[i] : on_false[i];
  }
}

template <DType D>
Status SelectKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  const BufferView& pred_view = args.inputs[0];
  const auto [begin, end] = ShareOf(context, args.outputs[0].num_elements);
  const int64_t n = end - begin;
  if (n <= 0) return OkStatus();
  const uint8_t* pred = pred_view.as<const uint8_t>();
  const T* on_true = args.inputs[1].as<const T>() + begin;
  const T* on_false = args.inputs[2].as<const T>() + begin;
  T* out = args.outputs[0].as<T>() + begin;
  if (pred_view.rank() == 0) {
    std::memcpy(static_cast<void*>(out), pred[0] ? on_true : on_false, static_cast<size_t>(n) * sizeof(T));
    return OkStatus();
  }
  const void* dense[3] = {pred + begin, on_true, on_false};
  SelectTile<D>(dense, out, n, nullptr);
  return OkStatus();
}

// lo and hi advance by lo_step / hi_step elements (0: one value for all).
template <DType D>
void ClampRun(const Storage<D>* lo, int64_t lo_step, const Storage<D>* x, const Storage<D>* hi, int64_t hi_step,
              Storage<D>* out, int64_t n) {
  using T = Storage<D>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    simd::Clamp(lo, lo_step, x, hi, hi_step, out, n);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = StoreAs<T>(ops::ClampOne(Load(lo[i * lo_step]), Load(x[i]), Load(hi[i * hi_step])));
  }
}

// clamp on dense operands (the kernel also takes rank-0 bounds).
template <DType D>
void ClampTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  ClampRun<D>(static_cast<const T*>(inputs[0]), 1, static_cast<const T*>(inputs[1]), static_cast<const T*>(inputs[2]),
              1, static_cast<T*>(output), n);
}

template <DType D>
Status ClampKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  const BufferView& lo_view = args.inputs[0];
  const BufferView& hi_view = args.inputs[2];
  const auto [begin, end] = ShareOf(context, args.outputs[0].num_elements);
  const int64_t n = end - begin;
  if (n <= 0) return OkStatus();
  const int64_t lo_step = lo_view.rank() == 0 ? 0 : 1;
  const int64_t hi_step = hi_view.rank() == 0 ? 0 : 1;
  ClampRun<D>(lo_view.as<const T>() + begin * lo_step, lo_step, args.inputs[1].as<const T>() + begin,
              hi_view.as<const T>() + begin * hi_step, hi_step, args.outputs[0].as<T>() + begin, n);
  return OkStatus();
}

template <DType D>
void CompareScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  const bool total_order = i.attr % 8 == static_cast<int64_t>(CompareType::kTotalOrder);
  SetSlot(r[i.dst], ops::CompareValues(GetSlot<T>(r[i.a]), GetSlot<T>(r[i.b]), i.attr / 8, total_order));
}

template <DType D>
void ClampScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  SetSlot(r[i.dst], StoreAs<T>(ops::ClampOne(Load(GetSlot<T>(r[i.a])), Load(GetSlot<T>(r[i.b])),
                                             Load(GetSlot<T>(r[i.c])))));
}

}  // namespace

Status RegisterCompareSelectKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(ForEachDType(ComplexDTypes{}, [&]<DType D>() {
    STABLERT_RETURN_IF_ERROR(r.RegisterElementwise<&SelectKernel<D>>(KernelKey("select", {D})));
    return r.DeclareTile(KernelKey("select", {D}), &SelectTile<D>);
  }));
  return ForEachDType(AllDTypes{}, [&]<DType D>() {
    STABLERT_RETURN_IF_ERROR(r.RegisterElementwiseTile<CompareParams, &CompareTile<D>>(KernelKey("compare", {D})));
    STABLERT_RETURN_IF_ERROR(
        r.RegisterScalar(KernelKey("compare", {D}), reinterpret_cast<KernelRegistry::ScalarFnPtr>(&CompareScalar<D>)));
    STABLERT_RETURN_IF_ERROR(r.RegisterElementwise<&SelectKernel<D>>(KernelKey("select", {D})));
    STABLERT_RETURN_IF_ERROR(r.DeclareTile(KernelKey("select", {D}), &SelectTile<D>));
    if constexpr (D != DType::kPred) {
      STABLERT_RETURN_IF_ERROR(r.RegisterElementwise<&ClampKernel<D>>(KernelKey("clamp", {D})));
      STABLERT_RETURN_IF_ERROR(r.DeclareTile(KernelKey("clamp", {D}), &ClampTile<D>));
      STABLERT_RETURN_IF_ERROR(
          r.RegisterScalar(KernelKey("clamp", {D}), reinterpret_cast<KernelRegistry::ScalarFnPtr>(&ClampScalar<D>)));
    }
    return OkStatus();
  });
}

}  // namespace stablert::kernels
