// Lowering of stablehlo.fft to the kernels of kernels/fft.cc.
//
// fft_length (1 to 3 entries) names the sizes of the innermost dimensions:
//   FFT, IFFT: complex operand and result of the same type, inner dims == fft_length;
//   RFFT:  f32/f64 operand with inner dims == fft_length, result complex of the matching
//          precision with the last dim fft_length[-1] / 2 + 1;
//   IRFFT: complex operand whose last dim is fft_length[-1] / 2 + 1, real result with inner
//          dims == fft_length.
#include <string>

#include "kernels/fft_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

}  // namespace

Status LowerFft(Lowering& l, const ir::Operation& op) {
  const ir::Attribute* type_attr = op.attr("fft_type");
  const ir::EnumValue* type = type_attr ? type_attr->get<ir::EnumValue>() : nullptr;
  if (type == nullptr || type->kind != ir::EnumKind::kFftType || type->value < 0 || type->value > 3)
    return l.Invalid(op, "expected attribute 'fft_type' (FFT, IFFT, RFFT or IRFFT)");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, l.IntListAttr(op, "fft_length"));
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType input = l.TypeOf(operand);
  const size_t k = lengths.size();
  if (k < 1 || k > 3) return l.Invalid(op, "fft_length must have 1 to 3 entries, got " + DimsText(lengths));
  for (int64_t n : lengths)
    if (n < 0) return l.Invalid(op, "fft_length " + DimsText(lengths) + " has a negative entry");
  if (input.dims.size() < k || result.dims.size() != input.dims.size())
    return l.Invalid(op, "operand and result must have the same rank, at least the " + std::to_string(k) +
                             " transformed dimensions");
  const bool real_in = type->value == 2, real_out = type->value == 3;
  if ((real_in || real_out) && lengths.back() == 0)
    return l.Invalid(op, "the last fft_length of RFFT/IRFFT must be positive, got " + DimsText(lengths));
  const DType in_dtype = input.dtype, out_dtype = result.dtype;
  const bool single = real_in ? in_dtype == DType::kF32 : in_dtype == DType::kC64;
  const bool dbl = real_in ? in_dtype == DType::kF64 : in_dtype == DType::kC128;
  if (!single && !dbl)
    return l.Unsupported(op, "operand element type " + std::string(DTypeName(in_dtype)) + " is not supported; expected " +
                                 (real_in ? "f32 or f64" : "complex<f32> or complex<f64>"));
  const DType want_out = real_out ? (single ? DType::kF32 : DType::kF64) : (single ? DType::kC64 : DType::kC128);
  if (out_dtype != want_out)
    return l.Invalid(op, "result element type " + std::string(DTypeName(out_dtype)) + " does not match; expected " +
                             std::string(DTypeName(want_out)));
  // The dims each side must have: the spatial (real) side equals fft_length, the spectral
  // side of a real transform is halved in its last dimension.
  const size_t rank = input.dims.size();
  std::vector<int64_t> expect_in(input.dims.end() - static_cast<std::ptrdiff_t>(k), input.dims.end());
  std::vector<int64_t> expect_out(result.dims.end() - static_cast<std::ptrdiff_t>(k), result.dims.end());
  std::vector<int64_t> spectral = lengths;
  if (real_in || real_out) spectral.back() = lengths.back() / 2 + 1;
  const std::vector<int64_t>& want_in_dims = real_out ? spectral : lengths;
  const std::vector<int64_t>& want_out_dims = real_in ? spectral : lengths;
  if (expect_in != want_in_dims)
    return l.Invalid(op, "operand's inner dimensions " + DimsText(expect_in) + " do not match fft_length " +
                             DimsText(lengths) + " (expected " + DimsText(want_in_dims) + ")");
  if (expect_out != want_out_dims)
    return l.Invalid(op, "result's inner dimensions " + DimsText(expect_out) + " do not match fft_length " +
                             DimsText(lengths) + " (expected " + DimsText(want_out_dims) + ")");
  for (size_t i = 0; i + k < rank; ++i)
    if (input.dims[i] != result.dims[i]) return l.Invalid(op, "operand and result batch dimensions differ");
  const char* kernel = real_in ? "rfft." : real_out ? "irfft." : "fft.";
  ValueId out = l.NewValue(result);
  l.Emit(op, kernel + std::string(DTypeName(in_dtype)), {operand}, {out},
         kernels::FftParams{.type = static_cast<kernels::FftType>(type->value), .lengths = lengths});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace stablert::plan
