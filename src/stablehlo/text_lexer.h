// Tokens of MLIR's textual form, for the StableHLO text reader (text_parser.h).
//
// The lexer walks a borrowed buffer once; tokens view into it. Shapes (`4x?x3xf32`) are
// lexed on request with LexDimensions, since `4x4xf32` is not a sequence of ordinary
// tokens. Positions are byte offsets; LineColumn turns one into "line:column" for
// messages (a scan from the start, done only when an error is reported).
// Failure: malformed input yields a kError token whose text is the message.
// Not thread-safe; the buffer must outlive the lexer and its tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stablert::stablehlo {

enum class TokenKind : uint8_t {
  kEof,
  kError,
  kBareId,     // stablehlo.add, tensor, dense, x
  kPercentId,  // %arg0, %0 (without a #N result index)
  kAtId,       // @main, @"quoted" (text holds the name without '@' or quotes)
  kCaretId,    // ^bb0
  kHashId,     // #loc3, #stablehlo.gather, #sdy
  kBangId,     // !stablehlo.token
  kInteger,    // 12, -3, 0x7FC00000
  kFloat,      // 1.5, -2.0e+03
  kString,     // "text" (text holds the raw, still-escaped body)
  kLParen, kRParen, kLSquare, kRSquare, kLBrace, kRBrace, kLess, kGreater,
  kComma, kColon, kEqual, kArrow, kQuestion, kStar, kPlus, kMinus, kVerticalBar,
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;
  size_t offset = 0;
};

class Lexer {
 public:
  explicit Lexer(std::string_view buffer) : buffer_(buffer) {}

  Token Next();
  // The byte offset of the next unread character.
  size_t position() const { return pos_; }
  void Reset(size_t offset) { pos_ = offset; }
  std::string_view buffer() const { return buffer_; }

  // After `tensor<`: reads `D x D x ... x` (D a decimal size or '?'), stopping before the
  // element type. Dynamic sizes are returned as -1. False (and the offset) on overflow.
  bool LexDimensions(std::vector<int64_t>* dims, size_t* error_offset);
  // Right after a value name: reads `#N`, the result index of a multi-result op.
  bool LexResultIndex(int64_t* index);
  // Skips a balanced `<...>` body starting at `offset` (which must point at '<'); returns
  // the offset after the matching '>' or npos. Strings are skipped as a whole.
  size_t SkipAngleBody(size_t offset) const;

  // "line:column" (1-based) of `offset`.
  std::string LineColumn(size_t offset) const;

 private:
  void SkipSpaceAndComments();
  Token Make(TokenKind kind, size_t start) const {
    return Token{kind, buffer_.substr(start, pos_ - start), start};
  }
  Token LexNumber(size_t start);
  Token LexString(size_t start);
  Token LexIdentifierTail(TokenKind kind, size_t start, size_t skip);

  std::string_view buffer_;
  size_t pos_ = 0;
};

// Decodes an MLIR string literal body (escapes \", \\, \n, \t and \XX hex pairs).
// False if an escape is malformed.
bool UnescapeString(std::string_view body, std::string* out);

}  // namespace stablert::stablehlo
