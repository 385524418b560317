#include "passes/remove_layout_constraints.h"

#include <unordered_map>
#include <vector>

#include "passes/walk.h"

namespace stablert::passes {

int RemoveLayoutConstraints(ir::Module& module) {
  ir::Function* entry = MutableEntry(module);
  if (entry == nullptr || entry->body.blocks.empty()) return 0;
  ir::Block& block = entry->body.blocks.front();
  std::unordered_map<ir::ValueId, ir::ValueId> replacements;
  std::vector<bool> remove(block.ops.size(), false);
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const ir::Operation& op = block.ops[i];
    if (op.code != ir::OpCode::kCustomCall || op.operands.size() != 1 || op.results.size() != 1) continue;
    const ir::Attribute* target = op.attr("call_target_name");
    auto name = target ? target->AsString() : std::nullopt;
    if (!name || *name != "LayoutConstraint") continue;
    if (module.type_of(op.operands[0]) != module.type_of(op.results[0])) continue;
    replacements[op.results[0]] = op.operands[0];
    remove[i] = true;
  }
  if (replacements.empty()) return 0;
  ReplaceUses(entry->body, replacements);
  RemoveOps(block, remove);
  return static_cast<int>(replacements.size());
}

}  // namespace stablert::passes
