#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "ir/float_format.h"

namespace stablert::ir {
namespace {

//===--- Scalars --------------------------------------------------------------------===//

std::string FormatDouble(double value, DType dtype) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  std::to_chars_result result;
  if (dtype == DType::kF64) {
    result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  } else {
    result = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value));
  }
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string Quote(std::string_view text) { return QuotedString(text); }

std::string IntegerText(int64_t value, DType dtype) {
  if (DTypeKindOf(dtype) == DTypeKind::kUnsigned) return std::to_string(static_cast<uint64_t>(value));
  return std::to_string(value);
}

int64_t LoadInteger(DType dtype, const uint8_t* p) {
  uint64_t bits = LoadElementBits(dtype, p);
  int size = DTypeByteSize(dtype) * 8;
  if (DTypeKindOf(dtype) == DTypeKind::kSigned && size < 64) {
    uint64_t sign = uint64_t{1} << (size - 1);
    return static_cast<int64_t>((bits ^ sign) - sign);
  }
  return static_cast<int64_t>(bits);
}

std::string ElementText(DType dtype, const uint8_t* p) {
  switch (DTypeKindOf(dtype)) {
    case DTypeKind::kBool: return *p ? "true" : "false";
    case DTypeKind::kSigned:
    case DTypeKind::kUnsigned: return IntegerText(LoadInteger(dtype, p), dtype);
    case DTypeKind::kFloat: return FormatDouble(FloatBitsToDouble(dtype, LoadElementBits(dtype, p)), dtype);
    case DTypeKind::kComplex: {
      DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
      int half = DTypeByteSize(part);
      return "(" + ElementText(part, p) + ", " + ElementText(part, p + half) + ")";
    }
    case DTypeKind::kOther: break;
  }
  return "?";
}

void AppendNested(const ElementsData& data, size_t dim, size_t* index, std::string& out) {
  const int size = DTypeByteSize(data.type.dtype);
  if (dim == data.type.dims.size()) {
    out += ElementText(data.type.dtype, data.bytes.data() + *index * size);
    ++*index;
    return;
  }
  out += '[';
  for (int64_t i = 0; i < data.type.dims[dim]; ++i) {
    if (i) out += ", ";
    AppendNested(data, dim + 1, index, out);
  }
  out += ']';
}

std::string ElementsText(const ElementsData& data, int64_t max_elements) {
  const int size = DTypeByteSize(data.type.dtype);
  const size_t n = static_cast<size_t>(data.NumElements());
  std::string out;
  if (data.splat) {
    out = "dense<";
    if (n) out += ElementText(data.type.dtype, data.bytes.data());
    out += ">";
  } else if (static_cast<int64_t>(n) > max_elements) {
    out = "dense_resource<__elided__>";
  } else {
    bool splat = n > 1;
    for (size_t i = 1; splat && i < n; ++i) {
      splat = std::equal(data.bytes.begin(), data.bytes.begin() + size,
                         data.bytes.begin() + i * size);
    }
    out = "dense<";
    if (splat || data.type.dims.empty()) {
      if (n) out += ElementText(data.type.dtype, data.bytes.data());
    } else {
      size_t index = 0;
      AppendNested(data, 0, &index, out);
    }
    out += ">";
  }
  return out + " : " + TypeToString(data.type);
}

std::string AttributeText(const Attribute& attr, int64_t max_elements);

struct AttributePrinter {
  int64_t max_elements;
  std::string operator()(const Attribute::Unit&) const { return "unit"; }
  std::string operator()(bool b) const { return b ? "true" : "false"; }
  std::string operator()(const Attribute::Integer& i) const {
    return IntegerText(i.value, i.dtype) + " : " + std::string(DTypeName(i.dtype));
  }
  std::string operator()(const Attribute::Float& f) const {
    return FormatDouble(f.value, f.dtype) + " : " + std::string(DTypeName(f.dtype));
  }
  std::string operator()(const std::string& s) const { return Quote(s); }
  std::string operator()(const Attribute::Symbol& s) const { return "@" + s.name; }
  std::string operator()(const Attribute::Array& array) const {
    std::string out = "[";
    for (size_t i = 0; i < array.size(); ++i) {
      if (i) out += ", ";
      out += AttributeText(array[i], max_elements);
    }
    return out + "]";
  }
  std::string operator()(const Attribute::Dictionary& dict) const {
    std::string out = "{";
    for (size_t i = 0; i < dict.size(); ++i) {
      if (i) out += ", ";
      out += dict[i].first + " = " + AttributeText(dict[i].second, max_elements);
    }
    return out + "}";
  }
  std::string operator()(const Attribute::Elements& e) const {
    return e ? ElementsText(*e, max_elements) : "dense<>";
  }
  std::string operator()(const Type& t) const { return TypeToString(t); }
  std::string operator()(const EnumValue& e) const {
    static constexpr const char* kKinds[] = {
        "comparison_direction", "comparison_type", "api_version", "fft_type", "precision",
        "rng_algorithm", "rng_distribution", "transpose", "result_accuracy_mode",
        "channel_type"};
    return std::string("#stablehlo<") + kKinds[static_cast<int>(e.kind)] + " " +
           EnumValueName(e) + ">";
  }
  std::string operator()(const OpaqueValue& o) const {
    if (!o.text.empty() && (o.text[0] == '#' || o.text.rfind("loc(", 0) == 0)) return o.text;
    return "#" + o.dialect + "<" + Quote(o.text) + ">";
  }
};

std::string AttributeText(const Attribute& attr, int64_t max_elements) {
  return std::visit(AttributePrinter{max_elements}, attr.value());
}

//===--- Module structure -----------------------------------------------------------===//

class ModulePrinter {
 public:
  ModulePrinter(const Module& module, const PrintOptions& options)
      : module_(module), options_(options) {}

  std::string PrintModule() {
    out_ = "module";
    if (!module_.name.empty()) out_ += " @" + module_.name;
    if (!module_.attrs.empty()) out_ += " attributes " + Dict(module_.attrs);
    out_ += " {\n";
    for (const auto& [name, mesh] : module_.meshes) {
      out_ += "  sdy.mesh @" + name + " = " + AttributeText(mesh, options_.max_elements) + "\n";
    }
    for (const Function& f : module_.functions) PrintFunction(f);
    out_ += "}\n";
    return std::move(out_);
  }

  std::string PrintOne(const Operation& op) {
    PrintOp(op, 0);
    if (!out_.empty() && out_.back() == '\n') out_.pop_back();
    return std::move(out_);
  }

 private:
  std::string Dict(const Attribute::Dictionary& dict) {
    return AttributeText(Attribute(dict), options_.max_elements);
  }
  std::string Value(ValueId id) {
    std::string text(1, '%');
    text += std::to_string(id);
    return text;
  }
  std::string TypeOf(ValueId id) {
    return id < module_.value_types.size() ? TypeToString(module_.type_of(id)) : "<no type>";
  }
  std::string Loc(LocationId id) {
    if (!options_.locations) return "";
    if (id == 0 || id >= module_.locations.size()) return " loc(unknown)";
    return " loc(" + Quote(module_.locations[id].ToString()) + ")";
  }
  void Indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }

  void PrintFunction(const Function& f) {
    out_ += "  func.func ";
    out_ += f.is_public ? "public @" : "private @";
    out_ += f.name + "(";
    const std::vector<ValueId>* args =
        f.body.blocks.empty() ? nullptr : &f.body.blocks.front().arguments;
    for (size_t i = 0; i < f.argument_types.size(); ++i) {
      if (i) out_ += ", ";
      if (args && i < args->size()) {
        out_ += Value((*args)[i]);
        out_ += ": ";
      }
      out_ += TypeToString(f.argument_types[i]);
      if (i < f.argument_attrs.size() && !f.argument_attrs[i].empty()) {
        out_ += ' ';
        out_ += Dict(f.argument_attrs[i]);
      }
    }
    out_ += ") -> (";
    for (size_t i = 0; i < f.result_types.size(); ++i) {
      if (i) out_ += ", ";
      out_ += TypeToString(f.result_types[i]);
      if (i < f.result_attrs.size() && !f.result_attrs[i].empty()) {
        out_ += ' ';
        out_ += Dict(f.result_attrs[i]);
      }
    }
    out_ += ")" + Loc(f.location) + " {\n";
    for (size_t b = 0; b < f.body.blocks.size(); ++b) {
      if (b > 0) PrintBlockHeader(f.body.blocks[b], b, 1);
      for (const Operation& op : f.body.blocks[b].ops) PrintOp(op, 2);
    }
    out_ += "  }\n";
  }

  void PrintBlockHeader(const Block& block, size_t index, int depth) {
    Indent(depth);
    out_ += "^bb" + std::to_string(index);
    if (!block.arguments.empty()) {
      out_ += "(";
      for (size_t i = 0; i < block.arguments.size(); ++i) {
        if (i) out_ += ", ";
        out_ += Value(block.arguments[i]) + ": " + TypeOf(block.arguments[i]);
      }
      out_ += ")";
    }
    out_ += ":\n";
  }

  void PrintTypes(const Operation& op) {
    std::vector<ValueId> all(op.operands);
    all.insert(all.end(), op.results.begin(), op.results.end());
    if (all.empty()) return;
    bool same = true;
    for (ValueId id : all) same = same && id < module_.value_types.size() &&
                                 module_.type_of(id) == module_.type_of(all.front());
    out_ += " : ";
    if (same && (op.results.size() <= 1 || op.operands.empty())) {
      out_ += TypeOf(all.front());
      return;
    }
    if (op.results.empty()) {
      for (size_t i = 0; i < op.operands.size(); ++i) {
        if (i) out_ += ", ";
        out_ += TypeOf(op.operands[i]);
      }
      return;
    }
    out_ += "(";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (i) out_ += ", ";
      out_ += TypeOf(op.operands[i]);
    }
    out_ += ") -> ";
    if (op.results.size() != 1) out_ += "(";
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (i) out_ += ", ";
      out_ += TypeOf(op.results[i]);
    }
    if (op.results.size() != 1) out_ += ")";
  }

  void PrintOp(const Operation& op, int depth) {
    Indent(depth);
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (i) out_ += ", ";
      out_ += Value(op.results[i]);
    }
    if (!op.results.empty()) out_ += " = ";
    out_ += OpName(op.code);
    for (size_t i = 0; i < op.operands.size(); ++i) {
      out_ += i ? ", " : " ";
      out_ += Value(op.operands[i]);
    }
    if (!op.attrs.empty()) out_ += " " + Dict(op.attrs);
    if (!op.regions.empty()) {
      out_ += " (";
      for (size_t r = 0; r < op.regions.size(); ++r) {
        if (r) out_ += ", ";
        out_ += "{\n";
        const Region& region = op.regions[r];
        for (size_t b = 0; b < region.blocks.size(); ++b) {
          const Block& block = region.blocks[b];
          if (b > 0 || !block.arguments.empty()) PrintBlockHeader(block, b, depth);
          for (const Operation& inner : block.ops) PrintOp(inner, depth + 1);
        }
        Indent(depth);
        out_ += "}";
      }
      out_ += ")";
    }
    PrintTypes(op);
    out_ += Loc(op.location);
    out_ += "\n";
  }

  const Module& module_;
  const PrintOptions& options_;
  std::string out_;
};

}  // namespace

std::string QuotedString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch >= 0x20 && ch < 0x7F) {
      out += static_cast<char>(ch);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "\\%02X", ch);
      out += hex;
    }
  }
  return out + "\"";
}

std::string EnumValueName(const EnumValue& value) {
  static constexpr const char* kComparisonDirection[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static constexpr const char* kComparisonType[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED",
                                                    "UNSIGNED"};
  static constexpr const char* kApiVersion[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                                "API_VERSION_STATUS_RETURNING",
                                                "API_VERSION_STATUS_RETURNING_UNIFIED",
                                                "API_VERSION_TYPED_FFI"};
  static constexpr const char* kFftType[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  static constexpr const char* kPrecision[] = {"DEFAULT", "HIGH", "HIGHEST"};
  static constexpr const char* kRngAlgorithm[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  static constexpr const char* kRngDistribution[] = {"?", "UNIFORM", "NORMAL"};
  static constexpr const char* kTranspose[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                                               "ADJOINT"};
  static constexpr const char* kAccuracyMode[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};
  auto pick = [&](const auto& names) -> std::string {
    size_t count = sizeof(names) / sizeof(names[0]);
    if (value.value < 0 || static_cast<size_t>(value.value) >= count) {
      return std::to_string(value.value);
    }
    return names[value.value];
  };
  switch (value.kind) {
    case EnumKind::kComparisonDirection: return pick(kComparisonDirection);
    case EnumKind::kComparisonType: return pick(kComparisonType);
    case EnumKind::kCustomCallApiVersion: return pick(kApiVersion);
    case EnumKind::kFftType: return pick(kFftType);
    case EnumKind::kPrecision: return pick(kPrecision);
    case EnumKind::kRngAlgorithm: return pick(kRngAlgorithm);
    case EnumKind::kRngDistribution: return pick(kRngDistribution);
    case EnumKind::kTranspose: return pick(kTranspose);
    case EnumKind::kResultAccuracyMode: return pick(kAccuracyMode);
    case EnumKind::kChannelType: return std::to_string(value.value);
  }
  return "?";
}

std::string AttributeToString(const Attribute& attr) { return AttributeText(attr, 1024); }

std::string PrintModule(const Module& module, const PrintOptions& options) {
  return ModulePrinter(module, options).PrintModule();
}

std::string PrintOperation(const Module& module, const Operation& op, const PrintOptions& options) {
  return ModulePrinter(module, options).PrintOne(op);
}

}  // namespace stablert::ir
