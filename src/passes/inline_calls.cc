#include "passes/inline_calls.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "passes/walk.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::ValueId;

class Inliner {
 public:
  Inliner(ir::Module& module, const InlineOptions& options, std::string entry)
      : module_(module), options_(options), stack_{std::move(entry)} {
    for (const ir::Function& f : module.functions) CountCallSites(f.body, +1);
  }

  int inlined() const { return inlined_; }

  // Counts the ops naming a function to call (calls, composites) in `region`.
  void CountCallSites(const ir::Region& region, int delta) {
    ForEachOp(region, [&](const ir::Operation& op) { CountCallSite(op, delta); });
  }
  void CountCallSite(const ir::Operation& op, int delta) {
    const char* attr_name = op.code == OpCode::kCall ? "callee" : op.code == OpCode::kComposite ? "decomposition" : nullptr;
    if (attr_name == nullptr) return;
    if (const ir::Attribute* attr = op.attr(attr_name))
      if (auto name = attr->AsString()) call_sites_[std::string(*name)] += delta;
  }


  Status InlineRegion(ir::Region& region, int depth) {
    for (ir::Block& block : region.blocks) {
      std::vector<ir::Operation> ops = std::move(block.ops);
      block.ops.clear();
      for (ir::Operation& op : ops) STABLERT_RETURN_IF_ERROR(Emit(std::move(op), block.ops, depth));
    }
    return OkStatus();
  }

 private:
  ValueId Resolve(ValueId v) const {
    for (auto it = replacements_.find(v); it != replacements_.end(); it = replacements_.find(v)) v = it->second;
    return v;
  }

  // The function `op` calls if it is to be inlined; nullptr to keep it.
  StatusOr<const ir::Function*> CalleeOf(const ir::Operation& op) {
    const char* attr_name = nullptr;
    if (op.code == OpCode::kCall) attr_name = "callee";
    if (op.code == OpCode::kComposite && !(options_.keep_composite && options_.keep_composite(op)))
      attr_name = "decomposition";
    if (attr_name == nullptr) return static_cast<const ir::Function*>(nullptr);
    const ir::Attribute* attr = op.attr(attr_name);
    auto name = attr ? attr->AsString() : std::nullopt;
    if (!name) return Invalid(op, std::string("missing attribute '") + attr_name + "'");
    const ir::Function* callee = module_.FindFunction(*name);
    if (callee == nullptr) return Invalid(op, "calls unknown function @" + std::string(*name));
    return callee;
  }

  Status Invalid(const ir::Operation& op, const std::string& what) const {
    return InvalidArgument(std::string(ir::OpName(op.code)) + " (" + module_.locations[op.location].ToString() +
                           "): " + what);
  }

  Status Emit(ir::Operation op, std::vector<ir::Operation>& out, int depth) {
    for (ValueId& v : op.operands) v = Resolve(v);
    STABLERT_ASSIGN_OR_RETURN(const ir::Function* callee, CalleeOf(op));
    if (callee == nullptr) {
      for (ir::Region& region : op.regions) STABLERT_RETURN_IF_ERROR(InlineRegion(region, depth));
      out.push_back(std::move(op));
      return OkStatus();
    }
    if (std::find(stack_.begin(), stack_.end(), callee->name) != stack_.end())
      return Unimplemented(std::string(ir::OpName(op.code)) + ": recursive call of @" + callee->name);
    if (depth >= kMaxCallDepth)
      return Unimplemented(std::string(ir::OpName(op.code)) + ": calls nest deeper than " +
                           std::to_string(kMaxCallDepth) + " levels (at @" + callee->name + ")");
    if (callee->body.blocks.size() != 1) return Invalid(op, "callee @" + callee->name + " must have one block");
    const ir::Block& body = callee->body.blocks[0];
    if (body.arguments.size() != op.operands.size())
      return Invalid(op, "passes " + std::to_string(op.operands.size()) + " operands to @" + callee->name +
                             ", which takes " + std::to_string(body.arguments.size()));
    std::unordered_map<ValueId, ValueId> renamed;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (module_.type_of(body.arguments[i]) != module_.type_of(op.operands[i]))
        return Invalid(op, "operand " + std::to_string(i) + " type differs from @" + callee->name + "'s argument");
      renamed[body.arguments[i]] = op.operands[i];
    }
    if (body.ops.empty() || ir::GetOpInfo(body.ops.back().code).op_class != ir::OpClass::kTerminator)
      return Invalid(op, "callee @" + callee->name + " does not end with a return");
    // The last call site of a function takes its ops as they are (their values are used
    // nowhere else); earlier ones inline a copy with fresh values, made before it is
    // processed (the callee may be inlined again meanwhile), whose own calls are new call
    // sites.
    std::vector<ir::Operation> copies;
    if (--call_sites_[callee->name] == 0) {
      ir::Function* owner = nullptr;
      for (ir::Function& f : module_.functions)
        if (&f == callee) owner = &f;
      ir::Block& stolen = owner->body.blocks[0];
      for (size_t i = 0; i < op.operands.size(); ++i) replacements_[stolen.arguments[i]] = op.operands[i];
      copies = std::move(stolen.ops);
      stolen.ops.clear();
      owner->body.blocks.clear();  // emptied: nothing may inline it again
    } else {
      for (const ir::Operation& inner : body.ops) copies.push_back(Clone(inner, renamed));
      for (const ir::Operation& copy : copies)
        for (const ir::Region& region : copy.regions) CountCallSites(region, +1);
      for (const ir::Operation& copy : copies)
        if (copy.code == OpCode::kCall || copy.code == OpCode::kComposite) CountCallSite(copy, +1);
    }
    ir::Operation ret = std::move(copies.back());
    copies.pop_back();
    if (ret.operands.size() != op.results.size())
      return Invalid(op, "@" + callee->name + " returns " + std::to_string(ret.operands.size()) +
                             " values, the call has " + std::to_string(op.results.size()) + " results");
    ++inlined_;
    stack_.push_back(callee->name);
    for (ir::Operation& inner : copies) STABLERT_RETURN_IF_ERROR(Emit(std::move(inner), out, depth + 1));
    stack_.pop_back();
    for (size_t i = 0; i < op.results.size(); ++i) {
      ValueId returned = Resolve(ret.operands[i]);
      if (module_.type_of(returned) != module_.type_of(op.results[i]))
        return Invalid(op, "result " + std::to_string(i) + " type differs from what @" + callee->name + " returns");
      replacements_[op.results[i]] = returned;
    }
    return OkStatus();
  }

  ir::Operation Clone(const ir::Operation& op, std::unordered_map<ValueId, ValueId>& renamed) {
    return CloneOp(module_, op, renamed);
  }


  ir::Module& module_;
  const InlineOptions& options_;
  int inlined_ = 0;
  std::vector<std::string> stack_;  // the entry, then the callees being inlined
  std::unordered_map<ValueId, ValueId> replacements_;  // call result -> the value it returns
  std::unordered_map<std::string, int> call_sites_;    // function -> ops still naming it
};

// Removes the functions that neither the entry nor the ops reachable from it refer to.
void DropUnreachableFunctions(ir::Module& module, const std::string& entry) {
  std::set<std::string> reachable = {entry};
  std::vector<const ir::Function*> work = {module.FindFunction(entry)};
  while (!work.empty()) {
    const ir::Function* f = work.back();
    work.pop_back();
    // Symbols may sit in arrays (custom_call's called_computations) or dictionaries.
    auto visit = [&](auto&& self, const ir::Attribute& attr) -> void {
      if (const auto* symbol = attr.get<ir::Attribute::Symbol>()) {
        if (reachable.insert(symbol->name).second)
          if (const ir::Function* g = module.FindFunction(symbol->name)) work.push_back(g);
      } else if (const auto* array = attr.get<ir::Attribute::Array>()) {
        for (const ir::Attribute& element : *array) self(self, element);
      } else if (const auto* dict = attr.get<ir::Attribute::Dictionary>()) {
        for (const auto& [name, value] : *dict) self(self, value);
      }
    };
    ForEachOp(f->body, [&](const ir::Operation& op) {
      for (const auto& [name, attr] : op.attrs) visit(visit, attr);
    });
  }
  std::erase_if(module.functions, [&](const ir::Function& f) { return !reachable.count(f.name); });
}

}  // namespace

StatusOr<int> InlineCalls(ir::Module& module, const InlineOptions& options) {
  const ir::Function* entry = module.EntryFunction();
  if (entry == nullptr) return InvalidArgument("InlineCalls: the module has no entry function");
  const std::string entry_name = entry->name;
  // The entry's body is rewritten in place while the callees are read: move it out of the
  // function list first so that looking callees up never sees a half-rewritten body.
  ir::Function* main = MutableEntry(module);
  ir::Region body = std::move(main->body);
  main->body = ir::Region{};
  Inliner inliner(module, options, entry_name);
  inliner.CountCallSites(body, +1);  // the entry's own calls (its body is out of the module)
  Status status = inliner.InlineRegion(body, 0);
  for (ir::Function& f : module.functions)
    if (f.name == entry_name) f.body = std::move(body);
  STABLERT_RETURN_IF_ERROR(status);
  DropUnreachableFunctions(module, entry_name);
  return inliner.inlined();
}

}  // namespace stablert::passes
