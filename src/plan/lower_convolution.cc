// Lowering of stablehlo.convolution to the convolution kernels (any layout): f32 on oneDNN
// ("convolution_dnnl.f32"), other types on the direct loop kernel.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/convolution_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

StatusOr<std::vector<int64_t>> ListOr(Lowering& l, const ir::Operation& op, std::string_view name, size_t size,
                                      int64_t fill) {
  if (op.attr(name) == nullptr) return std::vector<int64_t>(size, fill);
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> list, l.IntListAttr(op, name));
  if (list.size() != size) return l.Invalid(op, "attribute '" + std::string(name) + "' needs one entry per spatial dimension");
  return list;
}

}  // namespace

Status LowerConvolution(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId lhs, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId rhs, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  if (!IsFloat(result.dtype) && !IsComplex(result.dtype) && !IsInteger(result.dtype) && result.dtype != DType::kPred)
    return l.Unsupported(op, "element type " + std::string(DTypeName(result.dtype)) + " is not supported yet");
  // Operands of a narrower type (preferred_element_type) are widened to the result type
  // first, as XLA does; narrowing is not supported.
  STABLERT_ASSIGN_OR_RETURN(lhs, WidenedTo(l, op, lhs, result.dtype));
  STABLERT_ASSIGN_OR_RETURN(rhs, WidenedTo(l, op, rhs, result.dtype));
  const TensorType lt = l.TypeOf(lhs), rt = l.TypeOf(rhs);
  const size_t rank = lt.dims.size();
  if (rank < 2 || rt.dims.size() != rank || result.dims.size() != rank) return l.Invalid(op, "operand ranks differ");
  const size_t spatial = rank - 2;

  STABLERT_ASSIGN_OR_RETURN(int64_t in_batch, l.IntAttr(op, "input_batch_dimension"));
  STABLERT_ASSIGN_OR_RETURN(int64_t in_feature, l.IntAttr(op, "input_feature_dimension"));
  STABLERT_ASSIGN_OR_RETURN(auto in_spatial, l.IntListAttr(op, "input_spatial_dimensions"));
  STABLERT_ASSIGN_OR_RETURN(int64_t k_in, l.IntAttr(op, "kernel_input_feature_dimension"));
  STABLERT_ASSIGN_OR_RETURN(int64_t k_out, l.IntAttr(op, "kernel_output_feature_dimension"));
  STABLERT_ASSIGN_OR_RETURN(auto k_spatial, l.IntListAttr(op, "kernel_spatial_dimensions"));
  STABLERT_ASSIGN_OR_RETURN(int64_t out_batch, l.IntAttr(op, "output_batch_dimension"));
  STABLERT_ASSIGN_OR_RETURN(int64_t out_feature, l.IntAttr(op, "output_feature_dimension"));
  STABLERT_ASSIGN_OR_RETURN(auto out_spatial, l.IntListAttr(op, "output_spatial_dimensions"));
  std::vector<int64_t> lhs_dims = {in_batch, in_feature}, rhs_dims = {k_in, k_out}, out_dims = {out_batch, out_feature};
  lhs_dims.insert(lhs_dims.end(), in_spatial.begin(), in_spatial.end());
  rhs_dims.insert(rhs_dims.end(), k_spatial.begin(), k_spatial.end());
  out_dims.insert(out_dims.end(), out_spatial.begin(), out_spatial.end());
  for (const auto* dims : {&lhs_dims, &rhs_dims, &out_dims}) {
    std::vector<int64_t> sorted = *dims;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != rank)
        return l.Invalid(op, "dimension numbers must be a permutation of the dimensions");
  }
  STABLERT_ASSIGN_OR_RETURN(auto strides, ListOr(l, op, "window_strides", spatial, 1));
  STABLERT_ASSIGN_OR_RETURN(auto lhs_dilation, ListOr(l, op, "lhs_dilation", spatial, 1));
  STABLERT_ASSIGN_OR_RETURN(auto rhs_dilation, ListOr(l, op, "rhs_dilation", spatial, 1));
  std::vector<int64_t> low(spatial, 0), high(spatial, 0), reversal(spatial, 0);
  if (const ir::Attribute* padding = op.attr("padding")) {
    const auto* elements = padding->get<ir::Attribute::Elements>();
    if (elements == nullptr || *elements == nullptr || (*elements)->type.dtype != DType::kS64 ||
        (*elements)->bytes.size() != spatial * 16)
      return l.Invalid(op, "attribute 'padding' must be an i64 array of shape [spatial, 2]");
    for (size_t s = 0; s < spatial; ++s) {
      std::memcpy(&low[s], &(*elements)->bytes[s * 16], 8);
      std::memcpy(&high[s], &(*elements)->bytes[s * 16 + 8], 8);
    }
  }
  if (const ir::Attribute* reversal_attr = op.attr("window_reversal")) {
    auto flags = reversal_attr->AsBoolArray();
    if (!flags || flags->size() != spatial) return l.Invalid(op, "window_reversal needs one flag per spatial dimension");
    for (size_t s = 0; s < spatial; ++s) reversal[s] = (*flags)[s] ? 1 : 0;
  }
  int64_t feature_groups = 1, batch_groups = 1;
  if (op.attr("feature_group_count")) {
    STABLERT_ASSIGN_OR_RETURN(feature_groups, l.IntAttr(op, "feature_group_count"));
  }
  if (op.attr("batch_group_count")) {
    STABLERT_ASSIGN_OR_RETURN(batch_groups, l.IntAttr(op, "batch_group_count"));
  }

  auto size = [](const TensorType& t, int64_t d) { return t.dims[static_cast<size_t>(d)]; };
  const int64_t batch = size(lt, in_batch), features = size(lt, in_feature);
  const int64_t kernel_in = size(rt, k_in), kernel_out = size(rt, k_out);
  if (feature_groups < 1 || batch_groups < 1 || (feature_groups > 1 && batch_groups > 1))
    return l.Invalid(op, "bad feature_group_count/batch_group_count");
  if (features != kernel_in * feature_groups || kernel_out % feature_groups != 0 || batch % batch_groups != 0 ||
      kernel_out % batch_groups != 0)
    return l.Invalid(op, "feature or batch sizes do not fit the group counts");
  Dims expected(rank);
  expected[static_cast<size_t>(out_batch)] = batch / batch_groups;
  expected[static_cast<size_t>(out_feature)] = kernel_out;
  for (size_t s = 0; s < spatial; ++s) {
    if (strides[s] <= 0 || lhs_dilation[s] <= 0 || rhs_dilation[s] <= 0)
      return l.Invalid(op, "strides and dilations must be positive");
    const int64_t in = size(lt, in_spatial[s]), k = size(rt, k_spatial[s]);
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * lhs_dilation[s] + 1;
    const int64_t padded = dilated_in + low[s] + high[s];
    const int64_t dilated_k = k == 0 ? 0 : (k - 1) * rhs_dilation[s] + 1;
    expected[static_cast<size_t>(out_spatial[s])] = padded < dilated_k ? 0 : (padded - dilated_k) / strides[s] + 1;
  }
  if (expected != result.dims)
    return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match (expected " +
                             DimsToString(expected) + ")");
  ValueId out = l.NewValue(result);
  // f32 goes to oneDNN (the kernel runs the loops for what oneDNN cannot express).
  const std::string kernel = result.dtype == DType::kF32 ? "convolution_dnnl.f32"
                                                          : "convolution." + std::string(DTypeName(result.dtype));
  l.Emit(op, kernel, {lhs, rhs}, {out},
         kernels::ConvolutionParams{.lhs_dims = lhs_dims, .rhs_dims = rhs_dims, .out_dims = out_dims,
                                    .strides = strides, .padding_low = low, .padding_high = high,
                                    .lhs_dilation = lhs_dilation, .rhs_dilation = rhs_dilation,
                                    .reversal = reversal, .feature_groups = feature_groups,
                                    .batch_groups = batch_groups});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace stablert::plan
