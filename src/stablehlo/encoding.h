// Primitive MLIR bytecode encodings over a bounds-checked cursor.
//
// A Cursor reads a window of the input (a section, an attribute entry, a property blob)
// without copying it. Every read checks the remaining length first; a failed read
// returns InvalidArgument naming the window ("string section", "vhlo attribute #12"),
// the absolute byte offset in the file and what was expected, and leaves the cursor
// where it was. Cursors are small values; they never own the bytes they read, so the
// input must outlive them. Not thread-safe (use one cursor per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stablert::stablehlo {

class Cursor {
 public:
  // `data` is the window to read; `base_offset` is its absolute offset in the file and
  // `where` names the window in error messages. `where` must outlive the cursor.
  Cursor(std::string_view data, size_t base_offset, std::string_view where)
      : data_(data), base_(base_offset), where_(where) {}

  size_t position() const { return pos_; }               // offset within the window
  size_t offset() const { return base_ + pos_; }         // absolute offset in the file
  size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }
  std::string_view where() const { return where_; }
  std::string_view rest() const { return data_.substr(pos_); }

  // An error at the current position: "<where> at byte offset N: <message>".
  Status Error(std::string_view message) const;
  // "... expected <what>, but the data ends" (for truncation).
  Status Truncated(std::string_view what) const;

  // The one-byte forms are inline: they are most of what the IR section holds.
  Status ReadByte(uint8_t* out, std::string_view what) {
    if (pos_ >= data_.size()) return Truncated(what);
    *out = static_cast<uint8_t>(data_[pos_++]);
    return OkStatus();
  }
  // PrefixVarInt: the count of trailing zero bits of the first byte is the number of
  // additional bytes; 0x00 is followed by a full little-endian uint64.
  Status ReadVarInt(uint64_t* out, std::string_view what) {
    if (pos_ < data_.size() && (static_cast<uint8_t>(data_[pos_]) & 1)) {
      *out = static_cast<uint8_t>(data_[pos_++]) >> 1;
      return OkStatus();
    }
    return ReadLongVarInt(out, what);
  }
  // Zig-zag encoded VarInt.
  Status ReadSignedVarInt(int64_t* out, std::string_view what);
  // (value << 1) | flag.
  Status ReadVarIntWithFlag(uint64_t* value, bool* flag, std::string_view what);
  // A VarInt that must fit `limit` (exclusive); e.g. an index into a table of that size.
  Status ReadIndex(uint64_t limit, uint64_t* out, std::string_view what) {
    size_t start = pos_;
    STABLERT_RETURN_IF_ERROR(ReadVarInt(out, what));
    if (*out < limit) return OkStatus();
    pos_ = start;
    return OutOfRange(*out, limit, what);
  }
  // A VarInt element count for a list whose elements take at least `min_element_bytes`
  // each: rejects counts the remaining window cannot hold, so callers may reserve.
  Status ReadCount(size_t min_element_bytes, uint64_t* out, std::string_view what) {
    size_t start = pos_;
    STABLERT_RETURN_IF_ERROR(ReadVarInt(out, what));
    if (min_element_bytes == 0 || *out <= remaining() / min_element_bytes) return OkStatus();
    pos_ = start;
    return TooMany(*out, what);
  }
  Status ReadBytes(size_t size, std::string_view* out, std::string_view what);
  // A blob: VarInt length, then the bytes (no alignment).
  Status ReadBlob(std::string_view* out, std::string_view what);
  Status ReadNullTerminated(std::string_view* out, std::string_view what);
  Status Skip(size_t size, std::string_view what);
  // Skips `0xCB` padding bytes up to the absolute file offset that is a multiple of
  // `alignment` (a power of two).
  Status AlignTo(uint64_t alignment, std::string_view what);
  // Fails unless the window was consumed exactly.
  Status ExpectEnd(std::string_view what) const;

 private:
  Status ReadLongVarInt(uint64_t* out, std::string_view what);
  Status OutOfRange(uint64_t value, uint64_t limit, std::string_view what) const;
  Status TooMany(uint64_t count, std::string_view what) const;

  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
  std::string_view where_;
};

}  // namespace stablert::stablehlo
