#include "ir/stablehlo_text.h"

#include <cctype>

#include <cstdio>
#include <set>
#include <string_view>

#include "ir/float_format.h"
#include "ir/printer.h"

namespace stablert::ir {
namespace {

// Attributes StableHLO holds as dense i64 arrays (`array<i64: ...>`).
const std::set<std::string_view>& I64ArrayAttributes() {
  static const std::set<std::string_view> names = {
      "broadcast_dimensions", "permutation", "dimensions", "slice_sizes", "start_indices",
      "limit_indices", "strides", "edge_padding_low", "edge_padding_high", "interior_padding",
      "window_dimensions", "window_strides", "base_dilations", "window_dilations", "lhs_dilation",
      "rhs_dilation", "fft_length", "broadcast_sizes"};
  return names;
}

std::string Quote(std::string_view text) { return QuotedString(text); }

std::string IntList(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string EnumText(const EnumValue& value) {
  static constexpr const char* kKinds[] = {"comparison_direction", "comparison_type", "custom_call_api_version",
                                           "fft_type", "precision", "rng_algorithm", "rng_distribution",
                                           "transpose", "result_accuracy_mode", "channel_type"};
  // The custom call API version is a plain i32 enum attribute in StableHLO, not a dialect one.
  if (std::string_view(kKinds[static_cast<int>(value.kind)]) == "custom_call_api_version")
    return std::to_string(value.value) + " : i32";
  return std::string("#stablehlo<") + kKinds[static_cast<int>(value.kind)] + " " + EnumValueName(value) + ">";
}

// `[[e, e], [e, e]]` for a tensor of `dims` whose i-th element (row-major) is element(i).
template <typename ElementText>
std::string NestedList(const Dims& dims, ElementText element) {
  if (dims.empty()) return element(0);
  if (ElementCount(dims) == 0) return "[]";
  std::string out;
  size_t index = 0;
  auto nested = [&](auto&& self, size_t dim) -> void {
    if (dim == dims.size()) {
      out += element(index++);
      return;
    }
    out += "[";
    for (int64_t i = 0; i < dims[dim]; ++i) {
      if (i) out += ", ";
      self(self, dim + 1);
    }
    out += "]";
  };
  nested(nested, 0);
  return out;
}

// A dense elements attribute: hex data, or a nested list of booleans.
StatusOr<std::string> DenseText(const ElementsData& data) {
  const std::string type = TypeToString(data.type);
  // A splat: one element, which MLIR reads as the value of every element.
  if (data.splat && data.type.dtype == DType::kPred)
    return std::string("dense<") + (data.bytes[0] ? "true" : "false") + "> : " + type;
  if (data.type.dtype == DType::kPred) {
    std::string out = NestedList(data.type.dims, [&](size_t i) {
      return std::string(i < data.bytes.size() && data.bytes[i] ? "true" : "false");
    });
    return "dense<" + out + "> : " + type;
  }
  if (data.bytes.empty()) return "dense<> : " + type;
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string hex = "\"0x";
  hex.reserve(data.bytes.size() * 2 + 4);
  for (uint8_t b : data.bytes) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return "dense<" + hex + "\"> : " + type;
}

// An integer tensor attribute (replica_groups, source_target_pairs, padding) as a nested
// decimal list.
StatusOr<std::string> IntTensorText(const Attribute& attr) {
  const auto* elements = attr.get<Attribute::Elements>();
  if (!elements || !*elements) return Unimplemented("an integer tensor attribute of another kind");
  const ElementsData& data = **elements;
  const int size = DTypeByteSize(data.type.dtype);
  if (DTypeKindOf(data.type.dtype) != DTypeKind::kSigned || size == 0)
    return Unimplemented("an integer tensor attribute of " + std::string(DTypeName(data.type.dtype)));
  std::string out = NestedList(data.type.dims, [&](size_t i) {
    uint64_t bits = LoadElementBits(data.type.dtype, data.Element(static_cast<int64_t>(i)));
    int64_t value = static_cast<int64_t>(bits);
    if (size < 8) {
      const uint64_t sign = uint64_t{1} << (size * 8 - 1);
      value = static_cast<int64_t>((bits ^ sign) - sign);
    }
    return std::to_string(value);
  });
  return "dense<" + out + "> : " + TypeToString(data.type);
}

// `#stablehlo.result_accuracy<...>`, or "" for the default (exact, as if absent).
StatusOr<std::string> ResultAccuracyText(const Attribute& attr) {
  const auto* dict = attr.get<Attribute::Dictionary>();
  if (!dict) return Unimplemented("attribute 'result_accuracy' of another kind");
  double atol = 0, rtol = 0;
  int64_t ulps = 0;
  std::string mode = "DEFAULT";
  for (const auto& [key, value] : *dict) {
    if (const auto* f = value.get<Attribute::Float>()) {
      (key == "atol" ? atol : rtol) = f->value;
    } else if (const auto* i = value.get<Attribute::Integer>()) {
      ulps = i->value;
    } else if (const auto* e = value.get<EnumValue>()) {
      mode = EnumValueName(*e);
    }
  }
  if (atol == 0 && rtol == 0 && ulps == 0 && mode == "DEFAULT") return std::string();
  char buffer[128];
  std::snprintf(buffer, sizeof(buffer), "#stablehlo.result_accuracy<atol = %.17e, rtol = %.17e, ulps = %lld, mode = ",
                atol, rtol, static_cast<long long>(ulps));
  return std::string(buffer) + "#stablehlo.result_accuracy_mode<" + mode + ">>";
}

class TextPrinter {
 public:
  explicit TextPrinter(const Module& module) : module_(module) {}

  StatusOr<std::string> Run() {
    out_ = "module";
    if (!module_.name.empty()) out_ += " @" + module_.name;
    std::string attrs = SimpleDict(module_.attrs);
    if (!attrs.empty()) out_ += " attributes " + attrs;
    out_ += " {\n";
    for (const Function& f : module_.functions) STABLERT_RETURN_IF_ERROR(PrintFunction(f));
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  static std::string Name(ValueId v) { return "%v" + std::to_string(v); }
  std::string TypeOf(ValueId v) const { return TypeToString(module_.type_of(v)); }

  // Simple attributes (strings, integers, floats, booleans) of a dictionary; others left out.
  static std::string SimpleDict(const Attribute::Dictionary& dict) {
    std::string out;
    for (const auto& [name, value] : dict) {
      std::string text;
      if (auto s = value.get<std::string>()) {
        text = Quote(*s);
      } else if (auto b = value.get<bool>()) {
        text = *b ? "true" : "false";
      } else if (auto i = value.get<Attribute::Integer>()) {
        text = std::to_string(i->value) + " : " + std::string(DTypeName(i->dtype));
      } else {
        continue;
      }
      out += (out.empty() ? "" : ", ") + name + " = " + text;
    }
    return out.empty() ? "" : "{" + out + "}";
  }

  Status PrintFunction(const Function& f) {
    if (f.body.blocks.size() != 1) return Unimplemented("function @" + f.name + " with several blocks");
    const Block& block = f.body.blocks[0];
    out_ += "  func.func " + std::string(f.is_public ? "public " : "private ") + "@" + f.name + "(";
    for (size_t i = 0; i < block.arguments.size(); ++i) {
      if (i) out_ += ", ";
      out_ += Name(block.arguments[i]) + ": " + TypeOf(block.arguments[i]);
      if (i < f.argument_attrs.size()) {
        std::string attrs = SimpleDict(f.argument_attrs[i]);
        if (!attrs.empty()) out_ += " " + attrs;
      }
    }
    out_ += ") -> (";
    for (size_t i = 0; i < f.result_types.size(); ++i) {
      if (i) out_ += ", ";
      out_ += TypeToString(f.result_types[i]);
      if (i < f.result_attrs.size()) {
        std::string attrs = SimpleDict(f.result_attrs[i]);
        if (!attrs.empty()) out_ += " " + attrs;
      }
    }
    out_ += ") {\n";
    for (const Operation& op : block.ops) STABLERT_RETURN_IF_ERROR(PrintOp(op, 4, /*in_function=*/true));
    out_ += "  }\n";
    return OkStatus();
  }

  Status PrintRegion(const Region& region, int indent) {
    out_ += "{\n";
    for (size_t b = 0; b < region.blocks.size(); ++b) {
      const Block& block = region.blocks[b];
      out_ += std::string(static_cast<size_t>(indent), ' ') + "^bb" + std::to_string(b);
      if (!block.arguments.empty()) {
        out_ += "(";
        for (size_t i = 0; i < block.arguments.size(); ++i) {
          if (i) out_ += ", ";
          out_ += Name(block.arguments[i]) + ": " + TypeOf(block.arguments[i]);
        }
        out_ += ")";
      }
      out_ += ":\n";
      for (const Operation& op : block.ops) STABLERT_RETURN_IF_ERROR(PrintOp(op, indent + 2, false));
    }
    out_ += std::string(static_cast<size_t>(indent - 2), ' ') + "}";
    return OkStatus();
  }

  StatusOr<std::string> AttrText(const Operation& op, const std::string& name, const Attribute& attr) {
    const std::string_view op_name = OpName(op.code);
    if (I64ArrayAttributes().count(name) && !(name == "dimensions" && op.code == OpCode::kBroadcast))
      if (auto list = attr.AsIntArray()) {
        std::string out = "array<i64";
        for (size_t i = 0; i < list->size(); ++i) out += (i ? ", " : ": ") + std::to_string((*list)[i]);
        return out + ">";
      }
    if (name == "window_reversal")
      if (auto list = attr.AsBoolArray()) {
        std::string out = "array<i1";
        for (size_t i = 0; i < list->size(); ++i) out += std::string(i ? ", " : ": ") + ((*list)[i] ? "true" : "false");
        return out + ">";
      }
    if (name == "replica_groups" || name == "source_target_pairs" || name == "padding") return IntTensorText(attr);
    if (name == "operand_layouts" || name == "result_layouts")
      if (const auto* list = attr.get<Attribute::Array>()) {
        // Layouts are 1-D tensors of index type.
        std::string out = "[";
        for (size_t i = 0; i < list->size(); ++i) {
          auto values = (*list)[i].AsIntArray();
          if (!values) return Unimplemented(std::string(op_name) + ": malformed " + std::string(name));
          std::string body = values->empty() ? "" : IntList(*values);
          out += std::string(i ? ", " : "") + "dense<" + (values->empty() ? "" : body) + "> : tensor<" +
                 std::to_string(values->size()) + "xindex>";
        }
        return out + "]";
      }
    if (name == "output_operand_aliases")
      if (const auto* list = attr.get<Attribute::Array>()) {
        // #stablehlo.output_operand_alias<output_tuple_indices = [..], operand_index = i,
        // operand_tuple_indices = [..]>, one per alias.
        std::string out = "[";
        for (size_t i = 0; i < list->size(); ++i) {
          const auto* alias = (*list)[i].get<Attribute::Dictionary>();
          if (!alias) return Unimplemented(std::string(op_name) + ": malformed output_operand_aliases");
          auto ints = [&](const char* key) {
            const Attribute* a = FindAttr(*alias, key);
            auto values = a ? a->AsIntArray() : std::nullopt;
            std::string text = "[";
            if (values)
              for (size_t k = 0; k < values->size(); ++k) text += (k ? ", " : "") + std::to_string((*values)[k]);
            return text + "]";
          };
          const Attribute* index = FindAttr(*alias, "operand_index");
          out += std::string(i ? ", " : "") + "#stablehlo.output_operand_alias<output_tuple_indices = " +
                 ints("output_tuple_indices") + ", operand_index = " +
                 std::to_string(index && index->AsInt() ? *index->AsInt() : 0) +
                 ", operand_tuple_indices = " + ints("operand_tuple_indices") + ">";
        }
        return out + "]";
      }
    return StablehloAttributeText(attr, std::string(op_name) + " attribute '" + name + "'");
  }

  std::vector<int64_t> Ints(const Operation& op, std::string_view name) {
    const Attribute* attr = op.attr(name);
    auto list = attr ? attr->AsIntArray() : std::nullopt;
    return list ? *list : std::vector<int64_t>{};
  }

  // The op's attributes in StableHLO's form: `name = text` entries.
  StatusOr<std::vector<std::string>> Attributes(const Operation& op) {
    std::vector<std::string> out;
    std::set<std::string> done;
    auto fields = [&](const char* struct_name, std::initializer_list<const char*> names,
                      std::initializer_list<const char*> scalars) {
      std::string text = std::string("#stablehlo.") + struct_name + "<";
      bool first = true;
      for (const char* n : names) {
        done.insert(n);
        std::vector<int64_t> values = Ints(op, n);
        if (values.empty()) continue;
        text += (first ? "" : ", ") + std::string(n) + " = " + IntList(values);
        first = false;
      }
      for (const char* n : scalars) {
        done.insert(n);
        const Attribute* attr = op.attr(n);
        auto value = attr ? attr->AsInt() : std::nullopt;
        if (!value) continue;
        text += (first ? "" : ", ") + std::string(n) + " = " + std::to_string(*value);
        first = false;
      }
      return text + ">";
    };
    switch (op.code) {
      case OpCode::kDotGeneral:
        out.push_back("dot_dimension_numbers = " +
                      fields("dot", {"lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
                                     "rhs_contracting_dimensions"},
                             {}));
        break;
      case OpCode::kGather:
        out.push_back("dimension_numbers = " + fields("gather",
                                                      {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                                       "start_indices_batching_dims", "start_index_map"},
                                                      {"index_vector_dim"}));
        break;
      case OpCode::kScatter:
        out.push_back("scatter_dimension_numbers = " +
                      fields("scatter", {"update_window_dims", "inserted_window_dims", "input_batching_dims",
                                         "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"},
                             {"index_vector_dim"}));
        break;
      case OpCode::kConvolution: {
        std::string text = "#stablehlo.conv<raw ";
        bool first = true;
        for (const char* n : {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
                              "kernel_input_feature_dimension", "kernel_output_feature_dimension",
                              "kernel_spatial_dimensions", "output_batch_dimension", "output_feature_dimension",
                              "output_spatial_dimensions"}) {
          done.insert(n);
          const Attribute* attr = op.attr(n);
          if (!attr) return Unimplemented(std::string("stablehlo.convolution without ") + n);
          std::string value;
          if (auto scalar = attr->AsInt()) {
            value = std::to_string(*scalar);
          } else if (auto list = attr->AsIntArray()) {
            value = IntList(*list);
          } else {
            return Unimplemented(std::string("stablehlo.convolution: ") + n + " of another kind");
          }
          text += (first ? "" : ", ") + std::string(n) + " = " + value;
          first = false;
        }
        out.push_back("dimension_numbers = " + text + ">");
        break;
      }
      default:
        break;
    }
    for (const auto& [name, value] : op.attrs) {
      if (done.count(name) || name.rfind("sdy.", 0) == 0) continue;
      if (name == "channel_id") {
        auto id = value.AsInt();
        if (!id) return Unimplemented(std::string(OpName(op.code)) + ": channel_id is not an integer");
        // Send and recv keep their channel's type (2: device to host, 3: host to device);
        // other ops' channels are device to device (1).
        int64_t type = 1;
        if (const Attribute* channel_type = FindAttr(op.attrs, "channel_type")) {
          if (auto t = channel_type->AsInt()) type = *t;
          else if (const auto* e = channel_type->get<EnumValue>()) type = e->value;
        }
        if (*id > 0) out.push_back("channel_handle = #stablehlo.channel_handle<handle = " + std::to_string(*id) +
                                   ", type = " + std::to_string(type) + ">");
        continue;
      }
      if (name == "channel_type") continue;  // part of channel_handle
      if (name == "result_accuracy") {
        STABLERT_ASSIGN_OR_RETURN(std::string text, ResultAccuracyText(value));
        if (!text.empty()) out.push_back(name + " = " + text);
        continue;
      }
      if (const auto* b = value.get<bool>(); b && name == "use_global_device_ids") {
        if (*b) out.push_back(name);
        continue;
      }
      STABLERT_ASSIGN_OR_RETURN(std::string text, AttrText(op, name, value));
      out.push_back(name + " = " + text);
    }
    return out;
  }

  Status PrintOp(const Operation& op, int indent, bool in_function) {
    std::string_view name = OpName(op.code);
    if (name.rfind("sdy.", 0) == 0) return Unimplemented(std::string(name) + " has no StableHLO text form");
    if (op.code == OpCode::kReturn && in_function) name = "func.return";
    STABLERT_ASSIGN_OR_RETURN(std::vector<std::string> attrs, Attributes(op));
    out_ += std::string(static_cast<size_t>(indent), ' ');
    for (size_t i = 0; i < op.results.size(); ++i) out_ += (i ? ", " : "") + Name(op.results[i]);
    if (!op.results.empty()) out_ += " = ";
    out_ += "\"" + std::string(name) + "\"(";
    for (size_t i = 0; i < op.operands.size(); ++i) out_ += (i ? ", " : "") + Name(op.operands[i]);
    out_ += ")";
    if (!op.regions.empty()) {
      out_ += " (";
      for (size_t r = 0; r < op.regions.size(); ++r) {
        if (r) out_ += ", ";
        STABLERT_RETURN_IF_ERROR(PrintRegion(op.regions[r], indent + 4));
      }
      out_ += ")";
    }
    if (!attrs.empty()) {
      out_ += " {";
      for (size_t i = 0; i < attrs.size(); ++i) out_ += (i ? ", " : "") + attrs[i];
      out_ += "}";
    }
    out_ += " : (";
    for (size_t i = 0; i < op.operands.size(); ++i) out_ += (i ? ", " : "") + TypeOf(op.operands[i]);
    out_ += ") -> ";
    if (op.results.size() == 1) {
      out_ += TypeOf(op.results[0]);
    } else {
      out_ += "(";
      for (size_t i = 0; i < op.results.size(); ++i) out_ += (i ? ", " : "") + TypeOf(op.results[i]);
      out_ += ")";
    }
    out_ += "\n";
    return OkStatus();
  }

  const Module& module_;
  std::string out_;
};

}  // namespace

StatusOr<std::string> StablehloAttributeText(const Attribute& attr, std::string_view where) {
  return std::visit(
      [&](const auto& v) -> StatusOr<std::string> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Attribute::Unit>) {
          return std::string("unit");
        } else if constexpr (std::is_same_v<T, bool>) {
          return std::string(v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, Attribute::Integer>) {
          return std::to_string(v.value) + " : " + std::string(DTypeName(v.dtype));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return Quote(v);
        } else if constexpr (std::is_same_v<T, Attribute::Symbol>) {
          return "@" + v.name;
        } else if constexpr (std::is_same_v<T, EnumValue>) {
          return EnumText(v);
        } else if constexpr (std::is_same_v<T, Attribute::Elements>) {
          if (!v) return Unimplemented(std::string(where) + ": an empty attribute");
          return DenseText(*v);
        } else if constexpr (std::is_same_v<T, Attribute::Array>) {
          std::string out = "[";
          for (size_t i = 0; i < v.size(); ++i) {
            STABLERT_ASSIGN_OR_RETURN(std::string element, StablehloAttributeText(v[i], where));
            out += (i ? ", " : "") + element;
          }
          return out + "]";
        } else if constexpr (std::is_same_v<T, Type>) {
          return TypeToString(v);
        } else if constexpr (std::is_same_v<T, Attribute::Dictionary>) {
          // {name = value, ...} (FFI attributes in mhlo.backend_config); names that are
          // not bare identifiers quoted.
          std::string out = "{";
          for (size_t i = 0; i < v.size(); ++i) {
            const std::string& key = v[i].first;
            bool bare = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_');
            for (char c : key)
              bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$');
            STABLERT_ASSIGN_OR_RETURN(std::string element, StablehloAttributeText(v[i].second, where));
            out += (i ? ", " : "") + (bare ? key : Quote(key)) + " = " + element;
          }
          return out + "}";
        } else if constexpr (std::is_same_v<T, Attribute::Float>) {
          char buffer[64];
          std::snprintf(buffer, sizeof(buffer), "%.17e", v.value);
          return std::string(buffer) + " : " + std::string(DTypeName(v.dtype));
        } else {
          return Unimplemented(std::string(where) + ": an attribute with no text form here");
        }
      },
      attr.value());
}

StatusOr<std::string> PrintStablehloText(const Module& module) { return TextPrinter(module).Run(); }

}  // namespace stablert::ir
