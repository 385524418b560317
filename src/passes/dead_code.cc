#include "passes/dead_code.h"

#include <vector>

#include "passes/walk.h"

namespace stablert::passes {
namespace {

class DeadCode {
 public:
  explicit DeadCode(ir::Module& module) : uses_(module.value_types.size(), 0) {}

  void CountUses(const ir::Region& region, int delta) {
    ForEachOp(region, [&](const ir::Operation& op) {
      for (ir::ValueId v : op.operands) uses_[v] += delta;
    });
  }
  void CountUses(const ir::Operation& op, int delta) {
    for (ir::ValueId v : op.operands) uses_[v] += delta;
    for (const ir::Region& region : op.regions) CountUses(region, delta);
  }

  // Walks each block backwards, so an op's users (later ops, and the ops of later ops'
  // regions) are settled before it is looked at.
  void Sweep(ir::Region& region) {
    for (ir::Block& block : region.blocks) {
      std::vector<bool> dead(block.ops.size(), false);
      for (size_t i = block.ops.size(); i-- > 0;) {
        ir::Operation& op = block.ops[i];
        if (IsDead(op)) {
          dead[i] = true;
          CountUses(op, -1);
          ++removed_;
          continue;
        }
        for (ir::Region& inner : op.regions) Sweep(inner);
      }
      RemoveOps(block, dead);
    }
  }

  int removed() const { return removed_; }

 private:
  bool IsDead(const ir::Operation& op) const {
    if (op.results.empty()) return false;
    for (ir::ValueId v : op.results)
      if (uses_[v] != 0) return false;
    return IsPure(op);
  }

  std::vector<int> uses_;
  int removed_ = 0;
};

}  // namespace

int RemoveDeadCode(ir::Module& module) {
  ir::Function* entry = MutableEntry(module);
  if (entry == nullptr) return 0;
  DeadCode dce(module);
  dce.CountUses(entry->body, +1);
  dce.Sweep(entry->body);
  return dce.removed();
}

}  // namespace stablert::passes
