#include "ir/attribute.h"

#include <cstring>
#include <sstream>

#include "base/shape.h"

namespace stablert::ir {
namespace {

int64_t LoadInteger(const uint8_t* p, DType dtype) {
  switch (dtype) {
    case DType::kPred: case DType::kU8: case DType::kU4: case DType::kU2: case DType::kU1:
      return *p;
    case DType::kS8: case DType::kS4: case DType::kS2: case DType::kS1:
      return static_cast<int8_t>(*p);
    case DType::kS16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kU16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kS32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kU32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kS64: case DType::kU64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

}  // namespace

int64_t ElementsData::IntegerAt(int64_t i) const { return LoadInteger(Element(i), type.dtype); }

int64_t ElementsData::NumElements() const {
  if (splat) return ElementCount(type.dims);
  const int size = DTypeByteSize(type.dtype);
  return size ? static_cast<int64_t>(bytes.size()) / size : 0;
}

const uint8_t* ElementsData::Element(int64_t i) const {
  return bytes.data() + (splat ? 0 : static_cast<size_t>(i) * static_cast<size_t>(DTypeByteSize(type.dtype)));
}

std::vector<uint8_t> ElementsData::Expanded() const {
  if (!splat) return bytes;
  const int64_t n = ElementCount(type.dims);
  std::vector<uint8_t> out(static_cast<size_t>(n) * bytes.size());
  for (int64_t i = 0; i < n; ++i) std::memcpy(out.data() + static_cast<size_t>(i) * bytes.size(), bytes.data(), bytes.size());
  return out;
}

std::optional<int64_t> Attribute::AsInt() const {
  if (const auto* i = get<Integer>()) return i->value;
  return std::nullopt;
}

std::optional<bool> Attribute::AsBool() const {
  if (const auto* b = get<bool>()) return *b;
  return std::nullopt;
}

std::optional<std::string_view> Attribute::AsString() const {
  if (const auto* s = get<std::string>()) return std::string_view(*s);
  if (const auto* s = get<Symbol>()) return std::string_view(s->name);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> Attribute::AsIntArray() const {
  if (const auto* e = get<Elements>()) {
    const ElementsData& data = **e;
    if (!IsInteger(data.type.dtype) || data.type.rank() > 1) return std::nullopt;
    std::vector<int64_t> out(static_cast<size_t>(data.NumElements()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = data.IntegerAt(static_cast<int64_t>(i));
    return out;
  }
  if (const auto* a = get<Array>()) {
    std::vector<int64_t> out;
    for (const Attribute& element : *a) {
      auto v = element.AsInt();
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<bool>> Attribute::AsBoolArray() const {
  if (const auto* e = get<Elements>()) {
    const ElementsData& data = **e;
    if (data.type.dtype != DType::kPred || data.type.rank() > 1) return std::nullopt;
    std::vector<bool> out(static_cast<size_t>(data.NumElements()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = *data.Element(static_cast<int64_t>(i)) != 0;
    return out;
  }
  if (const auto* a = get<Array>()) {
    std::vector<bool> out;
    for (const Attribute& element : *a) {
      auto v = element.AsBool();
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  return std::nullopt;
}

bool Attribute::operator==(const Attribute& other) const {
  if (value_.index() != other.value_.index()) return false;
  if (const auto* e = get<Elements>()) {
    const auto& o = *other.get<Elements>();
    if ((*e)->type != o->type) return false;
    if ((*e)->splat == o->splat) return (*e)->bytes == o->bytes;
    return (*e)->Expanded() == o->Expanded();
  }
  return value_ == other.value_;
}

const Attribute* FindAttr(const Attribute::Dictionary& dict, std::string_view name) {
  for (const auto& [key, value] : dict)
    if (key == name) return &value;
  return nullptr;
}

}  // namespace stablert::ir
