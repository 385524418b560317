#include "passes/fold_constants.h"

#include <cfenv>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/shape.h"
#include "passes/constant_elements.h"
#include "passes/walk.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::ValueId;
using Data = std::shared_ptr<const ir::ElementsData>;

std::optional<int64_t> CountOf(const Dims& dims) {
  StatusOr<int64_t> count = CheckedElementCount(dims);
  return count.ok() ? std::optional<int64_t>(*count) : std::nullopt;
}

// Elements data of `type` from `bytes` (one element when `splat`); large splats keep the
// compact form the reader gives them.
Data MakeData(const ir::Type& type, std::vector<uint8_t> bytes, bool splat) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = type;
  const auto size = static_cast<size_t>(DTypeByteSize(type.dtype));
  const int64_t count = ElementCount(type.dims);
  if (splat) {
    if (static_cast<int64_t>(size) * count > ir::ElementsData::kCompactSplatBytes) {
      data->bytes = std::move(bytes);
      data->splat = true;
      return data;
    }
    data->bytes.resize(size * static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) std::memcpy(data->bytes.data() + static_cast<size_t>(i) * size, bytes.data(), size);
    return data;
  }
  data->bytes = std::move(bytes);
  return data;
}

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> StridesOf(const Dims& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// The result of `count` elements of `type` whose element at multi-index `index` is the
// element `source(index)` returns (a pointer to DTypeByteSize bytes).
template <typename Source>
Data Gather(const ir::Type& type, int64_t count, Source&& source) {
  const auto size = static_cast<size_t>(DTypeByteSize(type.dtype));
  std::vector<uint8_t> bytes(size * static_cast<size_t>(count));
  std::vector<int64_t> index(type.dims.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(bytes.data() + static_cast<size_t>(i) * size, source(index), size);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < type.dims[d]) break;
      index[d] = 0;
    }
  }
  return MakeData(type, std::move(bytes), false);
}

// The flat index of `index` in an array of `strides`.
int64_t Flat(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) flat += index[d] * strides[d];
  return flat;
}

// The op code of a reduce body `^bb(a, b): return op(a, b)` (or op(b, a)); nullopt for any
// other body.
std::optional<OpCode> ReduceBodyOp(const ir::Operation& reduce) {
  if (reduce.regions.size() != 1 || reduce.regions[0].blocks.size() != 1) return std::nullopt;
  const ir::Block& block = reduce.regions[0].blocks[0];
  if (block.arguments.size() != 2 || block.ops.size() != 2) return std::nullopt;
  const ir::Operation& op = block.ops[0];
  const ir::Operation& ret = block.ops[1];
  if (ret.code != OpCode::kReturn || ret.operands.size() != 1 || op.results.size() != 1 ||
      ret.operands[0] != op.results[0] || op.operands.size() != 2 || !op.regions.empty())
    return std::nullopt;
  const bool in_order = op.operands[0] == block.arguments[0] && op.operands[1] == block.arguments[1];
  const bool swapped = op.operands[0] == block.arguments[1] && op.operands[1] == block.arguments[0];
  if (!in_order && !swapped) return std::nullopt;
  return op.code;
}

// The default floating-point environment (round to nearest even, no flushing of denormals)
// while alive: the rules of constant_elements.h decide on denormals themselves, so the
// caller's mode (a thread that flushes denormals, as the executor's do) must not change
// what is folded.
class DefaultFloatingPointEnvironment {
 public:
  DefaultFloatingPointEnvironment() {
    std::fegetenv(&saved_);
    std::fesetenv(FE_DFL_ENV);
  }
  ~DefaultFloatingPointEnvironment() { std::fesetenv(&saved_); }
  DefaultFloatingPointEnvironment(const DefaultFloatingPointEnvironment&) = delete;
  DefaultFloatingPointEnvironment& operator=(const DefaultFloatingPointEnvironment&) = delete;

 private:
  std::fenv_t saved_;
};

class Folder {
 public:
  explicit Folder(ir::Module& module) : module_(module) {}

  void Run(ir::Region& region) {
    for (ir::Block& block : region.blocks)
      for (ir::Operation& op : block.ops) {
        for (ir::Region& inner : op.regions) Run(inner);
        Visit(op);
      }
  }

  int folds() const { return folds_; }

 private:
  void Visit(ir::Operation& op) {
    if (op.results.size() != 1 || !module_.type_of(op.results[0]).is_tensor()) return;
    if (op.code == OpCode::kConstant) {
      const ir::Attribute* value = op.attr("value");
      const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
      if (elements && *elements && (*elements)->type == module_.type_of(op.results[0]))
        known_[op.results[0]] = *elements;
      return;
    }
    std::vector<const ir::ElementsData*> operands;
    for (ValueId v : op.operands) {
      auto it = known_.find(v);
      if (it == known_.end()) return;
      operands.push_back(it->second.get());
    }
    const ir::Type& result = module_.type_of(op.results[0]);
    std::optional<int64_t> count = CountOf(result.dims);
    if (!count || DTypeByteSize(result.dtype) <= 0) return;
    Data folded = Fold(op, operands, result, *count);
    if (!folded) return;
    known_[op.results[0]] = folded;
    if (op.code == OpCode::kIota || op.code == OpCode::kBroadcastInDim) return;  // stay symbolic
    op.code = OpCode::kConstant;
    op.operands.clear();
    op.regions.clear();
    op.attrs.clear();
    op.attrs.emplace_back("value", ir::Attribute(ir::Attribute::Elements(folded)));
    ++folds_;
  }

  Data Fold(const ir::Operation& op, const std::vector<const ir::ElementsData*>& operands, const ir::Type& result,
            int64_t count) {
    const bool small = count <= kMaxFoldedElements;
    bool all_splat = !operands.empty();
    for (const ir::ElementsData* operand : operands) all_splat = all_splat && operand->splat;
    if (ir::IsElementwise(op.code)) {
      if (op.code == OpCode::kReducePrecision) return nullptr;
      // Each operand has the result's elements (or one, a rank-0 predicate or bound).
      for (const ir::ElementsData* operand : operands)
        if (operand->NumElements() != count && !(operand->type.rank() == 0 && operand->NumElements() == 1))
          return nullptr;
      if (!small && !all_splat) return nullptr;
      std::vector<uint8_t> bytes;
      const int64_t computed = all_splat ? 1 : count;
      if (!EvaluateElementwise(op, operands, result.dtype, computed, bytes)) return nullptr;
      return MakeData(result, std::move(bytes), all_splat);
    }
    switch (op.code) {
      case OpCode::kReshape:
      case OpCode::kTranspose:
      case OpCode::kSlice:
      case OpCode::kReverse:
        if (operands.size() != 1 || operands[0]->type.dtype != result.dtype) return nullptr;
        if (operands[0]->splat) return MakeData(result, operands[0]->bytes, true);
        if (!small) return nullptr;
        return Move(op, *operands[0], result, count);
      case OpCode::kConcatenate:
        if (!small) return nullptr;
        return Concatenate(op, operands, result, count);
      case OpCode::kBroadcastInDim:
        if (!small || operands.size() != 1) return nullptr;
        return Broadcast(op, *operands[0], result, count);
      case OpCode::kIota:
        if (!small) return nullptr;
        return Iota(op, result, count);
      case OpCode::kReduce:
        return Reduce(op, operands, result, count);
      default:
        return nullptr;
    }
  }

  // reshape, transpose, slice, reverse of a materialized operand.
  static Data Move(const ir::Operation& op, const ir::ElementsData& operand, const ir::Type& result, int64_t count) {
    const Dims& in_dims = operand.type.dims;
    const auto rank = static_cast<size_t>(operand.type.rank());
    if (operand.NumElements() != ElementCount(in_dims)) return nullptr;
    const std::vector<int64_t> strides = StridesOf(in_dims);
    if (op.code == OpCode::kReshape) {
      if (operand.NumElements() != count) return nullptr;
      return MakeData(result, operand.bytes, false);
    }
    if (result.dims.size() != rank) return nullptr;
    std::vector<int64_t> at(rank);
    if (op.code == OpCode::kTranspose) {
      const std::vector<int64_t> perm = IntsOf(op, "permutation");
      if (perm.size() != rank) return nullptr;
      std::vector<bool> seen(rank, false);
      for (size_t d = 0; d < rank; ++d) {
        if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(perm[d])] ||
            in_dims[static_cast<size_t>(perm[d])] != result.dims[d])
          return nullptr;
        seen[static_cast<size_t>(perm[d])] = true;
      }
      return Gather(result, count, [&](const std::vector<int64_t>& index) {
        for (size_t d = 0; d < rank; ++d) at[static_cast<size_t>(perm[d])] = index[d];
        return operand.Element(Flat(at, strides));
      });
    }
    if (op.code == OpCode::kSlice) {
      const std::vector<int64_t> start = IntsOf(op, "start_indices"), step = IntsOf(op, "strides");
      if (start.size() != rank || step.size() != rank) return nullptr;
      for (size_t d = 0; d < rank; ++d)
        if (start[d] < 0 || step[d] <= 0 ||
            (result.dims[d] > 0 && start[d] + (result.dims[d] - 1) * step[d] >= in_dims[d]))
          return nullptr;
      return Gather(result, count, [&](const std::vector<int64_t>& index) {
        for (size_t d = 0; d < rank; ++d) at[d] = start[d] + index[d] * step[d];
        return operand.Element(Flat(at, strides));
      });
    }
    // reverse
    if (result.dims != in_dims) return nullptr;
    std::vector<bool> reversed(rank, false);
    for (int64_t d : IntsOf(op, "dimensions")) {
      if (d < 0 || d >= static_cast<int64_t>(rank)) return nullptr;
      reversed[static_cast<size_t>(d)] = true;
    }
    return Gather(result, count, [&](const std::vector<int64_t>& index) {
      for (size_t d = 0; d < rank; ++d) at[d] = reversed[d] ? in_dims[d] - 1 - index[d] : index[d];
      return operand.Element(Flat(at, strides));
    });
  }

  static Data Concatenate(const ir::Operation& op, const std::vector<const ir::ElementsData*>& operands,
                          const ir::Type& result, int64_t count) {
    const ir::Attribute* attr = op.attr("dimension");
    const std::optional<int64_t> dim = attr ? attr->AsInt() : std::nullopt;
    const auto rank = static_cast<size_t>(result.rank());
    if (!dim || *dim < 0 || *dim >= static_cast<int64_t>(rank) || operands.empty()) return nullptr;
    const auto axis = static_cast<size_t>(*dim);
    std::vector<int64_t> offsets;  // of each operand along the axis
    int64_t offset = 0;
    for (const ir::ElementsData* operand : operands) {
      if (operand->type.dtype != result.dtype || operand->type.dims.size() != rank) return nullptr;
      for (size_t d = 0; d < rank; ++d)
        if (d != axis && operand->type.dims[d] != result.dims[d]) return nullptr;
      offsets.push_back(offset);
      offset += operand->type.dims[axis];
    }
    if (offset != result.dims[axis]) return nullptr;
    std::vector<std::vector<int64_t>> strides;
    for (const ir::ElementsData* operand : operands) strides.push_back(StridesOf(operand->type.dims));
    std::vector<int64_t> at(rank);
    return Gather(result, count, [&](const std::vector<int64_t>& index) {
      size_t k = operands.size() - 1;
      while (k > 0 && index[axis] < offsets[k]) --k;
      at = index;
      at[axis] -= offsets[k];
      return operands[k]->Element(Flat(at, strides[k]));
    });
  }

  static Data Broadcast(const ir::Operation& op, const ir::ElementsData& operand, const ir::Type& result,
                        int64_t count) {
    const std::vector<int64_t> mapping = IntsOf(op, "broadcast_dimensions");
    const Dims& in_dims = operand.type.dims;
    if (mapping.size() != in_dims.size() || operand.type.dtype != result.dtype) return nullptr;
    for (size_t j = 0; j < mapping.size(); ++j)
      if (mapping[j] < 0 || mapping[j] >= result.rank() ||
          (in_dims[j] != 1 && in_dims[j] != result.dims[static_cast<size_t>(mapping[j])]))
        return nullptr;
    const std::vector<int64_t> strides = StridesOf(in_dims);
    std::vector<int64_t> at(in_dims.size());
    return Gather(result, count, [&](const std::vector<int64_t>& index) {
      for (size_t j = 0; j < mapping.size(); ++j) at[j] = in_dims[j] == 1 ? 0 : index[static_cast<size_t>(mapping[j])];
      return operand.Element(Flat(at, strides));
    });
  }

  static Data Iota(const ir::Operation& op, const ir::Type& result, int64_t count) {
    const ir::Attribute* attr = op.attr("iota_dimension");
    const std::optional<int64_t> dim = attr ? attr->AsInt() : std::nullopt;
    if (!dim || *dim < 0 || *dim >= result.rank() || result.dtype == DType::kPred) return nullptr;
    const auto axis = static_cast<size_t>(*dim);
    std::vector<uint8_t> element(16);
    bool ok = true;
    Data data = Gather(result, count, [&](const std::vector<int64_t>& index) {
      ok = ok && ConvertElement(DType::kS64, result.dtype, reinterpret_cast<const uint8_t*>(&index[axis]), element.data());
      return element.data();
    });
    return ok ? data : nullptr;
  }

  static Data Reduce(const ir::Operation& op, const std::vector<const ir::ElementsData*>& operands,
                     const ir::Type& result, int64_t count) {
    const std::optional<OpCode> body = ReduceBodyOp(op);
    if (!body || operands.size() != 2) return nullptr;
    const ir::ElementsData& input = *operands[0];
    const Dims& in_dims = input.type.dims;
    if (input.NumElements() > kMaxFoldedElements || input.type.dtype != result.dtype) return nullptr;
    std::vector<bool> reduced(in_dims.size(), false);
    for (int64_t d : IntsOf(op, "dimensions")) {
      if (d < 0 || d >= input.type.rank() || reduced[static_cast<size_t>(d)]) return nullptr;
      reduced[static_cast<size_t>(d)] = true;
    }
    Dims kept;
    for (size_t d = 0; d < in_dims.size(); ++d)
      if (!reduced[d]) kept.push_back(in_dims[d]);
    if (kept != result.dims) return nullptr;
    // The output index of each input element, in row-major order.
    const std::vector<int64_t> out_strides = StridesOf(kept);
    std::vector<int64_t> group(static_cast<size_t>(input.NumElements()));
    std::vector<int64_t> index(in_dims.size(), 0);
    for (int64_t& g : group) {
      g = 0;
      for (size_t d = 0, k = 0; d < in_dims.size(); ++d)
        if (!reduced[d]) g += index[d] * out_strides[k++];
      for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < in_dims[d]) break;
        index[d] = 0;
      }
    }
    std::vector<uint8_t> bytes;
    if (!EvaluateReduce(*body, input, *operands[1], group, count, bytes)) return nullptr;
    return MakeData(result, std::move(bytes), false);
  }

  ir::Module& module_;
  std::unordered_map<ValueId, Data> known_;
  int folds_ = 0;
};

}  // namespace

int FoldConstants(ir::Module& module) {
  ir::Function* entry = MutableEntry(module);
  if (entry == nullptr) return 0;
  DefaultFloatingPointEnvironment environment;
  Folder folder(module);
  folder.Run(entry->body);
  return folder.folds();
}

}  // namespace stablert::passes
