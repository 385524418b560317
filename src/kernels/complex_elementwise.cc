// Elementwise kernels on complex element types (semantics in complex_ops.h):
//   unary  "<op>.complex<f32|f64>"  negate, sign, sqrt, rsqrt, exponential,
//          exponential_minus_one, log, log_plus_one, sine, cosine, tan, tanh, logistic
//          (complex result); abs, real, imag (result of the part type f32/f64)
//   binary "<op>.complex<f32|f64>"  add, subtract, multiply, divide, power, atan2
//   "complex.<f32|f64>"             in: real, imag (same shape)  out: complex
//   "compare.complex<f32|f64>"      params: CompareParams (any direction, type FLOAT;
//                                   GE/GT/LE/LT lexicographic on (real, imag))
//   binary "maximum"/"minimum" (by the real parts, as XLA's), "clamp.complex<f32|f64>" in: min, operand,
//          max (min and max scalars or shaped like the operand)
// Each has a scalar function of the same key for body programs. Unary and binary kernels
// split over threads, and write over a dying input of the output's type (InPlace::kElementwise).
#include <complex>

#include "kernels/compare_params.h"
#include "kernels/complex_ops.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_program.h"

namespace stablert::kernels {
namespace {

template <DType D>
constexpr DType PartDType() {
  return D == DType::kC64 ? DType::kF32 : DType::kF64;
}

template <typename Op, DType In, DType Out>
Status UnaryKernel(const KernelContext& context, const KernelArgs& args) {
  const auto* in = args.inputs[0].as<const Storage<In>>();
  auto* out = args.outputs[0].as<Storage<Out>>();
  const auto [begin, end] = ShareOf(context, args.outputs[0].num_elements);
  for (int64_t i = begin; i < end; ++i) out[i] = Op::Apply(in[i]);
  return OkStatus();
}

template <typename Op, DType In, DType Out>
void UnaryScalar(ScalarSlot* r, const ScalarInstruction& i) {
  SetSlot(r[i.dst], static_cast<Storage<Out>>(Op::Apply(GetSlot<Storage<In>>(r[i.a]))));
}

template <typename Op, DType D>
Status BinaryKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  const T* a = args.inputs[0].as<const T>();
  const T* b = args.inputs[1].as<const T>();
  T* out = args.outputs[0].as<T>();
  const auto [begin, end] = ShareOf(context, args.outputs[0].num_elements);
  for (int64_t i = begin; i < end; ++i) out[i] = Op::Apply(a[i], b[i]);
  return OkStatus();
}

template <typename Op, DType D>
void BinaryScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  SetSlot(r[i.dst], Op::Apply(GetSlot<T>(r[i.a]), GetSlot<T>(r[i.b])));
}

// complex(re, im) over arrays of the part type R.
template <DType R>
Status MakeComplexKernel(const KernelContext&, const KernelArgs& args) {
  using P = Storage<R>;
  const P* re = args.inputs[0].as<const P>();
  const P* im = args.inputs[1].as<const P>();
  auto* out = args.outputs[0].as<std::complex<P>>();
  const int64_t n = args.outputs[0].num_elements;
  for (int64_t i = 0; i < n; ++i) out[i] = std::complex<P>(re[i], im[i]);
  return OkStatus();
}

template <DType R>
void MakeComplexScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using P = Storage<R>;
  SetSlot(r[i.dst], std::complex<P>(GetSlot<P>(r[i.a]), GetSlot<P>(r[i.b])));
}

template <DType D>
Status CompareKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const T* a = args.inputs[0].as<const T>();
  const T* b = args.inputs[1].as<const T>();
  uint8_t* out = args.outputs[0].as<uint8_t>();
  const int64_t n = args.outputs[0].num_elements;
  const auto direction = static_cast<int64_t>(args.Params<CompareParams>().direction);
  for (int64_t i = 0; i < n; ++i) out[i] = cx::CompareEqNe(a[i], b[i], direction);
  return OkStatus();
}

template <DType D>
void CompareScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  SetSlot(r[i.dst], cx::CompareEqNe(GetSlot<T>(r[i.a]), GetSlot<T>(r[i.b]), i.attr / 8));
}

// clamp(min, x, max) = minimum(maximum(x, min), max), as the specification defines it.
template <DType D>
Status ClampKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const T* lo = args.inputs[0].as<const T>();
  const T* x = args.inputs[1].as<const T>();
  const T* hi = args.inputs[2].as<const T>();
  T* out = args.outputs[0].as<T>();
  const int64_t n = args.outputs[0].num_elements;
  const bool lo_scalar = args.inputs[0].num_elements == 1 && n != 1;
  const bool hi_scalar = args.inputs[2].num_elements == 1 && n != 1;
  for (int64_t i = 0; i < n; ++i)
    out[i] = cx::MinOp::Apply(cx::MaxOp::Apply(x[i], lo[lo_scalar ? 0 : i]), hi[hi_scalar ? 0 : i]);
  return OkStatus();
}

template <DType D>
void ClampScalar(ScalarSlot* r, const ScalarInstruction& i) {
  using T = Storage<D>;
  SetSlot(r[i.dst], cx::MinOp::Apply(cx::MaxOp::Apply(GetSlot<T>(r[i.b]), GetSlot<T>(r[i.a])), GetSlot<T>(r[i.c])));
}

using ScalarFnPtr = KernelRegistry::ScalarFnPtr;

template <typename Op, bool kToPart = false>
Status RegisterUnary(KernelRegistry& registry, std::string_view name) {
  return ForEachDType(ComplexDTypes{}, [&]<DType D>() {
    constexpr DType kOut = kToPart ? PartDType<D>() : D;
    const std::string key = KernelKey(name, {D});
    STABLERT_RETURN_IF_ERROR(registry.RegisterSplittable(key, &UnaryKernel<Op, D, kOut>));
    if constexpr (kOut == D) STABLERT_RETURN_IF_ERROR(registry.DeclareInPlace(key, InPlace::kElementwise));
    return registry.RegisterScalar(KernelKey(name, {D}), reinterpret_cast<ScalarFnPtr>(&UnaryScalar<Op, D, kOut>));
  });
}

template <typename Op>
Status RegisterBinary(KernelRegistry& registry, std::string_view name) {
  return ForEachDType(ComplexDTypes{}, [&]<DType D>() {
    const std::string key = KernelKey(name, {D});
    STABLERT_RETURN_IF_ERROR(registry.RegisterSplittable(key, &BinaryKernel<Op, D>));
    STABLERT_RETURN_IF_ERROR(registry.DeclareInPlace(key, InPlace::kElementwise));
    return registry.RegisterScalar(KernelKey(name, {D}), reinterpret_cast<ScalarFnPtr>(&BinaryScalar<Op, D>));
  });
}

}  // namespace

Status RegisterComplexKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::NegateOp>(r, "negate"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::AbsOp, true>(r, "abs"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::RealOp, true>(r, "real"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::ImagOp, true>(r, "imag"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::SignOp>(r, "sign"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::SqrtOp>(r, "sqrt"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::RsqrtOp>(r, "rsqrt"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::ExpOp>(r, "exponential"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::Expm1Op>(r, "exponential_minus_one"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::LogOp>(r, "log"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::Log1pOp>(r, "log_plus_one"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::SineOp>(r, "sine"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::CosineOp>(r, "cosine"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::TanOp>(r, "tan"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::TanhOp>(r, "tanh"));
  STABLERT_RETURN_IF_ERROR(RegisterUnary<cx::LogisticOp>(r, "logistic"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::AddOp>(r, "add"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::SubtractOp>(r, "subtract"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::MultiplyOp>(r, "multiply"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::DivideOp>(r, "divide"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::PowerOp>(r, "power"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::Atan2Op>(r, "atan2"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::MaxOp>(r, "maximum"));
  STABLERT_RETURN_IF_ERROR(RegisterBinary<cx::MinOp>(r, "minimum"));
  return ForEachDType(ComplexDTypes{}, [&]<DType D>() {
    constexpr DType kPart = PartDType<D>();
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("complex", {kPart}), &MakeComplexKernel<kPart>));
    STABLERT_RETURN_IF_ERROR(
        r.RegisterScalar(KernelKey("complex", {kPart}), reinterpret_cast<ScalarFnPtr>(&MakeComplexScalar<kPart>)));
    STABLERT_RETURN_IF_ERROR(r.Register<CompareParams>(KernelKey("compare", {D}), &CompareKernel<D>));
    STABLERT_RETURN_IF_ERROR(r.Register(KernelKey("clamp", {D}), &ClampKernel<D>));
    STABLERT_RETURN_IF_ERROR(r.RegisterScalar(KernelKey("clamp", {D}), reinterpret_cast<ScalarFnPtr>(&ClampScalar<D>)));
    return r.RegisterScalar(KernelKey("compare", {D}), reinterpret_cast<ScalarFnPtr>(&CompareScalar<D>));
  });
}

}  // namespace stablert::kernels
