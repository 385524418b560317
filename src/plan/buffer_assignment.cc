// Liveness-based arena assignment, with in-place updates.
//
// Steps run in order. A computed value (a storage root) is live from the step that first
// writes it through the last step that reads it or any value aliasing its storage; values
// used inside a control step's regions but defined outside stay live until the control
// step ends; plan results stay live to the end.
//
// In place: a kernel step whose output is first written there takes the storage of an input
// that dies at that step, when the kernel allows that input to share storage with its output
// (plan/in_place.h MayShareWithOutput: dynamic_update_slice and scatter on their operand,
// elementwise kernels on a same-typed input). The input must be computed in the arena (not
// a parameter, constant or result) and read by nothing later, through any alias or view;
// steps in manual regions are left alone. The two values become one storage root, live from
// the input's first write to the output's last use. A copy whose input dies this way is
// removed. Otherwise the outputs of a step are placed before the step's dead inputs are
// released, so a step never writes over what it reads.
//
// Free space is kept as sorted (offset, size) blocks and chosen best-fit; every block is
// 64-byte aligned.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "plan/in_place.h"
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

namespace {

// Liveness over "positions": every kernel step is one position; a control step takes one
// position before its regions (reading its selector) and one after (reading a loop's
// condition result), its regions' positions in between.
class Liveness {
 public:
  Liveness(ExecutionPlan& plan, const std::vector<ValueId>& alias_root)
      : plan_(plan), alias_root_(alias_root), first_def_(plan.values.size(), kNever),
        last_use_(plan.values.size(), kNever) {}

  void Run() {
    Walk(plan_.body);
    // A value a region reads or writes, defined before the control step that owns the
    // region, stays live until that step ends (loops revisit their regions).
    for (const auto& [root, span] : captures_) {
      last_use_[root] = std::max(last_use_[root], spans_[span].end);
    }
    positions_ = position_;
  }

  int64_t positions() const { return positions_; }
  int64_t first_def(ValueId root) const { return first_def_[root]; }
  int64_t last_use(ValueId root) const { return last_use_[root]; }
  // Keeps `root` live through `position` (a plan result: through the end).
  void ExtendTo(ValueId root, int64_t position) { last_use_[root] = std::max(last_use_[root], position); }
  static constexpr int64_t kNever = -1;

  struct KernelPosition {
    Step* step;
    int64_t position;
  };
  // Kernel steps outside manual regions, in position order.
  const std::vector<KernelPosition>& kernel_steps() const { return kernel_steps_; }

 private:
  struct Span {
    int64_t start;
    int64_t end;
  };

  void Reference(ValueId value, bool is_def) {
    ValueId root = alias_root_[value];
    if (is_def && first_def_[root] == kNever) first_def_[root] = position_;
    last_use_[root] = std::max(last_use_[root], position_);
    // The outermost open span that began after the root's definition captures it.
    const int64_t defined = first_def_[root];
    for (size_t s : open_) {
      if (spans_[s].start > defined) {
        captures_.emplace_back(root, s);
        break;
      }
    }
  }

  void Walk(Sequence& sequence) {
    for (Step& step : sequence.steps) {
      if (step.kind == StepKind::kKernel && manual_depth_ == 0) kernel_steps_.push_back({&step, position_});
      if (step.kind == StepKind::kKernel || step.kind == StepKind::kCollective ||
          step.kind == StepKind::kHostTransfer) {
        for (ValueId v : step.inputs) Reference(v, false);
        for (ValueId v : step.outputs) Reference(v, true);
        if (step.workspace != kNoValue) Reference(step.workspace, true);
        ++position_;
        continue;
      }
      const bool is_loop = step.kind == StepKind::kWhile;
      if (!is_loop)
        for (ValueId v : step.inputs) Reference(v, false);
      // A manual region's results are written by all partitions at once: they take their
      // storage before the region so that no partition's private values overlap them.
      if (step.kind == StepKind::kManual)
        for (ValueId v : step.outputs) Reference(v, true);
      size_t span = spans_.size();
      spans_.push_back({position_, 0});
      ++position_;
      open_.push_back(span);
      if (step.kind == StepKind::kManual) ++manual_depth_;
      for (Sequence& region : step.regions) Walk(region);
      if (step.kind == StepKind::kManual) --manual_depth_;
      open_.pop_back();
      spans_[span].end = position_;
      if (is_loop)
        for (ValueId v : step.inputs) Reference(v, false);
      for (ValueId v : step.outputs) Reference(v, false);
      ++position_;
    }
  }

  ExecutionPlan& plan_;
  const std::vector<ValueId>& alias_root_;
  std::vector<KernelPosition> kernel_steps_;
  int manual_depth_ = 0;
  std::vector<int64_t> first_def_, last_use_;
  std::vector<Span> spans_;
  std::vector<size_t> open_;  // spans enclosing the current position, outermost first
  std::vector<std::pair<ValueId, size_t>> captures_;
  int64_t position_ = 0;
  int64_t positions_ = 0;
};

}  // namespace

namespace {

// Union-find over storage roots: `roots[v]` is v's root, or for a root merged into another
// storage, that storage.
ValueId Find(std::vector<ValueId>& roots, ValueId v) {
  ValueId r = roots[v];
  while (roots[r] != r) r = roots[r];
  while (roots[v] != r) {
    const ValueId next = roots[v];
    roots[v] = r;
    v = next;
  }
  return r;
}

// The in-place updates (file comment): merges a step's output storage into a dying input's.
void UpdateInPlace(ExecutionPlan& plan, Liveness& liveness, std::vector<ValueId>& roots,
                   const std::vector<int64_t>& donor_byte_sizes) {
  std::vector<bool> result_root(plan.values.size(), false);
  for (ValueId v : plan.results) result_root[roots[v]] = true;
  for (const Liveness::KernelPosition& at : liveness.kernel_steps()) {
    const Step& step = *at.step;
    if (step.outputs.size() != 1) continue;
    const ValueId out = Find(roots, step.outputs[0]);
    // A result a donated parameter may back keeps its own storage, written only by the
    // steps computing it: merged into an earlier temporary, it would be written early, over
    // the parameter (plan/donation.h).
    if (liveness.first_def(out) != at.position || plan.values[out].storage != Storage::kArena ||
        !plan.values[out].strides.empty())
      continue;
    if (result_root[out] && std::find(donor_byte_sizes.begin(), donor_byte_sizes.end(),
                                      plan.values[out].byte_size) != donor_byte_sizes.end())
      continue;
    for (ValueId v : step.inputs) roots[v] = Find(roots, v);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const ValueId in = roots[step.inputs[i]];
      if (in == out || plan.values[in].storage != Storage::kArena || result_root[in] ||
          liveness.first_def(in) == Liveness::kNever || liveness.last_use(in) != at.position ||
          plan.values[in].byte_size != plan.values[out].byte_size || !MayShareWithOutput(plan, roots, step, i))
        continue;
      roots[out] = in;
      liveness.ExtendTo(in, liveness.last_use(out));
      if (result_root[out]) result_root[in] = true;
      break;
    }
  }
  for (ValueId v = 0; v < roots.size(); ++v) roots[v] = Find(roots, v);
}

}  // namespace

void AssignBuffers(ExecutionPlan& plan, const std::vector<ValueId>& alias_root_in,
                   const std::vector<int64_t>& donor_byte_sizes) {
  const size_t num_values = plan.values.size();
  std::vector<ValueId> alias_root = alias_root_in;
  Liveness liveness(plan, alias_root);
  liveness.Run();
  UpdateInPlace(plan, liveness, alias_root, donor_byte_sizes);
  DropSelfCopies(plan.body, alias_root);
  auto computed = [&](ValueId v) { return alias_root[v] == v && liveness.first_def(v) != Liveness::kNever; };

  // Computed roots of results are written straight into the first result buffer that
  // returns them.
  for (size_t i = 0; i < plan.results.size(); ++i) {
    ValueId root = alias_root[plan.results[i]];
    Value& value = plan.values[root];
    if (computed(root) && value.storage == Storage::kArena) {
      value.storage = Storage::kResult;
      value.index = static_cast<int64_t>(i);
    }
  }

  // Arena offsets for the remaining computed roots: allocated at their first definition,
  // released after their last use.
  const auto positions = static_cast<size_t>(liveness.positions());
  std::vector<std::vector<ValueId>> born(positions), dies(positions);
  for (ValueId v = 0; v < num_values; ++v) {
    if (!computed(v) || plan.values[v].storage != Storage::kArena) continue;
    born[static_cast<size_t>(liveness.first_def(v))].push_back(v);
    dies[static_cast<size_t>(liveness.last_use(v))].push_back(v);
  }
  ArenaAllocator arena;
  for (size_t p = 0; p < positions; ++p) {
    for (ValueId v : born[p]) {
      Value& value = plan.values[v];
      value.index = value.byte_size > 0 ? arena.Allocate(value.byte_size) : 0;
    }
    for (ValueId v : dies[p])
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
