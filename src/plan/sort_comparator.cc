#include "plan/sort_comparator.h"

#include <cstring>
#include <unordered_map>

namespace stablert::plan {
namespace {

using ir::OpCode;

constexpr int64_t kEQ = 0, kNE = 1, kGT = 3, kLT = 5;
constexpr int64_t kNoType = 0, kFloatType = 1, kTotalOrder = 2, kSigned = 3, kUnsigned = 4;

struct Matcher {
  const Lowering& l;
  const ir::Block& block;
  DType dtype;  // the key's own element type
  std::unordered_map<ir::ValueId, const ir::Operation*> defs;

  const ir::Operation* Def(ir::ValueId v) const {
    auto it = defs.find(v);
    return it == defs.end() ? nullptr : it->second;
  }

  std::optional<int64_t> EnumAttr(const ir::Operation& op, const char* name) const {
    const ir::Attribute* attr = op.attr(name);
    const ir::EnumValue* value = attr ? attr->get<ir::EnumValue>() : nullptr;
    if (value == nullptr) return std::nullopt;
    return value->value;
  }

  // The bits of a scalar constant of the key's type, if `v` is one.
  std::optional<uint64_t> ConstantBits(ir::ValueId v) const {
    if (v >= l.module().value_types.size()) return std::nullopt;
    const ir::Type& own = l.module().value_types[v];
    if (!own.is_tensor() || !own.dims.empty() || own.dtype != dtype) return std::nullopt;
    const std::vector<uint8_t>* bytes = nullptr;
    if (const ir::Operation* def = Def(v)) {
      if (def->code != OpCode::kConstant) return std::nullopt;
      const ir::Attribute* attr = def->attr("value");
      const ir::Attribute::Elements* elements = attr ? attr->get<ir::Attribute::Elements>() : nullptr;
      if (elements == nullptr || *elements == nullptr) return std::nullopt;
      bytes = &(*elements)->bytes;
    } else {
      bytes = l.BoundConstant(v);
    }
    const size_t size = static_cast<size_t>(DTypeByteSize(dtype));
    if (bytes == nullptr || bytes->size() != size || size > 8) return std::nullopt;
    uint64_t bits = 0;
    std::memcpy(&bits, bytes->data(), size);
    return bits;
  }

  uint64_t SignBit() const { return uint64_t{1} << (8 * DTypeByteSize(dtype) - 1); }
  uint64_t InfBits() const {
    switch (dtype) {
      case DType::kF16: return 0x7c00;
      case DType::kBF16: return 0x7f80;
      case DType::kF32: return 0x7f800000;
      case DType::kF64: return 0x7ff0000000000000;
      default: return 0;
    }
  }
  bool IsZero(ir::ValueId v) const {
    auto bits = ConstantBits(v);
    return bits && (*bits & ~SignBit()) == 0;
  }
  bool IsPositiveNaN(ir::ValueId v) const {
    auto bits = ConstantBits(v);
    return bits && (*bits & SignBit()) == 0 && *bits > InfBits();
  }

  bool IsCompare(ir::ValueId v, int64_t direction, ir::ValueId* lhs, ir::ValueId* rhs) const {
    const ir::Operation* def = Def(v);
    if (def == nullptr || def->code != OpCode::kCompare || def->operands.size() != 2) return false;
    if (EnumAttr(*def, "comparison_direction") != direction) return false;
    const int64_t type = EnumAttr(*def, "compare_type").value_or(kNoType);
    if (type != kNoType && type != kFloatType) return false;
    *lhs = def->operands[0];
    *rhs = def->operands[1];
    return true;
  }

  // Which argument (0: lhs, 1: rhs of the first operand pair) `v` is, and whether it was
  // canonicalized (zeros and NaNs replaced); nullopt for anything else.
  std::optional<std::pair<int, bool>> Side(ir::ValueId v) const {
    bool zeros = false, nans = false;
    std::optional<ir::ValueId> subject;
    for (int depth = 0; depth < 2; ++depth) {
      if (v == block.arguments[0] || v == block.arguments[1]) break;
      const ir::Operation* select = Def(v);
      if (select == nullptr || select->code != OpCode::kSelect || select->operands.size() != 3) return std::nullopt;
      ir::ValueId lhs, rhs;
      const ir::ValueId pred = select->operands[0], replacement = select->operands[1];
      if (IsCompare(pred, kNE, &lhs, &rhs) && lhs == rhs && IsPositiveNaN(replacement) && !nans) {
        nans = true;
      } else if (IsCompare(pred, kEQ, &lhs, &rhs) && IsZero(replacement) && !zeros) {
        if (IsZero(lhs)) std::swap(lhs, rhs);
        if (!IsZero(rhs)) return std::nullopt;
        zeros = true;
      } else {
        return std::nullopt;
      }
      if (subject && *subject != lhs) return std::nullopt;
      subject = lhs;
      v = select->operands[2];
    }
    const int side = v == block.arguments[0] ? 0 : v == block.arguments[1] ? 1 : -1;
    if (side < 0 || (subject && *subject != v) || zeros != nans) return std::nullopt;
    return std::make_pair(side, zeros);
  }
};

}  // namespace

std::optional<SortComparatorOrder> MatchSortComparator(const Lowering& l, const ir::Region& region,
                                                       size_t num_operands) {
  if (region.blocks.size() != 1) return std::nullopt;
  const ir::Block& block = region.blocks[0];
  if (block.arguments.size() != 2 * num_operands || block.ops.empty()) return std::nullopt;
  const ir::ValueId a = block.arguments[0];
  if (a >= l.module().value_types.size()) return std::nullopt;
  const ir::Type& key_type = l.module().value_types[a];
  if (!key_type.is_tensor() || !key_type.dims.empty()) return std::nullopt;
  Matcher m{l, block, key_type.dtype, {}};
  for (const ir::Operation& op : block.ops)
    for (ir::ValueId result : op.results) m.defs[result] = &op;
  const ir::Operation& ret = block.ops.back();
  if (ret.code != OpCode::kReturn || ret.operands.size() != 1) return std::nullopt;
  const ir::Operation* compare = m.Def(ret.operands[0]);
  if (compare == nullptr || compare->code != OpCode::kCompare || compare->operands.size() != 2) return std::nullopt;
  const std::optional<int64_t> direction = m.EnumAttr(*compare, "comparison_direction");
  const int64_t type = m.EnumAttr(*compare, "compare_type").value_or(kNoType);
  if (direction != kLT && direction != kGT) return std::nullopt;
  auto lhs = m.Side(compare->operands[0]), rhs = m.Side(compare->operands[1]);
  if (!lhs || !rhs || lhs->first == rhs->first || lhs->second != rhs->second) return std::nullopt;
  const bool canonical = lhs->second;
  SortComparatorOrder result;
  result.descending = (direction == kGT) == (lhs->first == 0);
  switch (DTypeKindOf(m.dtype)) {
    case DTypeKind::kBool:
    case DTypeKind::kUnsigned:
      if (canonical || (type != kNoType && type != kUnsigned)) return std::nullopt;
      result.order = kernels::sort::Order::kInteger;
      break;
    case DTypeKind::kSigned:
      if (canonical || (type != kNoType && type != kSigned)) return std::nullopt;
      result.order = kernels::sort::Order::kInteger;
      break;
    case DTypeKind::kFloat:
      if (m.InfBits() == 0 || type != kTotalOrder) return std::nullopt;
      result.order = canonical ? kernels::sort::Order::kCanonical : kernels::sort::Order::kTotalOrder;
      break;
    default:
      return std::nullopt;
  }
  // Sub-byte and narrow integer types the kernels do not register.
  switch (m.dtype) {
    case DType::kPred: case DType::kS8: case DType::kU8: case DType::kS16: case DType::kU16: case DType::kS32:
    case DType::kU32: case DType::kS64: case DType::kU64: case DType::kF16: case DType::kBF16: case DType::kF32:
    case DType::kF64:
      break;
    default:
      return std::nullopt;
  }
  return result;
}

}  // namespace stablert::plan
