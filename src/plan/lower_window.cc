// Lowering of reduce_window: a dedicated kernel when the body is one recognized binary
// op on one operand, a body program otherwise.
#include <cstring>
#include <string>

#include "kernels/window_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

// An optional integer-list attribute with a default of `rank` copies of `fill`.
StatusOr<std::vector<int64_t>> ListOr(Lowering& l, const ir::Operation& op, std::string_view name, size_t rank,
                                      int64_t fill) {
  if (op.attr(name) == nullptr) return std::vector<int64_t>(rank, fill);
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> list, l.IntListAttr(op, name));
  if (list.size() != rank) return l.Invalid(op, "attribute '" + std::string(name) + "' needs one entry per dimension");
  return list;
}

// The [rank, 2] integer attribute "padding" as (low, high) lists; zeros if absent.
Status ReadPadding(Lowering& l, const ir::Operation& op, size_t rank, std::vector<int64_t>* low,
                   std::vector<int64_t>* high) {
  low->assign(rank, 0);
  high->assign(rank, 0);
  const ir::Attribute* attr = op.attr("padding");
  if (attr == nullptr) return OkStatus();
  const ir::Attribute::Elements* elements = attr->get<ir::Attribute::Elements>();
  if (elements == nullptr || *elements == nullptr) return l.Invalid(op, "attribute 'padding' is not a dense array");
  const ir::ElementsData& data = **elements;
  const bool shape_ok = (data.type.dims == Dims{static_cast<int64_t>(rank), 2}) || (rank == 0 && ElementCount(data.type.dims) == 0);
  if (!shape_ok || data.type.dtype != DType::kS64 || data.bytes.size() != rank * 2 * 8)
    return l.Invalid(op, "attribute 'padding' must be an i64 array of shape [rank, 2]");
  for (size_t d = 0; d < rank; ++d) {
    std::memcpy(&(*low)[d], &data.bytes[d * 16], 8);
    std::memcpy(&(*high)[d], &data.bytes[d * 16 + 8], 8);
  }
  return OkStatus();
}

}  // namespace

Status LowerReduceWindow(Lowering& l, const ir::Operation& op) {
  const size_t n = op.results.size();
  if (n == 0 || op.operands.size() != 2 * n) return l.Invalid(op, "expected N operands, N init values and N results");
  if (op.regions.size() != 1) return l.Invalid(op, "expected one body region");
  std::vector<ValueId> operands, inits;
  std::vector<TensorType> results;
  for (size_t i = 0; i < n; ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, i));
    STABLERT_ASSIGN_OR_RETURN(ValueId init, l.Operand(op, n + i));
    STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, i));
    operands.push_back(operand);
    inits.push_back(init);
    results.push_back(result);
  }
  const TensorType in = l.TypeOf(operands[0]);
  const size_t rank = in.dims.size();
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> window, l.IntListAttr(op, "window_dimensions"));
  if (window.size() != rank) return l.Invalid(op, "window_dimensions needs one entry per dimension");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ListOr(l, op, "window_strides", rank, 1));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> base_dilations, ListOr(l, op, "base_dilations", rank, 1));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> window_dilations, ListOr(l, op, "window_dilations", rank, 1));
  std::vector<int64_t> low, high;
  STABLERT_RETURN_IF_ERROR(ReadPadding(l, op, rank, &low, &high));

  Dims expected(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (window[d] < 0 || strides[d] <= 0 || base_dilations[d] <= 0 || window_dilations[d] <= 0)
      return l.Invalid(op, "window sizes must be >= 0, strides and dilations > 0");
    int64_t dilated_base = in.dims[d] == 0 ? 0 : (in.dims[d] - 1) * base_dilations[d] + 1;
    int64_t padded = dilated_base + low[d] + high[d];
    int64_t dilated_window = window[d] == 0 ? 0 : (window[d] - 1) * window_dilations[d] + 1;
    expected[d] = padded < dilated_window ? 0 : (padded - dilated_window) / strides[d] + 1;
  }
  for (size_t i = 0; i < n; ++i) {
    const TensorType type = l.TypeOf(operands[i]);
    if (type.dims != in.dims) return l.Invalid(op, "operands must have one shape");
    if (l.TypeOf(inits[i]) != TensorType{type.dtype, {}})
      return l.Invalid(op, "init value " + std::to_string(i) + " must be a scalar of its operand's type");
    if (results[i] != TensorType{type.dtype, expected})
      return l.Invalid(op, "result type " + TensorTypeToString(results[i]) + " does not match the window (expected " +
                               DimsToString(expected) + ")");
  }

  kernels::WindowParams windows{.window_dimensions = window,
                                .window_strides = strides,
                                .base_dilations = base_dilations,
                                .window_dilations = window_dilations,
                                .padding_low = low,
                                .padding_high = high};
  std::vector<ValueId> outs;
  for (const TensorType& result : results) outs.push_back(l.NewValue(result));
  std::string body = n == 1 ? MatchReductionBody(l, op.regions[0], in.dtype) : "";
  if (!body.empty()) {
    l.Emit(op, "reduce_window_" + body + "." + std::string(DTypeName(in.dtype)), {operands[0], inits[0]}, outs,
           std::move(windows));
  } else {
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> program, CompileBodyProgram(l, op, op.regions[0]));
    std::vector<ValueId> inputs = operands;
    inputs.insert(inputs.end(), inits.begin(), inits.end());
    l.Emit(op, "reduce_window_program", std::move(inputs), outs,
           kernels::ReduceWindowProgramParams{.window = std::move(windows), .body = std::move(program)});
  }
  for (size_t i = 0; i < n; ++i) l.Bind(op.results[i], outs[i]);
  return OkStatus();
}

}  // namespace stablert::plan

namespace stablert::plan {

Status LowerSelectAndScatter(Lowering& l, const ir::Operation& op) {
  if (op.regions.size() != 2) return l.Invalid(op, "expected select and scatter regions");
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId source, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(ValueId init, l.Operand(op, 2));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType in = l.TypeOf(operand), src = l.TypeOf(source);
  const size_t rank = in.dims.size();
  if (result != in || src.dtype != in.dtype || l.TypeOf(init) != TensorType{in.dtype, {}})
    return l.Invalid(op, "operand, source, init value and result types do not fit");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> window, ListOr(l, op, "window_dimensions", rank, 1));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ListOr(l, op, "window_strides", rank, 1));
  std::vector<int64_t> low, high;
  STABLERT_RETURN_IF_ERROR(ReadPadding(l, op, rank, &low, &high));
  Dims expected(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (window[d] <= 0 || strides[d] <= 0 || low[d] < 0 || high[d] < 0)
      return l.Invalid(op, "window sizes and strides must be positive, padding non-negative");
    int64_t padded = in.dims[d] + low[d] + high[d];
    expected[d] = padded < window[d] ? 0 : (padded - window[d]) / strides[d] + 1;
  }
  if (src.dims != expected)
    return l.Invalid(op, "source shape " + DimsToString(src.dims) + " does not match the windows (expected " +
                             DimsToString(expected) + ")");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> select, CompileBodyProgram(l, op, op.regions[0]));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> scatter, CompileBodyProgram(l, op, op.regions[1]));
  ValueId out = l.NewValue(result);
  l.Emit(op, "select_and_scatter." + std::string(DTypeName(in.dtype)), {operand, source, init}, {out},
         kernels::SelectAndScatterParams{.window_dimensions = window,
                                         .window_strides = strides,
                                         .padding_low = low,
                                         .padding_high = high,
                                         .select = std::move(select),
                                         .scatter = std::move(scatter)});
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace stablert::plan
