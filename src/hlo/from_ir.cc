#include "hlo/from_ir.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/stablehlo_text.h"

namespace stablert::hlo {
namespace {

using ir::OpCode;
using ir::ValueId;

std::string OpLabel(const ir::Operation& op) { return std::string(ir::OpName(op.code)); }

Status NoHloForm(const ir::Operation& op, std::string_view why) {
  return Unimplemented("HLO export: " + OpLabel(op) + " " + std::string(why));
}

// ------------------------------------------------------------------ attribute readers

// An integer attribute of any rank (lists, Nx2 paddings, replica groups), row-major.
std::vector<int64_t> Ints(const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return {};
  if (const auto* e = attr->get<ir::Attribute::Elements>()) {
    const ir::ElementsData& data = **e;
    std::vector<int64_t> out(static_cast<size_t>(data.NumElements()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = data.IntegerAt(static_cast<int64_t>(i));
    return out;
  }
  return attr->AsIntArray().value_or(std::vector<int64_t>{});
}

// The row length of a 2-D integer attribute (replica_groups: the group size).
int64_t RowLength(const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return 0;
  if (const auto* e = attr->get<ir::Attribute::Elements>()) {
    const ir::Type& type = (*e)->type;
    return type.rank() == 2 ? type.dims[1] : type.rank() == 1 ? type.dims[0] : 1;
  }
  return 0;
}

int64_t Int(const ir::Operation& op, std::string_view name, int64_t fallback = 0) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return fallback;
  if (auto v = attr->AsInt()) return *v;
  if (const auto* e = attr->get<ir::EnumValue>()) return e->value;
  return fallback;
}

bool Bool(const ir::Operation& op, std::string_view name, bool fallback = false) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return fallback;
  if (auto v = attr->AsBool()) return *v;
  return fallback;
}

std::vector<bool> Bools(const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  if (attr == nullptr) return {};
  return attr->AsBoolArray().value_or(std::vector<bool>{});
}

// precision_config: one xla.PrecisionConfig.Precision per operand (same numbering).
std::vector<int32_t> Precisions(const ir::Operation& op) {
  std::vector<int32_t> out;
  const ir::Attribute* attr = op.attr("precision_config");
  if (attr == nullptr) return out;
  if (const auto* array = attr->get<ir::Attribute::Array>())
    for (const ir::Attribute& element : *array) {
      if (const auto* e = element.get<ir::EnumValue>()) out.push_back(static_cast<int32_t>(e->value));
      else if (auto v = element.AsInt()) out.push_back(static_cast<int32_t>(*v));
    }
  return out;
}

// dot_general's dimension lists: flat attributes, or one dictionary holding them.
std::vector<int64_t> DotList(const ir::Operation& op, std::string_view name) {
  if (const ir::Attribute* numbers = op.attr("dot_dimension_numbers"))
    if (const auto* dict = numbers->get<ir::Attribute::Dictionary>()) {
      const ir::Attribute* attr = ir::FindAttr(*dict, name);
      return attr ? attr->AsIntArray().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
    }
  return Ints(op, name);
}

std::string DirectionName(int64_t direction) {
  static constexpr const char* kNames[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  return direction >= 0 && direction < 6 ? kNames[direction] : "EQ";
}

// The comparison type XLA assumes for `dtype` when a compare names none.
std::string DefaultComparisonType(DType dtype) {
  switch (DTypeKindOf(dtype)) {
    case DTypeKind::kFloat:
    case DTypeKind::kComplex: return "FLOAT";
    case DTypeKind::kSigned: return "SIGNED";
    default: return "UNSIGNED";
  }
}

Shape ShapeOf(const ir::Type& type) {
  switch (type.kind) {
    case ir::Type::Kind::kToken: return Shape::Token();
    case ir::Type::Kind::kTuple: {
      std::vector<Shape> elements;
      for (const ir::Type& element : type.elements) elements.push_back(ShapeOf(element));
      return Shape::Tuple(std::move(elements));
    }
    default: return Shape::Array(type.dtype, type.dims);
  }
}

// ------------------------------------------------------------------ the builder

// One computation being built: its instructions and where each IR value lives in it.
struct Scope {
  Computation computation;
  std::unordered_map<ValueId, int64_t> values;
  std::unordered_map<int64_t, size_t> index;  // instruction id -> position
};

class Builder {
 public:
  explicit Builder(const ir::Module& module) : in_(module) {}

  StatusOr<Module> Build() {
    for (const ir::Function& function : in_.functions) FindConstants(function.body);
    const ir::Function* entry = in_.EntryFunction();
    if (entry == nullptr) return InvalidArgument("HLO export: the module has no entry function");
    out_.name = in_.name.empty() ? "module" : in_.name;
    STABLERT_ASSIGN_OR_RETURN(int64_t id, FunctionComputation(*entry, /*entry=*/true));
    out_.entry_computation_id = id;
    return std::move(out_);
  }

 private:
  // ---------------------------------------------------------------- instructions

  void FindConstants(const ir::Region& region) {
    for (const ir::Block& block : region.blocks)
      for (const ir::Operation& op : block.ops) {
        if (op.code == OpCode::kConstant && op.results.size() == 1) constants_[op.results[0]] = &op;
        for (const ir::Region& inner : op.regions) FindConstants(inner);
      }
  }

  int64_t NextId() { return next_id_++; }

  const Shape& ShapeOfInstruction(const Scope& scope, int64_t id) const {
    return scope.computation.instructions[scope.index.at(id)].shape;
  }

  int64_t Add(Scope& scope, Instruction inst, ir::LocationId location = 0) {
    inst.id = NextId();
    // Names are unique in the module: a prefix (the opcode unless the caller chose one) and the id.
    inst.name = (inst.name.empty() ? inst.opcode : inst.name) + "." + std::to_string(inst.id);
    if (location != 0 && location < in_.locations.size()) {
      const ir::Location& loc = in_.locations[location];
      inst.metadata.op_name = loc.name;
      inst.metadata.source_file = loc.file;
      inst.metadata.source_line = loc.line;
    }
    scope.index[inst.id] = scope.computation.instructions.size();
    const int64_t id = inst.id;
    scope.computation.instructions.push_back(std::move(inst));
    return id;
  }

  Instruction Make(std::string opcode, Shape shape, std::vector<int64_t> operands = {}) {
    Instruction inst;
    inst.opcode = std::move(opcode);
    inst.shape = std::move(shape);
    inst.operands = std::move(operands);
    return inst;
  }

  int64_t Tuple(Scope& scope, std::vector<int64_t> operands) {
    std::vector<Shape> shapes;
    for (int64_t id : operands) shapes.push_back(ShapeOfInstruction(scope, id));
    return Add(scope, Make("tuple", Shape::Tuple(std::move(shapes)), std::move(operands)));
  }

  int64_t Element(Scope& scope, int64_t tuple, int64_t index) {
    Instruction inst = Make("get-tuple-element", ShapeOfInstruction(scope, tuple).elements[static_cast<size_t>(index)],
                            {tuple});
    inst.tuple_index = index;
    return Add(scope, std::move(inst));
  }

  StatusOr<int64_t> Value(const Scope& scope, ValueId value) const {
    auto it = scope.values.find(value);
    if (it == scope.values.end()) return Internal("HLO export: value %" + std::to_string(value) + " used before it is defined");
    return it->second;
  }

  StatusOr<std::vector<int64_t>> Values(const Scope& scope, const std::vector<ValueId>& values) const {
    std::vector<int64_t> ids;
    for (ValueId v : values) {
      STABLERT_ASSIGN_OR_RETURN(int64_t id, Value(scope, v));
      ids.push_back(id);
    }
    return ids;
  }

  // The op's results as one instruction: its shape is the result's (one result) or the tuple
  // of them; every result is bound (through get-tuple-elements for several).
  void BindResults(Scope& scope, const ir::Operation& op, int64_t id) {
    if (op.results.size() == 1) {
      scope.values[op.results[0]] = id;
      return;
    }
    for (size_t i = 0; i < op.results.size(); ++i) scope.values[op.results[i]] = Element(scope, id, static_cast<int64_t>(i));
  }

  Shape ResultShape(const ir::Operation& op) const {
    if (op.results.size() == 1) return ShapeOf(in_.type_of(op.results[0]));
    std::vector<Shape> shapes;
    for (ValueId v : op.results) shapes.push_back(ShapeOf(in_.type_of(v)));
    return Shape::Tuple(std::move(shapes));
  }

  // ---------------------------------------------------------------- computations

  Scope NewScope(std::string name) {
    Scope scope;
    scope.computation.id = NextId();
    scope.computation.name = std::move(name) + "." + std::to_string(scope.computation.id);
    return scope;
  }

  int64_t Parameter(Scope& scope, const Shape& shape, std::string name) {
    Instruction inst = Make("parameter", shape);
    inst.parameter_number = static_cast<int64_t>(scope.computation.parameter_shapes.size());
    inst.name = std::move(name);
    scope.computation.parameter_shapes.push_back(shape);
    const int64_t id = Add(scope, std::move(inst));
    scope.computation.parameter_names.push_back(scope.computation.instructions.back().name);
    return id;
  }

  int64_t Finish(Scope& scope, int64_t root) {
    scope.computation.root_id = root;
    scope.computation.result_shape = ShapeOfInstruction(scope, root);
    const int64_t id = scope.computation.id;
    out_.computations.push_back(std::move(scope.computation));
    return id;
  }

  // The computation of an IR function (memoized: a function called twice is one computation).
  StatusOr<int64_t> FunctionComputation(const ir::Function& function, bool entry) {
    if (auto it = functions_.find(function.name); it != functions_.end()) return it->second;
    Scope scope = NewScope(entry ? "main" : function.name);
    const ir::Block& block = function.body.blocks.at(0);
    for (size_t i = 0; i < block.arguments.size(); ++i)
      scope.values[block.arguments[i]] = Parameter(scope, ShapeOf(in_.type_of(block.arguments[i])), "Arg_" + std::to_string(i));
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> results, EmitBlock(scope, block));
    const int64_t root = results.size() == 1 ? results[0] : Tuple(scope, results);
    const int64_t id = Finish(scope, root);
    functions_[function.name] = id;
    return id;
  }

  // The values `region` uses that it does not define (in order of first use).
  std::vector<ValueId> Captures(const std::vector<const ir::Region*>& regions) const {
    std::unordered_set<ValueId> defined;
    std::vector<ValueId> captures;
    std::unordered_set<ValueId> seen;
    std::function<void(const ir::Region&)> walk = [&](const ir::Region& region) {
      for (const ir::Block& block : region.blocks) {
        defined.insert(block.arguments.begin(), block.arguments.end());
        for (const ir::Operation& op : block.ops) {
          for (const ir::Region& inner : op.regions) walk(inner);
          for (ValueId v : op.operands)
            if (!defined.count(v) && seen.insert(v).second) captures.push_back(v);
          defined.insert(op.results.begin(), op.results.end());
        }
      }
    };
    for (const ir::Region* region : regions) walk(*region);
    return captures;
  }

  // A body applied to scalars (reduce, sort, scatter, ...): its block arguments are the
  // parameters; it may use nothing from outside.
  // Constants it uses from outside (the passes merge equal constants across regions) are
  // defined again inside it.
  StatusOr<int64_t> ApplyComputation(const ir::Operation& op, const ir::Region& region) {
    Scope scope = NewScope("region_" + std::to_string(region_count_++));
    const ir::Block& block = region.blocks.at(0);
    for (size_t i = 0; i < block.arguments.size(); ++i)
      scope.values[block.arguments[i]] = Parameter(scope, ShapeOf(in_.type_of(block.arguments[i])), "Arg_" + std::to_string(i));
    for (ValueId captured : Captures({&region})) {
      auto definition = constants_.find(captured);
      if (definition == constants_.end()) return NoHloForm(op, "has a body that uses values defined outside it");
      STABLERT_RETURN_IF_ERROR(EmitOp(scope, *definition->second));
    }
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> results, EmitBlock(scope, block));
    return Finish(scope, results.size() == 1 ? results[0] : Tuple(scope, results));
  }

  // A region over one tuple parameter holding `carried` (the block's arguments, if any) and
  // then `captures`. `root` builds the root from the block's results.
  StatusOr<int64_t> TupleComputation(const ir::Region& region, const std::vector<Shape>& element_shapes,
                                     const std::vector<ValueId>& captures,
                                     const std::function<int64_t(Scope&, const std::vector<int64_t>&,
                                                                 const std::vector<int64_t>&)>& root) {
    Scope scope = NewScope("region_" + std::to_string(region_count_++));
    const int64_t param = Parameter(scope, Shape::Tuple(element_shapes), "arg_tuple");
    const ir::Block& block = region.blocks.at(0);
    std::vector<int64_t> captured;
    for (size_t i = 0; i < element_shapes.size(); ++i) {
      const int64_t element = Element(scope, param, static_cast<int64_t>(i));
      if (i < block.arguments.size()) {
        scope.values[block.arguments[i]] = element;
      } else {
        scope.values[captures[i - block.arguments.size()]] = element;
        captured.push_back(element);
      }
    }
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> results, EmitBlock(scope, block));
    return Finish(scope, root(scope, results, captured));
  }

  // ---------------------------------------------------------------- blocks and ops

  // Emits a block's ops; returns the ids of its terminator's operands.
  StatusOr<std::vector<int64_t>> EmitBlock(Scope& scope, const ir::Block& block) {
    for (const ir::Operation& op : block.ops) {
      if (ir::GetOpInfo(op.code).op_class == ir::OpClass::kTerminator) return Values(scope, op.operands);
      STABLERT_RETURN_IF_ERROR(EmitOp(scope, op));
    }
    return InvalidArgument("HLO export: a block has no terminator");
  }

  Status EmitOp(Scope& scope, const ir::Operation& op);
  Status EmitWhile(Scope& scope, const ir::Operation& op);
  Status EmitConditional(Scope& scope, const ir::Operation& op);
  Status EmitCustomCall(Scope& scope, const ir::Operation& op, std::vector<int64_t> operands);

  const ir::Module& in_;
  Module out_;
  int64_t next_id_ = 1;
  int region_count_ = 0;
  std::map<std::string, int64_t> functions_;
  std::unordered_map<ValueId, const ir::Operation*> constants_;  // values defined by constant ops
};

// Window dimensions from the reduce_window / select_and_scatter attributes.
std::vector<WindowDimension> Window(const ir::Operation& op, size_t rank) {
  const std::vector<int64_t> sizes = Ints(op, "window_dimensions"), strides = Ints(op, "window_strides"),
                             base = Ints(op, "base_dilations"), window = Ints(op, "window_dilations"),
                             padding = Ints(op, "padding");
  std::vector<WindowDimension> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (i < sizes.size()) dims[i].size = sizes[i];
    if (i < strides.size()) dims[i].stride = strides[i];
    if (i < base.size()) dims[i].base_dilation = base[i];
    if (i < window.size()) dims[i].window_dilation = window[i];
    if (2 * i + 1 < padding.size()) dims[i].padding_low = padding[2 * i], dims[i].padding_high = padding[2 * i + 1];
  }
  return dims;
}

Status Builder::EmitWhile(Scope& scope, const ir::Operation& op) {
  if (op.regions.size() != 2) return NoHloForm(op, "needs a condition and a body");
  const std::vector<ValueId> captures = Captures({&op.regions[0], &op.regions[1]});
  std::vector<Shape> shapes;
  for (ValueId v : op.operands) shapes.push_back(ShapeOf(in_.type_of(v)));
  for (ValueId v : captures) shapes.push_back(ShapeOf(in_.type_of(v)));
  STABLERT_ASSIGN_OR_RETURN(int64_t condition,
                            TupleComputation(op.regions[0], shapes, captures,
                                             [](Scope&, const std::vector<int64_t>& results,
                                                const std::vector<int64_t>&) { return results.at(0); }));
  STABLERT_ASSIGN_OR_RETURN(int64_t body,
                            TupleComputation(op.regions[1], shapes, captures,
                                             [this](Scope& s, std::vector<int64_t> results,
                                                    const std::vector<int64_t>& captured) {
                                               results.insert(results.end(), captured.begin(), captured.end());
                                               return Tuple(s, std::move(results));
                                             }));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> init, Values(scope, op.operands));
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> captured, Values(scope, captures));
  init.insert(init.end(), captured.begin(), captured.end());
  const int64_t tuple = Tuple(scope, std::move(init));
  Instruction inst = Make("while", Shape::Tuple(shapes), {tuple});
  inst.called = {body, condition};  // XLA's order
  inst.called_role = CalledRole::kWhile;
  const int64_t loop = Add(scope, std::move(inst), op.location);
  for (size_t i = 0; i < op.results.size(); ++i) scope.values[op.results[i]] = Element(scope, loop, static_cast<int64_t>(i));
  return OkStatus();
}

Status Builder::EmitConditional(Scope& scope, const ir::Operation& op) {
  std::vector<int64_t> branches, operands;
  STABLERT_ASSIGN_OR_RETURN(int64_t selector, Value(scope, op.operands.at(0)));
  operands.push_back(selector);
  // `if` lists the true branch first; HLO's predicated conditional too.
  for (const ir::Region& region : op.regions) {
    const std::vector<ValueId> captures = Captures({&region});
    std::vector<Shape> shapes;
    for (ValueId v : captures) shapes.push_back(ShapeOf(in_.type_of(v)));
    STABLERT_ASSIGN_OR_RETURN(int64_t branch,
                              TupleComputation(region, shapes, captures,
                                               [this](Scope& s, std::vector<int64_t> results,
                                                      const std::vector<int64_t>&) { return Tuple(s, std::move(results)); }));
    branches.push_back(branch);
    STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> captured, Values(scope, captures));
    operands.push_back(Tuple(scope, std::move(captured)));
  }
  std::vector<Shape> shapes;
  for (ValueId v : op.results) shapes.push_back(ShapeOf(in_.type_of(v)));
  Instruction inst = Make("conditional", Shape::Tuple(std::move(shapes)), std::move(operands));
  inst.called = std::move(branches);
  inst.called_role = op.code == OpCode::kIf ? CalledRole::kTrueFalse : CalledRole::kBranches;
  const int64_t id = Add(scope, std::move(inst), op.location);
  for (size_t i = 0; i < op.results.size(); ++i) scope.values[op.results[i]] = Element(scope, id, static_cast<int64_t>(i));
  return OkStatus();
}

Status Builder::EmitCustomCall(Scope& scope, const ir::Operation& op, std::vector<int64_t> operands) {
  Instruction inst = Make("custom-call", ResultShape(op), std::move(operands));
  if (op.results.empty()) inst.shape = Shape::Tuple({});
  const ir::Attribute* target = op.attr("call_target_name");
  inst.custom_call_target = target && target->AsString() ? std::string(*target->AsString()) : std::string();
  inst.custom_call_has_side_effect = Bool(op, "has_side_effect");
  inst.custom_call_api_version = static_cast<int32_t>(Int(op, "api_version", 0));
  // A typed FFI call keeps its attributes as a dictionary (JAX: in mhlo.backend_config), which
  // HLO holds as its MLIR text with API_VERSION_TYPED_FFI.
  for (const char* name : {"mhlo.backend_config", "backend_config"}) {
    const ir::Attribute* config = op.attr(name);
    if (config == nullptr) continue;
    if (config->get<ir::Attribute::Dictionary>() != nullptr) {
      STABLERT_ASSIGN_OR_RETURN(std::string text, ir::StablehloAttributeText(*config, OpLabel(op) + " " + name));
      inst.backend_config = std::move(text);
      inst.custom_call_api_version = 4;  // API_VERSION_TYPED_FFI
      break;
    }
    if (auto text = config->AsString(); text && !text->empty()) inst.backend_config = std::string(*text);
  }
  if (const ir::Attribute* called = op.attr("called_computations"))
    if (const auto* list = called->get<ir::Attribute::Array>())
      for (const ir::Attribute& symbol : *list)
        if (const auto* s = symbol.get<ir::Attribute::Symbol>()) {
          const ir::Function* function = in_.FindFunction(s->name);
          if (function == nullptr) return NoHloForm(op, "calls @" + s->name + ", which the module does not define");
          STABLERT_ASSIGN_OR_RETURN(int64_t id, FunctionComputation(*function, false));
          inst.called.push_back(id);
        }
  inst.called_role = CalledRole::kCustomCall;
  // Layout constraints: every operand's and result's minor-to-major order.
  const ir::Attribute* operand_layouts = op.attr("operand_layouts");
  const ir::Attribute* result_layouts = op.attr("result_layouts");
  if (operand_layouts != nullptr && result_layouts != nullptr) {
    const auto* operand_list = operand_layouts->get<ir::Attribute::Array>();
    const auto* result_list = result_layouts->get<ir::Attribute::Array>();
    if (operand_list && result_list && operand_list->size() == op.operands.size() &&
        result_list->size() == op.results.size()) {
      std::vector<Shape> with_layout;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        Shape shape = ShapeOf(in_.type_of(op.operands[i]));
        if (shape.kind == Shape::Kind::kArray) shape.minor_to_major = (*operand_list)[i].AsIntArray().value_or(std::vector<int64_t>{});
        with_layout.push_back(std::move(shape));
      }
      inst.operand_shapes_with_layout = std::move(with_layout);
      for (size_t i = 0; i < op.results.size(); ++i) {
        Shape& shape = op.results.size() == 1 ? inst.shape : inst.shape.elements[i];
        if (shape.kind == Shape::Kind::kArray) shape.minor_to_major = (*result_list)[i].AsIntArray().value_or(std::vector<int64_t>{});
      }
    }
  }
  const int64_t id = Add(scope, std::move(inst), op.location);
  BindResults(scope, op, id);
  return OkStatus();
}

Status Builder::EmitOp(Scope& scope, const ir::Operation& op) {
  const ir::OpInfo& info = ir::GetOpInfo(op.code);
  switch (op.code) {
    // Sharding annotations compute nothing: each result is its operand (a program that still
    // has them runs in the global view, where they change no value).
    case OpCode::kSdyShardingConstraint:
    case OpCode::kSdyReshard:
    case OpCode::kSdyPropagationBarrier: {
      STABLERT_ASSIGN_OR_RETURN(int64_t operand, Value(scope, op.operands.at(0)));
      scope.values[op.results.at(0)] = operand;
      return OkStatus();
    }
    case OpCode::kSdyShardingGroup: return OkStatus();
    default: break;
  }
  if (info.hlo_opcode.empty()) return NoHloForm(op, "has no HLO form");
  switch (op.code) {
    case OpCode::kWhile: return EmitWhile(scope, op);
    case OpCode::kIf:
    case OpCode::kCase: return EmitConditional(scope, op);
    default: break;
  }
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> operands, Values(scope, op.operands));
  if (op.code == OpCode::kCustomCall) return EmitCustomCall(scope, op, std::move(operands));
  Instruction inst = Make(std::string(info.hlo_opcode), ResultShape(op), operands);
  const Shape& result = inst.shape;
  switch (op.code) {
    case OpCode::kConstant: {
      const ir::Attribute* value = op.attr("value");
      const auto* elements = value ? value->get<ir::Attribute::Elements>() : nullptr;
      if (elements == nullptr) return NoHloForm(op, "has no dense value");
      inst.literal = *elements;
      break;
    }
    case OpCode::kCompare: {
      inst.comparison_direction = DirectionName(Int(op, "comparison_direction"));
      static constexpr const char* kTypes[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
      const int64_t type = Int(op, "compare_type", 0);
      const DType dtype = in_.type_of(op.operands[0]).dtype;
      inst.comparison_type = type > 0 && type < 5 ? kTypes[type] : DefaultComparisonType(dtype);
      break;
    }
    case OpCode::kSelect: {
      // HLO's select takes a predicate of the operands' shape.
      const ir::Type& pred = in_.type_of(op.operands[0]);
      if (pred.rank() == 0 && result.kind == Shape::Kind::kArray && !result.dims.empty()) {
        Instruction broadcast = Make("broadcast", Shape::Array(DType::kPred, result.dims), {operands[0]});
        broadcast.dimensions = std::vector<int64_t>{};
        inst.operands[0] = Add(scope, std::move(broadcast), op.location);
      }
      break;
    }
    case OpCode::kReducePrecision:
      inst.exponent_bits = static_cast<int32_t>(Int(op, "exponent_bits"));
      inst.mantissa_bits = static_cast<int32_t>(Int(op, "mantissa_bits"));
      break;
    case OpCode::kBroadcast: {
      const int64_t added = result.dims.size() - in_.type_of(op.operands[0]).rank();
      std::vector<int64_t> dims;
      for (int64_t d = added; d < static_cast<int64_t>(result.dims.size()); ++d) dims.push_back(d);
      inst.dimensions = dims;
      break;
    }
    case OpCode::kBroadcastInDim: {
      // HLO's broadcast maps operand dims onto equal output dims: size-1 dims that expand are
      // reshaped away first.
      const ir::Type& operand = in_.type_of(op.operands[0]);
      const std::vector<int64_t> map = Ints(op, "broadcast_dimensions");
      Dims kept_dims;
      std::vector<int64_t> kept_map;
      for (size_t i = 0; i < map.size(); ++i) {
        if (operand.dims[i] == 1 && result.dims[static_cast<size_t>(map[i])] != 1) continue;
        kept_dims.push_back(operand.dims[i]);
        kept_map.push_back(map[i]);
      }
      if (kept_map.size() != map.size()) {
        Instruction reshape = Make("reshape", Shape::Array(operand.dtype, kept_dims), {operands[0]});
        inst.operands[0] = Add(scope, std::move(reshape), op.location);
      }
      inst.dimensions = kept_map;
      break;
    }
    case OpCode::kTranspose: inst.dimensions = Ints(op, "permutation"); break;
    case OpCode::kReverse:
    case OpCode::kReduce: inst.dimensions = Ints(op, "dimensions"); break;
    case OpCode::kMap: {
      inst.dimensions = Ints(op, "dimensions");
      break;
    }
    case OpCode::kConcatenate: inst.dimensions = std::vector<int64_t>{Int(op, "dimension")}; break;
    case OpCode::kIota: inst.dimensions = std::vector<int64_t>{Int(op, "iota_dimension")}; break;
    case OpCode::kGetTupleElement: inst.tuple_index = Int(op, "index"); break;
    case OpCode::kSlice: {
      const std::vector<int64_t> start = Ints(op, "start_indices"), limit = Ints(op, "limit_indices"),
                                 strides = Ints(op, "strides");
      std::vector<SliceDimension> slice;
      for (size_t i = 0; i < start.size(); ++i)
        slice.push_back({start[i], i < limit.size() ? limit[i] : 0, i < strides.size() ? strides[i] : 1});
      inst.slice = slice;
      break;
    }
    case OpCode::kPad: {
      const std::vector<int64_t> low = Ints(op, "edge_padding_low"), high = Ints(op, "edge_padding_high"),
                                 interior = Ints(op, "interior_padding");
      std::vector<PaddingDimension> padding;
      for (size_t i = 0; i < low.size(); ++i)
        padding.push_back({low[i], i < high.size() ? high[i] : 0, i < interior.size() ? interior[i] : 0});
      inst.padding = padding;
      break;
    }
    case OpCode::kDynamicSlice: inst.dynamic_slice_sizes = Ints(op, "slice_sizes"); break;
    case OpCode::kDot:
    case OpCode::kDotGeneral: {
      DotDimensionNumbers numbers;
      if (op.code == OpCode::kDot) {
        numbers.lhs_contracting = {in_.type_of(op.operands[0]).rank() - 1};
        numbers.rhs_contracting = {0};
      } else {
        numbers.lhs_batch = DotList(op, "lhs_batching_dimensions");
        numbers.rhs_batch = DotList(op, "rhs_batching_dimensions");
        numbers.lhs_contracting = DotList(op, "lhs_contracting_dimensions");
        numbers.rhs_contracting = DotList(op, "rhs_contracting_dimensions");
      }
      inst.dot_dimension_numbers = numbers;
      inst.operand_precision = Precisions(op);
      break;
    }
    case OpCode::kConvolution: {
      ConvolutionDimensionNumbers numbers;
      numbers.input_batch = Int(op, "input_batch_dimension");
      numbers.input_feature = Int(op, "input_feature_dimension");
      numbers.input_spatial = Ints(op, "input_spatial_dimensions");
      numbers.kernel_input_feature = Int(op, "kernel_input_feature_dimension");
      numbers.kernel_output_feature = Int(op, "kernel_output_feature_dimension");
      numbers.kernel_spatial = Ints(op, "kernel_spatial_dimensions");
      numbers.output_batch = Int(op, "output_batch_dimension");
      numbers.output_feature = Int(op, "output_feature_dimension");
      numbers.output_spatial = Ints(op, "output_spatial_dimensions");
      const ir::Type& kernel = in_.type_of(op.operands[1]);
      const std::vector<int64_t> strides = Ints(op, "window_strides"), padding = Ints(op, "padding"),
                                 lhs_dilation = Ints(op, "lhs_dilation"), rhs_dilation = Ints(op, "rhs_dilation");
      const std::vector<bool> reversal = Bools(op, "window_reversal");
      std::vector<WindowDimension> window(numbers.kernel_spatial.size());
      for (size_t i = 0; i < window.size(); ++i) {
        window[i].size = kernel.dims[static_cast<size_t>(numbers.kernel_spatial[i])];
        if (i < strides.size()) window[i].stride = strides[i];
        if (2 * i + 1 < padding.size()) window[i].padding_low = padding[2 * i], window[i].padding_high = padding[2 * i + 1];
        if (i < lhs_dilation.size()) window[i].base_dilation = lhs_dilation[i];
        if (i < rhs_dilation.size()) window[i].window_dilation = rhs_dilation[i];
        if (i < reversal.size()) window[i].window_reversal = reversal[i];
      }
      inst.window = window;
      inst.convolution_dimension_numbers = numbers;
      inst.feature_group_count = Int(op, "feature_group_count", 1);
      inst.batch_group_count = Int(op, "batch_group_count", 1);
      inst.operand_precision = Precisions(op);
      break;
    }
    case OpCode::kGather: {
      GatherDimensionNumbers numbers;
      numbers.offset_dims = Ints(op, "offset_dims");
      numbers.collapsed_slice_dims = Ints(op, "collapsed_slice_dims");
      numbers.start_index_map = Ints(op, "start_index_map");
      numbers.index_vector_dim = Int(op, "index_vector_dim");
      numbers.operand_batching_dims = Ints(op, "operand_batching_dims");
      numbers.start_indices_batching_dims = Ints(op, "start_indices_batching_dims");
      inst.gather_dimension_numbers = numbers;
      inst.gather_slice_sizes = Ints(op, "slice_sizes");
      inst.indices_are_sorted = Bool(op, "indices_are_sorted");
      break;
    }
    case OpCode::kScatter: {
      ScatterDimensionNumbers numbers;
      numbers.update_window_dims = Ints(op, "update_window_dims");
      numbers.inserted_window_dims = Ints(op, "inserted_window_dims");
      numbers.scatter_dims_to_operand_dims = Ints(op, "scatter_dims_to_operand_dims");
      numbers.index_vector_dim = Int(op, "index_vector_dim");
      numbers.input_batching_dims = Ints(op, "input_batching_dims");
      numbers.scatter_indices_batching_dims = Ints(op, "scatter_indices_batching_dims");
      inst.scatter_dimension_numbers = numbers;
      inst.indices_are_sorted = Bool(op, "indices_are_sorted");
      inst.unique_indices = Bool(op, "unique_indices");
      break;
    }
    case OpCode::kReduceWindow:
      inst.window = Window(op, static_cast<size_t>(in_.type_of(op.operands[0]).rank()));
      break;
    case OpCode::kSelectAndScatter:
      inst.window = Window(op, static_cast<size_t>(in_.type_of(op.operands[0]).rank()));
      break;
    case OpCode::kSort:
      inst.dimensions = std::vector<int64_t>{Int(op, "dimension", -1)};
      if (inst.dimensions->at(0) < 0) inst.dimensions->at(0) += in_.type_of(op.operands[0]).rank();
      inst.is_stable = Bool(op, "is_stable");
      break;
    case OpCode::kFft:
      inst.fft_type = static_cast<int32_t>(Int(op, "fft_type"));
      inst.fft_length = Ints(op, "fft_length");
      break;
    case OpCode::kTriangularSolve:
      inst.left_side = Bool(op, "left_side");
      inst.lower = Bool(op, "lower");
      inst.unit_diagonal = Bool(op, "unit_diagonal");
      inst.transpose_a = static_cast<int32_t>(Int(op, "transpose_a", 1));
      break;
    case OpCode::kCholesky: inst.lower = Bool(op, "lower"); break;
    case OpCode::kBatchNormGrad:
    case OpCode::kBatchNormInference:
    case OpCode::kBatchNormTraining: {
      const ir::Attribute* epsilon = op.attr("epsilon");
      const auto* value = epsilon ? epsilon->get<ir::Attribute::Float>() : nullptr;
      inst.epsilon = value ? static_cast<float>(value->value) : 0.0f;
      inst.feature_index = Int(op, "feature_index");
      break;
    }
    case OpCode::kRngBitGenerator: inst.rng_algorithm = static_cast<int32_t>(Int(op, "rng_algorithm")); break;
    case OpCode::kRng:
      inst.rng_distribution = static_cast<int32_t>(Int(op, "rng_distribution", 1));
      inst.operands.resize(2);  // HLO's rng takes its shape from the instruction
      break;
    case OpCode::kOptimizationBarrier: {
      const int64_t tuple = Tuple(scope, operands);
      inst.operands = {tuple};
      inst.shape = ShapeOfInstruction(scope, tuple);
      const int64_t id = Add(scope, std::move(inst), op.location);
      for (size_t i = 0; i < op.results.size(); ++i) scope.values[op.results[i]] = Element(scope, id, static_cast<int64_t>(i));
      return OkStatus();
    }
    case OpCode::kAllReduce:
    case OpCode::kAllGather:
    case OpCode::kReduceScatter:
    case OpCode::kAllToAll:
    case OpCode::kCollectiveBroadcast:
    case OpCode::kCollectivePermute: {
      if (const int64_t channel = Int(op, "channel_id", 0); channel > 0) inst.channel_id = channel;
      inst.use_global_device_ids = Bool(op, "use_global_device_ids");
      if (op.code == OpCode::kCollectivePermute) {
        const std::vector<int64_t> pairs = Ints(op, "source_target_pairs");
        std::vector<std::pair<int64_t, int64_t>> list;
        for (size_t i = 0; i + 1 < pairs.size(); i += 2) list.emplace_back(pairs[i], pairs[i + 1]);
        inst.source_target_pairs = list;
        break;
      }
      const std::vector<int64_t> flat = Ints(op, "replica_groups");
      const int64_t row = RowLength(op, "replica_groups");
      std::vector<std::vector<int64_t>> groups;
      for (size_t i = 0; row > 0 && i < flat.size(); i += static_cast<size_t>(row)) {
        std::vector<int64_t> group;
        for (int64_t j = 0; j < row; ++j)
          if (flat[i + static_cast<size_t>(j)] >= 0) group.push_back(flat[i + static_cast<size_t>(j)]);
        groups.push_back(std::move(group));
      }
      inst.replica_groups = groups;
      if (op.code == OpCode::kAllGather) inst.dimensions = std::vector<int64_t>{Int(op, "all_gather_dim")};
      if (op.code == OpCode::kReduceScatter) inst.dimensions = std::vector<int64_t>{Int(op, "scatter_dimension")};
      if (op.code == OpCode::kAllToAll) {
        if (Int(op, "split_dimension") != Int(op, "concat_dimension"))
          return NoHloForm(op, "splits and concatenates along different dimensions");
        inst.dimensions = std::vector<int64_t>{Int(op, "split_dimension")};
      }
      break;
    }
    case OpCode::kCall:
    case OpCode::kComposite: {
      const ir::Attribute* callee = op.attr(op.code == OpCode::kCall ? "callee" : "decomposition");
      const auto* symbol = callee ? callee->get<ir::Attribute::Symbol>() : nullptr;
      const ir::Function* function = symbol ? in_.FindFunction(symbol->name) : nullptr;
      if (function == nullptr) return NoHloForm(op, "calls a function the module does not define");
      STABLERT_ASSIGN_OR_RETURN(int64_t id, FunctionComputation(*function, false));
      inst.called = {id};
      if (op.results.empty()) inst.shape = Shape::Tuple({});
      break;
    }
    default: break;
  }
  // Bodies applied to elements.
  switch (op.code) {
    case OpCode::kReduce:
    case OpCode::kReduceWindow:
    case OpCode::kScatter:
    case OpCode::kSort:
    case OpCode::kMap:
    case OpCode::kAllReduce:
    case OpCode::kReduceScatter:
      for (const ir::Region& region : op.regions) {
        STABLERT_ASSIGN_OR_RETURN(int64_t id, ApplyComputation(op, region));
        inst.called.push_back(id);
      }
      break;
    case OpCode::kSelectAndScatter:
      for (const ir::Region& region : op.regions) {
        STABLERT_ASSIGN_OR_RETURN(int64_t id, ApplyComputation(op, region));
        inst.called.push_back(id);
      }
      inst.called_role = CalledRole::kSelectScatter;
      break;
    default:
      if (!op.regions.empty()) return NoHloForm(op, "has regions HLO export does not handle");
      break;
  }
  const int64_t id = Add(scope, std::move(inst), op.location);
  BindResults(scope, op, id);
  return OkStatus();
}

}  // namespace

StatusOr<Module> FromIr(const ir::Module& module) { return Builder(module).Build(); }

}  // namespace stablert::hlo
