#include "passes/simplify.h"

#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <vector>

#include "passes/walk.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::ValueId;

// The value every element of a splat integer, bool or f32/f64 constant holds, as the
// element's bytes widened to 64 bits (floats by value); nullopt if not a splat of those.
struct Splat {
  bool is_float = false;
  int64_t integer = 0;   // integers and bools, sign-extended for signed types
  uint64_t bits = 0;     // the element's bytes, zero-extended
  int bytes = 0;
  double real = 0;       // floats
};

std::optional<Splat> SplatOf(const ir::ElementsData& data) {
  const DType dtype = data.type.dtype;
  const int size = DTypeByteSize(dtype);
  if (size <= 0 || size > 8 || data.bytes.empty() || data.bytes.size() % static_cast<size_t>(size) != 0)
    return std::nullopt;
  if (!(IsInteger(dtype) || dtype == DType::kPred || dtype == DType::kF32 || dtype == DType::kF64)) return std::nullopt;
  for (size_t i = static_cast<size_t>(size); i < data.bytes.size(); i += static_cast<size_t>(size))
    if (std::memcmp(data.bytes.data(), data.bytes.data() + i, static_cast<size_t>(size)) != 0) return std::nullopt;
  Splat splat;
  splat.bytes = size;
  std::memcpy(&splat.bits, data.bytes.data(), static_cast<size_t>(size));
  if (dtype == DType::kF32) {
    float f;
    std::memcpy(&f, data.bytes.data(), 4);
    splat.is_float = true;
    splat.real = f;
  } else if (dtype == DType::kF64) {
    std::memcpy(&splat.real, data.bytes.data(), 8);
    splat.is_float = true;
  } else {
    splat.integer = static_cast<int64_t>(splat.bits);
    const bool is_signed = dtype == DType::kS8 || dtype == DType::kS16 || dtype == DType::kS32;
    if (is_signed && size < 8) {
      const int shift = 64 - 8 * size;
      splat.integer = static_cast<int64_t>(splat.bits << shift) >> shift;
    }
  }
  return splat;
}

void SetAttr(ir::Operation& op, const std::string& name, ir::Attribute value) {
  for (auto& [key, attr] : op.attrs)
    if (key == name) {
      attr = std::move(value);
      return;
    }
  op.attrs.emplace_back(name, std::move(value));
}

class Simplifier {
 public:
  explicit Simplifier(ir::Module& module) : module_(module) {}

  void Run(ir::Region& region) {
    for (ir::Block& block : region.blocks)
      for (ir::Operation& op : block.ops) {
        for (ValueId& v : op.operands) v = Resolve(v);
        for (ir::Region& inner : op.regions) Run(inner);
        Rewrite(op);
        for (ValueId v : op.results) defs_[v] = &op;
      }
  }

  int rewrites() const { return rewrites_; }

 private:
  ValueId Resolve(ValueId v) const {
    for (auto it = replacements_.find(v); it != replacements_.end(); it = replacements_.find(v)) v = it->second;
    return v;
  }
  const ir::Type& TypeOf(ValueId v) const { return module_.type_of(v); }
  const ir::Operation* Def(ValueId v) const {
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  void Replace(const ir::Operation& op, ValueId by) {
    replacements_[op.results[0]] = by;
    ++rewrites_;
  }

  // The splat value of `v` if it is a splat constant, or a broadcast or reshape of one.
  std::optional<Splat> SplatValue(ValueId v) const {
    for (const ir::Operation* def = Def(v); def != nullptr; def = Def(def->operands[0])) {
      if (def->code == OpCode::kConstant) {
        const ir::Attribute* value = def->attr("value");
        const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
        return elements && *elements ? SplatOf(**elements) : std::nullopt;
      }
      if (def->code != OpCode::kBroadcastInDim && def->code != OpCode::kReshape) return std::nullopt;
    }
    return std::nullopt;
  }
  bool IsZero(ValueId v) const {
    auto s = SplatValue(v);
    return s && !s->is_float && s->integer == 0;
  }
  bool IsOne(ValueId v) const {
    auto s = SplatValue(v);
    return s && (s->is_float ? s->real == 1.0 : s->integer == 1);
  }
  bool IsAllOnes(ValueId v) const {
    auto s = SplatValue(v);
    if (!s || s->is_float) return false;
    return TypeOf(v).dtype == DType::kPred ? s->integer == 1
                                           : s->bits == (s->bytes == 8 ? ~0ull : (1ull << (8 * s->bytes)) - 1);
  }

  // x if `divide` is divide(1, add(1, exponential(negate(x)))) (the add either way round;
  // the ones splats), as JAX lowers lax.logistic (jax.nn.sigmoid).
  std::optional<ValueId> LogisticOperand(const ir::Operation& divide) const {
    if (!IsOne(divide.operands[0])) return std::nullopt;
    const ir::Operation* add = Def(divide.operands[1]);
    if (add == nullptr || add->code != OpCode::kAdd) return std::nullopt;
    const ir::Operation* exp = nullptr;
    for (int one = 0; one < 2 && exp == nullptr; ++one)
      if (IsOne(add->operands[static_cast<size_t>(one)])) exp = Def(add->operands[static_cast<size_t>(1 - one)]);
    if (exp == nullptr || exp->code != OpCode::kExponential) return std::nullopt;
    const ir::Operation* negate = Def(exp->operands[0]);
    if (negate == nullptr || negate->code != OpCode::kNegate) return std::nullopt;
    return negate->operands[0];
  }

  void Rewrite(ir::Operation& op) {
    if (op.results.size() != 1 || !TypeOf(op.results[0]).is_tensor()) return;
    const ir::Type& result = TypeOf(op.results[0]);
    const bool same_type = !op.operands.empty() && TypeOf(op.operands[0]) == result;
    const DType dtype = result.dtype;
    switch (op.code) {
      case OpCode::kConvert:
      case OpCode::kReshape:
        if (same_type) return Replace(op, op.operands[0]);
        if (op.code == OpCode::kReshape)
          if (const ir::Operation* inner = Def(op.operands[0]); inner && inner->code == OpCode::kReshape) {
            op.operands[0] = inner->operands[0];
            ++rewrites_;
            if (TypeOf(op.operands[0]) == result) Replace(op, op.operands[0]);
          }
        return;
      case OpCode::kBroadcastInDim: {
        std::vector<int64_t> dims = IntsOf(op, "broadcast_dimensions");
        std::vector<int64_t> identity(dims.size());
        std::iota(identity.begin(), identity.end(), 0);
        if (same_type && dims == identity) Replace(op, op.operands[0]);
        return;
      }
      case OpCode::kTranspose: {
        std::vector<int64_t> perm = IntsOf(op, "permutation");
        std::vector<int64_t> identity(perm.size());
        std::iota(identity.begin(), identity.end(), 0);
        if (perm == identity && same_type) return Replace(op, op.operands[0]);
        const ir::Operation* inner = Def(op.operands[0]);
        if (inner == nullptr || inner->code != OpCode::kTranspose) return;
        std::vector<int64_t> inner_perm = IntsOf(*inner, "permutation");
        if (inner_perm.size() != perm.size()) return;
        // result[i] = operand[perm[i]] = x[inner_perm[perm[i]]]
        std::vector<int64_t> composed(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) composed[i] = inner_perm[static_cast<size_t>(perm[i])];
        op.operands[0] = inner->operands[0];
        SetAttr(op, "permutation", IntListAttribute(composed));
        ++rewrites_;
        if (composed == identity && TypeOf(op.operands[0]) == result) Replace(op, op.operands[0]);
        return;
      }
      case OpCode::kSlice: {
        if (!same_type) return;
        std::vector<int64_t> start = IntsOf(op, "start_indices"), strides = IntsOf(op, "strides");
        bool whole = true;
        for (int64_t s : start) whole = whole && s == 0;
        for (int64_t s : strides) whole = whole && s == 1;
        if (whole) Replace(op, op.operands[0]);
        return;
      }
      case OpCode::kPad: {
        if (!same_type) return;
        for (const char* name : {"edge_padding_low", "edge_padding_high", "interior_padding"})
          for (int64_t p : IntsOf(op, name))
            if (p != 0) return;
        return Replace(op, op.operands[0]);
      }
      case OpCode::kReverse:
        if (same_type && IntsOf(op, "dimensions").empty()) Replace(op, op.operands[0]);
        return;
      case OpCode::kNegate:
      case OpCode::kNot:
        if (const ir::Operation* inner = Def(op.operands[0]); inner && inner->code == op.code)
          Replace(op, inner->operands[0]);
        return;
      case OpCode::kMultiply:
        if (IsInteger(dtype) || IsFloat(dtype)) {
          if (IsOne(op.operands[1]) && TypeOf(op.operands[0]) == result) return Replace(op, op.operands[0]);
          if (IsOne(op.operands[0]) && TypeOf(op.operands[1]) == result) return Replace(op, op.operands[1]);
        }
        return;
      case OpCode::kAdd:
      case OpCode::kOr:
      case OpCode::kXor:
        if (IsInteger(dtype)) {
          if (IsZero(op.operands[1])) return Replace(op, op.operands[0]);
          if (IsZero(op.operands[0])) return Replace(op, op.operands[1]);
        }
        return;
      case OpCode::kSubtract:
        if (IsInteger(dtype) && IsZero(op.operands[1])) Replace(op, op.operands[0]);
        return;
      case OpCode::kAnd:
        if (IsInteger(dtype) || dtype == DType::kPred) {
          if (IsAllOnes(op.operands[1])) return Replace(op, op.operands[0]);
          if (IsAllOnes(op.operands[0])) return Replace(op, op.operands[1]);
        }
        return;
      case OpCode::kDivide:
        if (dtype == DType::kF32 || dtype == DType::kF64) {
          if (std::optional<ValueId> x = LogisticOperand(op); x && TypeOf(*x) == result) {
            // divide(1, add(1, exponential(negate(x)))): StableRT's logistic kernel computes
            // exactly this chain, with the exponential kernel's exp (simplify.h).
            op.code = OpCode::kLogistic;
            op.operands = {*x};
            op.attrs.clear();
            ++rewrites_;
          }
        }
        return;
      case OpCode::kSelect: {
        auto predicate = SplatValue(op.operands[0]);
        if (!predicate || predicate->is_float) return;
        const ValueId chosen = op.operands[predicate->integer != 0 ? 1 : 2];
        if (TypeOf(chosen) == result) Replace(op, chosen);
        return;
      }
      default:
        return;
    }
  }

  ir::Module& module_;
  std::unordered_map<ValueId, const ir::Operation*> defs_;
  std::unordered_map<ValueId, ValueId> replacements_;
  int rewrites_ = 0;
};

}  // namespace

int Simplify(ir::Module& module) {
  ir::Function* entry = MutableEntry(module);
  if (entry == nullptr) return 0;
  Simplifier simplifier(module);
  simplifier.Run(entry->body);
  return simplifier.rewrites();
}

}  // namespace stablert::passes
