#include "passes/expand_maps.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "passes/walk.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::ValueId;

bool IsScalar(const ir::Type& type) { return type.is_tensor() && type.dims.empty(); }

// A rank-0 constant of `dtype` whose bytes are `value` (little-endian, truncated to the
// element's byte size; complex: the real part).
ir::Operation ScalarConstant(ir::Module& module, DType dtype, int64_t value, ir::LocationId location) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(dtype, {});
  data->bytes.assign(static_cast<size_t>(DTypeByteSize(dtype)), 0);
  for (size_t i = 0; i < data->bytes.size() && i < 8; ++i) data->bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  ir::Operation op;
  op.code = OpCode::kConstant;
  op.attrs = {{"value", ir::Attribute(ir::Attribute::Elements(std::move(data)))}};
  op.results = {module.AddValue(ir::Type::Tensor(dtype, {}))};
  op.location = location;
  return op;
}

class MapExpander {
 public:
  explicit MapExpander(ir::Module& module) : module_(module) {}

  int expanded() const { return expanded_; }
  const std::unordered_map<ValueId, ValueId>& replacements() const { return replacements_; }

  // Expands the maps of `region`, innermost first (a map in a body is expanded before the
  // body is looked at).
  Status ExpandRegion(ir::Region& region) {
    for (ir::Block& block : region.blocks) {
      std::vector<ir::Operation> ops = std::move(block.ops);
      block.ops.clear();
      for (ir::Operation& op : ops) {
        for (ir::Region& inner : op.regions) STABLERT_RETURN_IF_ERROR(ExpandRegion(inner));
        if (op.code != OpCode::kMap) {
          block.ops.push_back(std::move(op));
          continue;
        }
        STABLERT_RETURN_IF_ERROR(Check(op));
        out_ = &block.ops;
        map_ = &op;
        const ValueId result = Inlinable(op) ? Inline(op) : Loop(op);
        replacements_[op.results[0]] = result;
        ++expanded_;
      }
    }
    return OkStatus();
  }

 private:
  Status Invalid(const ir::Operation& op, const std::string& what) const {
    return InvalidArgument(std::string(ir::OpName(op.code)) + " (" + module_.locations[op.location].ToString() +
                           "): " + what);
  }

  // The specification's constraints on a map (C1-C4).
  Status Check(const ir::Operation& op) const {
    if (op.results.size() != 1 || !module_.type_of(op.results[0]).is_tensor())
      return Invalid(op, "expected one tensor result");
    const ir::Type& result = module_.type_of(op.results[0]);
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ir::Type& type = module_.type_of(op.operands[i]);
      if (!type.is_tensor() || type.dims != result.dims)
        return Invalid(op, "operand " + std::to_string(i) + " of type " + ir::TypeToString(type) +
                               " does not have the result's shape " + ir::TypeToString(result));
    }
    const ir::Attribute* attr = op.attr("dimensions");
    auto dimensions = attr ? attr->AsIntArray() : std::nullopt;
    if (!dimensions) return Invalid(op, "missing integer-list attribute 'dimensions'");
    bool in_order = static_cast<int64_t>(dimensions->size()) == result.rank();
    for (size_t d = 0; in_order && d < dimensions->size(); ++d) in_order = (*dimensions)[d] == static_cast<int64_t>(d);
    if (!in_order)
      return Invalid(op, "dimensions must be [0, ..., " + std::to_string(result.rank() - 1) +
                             "] (every dimension of the operands, in order), got " + DimsToString(*dimensions));
    if (op.regions.size() != 1 || op.regions[0].blocks.size() != 1)
      return Invalid(op, "expected a body of one region with one block");
    const ir::Block& block = op.regions[0].blocks[0];
    if (block.arguments.size() != op.operands.size())
      return Invalid(op, "the body takes " + std::to_string(block.arguments.size()) + " arguments, expected " +
                             std::to_string(op.operands.size()) + " (one per operand)");
    for (size_t i = 0; i < block.arguments.size(); ++i) {
      const ir::Type& type = module_.type_of(block.arguments[i]);
      const ir::Type expected = ir::Type::Tensor(module_.type_of(op.operands[i]).dtype, {});
      if (type != expected)
        return Invalid(op, "body argument " + std::to_string(i) + " is " + ir::TypeToString(type) + ", expected " +
                               ir::TypeToString(expected));
    }
    if (block.ops.empty() || block.ops.back().code != OpCode::kReturn || block.ops.back().operands.size() != 1)
      return Invalid(op, "the body must return exactly one value");
    const ir::Type& returned = module_.type_of(block.ops.back().operands[0]);
    const ir::Type expected = ir::Type::Tensor(result.dtype, {});
    if (returned != expected)
      return Invalid(op, "the body returns " + ir::TypeToString(returned) + ", expected " + ir::TypeToString(expected));
    return OkStatus();
  }

  // Whether every op of the body is scalar elementwise code (see the header).
  bool Inlinable(const ir::Operation& op) const {
    const ir::Block& block = op.regions[0].blocks[0];
    for (const ir::Operation& body_op : block.ops) {
      if (body_op.code == OpCode::kReturn) continue;
      if (!body_op.regions.empty() || body_op.results.size() != 1) return false;
      const bool shape_rename = body_op.code == OpCode::kReshape || body_op.code == OpCode::kBroadcastInDim;
      if (!ir::IsElementwise(body_op.code) && body_op.code != OpCode::kConstant &&
          body_op.code != OpCode::kBitcastConvert && !shape_rename)
        return false;
      if (shape_rename && body_op.operands.size() != 1) return false;
      if (!IsScalar(module_.type_of(body_op.results[0]))) return false;
      for (ValueId v : body_op.operands)
        if (!IsScalar(module_.type_of(v))) return false;
    }
    return true;
  }

  ValueId Emit(OpCode code, std::vector<ValueId> operands, ir::Type type, ir::Attribute::Dictionary attrs = {},
               std::vector<ir::Region> regions = {}) {
    ir::Operation op;
    op.code = code;
    op.operands = std::move(operands);
    op.results = {module_.AddValue(std::move(type))};
    op.attrs = std::move(attrs);
    op.regions = std::move(regions);
    op.location = map_->location;
    out_->push_back(std::move(op));
    return out_->back().results[0];
  }
  void EmitReturn(std::vector<ValueId> values) {
    ir::Operation op;
    op.code = OpCode::kReturn;
    op.operands = std::move(values);
    op.location = map_->location;
    out_->push_back(std::move(op));
  }
  ValueId BroadcastScalar(ValueId scalar, const Dims& dims) {
    if (dims.empty()) return scalar;
    return Emit(OpCode::kBroadcastInDim, {scalar}, ir::Type::Tensor(module_.type_of(scalar).dtype, dims),
                {{"broadcast_dimensions", IntListAttribute({})}});
  }
  ValueId Constant(DType dtype, int64_t value) {
    out_->push_back(ScalarConstant(module_, dtype, value, map_->location));
    return out_->back().results[0];
  }

  // The body's ops over the whole operands.
  ValueId Inline(ir::Operation& op) {
    const Dims dims = module_.type_of(op.results[0]).dims;
    ir::Block& block = op.regions[0].blocks[0];
    std::unordered_map<ValueId, ValueId> whole;  // body value -> its value over the whole shape
    for (size_t i = 0; i < block.arguments.size(); ++i) whole[block.arguments[i]] = op.operands[i];
    auto over_whole = [&](ValueId v) {
      auto it = whole.find(v);
      if (it != whole.end()) return it->second;
      return whole[v] = BroadcastScalar(v, dims);  // a scalar from outside the body
    };
    for (ir::Operation& body_op : block.ops) {
      if (body_op.code == OpCode::kReturn) return over_whole(body_op.operands[0]);
      const ValueId result = body_op.results[0];
      if (body_op.code == OpCode::kConstant) {
        out_->push_back(std::move(body_op));
        whole[result] = BroadcastScalar(result, dims);
        continue;
      }
      if ((body_op.code == OpCode::kReshape || body_op.code == OpCode::kBroadcastInDim) &&
          module_.type_of(body_op.operands[0]).dtype == module_.type_of(result).dtype) {
        whole[result] = over_whole(body_op.operands[0]);
        continue;
      }
      std::vector<ValueId> operands;
      for (ValueId v : body_op.operands) operands.push_back(over_whole(v));
      ir::Operation copy;
      copy.code = body_op.code;
      copy.operands = std::move(operands);
      copy.attrs = std::move(body_op.attrs);
      copy.location = body_op.location != 0 ? body_op.location : op.location;
      copy.results = {module_.AddValue(ir::Type::Tensor(module_.type_of(result).dtype, dims))};
      whole[result] = copy.results[0];
      out_->push_back(std::move(copy));
    }
    return ValueId{0};  // unreachable: Check saw the return
  }

  // The body once per element, in a while loop (see the header).
  ValueId Loop(ir::Operation& op) {
    const ir::Type result_type = module_.type_of(op.results[0]);
    const int64_t n = ElementCount(result_type.dims);
    if (n == 0) return BroadcastScalar(Constant(result_type.dtype, 0), result_type.dims);
    const ir::Type index = ir::Type::Tensor(DType::kS64, {});
    const ir::Type flat = ir::Type::Tensor(result_type.dtype, {n});
    std::vector<ValueId> flat_operands;
    for (ValueId v : op.operands)
      flat_operands.push_back(Emit(OpCode::kReshape, {v}, ir::Type::Tensor(module_.type_of(v).dtype, {n})));
    const ValueId zeros = BroadcastScalar(Constant(result_type.dtype, 0), {n});
    const ValueId start = Constant(DType::kS64, 0);

    std::vector<ir::Operation>* outer = out_;
    ir::Region cond, body;
    {
      ir::Block& block = cond.blocks.emplace_back();
      block.arguments = {module_.AddValue(index), module_.AddValue(flat)};
      out_ = &block.ops;
      const ValueId count = Constant(DType::kS64, n);
      const ValueId more = Emit(OpCode::kCompare, {block.arguments[0], count}, ir::Type::Tensor(DType::kPred, {}),
                                {{"comparison_direction", ir::Attribute(ir::EnumValue{ir::EnumKind::kComparisonDirection, 5})},
                                 {"compare_type", ir::Attribute(ir::EnumValue{ir::EnumKind::kComparisonType, 3})}});
      EmitReturn({more});
    }
    {
      ir::Block& block = body.blocks.emplace_back();
      block.arguments = {module_.AddValue(index), module_.AddValue(flat)};
      out_ = &block.ops;
      const ValueId i = block.arguments[0];
      ir::Block& map_body = op.regions[0].blocks[0];
      std::unordered_map<ValueId, ValueId> elements;  // body argument -> element i of its operand
      for (size_t k = 0; k < flat_operands.size(); ++k) {
        const DType dtype = module_.type_of(flat_operands[k]).dtype;
        const ValueId slice = Emit(OpCode::kDynamicSlice, {flat_operands[k], i}, ir::Type::Tensor(dtype, {1}),
                                   {{"slice_sizes", IntListAttribute({1})}});
        elements[map_body.arguments[k]] = Emit(OpCode::kReshape, {slice}, ir::Type::Tensor(dtype, {}));
      }
      ValueId returned = 0;
      for (ir::Operation& body_op : map_body.ops) {
        for (ValueId& v : body_op.operands)
          if (auto it = elements.find(v); it != elements.end()) v = it->second;
        if (body_op.code == OpCode::kReturn) {
          returned = body_op.operands[0];
          break;
        }
        block.ops.push_back(std::move(body_op));
      }
      // Uses inside nested regions of the body's ops.
      ReplaceUses(body, elements);
      const ValueId element = Emit(OpCode::kReshape, {returned}, ir::Type::Tensor(result_type.dtype, {1}));
      const ValueId updated = Emit(OpCode::kDynamicUpdateSlice, {block.arguments[1], element, i}, flat);
      const ValueId next = Emit(OpCode::kAdd, {i, Constant(DType::kS64, 1)}, index);
      EmitReturn({next, updated});
    }
    out_ = outer;
    std::vector<ir::Region> regions;
    regions.push_back(std::move(cond));
    regions.push_back(std::move(body));
    Emit(OpCode::kWhile, {start, zeros}, index, {}, std::move(regions));
    ir::Operation& loop = out_->back();
    loop.results.push_back(module_.AddValue(flat));
    const ValueId computed = loop.results[1];
    return Emit(OpCode::kReshape, {computed}, result_type);
  }

  ir::Module& module_;
  std::unordered_map<ValueId, ValueId> replacements_;
  std::vector<ir::Operation>* out_ = nullptr;  // where Emit appends
  const ir::Operation* map_ = nullptr;         // the map being expanded (its location)
  int expanded_ = 0;
};

}  // namespace

StatusOr<int> ExpandMaps(ir::Module& module) {
  MapExpander expander(module);
  for (ir::Function& f : module.functions) STABLERT_RETURN_IF_ERROR(expander.ExpandRegion(f.body));
  for (ir::Function& f : module.functions) ReplaceUses(f.body, expander.replacements());
  return expander.expanded();
}

}  // namespace stablert::passes
