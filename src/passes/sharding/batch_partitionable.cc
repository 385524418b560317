#include "passes/sharding/batch_partitionable.h"

#include <charconv>
#include <mutex>
#include <set>
#include <string>

namespace stablert::passes {
namespace {

struct Registry {
  std::mutex mutex;
  std::set<std::string, std::less<>> targets;
};

Registry& Targets() {
  static Registry* registry = new Registry();  // never destroyed: compiles may run at exit
  return *registry;
}

}  // namespace

void RegisterBatchPartitionable(std::string_view target) {
  Registry& registry = Targets();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.targets.emplace(target);
}

bool IsBatchPartitionable(std::string_view target) {
  Registry& registry = Targets();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.targets.find(target) != registry.targets.end();
}

std::optional<int64_t> BatchPartitionableDims(const ir::Module& module, const ir::Operation& op) {
  if (op.code != ir::OpCode::kCustomCall) return std::nullopt;
  const ir::Attribute* target = op.attr("call_target_name");
  const auto name = target ? target->AsString() : std::nullopt;
  if (!name || !IsBatchPartitionable(*name)) return std::nullopt;
  if (const ir::Attribute* effect = op.attr("has_side_effect"); effect && effect->AsBool().value_or(false))
    return std::nullopt;
  const ir::Attribute* frontend = op.attr("mhlo.frontend_attributes");
  const auto* dict = frontend ? frontend->get<ir::Attribute::Dictionary>() : nullptr;
  const ir::Attribute* dims = dict ? ir::FindAttr(*dict, "num_batch_dims") : nullptr;
  const auto text = dims ? dims->AsString() : std::nullopt;
  if (!text) return std::nullopt;
  int64_t k = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), k);
  if (error != std::errc() || end != text->data() + text->size() || k < 1) return std::nullopt;
  for (const auto* values : {&op.operands, &op.results})
    for (ir::ValueId v : *values) {
      const ir::Type type = module.type_of(v);
      if (!type.is_tensor() || static_cast<int64_t>(type.dims.size()) < k) return std::nullopt;
    }
  return k;
}

}  // namespace stablert::passes
