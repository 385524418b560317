#include "skeleton.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <variant>

#include "ir/float_format.h"
#include "ir/printer.h"

namespace stablert::tools {
namespace {

std::string Indent(int depth) { return std::string(2 * depth, ' '); }

std::string TypeList(const ir::Module& module, const std::vector<ir::ValueId>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += ir::TypeToString(module.type_of(values[i]));
  }
  return out;
}

std::string TypeList(const std::vector<ir::Type>& types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) out += ", ";
    out += ir::TypeToString(types[i]);
  }
  return out;
}

// As MLIR prints a FunctionType: one result without parentheses.
std::string FunctionType(const ir::Function& f) {
  std::string out = "(";
  out += TypeList(f.argument_types);
  out += ") -> ";
  if (f.result_types.size() == 1) return out + ir::TypeToString(f.result_types[0]);
  return out + "(" + TypeList(f.result_types) + ")";
}

void HashWord(uint64_t word, uint64_t* hash) {
  for (int shift = 0; shift < 64; shift += 8) {
    *hash ^= (word >> shift) & 0xFF;
    *hash *= 0x100000001B3ULL;
  }
}

uint64_t ElementWord(DType dtype, const uint8_t* p) {
  uint64_t bits = ir::LoadElementBits(dtype, p);
  int width = DTypeBitWidth(dtype);
  switch (DTypeKindOf(dtype)) {
    case DTypeKind::kBool: return bits ? 1 : 0;
    case DTypeKind::kSigned:
      if (width < 64) {
        bits &= (uint64_t{1} << width) - 1;
        uint64_t sign = uint64_t{1} << (width - 1);
        bits = (bits ^ sign) - sign;
      }
      return bits;
    case DTypeKind::kUnsigned:
      return width < 64 ? bits & ((uint64_t{1} << width) - 1) : bits;
    default:
      return width < 64 ? bits & ((uint64_t{1} << width) - 1) : bits;
  }
}

void AppendOp(const ir::Module& module, const ir::Operation& op, int depth, std::string& out);

void AppendRegions(const ir::Module& module, const ir::Operation& op, int depth,
                   std::string& out) {
  for (const ir::Region& region : op.regions) {
    out += Indent(depth + 1) + "region\n";
    for (const ir::Block& block : region.blocks) {
      out += Indent(depth + 2) + "block (" + TypeList(module, block.arguments) + ")\n";
      for (const ir::Operation& inner : block.ops) AppendOp(module, inner, depth + 3, out);
    }
  }
}

void AppendOp(const ir::Module& module, const ir::Operation& op, int depth, std::string& out) {
  out += Indent(depth) + std::string(ir::OpName(op.code)) + " " +
         std::to_string(op.operands.size()) + " -> " + TypeList(module, op.results);
  if (op.code == ir::OpCode::kConstant) {
    const ir::Attribute* value = op.attr("value");
    const ir::Attribute::Elements* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
    char digest[32];
    std::snprintf(digest, sizeof(digest), "%016" PRIx64,
                  elements && *elements ? ConstantDigest(**elements) : uint64_t{0});
    out += std::string(" = ") + digest;
  }
  out += "\n";
  AppendRegions(module, op, depth, out);
}

}  // namespace

uint64_t ConstantDigest(const ir::ElementsData& data) {
  uint64_t hash = 0xCBF29CE484222325ULL;
  DType dtype = data.type.dtype;
  DType part = dtype == DType::kC64 ? DType::kF32 : dtype == DType::kC128 ? DType::kF64 : dtype;
  const size_t size = static_cast<size_t>(DTypeByteSize(part));
  if (size == 0) return hash;
  const std::vector<uint8_t> bytes = data.Expanded();
  for (size_t offset = 0; offset + size <= bytes.size(); offset += size) {
    HashWord(ElementWord(part, bytes.data() + offset), &hash);
  }
  return hash;
}

std::string Skeleton(const ir::Module& module) {
  std::string out;
  for (const ir::Function& f : module.functions) {
    out += "func " + f.name + (f.is_public ? " public " : " private ") + FunctionType(f) + "\n";
    for (const ir::Block& block : f.body.blocks) {
      for (const ir::Operation& op : block.ops) AppendOp(module, op, 1, out);
    }
  }
  return out;
}

}  // namespace stablert::tools

namespace stablert::tools {
namespace {

std::string CanonicalString(std::string_view raw) {
  std::string out = "\"";
  for (unsigned char ch : raw) {
    if (ch >= 0x20 && ch < 0x7F && ch != '"' && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "\\%02X", ch);
      out += hex;
    }
  }
  return out + "\"";
}

struct Canonical {
  std::string operator()(const ir::Attribute::Unit&) const { return "none"; }
  std::string operator()(bool b) const { return b ? "true" : "false"; }
  std::string operator()(const ir::Attribute::Integer& i) const {
    if (DTypeKindOf(i.dtype) == DTypeKind::kUnsigned) {
      int width = DTypeBitWidth(i.dtype);
      uint64_t bits = static_cast<uint64_t>(i.value);
      if (width < 64) bits &= (uint64_t{1} << width) - 1;
      return std::to_string(bits);
    }
    return std::to_string(i.value);
  }
  std::string operator()(const ir::Attribute::Float& f) const {
    char text[40];
    std::snprintf(text, sizeof(text), "%.17g", f.value);
    return text;
  }
  std::string operator()(const std::string& s) const { return CanonicalString(s); }
  std::string operator()(const ir::Attribute::Symbol& s) const { return CanonicalString(s.name); }
  std::string operator()(const ir::Attribute::Array& array) const {
    std::string out = "[";
    for (size_t i = 0; i < array.size(); ++i) {
      if (i) out += ", ";
      out += CanonicalAttribute(array[i]);
    }
    return out + "]";
  }
  std::string operator()(const ir::Attribute::Dictionary& dict) const {
    std::vector<std::string> entries;
    for (const auto& [key, value] : dict) entries.push_back(key + " = " + CanonicalAttribute(value));
    std::sort(entries.begin(), entries.end());
    std::string out = "{";
    for (size_t i = 0; i < entries.size(); ++i) out += (i ? ", " : "") + entries[i];
    return out + "}";
  }
  std::string operator()(const ir::Attribute::Elements& e) const {
    if (!e) return "<null elements>";
    char digest[24];
    std::snprintf(digest, sizeof(digest), "=%016" PRIx64, ConstantDigest(*e));
    return ir::TypeToString(e->type) + digest;
  }
  std::string operator()(const ir::Type& t) const { return ir::TypeToString(t); }
  std::string operator()(const ir::EnumValue& e) const { return ir::EnumValueName(e); }
  std::string operator()(const ir::OpaqueValue&) const { return "?"; }
};

void CollectOps(const ir::Region& region, std::vector<const ir::Operation*>& out) {
  for (const ir::Block& block : region.blocks) {
    for (const ir::Operation& op : block.ops) {
      out.push_back(&op);
      for (const ir::Region& inner : op.regions) CollectOps(inner, out);
    }
  }
}

struct ListedOp {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
};

std::vector<ListedOp> ParseListing(const std::string& text) {
  std::vector<ListedOp> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.rfind("op ", 0) == 0) {
      out.push_back({std::string(line.substr(3)), {}});
    } else if (line.rfind("  ", 0) == 0 && !out.empty()) {
      line.remove_prefix(2);
      size_t space = line.find(' ');
      out.back().attrs.emplace_back(std::string(line.substr(0, space)),
                                    space == std::string_view::npos
                                        ? std::string()
                                        : std::string(line.substr(space + 1)));
    }
  }
  return out;
}

}  // namespace

std::string CanonicalAttribute(const ir::Attribute& attr) {
  return std::visit(Canonical{}, attr.value());
}

std::string CompareAttributes(const ir::Module& module, const std::string& expected) {
  std::vector<const ir::Operation*> ops;
  for (const ir::Function& f : module.functions) CollectOps(f.body, ops);
  std::vector<ListedOp> listed = ParseListing(expected);
  if (listed.size() != ops.size()) {
    return "the import has " + std::to_string(ops.size()) + " ops, MLIR's VHLO module " +
           std::to_string(listed.size());
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const ir::Operation& op = *ops[i];
    std::string where = "op #" + std::to_string(i) + " (" + listed[i].name + " -> " +
                        std::string(ir::OpName(op.code)) + ")";
    for (const auto& [name, value] : listed[i].attrs) {
      if (value == "?") continue;
      const ir::Attribute* ours = op.attr(name);
      if (!ours) {
        if (value == "none") continue;
        return where + ": attribute " + name + " = " + value + " is missing";
      }
      std::string canonical = CanonicalAttribute(*ours);
      if (canonical != value) {
        return where + ": attribute " + name + " is " + canonical + ", MLIR reads " + value;
      }
    }
  }
  return "";
}

}  // namespace stablert::tools
