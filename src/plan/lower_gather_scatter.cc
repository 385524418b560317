// Lowering of gather and scatter. Dimension numbers are validated here so the kernels
// can trust them (kernels/gather_scatter.cc documents the parameters).
#include <algorithm>
#include <string>

#include "kernels/gather_scatter_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

// Reads a dimension-number list: a flat attribute, or a field of a dictionary attribute
// `group` (as StableHLO's textual form groups them); absent = empty.
StatusOr<std::vector<int64_t>> DimList(Lowering& l, const ir::Operation& op, std::string_view group,
                                       std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) {
    if (const ir::Attribute* numbers = op.attr(group))
      if (const auto* dict = numbers->get<ir::Attribute::Dictionary>()) attr = ir::FindAttr(*dict, name);
  }
  if (attr == nullptr) return std::vector<int64_t>{};
  auto list = attr->AsIntArray();
  if (!list) return l.Invalid(op, "attribute '" + std::string(name) + "' is not an integer list");
  return *list;
}

StatusOr<int64_t> DimScalar(Lowering& l, const ir::Operation& op, std::string_view group, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) {
    if (const ir::Attribute* numbers = op.attr(group))
      if (const auto* dict = numbers->get<ir::Attribute::Dictionary>()) attr = ir::FindAttr(*dict, name);
  }
  if (attr == nullptr || !attr->AsInt()) return l.Invalid(op, "missing integer attribute '" + std::string(name) + "'");
  return *attr->AsInt();
}

bool AllIn(const std::vector<int64_t>& list, int64_t size) {
  return std::all_of(list.begin(), list.end(), [size](int64_t d) { return d >= 0 && d < size; });
}
bool Unique(std::vector<int64_t> list) {
  std::sort(list.begin(), list.end());
  return std::adjacent_find(list.begin(), list.end()) == list.end();
}
bool Sorted(const std::vector<int64_t>& list) { return std::is_sorted(list.begin(), list.end()); }
bool Contains(const std::vector<int64_t>& list, int64_t v) { return std::find(list.begin(), list.end(), v) != list.end(); }

// Checks the index array and index_vector_dim; returns the batch dims of the indices
// (all dims but index_vector_dim) and the index vector length.
Status CheckIndices(Lowering& l, const ir::Operation& op, const TensorType& indices, int64_t index_vector_dim,
                    size_t expected_vector, Dims* batch_dims) {
  const int64_t rank = static_cast<int64_t>(indices.dims.size());
  if (!IsInteger(indices.dtype)) return l.Invalid(op, "indices must be integers");
  if (index_vector_dim < 0 || index_vector_dim > rank) return l.Invalid(op, "index_vector_dim is out of range");
  const int64_t vector = index_vector_dim < rank ? indices.dims[static_cast<size_t>(index_vector_dim)] : 1;
  if (vector != static_cast<int64_t>(expected_vector))
    return l.Invalid(op, "index vector length " + std::to_string(vector) + " does not match the index map (" +
                             std::to_string(expected_vector) + ")");
  batch_dims->clear();
  for (int64_t d = 0; d < rank; ++d)
    if (d != index_vector_dim) batch_dims->push_back(indices.dims[static_cast<size_t>(d)]);
  return OkStatus();
}

Status CheckBatching(Lowering& l, const ir::Operation& op, const std::vector<int64_t>& operand_batching,
                     const std::vector<int64_t>& indices_batching, const TensorType& operand, const TensorType& indices,
                     int64_t index_vector_dim) {
  if (operand_batching.size() != indices_batching.size())
    return l.Invalid(op, "operand and indices batching dimension lists differ in length");
  if (!AllIn(indices_batching, static_cast<int64_t>(indices.dims.size())) || !Unique(indices_batching) ||
      Contains(indices_batching, index_vector_dim))
    return l.Invalid(op, "bad indices batching dimensions");
  for (size_t i = 0; i < operand_batching.size(); ++i)
    if (operand.dims[static_cast<size_t>(operand_batching[i])] != indices.dims[static_cast<size_t>(indices_batching[i])])
      return l.Invalid(op, "batching dimension sizes differ");
  return OkStatus();
}

Status LowerGather(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId indices, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  constexpr std::string_view kGroup = "dimension_numbers";
  STABLERT_ASSIGN_OR_RETURN(auto offset_dims, DimList(l, op, kGroup, "offset_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto collapsed, DimList(l, op, kGroup, "collapsed_slice_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto operand_batching, DimList(l, op, kGroup, "operand_batching_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto indices_batching, DimList(l, op, kGroup, "start_indices_batching_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto start_index_map, DimList(l, op, kGroup, "start_index_map"));
  STABLERT_ASSIGN_OR_RETURN(int64_t index_vector_dim, DimScalar(l, op, kGroup, "index_vector_dim"));
  STABLERT_ASSIGN_OR_RETURN(auto slice_sizes, l.IntListAttr(op, "slice_sizes"));
  const TensorType in = l.TypeOf(operand), idx = l.TypeOf(indices);
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  if (result.dtype != in.dtype) return l.Invalid(op, "result element type differs from the operand's");
  if (slice_sizes.size() != in.dims.size()) return l.Invalid(op, "slice_sizes needs one entry per operand dimension");
  for (size_t d = 0; d < slice_sizes.size(); ++d)
    if (slice_sizes[d] < 0 || slice_sizes[d] > in.dims[d]) return l.Invalid(op, "slice_sizes exceed the operand");
  if (!AllIn(collapsed, rank) || !AllIn(operand_batching, rank) || !AllIn(start_index_map, rank) ||
      !Unique(start_index_map) || !Sorted(collapsed) || !Unique(collapsed) || !Sorted(operand_batching) ||
      !Unique(operand_batching))
    return l.Invalid(op, "dimension numbers are out of range, repeated or unsorted");
  for (int64_t d : collapsed) {
    if (Contains(operand_batching, d)) return l.Invalid(op, "a dimension is both collapsed and batching");
    if (slice_sizes[static_cast<size_t>(d)] > 1) return l.Invalid(op, "collapsed dimensions must have slice size <= 1");
  }
  for (int64_t d : operand_batching)
    if (slice_sizes[static_cast<size_t>(d)] != 1 || Contains(start_index_map, d))
      return l.Invalid(op, "batching dimensions must have slice size 1 and not be indexed");
  Dims batch_dims;
  STABLERT_RETURN_IF_ERROR(CheckIndices(l, op, idx, index_vector_dim, start_index_map.size(), &batch_dims));
  STABLERT_RETURN_IF_ERROR(CheckBatching(l, op, operand_batching, indices_batching, in, idx, index_vector_dim));
  // Expected result shape: offset dims at offset_dims, batch dims elsewhere in order.
  Dims offset_sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) offset_sizes.push_back(slice_sizes[static_cast<size_t>(d)]);
  const int64_t result_rank = static_cast<int64_t>(offset_sizes.size() + batch_dims.size());
  if (offset_dims.size() != offset_sizes.size() || !AllIn(offset_dims, result_rank) || !Sorted(offset_dims) ||
      !Unique(offset_dims))
    return l.Invalid(op, "offset_dims do not fit the slice");
  Dims expected;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t d = 0; d < result_rank; ++d)
    expected.push_back(Contains(offset_dims, d) ? offset_sizes[next_offset++] : batch_dims[next_batch++]);
  if (expected != result.dims)
    return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match (expected " +
                             DimsToString(expected) + ")");
  ValueId out = l.NewValue(result);
  l.Emit(op, "gather." + std::string(DTypeName(result.dtype)), {operand, indices}, {out},
         kernels::GatherParams{.offset_dims = offset_dims,
                               .collapsed_slice_dims = collapsed,
                               .operand_batching_dims = operand_batching,
                               .start_indices_batching_dims = indices_batching,
                               .start_index_map = start_index_map,
                               .index_vector_dim = index_vector_dim,
                               .slice_sizes = slice_sizes});
  l.Bind(op.results[0], out);
  return OkStatus();
}

// "assign" when the body returns its second argument; else a reduction body name; else "".
std::string ScatterBody(const Lowering& l, const ir::Region& region, DType dtype) {
  if (region.blocks.size() == 1) {
    const ir::Block& block = region.blocks[0];
    if (block.arguments.size() == 2 && block.ops.size() == 1 && block.ops[0].code == OpCode::kReturn &&
        block.ops[0].operands.size() == 1 && block.ops[0].operands[0] == block.arguments[1])
      return "assign";
  }
  return MatchReductionBody(l, region, dtype);
}

Status LowerScatter(Lowering& l, const ir::Operation& op) {
  if (op.operands.size() != 3 || op.results.size() != 1)
    return l.Unsupported(op, "scatter of several operands at once is not supported yet");
  if (op.regions.size() != 1) return l.Invalid(op, "expected one update region");
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId indices, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(ValueId updates, l.Operand(op, 2));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  constexpr std::string_view kGroup = "scatter_dimension_numbers";
  STABLERT_ASSIGN_OR_RETURN(auto window_dims, DimList(l, op, kGroup, "update_window_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto inserted, DimList(l, op, kGroup, "inserted_window_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto input_batching, DimList(l, op, kGroup, "input_batching_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto indices_batching, DimList(l, op, kGroup, "scatter_indices_batching_dims"));
  STABLERT_ASSIGN_OR_RETURN(auto to_operand, DimList(l, op, kGroup, "scatter_dims_to_operand_dims"));
  STABLERT_ASSIGN_OR_RETURN(int64_t index_vector_dim, DimScalar(l, op, kGroup, "index_vector_dim"));
  const TensorType in = l.TypeOf(operand), idx = l.TypeOf(indices), upd = l.TypeOf(updates);
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  if (result != in || upd.dtype != in.dtype) return l.Invalid(op, "operand, updates and result types do not fit");
  if (!AllIn(inserted, rank) || !AllIn(input_batching, rank) || !AllIn(to_operand, rank) || !Unique(to_operand) ||
      !Sorted(inserted) || !Unique(inserted) || !Sorted(input_batching) || !Unique(input_batching))
    return l.Invalid(op, "dimension numbers are out of range, repeated or unsorted");
  for (int64_t d : inserted)
    if (Contains(input_batching, d)) return l.Invalid(op, "a dimension is both inserted and batching");
  for (int64_t d : input_batching)
    if (Contains(to_operand, d)) return l.Invalid(op, "batching dimensions cannot be indexed");
  Dims batch_dims;
  STABLERT_RETURN_IF_ERROR(CheckIndices(l, op, idx, index_vector_dim, to_operand.size(), &batch_dims));
  STABLERT_RETURN_IF_ERROR(CheckBatching(l, op, input_batching, indices_batching, in, idx, index_vector_dim));
  // Updates: window dims at update_window_dims (sizes within the operand's window dims),
  // scatter dims elsewhere equal to the indices' batch dims.
  const int64_t updates_rank = static_cast<int64_t>(upd.dims.size());
  const size_t window_rank = static_cast<size_t>(rank) - inserted.size() - input_batching.size();
  if (window_dims.size() != window_rank || !AllIn(window_dims, updates_rank) || !Sorted(window_dims) ||
      !Unique(window_dims))
    return l.Invalid(op, "update_window_dims do not fit the operand");
  size_t next_window = 0, next_batch = 0;
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(inserted, d) && !Contains(input_batching, d)) window_operand_dims.push_back(d);
  for (int64_t d = 0; d < updates_rank; ++d) {
    const int64_t size = upd.dims[static_cast<size_t>(d)];
    if (Contains(window_dims, d)) {
      if (size > in.dims[static_cast<size_t>(window_operand_dims[next_window++])])
        return l.Invalid(op, "update window is larger than the operand");
    } else {
      if (next_batch >= batch_dims.size() || size != batch_dims[next_batch++])
        return l.Invalid(op, "update scatter dimensions do not match the indices");
    }
  }
  if (next_batch != batch_dims.size()) return l.Invalid(op, "update scatter dimensions do not match the indices");

  kernels::ScatterParams params{.update_window_dims = window_dims,
                                .inserted_window_dims = inserted,
                                .input_batching_dims = input_batching,
                                .scatter_indices_batching_dims = indices_batching,
                                .scatter_dims_to_operand_dims = to_operand,
                                .index_vector_dim = index_vector_dim};
  ValueId out = l.NewValue(result);
  std::string body = ScatterBody(l, op.regions[0], in.dtype);
  if (!body.empty()) {
    l.Emit(op, "scatter_" + body + "." + std::string(DTypeName(in.dtype)), {operand, indices, updates}, {out},
           std::move(params));
  } else {
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> program, CompileBodyProgram(l, op, op.regions[0]));
    params.body = std::move(program);
    l.Emit(op, "scatter_program", {operand, indices, updates}, {out}, std::move(params));
  }
  l.Bind(op.results[0], out);
  return OkStatus();
}

}  // namespace

Status LowerGatherScatter(Lowering& l, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::kGather: return LowerGather(l, op);
    case OpCode::kScatter: return LowerScatter(l, op);
    default: return l.Unsupported(op, "op is not supported by the CPU plan yet");
  }
}

}  // namespace stablert::plan
