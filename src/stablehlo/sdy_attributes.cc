// Shardy (sdy) attribute entries -> ir::Attribute, as dictionaries and arrays:
//   mesh               {axes = [{name, size}...], device_ids = dense i64}
//   axis ref           {name, sub_axis_info = {pre_size, size}?}
//   dimension sharding {axes = [axis ref...], is_closed, priority?}
//   tensor sharding    {mesh = @symbol | mesh dict, dim_shardings = [...],
//                       replicated_axes = [...], unreduced_axes = [...], reduction_op?}
//   sharding per value [tensor sharding...]; manual axes ["x", ...]
//   sharding rule      {factor_sizes, operand_mappings, result_mappings, ...}
#include "stablehlo/attr_util.h"
#include "stablehlo/entry_decoder.h"

namespace stablert::stablehlo {
namespace {

Status ReadList(EntryDecoder& d, Cursor& c, ir::Attribute::Array* out, std::string_view what) {
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, what));
  out->reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* element, d.ReadAttr(c, what));
    out->push_back(*element);
  }
  return OkStatus();
}

StatusOr<ir::Attribute> List(EntryDecoder& d, Cursor& c, std::string_view what) {
  ir::Attribute::Array array;
  STABLERT_RETURN_IF_ERROR(ReadList(d, c, &array, what));
  return ir::Attribute(std::move(array));
}

StatusOr<ir::Attribute> SignedList(Cursor& c, std::string_view what) {
  std::vector<int64_t> values;
  STABLERT_RETURN_IF_ERROR(ReadSignedList(c, &values, what));
  return I64Elements(values);
}

StatusOr<ir::Attribute> TensorSharding(EntryDecoder& d, Cursor& c, int version) {
  STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* mesh, d.ReadAttr(c, "sharding mesh"));
  ir::Attribute::Dictionary dict{{"mesh", *mesh}};
  STABLERT_ASSIGN_OR_RETURN(ir::Attribute dims, List(d, c, "dimension shardings"));
  dict.emplace_back("dim_shardings", std::move(dims));
  STABLERT_ASSIGN_OR_RETURN(ir::Attribute replicated, List(d, c, "replicated axes"));
  dict.emplace_back("replicated_axes", std::move(replicated));
  ir::Attribute unreduced{ir::Attribute::Array{}};
  if (version >= 2) {
    STABLERT_ASSIGN_OR_RETURN(unreduced, List(d, c, "unreduced axes"));
  }
  dict.emplace_back("unreduced_axes", std::move(unreduced));
  if (version >= 3) {
    int64_t reduction;
    STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&reduction, "reduction op"));
    dict.emplace_back("reduction_op", I64(reduction));
  }
  return ir::Attribute(std::move(dict));
}

}  // namespace

StatusOr<ir::Attribute> EntryDecoder::DecodeSdyAttribute(Cursor& c) {
  uint64_t code;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&code, "sdy attribute kind"));
  switch (code) {
    case 0:   // ManualAxesAttr
    case 7:   // TensorShardingPerValueAttr v1
    case 9:   // TensorMappingAttr
    case 11:  // AxisRefListAttr
    case 12:  // ListOfAxisRefListsAttr
    case 14:  // AllToAllParamListAttr
    case 16:  // TensorShardingPerValueAttr v2
      return List(*this, c, "sdy list element");
    case 1: {  // MeshAxisAttr
      STABLERT_ASSIGN_OR_RETURN(std::string_view name, ReadSharedString(c, "mesh axis name"));
      int64_t size;
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&size, "mesh axis size"));
      return ir::Attribute(
          ir::Attribute::Dictionary{{"name", Text(std::string(name))}, {"size", I64(size)}});
    }
    case 2: {  // MeshAttr
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute axes, List(*this, c, "mesh axes"));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute ids, SignedList(c, "mesh device ids"));
      return ir::Attribute(ir::Attribute::Dictionary{{"axes", std::move(axes)},
                                                     {"device_ids", std::move(ids)}});
    }
    case 3: {  // SubAxisInfoAttr
      int64_t pre_size, size;
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&pre_size, "sub-axis pre-size"));
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&size, "sub-axis size"));
      return ir::Attribute(ir::Attribute::Dictionary{{"pre_size", I64(pre_size)},
                                                     {"size", I64(size)}});
    }
    case 4: {  // AxisRefAttr
      STABLERT_ASSIGN_OR_RETURN(std::string_view name, ReadSharedString(c, "axis name"));
      ir::Attribute::Dictionary dict{{"name", Text(std::string(name))}};
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* sub, ReadOptionalAttr(c, "sub-axis info"));
      if (sub) dict.emplace_back("sub_axis_info", *sub);
      return ir::Attribute(std::move(dict));
    }
    case 5: {  // DimensionShardingAttr
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute axes, List(*this, c, "dimension axes"));
      uint8_t closed;
      STABLERT_RETURN_IF_ERROR(c.ReadByte(&closed, "is_closed flag"));
      ir::Attribute::Dictionary dict{{"axes", std::move(axes)},
                                     {"is_closed", ir::Attribute(closed != 0)}};
      uint64_t priority;
      bool has_priority;
      STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&priority, &has_priority, "priority"));
      if (has_priority) dict.emplace_back("priority", I64(static_cast<int64_t>(priority)));
      return ir::Attribute(std::move(dict));
    }
    case 6: return TensorSharding(*this, c, 1);
    case 15: return TensorSharding(*this, c, 2);
    case 17: return TensorSharding(*this, c, 3);
    case 8: return SignedList(c, "factor indices");  // DimMappingAttr
    case 10: {  // OpShardingRuleAttr
      ir::Attribute::Dictionary dict;
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute sizes, SignedList(c, "factor sizes"));
      dict.emplace_back("factor_sizes", std::move(sizes));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute operands, List(*this, c, "operand mappings"));
      dict.emplace_back("operand_mappings", std::move(operands));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute results, List(*this, c, "result mappings"));
      dict.emplace_back("result_mappings", std::move(results));
      for (const char* name : {"reduction_factors", "need_replication_factors",
                               "permutation_factors", "blocked_propagation_factors"}) {
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute factors, SignedList(c, name));
        dict.emplace_back(name, std::move(factors));
      }
      uint8_t custom;
      STABLERT_RETURN_IF_ERROR(c.ReadByte(&custom, "is_custom_rule flag"));
      dict.emplace_back("is_custom_rule", ir::Attribute(custom != 0));
      return ir::Attribute(std::move(dict));
    }
    case 13: {  // AllToAllParamAttr
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute axes, List(*this, c, "all-to-all axes"));
      int64_t src, tgt;
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&src, "all-to-all source dimension"));
      STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&tgt, "all-to-all target dimension"));
      return ir::Attribute(ir::Attribute::Dictionary{
          {"axes", std::move(axes)}, {"src_dim", I64(src)}, {"tgt_dim", I64(tgt)}});
    }
    default:
      return c.Error("unknown sdy attribute kind " + std::to_string(code));
  }
}

}  // namespace stablert::stablehlo
