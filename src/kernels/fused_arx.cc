// FindArxChains (fused_arx.h): add-rotate-xor runs of a fused step's sub-ops.
#include "kernels/fused_arx.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

namespace stablert::kernels {
namespace {

constexpr const char* kAdd = "add.ui32";
constexpr const char* kXor = "xor.ui32";
constexpr const char* kOr = "or.ui32";
constexpr const char* kShl = "shift_left.ui32";
constexpr const char* kShr = "shift_right_logical.ui32";

class Matcher {
 public:
  Matcher(const FusedParams& params, std::span<const ArxSlot> slots) : p_(params), slots_(slots) {}

  std::vector<ArxChainOp> Run() {
    std::vector<ArxChainOp> chains;
    size_t i = 0;
    while (i < p_.ops.size()) {
      std::optional<ArxChainOp> chain = ChainAt(i);
      if (chain) {
        i = chain->last_op + 1;
        chains.push_back(std::move(*chain));
      } else {
        ++i;
      }
    }
    return chains;
  }

 private:
  bool U32(int64_t slot) const {
    return slot >= 0 && static_cast<size_t>(slot) < p_.slot_dtypes.size() &&
           static_cast<DType>(p_.slot_dtypes[static_cast<size_t>(slot)]) == DType::kU32;
  }
  bool Is(size_t op, const char* kernel) const {
    const FusedOp& o = p_.ops[op];
    return o.kernel == kernel && o.inputs.size() == 2 && U32(o.output) && U32(o.inputs[0]) && U32(o.inputs[1]);
  }
  bool Uniform(int64_t slot) const { return slots_[static_cast<size_t>(slot)].uniform; }
  bool Scalar(int64_t slot) const { return slots_[static_cast<size_t>(slot)].scalar; }
  std::optional<uint32_t> Constant(int64_t slot) const {
    const ArxSlot& s = slots_[static_cast<size_t>(slot)];
    if (!s.constant) return std::nullopt;
    return s.value;
  }

  // A round in ops [i, i + 5) from the pair (x0, x1) (x0 < 0: the pair is not known yet and
  // is taken from the round). On a match: the new pair and the rotation.
  struct Round {
    int64_t x0, x1, y0, y1;
    uint32_t rotation;
  };
  std::optional<Round> RoundAt(size_t i, int64_t x0, int64_t x1) const {
    if (i + 5 > p_.ops.size()) return std::nullopt;
    // The first three: one add, one shift left, one shift right, in any order.
    int add = -1, shl = -1, shr = -1;
    for (size_t k = i; k < i + 3; ++k) {
      if (Is(k, kAdd) && add < 0) add = static_cast<int>(k);
      else if (Is(k, kShl) && shl < 0) shl = static_cast<int>(k);
      else if (Is(k, kShr) && shr < 0) shr = static_cast<int>(k);
      else return std::nullopt;
    }
    const FusedOp &a = p_.ops[add], &l = p_.ops[shl], &h = p_.ops[shr];
    const int64_t rot = l.inputs[0];
    if (h.inputs[0] != rot) return std::nullopt;
    const auto left = Constant(l.inputs[1]), right = Constant(h.inputs[1]);
    if (!left || !right || *left < 1 || *left > 31 || *left + *right != 32) return std::nullopt;
    int64_t other;
    if (a.inputs[1] == rot) other = a.inputs[0];
    else if (a.inputs[0] == rot) other = a.inputs[1];
    else return std::nullopt;
    if (x0 >= 0 && (other != x0 || rot != x1)) return std::nullopt;
    if (other == rot) return std::nullopt;  // add(x, x): not a pair
    const FusedOp &o = p_.ops[i + 3], &x = p_.ops[i + 4];
    if (!Is(i + 3, kOr) || !Is(i + 4, kXor)) return std::nullopt;
    if (!((o.inputs[0] == l.output && o.inputs[1] == h.output) || (o.inputs[0] == h.output && o.inputs[1] == l.output)))
      return std::nullopt;
    if (!((x.inputs[0] == a.output && x.inputs[1] == o.output) || (x.inputs[0] == o.output && x.inputs[1] == a.output)))
      return std::nullopt;
    return Round{other, rot, a.output, x.output, *left};
  }

  // An addition of a uniform slot to x0 or x1 at op i: which (0 or 1), the addend, the result.
  struct Add {
    int which;
    int64_t addend, out;
  };
  std::optional<Add> AddAt(size_t i, int64_t x0, int64_t x1) const {
    if (i >= p_.ops.size() || !Is(i, kAdd)) return std::nullopt;
    const FusedOp& a = p_.ops[i];
    for (int k = 0; k < 2; ++k) {
      const int64_t value = a.inputs[k], addend = a.inputs[1 - k];
      if (!Uniform(addend) || value == addend) continue;
      if (value == x0) return Add{0, addend, a.output};
      if (value == x1) return Add{1, addend, a.output};
    }
    return std::nullopt;
  }

  std::optional<ArxChainOp> ChainAt(size_t first) const {
    const std::optional<Round> start = RoundAt(first, -1, -1);
    if (!start) return std::nullopt;
    ArxChainOp chain;
    // Additions just before the first round that produce its pair join the chain.
    int64_t x0 = start->x0, x1 = start->x1;
    size_t begin = first;
    std::vector<std::pair<int, int64_t>> before;  // (which, addend), in op order reversed
    while (begin > 0 && Is(begin - 1, kAdd)) {
      const FusedOp& a = p_.ops[begin - 1];
      int which = a.output == x0 ? 0 : a.output == x1 ? 1 : -1;
      if (which < 0) break;
      const int k = Uniform(a.inputs[1]) ? 1 : Uniform(a.inputs[0]) ? 0 : -1;  // the addend
      if (k < 0 || a.inputs[k] == a.inputs[1 - k]) break;
      if (a.inputs[1 - k] == (which == 0 ? x1 : x0) || Scalar(a.inputs[1 - k])) break;  // keep the pair two slots
      before.push_back({which, a.inputs[k]});
      (which == 0 ? x0 : x1) = a.inputs[1 - k];
      --begin;
    }
    if (Scalar(x0) || Scalar(x1)) return std::nullopt;
    chain.first_op = begin;
    chain.x0_in = x0, chain.x1_in = x1;
    for (auto it = before.rbegin(); it != before.rend(); ++it) {
      chain.steps.push_back({it->first == 0 ? simd::ArxKind::kAdd0 : simd::ArxKind::kAdd1, 0});
      chain.addend_slot.push_back(it->second);
    }
    // Rounds and additions forward.
    x0 = start->x0, x1 = start->x1;
    // After each step: one past its last op, the pair, whether it was a round.
    struct Boundary {
      size_t end;
      int64_t x0, x1;
      bool round;
    };
    std::vector<Boundary> after;
    size_t i = first;
    while (true) {
      if (const auto round = RoundAt(i, x0, x1)) {
        chain.steps.push_back({simd::ArxKind::kRound, round->rotation});
        chain.addend_slot.push_back(-1);
        x0 = round->y0, x1 = round->y1;
        i += 5;
        after.push_back({i, x0, x1, true});
        continue;
      }
      if (const auto add = AddAt(i, x0, x1)) {
        chain.steps.push_back({add->which == 0 ? simd::ArxKind::kAdd0 : simd::ArxKind::kAdd1, 0});
        chain.addend_slot.push_back(add->addend);
        (add->which == 0 ? x0 : x1) = add->out;
        ++i;
        after.push_back({i, x0, x1, false});
        continue;
      }
      break;
    }
    // The longest prefix whose inner values stay inside, with two rounds at least.
    while (!after.empty()) {
      const Boundary& b = after.back();
      chain.last_op = b.end - 1;
      chain.x0_out = b.x0, chain.x1_out = b.x1;
      int rounds = 0;
      for (const Boundary& a : after) rounds += a.round;
      if (rounds < 2) return std::nullopt;
      if (Contained(chain)) return chain;
      after.pop_back();
      chain.steps.pop_back();
      chain.addend_slot.pop_back();
    }
    return std::nullopt;
  }

  // Every value the chain computes, but its final pair, is read by the chain's ops only.
  bool Contained(const ArxChainOp& chain) const {
    for (size_t i = chain.first_op; i <= chain.last_op; ++i) {
      const int64_t out = p_.ops[i].output;
      if (out == chain.x0_out || out == chain.x1_out) continue;
      if (slots_[static_cast<size_t>(out)].external) return false;
      for (size_t j = 0; j < p_.ops.size(); ++j) {
        if (j >= chain.first_op && j <= chain.last_op) continue;
        const auto& in = p_.ops[j].inputs;
        if (std::find(in.begin(), in.end(), out) != in.end()) return false;
      }
    }
    return true;
  }

  const FusedParams& p_;
  std::span<const ArxSlot> slots_;
};

}  // namespace

std::vector<ArxChainOp> FindArxChains(const FusedParams& params, std::span<const ArxSlot> slots) {
  if (slots.size() != params.slot_dtypes.size()) return {};
  for (const FusedOp& op : params.ops) {
    for (int64_t s : op.inputs)
      if (s < 0 || static_cast<size_t>(s) >= slots.size()) return {};
    if (op.output < 0 || static_cast<size_t>(op.output) >= slots.size()) return {};
  }
  return Matcher(params, slots).Run();
}

}  // namespace stablert::kernels
