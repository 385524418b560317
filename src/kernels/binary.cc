// Elementwise binary kernels: "<op>.<T>", out[i] = op(a[i], b[i]). Semantics in
// scalar_ops.h; on i1, add/maximum are "or" and multiply/minimum "and".
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/scalar_program.h"
#include "kernels/simd/binary_simd.h"

namespace stablert::kernels {
namespace {

using namespace ops;  // NOLINT

template <typename Op, DType D>
void BinaryTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  const T* a = static_cast<const T*>(inputs[0]);
  const T* b = static_cast<const T*>(inputs[1]);
  T* out = static_cast<T*>(output);
  if constexpr (kIsHalf<T>) {
    for (int64_t i = 0; i < n; ++i) out[i] = StoreAs<T>(Op::Apply(Load(a[i]), Load(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], b[i]);
  }
}

// The vector function of an op, where there is one (simd/binary_simd.h).
template <typename Op> constexpr int kVector = -1;
template <> constexpr int kVector<AddOp> = static_cast<int>(simd::BinaryFn::kAdd);
template <> constexpr int kVector<SubtractOp> = static_cast<int>(simd::BinaryFn::kSub);
template <> constexpr int kVector<MultiplyOp> = static_cast<int>(simd::BinaryFn::kMul);
template <> constexpr int kVector<DivideOp> = static_cast<int>(simd::BinaryFn::kDiv);
template <> constexpr int kVector<MaxOp> = static_cast<int>(simd::BinaryFn::kMax);
template <> constexpr int kVector<MinOp> = static_cast<int>(simd::BinaryFn::kMin);
template <> constexpr int kVector<PowerOp> = static_cast<int>(simd::BinaryFn::kPow);
template <> constexpr int kVector<Atan2Op> = static_cast<int>(simd::BinaryFn::kAtan2);

// The integer vector function of an op (simd::IntBinary), where there is one.
template <typename Op> constexpr int kIntVector = -1;
template <> constexpr int kIntVector<AddOp> = static_cast<int>(simd::IntBinaryFn::kAdd);
template <> constexpr int kIntVector<SubtractOp> = static_cast<int>(simd::IntBinaryFn::kSub);
template <> constexpr int kIntVector<AndOp> = static_cast<int>(simd::IntBinaryFn::kAnd);
template <> constexpr int kIntVector<OrOp> = static_cast<int>(simd::IntBinaryFn::kOr);
template <> constexpr int kIntVector<XorOp> = static_cast<int>(simd::IntBinaryFn::kXor);
template <> constexpr int kIntVector<MaxOp> = static_cast<int>(simd::IntBinaryFn::kMax);
template <> constexpr int kIntVector<MinOp> = static_cast<int>(simd::IntBinaryFn::kMin);
template <> constexpr int kIntVector<ShiftLeftOp> = static_cast<int>(simd::IntBinaryFn::kShiftLeft);
template <> constexpr int kIntVector<ShiftRightLogicalOp> = static_cast<int>(simd::IntBinaryFn::kShiftRightLogical);
template <> constexpr int kIntVector<ShiftRightArithmeticOp> =
    static_cast<int>(simd::IntBinaryFn::kShiftRightArithmetic);

// Integer dtypes (not i1, whose add/multiply are or/and) with an integer vector function.
template <typename Op, DType D>
constexpr bool kIntVectorFor =
    kIntVector<Op> >= 0 && (D == DType::kS8 || D == DType::kS16 || D == DType::kS32 || D == DType::kS64 ||
                            D == DType::kU8 || D == DType::kU16 || D == DType::kU32 || D == DType::kU64);

template <typename Op, DType D>
void IntBinaryVectorTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  if (n <= 0) return;
  simd::IntBinary(static_cast<simd::IntBinaryFn>(kIntVector<Op>), static_cast<const T*>(inputs[0]),
                  static_cast<const T*>(inputs[1]), static_cast<T*>(output), static_cast<size_t>(n));
}

// power and atan2 have only an f32 vector function; on f64 they stay libm's (correctly
// rounded or nearly, as XLA's).
template <typename Op, DType D>
constexpr bool kVectorFor = kVector<Op> >= 0 && (D == DType::kF32 || D == DType::kF16 || D == DType::kBF16 ||
                                                 (D == DType::kF64 && !std::is_same_v<Op, PowerOp> &&
                                                  !std::is_same_v<Op, Atan2Op>));

// Float ops with a vector function run on the host's vector ISA; f16/bf16 in f32 lanes
// (widened exactly in registers, computed in f32 and rounded once, as XLA computes them).
template <typename Op, DType D>
void BinaryVectorTile(const void* const* inputs, void* output, int64_t n, const void*) {
  using T = Storage<D>;
  const T* a = static_cast<const T*>(inputs[0]);
  const T* b = static_cast<const T*>(inputs[1]);
  T* out = static_cast<T*>(output);
  const auto fn = static_cast<simd::BinaryFn>(kVector<Op>);
  if (n <= 0) return;
  if constexpr (kIsHalf<T>) {
    const auto* a16 = reinterpret_cast<const uint16_t*>(a);
    const auto* b16 = reinterpret_cast<const uint16_t*>(b);
    auto* out16 = reinterpret_cast<uint16_t*>(out);
    if constexpr (std::is_same_v<T, BF16>) simd::BinaryBF16(fn, a16, b16, out16, static_cast<size_t>(n));
    else simd::BinaryF16(fn, a16, b16, out16, static_cast<size_t>(n));
  } else {
    simd::Binary(fn, a, b, out, static_cast<size_t>(n));
  }
}

// The scalar function computes what the kernel computes for one element: power and atan2,
// whose vector functions are approximations of their own, call them on that element (the
// other vector ops are IEEE operations, equal to the scalar op).
template <typename Op, DType D>
void BinaryScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  const T a = GetSlot<T>(r[i.a]), b = GetSlot<T>(r[i.b]);
  constexpr bool kApproximation = std::is_same_v<Op, PowerOp> || std::is_same_v<Op, Atan2Op>;
  if constexpr (kVectorFor<Op, D> && kApproximation) {
    const auto fn = static_cast<simd::BinaryFn>(kVector<Op>);
    if constexpr (kIsHalf<T>) {
      float x = Load(a), y = Load(b);
      simd::Binary(fn, &x, &y, &x, 1);
      SetSlot(r[i.dst], StoreAs<T>(x));
    } else {
      T x = a;
      simd::Binary(fn, &x, &b, &x, 1);
      SetSlot(r[i.dst], x);
    }
  } else if constexpr (kIsHalf<T>) {
    SetSlot(r[i.dst], StoreAs<T>(Op::Apply(Load(a), Load(b))));
  } else {
    SetSlot(r[i.dst], static_cast<T>(Op::Apply(a, b)));
  }
}

template <typename Op, DType... Ds>
Status Register(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() {
    if constexpr (kVectorFor<Op, D>) {
      STABLERT_RETURN_IF_ERROR(registry.RegisterElementwiseTile<&BinaryVectorTile<Op, D>>(KernelKey(name, {D})));
    } else if constexpr (kIntVectorFor<Op, D>) {
      STABLERT_RETURN_IF_ERROR(registry.RegisterElementwiseTile<&IntBinaryVectorTile<Op, D>>(KernelKey(name, {D})));
    } else {
      STABLERT_RETURN_IF_ERROR(registry.RegisterElementwiseTile<&BinaryTile<Op, D>>(KernelKey(name, {D})));
    }
    return registry.RegisterScalar(KernelKey(name, {D}),
                                   reinterpret_cast<KernelRegistry::ScalarFnPtr>(&BinaryScalar<Op, D>));
  });
}

using Pred = DTypeList<DType::kPred>;
using IntAndFloatDTypes =
    DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
              DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;
using IntAndPredDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8,
                                   DType::kU16, DType::kU32, DType::kU64>;

}  // namespace

Status RegisterBinaryKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(Register<AddOp>(r, "add", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrOp>(r, "add", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<SubtractOp>(r, "subtract", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MultiplyOp>(r, "multiply", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndOp>(r, "multiply", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<DivideOp>(r, "divide", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<RemainderOp>(r, "remainder", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MaxOp>(r, "maximum", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<MinOp>(r, "minimum", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<PowerOp>(r, "power", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<Atan2Op>(r, "atan2", FloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<AndOp>(r, "and", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<OrOp>(r, "or", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<XorOp>(r, "xor", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ShiftLeftOp>(r, "shift_left", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ShiftRightLogicalOp>(r, "shift_right_logical", IntDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ShiftRightArithmeticOp>(r, "shift_right_arithmetic", IntDTypes{}));
  return OkStatus();
}

}  // namespace stablert::kernels
