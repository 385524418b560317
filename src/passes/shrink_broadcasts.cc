#include "passes/shrink_broadcasts.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "passes/walk.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::ValueId;

constexpr const char* kBroadcastDims = "broadcast_dimensions";

int64_t NumElements(const ir::Type& type) {
  int64_t n = 1;
  for (int64_t d : type.dims) n *= d;
  return n;
}

// A broadcast_in_dim seen earlier: its operand and dimensions.
struct Broadcast {
  ValueId operand;
  std::vector<int64_t> dims;
};

// The single op of a reduce body `^bb(a, b): return op(a, b)`, or nullopt.
std::optional<OpCode> BodyOp(const ir::Operation& reduce) {
  if (reduce.regions.size() != 1 || reduce.regions[0].blocks.size() != 1) return std::nullopt;
  const ir::Block& block = reduce.regions[0].blocks[0];
  if (block.arguments.size() != 2 || block.ops.size() != 2) return std::nullopt;
  const ir::Operation& op = block.ops[0];
  const ir::Operation& ret = block.ops[1];
  if (op.operands.size() != 2 || op.results.size() != 1 || ret.operands.size() != 1 ||
      ret.operands[0] != op.results[0] || !op.regions.empty())
    return std::nullopt;
  const bool args = (op.operands[0] == block.arguments[0] && op.operands[1] == block.arguments[1]) ||
                    (op.operands[0] == block.arguments[1] && op.operands[1] == block.arguments[0]);
  return args ? std::optional<OpCode>(op.code) : std::nullopt;
}

class Shrinker {
 public:
  explicit Shrinker(ir::Module& module) : module_(module) {}

  void Run(ir::Region& region) {
    for (ir::Block& block : region.blocks) {
      std::vector<ir::Operation> ops;
      ops.reserve(block.ops.size());
      for (ir::Operation& op : block.ops) {
        for (ir::Region& inner : op.regions) Run(inner);
        out_ = &ops;
        if (ir::IsElementwise(op.code)) ShrinkElementwise(op);
        else if (op.code == OpCode::kReduce) ShrinkReduce(op);
        if (op.code == OpCode::kBroadcastInDim && op.operands.size() == 1 && op.results.size() == 1)
          broadcasts_[op.results[0]] = {op.operands[0], IntsOf(op, kBroadcastDims)};
        ops.push_back(std::move(op));
      }
      block.ops = std::move(ops);
    }
  }

  int rewrites() const { return rewrites_; }

 private:
  const ir::Type& TypeOf(ValueId v) const { return module_.type_of(v); }
  const Broadcast* BroadcastOf(ValueId v) const {
    auto it = broadcasts_.find(v);
    return it == broadcasts_.end() ? nullptr : &it->second;
  }

  // Appends an op (before the one being rewritten) and returns its result.
  ValueId Emit(OpCode code, std::vector<ValueId> operands, ir::Type type, ir::LocationId location,
               ir::Attribute::Dictionary attrs = {}) {
    ir::Operation op;
    op.code = code;
    op.operands = std::move(operands);
    op.results = {module_.AddValue(std::move(type))};
    op.attrs = std::move(attrs);
    op.location = location;
    out_->push_back(std::move(op));
    const ValueId result = out_->back().results[0];
    if (code == OpCode::kBroadcastInDim) broadcasts_[result] = {out_->back().operands[0], IntsOf(out_->back(), kBroadcastDims)};
    return result;
  }
  ValueId EmitBroadcast(ValueId v, const ir::Type& to, std::vector<int64_t> dims, ir::LocationId location) {
    return Emit(OpCode::kBroadcastInDim, {v}, to, location, {{kBroadcastDims, IntListAttribute(dims)}});
  }
  // Turns `op` into broadcast_in_dim(small) keeping its result value.
  void BecomeBroadcast(ir::Operation& op, ValueId small, std::vector<int64_t> dims) {
    op.code = OpCode::kBroadcastInDim;
    op.operands = {small};
    op.attrs = {{kBroadcastDims, IntListAttribute(dims)}};
    op.regions.clear();
    ++rewrites_;
  }

  void ShrinkElementwise(ir::Operation& op) {
    if (op.results.size() != 1 || op.operands.empty()) return;
    const ir::Type result = TypeOf(op.results[0]);  // copies: emitting adds values and broadcasts
    // The common (operand shape, dimensions) of the non-scalar broadcasts.
    std::optional<Broadcast> shape;
    for (ValueId v : op.operands) {
      const Broadcast* b = BroadcastOf(v);
      if (b == nullptr) {
        if (TypeOf(v).rank() == 0 && result.rank() != 0) continue;  // select's predicate, clamp's bounds
        return;
      }
      if (TypeOf(b->operand).rank() == 0) continue;
      if (!shape) shape = *b;
      else if (b->dims != shape->dims || TypeOf(b->operand).dims != TypeOf(shape->operand).dims) return;
    }
    const ir::Type small_shape = shape ? TypeOf(shape->operand) : ir::Type::Tensor(result.dtype, {});
    if (NumElements(small_shape) >= NumElements(result)) return;
    std::vector<ValueId> operands;
    for (ValueId v : op.operands) {
      const Broadcast* b = BroadcastOf(v);
      if (b == nullptr) {
        operands.push_back(v);  // rank 0, as the op allows it
      } else if (shape && TypeOf(b->operand).rank() == 0) {
        const ValueId scalar = b->operand;
        operands.push_back(EmitBroadcast(scalar, ir::Type::Tensor(TypeOf(v).dtype, small_shape.dims), {}, op.location));
      } else {
        operands.push_back(b->operand);
      }
    }
    const ValueId small = Emit(op.code, std::move(operands), ir::Type::Tensor(result.dtype, small_shape.dims),
                               op.location, op.attrs);
    BecomeBroadcast(op, small, shape ? shape->dims : std::vector<int64_t>{});
  }

  bool IsZeroSplat(ValueId v) const {
    // A rank-0 constant (or a broadcast of one) whose bytes are all zero (+0.0 or 0).
    for (int depth = 0; depth < 4; ++depth) {
      if (const Broadcast* b = BroadcastOf(v)) {
        v = b->operand;
        continue;
      }
      auto it = constants_.find(v);
      if (it == constants_.end()) return false;
      for (uint8_t byte : it->second) if (byte != 0) return false;
      return true;
    }
    return false;
  }

  void ShrinkReduce(ir::Operation& op) {
    if (op.operands.size() != 2 || op.results.size() != 1) return;
    const Broadcast* found = BroadcastOf(op.operands[0]);
    const auto body = BodyOp(op);
    if (found == nullptr || !body) return;
    const Broadcast broadcast = *found;  // copies: emitting adds values and broadcasts
    const Broadcast* b = &broadcast;
    const ir::Type input = TypeOf(op.operands[0]);
    const ir::Type x_type = TypeOf(b->operand);
    const DType dtype = input.dtype;
    const bool sum = *body == OpCode::kAdd;
    if (!sum && *body != OpCode::kMaximum && *body != OpCode::kMinimum && *body != OpCode::kAnd && *body != OpCode::kOr)
      return;
    if (b->dims.size() != x_type.dims.size() || NumElements(x_type) >= NumElements(input)) return;
    const std::vector<int64_t> reduced = IntsOf(op, "dimensions");
    std::vector<bool> is_reduced(input.dims.size(), false);
    for (int64_t d : reduced) {
      if (d < 0 || static_cast<size_t>(d) >= input.dims.size()) return;
      is_reduced[static_cast<size_t>(d)] = true;
    }
    // from_x[d]: the operand dimension that result dimension d comes from (-1: created).
    std::vector<int64_t> from_x(input.dims.size(), -1);
    for (size_t j = 0; j < b->dims.size(); ++j) {
      const int64_t d = b->dims[j];
      if (d < 0 || static_cast<size_t>(d) >= input.dims.size()) return;
      from_x[static_cast<size_t>(d)] = static_cast<int64_t>(j);
    }
    // N: how many times each value of x is repeated over the reduced dimensions.
    int64_t copies = 1;
    std::vector<int64_t> x_reduced;
    for (size_t d = 0; d < input.dims.size(); ++d) {
      if (!is_reduced[d]) continue;
      const int64_t j = from_x[d];
      if (j >= 0) x_reduced.push_back(j);
      if (j < 0 || x_type.dims[static_cast<size_t>(j)] != input.dims[d]) copies *= input.dims[d];
    }
    // Sums over repeated values become products: integers, f32, f64, from a zero init.
    if (sum && copies > 1 &&
        (!(dtype == DType::kF32 || dtype == DType::kF64 || IsInteger(dtype)) || !IsZeroSplat(op.operands[1])))
      return;
    std::sort(x_reduced.begin(), x_reduced.end());
    // y = reduce(x, x_reduced): x's kept dimensions in order.
    ir::Type y_type = ir::Type::Tensor(dtype, {});
    for (size_t j = 0; j < x_type.dims.size(); ++j)
      if (!std::binary_search(x_reduced.begin(), x_reduced.end(), static_cast<int64_t>(j)))
        y_type.dims.push_back(x_type.dims[j]);
    ValueId y = b->operand;
    if (!x_reduced.empty()) {
      ir::Operation reduce;
      reduce.code = OpCode::kReduce;
      reduce.operands = {b->operand, op.operands[1]};
      reduce.results = {module_.AddValue(y_type)};
      reduce.attrs = op.attrs;
      for (auto& [name, attr] : reduce.attrs)
        if (name == "dimensions") attr = IntListAttribute(x_reduced);
      reduce.regions = std::move(op.regions);
      reduce.location = op.location;
      out_->push_back(std::move(reduce));
      y = out_->back().results[0];
    }
    if (sum && copies > 1) {
      const ValueId n = EmitBroadcast(Constant(dtype, copies, op.location), y_type, {}, op.location);
      y = Emit(OpCode::kMultiply, {y, n}, y_type, op.location);
      if (x_reduced.empty() && IsFloat(dtype)) {  // the init's sign of zero, as the sum gives it
        ValueId init = op.operands[1];
        if (TypeOf(init).rank() != 0) return;  // (a reduce's init is rank 0)
        y = Emit(OpCode::kAdd, {y, EmitBroadcast(init, y_type, {}, op.location)}, y_type, op.location);
      }
    }
    // Result dimensions: the kept ones, in order; x's kept dimensions land on their positions.
    std::vector<int64_t> position(input.dims.size(), -1);
    int64_t next = 0;
    for (size_t d = 0; d < input.dims.size(); ++d)
      if (!is_reduced[d]) position[d] = next++;
    std::vector<int64_t> dims;
    for (size_t j = 0; j < b->dims.size(); ++j)
      if (!std::binary_search(x_reduced.begin(), x_reduced.end(), static_cast<int64_t>(j)))
        dims.push_back(position[static_cast<size_t>(b->dims[j])]);
    BecomeBroadcast(op, y, std::move(dims));
  }

  // A rank-0 constant of `dtype` holding `value` (integers wrap to their width).
  ValueId Constant(DType dtype, int64_t value, ir::LocationId location) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = ir::Type::Tensor(dtype, {});
    const size_t size = static_cast<size_t>(DTypeByteSize(dtype));
    data->bytes.resize(size);
    if (dtype == DType::kF32) {
      const auto f = static_cast<float>(value);
      std::memcpy(data->bytes.data(), &f, 4);
    } else if (dtype == DType::kF64) {
      const auto f = static_cast<double>(value);
      std::memcpy(data->bytes.data(), &f, 8);
    } else {
      std::memcpy(data->bytes.data(), &value, size);  // little-endian: the low bytes
    }
    const ValueId v = Emit(OpCode::kConstant, {}, data->type, location,
                           {{"value", ir::Attribute(ir::Attribute::Elements(data))}});
    constants_[v] = data->bytes;
    return v;
  }

 public:
  // Records rank-0 constants (for the zero-init test) before the walk.
  void NoteConstants(const ir::Region& region) {
    ForEachOp(region, [&](const ir::Operation& op) {
      if (op.code != OpCode::kConstant || op.results.size() != 1 || TypeOf(op.results[0]).rank() != 0) return;
      const ir::Attribute* value = op.attr("value");
      const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
      if (elements && *elements) constants_[op.results[0]] = (*elements)->bytes;
    });
  }

 private:
  ir::Module& module_;
  std::vector<ir::Operation>* out_ = nullptr;
  std::unordered_map<ValueId, Broadcast> broadcasts_;
  std::unordered_map<ValueId, std::vector<uint8_t>> constants_;
  int rewrites_ = 0;
};

}  // namespace

int ShrinkBroadcasts(ir::Module& module) {
  ir::Function* entry = MutableEntry(module);
  if (entry == nullptr) return 0;
  Shrinker shrinker(module);
  shrinker.NoteConstants(entry->body);
  shrinker.Run(entry->body);
  return shrinker.rewrites();
}

}  // namespace stablert::passes
