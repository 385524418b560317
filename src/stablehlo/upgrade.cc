#include "stablehlo/upgrade.h"

#include <algorithm>
#include <string>

#include "stablehlo/attr_util.h"

namespace stablert::stablehlo {
namespace {

// Adds `name` = make() unless present; the default is built only when it is used.
template <typename Make>
void SetDefault(ir::Operation& op, std::string_view name, Make make) {
  if (!op.attr(name)) op.attrs.emplace_back(std::string(name), make());
}

bool IsUnsetAlgorithmAttr(const ir::NamedAttribute& a) {
  static constexpr std::string_view kNames[] = {
      "accumulation_type",   "allow_imprecise_accumulation", "lhs_component_count",
      "lhs_precision_type",  "num_primitive_operations",     "rhs_component_count",
      "rhs_precision_type"};
  if (!a.second.get<ir::Attribute::Unit>()) return false;
  for (std::string_view name : kNames) {
    if (a.first == name) return true;
  }
  return false;
}

ir::Attribute* Find(ir::Operation& op, std::string_view name) {
  for (auto& [key, value] : op.attrs)
    if (key == name) return &value;
  return nullptr;
}

Status ToSymbol(ir::Operation& op, std::string_view name) {
  ir::Attribute* attr = Find(op, name);
  if (!attr) return OkStatus();
  if (const auto* s = attr->get<std::string>()) {
    *attr = ir::Attribute(ir::Attribute::Symbol{*s});
    return OkStatus();
  }
  if (attr->get<ir::Attribute::Symbol>()) return OkStatus();
  return InvalidArgument("attribute '" + std::string(name) + "' is not a symbol name");
}

Status ToSymbolArray(ir::Operation& op, std::string_view name) {
  ir::Attribute* attr = Find(op, name);
  if (!attr) return OkStatus();
  const auto* array = attr->get<ir::Attribute::Array>();
  if (!array) return InvalidArgument("attribute '" + std::string(name) + "' is not an array");
  ir::Attribute::Array symbols;
  symbols.reserve(array->size());
  for (const ir::Attribute& element : *array) {
    const auto* s = element.get<std::string>();
    if (!s) return InvalidArgument("attribute '" + std::string(name) + "' holds a non-string");
    symbols.emplace_back(ir::Attribute::Symbol{*s});
  }
  *attr = ir::Attribute(std::move(symbols));
  return OkStatus();
}

ir::Attribute DefaultResultAccuracy() {
  return ir::Attribute(ir::Attribute::Dictionary{
      {"atol", ir::Attribute(ir::Attribute::Float{0.0, DType::kF64})},
      {"rtol", ir::Attribute(ir::Attribute::Float{0.0, DType::kF64})},
      {"ulps", I64(0)},
      {"mode", ir::Attribute(ir::EnumValue{ir::EnumKind::kResultAccuracyMode, 0})}});
}

bool HasResultAccuracy(ir::OpCode code) {
  switch (code) {
    case ir::OpCode::kCbrt: case ir::OpCode::kCosine: case ir::OpCode::kExponential:
    case ir::OpCode::kExponentialMinusOne: case ir::OpCode::kLog: case ir::OpCode::kLogPlusOne:
    case ir::OpCode::kLogistic: case ir::OpCode::kRsqrt: case ir::OpCode::kSine:
    case ir::OpCode::kSqrt: case ir::OpCode::kTan: case ir::OpCode::kTanh:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status UpgradeVhloAttributes(std::string_view vhlo_name, ir::Operation& op) {
  using ir::OpCode;
  if (HasResultAccuracy(op.code)) SetDefault(op, "result_accuracy", DefaultResultAccuracy);
  switch (op.code) {
    case OpCode::kCall:
      return ToSymbol(op, "callee");
    case OpCode::kComposite:
      SetDefault(op, "composite_attributes",
                 [] { return ir::Attribute(ir::Attribute::Dictionary{}); });
      return ToSymbol(op, "decomposition");
    case OpCode::kCustomCall:
      SetDefault(op, "result_tilings", [] { return ir::Attribute(ir::Attribute::Array{}); });
      return ToSymbolArray(op, "called_computations");
    case OpCode::kGather:
    case OpCode::kDynamicGather:
      SetDefault(op, "operand_batching_dims", [] { return I64Elements({}); });
      SetDefault(op, "start_indices_batching_dims", [] { return I64Elements({}); });
      return OkStatus();
    case OpCode::kScatter:
      SetDefault(op, "input_batching_dims", [] { return I64Elements({}); });
      SetDefault(op, "scatter_indices_batching_dims", [] { return I64Elements({}); });
      return OkStatus();
    case OpCode::kDotGeneral:
      // The algorithm attributes are `none` unless an algorithm is set; drop them then.
      op.attrs.erase(std::remove_if(op.attrs.begin(), op.attrs.end(), IsUnsetAlgorithmAttr),
                     op.attrs.end());
      return OkStatus();
    case OpCode::kSend:
    case OpCode::kRecv:
      SetDefault(op, "source_target_pairs", [] { return ZeroI64Elements({0, 2}); });
      return OkStatus();
    case OpCode::kCollectiveBroadcast:
      SetDefault(op, "has_dynamic_root", [] { return ir::Attribute(false); });
      return OkStatus();
    default:
      (void)vhlo_name;
      return OkStatus();
  }
}

}  // namespace stablert::stablehlo
