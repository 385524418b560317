// Liveness-based arena assignment.
//
// Steps run in order. A computed value (a storage root) is live from the step that writes
// it through the last step that reads it or any value aliasing its storage. Outputs of a
// step are placed before the step's dead inputs are released, so a step never writes
// over what it reads. Free space is kept as sorted (offset, size) blocks and chosen
// best-fit; every block is 64-byte aligned.
#include <algorithm>
#include <map>

#include "plan/lowering.h"

namespace stablert::plan {
namespace {

constexpr int64_t kAlignment = 64;

int64_t AlignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

class ArenaAllocator {
 public:
  int64_t Allocate(int64_t bytes) {
    bytes = AlignUp(bytes);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= bytes && (best == free_.end() || it->second < best->second)) best = it;
    if (best == free_.end()) {
      // Grow the arena, reusing a free block that ends at the top.
      int64_t offset = size_;
      if (!free_.empty()) {
        auto last = std::prev(free_.end());
        if (last->first + last->second == size_) {
          offset = last->first;
          free_.erase(last);
        }
      }
      size_ = offset + bytes;
      return offset;
    }
    int64_t offset = best->first;
    int64_t remaining = best->second - bytes;
    free_.erase(best);
    if (remaining > 0) free_[offset + bytes] = remaining;
    return offset;
  }

  void Release(int64_t offset, int64_t bytes) {
    bytes = AlignUp(bytes);
    auto [it, inserted] = free_.emplace(offset, bytes);
    // Merge with the following and preceding blocks.
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  int64_t size() const { return size_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> size
  int64_t size_ = 0;
};

}  // namespace

void AssignBuffers(ExecutionPlan& plan, const std::vector<ValueId>& alias_root) {
  const size_t num_values = plan.values.size();
  const std::vector<Step>& steps = plan.body.steps;
  constexpr int64_t kNever = -1;

  // Roots written by steps, and the last step reading each root.
  std::vector<int64_t> last_use(num_values, kNever);
  std::vector<bool> computed(num_values, false);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (ValueId v : steps[s].outputs) {
      computed[alias_root[v]] = true;
      last_use[alias_root[v]] = std::max<int64_t>(last_use[alias_root[v]], static_cast<int64_t>(s));
    }
    for (ValueId v : steps[s].inputs) last_use[alias_root[v]] = static_cast<int64_t>(s);
  }

  // Computed roots of results are written straight into the first result buffer that
  // returns them.
  for (size_t i = 0; i < plan.results.size(); ++i) {
    ValueId root = alias_root[plan.results[i]];
    Value& value = plan.values[root];
    if (computed[root] && value.storage == Storage::kArena) {
      value.storage = Storage::kResult;
      value.index = static_cast<int64_t>(i);
    }
  }

  // Arena offsets for the remaining computed roots.
  ArenaAllocator arena;
  std::vector<std::vector<ValueId>> dies_after(steps.size());
  for (ValueId v = 0; v < num_values; ++v)
    if (computed[v] && plan.values[v].storage == Storage::kArena && alias_root[v] == v)
      dies_after[static_cast<size_t>(last_use[v])].push_back(v);
  std::vector<bool> placed(num_values, false);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (ValueId v : steps[s].outputs) {
      ValueId root = alias_root[v];
      Value& value = plan.values[root];
      if (value.storage != Storage::kArena || placed[root]) continue;
      placed[root] = true;
      value.index = value.byte_size > 0 ? arena.Allocate(value.byte_size) : 0;
    }
    for (ValueId v : dies_after[s])
      if (plan.values[v].byte_size > 0) arena.Release(plan.values[v].index, plan.values[v].byte_size);
  }
  plan.arena_size = arena.size();

  // Aliases take their root's storage.
  for (ValueId v = 0; v < num_values; ++v) {
    ValueId root = alias_root[v];
    if (root == v) continue;
    plan.values[v].storage = plan.values[root].storage;
    plan.values[v].index = plan.values[root].index;
  }
}

}  // namespace stablert::plan
