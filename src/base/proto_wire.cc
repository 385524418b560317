#include "base/proto_wire.h"

#include <vector>

namespace stablert::proto {

StatusOr<uint64_t> WireReader::ReadVarint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size())
      return InvalidArgument("truncated varint at byte " + std::to_string(pos_));
    uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
  return InvalidArgument("varint longer than 10 bytes at byte " + std::to_string(pos_));
}

StatusOr<Field> WireReader::Next() {
  size_t start = pos_;
  STABLERT_ASSIGN_OR_RETURN(uint64_t key, ReadVarint());
  Field field;
  field.number = static_cast<uint32_t>(key >> 3);
  uint32_t wire = key & 7;
  if (field.number == 0 || (key >> 3) > 0x1fffffff)
    return InvalidArgument("invalid field number at byte " + std::to_string(start));
  switch (wire) {
    case 0: {
      field.wire_type = WireType::kVarint;
      STABLERT_ASSIGN_OR_RETURN(field.varint, ReadVarint());
      return field;
    }
    case 1:
    case 5: {
      size_t width = wire == 1 ? 8 : 4;
      if (data_.size() - pos_ < width)
        return InvalidArgument("truncated fixed-width field at byte " + std::to_string(start));
      uint64_t value = 0;
      for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
      pos_ += width;
      field.wire_type = wire == 1 ? WireType::kFixed64 : WireType::kFixed32;
      field.varint = value;
      return field;
    }
    case 2: {
      STABLERT_ASSIGN_OR_RETURN(uint64_t length, ReadVarint());
      if (length > data_.size() - pos_)
        return InvalidArgument("length-delimited field " + std::to_string(field.number) + " at byte " +
                               std::to_string(start) + " runs past the end of the message");
      field.wire_type = WireType::kLengthDelimited;
      field.bytes = data_.substr(pos_, length);
      pos_ += length;
      return field;
    }
    default:
      return InvalidArgument("unsupported wire type " + std::to_string(wire) + " at byte " + std::to_string(start));
  }
}

Status WireReader::AppendPackedVarints(const Field& field, std::vector<int64_t>* out) {
  if (field.wire_type == WireType::kVarint) {
    out->push_back(static_cast<int64_t>(field.varint));
    return OkStatus();
  }
  if (field.wire_type != WireType::kLengthDelimited)
    return InvalidArgument("field " + std::to_string(field.number) + " is not a varint list");
  WireReader packed(field.bytes);
  while (!packed.done()) {
    STABLERT_ASSIGN_OR_RETURN(uint64_t value, packed.ReadVarint());
    out->push_back(static_cast<int64_t>(value));
  }
  return OkStatus();
}

void WireWriter::RawVarint(uint64_t value) {
  while (value >= 0x80) {
    data_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  data_.push_back(static_cast<char>(value));
}

void WireWriter::Varint(uint32_t number, uint64_t value) {
  RawVarint(static_cast<uint64_t>(number) << 3);
  RawVarint(value);
}

void WireWriter::Bytes(uint32_t number, std::string_view value) {
  RawVarint((static_cast<uint64_t>(number) << 3) | 2);
  RawVarint(value.size());
  data_.append(value);
}

void WireWriter::Fixed32(uint32_t number, uint32_t bits) {
  RawVarint((static_cast<uint64_t>(number) << 3) | 5);
  for (int i = 0; i < 4; ++i) data_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void WireWriter::PackedVarints(uint32_t number, const std::vector<int64_t>& values) {
  WireWriter payload;
  for (int64_t value : values) payload.RawVarint(static_cast<uint64_t>(value));
  Bytes(number, payload.data());
}

}  // namespace stablert::proto
