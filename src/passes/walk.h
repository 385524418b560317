// Walking and rewriting IR, shared by the passes: visiting every op of a function (nested
// regions included, in program order) and replacing uses of values.
// Header-only; not thread-safe (works on one module owned by one compilation).
#pragma once

#include <unordered_map>

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

// Replaces every use (operand) of a key of `replacements` in `region` by its value,
// following chains (a -> b -> c). Definitions are left alone.
inline void ReplaceUses(ir::Region& region, const std::unordered_map<ir::ValueId, ir::ValueId>& replacements) {
  if (replacements.empty()) return;
  ForEachOp(region, [&](ir::Operation& op) {
    for (ir::ValueId& v : op.operands)
      for (auto it = replacements.find(v); it != replacements.end(); it = replacements.find(v)) v = it->second;
  });
}

}  // namespace stablert::passes
