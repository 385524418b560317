#include "ir/op_table.h"

#include <algorithm>
#include <array>
#include <utility>

namespace stablert::ir {
namespace {

constexpr OpInfo kOpTable[] = {
#define OP(name, mnemonic, operands, results, regions, cls, effect, hlo) \
  {mnemonic, operands, results, regions, OpClass::cls, Effect::effect, hlo},
#include "ir/ops.def"
#undef OP
};
static_assert(sizeof(kOpTable) / sizeof(kOpTable[0]) == kNumOps);

// Sorted (mnemonic, code) pairs for binary search.
std::array<std::pair<std::string_view, OpCode>, kNumOps> BuildIndex() {
  std::array<std::pair<std::string_view, OpCode>, kNumOps> index{};
  for (int i = 0; i < kNumOps; ++i) index[i] = {kOpTable[i].mnemonic, static_cast<OpCode>(i)};
  std::sort(index.begin(), index.end());
  return index;
}

}  // namespace

const OpInfo& GetOpInfo(OpCode code) { return kOpTable[static_cast<int>(code)]; }

std::optional<OpCode> OpCodeFromName(std::string_view mnemonic) {
  static const auto index = BuildIndex();
  auto it = std::lower_bound(index.begin(), index.end(), mnemonic,
                             [](const auto& entry, std::string_view key) { return entry.first < key; });
  if (it == index.end() || it->first != mnemonic) return std::nullopt;
  return it->second;
}

}  // namespace stablert::ir
