// Module structure, types, attributes and locations of the text reader (text_parser.h).
// Op forms are in text_ops.cc.
#include "stablehlo/text_parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ir/float_format.h"
#include "ir/printer.h"
#include "stablehlo/attr_util.h"
#include "stablehlo/encoding.h"
#include "stablehlo/entry_decoder.h"
#include "stablehlo/sdy_text.h"
#include "stablehlo/text_parser_impl.h"

namespace stablert::stablehlo {
namespace text {
namespace {

const char* KindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof: return "end of input";
    case TokenKind::kError: return "an invalid token";
    case TokenKind::kBareId: return "an identifier";
    case TokenKind::kPercentId: return "a value name";
    case TokenKind::kAtId: return "a symbol name";
    case TokenKind::kCaretId: return "a block name";
    case TokenKind::kHashId: return "an attribute alias";
    case TokenKind::kBangId: return "a type alias";
    case TokenKind::kInteger: return "an integer";
    case TokenKind::kFloat: return "a float";
    case TokenKind::kString: return "a string";
    case TokenKind::kLParen: return "'('";
    case TokenKind::kRParen: return "')'";
    case TokenKind::kLSquare: return "'['";
    case TokenKind::kRSquare: return "']'";
    case TokenKind::kLBrace: return "'{'";
    case TokenKind::kRBrace: return "'}'";
    case TokenKind::kLess: return "'<'";
    case TokenKind::kGreater: return "'>'";
    case TokenKind::kComma: return "','";
    case TokenKind::kColon: return "':'";
    case TokenKind::kEqual: return "'='";
    case TokenKind::kArrow: return "'->'";
    case TokenKind::kQuestion: return "'?'";
    case TokenKind::kStar: return "'*'";
    case TokenKind::kPlus: return "'+'";
    case TokenKind::kMinus: return "'-'";
    case TokenKind::kVerticalBar: return "'|'";
  }
  return "a token";
}

// Element type names as StableHLO prints them.
std::optional<DType> ElementTypeByName(std::string_view name) {
  static const auto* table = [] {
    auto* t = new std::vector<std::pair<std::string_view, DType>>();
    for (int i = 0; i < 64; ++i) {
      std::optional<DType> d = DTypeFromOrdinal(i);
      if (!d || *d == DType::kInvalid || *d == DType::kToken) continue;
      std::string_view n = DTypeName(*d);
      if (!n.empty() && n.find('<') == std::string_view::npos) t->emplace_back(n, *d);
    }
    return t;
  }();
  // Most programs use a few element types: the last one found is tried first.
  thread_local std::pair<std::string_view, DType> last{"f32", DType::kF32};
  if (name == last.first) return last.second;
  for (const auto& entry : *table) {
    if (entry.first == name) {
      last = entry;
      return entry.second;
    }
  }
  return std::nullopt;
}

// The characters of a plain tensor type's body: `4x?x3xf32`, `i1`, `f8E4M3FN`.
constexpr std::array<bool, 256> kPlainTypeChars = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (char c : {'?', '_', '.'}) t[static_cast<unsigned char>(c)] = true;
  return t;
}();
bool IsPlainTypeChar(char c) { return kPlainTypeChars[static_cast<unsigned char>(c)]; }

// N of a location alias named `locN` (no leading zeros, N < 2^22); npos otherwise.
size_t LocationAliasNumber(std::string_view name) {
  if (name.size() < 4 || name.size() > 10 || name.substr(0, 3) != "loc") return std::string_view::npos;
  if (name[3] == '0' && name.size() > 4) return std::string_view::npos;
  size_t n = 0;
  for (size_t i = 3; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::string_view::npos;
    n = n * 10 + static_cast<size_t>(name[i] - '0');
  }
  return n < (size_t{1} << 22) ? n : std::string_view::npos;
}

std::optional<DType> ComplexOf(DType element) {
  if (element == DType::kF32) return DType::kC64;
  if (element == DType::kF64) return DType::kC128;
  return std::nullopt;
}

// The bits of `value` rounded to the float format `dtype` (nearest, ties to even).
uint64_t DoubleToFloatBits(DType dtype, double value) {
  if (dtype == DType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &value, 8);
    return bits;
  }
  if (dtype == DType::kF32) {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  if (dtype == DType::kBF16) {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f)) return 0x7FC0;
    uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
    return (bits + rounding) >> 16;
  }
  if (dtype == DType::kF16) {
    float f = static_cast<float>(value);
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t mantissa = x & 0x7FFFFF;
    int exponent = static_cast<int>((x >> 23) & 0xFF);
    if (exponent == 0xFF) return sign | 0x7C00 | (mantissa ? 0x200 : 0);
    int e = exponent - 127 + 15;
    if (e >= 31) return sign | 0x7C00;
    if (e <= 0) {
      if (e < -10) return sign;
      mantissa |= 0x800000;
      int shift = 14 - e;
      uint32_t half = mantissa >> shift;
      uint32_t rest = mantissa & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (rest > halfway || (rest == halfway && (half & 1))) ++half;
      return sign | half;
    }
    uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
    return sign | half;
  }
  // Narrow formats (8 bits or fewer): the nearest of all patterns.
  const int width = DTypeBitWidth(dtype);
  if (width <= 0 || width > 8) return 0;
  uint64_t best = 0;
  double best_error = INFINITY;
  for (uint64_t bits = 0; bits < (uint64_t{1} << width); ++bits) {
    double v = ir::FloatBitsToDouble(dtype, bits);
    if (std::isnan(value)) {
      if (std::isnan(v)) return bits;
      continue;
    }
    if (std::isnan(v)) continue;
    double error = std::fabs(v - value);
    if (error < best_error || (error == best_error && (bits & 1) == 0 && std::signbit(v) == std::signbit(value))) {
      best = bits;
      best_error = error;
    }
  }
  return best;
}

void StoreBits(uint64_t bits, int bytes, std::vector<uint8_t>* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(bits >> (8 * i)));
}

bool ParseInt64(std::string_view text, int64_t* value) {
  bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  uint64_t v = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    if (text.size() > 16) return false;
    for (char c : text) {
      int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
      v = v * 16 + static_cast<uint64_t>(d);
    }
  } else {
    for (char c : text) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
  }
  *value = static_cast<int64_t>(negative ? uint64_t{0} - v : v);
  return true;
}

double ParseDouble(std::string_view text) {
  std::string s(text);
  return std::strtod(s.c_str(), nullptr);
}

}  // namespace

Parser::Parser(std::string_view text) : lex_(text), module_(std::make_unique<ir::Module>()) {}

//===--- Tokens and errors ------------------------------------------------------------===//

std::string Parser::Describe(const Token& token) const {
  if (token.kind == TokenKind::kError) return std::string(token.text);
  if (token.kind == TokenKind::kEof) return "end of input";
  std::string_view text = lex_.buffer().substr(token.offset, std::min<size_t>(
      32, std::max<size_t>(token.text.size() + (token.kind == TokenKind::kString ? 2 : 1), 1)));
  if (token.kind != TokenKind::kString) {
    size_t end = 0;
    while (end < text.size() && text[end] != '\n' && text[end] != ' ') ++end;
    text = text.substr(0, std::max<size_t>(end, 1));
  }
  return std::string(KindName(token.kind)) + " '" + std::string(text) + "'";
}

Status Parser::ErrorAt(size_t offset, std::string_view message) const {
  return InvalidArgument("MLIR text " + lex_.LineColumn(offset) + ": " + std::string(message));
}

Status Parser::UnimplementedAt(size_t offset, std::string_view message) const {
  return Unimplemented("MLIR text " + lex_.LineColumn(offset) + ": " + std::string(message));
}

Status Parser::ErrorExpected(std::string_view what) const {
  return ErrorAt(tok_.offset, "expected " + std::string(what) + ", found " + Describe(tok_));
}

Status Parser::ExpectKeyword(std::string_view word) {
  if (!ConsumeKeyword(word)) return ErrorExpected("'" + std::string(word) + "'");
  return OkStatus();
}

StatusOr<std::string> Parser::ParseString() {
  if (!Is(TokenKind::kString)) return ErrorExpected("a string");
  std::string out;
  if (!UnescapeString(tok_.text, &out)) return ErrorAt(tok_.offset, "malformed escape in string");
  Advance();
  return out;
}

StatusOr<int64_t> Parser::ParseInteger() {
  if (!Is(TokenKind::kInteger)) return ErrorExpected("an integer");
  int64_t value;
  if (!ParseInt64(tok_.text, &value)) return ErrorAt(tok_.offset, "integer out of range");
  Advance();
  return value;
}

StatusOr<std::vector<int64_t>> Parser::ParseIntList() {
  std::vector<int64_t> out;
  STABLERT_RETURN_IF_ERROR(ParseIntList(&out));
  return out;
}

Status Parser::ParseIntList(std::vector<int64_t>* out) {
  out->clear();
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  if (Consume(TokenKind::kRSquare)) return OkStatus();
  do {
    if (!Is(TokenKind::kInteger)) return ErrorExpected("an integer");
    int64_t v;
    if (!ParseInt64(tok_.text, &v)) return ErrorAt(tok_.offset, "integer out of range");
    Advance();
    out->push_back(v);
  } while (Consume(TokenKind::kComma));
  return Expect(TokenKind::kRSquare, "',' or ']'");
}

StatusOr<ir::Attribute> Parser::ParseSharedIntList() {
  STABLERT_RETURN_IF_ERROR(ParseIntList(&int_buffer_));
  return i64_lists_.Get(int_buffer_);
}

ir::Attribute I64ListTable::Get(const std::vector<int64_t>& values) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ values.size();
  for (int64_t v : values) h = (h ^ static_cast<uint64_t>(v)) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  if ((attrs_.size() + 1) * 2 > slots_.size()) Grow();
  size_t i = h & mask_;
  for (; slots_[i].index != 0; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.hash == h && s.size == values.size() &&
        std::equal(values.begin(), values.end(), keys_.begin() + s.offset)) {
      return attrs_[s.index - 1];
    }
  }
  slots_[i] = Slot{h, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(values.size()),
                   static_cast<uint32_t>(attrs_.size() + 1)};
  keys_.insert(keys_.end(), values.begin(), values.end());
  attrs_.push_back(I64Elements(values));
  return attrs_.back();
}

void I64ListTable::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.index == 0) continue;
    size_t i = s.hash & mask_;
    while (slots_[i].index != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

//===--- Types ------------------------------------------------------------------------===//

StatusOr<ParsedType> Parser::ParseType() {
  DepthGuard guard(this);
  if (guard.exceeded()) return ErrorAt(tok_.offset, "types nested too deeply");
  ParsedType out;
  size_t at = tok_.offset;
  if (Is(TokenKind::kLParen)) {
    out.kind = ParsedType::Kind::kFunction;
    STABLERT_RETURN_IF_ERROR(ParseFunctionType(&out.inputs, &out.outputs));
    return out;
  }
  if (Is(TokenKind::kBangId)) {
    std::string_view name = tok_.text;
    if (name == "stablehlo.token") {
      Advance();
      out.value = ir::Type::Token();
      return out;
    }
    auto memo = type_aliases_.find(name);
    if (memo != type_aliases_.end()) {
      Advance();
      return memo->second;
    }
    auto alias = alias_offsets_.find(lex_.buffer().substr(tok_.offset, name.size() + 1));
    if (alias == alias_offsets_.end()) {
      if (name.rfind("quant.", 0) == 0) return UnimplementedAt(at, "quantized types are not supported");
      return ErrorAt(at, "unknown type '!" + std::string(name) + "'");
    }
    for (std::string_view r : resolving_)
      if (r == name) return ErrorAt(at, "type alias '!" + std::string(name) + "' refers to itself");
    Token saved = tok_;
    size_t resume = lex_.position();
    resolving_.push_back(name);
    lex_.Reset(alias->second);
    Advance();
    StatusOr<ParsedType> type = ParseType();
    resolving_.pop_back();
    if (!type.ok()) return type.status();
    type_aliases_[name] = *type;
    lex_.Reset(resume);
    tok_ = saved;
    Advance();
    return type;
  }
  if (!Is(TokenKind::kBareId)) return ErrorExpected("a type");
  std::string_view word = tok_.text;
  if (word == "none") {
    Advance();
    out.kind = ParsedType::Kind::kNone;
    return out;
  }
  if (word == "tensor") {
    Advance();
    if (!Is(TokenKind::kLess)) return ErrorExpected("'<' after 'tensor'");
    std::vector<int64_t>& dims = dims_buffer_;
    dims.clear();
    size_t bad;
    if (lex_.position() < lex_.buffer().size() && lex_.buffer()[lex_.position()] == '*') {
      return UnimplementedAt(at, "unranked tensor types are not supported");
    }
    if (!lex_.LexDimensions(&dims, &bad)) return ErrorAt(bad, "tensor dimension is too large");
    for (int64_t d : dims)
      if (d < 0) return UnimplementedAt(at, "dynamic shapes ('?' dimensions) are not supported");
    Advance();
    STABLERT_ASSIGN_OR_RETURN(ParsedType element, ParseType());
    if (element.kind != ParsedType::Kind::kElement) {
      return ErrorAt(at, "expected an element type in the tensor type");
    }
    if (Consume(TokenKind::kComma)) {
      // An encoding: bounds of dynamic dimensions, or a sparsity layout.
      return UnimplementedAt(at, "tensor types with an encoding are not supported");
    }
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' to end the tensor type"));
    out.value = ir::Type::Tensor(element.element, Dims(dims.begin(), dims.end()));
    return out;
  }
  if (word == "tuple") {
    Advance();
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' after 'tuple'"));
    std::vector<ir::Type> elements;
    if (!Consume(TokenKind::kGreater)) {
      do {
        STABLERT_ASSIGN_OR_RETURN(ir::Type t, ParseValueType());
        elements.push_back(std::move(t));
      } while (Consume(TokenKind::kComma));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "',' or '>' in the tuple type"));
    }
    out.value = ir::Type::Tuple(std::move(elements));
    return out;
  }
  if (word == "complex") {
    Advance();
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' after 'complex'"));
    STABLERT_ASSIGN_OR_RETURN(ParsedType inner, ParseType());
    std::optional<DType> c;
    if (inner.kind == ParsedType::Kind::kElement) c = ComplexOf(inner.element);
    if (!c) return UnimplementedAt(at, "complex types other than complex<f32> and complex<f64>");
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' to end the complex type"));
    out.kind = ParsedType::Kind::kElement;
    out.element = *c;
    return out;
  }
  if (std::optional<DType> d = ElementTypeByName(word)) {
    Advance();
    out.kind = ParsedType::Kind::kElement;
    out.element = *d;
    return out;
  }
  if (word == "index") {
    // As the bytecode reader: index is 64-bit (layouts of custom calls use it).
    Advance();
    out.kind = ParsedType::Kind::kElement;
    out.element = DType::kS64;
    return out;
  }
  return ErrorExpected("a type");
}

StatusOr<ir::Type> Parser::ParseValueType() {
  STABLERT_ASSIGN_OR_RETURN(const ir::Type* type, ParseValueTypeRef());
  return *type;
}

StatusOr<const ir::Type*> Parser::ParseValueTypeRef() {
  if (tok_.kind == TokenKind::kBareId && tok_.text == "tensor") {
    // `tensor<` then only sizes, 'x', '?' and an element type name up to the first '>':
    // the text is the key. Anything else (nested '<', '!', spaces, comments) is parsed
    // without the cache.
    const std::string_view buffer = lex_.buffer();
    size_t i = lex_.position();
    if (i < buffer.size() && buffer[i] == '<') {
      ++i;
      while (i < buffer.size() && IsPlainTypeChar(buffer[i])) ++i;
      if (i < buffer.size() && buffer[i] == '>') {
        const size_t end = i + 1;
        const std::string_view key = buffer.substr(tok_.offset, end - tok_.offset);
        const uint64_t hash = TypeTable::Hash(key);
        if (const ir::Type* known = type_cache_.Find(key, hash)) {
          lex_.Reset(end);
          Advance();
          return known;
        }
        STABLERT_ASSIGN_OR_RETURN(ir::Type type, ParseValueTypeUncached());
        if (tok_.offset < end) return ErrorAt(tok_.offset, "expected '>' to end the tensor type");
        return type_cache_.Insert(key, hash, std::move(type));
      }
    }
  }
  STABLERT_ASSIGN_OR_RETURN(type_buffer_, ParseValueTypeUncached());
  return &type_buffer_;
}

StatusOr<ir::Type> Parser::ParseValueTypeUncached() {
  size_t at = tok_.offset;
  STABLERT_ASSIGN_OR_RETURN(ParsedType t, ParseType());
  if (t.kind == ParsedType::Kind::kElement) return ir::Type::Tensor(t.element, {});
  if (t.kind != ParsedType::Kind::kValue) return ErrorAt(at, "expected a tensor, token or tuple type");
  return std::move(t.value);
}

Status Parser::ParseFunctionType(std::vector<ir::Type>* inputs, std::vector<ir::Type>* outputs) {
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
  if (!Consume(TokenKind::kRParen)) {
    do {
      STABLERT_ASSIGN_OR_RETURN(const ir::Type* t, ParseValueTypeRef());
      if (inputs) inputs->push_back(*t);
    } while (Consume(TokenKind::kComma));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the type list"));
  }
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' in the function type"));
  if (Consume(TokenKind::kLParen)) {
    if (Consume(TokenKind::kRParen)) return OkStatus();
    do {
      STABLERT_ASSIGN_OR_RETURN(ir::Type t, ParseValueType());
      outputs->push_back(std::move(t));
    } while (Consume(TokenKind::kComma));
    return Expect(TokenKind::kRParen, "',' or ')' in the result types");
  }
  STABLERT_ASSIGN_OR_RETURN(ir::Type t, ParseValueType());
  outputs->push_back(std::move(t));
  return OkStatus();
}

//===--- Attributes -------------------------------------------------------------------===//

namespace {

// Reads the elements of a dense literal of `type` (the lexer stands after `dense<`) into
// MLIR's raw data layout: one element (a splat) or all, each of DTypeByteSize bytes.
class DenseLiteralReader {
 public:
  DenseLiteralReader(Parser& p, const ir::Type& type) : p_(p), type_(type) {
    bytes_ = DTypeByteSize(type.dtype);
    complex_ = IsComplex(type.dtype);
    part_ = complex_ ? (type.dtype == DType::kC64 ? DType::kF32 : DType::kF64) : type.dtype;
  }

  Status Read(std::vector<uint8_t>* out, int64_t expected, bool* splat) {
    out_ = out;
    if (p_.Is(TokenKind::kLSquare)) {
      *splat = false;
      out->reserve(static_cast<size_t>(expected) * bytes_);
      STABLERT_RETURN_IF_ERROR(List(0));
      return OkStatus();
    }
    *splat = true;
    return Element();
  }

 private:
  Status List(size_t dim) {
    size_t at = p_.tok_.offset;
    if (dim >= type_.dims.size()) return p_.ErrorAt(at, "dense literal is nested deeper than its type's rank");
    STABLERT_RETURN_IF_ERROR(p_.Expect(TokenKind::kLSquare, "'['"));
    int64_t count = 0;
    if (!p_.Is(TokenKind::kRSquare)) {
      do {
        if (p_.Is(TokenKind::kLSquare)) {
          STABLERT_RETURN_IF_ERROR(List(dim + 1));
        } else {
          if (dim + 1 != type_.dims.size()) return p_.ErrorExpected("'[' (a nested list)");
          STABLERT_RETURN_IF_ERROR(Element());
        }
        ++count;
      } while (p_.Consume(TokenKind::kComma));
    }
    STABLERT_RETURN_IF_ERROR(p_.Expect(TokenKind::kRSquare, "',' or ']' in the dense literal"));
    if (count != type_.dims[dim]) {
      return p_.ErrorAt(at, "dense literal has " + std::to_string(count) + " elements in dimension " +
                                std::to_string(dim) + ", the type has " + std::to_string(type_.dims[dim]));
    }
    return OkStatus();
  }

  Status Scalar(DType dtype) {
    const Token& t = p_.tok_;
    int bytes = complex_ ? bytes_ / 2 : bytes_;
    if (dtype == DType::kPred) {
      if (p_.IsKeyword("true") || p_.IsKeyword("false")) {
        out_->push_back(p_.IsKeyword("true") ? 1 : 0);
        p_.Advance();
        return OkStatus();
      }
      if (t.kind == TokenKind::kInteger && (t.text == "0" || t.text == "1")) {
        out_->push_back(t.text == "1" ? 1 : 0);
        p_.Advance();
        return OkStatus();
      }
      return p_.ErrorExpected("true or false");
    }
    if (IsFloat(dtype)) {
      if (t.kind == TokenKind::kFloat) {
        StoreBits(DoubleToFloatBits(dtype, ParseDouble(t.text)), bytes, out_);
      } else if (t.kind == TokenKind::kInteger) {
        int64_t v;
        if (!ParseInt64(t.text, &v)) return p_.ErrorAt(t.offset, "integer out of range");
        bool hex = t.text.find_first_of("xX") != std::string_view::npos;
        StoreBits(hex ? static_cast<uint64_t>(v) : DoubleToFloatBits(dtype, static_cast<double>(v)), bytes,
                  out_);
      } else if (p_.IsKeyword("inf") || p_.IsKeyword("nan")) {
        StoreBits(DoubleToFloatBits(dtype, p_.IsKeyword("inf") ? INFINITY : NAN), bytes, out_);
      } else {
        return p_.ErrorExpected("a float literal");
      }
      p_.Advance();
      return OkStatus();
    }
    if (IsInteger(dtype)) {
      if (t.kind != TokenKind::kInteger) {
        if (p_.IsKeyword("true") || p_.IsKeyword("false")) {
          StoreBits(p_.IsKeyword("true") ? 1 : 0, bytes, out_);
          p_.Advance();
          return OkStatus();
        }
        return p_.ErrorExpected("an integer literal");
      }
      int64_t v;
      if (!ParseInt64(t.text, &v)) return p_.ErrorAt(t.offset, "integer out of range");
      StoreBits(static_cast<uint64_t>(v), bytes, out_);
      p_.Advance();
      return OkStatus();
    }
    return p_.UnimplementedAt(t.offset, "dense literals of element type " + std::string(DTypeName(dtype)));
  }

  Status Element() {
    if (complex_) {
      STABLERT_RETURN_IF_ERROR(p_.Expect(TokenKind::kLParen, "'(' (a complex literal)"));
      STABLERT_RETURN_IF_ERROR(Scalar(part_));
      STABLERT_RETURN_IF_ERROR(p_.Expect(TokenKind::kComma, "',' in the complex literal"));
      STABLERT_RETURN_IF_ERROR(Scalar(part_));
      return p_.Expect(TokenKind::kRParen, "')' to end the complex literal");
    }
    return Scalar(type_.dtype);
  }

  Parser& p_;
  const ir::Type& type_;
  int bytes_ = 0;
  bool complex_ = false;
  DType part_;
  std::vector<uint8_t>* out_ = nullptr;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// `dense<...> : type` with the lexer after `dense`.
static StatusOr<ir::Attribute> ParseDense(Parser& p) {
  size_t at = p.tok_.offset;
  if (!p.Is(TokenKind::kLess)) return p.ErrorExpected("'<' after 'dense'");
  // The literal's meaning depends on the type after it: find the type first.
  size_t end = p.lex_.SkipAngleBody(at);
  if (end == std::string_view::npos) return p.ErrorAt(at, "unterminated dense literal (expected '>')");
  p.lex_.Reset(end);
  p.Advance();
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and the type of the dense literal"));
  size_t type_at = p.tok_.offset;
  STABLERT_ASSIGN_OR_RETURN(ir::Type type, p.ParseValueType());
  if (!type.is_tensor()) return p.ErrorAt(type_at, "expected a tensor type for the dense literal");
  Token after = p.tok_;
  size_t resume = p.lex_.position();
  // Now the literal.
  p.lex_.Reset(at + 1);
  p.Advance();
  const int element_bytes = DTypeByteSize(type.dtype);
  StatusOr<int64_t> count_or = CheckedElementCount(type.dims);
  if (!count_or.ok() || element_bytes == 0) return p.ErrorAt(type_at, "invalid dense literal type");
  const int64_t count = *count_or;
  if (static_cast<uint64_t>(count) > (uint64_t{1} << 30) / static_cast<uint64_t>(element_bytes)) {
    return ResourceExhausted("MLIR text " + p.lex_.LineColumn(at) + ": constant of type " +
                             ir::TypeToString(type) + " exceeds the 1 GiB limit for inline constants");
  }
  std::vector<uint8_t> blob;
  if (p.Is(TokenKind::kGreater)) {
    if (count != 0) return p.ErrorAt(at, "empty dense literal for a type with elements");
  } else if (p.Is(TokenKind::kString)) {
    std::string_view hex = p.tok_.text;
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') || hex.size() % 2) {
      return p.ErrorAt(p.tok_.offset, "expected a hex string \"0x...\" in the dense literal");
    }
    blob.resize((hex.size() - 2) / 2);
    for (size_t i = 0; i < blob.size(); ++i) {
      int hi = HexDigit(hex[2 + 2 * i]), lo = HexDigit(hex[3 + 2 * i]);
      if (hi < 0 || lo < 0) return p.ErrorAt(p.tok_.offset, "invalid hex digit in the dense literal");
      blob[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    p.Advance();
  } else {
    DenseLiteralReader reader(p, type);
    bool splat = false;
    STABLERT_RETURN_IF_ERROR(reader.Read(&blob, count, &splat));
  }
  if (!p.Is(TokenKind::kGreater)) return p.ErrorExpected("'>' to end the dense literal");
  p.lex_.Reset(resume);
  p.tok_ = after;
  if (count == 0 && blob.empty()) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = type;
    return ir::Attribute(ir::Attribute::Elements(std::move(data)));
  }
  // (The position is named only on failure: LineColumn scans from the start.)
  std::string_view view(reinterpret_cast<const char*>(blob.data()), blob.size());
  Cursor cursor(view, 0, "dense literal");
  StatusOr<ir::Attribute::Elements> elements = DenseElementsFromBlob(cursor, type, view);
  if (!elements.ok()) {
    return p.ErrorAt(at, "dense literal does not match " + ir::TypeToString(type) + ": " +
                             std::string(elements.status().message()));
  }
  return ir::Attribute(std::move(elements).value());
}

// `array<T: v, ...>` with the lexer after `array`.
static StatusOr<ir::Attribute> ParseDenseArray(Parser& p) {
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<' after 'array'"));
  size_t at = p.tok_.offset;
  STABLERT_ASSIGN_OR_RETURN(ParsedType element, p.ParseType());
  if (element.kind != ParsedType::Kind::kElement) return p.ErrorAt(at, "expected an element type in array<...>");
  std::vector<uint8_t> blob;
  int64_t count = 0;
  ir::Type scalar = ir::Type::Tensor(element.element, {1});
  if (p.Consume(TokenKind::kColon)) {
    do {
      DenseLiteralReader reader(p, scalar);
      bool splat;
      STABLERT_RETURN_IF_ERROR(reader.Read(&blob, 1, &splat));
      ++count;
    } while (p.Consume(TokenKind::kComma));
  }
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "',' or '>' in array<...>"));
  ir::Type type = ir::Type::Tensor(element.element, {count});
  std::string where = "array literal";
  std::string_view view(reinterpret_cast<const char*>(blob.data()), blob.size());
  if (count == 0) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = type;
    return ir::Attribute(ir::Attribute::Elements(std::move(data)));
  }
  Cursor cursor(view, 0, where);
  STABLERT_ASSIGN_OR_RETURN(ir::Attribute::Elements elements, DenseElementsFromBlob(cursor, type, view));
  return ir::Attribute(std::move(elements));
}

namespace {

struct EnumKindName {
  std::string_view name;
  ir::EnumKind kind;
  int count;
};
constexpr EnumKindName kEnumKinds[] = {
    {"comparison_direction", ir::EnumKind::kComparisonDirection, 6},
    {"comparison_type", ir::EnumKind::kComparisonType, 5},
    {"custom_call_api_version", ir::EnumKind::kCustomCallApiVersion, 5},
    {"fft_type", ir::EnumKind::kFftType, 4},
    {"precision", ir::EnumKind::kPrecision, 3},
    {"rng_algorithm", ir::EnumKind::kRngAlgorithm, 3},
    {"rng_distribution", ir::EnumKind::kRngDistribution, 3},
    {"transpose", ir::EnumKind::kTranspose, 4},
    {"result_accuracy_mode", ir::EnumKind::kResultAccuracyMode, 3},
};

}  // namespace

// The value named `word` of enum `kind`; nullopt if none.
std::optional<ir::EnumValue> EnumByName(ir::EnumKind kind, std::string_view word) {
  for (const EnumKindName& k : kEnumKinds) {
    if (k.kind != kind) continue;
    for (int v = 0; v < k.count; ++v) {
      ir::EnumValue value{kind, v};
      if (ir::EnumValueName(value) == word) return value;
    }
  }
  return std::nullopt;
}

StatusOr<ir::Attribute> Parser::ParseSdyAttributeText(std::string_view prefix) {
  // The current token starts a `<...>` body (or prefix already holds the sigil and name).
  size_t at = tok_.offset;
  size_t end = lex_.SkipAngleBody(at);
  if (end == std::string_view::npos) return ErrorAt(at, "unterminated '<' in a Shardy attribute");
  std::string text = std::string(prefix) + std::string(lex_.buffer().substr(at, end - at));
  StatusOr<ir::Attribute> attr = ParseSdyText(text);
  if (!attr.ok()) return ErrorAt(at, "malformed Shardy attribute: " + std::string(attr.status().message()));
  lex_.Reset(end);
  Advance();
  return attr;
}

namespace {
// Field values of `#stablehlo.X<name = value, ...>` structs: integer lists, integers,
// booleans, enums and nested attributes.
}  // namespace

// `#stablehlo.name<...>` (the HashId token already consumed; `name` without dialect).
static StatusOr<ir::Attribute> ParseStablehloStruct(Parser& p, std::string_view name, size_t at) {
  if (name == "conv") {
    // Either `raw input_batch_dimension = 0, ...` or `[b, 0, 1, f]x[...]->[...]`.
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<'"));
    ir::Attribute::Dictionary fields;
    if (p.ConsumeKeyword("raw")) {
      do {
        if (!p.Is(TokenKind::kBareId)) return p.ErrorExpected("a convolution dimension field");
        std::string key(p.tok_.text);
        p.Advance();
        STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kEqual, "'='"));
        if (p.Is(TokenKind::kLSquare)) {
          STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> v, p.ParseIntList());
          fields.emplace_back(key, I64Elements(v));
        } else {
          STABLERT_ASSIGN_OR_RETURN(int64_t v, p.ParseInteger());
          fields.emplace_back(key, I64(v));
        }
      } while (p.Consume(TokenKind::kComma));
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "',' or '>'"));
      fields.emplace_back("#struct", ir::Attribute(std::string("conv")));
      return ir::Attribute(std::move(fields));
    }
    extern Status ParseConvDimensionsBody(Parser & p, ir::Attribute::Dictionary * fields);
    STABLERT_RETURN_IF_ERROR(ParseConvDimensionsBody(p, &fields));
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>' to end #stablehlo.conv"));
    fields.emplace_back("#struct", ir::Attribute(std::string("conv")));
    return ir::Attribute(std::move(fields));
  }
  if (name == "result_accuracy_mode" || name == "precision" || name == "comparison_direction" ||
      name == "comparison_type" || name == "fft_type" || name == "rng_algorithm" ||
      name == "rng_distribution" || name == "transpose") {
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<'"));
    ir::EnumKind kind = ir::EnumKind::kResultAccuracyMode;
    for (const EnumKindName& k : kEnumKinds)
      if (k.name == name) kind = k.kind;
    if (!p.Is(TokenKind::kBareId)) return p.ErrorExpected("an enum value");
    std::optional<ir::EnumValue> v = EnumByName(kind, p.tok_.text);
    if (!v) return p.ErrorExpected("a value of " + std::string(name));
    p.Advance();
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>'"));
    return ir::Attribute(*v);
  }
  // Structs with `key = value` fields.
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<'"));
  ir::Attribute::Dictionary fields;
  if (!p.Is(TokenKind::kGreater)) {
    do {
      if (!p.Is(TokenKind::kBareId)) return p.ErrorExpected("a field name of #stablehlo." + std::string(name));
      std::string key(p.tok_.text);
      p.Advance();
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kEqual, "'=' after the field name"));
      if (p.Is(TokenKind::kLSquare) && name != "dot_algorithm") {
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute v, p.ParseSharedIntList());
        fields.emplace_back(std::move(key), std::move(v));
      } else if (p.Is(TokenKind::kInteger)) {
        STABLERT_ASSIGN_OR_RETURN(int64_t v, p.ParseInteger());
        fields.emplace_back(key, I64(v));
      } else if (p.Is(TokenKind::kFloat)) {
        fields.emplace_back(key, ir::Attribute(ir::Attribute::Float{ParseDouble(p.tok_.text), DType::kF64}));
        p.Advance();
      } else if (p.IsKeyword("true") || p.IsKeyword("false")) {
        fields.emplace_back(key, ir::Attribute(p.IsKeyword("true")));
        p.Advance();
      } else if (p.Is(TokenKind::kBareId) && name == "result_accuracy") {
        return p.ErrorExpected("#stablehlo.result_accuracy_mode<...>");
      } else {
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute v, p.ParseAttribute());
        fields.emplace_back(key, std::move(v));
      }
    } while (p.Consume(TokenKind::kComma));
  }
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "',' or '>' to end #stablehlo." + std::string(name)));
  (void)at;
  if (name == "result_accuracy") {
    // As the bytecode decoder: {atol, rtol, ulps, mode}.
    ir::Attribute::Dictionary out{{"atol", ir::Attribute(ir::Attribute::Float{0.0, DType::kF64})},
                                  {"rtol", ir::Attribute(ir::Attribute::Float{0.0, DType::kF64})},
                                  {"ulps", I64(0)},
                                  {"mode", ir::Attribute(ir::EnumValue{ir::EnumKind::kResultAccuracyMode, 0})}};
    for (auto& [k, v] : fields) {
      for (auto& [ok, ov] : out) {
        if (ok != k) continue;
        if (const auto* i = v.get<ir::Attribute::Integer>(); i && k != "ulps") {
          ov = ir::Attribute(ir::Attribute::Float{static_cast<double>(i->value), DType::kF64});
        } else {
          ov = v;
        }
      }
    }
    return ir::Attribute(std::move(out));
  }
  if (name == "output_operand_alias") {
    ir::Attribute::Dictionary out{{"output_tuple_indices", I64Elements({})},
                                  {"operand_index", I64(0)},
                                  {"operand_tuple_indices", I64Elements({})}};
    for (auto& [k, v] : fields)
      for (auto& [ok, ov] : out)
        if (ok == k) ov = v;
    return ir::Attribute(std::move(out));
  }
  // gather, scatter, dot, channel_handle, dot_algorithm, type_extensions: the fields as
  // given; text_normalize.cc flattens them into the op.
  fields.emplace_back("#struct", ir::Attribute(std::string(name)));
  return ir::Attribute(std::move(fields));
}

// A Shardy factor name: 'i'..'z' for factors 0..17, then "z_1", "z_2", ...
static bool ReadFactor(std::string_view text, size_t* pos, int64_t* factor) {
  if (*pos >= text.size() || text[*pos] < 'i' || text[*pos] > 'z') return false;
  char c = text[(*pos)++];
  *factor = c - 'i';
  if (c == 'z' && *pos < text.size() && text[*pos] == '_') {
    size_t start = ++*pos;
    int64_t n = 0;
    while (*pos < text.size() && std::isdigit(static_cast<unsigned char>(text[*pos])) && n < (1 << 20)) {
      n = n * 10 + (text[(*pos)++] - '0');
    }
    if (*pos == start) return false;
    *factor = 17 + n;
  }
  return true;
}

// `#sdy.op_sharding_rule<([i, j])->([k], []) {i=3, j=3, k=3}, reduction={j}, custom>` (after
// the name) -> the dictionary the sdy bytecode decoder makes of it.
static StatusOr<ir::Attribute> ParseShardingRule(Parser& p) {
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<'"));
  auto mappings = [&](ir::Attribute::Array* out) -> Status {
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLParen, "'(' (tensor mappings)"));
    if (p.Consume(TokenKind::kRParen)) return OkStatus();
    do {
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLSquare, "'[' (a tensor mapping)"));
      ir::Attribute::Array dims;
      if (!p.Is(TokenKind::kRSquare)) {
        do {
          if (!p.Is(TokenKind::kBareId)) return p.ErrorExpected("factor names");
          std::vector<int64_t> factors;
          std::string_view text = p.tok_.text;
          size_t pos = 0;
          while (pos < text.size()) {
            int64_t f;
            if (!ReadFactor(text, &pos, &f)) return p.ErrorExpected("factor names (i, j, ..., z_1)");
            factors.push_back(f);
          }
          p.Advance();
          dims.push_back(I64Elements(factors));
        } while (p.Consume(TokenKind::kComma));
      }
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRSquare, "',' or ']' in the tensor mapping"));
      out->emplace_back(std::move(dims));
    } while (p.Consume(TokenKind::kComma));
    return p.Expect(TokenKind::kRParen, "',' or ')' after the tensor mappings");
  };
  ir::Attribute::Array operands, results;
  STABLERT_RETURN_IF_ERROR(mappings(&operands));
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kArrow, "'->'"));
  STABLERT_RETURN_IF_ERROR(mappings(&results));
  std::vector<int64_t> sizes;
  auto factor_set = [&](std::vector<int64_t>* out, bool with_sizes) -> Status {
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLBrace, "'{'"));
    if (p.Consume(TokenKind::kRBrace)) return OkStatus();
    do {
      if (!p.Is(TokenKind::kBareId)) return p.ErrorExpected("a factor name");
      size_t pos = 0;
      int64_t f;
      if (!ReadFactor(p.tok_.text, &pos, &f) || pos != p.tok_.text.size()) return p.ErrorExpected("a factor name");
      p.Advance();
      if (with_sizes) {
        STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kEqual, "'=' and the factor size"));
        STABLERT_ASSIGN_OR_RETURN(int64_t size, p.ParseInteger());
        if (f != static_cast<int64_t>(out->size())) return p.ErrorAt(p.tok_.offset, "factor sizes out of order");
        out->push_back(size);
      } else {
        out->push_back(f);
      }
    } while (p.Consume(TokenKind::kComma));
    return p.Expect(TokenKind::kRBrace, "',' or '}'");
  };
  STABLERT_RETURN_IF_ERROR(factor_set(&sizes, true));
  std::vector<int64_t> lists[4];
  static constexpr std::string_view kLists[] = {"reduction", "need_replication", "permutation",
                                                "blocked_propagation"};
  bool custom = false;
  while (p.Consume(TokenKind::kComma)) {
    if (p.ConsumeKeyword("custom")) {
      custom = true;
      continue;
    }
    bool known = false;
    for (int i = 0; i < 4 && !known; ++i) {
      if (p.IsKeyword(kLists[i])) {
        p.Advance();
        STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kEqual, "'='"));
        STABLERT_RETURN_IF_ERROR(factor_set(&lists[i], false));
        known = true;
      }
    }
    if (!known) return p.ErrorExpected("reduction, need_replication, permutation, blocked_propagation or custom");
  }
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>' to end #sdy.op_sharding_rule"));
  return ir::Attribute(ir::Attribute::Dictionary{
      {"factor_sizes", I64Elements(sizes)},
      {"operand_mappings", ir::Attribute(std::move(operands))},
      {"result_mappings", ir::Attribute(std::move(results))},
      {"reduction_factors", I64Elements(lists[0])},
      {"need_replication_factors", I64Elements(lists[1])},
      {"permutation_factors", I64Elements(lists[2])},
      {"blocked_propagation_factors", I64Elements(lists[3])},
      {"is_custom_rule", ir::Attribute(custom)}});
}

StatusOr<ir::Attribute> Parser::ParseAttribute() {
  DepthGuard guard(this);
  if (guard.exceeded()) return ErrorAt(tok_.offset, "attributes nested too deeply");
  size_t at = tok_.offset;
  switch (tok_.kind) {
    case TokenKind::kInteger:
    case TokenKind::kFloat: {
      Token number = tok_;
      Advance();
      DType dtype = number.kind == TokenKind::kInteger ? DType::kS64 : DType::kF64;
      if (Consume(TokenKind::kColon)) {
        size_t type_at = tok_.offset;
        STABLERT_ASSIGN_OR_RETURN(ParsedType t, ParseType());
        if (t.kind != ParsedType::Kind::kElement) return ErrorAt(type_at, "expected a scalar type");
        dtype = t.element;
      }
      if (dtype == DType::kPred) {
        int64_t v = 0;
        if (number.kind != TokenKind::kInteger || !ParseInt64(number.text, &v)) {
          return ErrorAt(number.offset, "expected an integer for an i1 attribute");
        }
        return ir::Attribute(v != 0);
      }
      if (IsFloat(dtype)) {
        double v;
        if (number.kind == TokenKind::kInteger) {
          int64_t i;
          if (!ParseInt64(number.text, &i)) return ErrorAt(number.offset, "integer out of range");
          bool hex = number.text.find_first_of("xX") != std::string_view::npos;
          v = hex ? ir::FloatBitsToDouble(dtype, static_cast<uint64_t>(i)) : static_cast<double>(i);
        } else {
          v = ParseDouble(number.text);
          v = ir::FloatBitsToDouble(dtype, DoubleToFloatBits(dtype, v));
        }
        return ir::Attribute(ir::Attribute::Float{v, dtype});
      }
      if (!IsInteger(dtype)) return ErrorAt(number.offset, "expected an integer or float type");
      if (number.kind != TokenKind::kInteger) return ErrorAt(number.offset, "expected an integer literal");
      int64_t v;
      if (!ParseInt64(number.text, &v)) return ErrorAt(number.offset, "integer out of range");
      int width = DTypeBitWidth(dtype);
      if (width < 64) {
        uint64_t bits = static_cast<uint64_t>(v) & ((uint64_t{1} << width) - 1);
        v = DTypeKindOf(dtype) == DTypeKind::kSigned ? SignExtend(bits, width) : static_cast<int64_t>(bits);
      }
      return ir::Attribute(ir::Attribute::Integer{v, dtype});
    }
    case TokenKind::kString: {
      STABLERT_ASSIGN_OR_RETURN(std::string s, ParseString());
      if (Consume(TokenKind::kColon)) STABLERT_RETURN_IF_ERROR(ParseType().status());
      return ir::Attribute(std::move(s));
    }
    case TokenKind::kAtId: {
      std::string name(tok_.text);
      Advance();
      while (Is(TokenKind::kColon) && lex_.position() < lex_.buffer().size() &&
             lex_.buffer()[lex_.position()] == ':') {
        Advance();
        Advance();
        if (!Is(TokenKind::kAtId)) return ErrorExpected("a nested symbol name");
        name += "::" + std::string(tok_.text);
        Advance();
      }
      return ir::Attribute(ir::Attribute::Symbol{std::move(name)});
    }
    case TokenKind::kLSquare: {
      Advance();
      ir::Attribute::Array array;
      if (!Consume(TokenKind::kRSquare)) {
        do {
          STABLERT_ASSIGN_OR_RETURN(ir::Attribute a, ParseAttribute());
          array.push_back(std::move(a));
        } while (Consume(TokenKind::kComma));
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the array"));
      }
      return ir::Attribute(std::move(array));
    }
    case TokenKind::kLBrace: {
      ir::Attribute::Dictionary dict;
      STABLERT_RETURN_IF_ERROR(ParseDictionary(&dict));
      return ir::Attribute(std::move(dict));
    }
    case TokenKind::kHashId: {
      std::string_view name = tok_.text;
      size_t after = lex_.position();
      bool has_body = after < lex_.buffer().size() && lex_.buffer()[after] == '<';
      if (name == "sdy.op_sharding_rule" && has_body) {
        Advance();
        return ParseShardingRule(*this);
      }
      if (name.rfind("sdy", 0) == 0 && (name.size() == 3 || name[3] == '.')) {
        if (!has_body) break;
        std::string prefix = "#" + std::string(name);
        Advance();
        return ParseSdyAttributeText(prefix);
      }
      if (name == "stablehlo" && has_body) {
        Advance();
        Advance();  // '<'
        if (!Is(TokenKind::kBareId)) return ErrorExpected("an enum kind after '#stablehlo<'");
        std::string_view kind_name = tok_.text;
        const EnumKindName* kind = nullptr;
        for (const EnumKindName& k : kEnumKinds)
          if (k.name == kind_name) kind = &k;
        if (!kind) return ErrorAt(tok_.offset, "unknown StableHLO enum '" + std::string(kind_name) + "'");
        Advance();
        if (!Is(TokenKind::kBareId)) return ErrorExpected("a value of " + std::string(kind_name));
        std::optional<ir::EnumValue> v = EnumByName(kind->kind, tok_.text);
        if (!v) return ErrorExpected("a value of " + std::string(kind_name));
        Advance();
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
        return ir::Attribute(*v);
      }
      if (name.rfind("stablehlo.", 0) == 0 && has_body) {
        Advance();
        return ParseStablehloStruct(*this, name.substr(10), at);
      }
      if (!has_body) {
        // An alias.
        std::string_view key = lex_.buffer().substr(tok_.offset, name.size() + 1);
        auto memo = attr_aliases_.find(key);
        if (memo != attr_aliases_.end()) {
          Advance();
          return memo->second;
        }
        const size_t offset = AliasOffset(key, LocationAliasNumber(key.substr(1)));
        if (offset == std::string_view::npos) {
          return ErrorAt(at, "undefined attribute alias '" + std::string(key) + "'");
        }
        for (std::string_view r : resolving_)
          if (r == key) return ErrorAt(at, "attribute alias '" + std::string(key) + "' refers to itself");
        Token saved = tok_;
        size_t resume = lex_.position();
        resolving_.push_back(key);
        lex_.Reset(offset);
        Advance();
        StatusOr<ir::Attribute> value = ParseAttribute();
        resolving_.pop_back();
        if (!value.ok()) return value.status();
        attr_aliases_[key] = *value;
        lex_.Reset(resume);
        tok_ = saved;
        Advance();
        return value;
      }
      // Another dialect's attribute: kept as text.
      size_t end = lex_.SkipAngleBody(after);
      if (end == std::string_view::npos) return ErrorAt(at, "unterminated '<' in an attribute");
      std::string text(lex_.buffer().substr(at, end - at));
      std::string dialect(name.substr(0, name.find('.')));
      lex_.Reset(end);
      Advance();
      return ir::Attribute(ir::OpaqueValue{std::move(dialect), std::move(text)});
    }
    case TokenKind::kBareId: {
      std::string_view word = tok_.text;
      if (word == "true" || word == "false") {
        Advance();
        return ir::Attribute(word == "true");
      }
      if (word == "unit") {
        Advance();
        return ir::Attribute();
      }
      if (word == "dense") {
        Advance();
        return ParseDense(*this);
      }
      if (word == "array") {
        Advance();
        return ParseDenseArray(*this);
      }
      if (word == "dense_resource") return UnimplementedAt(at, "dense_resource constants are not supported");
      if (word == "sparse" || word == "affine_map" || word == "strided") {
        return UnimplementedAt(at, "'" + std::string(word) + "' attributes are not supported");
      }
      if (word == "loc") {
        STABLERT_ASSIGN_OR_RETURN(ir::LocationId id, ParseOptionalLocation());
        return ir::Attribute(ir::OpaqueValue{"builtin", "loc(" + module_->locations[id].ToString() + ")"});
      }
      break;
    }
    default:
      break;
  }
  if (Is(TokenKind::kBareId) || Is(TokenKind::kBangId) || Is(TokenKind::kLParen)) {
    STABLERT_ASSIGN_OR_RETURN(ParsedType t, ParseType());
    switch (t.kind) {
      case ParsedType::Kind::kValue: return ir::Attribute(t.value);
      case ParsedType::Kind::kElement: return ir::Attribute(ir::Type::Tensor(t.element, {}));
      case ParsedType::Kind::kNone: return ir::Attribute();
      case ParsedType::Kind::kFunction: return ir::Attribute(ir::OpaqueValue{"builtin", "function type"});
    }
  }
  return ErrorExpected("an attribute");
}

Status Parser::ParseDictionary(ir::Attribute::Dictionary* dict) {
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
  if (Consume(TokenKind::kRBrace)) return OkStatus();
  do {
    std::string key;
    if (Is(TokenKind::kBareId)) {
      key = std::string(tok_.text);
      Advance();
    } else if (Is(TokenKind::kString)) {
      STABLERT_ASSIGN_OR_RETURN(key, ParseString());
    } else {
      return ErrorExpected("an attribute name");
    }
    if (Consume(TokenKind::kEqual)) {
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute value, ParseAttribute());
      dict->emplace_back(std::move(key), std::move(value));
    } else {
      dict->emplace_back(std::move(key), ir::Attribute());
    }
  } while (Consume(TokenKind::kComma));
  return Expect(TokenKind::kRBrace, "',' or '}' in the attribute dictionary");
}

//===--- Locations --------------------------------------------------------------------===//

// A location expression (without `loc(`): unknown, "name"(child), "file":l:c,
// callsite(a at b), fused[...], #alias. The result is `*scratch`, filled, or for an alias
// its memoized location; nested parts are read by pointer, so a resolved alias is not
// copied where a location only takes its fields.
static StatusOr<const ir::Location*> ParseLocationExpr(Parser& p, ir::Location* scratch) {
  DepthGuard guard(&p);
  if (guard.exceeded()) return p.ErrorAt(p.tok_.offset, "locations nested too deeply");
  ir::Location& out = *scratch;
  if (p.ConsumeKeyword("unknown")) return scratch;
  if (p.Is(TokenKind::kHashId)) return p.ResolveLocationAlias();
  if (p.Is(TokenKind::kString)) {
    const Token text = p.tok_;
    p.Advance();
    const bool file = p.Consume(TokenKind::kColon);
    if (!UnescapeString(text.text, file ? &out.file : &out.name)) {
      return p.ErrorAt(text.offset, "malformed escape in string");
    }
    if (file) {
      STABLERT_ASSIGN_OR_RETURN(int64_t line, p.ParseInteger());
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and a column"));
      STABLERT_ASSIGN_OR_RETURN(int64_t column, p.ParseInteger());
      if (p.ConsumeKeyword("to")) {
        if (p.Is(TokenKind::kInteger)) STABLERT_RETURN_IF_ERROR(p.ParseInteger().status());
        if (p.Consume(TokenKind::kColon)) STABLERT_RETURN_IF_ERROR(p.ParseInteger().status());
      }
      out.line = static_cast<int32_t>(line);
      out.column = static_cast<int32_t>(column);
      return scratch;
    }
    if (p.Consume(TokenKind::kLParen)) {
      ir::Location child_scratch;
      STABLERT_ASSIGN_OR_RETURN(const ir::Location* child, ParseLocationExpr(p, &child_scratch));
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "')' after the child location"));
      out.FillFrom(*child);
    }
    return scratch;
  }
  if (p.ConsumeKeyword("callsite")) {
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLParen, "'(' after 'callsite'"));
    ir::Location callee_scratch;
    STABLERT_ASSIGN_OR_RETURN(const ir::Location* callee, ParseLocationExpr(p, &callee_scratch));
    STABLERT_RETURN_IF_ERROR(p.ExpectKeyword("at"));
    ir::Location caller_scratch;
    STABLERT_ASSIGN_OR_RETURN(const ir::Location* caller, ParseLocationExpr(p, &caller_scratch));
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "')' to end the call site"));
    if (callee == &callee_scratch) {
      out = std::move(callee_scratch);
    } else {
      out = *callee;
    }
    out.FillFrom(*caller);
    return scratch;
  }
  if (p.ConsumeKeyword("fused")) {
    if (p.Is(TokenKind::kLess)) {
      size_t end = p.lex_.SkipAngleBody(p.tok_.offset);
      if (end == std::string_view::npos) return p.ErrorAt(p.tok_.offset, "unterminated fused location metadata");
      p.lex_.Reset(end);
      p.Advance();
    }
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLSquare, "'[' after 'fused'"));
    if (!p.Consume(TokenKind::kRSquare)) {
      do {
        ir::Location part_scratch;
        STABLERT_ASSIGN_OR_RETURN(const ir::Location* part, ParseLocationExpr(p, &part_scratch));
        out.FillFrom(*part);
      } while (p.Consume(TokenKind::kComma));
      STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRSquare, "',' or ']' in the fused location"));
    }
    return scratch;
  }
  return p.ErrorExpected("a location");
}

size_t Parser::AliasOffset(std::string_view key, size_t number) const {
  if (number != std::string_view::npos) {
    return number < numbered_alias_offsets_.size() && numbered_alias_offsets_[number] != 0
               ? numbered_alias_offsets_[number] - 1
               : std::string_view::npos;
  }
  auto alias = alias_offsets_.find(key);
  return alias == alias_offsets_.end() ? std::string_view::npos : alias->second;
}

StatusOr<const ir::Location*> Parser::ResolveLocationAlias() {
  const size_t at = tok_.offset;
  const std::string_view key = lex_.buffer().substr(at, tok_.text.size() + 1);
  const size_t number = LocationAliasNumber(tok_.text);
  if (number != std::string_view::npos) {
    if (number < numbered_loc_aliases_.size() && numbered_loc_aliases_[number] != 0) {
      Advance();
      return &loc_alias_store_[numbered_loc_aliases_[number] - 1];
    }
  } else if (auto memo = loc_aliases_.find(key); memo != loc_aliases_.end()) {
    Advance();
    return memo->second;
  }
  const size_t offset = AliasOffset(key, number);
  if (offset == std::string_view::npos) return ErrorAt(at, "undefined location alias '" + std::string(key) + "'");
  for (std::string_view r : resolving_)
    if (r == key) return ErrorAt(at, "location alias '" + std::string(key) + "' refers to itself");
  Token saved = tok_;
  size_t resume = lex_.position();
  resolving_.push_back(key);
  lex_.Reset(offset);
  Advance();
  ir::Location scratch;
  Status status = ExpectKeyword("loc");
  if (status.ok()) status = Expect(TokenKind::kLParen, "'(' after 'loc'");
  StatusOr<const ir::Location*> loc = status.ok() ? ParseLocationExpr(*this, &scratch) : StatusOr<const ir::Location*>(status);
  if (loc.ok()) {
    Status close = Expect(TokenKind::kRParen, "')' to end the location");
    if (!close.ok()) loc = close;
  }
  resolving_.pop_back();
  if (!loc.ok()) return loc.status();
  if (*loc == &scratch) {
    loc_alias_store_.push_back(std::move(scratch));
  } else {
    loc_alias_store_.push_back(**loc);
  }
  const ir::Location* stored = &loc_alias_store_.back();
  if (number != std::string_view::npos) {
    if (number >= numbered_loc_aliases_.size()) numbered_loc_aliases_.resize(number + 1, 0);
    numbered_loc_aliases_[number] = static_cast<uint32_t>(loc_alias_store_.size());
  } else {
    loc_aliases_.emplace(key, stored);
  }
  lex_.Reset(resume);
  tok_ = saved;
  Advance();
  return stored;
}

StatusOr<ir::LocationId> Parser::ParseOptionalLocation() {
  if (!IsKeyword("loc")) return ir::LocationId{0};
  {
    // `loc(#locN)` of an alias already resolved: read straight from the text.
    const std::string_view buffer = lex_.buffer();
    size_t i = lex_.position();
    if (buffer.substr(i, 5) == "(#loc") {
      i += 5;
      const size_t digits = i;
      size_t n = 0;
      while (i < buffer.size() && i - digits < 7 && buffer[i] >= '0' && buffer[i] <= '9')
        n = n * 10 + static_cast<size_t>(buffer[i++] - '0');
      if (i > digits && i < buffer.size() && buffer[i] == ')' && (buffer[digits] != '0' || i == digits + 1) &&
          n < numbered_location_ids_.size() && numbered_location_ids_[n] != 0) {
        lex_.Reset(i + 1);
        Advance();
        return numbered_location_ids_[n] - 1;
      }
    }
  }
  Advance();
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after 'loc'"));
  // `loc(#alias)`, the common case, by alias.
  std::string_view alias;
  size_t number = std::string_view::npos;
  if (Is(TokenKind::kHashId)) {
    alias = lex_.buffer().substr(tok_.offset, tok_.text.size() + 1);
    number = LocationAliasNumber(tok_.text);
    if (number < numbered_location_ids_.size() && numbered_location_ids_[number] != 0) {
      const ir::LocationId id = numbered_location_ids_[number] - 1;
      Advance();
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' to end the location"));
      return id;
    }
    if (number == std::string_view::npos) {
      auto known = alias_location_ids_.find(alias);
      if (known != alias_location_ids_.end()) {
        Advance();
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' to end the location"));
        return known->second;
      }
    }
  }
  ir::Location scratch;
  STABLERT_ASSIGN_OR_RETURN(const ir::Location* loc, ParseLocationExpr(*this, &scratch));
  if (!Is(TokenKind::kRParen)) alias = {};
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' to end the location"));
  const ir::LocationId id = AddLocation(*loc);
  if (!alias.empty()) {
    if (number != std::string_view::npos) {
      if (number >= numbered_location_ids_.size()) numbered_location_ids_.resize(number + 1, 0);
      numbered_location_ids_[number] = id + 1;
    } else {
      alias_location_ids_.emplace(alias, id);
    }
  }
  return id;
}

ir::LocationId Parser::AddLocation(const ir::Location& loc) {
  if (loc.file.empty() && loc.name.empty()) return ir::LocationId{0};
  const std::hash<std::string_view> hash_text;
  uint64_t h = hash_text(loc.file) * 0x9E3779B97F4A7C15ull;
  h = (h ^ hash_text(loc.name)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (static_cast<uint64_t>(static_cast<uint32_t>(loc.line)) << 32 | static_cast<uint32_t>(loc.column))) *
      0x94D049BB133111EBull;
  h ^= h >> 31;
  if ((location_count_ + 1) * 2 > location_slots_.size()) {
    std::vector<LocationSlot> old = std::move(location_slots_);
    location_slots_.assign(old.empty() ? 256 : old.size() * 2, LocationSlot{});
    const size_t mask = location_slots_.size() - 1;
    for (const LocationSlot& s : old) {
      if (s.id_plus_one == 0) continue;
      size_t i = s.hash & mask;
      while (location_slots_[i].id_plus_one != 0) i = (i + 1) & mask;
      location_slots_[i] = s;
    }
  }
  const size_t mask = location_slots_.size() - 1;
  size_t i = h & mask;
  for (; location_slots_[i].id_plus_one != 0; i = (i + 1) & mask) {
    if (location_slots_[i].hash != h) continue;
    const ir::LocationId id = location_slots_[i].id_plus_one - 1;
    const ir::Location& known = module_->locations[id];
    if (known.line == loc.line && known.column == loc.column && known.file == loc.file && known.name == loc.name) {
      return id;
    }
  }
  const auto id = static_cast<ir::LocationId>(module_->locations.size());
  module_->locations.push_back(loc);
  location_slots_[i] = LocationSlot{h, id + 1};
  ++location_count_;
  return id;
}

//===--- Module -----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<ir::Module>> Parser::Run() {
  // Alias definitions start a line with '#' or '!' at the top level; they may follow
  // their uses (MLIR prints location aliases at the end).
  std::string_view buffer = lex_.buffer();
  size_t lines = 0;
  for (size_t i = 0; i < buffer.size(); ++lines) {
    if (buffer[i] == '#' || buffer[i] == '!') {
      Lexer scan(buffer);
      scan.Reset(i);
      Token name = scan.Next();
      Token eq = scan.Next();
      if ((name.kind == TokenKind::kHashId || name.kind == TokenKind::kBangId) && eq.kind == TokenKind::kEqual) {
        std::string_view key = buffer.substr(name.offset, name.text.size() + 1);
        const size_t number =
            name.kind == TokenKind::kHashId ? LocationAliasNumber(name.text) : std::string_view::npos;
        bool fresh;
        if (number != std::string_view::npos) {
          if (number >= numbered_alias_offsets_.size()) {
            numbered_alias_offsets_.resize(std::max(number + 1, numbered_alias_offsets_.size() * 2), 0);
          }
          fresh = numbered_alias_offsets_[number] == 0;
          numbered_alias_offsets_[number] = scan.position() + 1;
        } else {
          fresh = alias_offsets_.emplace(key, scan.position()).second;
        }
        if (!fresh) return ErrorAt(name.offset, "alias '" + std::string(key) + "' is defined twice");
      }
    }
    size_t first = i;
    while (first < buffer.size() && first - i < 16 && buffer[first] == ' ') ++first;
    if (buffer.substr(first, 10) == "func.func ") function_lines_.emplace_back(first, lines);
    size_t newline = buffer.find('\n', i);
    if (newline == std::string_view::npos) break;
    i = newline + 1;
  }
  line_count_ = lines + 1;
  Advance();
  // About one value per line in printed programs.
  module_->value_types.reserve(lines + lines / 4);
  PushScope();
  bool saw_module = false;
  while (!Is(TokenKind::kEof)) {
    if ((Is(TokenKind::kHashId) || Is(TokenKind::kBangId))) {
      // An alias definition: skip its line.
      size_t newline = buffer.find('\n', tok_.offset);
      lex_.Reset(newline == std::string_view::npos ? buffer.size() : newline);
      Advance();
      continue;
    }
    if (IsKeyword("module")) {
      if (saw_module) return ErrorAt(tok_.offset, "a second top-level module");
      saw_module = true;
      Advance();
      if (Is(TokenKind::kAtId)) {
        module_->name = std::string(tok_.text);
        Advance();
      }
      if (ConsumeKeyword("attributes")) STABLERT_RETURN_IF_ERROR(ParseDictionary(&module_->attrs));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to open the module body"));
      STABLERT_RETURN_IF_ERROR(ParseModuleBody());
      STABLERT_RETURN_IF_ERROR(ParseOptionalLocation().status());
      continue;
    }
    if (Is(TokenKind::kString) && tok_.text == "builtin.module") {
      if (saw_module) return ErrorAt(tok_.offset, "a second top-level module");
      saw_module = true;
      Advance();
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' (builtin.module has no operands)"));
      if (Consume(TokenKind::kLess)) {
        ir::Attribute::Dictionary props;
        STABLERT_RETURN_IF_ERROR(ParseDictionary(&props));
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' after the properties"));
        for (auto& [k, v] : props)
          if (k == "sym_name" && v.get<std::string>()) module_->name = *v.get<std::string>();
      }
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the module region"));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to open the module region"));
      STABLERT_RETURN_IF_ERROR(ParseModuleBody());
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the module region"));
      if (Is(TokenKind::kLBrace)) {
        ir::Attribute::Dictionary attrs;
        STABLERT_RETURN_IF_ERROR(ParseDictionary(&attrs));
        for (auto& [k, v] : attrs) {
          if (k == "sym_name" && v.get<std::string>()) module_->name = *v.get<std::string>();
          else if (k != "sym_visibility") module_->attrs.emplace_back(k, v);
        }
      }
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the module's type"));
      std::vector<ir::Type> in, out;
      STABLERT_RETURN_IF_ERROR(ParseFunctionType(&in, &out));
      STABLERT_RETURN_IF_ERROR(ParseOptionalLocation().status());
      continue;
    }
    if (saw_module) return ErrorExpected("end of input after the module");
    // Ops without a module: an implicit one.
    saw_module = true;
    while (!Is(TokenKind::kEof) && !Is(TokenKind::kHashId) && !Is(TokenKind::kBangId)) {
      STABLERT_RETURN_IF_ERROR(ParseTopLevelOp());
    }
  }
  if (!saw_module) return InvalidArgument("MLIR text holds no module");
  // As the bytecode import: Shardy meshes of artifacts that carry them as text.
  std::stable_sort(module_->attrs.begin(), module_->attrs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return std::move(module_);
}

Status Parser::ParseModuleBody() {
  while (!Consume(TokenKind::kRBrace)) {
    if (Is(TokenKind::kEof)) return ErrorExpected("'}' to close the module");
    STABLERT_RETURN_IF_ERROR(ParseTopLevelOp());
  }
  return OkStatus();
}

}  // namespace text

StatusOr<std::unique_ptr<ir::Module>> ParseModuleText(std::string_view text) {
  text::Parser parser(text);
  return parser.Run();
}

}  // namespace stablert::stablehlo
