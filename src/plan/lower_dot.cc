// Lowering of dot_general (and the older dot) to a batched matrix product: operands are
// brought into [B,M,K]/[B,K,M] and [B,K,N]/[B,N,K] form (a free reshape when their
// dimensions are already in order, else a transpose step), the product is computed as
// [B,M,N] and reshaped to the result.
#include <numeric>
#include <string>

#include "kernels/data_movement_params.h"
#include "kernels/dot_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;


struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};

StatusOr<DotDims> ReadDotDims(Lowering& l, const ir::Operation& op, const TensorType& lhs, const TensorType& rhs) {
  DotDims dims;
  if (op.code == OpCode::kDot) {
    if (lhs.dims.empty() || lhs.dims.size() > 2 || rhs.dims.empty() || rhs.dims.size() > 2)
      return l.Invalid(op, "operands must be vectors or matrices");
    dims.lhs_contracting = {static_cast<int64_t>(lhs.dims.size()) - 1};
    dims.rhs_contracting = {0};
    return dims;
  }
  // Either flat attributes or one dictionary attribute holding them.
  const ir::Attribute::Dictionary* dict = nullptr;
  if (const ir::Attribute* numbers = op.attr("dot_dimension_numbers")) dict = numbers->get<ir::Attribute::Dictionary>();
  auto read = [&](std::string_view name, std::vector<int64_t>* out) -> Status {
    const ir::Attribute* attr = dict ? ir::FindAttr(*dict, name) : op.attr(name);
    if (attr == nullptr) return OkStatus();  // absent list = empty
    auto list = attr->AsIntArray();
    if (!list) return l.Invalid(op, "attribute '" + std::string(name) + "' is not an integer list");
    *out = std::move(*list);
    return OkStatus();
  };
  STABLERT_RETURN_IF_ERROR(read("lhs_batching_dimensions", &dims.lhs_batch));
  STABLERT_RETURN_IF_ERROR(read("rhs_batching_dimensions", &dims.rhs_batch));
  STABLERT_RETURN_IF_ERROR(read("lhs_contracting_dimensions", &dims.lhs_contracting));
  STABLERT_RETURN_IF_ERROR(read("rhs_contracting_dimensions", &dims.rhs_contracting));
  return dims;
}

// Free dims of an operand: those neither batch nor contracting, in order. Validates that
// the batch and contracting lists are in range and disjoint.
StatusOr<std::vector<int64_t>> FreeDims(Lowering& l, const ir::Operation& op, const TensorType& type,
                                        const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  std::vector<bool> used(type.dims.size(), false);
  for (const auto* list : {&batch, &contracting}) {
    for (int64_t d : *list) {
      if (d < 0 || d >= static_cast<int64_t>(type.dims.size()) || used[static_cast<size_t>(d)])
        return l.Invalid(op, "batching/contracting dimensions out of range or repeated for " + TensorTypeToString(type));
      used[static_cast<size_t>(d)] = true;
    }
  }
  std::vector<int64_t> free;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i]) free.push_back(static_cast<int64_t>(i));
  return free;
}

int64_t Product(const TensorType& type, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= type.dims[static_cast<size_t>(d)];
  return p;
}

bool IsIdentity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<int64_t> Concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> out;
  for (const auto* part : parts) out.insert(out.end(), part->begin(), part->end());
  return out;
}

// Brings `operand` into the 3-D form [B, X, Y] where `first` then `second` is the preferred
// order of the non-batch dims, or accepts [B, Y, X] for free. Returns the 3-D value and
// whether it is in the swapped (second, first) order.
std::pair<ValueId, bool> Canonicalize(Lowering& l, const ir::Operation& op, ValueId operand,
                                      const std::vector<int64_t>& batch, const std::vector<int64_t>& first,
                                      const std::vector<int64_t>& second) {
  const TensorType type = l.TypeOf(operand);
  const int64_t b = Product(type, batch), x = Product(type, first), y = Product(type, second);
  std::vector<int64_t> preferred = Concat({&batch, &first, &second});
  if (IsIdentity(preferred)) return {l.NewAlias(operand, TensorType{type.dtype, {b, x, y}}), false};
  if (IsIdentity(Concat({&batch, &second, &first}))) return {l.NewAlias(operand, TensorType{type.dtype, {b, y, x}}), true};
  Dims permuted;
  for (int64_t d : preferred) permuted.push_back(type.dims[static_cast<size_t>(d)]);
  ValueId transposed = l.NewValue(TensorType{type.dtype, permuted});
  l.Emit(op, "transpose." + std::string(DTypeName(type.dtype)), {operand}, {transposed},
         kernels::TransposeParams{.permutation = preferred});
  return {l.NewAlias(transposed, TensorType{type.dtype, {b, x, y}}), false};
}

}  // namespace

bool WidensExactly(DType from, DType to) {
  const int from_bits = DTypeBitWidth(from), to_bits = DTypeBitWidth(to);
  const DTypeKind from_kind = DTypeKindOf(from), to_kind = DTypeKindOf(to);
  if (from == DType::kPred) return to_kind == DTypeKind::kSigned || to_kind == DTypeKind::kUnsigned || IsFloat(to);
  if (IsFloat(from)) {
    if (!IsFloat(to)) return false;
    if (to == DType::kF64) return true;
    return to == DType::kF32 && (from == DType::kF16 || from == DType::kBF16);
  }
  if (IsFloat(to)) {  // integer -> float: the mantissa must hold every value
    const int mantissa = to == DType::kF64 ? 53 : to == DType::kF32 ? 24 : to == DType::kF16 ? 11 : 8;
    return from_bits - (from_kind == DTypeKind::kSigned ? 1 : 0) <= mantissa;
  }
  if (from_kind == to_kind) return from_bits <= to_bits;
  return from_kind == DTypeKind::kUnsigned && to_kind == DTypeKind::kSigned && from_bits < to_bits;
}

StatusOr<ValueId> WidenedTo(Lowering& l, const ir::Operation& op, ValueId operand, DType dtype) {
  const TensorType type = l.TypeOf(operand);
  if (type.dtype == dtype) return operand;
  if (!WidensExactly(type.dtype, dtype))
    return l.Unsupported(op, "operand type " + std::string(DTypeName(type.dtype)) + " with result type " +
                                 std::string(DTypeName(dtype)) + " is not supported yet");
  ValueId widened = l.NewValue(TensorType{dtype, type.dims});
  l.Emit(op, ConvertKeyFor(type.dtype, dtype), {operand},
         {widened});
  return widened;
}

Status LowerDot(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId lhs, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId rhs, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  if (!IsFloat(result.dtype) && !IsInteger(result.dtype) && !IsComplex(result.dtype) && result.dtype != DType::kPred)
    return l.Unsupported(op, "element type " + std::string(DTypeName(result.dtype)) + " is not supported yet");
  // Operands of a narrower type (preferred_element_type) are widened to the result type
  // first, as XLA does; narrowing is not supported.
  STABLERT_ASSIGN_OR_RETURN(lhs, WidenedTo(l, op, lhs, result.dtype));
  STABLERT_ASSIGN_OR_RETURN(rhs, WidenedTo(l, op, rhs, result.dtype));
  const TensorType lhs_type = l.TypeOf(lhs), rhs_type = l.TypeOf(rhs);
  STABLERT_ASSIGN_OR_RETURN(DotDims dims, ReadDotDims(l, op, lhs_type, rhs_type));
  if (dims.lhs_batch.size() != dims.rhs_batch.size() || dims.lhs_contracting.size() != dims.rhs_contracting.size())
    return l.Invalid(op, "lhs and rhs must have as many batching and contracting dimensions as each other");
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> lhs_free, FreeDims(l, op, lhs_type, dims.lhs_batch, dims.lhs_contracting));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> rhs_free, FreeDims(l, op, rhs_type, dims.rhs_batch, dims.rhs_contracting));
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i)
    if (lhs_type.dims[static_cast<size_t>(dims.lhs_batch[i])] != rhs_type.dims[static_cast<size_t>(dims.rhs_batch[i])])
      return l.Invalid(op, "batching dimension sizes differ");
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i)
    if (lhs_type.dims[static_cast<size_t>(dims.lhs_contracting[i])] !=
        rhs_type.dims[static_cast<size_t>(dims.rhs_contracting[i])])
      return l.Invalid(op, "contracting dimension sizes differ");
  Dims expected;
  for (int64_t d : dims.lhs_batch) expected.push_back(lhs_type.dims[static_cast<size_t>(d)]);
  for (int64_t d : lhs_free) expected.push_back(lhs_type.dims[static_cast<size_t>(d)]);
  for (int64_t d : rhs_free) expected.push_back(rhs_type.dims[static_cast<size_t>(d)]);
  if (expected != result.dims)
    return l.Invalid(op, "result type " + TensorTypeToString(result) + " does not match the operands (expected " +
                             DimsToString(expected) + ")");

  auto [lhs3, lhs_bkm] = Canonicalize(l, op, lhs, dims.lhs_batch, lhs_free, dims.lhs_contracting);
  auto [rhs3, rhs_bnk] = Canonicalize(l, op, rhs, dims.rhs_batch, dims.rhs_contracting, rhs_free);
  const int64_t b = Product(lhs_type, dims.lhs_batch);
  const int64_t m = Product(lhs_type, lhs_free);
  const int64_t n = Product(rhs_type, rhs_free);
  ValueId out3 = l.NewValue(TensorType{result.dtype, {b, m, n}});
  l.Emit(op, "dot." + std::string(DTypeName(result.dtype)), {lhs3, rhs3}, {out3},
         kernels::DotParams{.lhs_is_bkm = lhs_bkm, .rhs_is_bnk = rhs_bnk});
  l.Bind(op.results[0], l.NewAlias(out3, result));
  return OkStatus();
}

}  // namespace stablert::plan
