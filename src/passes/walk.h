// Walking and rewriting IR, shared by the passes: visiting every op of a function (nested
// regions included, in program order), replacing uses of values, reading and writing
// integer-list attributes.
// Header-only; not thread-safe (works on one module owned by one compilation).
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/module.h"

namespace stablert::passes {

// Calls fn(op) for every op in `region`, nested regions included, each op before the ops of
// its regions (program order).
template <typename Region, typename Fn>
void ForEachOp(Region& region, Fn&& fn) {
  for (auto& block : region.blocks)
    for (auto& op : block.ops) {
      fn(op);
      for (auto& inner : op.regions) ForEachOp(inner, fn);
    }
}

// True if removing or merging `op` cannot change what the program does: its op table row
// says kPure and so do all ops of its regions.
inline bool IsPure(const ir::Operation& op) {
  if (ir::GetOpInfo(op.code).effect != ir::Effect::kPure) return false;
  bool pure = true;
  for (const ir::Region& region : op.regions)
    ForEachOp(region, [&](const ir::Operation& inner) {
      if (ir::GetOpInfo(inner.code).effect != ir::Effect::kPure) pure = false;
    });
  return pure;
}

// True if the regions of an op with this code may read values defined outside the op
// (while, if, case: their bodies use enclosing values directly). The regions of every other
// op (reduce, sort, scatter, map, reduce_window, collectives' reducers, ...) are isolated:
// computations over their own arguments only, and must stay so.
inline bool RegionsSeeEnclosingValues(ir::OpCode code) {
  return code == ir::OpCode::kWhile || code == ir::OpCode::kIf || code == ir::OpCode::kCase;
}

ir::Region CloneRegion(ir::Module& module, const ir::Region& region,
                       std::unordered_map<ir::ValueId, ir::ValueId>& renamed);

// A copy of `op`, its regions included, whose results and block arguments are fresh values
// of `module` (same types); operands are renamed through `renamed` (values not in it stay),
// which receives the new names.
inline ir::Operation CloneOp(ir::Module& module, const ir::Operation& op,
                             std::unordered_map<ir::ValueId, ir::ValueId>& renamed) {
  ir::Operation copy;
  copy.code = op.code;
  copy.attrs = op.attrs;
  copy.location = op.location;
  for (ir::ValueId v : op.operands) {
    auto it = renamed.find(v);
    copy.operands.push_back(it != renamed.end() ? it->second : v);
  }
  for (const ir::Region& region : op.regions) copy.regions.push_back(CloneRegion(module, region, renamed));
  for (ir::ValueId v : op.results) {
    const ir::ValueId fresh = module.AddValue(module.type_of(v));
    renamed[v] = fresh;
    copy.results.push_back(fresh);
  }
  return copy;
}

// A copy of `region` as CloneOp makes it.
inline ir::Region CloneRegion(ir::Module& module, const ir::Region& region,
                              std::unordered_map<ir::ValueId, ir::ValueId>& renamed) {
  ir::Region copy;
  for (const ir::Block& block : region.blocks) {
    ir::Block& b = copy.blocks.emplace_back();
    for (ir::ValueId arg : block.arguments) {
      const ir::ValueId fresh = module.AddValue(module.type_of(arg));
      renamed[arg] = fresh;
      b.arguments.push_back(fresh);
    }
    for (const ir::Operation& op : block.ops) b.ops.push_back(CloneOp(module, op, renamed));
  }
  return copy;
}

// The entry function of `module` (Module::EntryFunction), writable; nullptr if none.
inline ir::Function* MutableEntry(ir::Module& module) {
  const ir::Function* entry = module.EntryFunction();
  for (ir::Function& f : module.functions)
    if (&f == entry) return &f;
  return nullptr;
}

// Removes the ops of `block` whose flag in `remove` (one per op) is set, keeping order.
inline void RemoveOps(ir::Block& block, const std::vector<bool>& remove) {
  size_t next = 0;
  for (size_t i = 0; i < block.ops.size(); ++i)
    if (!remove[i]) {
      if (next != i) block.ops[next] = std::move(block.ops[i]);
      ++next;
    }
  block.ops.resize(next);
}

// Replaces every use (operand) of a key of `replacements` in `region` by its value,
// following chains (a -> b -> c). Definitions are left alone.
inline void ReplaceUses(ir::Region& region, const std::unordered_map<ir::ValueId, ir::ValueId>& replacements) {
  if (replacements.empty()) return;
  ForEachOp(region, [&](ir::Operation& op) {
    for (ir::ValueId& v : op.operands)
      for (auto it = replacements.find(v); it != replacements.end(); it = replacements.find(v)) v = it->second;
  });
}

// An i64 tensor attribute holding `values` (dimensions, permutations, ...).
inline ir::Attribute IntListAttribute(const std::vector<int64_t>& values) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kS64, {static_cast<int64_t>(values.size())});
  data->bytes.resize(values.size() * 8);
  if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
  return ir::Attribute(ir::Attribute::Elements(std::move(data)));
}

// The integers of `op`'s attribute `name`; empty if it is missing or not an integer list.
inline std::vector<int64_t> IntsOf(const ir::Operation& op, const char* name) {
  const ir::Attribute* attr = op.attr(name);
  auto values = attr ? attr->AsIntArray() : std::nullopt;
  return values ? *values : std::vector<int64_t>{};
}

}  // namespace stablert::passes
