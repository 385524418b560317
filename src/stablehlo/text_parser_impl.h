// Internal to the text reader (text_parser.h): the parser state shared by the structure,
// attribute and type parsing (text_parser.cc) and the op forms (text_ops.cc).
// Not thread-safe; one Parser per call.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "stablehlo/text_lexer.h"

namespace stablert::stablehlo::text {

// A parsed type: a value type, a bare element type, a function type, or none.
struct ParsedType {
  enum class Kind : uint8_t { kValue, kElement, kFunction, kNone } kind = Kind::kValue;
  ir::Type value;                // kValue
  DType element = DType::kInvalid;  // kElement
  std::vector<ir::Type> inputs, outputs;  // kFunction
};

// Result names of an op being parsed: `%a, %b:2 = ...`.
struct ResultGroup {
  std::string_view name;
  int64_t count = 1;
};

// Value types by their spelling: open addressing over a power-of-two table, the types in
// a deque (pointers stay valid as it grows). Keys view into the text and are at least 8
// bytes (`tensor<` ... `>`).
class TypeTable {
 public:
  static uint64_t Hash(std::string_view key) {
    auto load = [&](size_t at) {
      uint64_t v;
      std::memcpy(&v, key.data() + at, sizeof v);
      return v;
    };
    const size_t n = key.size();
    uint64_t h = (load(0) ^ n) * 0x9E3779B97F4A7C15ull;
    h = (h ^ load(n / 2 - 4) ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ load(n - 8) ^ (h >> 32)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
  }
  const ir::Type* Find(std::string_view key, uint64_t hash) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.type == nullptr) return nullptr;
      if (s.hash == hash && s.key == key) return s.type;
    }
  }
  const ir::Type* Insert(std::string_view key, uint64_t hash, ir::Type type) {
    if ((types_.size() + 1) * 2 > slots_.size()) Grow();
    types_.push_back(std::move(type));
    Place(Slot{hash, key, &types_.back()});
    return &types_.back();
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view key;
    const ir::Type* type = nullptr;
  };
  void Place(const Slot& slot) {
    size_t i = slot.hash & mask_;
    while (slots_[i].type != nullptr) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.type != nullptr) Place(s);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::deque<ir::Type> types_;
};

// 1-D i64 Elements attributes by their values: equal lists (`dims = [0, 1]`, slice
// bounds, dot dimensions) share one ElementsData, as the bytecode reader shares one
// attribute entry among all its uses. Open addressing; the keys back to back in one buffer.
class I64ListTable {
 public:
  ir::Attribute Get(const std::vector<int64_t>& values);

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0, size = 0;
    uint32_t index = 0;  // into attrs_, + 1; 0: a free slot
  };
  void Grow();
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::vector<int64_t> keys_;
  std::vector<ir::Attribute> attrs_;
};

class Parser {
 public:
  explicit Parser(std::string_view text);
  StatusOr<std::unique_ptr<ir::Module>> Run();

  //===--- Tokens and errors (text_parser.cc) ---------------------------------------===//
  void Advance() { tok_ = lex_.Next(); }
  bool Is(TokenKind kind) const { return tok_.kind == kind; }
  bool IsKeyword(std::string_view word) const {
    return tok_.kind == TokenKind::kBareId && tok_.text == word;
  }
  bool Consume(TokenKind kind) {
    if (tok_.kind != kind) return false;
    Advance();
    return true;
  }
  bool ConsumeKeyword(std::string_view word) {
    if (!IsKeyword(word)) return false;
    Advance();
    return true;
  }
  Status Expect(TokenKind kind, std::string_view what) {
    if (tok_.kind != kind) return ErrorExpected(what);
    Advance();
    return OkStatus();
  }
  Status ExpectKeyword(std::string_view word);
  // InvalidArgument "line:column: expected <what>, found <token>".
  Status ErrorExpected(std::string_view what) const;
  Status ErrorAt(size_t offset, std::string_view message) const;
  Status UnimplementedAt(size_t offset, std::string_view message) const;
  std::string Describe(const Token& token) const;

  //===--- Types and attributes (text_parser.cc) ------------------------------------===//
  StatusOr<ParsedType> ParseType();
  StatusOr<ir::Type> ParseValueType();
  // As ParseValueType, without a copy: a plain `tensor<DxDx...xT>` (sizes and an element
  // type name) is parsed once per distinct spelling and the pointer is into that cache
  // (valid for the parser's life); any other type is parsed into a buffer the next call
  // overwrites.
  StatusOr<const ir::Type*> ParseValueTypeRef();
  // `(T, ...) -> R` or `(T, ...) -> (R, ...)`. `inputs` may be null: the input types are
  // checked and dropped.
  Status ParseFunctionType(std::vector<ir::Type>* inputs, std::vector<ir::Type>* outputs);
  StatusOr<ir::Attribute> ParseAttribute();
  // `{name = value, name, ...}`; the current token is '{'.
  Status ParseDictionary(ir::Attribute::Dictionary* dict);
  StatusOr<std::string> ParseString();
  StatusOr<int64_t> ParseInteger();
  // `[1, 2]` -> 1-D i64 Elements.
  StatusOr<std::vector<int64_t>> ParseIntList();
  // The same into `out` (cleared first): no allocation once `out` has grown.
  Status ParseIntList(std::vector<int64_t>* out);
  // An optional `loc(...)`; 0 if absent or unknown.
  StatusOr<ir::LocationId> ParseOptionalLocation();
  // The id of `loc` in module_->locations, added (a copy) if no equal one is there.
  ir::LocationId AddLocation(const ir::Location& loc);
  StatusOr<ir::Attribute> ParseSdyAttributeText(std::string_view prefix);

  //===--- Values and regions (text_ops.cc) -----------------------------------------===//
  StatusOr<ir::ValueId> ParseValueUse();
  Status ParseValueUseList(std::vector<ir::ValueId>* values);
  ir::ValueId NewValue() { return module_->AddValue(ir::Type()); }
  void SetType(ir::ValueId id, ir::Type type) { module_->value_types[id] = std::move(type); }
  const ir::Type& TypeOf(ir::ValueId id) const { return module_->type_of(id); }
  // Binds `name` to the `count` consecutive values from `first` (an op's results or a
  // block's arguments are allocated consecutively).
  void Bind(std::string_view name, ir::ValueId first, uint32_t count);
  void PushScope() { scope_marks_.push_back(undo_.size()); }
  void PopScope();
  Status ParseOperation(ir::Block& block);
  // `{ [^bb(args):] ops }`; `arguments` are prebound block arguments (pretty forms).
  Status ParseRegion(ir::Region& region, const std::vector<std::pair<std::string_view, ir::Type>>*
                                             arguments = nullptr);
  Status ParseBlockArguments(std::vector<std::pair<std::string_view, ir::Type>>* arguments);
  Status ParseTopLevelOp();
  Status ParseFunction(size_t start);
  Status ParseGenericFunction(size_t start, std::vector<ResultGroup>& results);
  Status ParseGenericOp(ir::Block& block, std::vector<ResultGroup>& results, size_t start);
  Status ParsePrettyOp(ir::Block& block, std::vector<ResultGroup>& results, size_t start);
  Status FinishOp(ir::Operation&& op, ir::Block& block, const std::vector<ResultGroup>& results,
                  std::vector<ir::Type>& result_types, size_t start);
  Status ParseSdyMesh(size_t start);
  Status ParseModuleBody();

  Lexer lex_;
  Token tok_;
  std::vector<int64_t> dims_buffer_;  // reused by ParseType
  std::vector<int64_t> int_buffer_;   // reused for `[1, 2]` lists of the pretty op forms
  std::vector<int64_t> int_buffer2_;  // the second list of `[..] x [..]` and slice bounds
  std::vector<int64_t> int_buffer3_;
  I64ListTable i64_lists_;
  // `[1, 2]` into int_buffer_, then the list's shared attribute (I64ListTable).
  StatusOr<ir::Attribute> ParseSharedIntList();
  // Lines that start with `func.func` (after indentation): the token's offset and the
  // line's index, from the alias scan; a function's line count bounds its op count.
  std::vector<std::pair<size_t, size_t>> function_lines_;
  size_t line_count_ = 0;
  size_t ops_hint_ = 0;  // ops to reserve in the next region's first block (0: none)
  // Per-op buffers reused from op to op, one set per nesting depth (an op's stay in use
  // while its regions parse their own ops).
  struct OpScratch {
    std::vector<ResultGroup> results;
    std::vector<ir::Type> result_types;
    std::vector<ir::ValueId> operands;  // the pretty forms' `%a, %b` operands
  };
  // ParseValueUseList's list before it is copied out (one allocation of the final size).
  std::vector<ir::ValueId> value_list_buffer_;
  std::deque<OpScratch> op_scratch_;
  OpScratch& Scratch() {
    while (op_scratch_.size() <= static_cast<size_t>(depth_)) op_scratch_.emplace_back();
    return op_scratch_[static_cast<size_t>(depth_)];
  }
  // Op names -> op codes (ir::OpCodeFromName is a binary search over every name),
  // memoized in a small direct-mapped table; keys view into the text.
  struct OpNameEntry {
    std::string_view name;
    std::optional<ir::OpCode> code;
  };
  std::array<OpNameEntry, 64> op_names_{};
  // ParseValueTypeRef's cache (keys view into the text) and its buffer for other types.
  TypeTable type_cache_;
  ir::Type type_buffer_;
  StatusOr<ir::Type> ParseValueTypeUncached();
  std::unique_ptr<ir::Module> module_;
  int depth_ = 0;

  // Top-level alias definitions (`#name = ...`, `!name = ...`), by name with the sigil:
  // the offset of their value. Resolved on use, memoized.
  std::unordered_map<std::string_view, size_t> alias_offsets_;
  // `#locN = ...` (how MLIR names location aliases) by N instead: the offset + 1, 0 if none.
  std::vector<size_t> numbered_alias_offsets_;
  // The offset of alias `key`'s value (`number`: LocationAliasNumber of its name); npos if
  // undefined.
  size_t AliasOffset(std::string_view key, size_t number) const;
  std::unordered_map<std::string_view, ir::Attribute> attr_aliases_;
  // Resolved location aliases (pointers stay valid as it grows), by N for `#locN` (the
  // index + 1, 0 if not yet resolved) and by name for others.
  std::deque<ir::Location> loc_alias_store_;
  std::vector<uint32_t> numbered_loc_aliases_;
  std::unordered_map<std::string_view, const ir::Location*> loc_aliases_;
  // The current token is `#name` of a location: its location (memoized, valid for the
  // parser's life); advances past it.
  StatusOr<const ir::Location*> ResolveLocationAlias();
  std::unordered_map<std::string_view, ParsedType> type_aliases_;
  std::vector<std::string_view> resolving_;

  // Value names in scope; `undo_` restores shadowed bindings when a scope ends (count 0:
  // the name was unbound).
  struct Binding {
    ir::ValueId first = 0;
    uint32_t count = 0;
  };
  // Names `%N` (most of them) are indexed by N; others are hashed.
  std::vector<Binding> numbered_names_;
  // Other names (`%cst_3`, `%arg12`): open addressing, never shrinks (an unbound name keeps
  // its slot with count 0). Pointers into it are valid until the next insertion.
  class NameTable {
   public:
    Binding* Find(std::string_view name) {
      if (slots_.empty()) return nullptr;
      const uint64_t h = Hash(name);
      for (size_t i = h & mask_;; i = (i + 1) & mask_) {
        if (slots_[i].name.empty()) return nullptr;
        if (slots_[i].hash == h && slots_[i].name == name) return &slots_[i].binding;
      }
    }
    Binding& Get(std::string_view name) {
      if ((size_ + 1) * 2 > slots_.size()) Grow();
      const uint64_t h = Hash(name);
      size_t i = h & mask_;
      for (; !slots_[i].name.empty(); i = (i + 1) & mask_)
        if (slots_[i].hash == h && slots_[i].name == name) return slots_[i].binding;
      ++size_;
      slots_[i] = Entry{h, name, Binding{}};
      return slots_[i].binding;
    }

   private:
    struct Entry {
      uint64_t hash = 0;
      std::string_view name;  // empty: a free slot (names have their '%')
      Binding binding;
    };
    static uint64_t Hash(std::string_view name) {
      uint64_t h = 0xCBF29CE484222325ull;
      for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
      return h ^ (h >> 29);
    }
    void Grow() {
      std::vector<Entry> old = std::move(slots_);
      slots_.assign(old.empty() ? 256 : old.size() * 2, Entry{});
      mask_ = slots_.size() - 1;
      for (const Entry& e : old) {
        if (e.name.empty()) continue;
        size_t i = e.hash & mask_;
        while (!slots_[i].name.empty()) i = (i + 1) & mask_;
        slots_[i] = e;
      }
    }
    std::vector<Entry> slots_;
    size_t mask_ = 0, size_ = 0;
  };
  NameTable names_;
  struct Undo {
    std::string_view name;
    uint32_t number;  // NameNumber(name)
    Binding old;
  };
  std::vector<Undo> undo_;
  // N of a value name `%N` (no leading zeros, N < 2^20), whose binding is numbered_names_[N];
  // kHashedName for the others.
  static constexpr uint32_t kHashedName = UINT32_MAX;
  static uint32_t NameNumber(std::string_view name);
  // The slot of `name` (with its '%'); nullptr if unbound. `create` makes it.
  Binding* Slot(std::string_view name, bool create);
  std::vector<size_t> scope_marks_;

  // Locations by content, so equal locations share one LocationId (open addressing over
  // module_->locations: each slot its hash and id + 1, 0 if free); `loc(#alias)` by alias.
  struct LocationSlot {
    uint64_t hash = 0;
    ir::LocationId id_plus_one = 0;
  };
  std::vector<LocationSlot> location_slots_;
  size_t location_count_ = 0;
  std::unordered_map<std::string_view, ir::LocationId> alias_location_ids_;
  // `loc(#locN)` (how MLIR names location aliases) by N: the id + 1, 0 if not yet seen.
  std::vector<ir::LocationId> numbered_location_ids_;
};

// RAII nesting guard.
class DepthGuard {
 public:
  explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
  ~DepthGuard() { --p_->depth_; }
  bool exceeded() const { return p_->depth_ > kMaxDepth; }
  static constexpr int kMaxDepth = 200;

 private:
  Parser* p_;
};

}  // namespace stablert::stablehlo::text
