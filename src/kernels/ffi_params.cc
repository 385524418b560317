#include "kernels/ffi_params.h"

#include <algorithm>
#include <numeric>

namespace stablert::kernels {
namespace {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void PutBytes(std::string& out, std::string_view bytes) {
  PutU32(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes);
}

void PutDictionary(std::string& out, const std::vector<std::string>& names, const std::vector<FfiAttribute>& values);

void PutAttribute(std::string& out, const FfiAttribute& a) {
  out += static_cast<char>(a.kind);
  switch (a.kind) {
    case FfiAttribute::Kind::kScalar:
    case FfiAttribute::Kind::kArray:
      out += static_cast<char>(a.dtype);
      PutBytes(out, a.bytes);
      break;
    case FfiAttribute::Kind::kString:
      PutBytes(out, a.bytes);
      break;
    case FfiAttribute::Kind::kDictionary:
      PutDictionary(out, a.names, a.fields);
      break;
  }
}

void PutDictionary(std::string& out, const std::vector<std::string>& names, const std::vector<FfiAttribute>& values) {
  std::vector<size_t> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  PutU32(out, static_cast<uint32_t>(names.size()));
  for (size_t i : order) {
    PutBytes(out, names[i]);
    PutAttribute(out, values[i]);
  }
}

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool U8(uint8_t* v) {
    if (pos_ >= data_.size()) return false;
    *v = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }
  bool U32(uint32_t* v) {
    if (data_.size() - pos_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += 4;
    return true;
  }
  bool Bytes(std::string* out) {
    uint32_t n;
    if (!U32(&n) || data_.size() - pos_ < n) return false;
    out->assign(data_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

bool GetDictionary(Reader& r, std::vector<std::string>* names, std::vector<FfiAttribute>* values, int depth);

bool GetAttribute(Reader& r, FfiAttribute* a, int depth) {
  uint8_t kind, dtype;
  if (!r.U8(&kind) || kind > 3) return false;
  a->kind = static_cast<FfiAttribute::Kind>(kind);
  switch (a->kind) {
    case FfiAttribute::Kind::kScalar:
    case FfiAttribute::Kind::kArray:
      if (!r.U8(&dtype)) return false;
      a->dtype = static_cast<DType>(dtype);
      return r.Bytes(&a->bytes);
    case FfiAttribute::Kind::kString:
      return r.Bytes(&a->bytes);
    case FfiAttribute::Kind::kDictionary:
      return depth < 64 && GetDictionary(r, &a->names, &a->fields, depth + 1);
  }
  return false;
}

bool GetDictionary(Reader& r, std::vector<std::string>* names, std::vector<FfiAttribute>* values, int depth) {
  uint32_t n;
  if (!r.U32(&n)) return false;
  for (uint32_t i = 0; i < n; ++i) {
    std::string name;
    FfiAttribute value;
    if (!r.Bytes(&name) || !GetAttribute(r, &value, depth)) return false;
    names->push_back(std::move(name));
    values->push_back(std::move(value));
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string EncodeFfiAttributes(const FfiAttributes& attributes) {
  std::string binary;
  PutDictionary(binary, attributes.names, attributes.values);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(binary.size() * 2);
  for (unsigned char c : binary) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

StatusOr<FfiAttributes> DecodeFfiAttributes(std::string_view encoded) {
  if (encoded.size() % 2 != 0) return InvalidArgument("ffi_call: malformed attribute encoding");
  std::string binary(encoded.size() / 2, '\0');
  for (size_t i = 0; i < binary.size(); ++i) {
    const int hi = HexValue(encoded[2 * i]), lo = HexValue(encoded[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("ffi_call: malformed attribute encoding");
    binary[i] = static_cast<char>(hi * 16 + lo);
  }
  Reader reader(binary);
  FfiAttributes out;
  if (!GetDictionary(reader, &out.names, &out.values, 0) || !reader.done())
    return InvalidArgument("ffi_call: malformed attribute encoding");
  return out;
}

}  // namespace stablert::kernels
