#include "stablehlo/text_lexer.h"

#include <algorithm>
#include <array>

namespace stablert::stablehlo {
namespace {

// ASCII character classes as one table lookup each (the lexer's inner loops).
enum : uint8_t { kAlpha = 1, kDigit = 2, kIdPunct = 4, kDash = 8, kSpace = 16 };
constexpr std::array<uint8_t, 256> kClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] |= kAlpha;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] |= kAlpha;
  for (int c = '0'; c <= '9'; ++c) t[c] |= kDigit;
  for (char c : {'_', '$', '.'}) t[static_cast<unsigned char>(c)] |= kIdPunct;
  t['-'] |= kDash;
  for (char c : {' ', '\t', '\n', '\r'}) t[static_cast<unsigned char>(c)] |= kSpace;
  return t;
}();
uint8_t ClassOf(char c) { return kClass[static_cast<unsigned char>(c)]; }

bool IsIdStart(char c) { return (ClassOf(c) & kAlpha) != 0 || c == '_'; }
bool IsIdChar(char c) { return (ClassOf(c) & (kAlpha | kDigit | kIdPunct | kDash)) != 0; }
bool IsBareIdChar(char c) { return (ClassOf(c) & (kAlpha | kDigit | kIdPunct)) != 0; }
bool IsDigit(char c) { return (ClassOf(c) & kDigit) != 0; }
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void Lexer::SkipSpaceAndComments() {
  while (pos_ < buffer_.size()) {
    char c = buffer_[pos_];
    if (ClassOf(c) & kSpace) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < buffer_.size() && buffer_[pos_ + 1] == '/') {
      while (pos_ < buffer_.size() && buffer_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

Token Lexer::LexNumber(size_t start) {
  if (buffer_[pos_] == '-') ++pos_;
  if (buffer_[pos_] == '0' && pos_ + 1 < buffer_.size() &&
      (buffer_[pos_ + 1] == 'x' || buffer_[pos_ + 1] == 'X') && pos_ + 2 < buffer_.size() &&
      HexValue(buffer_[pos_ + 2]) >= 0) {
    pos_ += 2;
    while (pos_ < buffer_.size() && HexValue(buffer_[pos_]) >= 0) ++pos_;
    return Make(TokenKind::kInteger, start);
  }
  while (pos_ < buffer_.size() && IsDigit(buffer_[pos_])) ++pos_;
  bool is_float = false;
  if (pos_ < buffer_.size() && buffer_[pos_] == '.') {
    is_float = true;
    ++pos_;
    while (pos_ < buffer_.size() && IsDigit(buffer_[pos_])) ++pos_;
  }
  if (is_float && pos_ < buffer_.size() && (buffer_[pos_] == 'e' || buffer_[pos_] == 'E')) {
    size_t save = pos_++;
    if (pos_ < buffer_.size() && (buffer_[pos_] == '+' || buffer_[pos_] == '-')) ++pos_;
    if (pos_ < buffer_.size() && IsDigit(buffer_[pos_])) {
      while (pos_ < buffer_.size() && IsDigit(buffer_[pos_])) ++pos_;
    } else {
      pos_ = save;
    }
  }
  return Make(is_float ? TokenKind::kFloat : TokenKind::kInteger, start);
}

Token Lexer::LexString(size_t start) {
  ++pos_;  // opening quote
  size_t body = pos_;
  while (pos_ < buffer_.size()) {
    char c = buffer_[pos_];
    if (c == '"') {
      Token t{TokenKind::kString, buffer_.substr(body, pos_ - body), start};
      ++pos_;
      return t;
    }
    if (c == '\n') break;
    if (c == '\\') {
      ++pos_;
      if (pos_ >= buffer_.size()) break;
    }
    ++pos_;
  }
  return Token{TokenKind::kError, "unterminated string", start};
}

Token Lexer::LexIdentifierTail(TokenKind kind, size_t start, size_t skip) {
  pos_ += skip;
  size_t name = pos_;
  if (kind == TokenKind::kAtId && pos_ < buffer_.size() && buffer_[pos_] == '"') {
    Token s = LexString(pos_);
    if (s.kind == TokenKind::kError) return s;
    return Token{kind, s.text, start};
  }
  while (pos_ < buffer_.size() && IsIdChar(buffer_[pos_])) ++pos_;
  if (pos_ == name) return Token{TokenKind::kError, "an identifier after the sigil", start};
  return Token{kind, buffer_.substr(name, pos_ - name), start};
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  size_t start = pos_;
  if (pos_ >= buffer_.size()) return Token{TokenKind::kEof, "", start};
  char c = buffer_[pos_];
  auto single = [&](TokenKind kind) {
    ++pos_;
    return Make(kind, start);
  };
  switch (c) {
    case '(': return single(TokenKind::kLParen);
    case ')': return single(TokenKind::kRParen);
    case '[': return single(TokenKind::kLSquare);
    case ']': return single(TokenKind::kRSquare);
    case '{': return single(TokenKind::kLBrace);
    case '}': return single(TokenKind::kRBrace);
    case '<': return single(TokenKind::kLess);
    case '>': return single(TokenKind::kGreater);
    case ',': return single(TokenKind::kComma);
    case ':': return single(TokenKind::kColon);
    case '=': return single(TokenKind::kEqual);
    case '?': return single(TokenKind::kQuestion);
    case '*': return single(TokenKind::kStar);
    case '+': return single(TokenKind::kPlus);
    case '|': return single(TokenKind::kVerticalBar);
    case '"': return LexString(start);
    case '%': {
      // Value names allow '-' only inside; a result index (#N) is read separately.
      pos_ += 1;
      size_t name = pos_;
      while (pos_ < buffer_.size() && (IsIdChar(buffer_[pos_]))) ++pos_;
      if (pos_ == name) return Token{TokenKind::kError, "a value name after '%'", start};
      return Make(TokenKind::kPercentId, start);
    }
    case '@': return LexIdentifierTail(TokenKind::kAtId, start, 1);
    case '^': return LexIdentifierTail(TokenKind::kCaretId, start, 1);
    case '#': return LexIdentifierTail(TokenKind::kHashId, start, 1);
    case '!': return LexIdentifierTail(TokenKind::kBangId, start, 1);
    case '-':
      if (pos_ + 1 < buffer_.size() && buffer_[pos_ + 1] == '>') {
        pos_ += 2;
        return Make(TokenKind::kArrow, start);
      }
      if (pos_ + 1 < buffer_.size() && IsDigit(buffer_[pos_ + 1])) return LexNumber(start);
      return single(TokenKind::kMinus);
    default:
      break;
  }
  if (IsDigit(c)) return LexNumber(start);
  if (IsIdStart(c)) {
    while (pos_ < buffer_.size() && IsBareIdChar(buffer_[pos_])) ++pos_;
    return Make(TokenKind::kBareId, start);
  }
  ++pos_;
  return Token{TokenKind::kError, "an unexpected character", start};
}

bool Lexer::LexDimensions(std::vector<int64_t>* dims, size_t* error_offset) {
  SkipSpaceAndComments();
  while (pos_ < buffer_.size()) {
    size_t start = pos_;
    int64_t value = 0;
    if (buffer_[pos_] == '?') {
      value = -1;
      ++pos_;
    } else if (IsDigit(buffer_[pos_])) {
      while (pos_ < buffer_.size() && IsDigit(buffer_[pos_])) {
        if (value > (int64_t{1} << 50)) {
          *error_offset = start;
          return false;
        }
        value = value * 10 + (buffer_[pos_] - '0');
        ++pos_;
      }
    } else {
      return true;
    }
    if (pos_ < buffer_.size() && buffer_[pos_] == 'x') {
      ++pos_;
      dims->push_back(value);
    } else {
      pos_ = start;  // a number not followed by 'x' is not a dimension
      return true;
    }
  }
  return true;
}

bool Lexer::LexResultIndex(int64_t* index) {
  if (pos_ + 1 >= buffer_.size() || buffer_[pos_] != '#' || !IsDigit(buffer_[pos_ + 1])) {
    return false;
  }
  ++pos_;
  int64_t value = 0;
  while (pos_ < buffer_.size() && IsDigit(buffer_[pos_])) {
    if (value < (int64_t{1} << 40)) value = value * 10 + (buffer_[pos_] - '0');
    ++pos_;
  }
  *index = value;
  return true;
}

size_t Lexer::SkipAngleBody(size_t offset) const {
  std::vector<char> open;  // the closing bracket each open one needs
  size_t i = offset;
  while (i < buffer_.size()) {
    char c = buffer_[i];
    if (c == '"') {
      ++i;
      while (i < buffer_.size() && buffer_[i] != '"') {
        if (buffer_[i] == '\\') ++i;
        ++i;
      }
      if (i >= buffer_.size()) return std::string_view::npos;
    } else if (c == '<' || c == '(' || c == '[' || c == '{') {
      open.push_back(c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == '>' && i > 0 && buffer_[i - 1] == '-') {
      // "->" inside a body is an arrow, not a closing bracket.
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (open.empty() || open.back() != c) return std::string_view::npos;
      open.pop_back();
      if (open.empty()) return i + 1;
    }
    ++i;
  }
  return std::string_view::npos;
}

std::string Lexer::LineColumn(size_t offset) const {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < buffer_.size(); ++i) {
    if (buffer_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

bool UnescapeString(std::string_view body, std::string* out) {
  out->clear();
  out->reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    // The run up to the next escape in one piece.
    const size_t escape = std::min(body.find('\\', i), body.size());
    out->append(body.data() + i, escape - i);
    i = escape;
    if (i == body.size()) break;
    if (++i >= body.size()) return false;
    char e = body[i];
    switch (e) {
      case '"': case '\\': out->push_back(e); break;
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      default: {
        if (i + 1 >= body.size()) return false;
        int hi = HexValue(e), lo = HexValue(body[i + 1]);
        if (hi < 0 || lo < 0) return false;
        out->push_back(static_cast<char>(hi * 16 + lo));
        ++i;
      }
    }
  }
  return true;
}

}  // namespace stablert::stablehlo
