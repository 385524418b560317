// Operations of the text reader (text_parser.h): functions, regions, values, the generic
// operation form and the pretty forms of the stablehlo, func and sdy ops.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "stablehlo/attr_util.h"
#include "stablehlo/chlo_expand.h"
#include "stablehlo/sdy_text.h"
#include "stablehlo/text_normalize.h"
#include "stablehlo/text_parser.h"
#include "stablehlo/text_parser_impl.h"

namespace stablert::stablehlo {
namespace text {

std::optional<ir::EnumValue> EnumByName(ir::EnumKind kind, std::string_view word);

namespace {

using Arguments = std::vector<std::pair<std::string_view, ir::Type>>;

// Stable insertion sort: ops carry a handful of attributes, and std::stable_sort would
// allocate a buffer per op.
void SortByName(ir::Attribute::Dictionary& attrs) {
  for (size_t i = 1; i < attrs.size(); ++i) {
    for (size_t j = i; j > 0 && attrs[j].first < attrs[j - 1].first; --j) std::swap(attrs[j], attrs[j - 1]);
  }
}

// Op names of the text -> the op row; nullopt if StableRT has none.
std::optional<ir::OpCode> OpCodeOf(std::string_view name) {
  if (name == "func.return" || name == "return") return ir::OpCode::kReturn;
  if (name == "func.call" || name == "call") return ir::OpCode::kCall;
  if (name == "func.func" || name == "sdy.mesh") return std::nullopt;
  return ir::OpCodeFromName(name);
}

int64_t TotalResults(const std::vector<ResultGroup>& results) {
  int64_t n = 0;
  for (const ResultGroup& g : results) n += g.count;
  return n;
}

// Expands a parsed CHLO op into the block (chlo_expand.h) and binds the result names.
// `operand_types`: the types the text states for the operands (one per operand, or one for
// all).
Status FinishChloOp(Parser& p, stablehlo::ChloOp op, const std::vector<ir::Type>& operand_types, ir::Block& block,
                    const std::vector<ResultGroup>& results, size_t start) {
  const std::string name(op.name);
  for (size_t i = 0; i < op.operands.size() && !operand_types.empty(); ++i) {
    const ir::Type& stated = operand_types[operand_types.size() == 1 ? 0 : i];
    if (!(p.TypeOf(op.operands[i]) == stated)) {
      return p.ErrorAt(start, name + ": operand " + std::to_string(i) + " is " + ir::TypeToString(p.TypeOf(op.operands[i])) +
                                  " but the op states " + ir::TypeToString(stated));
    }
  }
  if (static_cast<int64_t>(op.result_types.size()) != TotalResults(results)) {
    return p.ErrorAt(start, name + " has " + std::to_string(op.result_types.size()) + " result types but " +
                                std::to_string(TotalResults(results)) + " result names");
  }
  StatusOr<std::vector<ir::ValueId>> values = stablehlo::ExpandChlo(op, *p.module_, block);
  if (!values.ok()) {
    const std::string message(values.status().message());
    return values.status().code() == StatusCode::kUnimplemented ? p.UnimplementedAt(start, message)
                                                                 : p.ErrorAt(start, message);
  }
  size_t next = 0;
  for (const ResultGroup& g : results) {
    for (int64_t i = 1; i < g.count; ++i) {
      if ((*values)[next + static_cast<size_t>(i)] != (*values)[next] + static_cast<ir::ValueId>(i)) {
        return p.UnimplementedAt(start, name + " results bound as one group '" + std::string(g.name) + "'");
      }
    }
    p.Bind(g.name, (*values)[next], static_cast<uint32_t>(g.count));
    next += static_cast<size_t>(g.count);
  }
  return OkStatus();
}

// The pretty form of CHLO ops: `chlo.op %a, %b {attrs} : T, T -> R`,
// `chlo.top_k(%a, k = 2) : T -> (R, S)`, or with a functional type `: (T, T) -> R`.
Status ParsePrettyChloOp(Parser& p, std::string_view name, ir::Block& block, const std::vector<ResultGroup>& results,
                         size_t start) {
  stablehlo::ChloOp op;
  op.name = name;
  const bool parenthesized = p.Consume(TokenKind::kLParen);
  if (p.Is(TokenKind::kPercentId)) {
    do {
      if (parenthesized && p.Is(TokenKind::kBareId)) {
        std::string key(p.tok_.text);
        p.Advance();
        STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kEqual, "'=' after '" + key + "'"));
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute value, p.ParseAttribute());
        op.attrs.emplace_back(std::move(key), std::move(value));
        continue;
      }
      STABLERT_ASSIGN_OR_RETURN(ir::ValueId v, p.ParseValueUse());
      op.operands.push_back(v);
    } while (p.Consume(TokenKind::kComma));
  }
  if (parenthesized) STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "')' after the operands"));
  if (p.Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(p.ParseDictionary(&op.attrs));
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and the operation's type"));
  std::vector<ir::Type> inputs;
  if (p.Is(TokenKind::kLParen)) {
    STABLERT_RETURN_IF_ERROR(p.ParseFunctionType(&inputs, &op.result_types));
  } else {
    do {
      STABLERT_ASSIGN_OR_RETURN(ir::Type t, p.ParseValueType());
      inputs.push_back(std::move(t));
    } while (p.Consume(TokenKind::kComma));
    if (p.Consume(TokenKind::kArrow)) {
      if (p.Consume(TokenKind::kLParen)) {
        do {
          STABLERT_ASSIGN_OR_RETURN(ir::Type t, p.ParseValueType());
          op.result_types.push_back(std::move(t));
        } while (p.Consume(TokenKind::kComma));
        STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "',' or ')' after the result types"));
      } else {
        STABLERT_ASSIGN_OR_RETURN(ir::Type t, p.ParseValueType());
        op.result_types.push_back(std::move(t));
      }
    } else {
      // `: T`: operands and results of one type.
      op.result_types.assign(static_cast<size_t>(TotalResults(results)), inputs.back());
    }
  }
  if (!op.operands.empty() && inputs.size() != op.operands.size() && inputs.size() != 1) {
    return p.ErrorAt(start, std::string(name) + " has " + std::to_string(op.operands.size()) + " operands but " +
                                std::to_string(inputs.size()) + " operand types");
  }
  STABLERT_ASSIGN_OR_RETURN(op.location, p.ParseOptionalLocation());
  return FinishChloOp(p, std::move(op), inputs, block, results, start);
}

}  // namespace

//===--- Values -----------------------------------------------------------------------===//

uint32_t Parser::NameNumber(std::string_view name) {
  if (name.size() < 2 || name.size() > 8 || (name.size() > 2 && name[1] == '0')) return kHashedName;
  uint32_t n = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return kHashedName;
    n = n * 10 + static_cast<uint32_t>(name[i] - '0');
  }
  // Bounded (8 MB of slots); larger numbers are hashed, decided by the name alone.
  return n < (1u << 20) ? n : kHashedName;
}

Parser::Binding* Parser::Slot(std::string_view name, bool create) {
  const uint32_t n = NameNumber(name);
  if (n != kHashedName) {
    if (n >= numbered_names_.size()) {
      if (!create) return nullptr;
      numbered_names_.resize(std::max<size_t>(n + 1, numbered_names_.size() * 2));
    }
    Binding* b = &numbered_names_[n];
    return b->count == 0 && !create ? nullptr : b;
  }
  if (create) return &names_.Get(name);
  Binding* b = names_.Find(name);
  return b == nullptr || b->count == 0 ? nullptr : b;
}

void Parser::Bind(std::string_view name, ir::ValueId first, uint32_t count) {
  Binding* slot = Slot(name, /*create=*/true);
  undo_.push_back(Undo{name, NameNumber(name), *slot});
  *slot = Binding{first, count};
}

void Parser::PopScope() {
  size_t mark = scope_marks_.back();
  scope_marks_.pop_back();
  // `%N` by N: restoring a function's bindings reads none of its (long cold) text.
  while (undo_.size() > mark) {
    const Undo& u = undo_.back();
    (u.number != kHashedName ? numbered_names_[u.number] : names_.Get(u.name)) = u.old;
    undo_.pop_back();
  }
}

StatusOr<ir::ValueId> Parser::ParseValueUse() {
  if (!Is(TokenKind::kPercentId)) return ErrorExpected("a value (%name)");
  Token name = tok_;
  int64_t index = 0;
  bool indexed = lex_.LexResultIndex(&index);
  Advance();
  const Binding* slot = Slot(name.text, /*create=*/false);
  if (!slot) return ErrorAt(name.offset, "use of undefined value '" + std::string(name.text) + "'");
  const Binding& b = *slot;
  if (index < 0 || index >= static_cast<int64_t>(b.count)) {
    return ErrorAt(name.offset, "value '" + std::string(name.text) + "' has " + std::to_string(b.count) +
                                    " results, not #" + std::to_string(index));
  }
  if (!indexed && b.count != 1) {
    return ErrorAt(name.offset, "value '" + std::string(name.text) + "' names " + std::to_string(b.count) +
                                    " results: expected '#N' after it");
  }
  return b.first + static_cast<ir::ValueId>(index);
}

Status Parser::ParseValueUseList(std::vector<ir::ValueId>* values) {
  if (!Is(TokenKind::kPercentId)) return OkStatus();
  std::vector<ir::ValueId>& list = value_list_buffer_;
  list.clear();
  do {
    STABLERT_ASSIGN_OR_RETURN(ir::ValueId v, ParseValueUse());
    list.push_back(v);
  } while (Consume(TokenKind::kComma));
  values->insert(values->end(), list.begin(), list.end());
  return OkStatus();
}

//===--- Regions ----------------------------------------------------------------------===//

Status Parser::ParseBlockArguments(Arguments* arguments) {
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the block arguments"));
  if (Consume(TokenKind::kRParen)) return OkStatus();
  do {
    if (!Is(TokenKind::kPercentId)) return ErrorExpected("a block argument (%name: type)");
    std::string_view name = tok_.text;
    Advance();
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the argument's type"));
    STABLERT_ASSIGN_OR_RETURN(ir::Type type, ParseValueType());
    if (Is(TokenKind::kLBrace)) {
      ir::Attribute::Dictionary ignored;
      STABLERT_RETURN_IF_ERROR(ParseDictionary(&ignored));
    }
    STABLERT_RETURN_IF_ERROR(ParseOptionalLocation().status());
    arguments->emplace_back(name, std::move(type));
  } while (Consume(TokenKind::kComma));
  return Expect(TokenKind::kRParen, "',' or ')' after the block arguments");
}

Status Parser::ParseRegion(ir::Region& region, const Arguments* arguments) {
  DepthGuard guard(this);
  if (guard.exceeded()) return ErrorAt(tok_.offset, "regions nested too deeply");
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to open a region"));
  PushScope();
  auto bind_arguments = [&](ir::Block& block, const Arguments& args) {
    for (const auto& [name, type] : args) {
      ir::ValueId id = module_->AddValue(type);
      block.arguments.push_back(id);
      Bind(name, id, 1);
    }
  };
  Status status = OkStatus();
  if (Is(TokenKind::kRBrace)) {
    // An empty region (a declaration).
    Advance();
    PopScope();
    return OkStatus();
  }
  region.blocks.emplace_back();
  if (ops_hint_ != 0) {
    region.blocks.back().ops.reserve(ops_hint_);
    ops_hint_ = 0;
  }
  if (arguments) bind_arguments(region.blocks.back(), *arguments);
  bool first = true;
  while (status.ok() && !Consume(TokenKind::kRBrace)) {
    if (Is(TokenKind::kCaretId)) {
      size_t at = tok_.offset;
      Advance();
      if (!first || arguments) {
        if (!region.blocks.back().ops.empty() || !first) {
          status = UnimplementedAt(at, "regions with several blocks (branches) are not supported");
          break;
        }
      }
      Arguments args;
      if (Is(TokenKind::kLParen)) {
        status = ParseBlockArguments(&args);
        if (!status.ok()) break;
      }
      status = Expect(TokenKind::kColon, "':' after the block label");
      if (!status.ok()) break;
      if (!arguments) bind_arguments(region.blocks.back(), args);
      first = false;
      continue;
    }
    if (Is(TokenKind::kEof)) {
      status = ErrorExpected("'}' to close the region");
      break;
    }
    first = false;
    status = ParseOperation(region.blocks.back());
  }
  PopScope();
  return status;
}

//===--- Operations -------------------------------------------------------------------===//

Status Parser::ParseOperation(ir::Block& block) {
  DepthGuard guard(this);
  if (guard.exceeded()) return ErrorAt(tok_.offset, "operations nested too deeply");
  size_t start = tok_.offset;
  std::vector<ResultGroup>& results = Scratch().results;
  results.clear();
  if (Is(TokenKind::kPercentId)) {
    do {
      if (!Is(TokenKind::kPercentId)) return ErrorExpected("a result name");
      ResultGroup group{tok_.text, 1};
      Advance();
      if (Consume(TokenKind::kColon)) {
        size_t at = tok_.offset;
        STABLERT_ASSIGN_OR_RETURN(group.count, ParseInteger());
        if (group.count < 1 || group.count > (1 << 20)) return ErrorAt(at, "invalid result count");
      }
      results.push_back(group);
    } while (Consume(TokenKind::kComma));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the result names"));
  }
  if (Is(TokenKind::kString)) return ParseGenericOp(block, results, start);
  if (Is(TokenKind::kBareId)) return ParsePrettyOp(block, results, start);
  return ErrorExpected("an operation");
}

Status Parser::FinishOp(ir::Operation&& op, ir::Block& block, const std::vector<ResultGroup>& results,
                        std::vector<ir::Type>& result_types, size_t start) {
  const std::string_view name = ir::OpName(op.code);
  if (op.results.size() != result_types.size()) {
    return ErrorAt(start, std::string(name) + " has " + std::to_string(result_types.size()) +
                              " result types but " + std::to_string(op.results.size()) + " result names");
  }
  for (size_t i = 0; i < result_types.size(); ++i) SetType(op.results[i], std::move(result_types[i]));
  STABLERT_ASSIGN_OR_RETURN(op.location, ParseOptionalLocation());
  Status status = NormalizeTextAttributes(op);
  if (!status.ok()) {
    return Status(status.code(), "MLIR text " + lex_.LineColumn(start) + ": in " + std::string(name) + ": " +
                                     std::string(status.message()));
  }
  SortByName(op.attrs);
  size_t next = 0;
  for (const ResultGroup& g : results) {
    Bind(g.name, op.results[next], static_cast<uint32_t>(g.count));
    next += static_cast<size_t>(g.count);
  }
  block.ops.push_back(std::move(op));
  return OkStatus();
}

Status Parser::ParseGenericOp(ir::Block& block, std::vector<ResultGroup>& results, size_t start) {
  std::string name(tok_.text);
  Advance();
  if (name == "func.func") return ParseGenericFunction(start, results);
  std::optional<ir::OpCode> code = OpCodeOf(name);
  if (!code) {
    if (stablehlo::IsChloName(name)) {
      stablehlo::ChloOp op;
      op.name = name;
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the operands"));
      STABLERT_RETURN_IF_ERROR(ParseValueUseList(&op.operands));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the operands"));
      if (Consume(TokenKind::kLess)) {
        STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' after the properties"));
      }
      if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the operation's type"));
      std::vector<ir::Type> inputs;
      STABLERT_RETURN_IF_ERROR(ParseFunctionType(&inputs, &op.result_types));
      if (inputs.size() != op.operands.size()) {
        return ErrorAt(start, name + " has " + std::to_string(op.operands.size()) + " operands but " +
                                  std::to_string(inputs.size()) + " operand types");
      }
      STABLERT_ASSIGN_OR_RETURN(op.location, ParseOptionalLocation());
      return FinishChloOp(*this, std::move(op), inputs, block, results, start);
    }
    return UnimplementedAt(start, "operation '" + name + "' is not supported");
  }
  ir::Operation op;
  op.code = *code;
  for (int64_t i = 0; i < TotalResults(results); ++i) op.results.push_back(NewValue());
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the operands"));
  STABLERT_RETURN_IF_ERROR(ParseValueUseList(&op.operands));
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the operands"));
  if (Is(TokenKind::kLSquare)) return UnimplementedAt(tok_.offset, "operations with successor blocks");
  if (Consume(TokenKind::kLess)) {
    STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' after the properties"));
  }
  if (Consume(TokenKind::kLParen)) {
    do {
      op.regions.emplace_back();
      STABLERT_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
    } while (Consume(TokenKind::kComma));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the regions"));
  }
  if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the operation's type"));
  std::vector<ir::Type> inputs, outputs;
  STABLERT_RETURN_IF_ERROR(ParseFunctionType(&inputs, &outputs));
  if (inputs.size() != op.operands.size()) {
    return ErrorAt(start, name + " has " + std::to_string(op.operands.size()) + " operands but " +
                              std::to_string(inputs.size()) + " operand types");
  }
  return FinishOp(std::move(op), block, results, outputs, start);
}

namespace {

// Pretty-form keywords (`dims = [...]`) -> attribute names, per op.
struct Keyword {
  ir::OpCode code;
  std::string_view keyword;
  std::string_view attribute;
};
constexpr Keyword kKeywords[] = {
    {ir::OpCode::kBroadcastInDim, "dims", "broadcast_dimensions"},
    {ir::OpCode::kTranspose, "dims", "permutation"},
    {ir::OpCode::kReverse, "dims", "dimensions"},
    {ir::OpCode::kBroadcast, "sizes", "broadcast_sizes"},
    {ir::OpCode::kDynamicSlice, "sizes", "slice_sizes"},
    {ir::OpCode::kConcatenate, "dim", "dimension"},
    {ir::OpCode::kIota, "dim", "iota_dimension"},
    {ir::OpCode::kGetDimensionSize, "dim", "dimension"},
    {ir::OpCode::kSetDimensionSize, "dim", "dimension"},
    {ir::OpCode::kPad, "low", "edge_padding_low"},
    {ir::OpCode::kPad, "high", "edge_padding_high"},
    {ir::OpCode::kPad, "interior", "interior_padding"},
    {ir::OpCode::kFft, "type", "fft_type"},
    {ir::OpCode::kFft, "length", "fft_length"},
    {ir::OpCode::kRng, "distribution", "rng_distribution"},
    {ir::OpCode::kRngBitGenerator, "algorithm", "rng_algorithm"},
    {ir::OpCode::kCholesky, "lower", "lower"},
    {ir::OpCode::kReduce, "dimensions", "dimensions"},
    {ir::OpCode::kDot, "precision", "precision_config"},
    {ir::OpCode::kDotGeneral, "precision", "precision_config"},
    {ir::OpCode::kDotGeneral, "algorithm", "algorithm"},
    {ir::OpCode::kConvolution, "dim_numbers", "dimension_numbers"},
    {ir::OpCode::kConvolution, "window", "window"},
    {ir::OpCode::kReducePrecision, "format", "format"},
    {ir::OpCode::kSdyShardingGroup, "group_id", "group_id"},
};

const Keyword* FindKeyword(ir::OpCode code, std::string_view keyword) {
  for (const Keyword& k : kKeywords)
    if (k.code == code && k.keyword == keyword) return &k;
  return nullptr;
}

// One dimension letter list of `[b, 0, 1, f]`: positions of the batch/feature letters and
// the spatial dimensions in order.
struct ConvLayout {
  int64_t batch = -1, feature = -1;
  std::vector<int64_t> spatial;
};

}  // namespace

// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` -> the nine convolution dimension fields.
Status ParseConvDimensionsBody(Parser& p, ir::Attribute::Dictionary* fields) {
  auto layout = [&](char a, char b, ConvLayout* out) -> Status {
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kLSquare, "'[' (a convolution layout)"));
    std::vector<std::pair<int64_t, int64_t>> spatial;  // (spatial index, position)
    int64_t position = 0;
    if (!p.Is(TokenKind::kRSquare)) {
      do {
        if (p.Is(TokenKind::kInteger)) {
          STABLERT_ASSIGN_OR_RETURN(int64_t s, p.ParseInteger());
          spatial.emplace_back(s, position);
        } else if (p.Is(TokenKind::kBareId) && p.tok_.text.size() == 1 && (p.tok_.text[0] == a || p.tok_.text[0] == b)) {
          (p.tok_.text[0] == a ? out->batch : out->feature) = position;
          p.Advance();
        } else {
          return p.ErrorExpected(std::string("'") + a + "', '" + b + "' or a spatial dimension number");
        }
        ++position;
      } while (p.Consume(TokenKind::kComma));
    }
    STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kRSquare, "',' or ']' in the convolution layout"));
    out->spatial.assign(spatial.size(), -1);
    for (const auto& [s, pos] : spatial) {
      if (s < 0 || static_cast<size_t>(s) >= spatial.size()) return p.ErrorAt(p.tok_.offset, "spatial dimension out of range");
      out->spatial[static_cast<size_t>(s)] = pos;
    }
    return OkStatus();
  };
  ConvLayout input, kernel, output;
  STABLERT_RETURN_IF_ERROR(layout('b', 'f', &input));
  if (!p.ConsumeKeyword("x")) return p.ErrorExpected("'x' between the input and kernel layouts");
  STABLERT_RETURN_IF_ERROR(layout('i', 'o', &kernel));
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kArrow, "'->' before the output layout"));
  STABLERT_RETURN_IF_ERROR(layout('b', 'f', &output));
  fields->emplace_back("input_batch_dimension", I64(input.batch));
  fields->emplace_back("input_feature_dimension", I64(input.feature));
  fields->emplace_back("input_spatial_dimensions", I64Elements(input.spatial));
  fields->emplace_back("kernel_input_feature_dimension", I64(kernel.batch));
  fields->emplace_back("kernel_output_feature_dimension", I64(kernel.feature));
  fields->emplace_back("kernel_spatial_dimensions", I64Elements(kernel.spatial));
  fields->emplace_back("output_batch_dimension", I64(output.batch));
  fields->emplace_back("output_feature_dimension", I64(output.feature));
  fields->emplace_back("output_spatial_dimensions", I64Elements(output.spatial));
  return OkStatus();
}

namespace {

// Result types from a pretty op's `: ...` signature.
Status ParseResultTypes(Parser& p, size_t result_count, std::vector<ir::Type>* out) {
  STABLERT_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and the operation's type"));
  if (p.Is(TokenKind::kLParen)) return p.ParseFunctionType(/*inputs=*/nullptr, out);
  // `: T` (one type for operands and results) or `: T, U, ...` (the last result_count).
  STABLERT_ASSIGN_OR_RETURN(const ir::Type* first, p.ParseValueTypeRef());
  if (!p.Is(TokenKind::kComma)) {
    out->assign(result_count, *first);
    return OkStatus();
  }
  std::vector<ir::Type> types = {*first};
  while (p.Consume(TokenKind::kComma)) {
    STABLERT_ASSIGN_OR_RETURN(const ir::Type* t, p.ParseValueTypeRef());
    types.push_back(*t);
  }
  if (types.size() == result_count) {
    *out = std::move(types);
  } else if (types.size() > result_count) {
    out->assign(types.end() - static_cast<std::ptrdiff_t>(result_count), types.end());
  } else {
    return p.ErrorExpected(std::to_string(result_count) + " result types");
  }
  return OkStatus();
}

}  // namespace

Status Parser::ParsePrettyOp(ir::Block& block, std::vector<ResultGroup>& results, size_t start) {
  std::string_view name = tok_.text;
  Advance();
  if (stablehlo::IsChloName(name)) return ParsePrettyChloOp(*this, name, block, results, start);
  OpNameEntry& entry =
      op_names_[(name.size() * 7 + static_cast<unsigned char>(name.back()) * 3 +
                 static_cast<unsigned char>(name[name.size() / 2])) % op_names_.size()];
  if (entry.name != name) entry = OpNameEntry{name, OpCodeOf(name)};
  const std::optional<ir::OpCode> code = entry.code;
  if (!code) return UnimplementedAt(start, "operation '" + std::string(name) + "' is not supported");
  ir::Operation op;
  op.code = *code;
  const size_t result_count = static_cast<size_t>(TotalResults(results));
  op.results.reserve(result_count);
  for (size_t i = 0; i < result_count; ++i) op.results.push_back(NewValue());
  std::vector<ir::Type>& result_types = Scratch().result_types;
  result_types.clear();
  using ir::OpCode;

  switch (op.code) {
    case OpCode::kReturn:
    case OpCode::kSdyReturn: {
      STABLERT_RETURN_IF_ERROR(ParseValueUseList(&op.operands));
      if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
      if (!op.operands.empty()) {
        std::vector<ir::Type> ignored;
        STABLERT_RETURN_IF_ERROR(ParseResultTypes(*this, op.operands.size(), &ignored));
      }
      return FinishOp(std::move(op), block, results, result_types, start);
    }
    case OpCode::kConstant: {
      if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
      size_t at = tok_.offset;
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute value, ParseAttribute());
      const auto* elements = value.get<ir::Attribute::Elements>();
      if (!elements || !*elements) return ErrorAt(at, "expected a dense literal with its type");
      result_types.push_back((*elements)->type);
      op.attrs.emplace_back("value", std::move(value));
      return FinishOp(std::move(op), block, results, result_types, start);
    }
    case OpCode::kWhile: {
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after stablehlo.while"));
      std::vector<std::string_view> names;
      if (!Is(TokenKind::kRParen)) {
        do {
          if (!Is(TokenKind::kPercentId)) return ErrorExpected("a loop variable (%name = %value)");
          names.push_back(tok_.text);
          Advance();
          STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
          STABLERT_ASSIGN_OR_RETURN(ir::ValueId v, ParseValueUse());
          op.operands.push_back(v);
        } while (Consume(TokenKind::kComma));
      }
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the loop variables"));
      if (Consume(TokenKind::kColon)) {
        do {
          STABLERT_ASSIGN_OR_RETURN(ir::Type t, ParseValueType());
          result_types.push_back(std::move(t));
        } while (Consume(TokenKind::kComma));
      }
      if (result_types.size() != names.size()) return ErrorAt(start, "stablehlo.while needs one type per loop variable");
      if (ConsumeKeyword("attributes")) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
      Arguments args;
      for (size_t i = 0; i < names.size(); ++i) args.emplace_back(names[i], result_types[i]);
      op.regions.resize(2);
      STABLERT_RETURN_IF_ERROR(ExpectKeyword("cond"));
      STABLERT_RETURN_IF_ERROR(ParseRegion(op.regions[0], &args));
      STABLERT_RETURN_IF_ERROR(ExpectKeyword("do"));
      STABLERT_RETURN_IF_ERROR(ParseRegion(op.regions[1], &args));
      return FinishOp(std::move(op), block, results, result_types, start);
    }
    case OpCode::kReduce: {
      std::vector<ir::ValueId> inputs, inits;
      do {
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' (an operand and its init value)"));
        STABLERT_ASSIGN_OR_RETURN(ir::ValueId input, ParseValueUse());
        STABLERT_RETURN_IF_ERROR(ExpectKeyword("init"));
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after 'init'"));
        STABLERT_ASSIGN_OR_RETURN(ir::ValueId init, ParseValueUse());
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
        inputs.push_back(input);
        inits.push_back(init);
      } while (Consume(TokenKind::kComma));
      op.operands = inputs;
      op.operands.insert(op.operands.end(), inits.begin(), inits.end());
      std::optional<ir::OpCode> applies;
      size_t applies_at = 0;
      if (ConsumeKeyword("applies")) {
        applies_at = tok_.offset;
        if (!Is(TokenKind::kBareId)) return ErrorExpected("the reduction op after 'applies'");
        applies = OpCodeOf(tok_.text);
        if (!applies || ir::GetOpInfo(*applies).num_operands != 2 || ir::GetOpInfo(*applies).num_regions != 0) {
          return ErrorAt(applies_at, "expected a binary op after 'applies'");
        }
        Advance();
      }
      STABLERT_RETURN_IF_ERROR(ExpectKeyword("across"));
      STABLERT_RETURN_IF_ERROR(ExpectKeyword("dimensions"));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute dimensions, ParseSharedIntList());
      op.attrs.emplace_back("dimensions", std::move(dimensions));
      if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
      STABLERT_RETURN_IF_ERROR(ParseResultTypes(*this, result_count, &result_types));
      op.regions.resize(1);
      ir::Region& region = op.regions[0];
      if (applies) {
        // The body `^bb0(%lhs, %rhs): %r = op %lhs, %rhs; return %r` of scalars.
        region.blocks.emplace_back();
        ir::Block& body = region.blocks.back();
        const size_t n = inits.size();
        body.arguments.reserve(2 * n);
        body.ops.reserve(2);
        for (size_t k = 0; k < 2; ++k)
          for (size_t i = 0; i < n; ++i) body.arguments.push_back(module_->AddValue(TypeOf(inits[i])));
        if (n != 1) return ErrorAt(applies_at, "'applies' needs exactly one operand");
        ir::Operation inner;
        inner.code = *applies;
        inner.operands = {body.arguments[0], body.arguments[1]};
        inner.results = {module_->AddValue(TypeOf(inits[0]))};
        ir::Operation ret;
        ret.code = OpCode::kReturn;
        ret.operands = inner.results;
        Status status = NormalizeTextAttributes(inner);
        if (!status.ok()) return status;
        body.ops.push_back(std::move(inner));
        body.ops.push_back(std::move(ret));
      } else {
        STABLERT_RETURN_IF_ERROR(ExpectKeyword("reducer"));
        std::vector<Arguments> groups;
        while (Is(TokenKind::kLParen)) {
          groups.emplace_back();
          STABLERT_RETURN_IF_ERROR(ParseBlockArguments(&groups.back()));
          if (groups.back().size() != 2) return ErrorAt(tok_.offset, "each reducer group has two arguments");
        }
        Arguments args;
        for (const Arguments& g : groups) args.push_back(g[0]);
        for (const Arguments& g : groups) args.push_back(g[1]);
        STABLERT_RETURN_IF_ERROR(ParseRegion(region, &args));
      }
      Status status = FinishOp(std::move(op), block, results, result_types, start);
      if (status.ok() && applies) {
        // The generated body has the reduce's location.
        ir::Operation& done = block.ops.back();
        for (ir::Operation& inner : done.regions[0].blocks[0].ops) inner.location = done.location;
      }
      return status;
    }
    case OpCode::kSdyManualComputation: {
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after sdy.manual_computation"));
      STABLERT_RETURN_IF_ERROR(ParseValueUseList(&op.operands));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the operands"));
      for (std::string_view field : {"in_shardings", "out_shardings", "manual_axes"}) {
        STABLERT_RETURN_IF_ERROR(ExpectKeyword(field));
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
        size_t at = tok_.offset;
        // `[<@mesh, ...>, ...]` or `{"x", ...}`: the body as Shardy text.
        size_t end;
        if (Is(TokenKind::kLSquare) || Is(TokenKind::kLBrace)) {
          end = lex_.SkipAngleBody(at);
        } else {
          return ErrorExpected("'[' or '{' after " + std::string(field) + " =");
        }
        if (end == std::string_view::npos) return ErrorAt(at, "unterminated " + std::string(field));
        std::string body(lex_.buffer().substr(at, end - at));
        std::string sdy = field == "manual_axes" ? "#sdy<manual_axes" + body + ">"
                                                 : "#sdy.sharding_per_value<" + body + ">";
        StatusOr<ir::Attribute> attr = ParseSdyText(sdy);
        if (!attr.ok()) return ErrorAt(at, "malformed " + std::string(field) + ": " + std::string(attr.status().message()));
        op.attrs.emplace_back(std::string(field), std::move(attr).value());
        lex_.Reset(end);
        Advance();
      }
      Arguments args;
      STABLERT_RETURN_IF_ERROR(ParseBlockArguments(&args));
      op.regions.resize(1);
      STABLERT_RETURN_IF_ERROR(ParseRegion(op.regions[0], &args));
      STABLERT_RETURN_IF_ERROR(ParseResultTypes(*this, result_count, &result_types));
      return FinishOp(std::move(op), block, results, result_types, start);
    }
    default:
      break;
  }

  // The common shape: [(operands)] | [@callee(operands)] | ["name"] operands and
  // `keyword = value` items, an optional attribute dictionary, `: types`.
  if (op.code == OpCode::kCall || op.code == OpCode::kCustomCall) {
    if (!Is(TokenKind::kAtId)) return ErrorExpected("a symbol name (@name)");
    std::string callee(tok_.text);
    Advance();
    if (op.code == OpCode::kCall) {
      op.attrs.emplace_back("callee", ir::Attribute(ir::Attribute::Symbol{std::move(callee)}));
    } else {
      op.attrs.emplace_back("call_target_name", ir::Attribute(std::move(callee)));
    }
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the operands"));
    STABLERT_RETURN_IF_ERROR(ParseValueUseList(&op.operands));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the operands"));
  } else if (op.code == OpCode::kComposite) {
    STABLERT_ASSIGN_OR_RETURN(std::string composite_name, ParseString());
    op.attrs.emplace_back("name", ir::Attribute(std::move(composite_name)));
  } else if (Is(TokenKind::kLParen)) {
    Advance();
    STABLERT_RETURN_IF_ERROR(ParseValueUseList(&op.operands));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the operands"));
  }
  int enum_position = 0;
  bool expect_item = true;
  std::vector<ir::ValueId>& operands = Scratch().operands;  // appended to op.operands below
  operands.clear();
  while (true) {
    if (Is(TokenKind::kPercentId)) {
      if (!expect_item) return ErrorExpected("',' between operands");
      STABLERT_ASSIGN_OR_RETURN(ir::ValueId v, ParseValueUse());
      operands.push_back(v);
      expect_item = false;
      if (Is(TokenKind::kLSquare) && op.code == OpCode::kGetTupleElement) {
        Advance();
        STABLERT_ASSIGN_OR_RETURN(int64_t index, ParseInteger());
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
        op.attrs.emplace_back("index", ir::Attribute(ir::Attribute::Integer{index, DType::kS32}));
      } else if (Is(TokenKind::kLSquare) && op.code == OpCode::kSlice) {
        Advance();
        std::vector<int64_t>& starts = int_buffer_;
        std::vector<int64_t>& limits = int_buffer2_;
        std::vector<int64_t>& strides = int_buffer3_;
        starts.clear();
        limits.clear();
        strides.clear();
        if (!Is(TokenKind::kRSquare)) {
          do {
            STABLERT_ASSIGN_OR_RETURN(int64_t s, ParseInteger());
            STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' in the slice range"));
            STABLERT_ASSIGN_OR_RETURN(int64_t l, ParseInteger());
            int64_t stride = 1;
            if (Consume(TokenKind::kColon)) {
              STABLERT_ASSIGN_OR_RETURN(stride, ParseInteger());
            }
            starts.push_back(s);
            limits.push_back(l);
            strides.push_back(stride);
          } while (Consume(TokenKind::kComma));
        }
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the slice ranges"));
        op.attrs.emplace_back("start_indices", i64_lists_.Get(starts));
        op.attrs.emplace_back("limit_indices", i64_lists_.Get(limits));
        op.attrs.emplace_back("strides", i64_lists_.Get(strides));
      }
    } else if (Is(TokenKind::kBareId) && !IsKeyword("loc")) {
      if (!expect_item) return ErrorExpected("',' or ':'");
      Token word = tok_;
      Advance();
      expect_item = false;
      if (op.code == OpCode::kSdyShardingConstraint || op.code == OpCode::kSdyReshard) {
        return ErrorAt(word.offset, "expected a sharding <@mesh, [...]>");
      }
      if (!Consume(TokenKind::kEqual)) {
        // Positional enums: compare's direction and type.
        if (op.code != OpCode::kCompare || enum_position > 1) {
          return ErrorAt(word.offset, "unexpected '" + std::string(word.text) + "' in " + std::string(name));
        }
        ir::EnumKind kind = enum_position == 0 ? ir::EnumKind::kComparisonDirection : ir::EnumKind::kComparisonType;
        std::optional<ir::EnumValue> v = EnumByName(kind, word.text);
        if (!v) {
          return ErrorAt(word.offset, std::string("expected a comparison ") +
                                          (enum_position == 0 ? "direction" : "type") + ", found '" +
                                          std::string(word.text) + "'");
        }
        op.attrs.emplace_back(enum_position == 0 ? "comparison_direction" : "compare_type", ir::Attribute(*v));
        ++enum_position;
        continue;
      }
      std::string_view keyword = word.text;
      if (op.code == OpCode::kDotGeneral && (keyword == "batching_dims" || keyword == "contracting_dims")) {
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute lhs, ParseSharedIntList());
        if (!ConsumeKeyword("x")) return ErrorExpected("'x' between the lhs and rhs dimensions");
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute rhs, ParseSharedIntList());
        const bool batching = keyword == "batching_dims";
        op.attrs.emplace_back(batching ? "lhs_batching_dimensions" : "lhs_contracting_dimensions", std::move(lhs));
        op.attrs.emplace_back(batching ? "rhs_batching_dimensions" : "rhs_contracting_dimensions", std::move(rhs));
        continue;
      }
      const Keyword* k = FindKeyword(op.code, keyword);
      if (!k) {
        // Generic `name = attribute` (sdy ops and others).
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute v, ParseAttribute());
        op.attrs.emplace_back(std::string(keyword), std::move(v));
        continue;
      }
      const std::string_view attr = k->attribute;
      size_t at = tok_.offset;
      if (attr == "precision_config") {
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' (precisions)"));
        ir::Attribute::Array list;
        if (!Is(TokenKind::kRSquare)) {
          do {
            std::optional<ir::EnumValue> v;
            if (Is(TokenKind::kBareId)) v = EnumByName(ir::EnumKind::kPrecision, tok_.text);
            if (!v) return ErrorExpected("DEFAULT, HIGH or HIGHEST");
            Advance();
            list.emplace_back(*v);
          } while (Consume(TokenKind::kComma));
        }
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the precisions"));
        op.attrs.emplace_back(std::string(attr), ir::Attribute(std::move(list)));
      } else if (attr == "dimension_numbers") {
        ir::Attribute::Dictionary fields;
        STABLERT_RETURN_IF_ERROR(ParseConvDimensionsBody(*this, &fields));
        fields.emplace_back("#struct", ir::Attribute(std::string("conv")));
        op.attrs.emplace_back(std::string(attr), ir::Attribute(std::move(fields)));
      } else if (attr == "window") {
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' (the convolution window)"));
        if (!Is(TokenKind::kRBrace)) {
          do {
            if (!Is(TokenKind::kBareId)) return ErrorExpected("a window field");
            std::string_view field = tok_.text;
            Advance();
            STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
            if (field == "pad") {
              STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
              std::vector<int64_t> pads;
              if (!Is(TokenKind::kRSquare)) {
                do {
                  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> pair, ParseIntList());
                  if (pair.size() != 2) return ErrorAt(tok_.offset, "expected [low, high] padding pairs");
                  pads.insert(pads.end(), pair.begin(), pair.end());
                } while (Consume(TokenKind::kComma));
              }
              STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
              auto padding = ZeroI64Elements({static_cast<int64_t>(pads.size() / 2), 2});
              auto data = std::make_shared<ir::ElementsData>(**padding.get<ir::Attribute::Elements>());
              std::memcpy(data->bytes.data(), pads.data(), pads.size() * 8);
              op.attrs.emplace_back("padding", ir::Attribute(ir::Attribute::Elements(std::move(data))));
            } else if (field == "reverse") {
              STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
              auto data = std::make_shared<ir::ElementsData>();
              if (!Is(TokenKind::kRSquare)) {
                do {
                  if (!IsKeyword("true") && !IsKeyword("false") && !Is(TokenKind::kInteger)) {
                    return ErrorExpected("true or false");
                  }
                  data->bytes.push_back(IsKeyword("true") || tok_.text == "1" ? 1 : 0);
                  Advance();
                } while (Consume(TokenKind::kComma));
              }
              STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
              data->type = ir::Type::Tensor(DType::kPred, {static_cast<int64_t>(data->bytes.size())});
              op.attrs.emplace_back("window_reversal", ir::Attribute(ir::Attribute::Elements(std::move(data))));
            } else {
              std::string_view target = field == "stride"       ? "window_strides"
                                        : field == "lhs_dilate" ? "lhs_dilation"
                                        : field == "rhs_dilate" ? "rhs_dilation"
                                                                : "";
              if (target.empty()) return ErrorAt(at, "unknown window field '" + std::string(field) + "'");
              STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList());
              op.attrs.emplace_back(std::string(target), I64Elements(v));
            }
          } while (Consume(TokenKind::kComma));
        }
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}' in the window"));
      } else if (attr == "format") {
        if (!Is(TokenKind::kBareId)) return ErrorExpected("a format eXmY");
        std::string_view f = tok_.text;
        size_t m = f.find('m');
        int64_t e = 0, mantissa = 0;
        bool ok = f.size() > 3 && f[0] == 'e' && m != std::string_view::npos && m > 1 && m + 1 < f.size();
        for (size_t i = 1; ok && i < m; ++i) ok = std::isdigit(static_cast<unsigned char>(f[i])), e = e * 10 + (f[i] - '0');
        for (size_t i = m + 1; ok && i < f.size(); ++i)
          ok = std::isdigit(static_cast<unsigned char>(f[i])), mantissa = mantissa * 10 + (f[i] - '0');
        if (!ok || e > 1000 || mantissa > 1000) return ErrorExpected("a format eXmY");
        Advance();
        op.attrs.emplace_back("exponent_bits", ir::Attribute(ir::Attribute::Integer{e, DType::kS32}));
        op.attrs.emplace_back("mantissa_bits", ir::Attribute(ir::Attribute::Integer{mantissa, DType::kS32}));
      } else if (attr == "fft_type" || attr == "rng_distribution" || attr == "rng_algorithm") {
        ir::EnumKind kind = attr == "fft_type"           ? ir::EnumKind::kFftType
                            : attr == "rng_distribution" ? ir::EnumKind::kRngDistribution
                                                         : ir::EnumKind::kRngAlgorithm;
        std::optional<ir::EnumValue> v;
        if (Is(TokenKind::kBareId)) v = EnumByName(kind, tok_.text);
        if (!v) return ErrorExpected("a value of " + std::string(attr));
        Advance();
        op.attrs.emplace_back(std::string(attr), ir::Attribute(*v));
      } else if (attr == "algorithm") {
        // `algorithm = <lhs_precision_type = tf32, ...>`.
        return UnimplementedAt(at, "dot_general algorithms in the pretty form are not supported");
      } else if (Is(TokenKind::kLSquare)) {
        STABLERT_ASSIGN_OR_RETURN(ir::Attribute list, ParseSharedIntList());
        op.attrs.emplace_back(std::string(attr), std::move(list));
      } else if (IsKeyword("true") || IsKeyword("false")) {
        op.attrs.emplace_back(std::string(attr), ir::Attribute(IsKeyword("true")));
        Advance();
      } else {
        STABLERT_ASSIGN_OR_RETURN(int64_t v, ParseInteger());
        op.attrs.emplace_back(std::string(attr), I64(v));
      }
    } else if (Is(TokenKind::kLess) &&
               (op.code == OpCode::kSdyShardingConstraint || op.code == OpCode::kSdyReshard)) {
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute sharding, ParseSdyAttributeText("#sdy.sharding"));
      op.attrs.emplace_back("sharding", std::move(sharding));
      expect_item = false;
    } else if (Is(TokenKind::kComma)) {
      if (expect_item) return ErrorExpected("an operand or attribute");
      Advance();
      expect_item = true;
    } else {
      break;
    }
  }
  op.operands.insert(op.operands.end(), operands.begin(), operands.end());
  if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&op.attrs));
  if (Is(TokenKind::kColon)) {
    STABLERT_RETURN_IF_ERROR(ParseResultTypes(*this, result_count, &result_types));
  } else if (result_count != 0) {
    return ErrorExpected("':' and the result types");
  }
  return FinishOp(std::move(op), block, results, result_types, start);
}

//===--- Functions and top-level ops --------------------------------------------------===//

Status Parser::ParseTopLevelOp() {
  size_t start = tok_.offset;
  if (IsKeyword("func.func")) {
    Advance();
    return ParseFunction(start);
  }
  if (IsKeyword("sdy.mesh")) {
    Advance();
    return ParseSdyMesh(start);
  }
  if (Is(TokenKind::kString) && tok_.text == "func.func") {
    Advance();
    std::vector<ResultGroup> none;
    return ParseGenericFunction(start, none);
  }
  if (Is(TokenKind::kString) && tok_.text == "sdy.mesh") {
    Advance();
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
    ir::Attribute::Dictionary props;
    if (Consume(TokenKind::kLess)) {
      STABLERT_RETURN_IF_ERROR(ParseDictionary(&props));
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    }
    if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&props));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':'"));
    std::vector<ir::Type> in, out;
    STABLERT_RETURN_IF_ERROR(ParseFunctionType(&in, &out));
    STABLERT_RETURN_IF_ERROR(ParseOptionalLocation().status());
    std::string mesh_name;
    ir::Attribute mesh;
    for (auto& [k, v] : props) {
      if (k == "sym_name" && v.get<std::string>()) mesh_name = *v.get<std::string>();
      if (k == "mesh") mesh = v;
    }
    module_->meshes.emplace_back(std::move(mesh_name), std::move(mesh));
    return OkStatus();
  }
  if ((Is(TokenKind::kBareId) || Is(TokenKind::kString)) && tok_.text.find('.') != std::string_view::npos) {
    return ErrorAt(start, "unexpected top-level operation '" + std::string(tok_.text) +
                              "' in the module (expected func.func or sdy.mesh)");
  }
  return ErrorExpected("func.func, sdy.mesh or '}'");
}

Status Parser::ParseSdyMesh(size_t start) {
  if (!Is(TokenKind::kAtId)) return ErrorExpected("the mesh name (@name)");
  std::string mesh_name(tok_.text);
  Advance();
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the mesh name"));
  if (!Is(TokenKind::kLess)) return ErrorExpected("'<' (the mesh)");
  STABLERT_ASSIGN_OR_RETURN(ir::Attribute mesh, ParseSdyAttributeText("#sdy.mesh"));
  if (Is(TokenKind::kLBrace)) {
    // Discardable attributes of the mesh op: not kept, as by the bytecode import.
    ir::Attribute::Dictionary ignored;
    STABLERT_RETURN_IF_ERROR(ParseDictionary(&ignored));
  }
  STABLERT_RETURN_IF_ERROR(ParseOptionalLocation().status());
  (void)start;
  module_->meshes.emplace_back(std::move(mesh_name), std::move(mesh));
  return OkStatus();
}

namespace {

Status PerValueAttrs(const ir::Attribute* attr, size_t count, std::vector<ir::Attribute::Dictionary>* out) {
  out->assign(count, {});
  if (!attr) return OkStatus();
  const auto* array = attr->get<ir::Attribute::Array>();
  if (!array) return InvalidArgument("arg_attrs/res_attrs is not an array");
  if (array->empty()) return OkStatus();
  if (array->size() != count) return InvalidArgument("arg_attrs/res_attrs has the wrong number of entries");
  for (size_t i = 0; i < count; ++i) {
    const auto* dict = (*array)[i].get<ir::Attribute::Dictionary>();
    if (!dict) return InvalidArgument("arg_attrs/res_attrs entry is not a dictionary");
    (*out)[i] = *dict;
    SortByName((*out)[i]);
  }
  return OkStatus();
}

}  // namespace

Status Parser::ParseFunction(size_t start) {
  ir::Function f;
  if (ConsumeKeyword("private")) {
    f.is_public = false;
  } else if (ConsumeKeyword("public") || ConsumeKeyword("nested")) {
  }
  if (!Is(TokenKind::kAtId)) return ErrorExpected("the function name (@name)");
  f.name = std::string(tok_.text);
  Advance();
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the function arguments"));
  Arguments args;
  if (!Is(TokenKind::kRParen)) {
    do {
      std::string_view arg_name;
      if (Is(TokenKind::kPercentId)) {
        arg_name = tok_.text;
        Advance();
        STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the argument's type"));
      }
      STABLERT_ASSIGN_OR_RETURN(ir::Type type, ParseValueType());
      ir::Attribute::Dictionary attrs;
      if (Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&attrs));
      SortByName(attrs);
      STABLERT_RETURN_IF_ERROR(ParseOptionalLocation().status());
      f.argument_types.push_back(type);
      f.argument_attrs.push_back(std::move(attrs));
      args.emplace_back(arg_name, std::move(type));
    } while (Consume(TokenKind::kComma));
  }
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the function arguments"));
  if (Consume(TokenKind::kArrow)) {
    // Result attributes only in the parenthesized form: `-> T {` opens the body.
    auto result = [&](bool with_attrs) -> Status {
      STABLERT_ASSIGN_OR_RETURN(ir::Type type, ParseValueType());
      ir::Attribute::Dictionary attrs;
      if (with_attrs && Is(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(ParseDictionary(&attrs));
      SortByName(attrs);
      f.result_types.push_back(std::move(type));
      f.result_attrs.push_back(std::move(attrs));
      return OkStatus();
    };
    if (Consume(TokenKind::kLParen)) {
      if (!Is(TokenKind::kRParen)) {
        do {
          STABLERT_RETURN_IF_ERROR(result(true));
        } while (Consume(TokenKind::kComma));
      }
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the result types"));
    } else {
      STABLERT_RETURN_IF_ERROR(result(false));
    }
  }
  if (ConsumeKeyword("attributes")) {
    ir::Attribute::Dictionary ignored;
    STABLERT_RETURN_IF_ERROR(ParseDictionary(&ignored));
  }
  bool has_body = Is(TokenKind::kLBrace);
  if (has_body) {
    for (const auto& [name, type] : args) {
      if (name.empty()) return ErrorAt(start, "function @" + f.name + " has a body but unnamed arguments");
    }
    // Reserve the body's ops from the function's line count (an upper bound for printed
    // programs, up to the ops of nested regions): a large body grows without moving.
    auto line = std::lower_bound(function_lines_.begin(), function_lines_.end(), std::make_pair(start, size_t{0}));
    if (line != function_lines_.end() && line->first == start) {
      const size_t end = line + 1 != function_lines_.end() ? (line + 1)->second : line_count_;
      ops_hint_ = std::min<size_t>(end - line->second, size_t{1} << 22);
    }
    Status status = ParseRegion(f.body, &args);
    ops_hint_ = 0;
    if (!status.ok()) return status;
  }
  STABLERT_ASSIGN_OR_RETURN(f.location, ParseOptionalLocation());
  // A declaration (no body) cannot run; it is left out as by the bytecode import.
  if (has_body && !f.body.blocks.empty()) module_->functions.push_back(std::move(f));
  return OkStatus();
}

Status Parser::ParseGenericFunction(size_t start, std::vector<ResultGroup>& results) {
  if (!results.empty()) return ErrorAt(start, "func.func has no results");
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' (func.func has no operands)"));
  ir::Function f;
  ir::Attribute::Dictionary props;
  bool has_type = false;
  auto entries = [&](TokenKind close) -> Status {
    if (Consume(close)) return OkStatus();
    do {
      if (!Is(TokenKind::kBareId)) return ErrorExpected("an attribute name");
      std::string key(tok_.text);
      Advance();
      STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      if (key == "function_type") {
        STABLERT_RETURN_IF_ERROR(ParseFunctionType(&f.argument_types, &f.result_types));
        has_type = true;
        continue;
      }
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute v, ParseAttribute());
      props.emplace_back(std::move(key), std::move(v));
    } while (Consume(TokenKind::kComma));
    return Expect(close, "',' or the end of the attributes");
  };
  if (Consume(TokenKind::kLess)) {
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
    STABLERT_RETURN_IF_ERROR(entries(TokenKind::kRBrace));
    STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' after the properties"));
  }
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before the function body"));
  size_t body_at = tok_.offset;
  // The body's block arguments are the parameters; their types come from function_type,
  // which precedes the body in the generic form.
  STABLERT_RETURN_IF_ERROR(ParseRegion(f.body));
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the function body"));
  if (Consume(TokenKind::kLBrace)) STABLERT_RETURN_IF_ERROR(entries(TokenKind::kRBrace));
  STABLERT_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the operation's type"));
  std::vector<ir::Type> in, out;
  STABLERT_RETURN_IF_ERROR(ParseFunctionType(&in, &out));
  STABLERT_ASSIGN_OR_RETURN(f.location, ParseOptionalLocation());
  if (!has_type) return ErrorAt(start, "func.func lacks function_type");
  const ir::Attribute* arg_attrs = nullptr;
  const ir::Attribute* res_attrs = nullptr;
  bool has_name = false;
  for (const auto& [k, v] : props) {
    if (k == "sym_name" && v.get<std::string>()) {
      f.name = *v.get<std::string>();
      has_name = true;
    } else if (k == "sym_visibility" && v.get<std::string>()) {
      f.is_public = *v.get<std::string>() == "public";
    } else if (k == "arg_attrs") {
      arg_attrs = &v;
    } else if (k == "res_attrs") {
      res_attrs = &v;
    }
  }
  if (!has_name) return ErrorAt(start, "func.func lacks sym_name");
  Status status = PerValueAttrs(arg_attrs, f.argument_types.size(), &f.argument_attrs);
  if (status.ok()) status = PerValueAttrs(res_attrs, f.result_types.size(), &f.result_attrs);
  if (!status.ok()) return ErrorAt(start, "in function @" + f.name + ": " + std::string(status.message()));
  if (f.body.blocks.empty()) return OkStatus();
  const ir::Block& entry = f.body.blocks[0];
  if (entry.arguments.size() != f.argument_types.size()) {
    return ErrorAt(body_at, "function @" + f.name + " body has " + std::to_string(entry.arguments.size()) +
                                " arguments, function_type has " + std::to_string(f.argument_types.size()));
  }
  module_->functions.push_back(std::move(f));
  return OkStatus();
}

}  // namespace text
}  // namespace stablert::stablehlo
