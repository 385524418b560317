// Protocol-buffer wire format: a bounds-checked reader and a small writer.
//
// Used to decode the serialized protos PJRT passes (CompileOptionsProto and friends) and to
// encode the few StableRT returns (DeviceAssignmentProto). Knows nothing about schemas:
// callers walk fields by number. Malformed input yields InvalidArgument naming the byte
// offset, never a crash. Not thread-safe per instance; instances are cheap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stablert::proto {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType wire_type = WireType::kVarint;
  uint64_t varint = 0;          // kVarint, kFixed64, kFixed32 (raw bits)
  std::string_view bytes;       // kLengthDelimited
};

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  // Reads the next field. Groups are rejected (proto3 never writes them).
  StatusOr<Field> Next();

  // Decodes a packed or unpacked repeated varint field's payload into `out`.
  static Status AppendPackedVarints(const Field& field, std::vector<int64_t>* out);

 private:
  StatusOr<uint64_t> ReadVarint();
  std::string_view data_;
  size_t pos_ = 0;
};

class WireWriter {
 public:
  void Varint(uint32_t number, uint64_t value);
  void Bytes(uint32_t number, std::string_view value);
  // A 32-bit fixed-width field (float, fixed32), its bits little-endian.
  void Fixed32(uint32_t number, uint32_t bits);
  // A packed repeated varint field (proto3's default encoding for repeated integers).
  void PackedVarints(uint32_t number, const std::vector<int64_t>& values);
  const std::string& data() const { return data_; }
  std::string Take() { return std::move(data_); }

 private:
  void RawVarint(uint64_t value);
  std::string data_;
};

}  // namespace stablert::proto
