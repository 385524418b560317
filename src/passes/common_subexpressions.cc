#include "passes/common_subexpressions.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "passes/walk.h"

namespace stablert::passes {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

class Cse {
 public:
  explicit Cse(ir::Module& module) : module_(module) {}

  void Run(ir::Region& region) {
    for (ir::Block& block : region.blocks) {
      const size_t scope = inserted_.size();
      std::vector<bool> merged(block.ops.size(), false);
      for (size_t i = 0; i < block.ops.size(); ++i) {
        ir::Operation& op = block.ops[i];
        for (ir::ValueId& v : op.operands) v = Resolve(v);
        if (!Candidate(op)) {
          if (RegionsSeeEnclosingValues(op.code)) {
            for (ir::Region& inner : op.regions) Run(inner);
          } else {
            // An isolated region (a reduce body, a comparator) must not come to read an
            // enclosing op's result: it starts with an empty table.
            Table outer_table = std::move(table_);
            auto outer_inserted = std::move(inserted_);
            table_.clear();
            inserted_.clear();
            for (ir::Region& inner : op.regions) Run(inner);
            table_ = std::move(outer_table);
            inserted_ = std::move(outer_inserted);
          }
          continue;
        }
        const uint64_t key = Key(op);
        const ir::Operation* same = nullptr;
        auto [begin, end] = table_.equal_range(key);
        for (auto it = begin; it != end && same == nullptr; ++it)
          if (Identical(*it->second, op)) same = it->second;
        if (same != nullptr) {
          for (size_t r = 0; r < op.results.size(); ++r) replacements_[op.results[r]] = same->results[r];
          merged[i] = true;
          ++removed_;
          continue;
        }
        table_.emplace(key, &op);
        inserted_.emplace_back(key, &op);
      }
      // Leave the block's scope before its ops move. (Entries are found again by key:
      // inserting may rehash the table, which invalidates iterators.)
      while (inserted_.size() > scope) {
        auto [key, op] = inserted_.back();
        auto [begin, end] = table_.equal_range(key);
        for (auto it = begin; it != end; ++it)
          if (it->second == op) {
            table_.erase(it);
            break;
          }
        inserted_.pop_back();
      }
      RemoveOps(block, merged);
    }
  }

  int removed() const { return removed_; }

 private:
  using Table = std::unordered_multimap<uint64_t, const ir::Operation*>;

  ir::ValueId Resolve(ir::ValueId v) const {
    auto it = replacements_.find(v);
    return it == replacements_.end() ? v : it->second;  // replacements map to kept values
  }

  static bool Candidate(const ir::Operation& op) {
    return op.regions.empty() && !op.results.empty() && IsPure(op);
  }

  uint64_t Key(const ir::Operation& op) const {
    uint64_t h = Mix(static_cast<uint64_t>(op.code), op.operands.size());
    for (ir::ValueId v : op.operands) h = Mix(h, v);
    for (ir::ValueId v : op.results) {
      const ir::Type& type = module_.type_of(v);
      h = Mix(h, static_cast<uint64_t>(type.dtype));
      for (int64_t d : type.dims) h = Mix(h, static_cast<uint64_t>(d));
    }
    return Mix(h, op.attrs.size());
  }

  bool Identical(const ir::Operation& a, const ir::Operation& b) const {
    if (a.code != b.code || a.operands != b.operands || a.results.size() != b.results.size() ||
        a.attrs != b.attrs)
      return false;
    for (size_t r = 0; r < a.results.size(); ++r)
      if (module_.type_of(a.results[r]) != module_.type_of(b.results[r])) return false;
    return true;
  }

  ir::Module& module_;
  Table table_;
  // Scope stack: the entries to drop on leaving a block.
  std::vector<std::pair<uint64_t, const ir::Operation*>> inserted_;
  std::unordered_map<ir::ValueId, ir::ValueId> replacements_;
  int removed_ = 0;
};

}  // namespace

int EliminateCommonSubexpressions(ir::Module& module) {
  ir::Function* entry = MutableEntry(module);
  if (entry == nullptr) return 0;
  Cse cse(module);
  cse.Run(entry->body);
  return cse.removed();
}

}  // namespace stablert::passes
