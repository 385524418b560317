#include "stablehlo/encoding.h"

#include <bit>
#include <cstring>

namespace stablert::stablehlo {

Status Cursor::Error(std::string_view message) const {
  std::string text = "malformed bytecode: ";
  text += where_;
  text += " at byte offset ";
  text += std::to_string(offset());
  text += ": ";
  text += message;
  return InvalidArgument(std::move(text));
}

Status Cursor::Truncated(std::string_view what) const {
  std::string text = "expected ";
  text += what;
  text += ", but the data ends";
  return Error(text);
}

Status Cursor::ReadLongVarInt(uint64_t* out, std::string_view what) {
  if (pos_ >= data_.size()) return Truncated(what);
  const auto* p = reinterpret_cast<const unsigned char*>(data_.data()) + pos_;
  uint8_t first = p[0];
  if (first & 1) {  // the one-byte form
    *out = first >> 1;
    ++pos_;
    return OkStatus();
  }
  if (first == 0) {
    if (remaining() < 9) return Truncated(what);
    uint64_t value = 0;
    for (int i = 8; i >= 1; --i) value = (value << 8) | p[i];
    *out = value;
    pos_ += 9;
    return OkStatus();
  }
  int extra = std::countr_zero(first);  // 1..7
  if (remaining() < static_cast<size_t>(extra) + 1) return Truncated(what);
  uint64_t value = 0;
  for (int i = extra; i >= 0; --i) value = (value << 8) | p[i];
  *out = value >> (extra + 1);
  pos_ += extra + 1;
  return OkStatus();
}

Status Cursor::ReadSignedVarInt(int64_t* out, std::string_view what) {
  uint64_t raw = 0;
  STABLERT_RETURN_IF_ERROR(ReadVarInt(&raw, what));
  *out = static_cast<int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
  return OkStatus();
}

Status Cursor::ReadVarIntWithFlag(uint64_t* value, bool* flag, std::string_view what) {
  uint64_t raw = 0;
  STABLERT_RETURN_IF_ERROR(ReadVarInt(&raw, what));
  *flag = raw & 1;
  *value = raw >> 1;
  return OkStatus();
}

Status Cursor::OutOfRange(uint64_t value, uint64_t limit, std::string_view what) const {
  return Error(std::string(what) + " " + std::to_string(value) + " is out of range (only " +
               std::to_string(limit) + " defined)");
}

Status Cursor::TooMany(uint64_t count, std::string_view what) const {
  return Error(std::string(what) + " " + std::to_string(count) + " exceeds the " +
               std::to_string(remaining()) + " bytes left");
}

Status Cursor::ReadBytes(size_t size, std::string_view* out, std::string_view what) {
  if (size > remaining()) {
    return Error("expected " + std::string(what) + " of " + std::to_string(size) +
                 " bytes, but only " + std::to_string(remaining()) + " remain");
  }
  *out = data_.substr(pos_, size);
  pos_ += size;
  return OkStatus();
}

Status Cursor::ReadBlob(std::string_view* out, std::string_view what) {
  size_t start = pos_;
  uint64_t size = 0;
  STABLERT_RETURN_IF_ERROR(ReadVarInt(&size, what));
  Status status = ReadBytes(size, out, what);
  if (!status.ok()) pos_ = start;
  return status;
}

Status Cursor::ReadNullTerminated(std::string_view* out, std::string_view what) {
  size_t end = data_.find('\0', pos_);
  if (end == std::string_view::npos) return Truncated(std::string(what) + " (NUL-terminated)");
  *out = data_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return OkStatus();
}

Status Cursor::Skip(size_t size, std::string_view what) {
  std::string_view ignored;
  return ReadBytes(size, &ignored, what);
}

Status Cursor::AlignTo(uint64_t alignment, std::string_view what) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return Error("alignment " + std::to_string(alignment) + " of " + std::string(what) +
                 " is not a power of two");
  }
  while (offset() % alignment != 0) {
    uint8_t pad = 0;
    STABLERT_RETURN_IF_ERROR(ReadByte(&pad, "alignment padding"));
    if (pad != 0xCB) {
      --pos_;
      return Error("expected alignment padding byte 0xCB before " + std::string(what));
    }
  }
  return OkStatus();
}

Status Cursor::ExpectEnd(std::string_view what) const {
  if (empty()) return OkStatus();
  return Error(std::to_string(remaining()) + " unexpected trailing bytes after " +
               std::string(what));
}

}  // namespace stablert::stablehlo
