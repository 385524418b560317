#include "hlo/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ir/float_format.h"

namespace stablert::hlo {
namespace {

//===--- Lists and scalars ----------------------------------------------------------===//

// `items`, each written by `text`, joined by `separator`.
template <typename T, typename F>
std::string Join(const std::vector<T>& items, std::string_view separator, F text) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += text(items[i]);
  }
  return out;
}

std::string JoinText(const std::vector<std::string>& items, std::string_view separator) {
  return Join(items, separator, [](const std::string& item) { return item; });
}

std::string Int(int64_t value) { return std::to_string(value); }

// The pieces, concatenated.
std::string Cat(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (std::string_view piece : pieces) out += piece;
  return out;
}

// `{inner}`.
std::string Braced(std::string_view inner) { return Cat({"{", inner, "}"}); }

// `{0,1,2}`.
std::string IntList(const std::vector<int64_t>& values) { return Braced(Join(values, ",", Int)); }

template <typename T, typename F>
bool Any(const std::vector<T>& items, F predicate) {
  return std::any_of(items.begin(), items.end(), predicate);
}

// `text` in double quotes with C escapes, as XLA writes strings and its parser reads them:
// \n \r \t \" \' \\, and other bytes outside printable ASCII as three octal digits.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"':
      case '\'':
      case '\\':
        out += '\\';
        out += static_cast<char>(ch);
        break;
      default:
        if (ch >= 0x20 && ch < 0x7F) {
          out += static_cast<char>(ch);
        } else {
          char octal[5];
          std::snprintf(octal, sizeof(octal), "\\%03o", ch);
          out += octal;
        }
    }
  }
  return out + "\"";
}

// names[value]; the number when the value has no name here.
std::string EnumName(int64_t value, std::initializer_list<std::string_view> names) {
  if (value < 0 || value >= static_cast<int64_t>(names.size())) return Int(value);
  return std::string(names.begin()[value]);
}

// f32 as the shortest text that reads back as the same float; f64 and the narrower formats
// as the shortest text of their exact value as a double, which XLA's parser (reading a
// double and converting it) turns back into the same value however it rounds. XLA's parser
// reads a number without '.' or exponent as an integer, which would drop the sign of -0
// and wrap values beyond int64: those get a ".0".
std::string FloatText(double value, DType dtype) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  // f32 subnormals as their exact double: narrowing one to float would flush it to 0 on a
  // thread that flushes denormals (FTZ); the double's text reads back as the same float.
  const bool as_float = dtype == DType::kF32 && std::fabs(value) >= std::numeric_limits<float>::min();
  char* end = as_float ? std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value)).ptr
                       : std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;
  std::string text(buffer, end);
  const bool reads_as_integer = text.find_first_of(".e") == std::string::npos;
  const bool integer_loses_value = value == 0 ? std::signbit(value) : std::fabs(value) >= 0x1p63;
  if (reads_as_integer && integer_loses_value) text += ".0";
  return text;
}

//===--- Shapes ---------------------------------------------------------------------===//

// `f32[2,3]{1,0}`, `s32[]`, `token[]`, `(f32[2]{0}, s32[])`.
std::string ShapeText(const Shape& shape) {
  switch (shape.kind) {
    case Shape::Kind::kToken: return "token[]";
    case Shape::Kind::kTuple: return Cat({"(", Join(shape.elements, ", ", ShapeText), ")"});
    case Shape::Kind::kArray: break;
  }
  std::string text = Cat({ElementTypeName(shape.dtype), "[", Join(shape.dims, ",", Int), "]"});
  if (!shape.dims.empty()) text += IntList(shape.MinorToMajor());
  return text;
}

//===--- Constants ------------------------------------------------------------------===//

// The signed or unsigned value of an integer element (sub-byte integers take one byte each,
// of which only the low DTypeBitWidth bits count).
std::string IntegerText(DType dtype, const uint8_t* data) {
  const int width = DTypeBitWidth(dtype);
  uint64_t bits = ir::LoadElementBits(dtype, data);
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  if (DTypeKindOf(dtype) == DTypeKind::kUnsigned) return std::to_string(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  return Int(static_cast<int64_t>((bits ^ sign) - sign));
}

std::string ElementText(DType dtype, const uint8_t* data) {
  switch (DTypeKindOf(dtype)) {
    case DTypeKind::kBool: return *data != 0 ? "true" : "false";
    case DTypeKind::kSigned:
    case DTypeKind::kUnsigned: return IntegerText(dtype, data);
    case DTypeKind::kFloat: return FloatText(ir::FloatBitsToDouble(dtype, ir::LoadElementBits(dtype, data)), dtype);
    case DTypeKind::kComplex: {
      const DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
      return Cat({"(", ElementText(part, data), ", ", ElementText(part, data + DTypeByteSize(part)), ")"});
    }
    case DTypeKind::kOther: break;
  }
  return "?";
}

// Dimension `dim` onwards of the literal, from row-major element `*index` on. As XLA lays
// literals out: rank 1 as `{1, 2}`; in higher ranks `{ ..., ... }` at every level, except
// innermost rows of at most one element (`{1}`, `{}`).
void AppendLiteral(const ir::ElementsData& data, size_t dim, int64_t* index, std::string& out) {
  const Dims& dims = data.type.dims;
  if (dim == dims.size()) {
    out += ElementText(data.type.dtype, data.Element((*index)++));
    return;
  }
  const bool spaced = dims.size() > 1 && (dim + 1 < dims.size() || dims[dim] > 1);
  out += spaced ? "{ " : "{";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i > 0) out += ", ";
    AppendLiteral(data, dim + 1, index, out);
  }
  out += spaced ? " }" : "}";
}

std::string LiteralText(const ir::ElementsData& data) {
  std::string out;
  int64_t index = 0;
  AppendLiteral(data, 0, &index, out);
  return out;
}

//===--- Attribute values -----------------------------------------------------------===//

// `name=values` of one window field over all dimensions, e.g. `stride=2x1`.
template <typename F>
std::string WindowField(const std::vector<WindowDimension>& window, std::string_view name, F text) {
  return Cat({name, "=", Join(window, "x", text)});
}

// `size=2x2 stride=2x1 pad=0_1x0_0 ...`: the size, then each field in which some dimension
// differs from the default.
std::string WindowText(const std::vector<WindowDimension>& window) {
  using D = const WindowDimension&;
  std::vector<std::string> fields = {WindowField(window, "size", [](D d) { return Int(d.size); })};
  if (Any(window, [](D d) { return d.stride != 1; })) {
    fields.push_back(WindowField(window, "stride", [](D d) { return Int(d.stride); }));
  }
  if (Any(window, [](D d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    fields.push_back(
        WindowField(window, "pad", [](D d) { return Cat({Int(d.padding_low), "_", Int(d.padding_high)}); }));
  }
  if (Any(window, [](D d) { return d.base_dilation != 1; })) {
    fields.push_back(WindowField(window, "lhs_dilate", [](D d) { return Int(d.base_dilation); }));
  }
  if (Any(window, [](D d) { return d.window_dilation != 1; })) {
    fields.push_back(WindowField(window, "rhs_dilate", [](D d) { return Int(d.window_dilation); }));
  }
  if (Any(window, [](D d) { return d.window_reversal; })) {
    fields.push_back(WindowField(window, "rhs_reversal", [](D d) { return Int(d.window_reversal ? 1 : 0); }));
  }
  return JoinText(fields, " ");
}

// One operand's dimension labels in dimension order: `named` letters at their dimension
// numbers, spatial dimension i as "i", '?' where no number names a dimension.
std::string DimLabels(std::initializer_list<std::pair<int64_t, char>> named, const std::vector<int64_t>& spatial) {
  std::vector<std::string> labels;
  auto label = [&labels](int64_t dim, std::string text) {
    if (dim < 0) return;
    if (labels.size() <= static_cast<size_t>(dim)) labels.resize(static_cast<size_t>(dim) + 1, "?");
    labels[static_cast<size_t>(dim)] = std::move(text);
  };
  for (const auto& [dim, letter] : named) label(dim, std::string(1, letter));
  for (size_t i = 0; i < spatial.size(); ++i) label(spatial[i], std::to_string(i));
  return JoinText(labels, "");
}

// `b01f_01io->b01f`.
std::string DimLabelsText(const ConvolutionDimensionNumbers& d) {
  return Cat({DimLabels({{d.input_batch, 'b'}, {d.input_feature, 'f'}}, d.input_spatial), "_",
              DimLabels({{d.kernel_input_feature, 'i'}, {d.kernel_output_feature, 'o'}}, d.kernel_spatial), "->",
              DimLabels({{d.output_batch, 'b'}, {d.output_feature, 'f'}}, d.output_spatial)});
}

// `{[0:2], [1:5]}`; every stride shows when one differs from 1: `{[0:2:1], [1:5:2]}`.
std::string SliceText(const std::vector<SliceDimension>& slice) {
  const bool strided = Any(slice, [](const SliceDimension& d) { return d.stride != 1; });
  return Braced(Join(slice, ", ", [strided](const SliceDimension& d) {
    return Cat({"[", Int(d.start), ":", Int(d.limit), strided ? ":" : "", strided ? Int(d.stride) : "", "]"});
  }));
}

// `0_1x2_0`; with the interior padding of every dimension when one has some: `0_1_0x2_0_1`.
std::string PaddingText(const std::vector<PaddingDimension>& padding) {
  const bool interior = Any(padding, [](const PaddingDimension& d) { return d.interior != 0; });
  return Join(padding, "x", [interior](const PaddingDimension& d) {
    return Cat({Int(d.low), "_", Int(d.high), interior ? "_" : "", interior ? Int(d.interior) : ""});
  });
}

// The comparison type XLA assumes for operands of `dtype` (and leaves out of the text).
std::string_view DefaultComparisonType(DType dtype) {
  switch (DTypeKindOf(dtype)) {
    case DTypeKind::kFloat:
    case DTypeKind::kComplex: return "FLOAT";
    case DTypeKind::kSigned: return "SIGNED";
    case DTypeKind::kBool:
    case DTypeKind::kUnsigned: return "UNSIGNED";
    case DTypeKind::kOther: break;
  }
  return "";
}

//===--- Instructions ---------------------------------------------------------------===//

// The module's computations, and the instructions of the computation being written, by id.
struct Names {
  const std::unordered_map<int64_t, const Computation*>& computations;
  std::unordered_map<int64_t, const Instruction*> instructions;

  std::string ComputationName(int64_t id) const {
    auto it = computations.find(id);
    return it == computations.end() ? "?" : it->second->name;
  }
  const Instruction* FindInstruction(int64_t id) const {
    auto it = instructions.find(id);
    return it == instructions.end() ? nullptr : it->second;
  }
  std::string InstructionName(int64_t id) const {
    const Instruction* inst = FindInstruction(id);
    return inst ? inst->name : "?";
  }
};

using Attributes = std::vector<std::string>;

void Add(Attributes& attrs, std::string_view name, const std::string& value) {
  attrs.push_back(Cat({name, "=", value}));
}

void AddIfNonEmpty(Attributes& attrs, std::string_view name, const std::vector<int64_t>& values) {
  if (!values.empty()) Add(attrs, name, IntList(values));
}

void AddDimensions(const Instruction& inst, Attributes& attrs) {
  if (!inst.dimensions) return;
  if (inst.opcode != "iota") {
    Add(attrs, "dimensions", IntList(*inst.dimensions));
  } else if (!inst.dimensions->empty()) {
    Add(attrs, "iota_dimension", Int(inst.dimensions->front()));
  }
}

// A collective's channel and replica groups come first, then the dimensions list (of any
// op), then the collective's other options; reduce-scatter (an all-reduce in XLA) writes
// its dimension after use_global_device_ids.
void AddDimensionAndCollectiveAttributes(const Instruction& inst, Attributes& attrs) {
  if (inst.channel_id) Add(attrs, "channel_id", Int(*inst.channel_id));
  if (inst.replica_groups) Add(attrs, "replica_groups", Braced(Join(*inst.replica_groups, ",", IntList)));
  const bool dimensions_last = inst.opcode == "reduce-scatter";
  if (!dimensions_last) AddDimensions(inst, attrs);
  if (inst.use_global_device_ids) Add(attrs, "use_global_device_ids", "true");
  if (dimensions_last) AddDimensions(inst, attrs);
  if (inst.source_target_pairs) {
    Add(attrs, "source_target_pairs", Braced(Join(*inst.source_target_pairs, ",", [](const auto& pair) {
          return Braced(Cat({Int(pair.first), ",", Int(pair.second)}));
        })));
  }
}

void AddIndexingAttributes(const Instruction& inst, Attributes& attrs) {
  if (inst.tuple_index) Add(attrs, "index", Int(*inst.tuple_index));
  if (inst.slice) Add(attrs, "slice", SliceText(*inst.slice));
  if (inst.padding) Add(attrs, "padding", PaddingText(*inst.padding));
  if (inst.dynamic_slice_sizes) Add(attrs, "dynamic_slice_sizes", IntList(*inst.dynamic_slice_sizes));
}

void AddWindowAttributes(const Instruction& inst, Attributes& attrs) {
  if (inst.window && !inst.window->empty()) Add(attrs, "window", Braced(WindowText(*inst.window)));
  if (inst.convolution_dimension_numbers) Add(attrs, "dim_labels", DimLabelsText(*inst.convolution_dimension_numbers));
  if (inst.feature_group_count != 1) Add(attrs, "feature_group_count", Int(inst.feature_group_count));
  if (inst.batch_group_count != 1) Add(attrs, "batch_group_count", Int(inst.batch_group_count));
}

void AddDotAttributes(const Instruction& inst, Attributes& attrs) {
  if (const auto& d = inst.dot_dimension_numbers) {
    AddIfNonEmpty(attrs, "lhs_batch_dims", d->lhs_batch);
    Add(attrs, "lhs_contracting_dims", IntList(d->lhs_contracting));
    AddIfNonEmpty(attrs, "rhs_batch_dims", d->rhs_batch);
    Add(attrs, "rhs_contracting_dims", IntList(d->rhs_contracting));
  }
  if (Any(inst.operand_precision, [](int32_t p) { return p != 0; })) {
    Add(attrs, "operand_precision", Braced(Join(inst.operand_precision, ",", [](int32_t p) {
          return EnumName(p, {"default", "high", "highest", "packed_nibble"});
        })));
  }
}

void AddGatherScatterAttributes(const Instruction& inst, Attributes& attrs) {
  if (const auto& g = inst.gather_dimension_numbers) {
    Add(attrs, "offset_dims", IntList(g->offset_dims));
    Add(attrs, "collapsed_slice_dims", IntList(g->collapsed_slice_dims));
    Add(attrs, "start_index_map", IntList(g->start_index_map));
    AddIfNonEmpty(attrs, "operand_batching_dims", g->operand_batching_dims);
    AddIfNonEmpty(attrs, "start_indices_batching_dims", g->start_indices_batching_dims);
    Add(attrs, "index_vector_dim", Int(g->index_vector_dim));
  }
  if (inst.gather_slice_sizes) Add(attrs, "slice_sizes", IntList(*inst.gather_slice_sizes));
  if (const auto& s = inst.scatter_dimension_numbers) {
    Add(attrs, "update_window_dims", IntList(s->update_window_dims));
    Add(attrs, "inserted_window_dims", IntList(s->inserted_window_dims));
    Add(attrs, "scatter_dims_to_operand_dims", IntList(s->scatter_dims_to_operand_dims));
    AddIfNonEmpty(attrs, "input_batching_dims", s->input_batching_dims);
    AddIfNonEmpty(attrs, "scatter_indices_batching_dims", s->scatter_indices_batching_dims);
    Add(attrs, "index_vector_dim", Int(s->index_vector_dim));
  }
  if (inst.indices_are_sorted) Add(attrs, "indices_are_sorted", "true");
  if (inst.unique_indices) Add(attrs, "unique_indices", "true");
}

void AddCompareAttributes(const Instruction& inst, const Names& names, Attributes& attrs) {
  if (inst.comparison_direction) Add(attrs, "direction", *inst.comparison_direction);
  if (!inst.comparison_type) return;
  const Instruction* lhs = inst.operands.empty() ? nullptr : names.FindInstruction(inst.operands.front());
  const DType dtype = lhs ? lhs->shape.dtype : DType::kInvalid;
  if (*inst.comparison_type != DefaultComparisonType(dtype)) Add(attrs, "type", *inst.comparison_type);
}

// Options of single ops: reduce-precision, fft, batch norm, sort, triangular-solve and
// cholesky (whose false flags XLA leaves out), rng.
void AddOpOptionAttributes(const Instruction& inst, Attributes& attrs) {
  if (inst.exponent_bits) Add(attrs, "exponent_bits", Int(*inst.exponent_bits));
  if (inst.mantissa_bits) Add(attrs, "mantissa_bits", Int(*inst.mantissa_bits));
  if (inst.fft_type) Add(attrs, "fft_type", EnumName(*inst.fft_type, {"FFT", "IFFT", "RFFT", "IRFFT"}));
  if (inst.fft_length) Add(attrs, "fft_length", IntList(*inst.fft_length));
  if (inst.epsilon) Add(attrs, "epsilon", FloatText(*inst.epsilon, DType::kF32));
  if (inst.feature_index) Add(attrs, "feature_index", Int(*inst.feature_index));
  if (inst.is_stable) Add(attrs, "is_stable", "true");
  if (inst.left_side.value_or(false)) Add(attrs, "left_side", "true");
  if (inst.lower.value_or(false)) Add(attrs, "lower", "true");
  if (inst.unit_diagonal.value_or(false)) Add(attrs, "unit_diagonal", "true");
  if (inst.transpose_a) {
    Add(attrs, "transpose_a",
        EnumName(*inst.transpose_a, {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}));
  }
  if (inst.rng_algorithm) {
    Add(attrs, "algorithm", EnumName(*inst.rng_algorithm, {"rng_default", "rng_three_fry", "rng_philox"}));
  }
  if (inst.rng_distribution) {
    Add(attrs, "distribution", EnumName(*inst.rng_distribution, {"rng_invalid", "rng_uniform", "rng_normal"}));
  }
}

void AddCustomCallAttributes(const Instruction& inst, Attributes& attrs) {
  if (inst.custom_call_target) Add(attrs, "custom_call_target", Quoted(*inst.custom_call_target));
  if (inst.operand_shapes_with_layout) {
    Add(attrs, "operand_layout_constraints", Braced(Join(*inst.operand_shapes_with_layout, ", ", ShapeText)));
  }
  if (inst.custom_call_has_side_effect) Add(attrs, "custom_call_has_side_effect", "true");
  // API_VERSION_ORIGINAL (1) is XLA's default.
  if (inst.custom_call_api_version > 1) {
    Add(attrs, "api_version",
        EnumName(inst.custom_call_api_version,
                 {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                  "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"}));
  }
}

// How the text names the computations an instruction calls: one attribute per computation,
// in order, or (`list`) one attribute listing them all.
struct CalledSyntax {
  bool list;
  std::vector<std::string_view> names;
};

CalledSyntax CalledRoleSyntax(CalledRole role) {
  switch (role) {
    case CalledRole::kToApply: return {false, {"to_apply"}};
    case CalledRole::kWhile: return {false, {"condition", "body"}};
    case CalledRole::kTrueFalse: return {false, {"true_computation", "false_computation"}};
    case CalledRole::kSelectScatter: return {false, {"select", "scatter"}};
    case CalledRole::kBranches: return {true, {"branch_computations"}};
    case CalledRole::kCustomCall: return {true, {"called_computations"}};
  }
  return {false, {}};
}

void AddCalledComputations(const Instruction& inst, const Names& names, Attributes& attrs) {
  if (inst.called.empty()) return;
  auto name = [&names](int64_t id) { return names.ComputationName(id); };
  const CalledSyntax syntax = CalledRoleSyntax(inst.called_role);
  if (syntax.list) {
    Add(attrs, syntax.names.front(), Braced(Join(inst.called, ", ", name)));
    return;
  }
  // A while keeps its body first (XLA's order); the text names the condition first.
  const bool body_first = inst.called_role == CalledRole::kWhile;
  for (size_t i = 0; i < inst.called.size() && i < syntax.names.size(); ++i) {
    Add(attrs, syntax.names[i], name(inst.called[body_first ? inst.called.size() - 1 - i : i]));
  }
}

void AddMetadata(const Metadata& metadata, Attributes& attrs) {
  std::vector<std::string> fields;
  if (!metadata.op_name.empty()) fields.push_back(Cat({"op_name=", Quoted(metadata.op_name)}));
  if (!metadata.source_file.empty()) fields.push_back(Cat({"source_file=", Quoted(metadata.source_file)}));
  if (metadata.source_line != 0) fields.push_back(Cat({"source_line=", Int(metadata.source_line)}));
  if (!fields.empty()) Add(attrs, "metadata", Braced(JoinText(fields, " ")));
}

// In XLA's order: the op's own attributes, called computations, metadata, backend config.
Attributes InstructionAttributes(const Instruction& inst, const Names& names) {
  Attributes attrs;
  AddDimensionAndCollectiveAttributes(inst, attrs);
  AddIndexingAttributes(inst, attrs);
  AddWindowAttributes(inst, attrs);
  AddDotAttributes(inst, attrs);
  AddGatherScatterAttributes(inst, attrs);
  AddCompareAttributes(inst, names, attrs);
  AddOpOptionAttributes(inst, attrs);
  AddCustomCallAttributes(inst, attrs);
  AddCalledComputations(inst, names, attrs);
  AddMetadata(inst.metadata, attrs);
  if (inst.backend_config && !inst.backend_config->empty()) Add(attrs, "backend_config", Quoted(*inst.backend_config));
  return attrs;
}

// What goes in the parentheses: a parameter's number, a constant's value, or the operands.
std::string OperandsText(const Instruction& inst, const Names& names) {
  if (inst.parameter_number) return Int(*inst.parameter_number);
  if (inst.literal && *inst.literal) return LiteralText(**inst.literal);
  return Join(inst.operands, ", ", [&names](int64_t id) { return names.InstructionName(id); });
}

std::string InstructionText(const Instruction& inst, bool root, const Names& names) {
  std::string text = Cat({root ? "ROOT " : "", inst.name, " = ", ShapeText(inst.shape), " ", inst.opcode, "(",
                          OperandsText(inst, names), ")"});
  const Attributes attrs = InstructionAttributes(inst, names);
  if (!attrs.empty()) text += Cat({", ", JoinText(attrs, ", ")});
  return text;
}

std::string ComputationText(const Computation& computation, bool entry,
                            const std::unordered_map<int64_t, const Computation*>& computations) {
  Names names{computations, {}};
  for (const Instruction& inst : computation.instructions) names.instructions[inst.id] = &inst;
  std::string text = Cat({entry ? "ENTRY " : "", computation.name, " {\n"});
  for (const Instruction& inst : computation.instructions) {
    text += Cat({"  ", InstructionText(inst, inst.id == computation.root_id, names), "\n"});
  }
  return text + "}\n";
}

// `HloModule name, entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}`.
std::string HeaderText(const Module& module, const Computation* entry) {
  std::string text = Cat({"HloModule ", module.name});
  if (entry) {
    text += Cat({", entry_computation_layout={(", Join(entry->parameter_shapes, ", ", ShapeText), ")->",
                 ShapeText(entry->result_shape), "}"});
  }
  return text + "\n";
}

}  // namespace

std::string ToText(const Module& module) {
  std::unordered_map<int64_t, const Computation*> computations;
  for (const Computation& computation : module.computations) computations[computation.id] = &computation;
  auto entry = computations.find(module.entry_computation_id);
  std::string text = HeaderText(module, entry == computations.end() ? nullptr : entry->second);
  for (const Computation& computation : module.computations) {
    text += Cat({"\n", ComputationText(computation, computation.id == module.entry_computation_id, computations)});
  }
  return text;
}

}  // namespace stablert::hlo
