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
        if (RegionsSeeEnclosingValues(op.code)) {
          for (ir::Region& inner : op.regions) Run(inner);
        } else if (!op.regions.empty()) {
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
        if (!Candidate(op)) continue;
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

  // Pure ops with results, without regions or with isolated ones (two reduces of one
  // operand with equal bodies merge; loops and branches never do).
  static bool Candidate(const ir::Operation& op) {
    return !op.results.empty() && !RegionsSeeEnclosingValues(op.code) && IsPure(op);
  }

  uint64_t Key(const ir::Operation& op) const {
    uint64_t h = Mix(static_cast<uint64_t>(op.code), op.operands.size());
    for (ir::ValueId v : op.operands) h = Mix(h, v);
    for (ir::ValueId v : op.results) {
      const ir::Type& type = module_.type_of(v);
      h = Mix(h, static_cast<uint64_t>(type.dtype));
      for (int64_t d : type.dims) h = Mix(h, static_cast<uint64_t>(d));
    }
    h = Mix(h, op.regions.size());
    for (const ir::Region& region : op.regions)
      for (const ir::Block& block : region.blocks) h = Mix(h, block.ops.size());
    return Mix(h, op.attrs.size());
  }

  bool Identical(const ir::Operation& a, const ir::Operation& b) const {
    if (a.code != b.code || a.operands != b.operands || a.results.size() != b.results.size() ||
        a.attrs != b.attrs)
      return false;
    for (size_t r = 0; r < a.results.size(); ++r)
      if (module_.type_of(a.results[r]) != module_.type_of(b.results[r])) return false;
    if (a.regions.size() != b.regions.size()) return false;
    std::unordered_map<ir::ValueId, ir::ValueId> renamed;  // b's region values -> a's
    for (size_t r = 0; r < a.regions.size(); ++r)
      if (!SameRegion(a.regions[r], b.regions[r], renamed)) return false;
    return true;
  }

  // True if isolated regions `a` and `b` compute the same: the same ops on corresponding
  // values (block arguments and results matched in order), attributes and types.
  bool SameRegion(const ir::Region& a, const ir::Region& b, std::unordered_map<ir::ValueId, ir::ValueId>& renamed) const {
    if (a.blocks.size() != b.blocks.size()) return false;
    for (size_t k = 0; k < a.blocks.size(); ++k) {
      const ir::Block& x = a.blocks[k];
      const ir::Block& y = b.blocks[k];
      if (x.arguments.size() != y.arguments.size() || x.ops.size() != y.ops.size()) return false;
      for (size_t i = 0; i < x.arguments.size(); ++i) {
        if (module_.type_of(x.arguments[i]) != module_.type_of(y.arguments[i])) return false;
        renamed[y.arguments[i]] = x.arguments[i];
      }
      for (size_t i = 0; i < x.ops.size(); ++i) {
        const ir::Operation& p = x.ops[i];
        const ir::Operation& q = y.ops[i];
        if (p.code != q.code || p.attrs != q.attrs || p.operands.size() != q.operands.size() ||
            p.results.size() != q.results.size() || p.regions.size() != q.regions.size())
          return false;
        for (size_t o = 0; o < p.operands.size(); ++o) {
          auto it = renamed.find(q.operands[o]);
          if (it == renamed.end() || it->second != p.operands[o]) return false;
        }
        for (size_t r = 0; r < p.results.size(); ++r) {
          if (module_.type_of(p.results[r]) != module_.type_of(q.results[r])) return false;
          renamed[q.results[r]] = p.results[r];
        }
        for (size_t r = 0; r < p.regions.size(); ++r)
          if (!SameRegion(p.regions[r], q.regions[r], renamed)) return false;
      }
    }
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
