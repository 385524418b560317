// Lowering of custom_call @ApproxTopK (lax.approx_max_k / approx_min_k), computed exactly
// as XLA's fallback for platforms without an approximate top-k does:
//   operands (operand, iota along reduction_dim, init value, init index -1), called
//   computation: comparator(lhs, rhs, lhs_index, rhs_index) -> i1; results (values,
//   indices) whose reduction dimension has the output size (k, or the larger size
//   lax computed for aggregate_to_topk=false).
// Output size 1: a reduce over the dimension with the accumulator
//   select(comparator(acc, x), acc, x) starting from the init values (so ties keep the
//   later element, as XLA); larger: sort by the comparator, then the leading slice.
#include <string>

#include "kernels/data_movement_params.h"
#include "kernels/program_params.h"
#include "plan/lowering.h"

namespace stablert::plan {

Status LowerApproxTopK(Lowering& l, const ir::Operation& op) {
  if (op.operands.size() != 4 || op.results.size() != 2)
    return l.Invalid(op, "ApproxTopK expects operands (operand, iota, init value, init index) and results "
                         "(values, indices)");
  const ir::Attribute* config = op.attr("mhlo.backend_config");
  const auto* dict = config ? config->get<ir::Attribute::Dictionary>() : nullptr;
  const ir::Attribute* dim_attr = dict ? ir::FindAttr(*dict, "reduction_dim") : nullptr;
  std::optional<int64_t> dimension = dim_attr ? dim_attr->AsInt() : std::nullopt;
  if (!dimension) return l.Invalid(op, "ApproxTopK needs an integer backend_config 'reduction_dim'");

  ValueId values[4];
  for (size_t i = 0; i < 4; ++i) {
    STABLERT_ASSIGN_OR_RETURN(values[i], l.Operand(op, i));
  }
  const TensorType operand = l.TypeOf(values[0]), iota = l.TypeOf(values[1]);
  STABLERT_ASSIGN_OR_RETURN(TensorType out_values, l.ResultType(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType out_indices, l.ResultType(op, 1));
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  if (*dimension < 0 || *dimension >= rank)
    return l.Invalid(op, "reduction_dim " + std::to_string(*dimension) + " is out of range for " +
                             TensorTypeToString(operand));
  const auto d = static_cast<size_t>(*dimension);
  if (iota.dims != operand.dims || iota.dtype != DType::kS32)
    return l.Invalid(op, "operand 1 must be an i32 iota of the operand's shape");
  if (l.TypeOf(values[2]) != TensorType{operand.dtype, {}} || l.TypeOf(values[3]) != TensorType{DType::kS32, {}})
    return l.Invalid(op, "init values must be a scalar of the operand's type and an i32 scalar");
  Dims expected = operand.dims;
  expected[d] = out_values.dims.size() == operand.dims.size() ? out_values.dims[d] : -1;
  if (out_values != TensorType{operand.dtype, expected} || out_indices != TensorType{DType::kS32, expected} ||
      expected[d] < 0 || expected[d] > operand.dims[d])
    return l.Invalid(op, "results must be " + std::string(DTypeName(operand.dtype)) +
                             " and i32 arrays of the operand's shape with at most " +
                             std::to_string(operand.dims[d]) + " elements along reduction_dim");

  const ir::Attribute* called = op.attr("called_computations");
  const auto* list = called ? called->get<ir::Attribute::Array>() : nullptr;
  std::optional<std::string_view> name = list && list->size() == 1 ? (*list)[0].AsString() : std::nullopt;
  const ir::Function* comparator = name ? l.module().FindFunction(*name) : nullptr;
  if (comparator == nullptr) return l.Invalid(op, "ApproxTopK needs one called computation, its comparator");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> compare, CompileBodyProgram(l, op, comparator->body));

  if (expected[d] == 1 && operand.dims[d] > 0) {
    std::optional<std::vector<int64_t>> accumulate = AccumulatorFromComparator(compare);
    if (!accumulate) return l.Invalid(op, "the comparator must take (lhs, rhs, lhs_index, rhs_index) and return one i1");
    Dims reduced = operand.dims;
    reduced.erase(reduced.begin() + static_cast<std::ptrdiff_t>(d));
    const ValueId value_top = l.NewValue({operand.dtype, reduced}), index_top = l.NewValue({DType::kS32, reduced});
    l.Emit(op, "reduce_program", {values[0], values[1], values[2], values[3]}, {value_top, index_top},
           kernels::ReduceProgramParams{.dimensions = {*dimension}, .body = std::move(*accumulate)});
    l.Bind(op.results[0], l.NewAlias(value_top, out_values));
    l.Bind(op.results[1], l.NewAlias(index_top, out_indices));
    return OkStatus();
  }
  const ValueId value_sorted = l.NewValue(operand), index_sorted = l.NewValue(iota);
  l.Emit(op, "sort_program", {values[0], values[1]}, {value_sorted, index_sorted},
         kernels::SortProgramParams{.dimension = *dimension, .is_stable = false, .comparator = std::move(compare)});
  if (expected == operand.dims) {
    l.Bind(op.results[0], value_sorted);
    l.Bind(op.results[1], index_sorted);
    return OkStatus();
  }
  const ValueId value_out = l.NewValue(out_values), index_out = l.NewValue(out_indices);
  const std::vector<int64_t> start(operand.dims.size(), 0), strides(operand.dims.size(), 1);
  const std::vector<int64_t> limit(expected.begin(), expected.end());
  const kernels::SliceParams top{.start = start, .limit = limit, .stride = strides};
  l.Emit(op, "slice." + std::string(DTypeName(operand.dtype)), {value_sorted}, {value_out}, top);
  l.Emit(op, "slice.i32", {index_sorted}, {index_out}, top);
  l.Bind(op.results[0], value_out);
  l.Bind(op.results[1], index_out);
  return OkStatus();
}

}  // namespace stablert::plan
