#include "stablehlo/text_normalize.h"

#include <string>
#include <vector>

#include "stablehlo/attr_util.h"
#include "stablehlo/upgrade.h"

namespace stablert::stablehlo {
namespace {

using ir::Attribute;
using ir::OpCode;

Attribute* Find(ir::Operation& op, std::string_view name) {
  for (auto& [key, value] : op.attrs)
    if (key == name) return &value;
  return nullptr;
}

void Erase(ir::Operation& op, std::string_view name) {
  for (size_t i = 0; i < op.attrs.size(); ++i) {
    if (op.attrs[i].first == name) {
      op.attrs.erase(op.attrs.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

void SetDefault(ir::Operation& op, std::string_view name, const Attribute& value) {
  if (!Find(op, name)) op.attrs.emplace_back(std::string(name), value);
}

// As SetDefault, building the value only when the op lacks it.
template <typename Make>
void SetDefaultWith(ir::Operation& op, std::string_view name, Make make) {
  if (!Find(op, name)) op.attrs.emplace_back(std::string(name), make());
}

// The empty 1-D i64 list, one ElementsData for every use (immutable, so shared as the
// bytecode reader shares an attribute entry).
const Attribute& EmptyI64List() {
  static const Attribute empty = I64Elements({});
  return empty;
}

Attribute Ones(size_t n) { return I64Elements(std::vector<int64_t>(n, 1)); }

Attribute FalseElements(size_t n) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kPred, {static_cast<int64_t>(n)});
  data->bytes.assign(n, 0);
  return Attribute(Attribute::Elements(std::move(data)));
}

Attribute DefaultPrecisions() {
  Attribute p(ir::EnumValue{ir::EnumKind::kPrecision, 0});
  return Attribute(Attribute::Array{p, p});
}

// The `#struct` name of a parsed `#stablehlo.X<...>` attribute, or "".
std::string_view StructName(const Attribute& attr) {
  const auto* dict = attr.get<Attribute::Dictionary>();
  if (!dict) return {};
  const Attribute* tag = ir::FindAttr(*dict, "#struct");
  const auto* s = tag ? tag->get<std::string>() : nullptr;
  return s ? std::string_view(*s) : std::string_view();
}

// Moves the fields of struct attribute `name` into the op; list fields default to empty
// lists, `scalars` to 0.
Status Flatten(ir::Operation& op, std::string_view name, std::string_view expected_struct,
               std::initializer_list<std::string_view> lists,
               std::initializer_list<std::string_view> scalars) {
  Attribute* attr = Find(op, name);
  if (!attr) return OkStatus();
  if (StructName(*attr) != expected_struct) {
    return InvalidArgument("attribute '" + std::string(name) + "' is not #stablehlo." +
                           std::string(expected_struct) + "<...>");
  }
  Attribute::Dictionary fields = *attr->get<Attribute::Dictionary>();
  Erase(op, name);
  for (std::string_view field : lists) {
    const Attribute* v = ir::FindAttr(fields, field);
    op.attrs.emplace_back(std::string(field), v ? *v : EmptyI64List());
  }
  for (std::string_view field : scalars) {
    const Attribute* v = ir::FindAttr(fields, field);
    op.attrs.emplace_back(std::string(field), v ? *v : I64(0));
  }
  for (const auto& [key, value] : fields) {
    if (key == "#struct") continue;
    bool known = false;
    for (std::string_view f : lists) known = known || f == key;
    for (std::string_view f : scalars) known = known || f == key;
    if (!known) {
      return InvalidArgument("unknown field '" + key + "' in #stablehlo." + std::string(expected_struct));
    }
  }
  return OkStatus();
}

size_t ListSize(ir::Operation& op, std::string_view name) {
  const Attribute* attr = Find(op, name);
  auto list = attr ? attr->AsIntArray() : std::nullopt;
  return list ? list->size() : 0;
}

}  // namespace

Status NormalizeTextAttributes(ir::Operation& op) {
  switch (op.code) {
    case OpCode::kDotGeneral: {
      STABLERT_RETURN_IF_ERROR(Flatten(op, "dot_dimension_numbers", "dot",
                                       {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                        "lhs_contracting_dimensions", "rhs_contracting_dimensions"},
                                       {}));
      for (std::string_view n : {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                 "lhs_contracting_dimensions", "rhs_contracting_dimensions"}) {
        SetDefault(op, n, EmptyI64List());
      }
      SetDefaultWith(op, "precision_config", [&] { return DefaultPrecisions(); });
      if (Attribute* algorithm = Find(op, "algorithm")) {
        if (StructName(*algorithm) != "dot_algorithm") {
          return InvalidArgument("attribute 'algorithm' is not #stablehlo.dot_algorithm<...>");
        }
        Attribute::Dictionary fields = *algorithm->get<Attribute::Dictionary>();
        Erase(op, "algorithm");
        for (auto& [key, value] : fields) {
          if (key != "#struct") op.attrs.emplace_back(key, value);
        }
      }
      break;
    }
    case OpCode::kDot:
      SetDefaultWith(op, "precision_config", [&] { return DefaultPrecisions(); });
      break;
    case OpCode::kGather:
    case OpCode::kDynamicGather:
      STABLERT_RETURN_IF_ERROR(Flatten(op, "dimension_numbers", "gather",
                                       {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                        "start_indices_batching_dims", "start_index_map"},
                                       {"index_vector_dim"}));
      SetDefault(op, "indices_are_sorted", Attribute(false));
      break;
    case OpCode::kScatter:
      STABLERT_RETURN_IF_ERROR(Flatten(op, "scatter_dimension_numbers", "scatter",
                                       {"update_window_dims", "inserted_window_dims", "input_batching_dims",
                                        "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"},
                                       {"index_vector_dim"}));
      SetDefault(op, "indices_are_sorted", Attribute(false));
      SetDefault(op, "unique_indices", Attribute(false));
      break;
    case OpCode::kConvolution:
    case OpCode::kDynamicConv: {
      STABLERT_RETURN_IF_ERROR(Flatten(
          op, "dimension_numbers", "conv",
          {"input_spatial_dimensions", "kernel_spatial_dimensions", "output_spatial_dimensions"},
          {"input_batch_dimension", "input_feature_dimension", "kernel_input_feature_dimension",
           "kernel_output_feature_dimension", "output_batch_dimension", "output_feature_dimension"}));
      const size_t n = ListSize(op, "input_spatial_dimensions");
      SetDefaultWith(op, "window_strides", [&] { return Ones(n); });
      if (op.code == OpCode::kConvolution) {
        SetDefaultWith(op, "padding", [&] { return ZeroI64Elements({static_cast<int64_t>(n), 2}); });
      }
      SetDefaultWith(op, "lhs_dilation", [&] { return Ones(n); });
      SetDefaultWith(op, "rhs_dilation", [&] { return Ones(n); });
      SetDefaultWith(op, "window_reversal", [&] { return FalseElements(n); });
      SetDefaultWith(op, "precision_config", [&] { return DefaultPrecisions(); });
      break;
    }
    case OpCode::kReduceWindow: {
      const size_t n = ListSize(op, "window_dimensions");
      SetDefaultWith(op, "window_strides", [&] { return Ones(n); });
      SetDefaultWith(op, "base_dilations", [&] { return Ones(n); });
      SetDefaultWith(op, "window_dilations", [&] { return Ones(n); });
      SetDefaultWith(op, "padding", [&] { return ZeroI64Elements({static_cast<int64_t>(n), 2}); });
      break;
    }
    case OpCode::kSelectAndScatter: {
      const size_t n = ListSize(op, "window_dimensions");
      SetDefaultWith(op, "window_strides", [&] { return Ones(n); });
      SetDefaultWith(op, "padding", [&] { return ZeroI64Elements({static_cast<int64_t>(n), 2}); });
      break;
    }
    case OpCode::kSort:
      SetDefault(op, "dimension", I64(-1));
      SetDefault(op, "is_stable", Attribute(false));
      break;
    case OpCode::kCompare:
      SetDefault(op, "compare_type", Attribute(ir::EnumValue{ir::EnumKind::kComparisonType, 0}));
      break;
    case OpCode::kCholesky:
      SetDefault(op, "lower", Attribute(false));
      break;
    case OpCode::kComposite:
      SetDefault(op, "version", I64(0));
      SetDefault(op, "composite_attributes", Attribute(Attribute::Dictionary{}));
      break;
    case OpCode::kCustomCall: {
      if (Attribute* api = Find(op, "api_version")) {
        if (const auto* i = api->get<Attribute::Integer>()) {
          *api = Attribute(ir::EnumValue{ir::EnumKind::kCustomCallApiVersion, i->value});
        }
      }
      // Symbol references as the VHLO form holds them (names), made symbols again below.
      if (Attribute* called = Find(op, "called_computations")) {
        if (const auto* array = called->get<Attribute::Array>()) {
          Attribute::Array names;
          for (const Attribute& element : *array) {
            const auto* symbol = element.get<Attribute::Symbol>();
            names.push_back(symbol ? Attribute(symbol->name) : element);
          }
          *called = Attribute(std::move(names));
        }
      }
      SetDefault(op, "has_side_effect", Attribute(false));
      SetDefault(op, "backend_config", Attribute(std::string()));
      SetDefault(op, "api_version", Attribute(ir::EnumValue{ir::EnumKind::kCustomCallApiVersion, 1}));
      SetDefault(op, "called_computations", Attribute(Attribute::Array{}));
      SetDefault(op, "operand_layouts", Attribute(Attribute::Array{}));
      SetDefault(op, "result_layouts", Attribute(Attribute::Array{}));
      SetDefault(op, "output_operand_aliases", Attribute(Attribute::Array{}));
      break;
    }
    case OpCode::kInfeed:
      SetDefault(op, "infeed_config", Attribute(std::string()));
      SetDefault(op, "layout", Attribute(Attribute::Array{}));
      break;
    case OpCode::kOutfeed:
      SetDefault(op, "outfeed_config", Attribute(std::string()));
      break;
    case OpCode::kSend:
    case OpCode::kRecv:
      SetDefault(op, "is_host_transfer", Attribute(false));
      break;
    case OpCode::kDynamicBroadcastInDim:
      SetDefault(op, "known_expanding_dimensions", EmptyI64List());
      SetDefault(op, "known_nonexpanding_dimensions", EmptyI64List());
      break;
    default:
      break;
  }
  // Channels: the handle's id (and, for send/recv, its type).
  if (Attribute* handle = Find(op, "channel_handle")) {
    if (StructName(*handle) != "channel_handle") {
      return InvalidArgument("attribute 'channel_handle' is not #stablehlo.channel_handle<...>");
    }
    Attribute::Dictionary fields = *handle->get<Attribute::Dictionary>();
    Erase(op, "channel_handle");
    const Attribute* id = ir::FindAttr(fields, "handle");
    const Attribute* type = ir::FindAttr(fields, "type");
    op.attrs.emplace_back("channel_id", id ? *id : I64(0));
    if (op.code == OpCode::kSend || op.code == OpCode::kRecv) {
      op.attrs.emplace_back("channel_type", type ? *type : I64(0));
    }
  }
  switch (op.code) {
    case OpCode::kAllGather:
    case OpCode::kAllReduce:
    case OpCode::kReduceScatter:
      SetDefault(op, "use_global_device_ids", Attribute(false));
      [[fallthrough]];
    case OpCode::kAllToAll:
    case OpCode::kCollectivePermute:
    case OpCode::kCollectiveBroadcast:
      SetDefault(op, "channel_id", I64(0));
      if (Attribute* global = Find(op, "use_global_device_ids"); global && global->get<Attribute::Unit>()) {
        *global = Attribute(true);
      }
      break;
    default:
      break;
  }
  // Any other struct attribute left is one this reader does not map.
  for (const auto& [key, value] : op.attrs) {
    std::string_view s = StructName(value);
    if (!s.empty()) {
      return InvalidArgument("attribute '" + key + "' (#stablehlo." + std::string(s) +
                             ") is not expected on this op");
    }
  }
  return UpgradeVhloAttributes("", op);
}

}  // namespace stablert::stablehlo
