#include "skeleton.h"

#include <cinttypes>
#include <cstdio>

#include "ir/float_format.h"

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
  for (size_t offset = 0; offset + size <= data.bytes.size(); offset += size) {
    HashWord(ElementWord(part, data.bytes.data() + offset), &hash);
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
