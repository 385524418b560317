// Builds small ir::Modules by hand for tests of passes, the lowering and the executor.
// Header-only; used only by tests. Not thread-safe.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/module.h"

namespace stablert::ir::testing {

class ModuleBuilder {
 public:
  ModuleBuilder() {
    module_.name = "test";
    ir::Function main;
    main.name = "main";
    main.body.blocks.emplace_back();
    module_.functions.push_back(std::move(main));
    current_ = &module_.functions[0].body.blocks[0];
  }

  // Starts another function; ops are added to it until Finish().
  void BeginFunction(std::string name) {
    ir::Function f;
    f.name = std::move(name);
    f.is_public = false;
    f.body.blocks.emplace_back();
    pending_.push_back(std::move(f));
    current_ = &pending_.back().body.blocks[0];
  }
  // Ends the function begun last, returning `values`, and continues with main.
  void EndFunction(const std::vector<ir::ValueId>& values) {
    ir::Function& f = pending_.back();
    AddReturn(f, values);
    module_.functions.push_back(std::move(f));
    pending_.pop_back();
    current_ = pending_.empty() ? &module_.functions[0].body.blocks[0] : &pending_.back().body.blocks[0];
  }

  ir::ValueId Param(DType dtype, Dims dims) {
    ir::Function& f = pending_.empty() ? module_.functions[0] : pending_.back();
    ir::Type type = ir::Type::Tensor(dtype, std::move(dims));
    ir::ValueId v = module_.AddValue(type);
    f.argument_types.push_back(type);
    f.argument_attrs.emplace_back();
    current_->arguments.push_back(v);
    return v;
  }

  ir::ValueId Op(ir::OpCode code, std::vector<ir::ValueId> operands, DType dtype, Dims dims,
                 ir::Attribute::Dictionary attrs = {}, std::vector<ir::Region> regions = {}) {
    return OpN(code, std::move(operands), {ir::Type::Tensor(dtype, std::move(dims))}, std::move(attrs),
               std::move(regions))[0];
  }

  std::vector<ir::ValueId> OpN(ir::OpCode code, std::vector<ir::ValueId> operands, std::vector<ir::Type> results,
                               ir::Attribute::Dictionary attrs = {}, std::vector<ir::Region> regions = {}) {
    ir::Operation op;
    op.code = code;
    op.operands = std::move(operands);
    for (ir::Type& type : results) op.results.push_back(module_.AddValue(std::move(type)));
    op.attrs = std::move(attrs);
    op.regions = std::move(regions);
    op.location = location_;
    current_->ops.push_back(std::move(op));
    return current_->ops.back().results;
  }

  template <typename T>
  ir::ValueId Constant(DType dtype, Dims dims, const std::vector<T>& values) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = ir::Type::Tensor(dtype, dims);
    data->bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
    return Op(ir::OpCode::kConstant, {}, dtype, std::move(dims),
              {{"value", ir::Attribute(ir::Attribute::Elements(std::move(data)))}});
  }

  // A region `^bb(a, b): return code(a, b)` over scalars of `dtype` (a reduce body).
  ir::Region BinaryBody(ir::OpCode code, DType dtype) {
    ir::Region region;
    region.blocks.emplace_back();
    ir::Block& block = region.blocks[0];
    ir::ValueId a = module_.AddValue(ir::Type::Tensor(dtype, {}));
    ir::ValueId b = module_.AddValue(ir::Type::Tensor(dtype, {}));
    block.arguments = {a, b};
    ir::Operation op;
    op.code = code;
    op.operands = {a, b};
    op.results = {module_.AddValue(ir::Type::Tensor(dtype, {}))};
    ir::Operation ret;
    ret.code = ir::OpCode::kReturn;
    ret.operands = op.results;
    block.ops.push_back(std::move(op));
    block.ops.push_back(std::move(ret));
    return region;
  }

  // A one-block region whose block takes arguments of `argument_types`; `body(arguments)`
  // adds the block's ops through this builder and returns the values the block returns.
  template <typename Body>
  ir::Region Region(const std::vector<ir::Type>& argument_types, Body&& body) {
    ir::Region region;
    ir::Block& block = region.blocks.emplace_back();
    for (const ir::Type& type : argument_types) block.arguments.push_back(module_.AddValue(type));
    ir::Block* outer = current_;
    current_ = &block;
    std::vector<ir::ValueId> returned = body(block.arguments);
    current_ = outer;
    ir::Operation ret;
    ret.code = ir::OpCode::kReturn;
    ret.operands = std::move(returned);
    block.ops.push_back(std::move(ret));
    return region;
  }

  // A while op over `operands`, its regions built by `cond` (returns one i1) and `body`
  // (returns the new carried values) from their block arguments, in the current block.
  std::vector<ir::ValueId> While(
      const std::vector<ir::ValueId>& operands,
      const std::function<ir::ValueId(const std::vector<ir::ValueId>&)>& cond,
      const std::function<std::vector<ir::ValueId>(const std::vector<ir::ValueId>&)>& body) {
    std::vector<ir::Type> types;
    for (ir::ValueId v : operands) types.push_back(module_.value_types[v]);
    std::vector<ir::Region> regions(2);
    for (int r = 0; r < 2; ++r) {
      ir::Block& block = regions[static_cast<size_t>(r)].blocks.emplace_back();
      for (const ir::Type& type : types) block.arguments.push_back(module_.AddValue(type));
      ir::Block* saved = current_;
      current_ = &block;
      std::vector<ir::ValueId> returned = r == 0 ? std::vector<ir::ValueId>{cond(block.arguments)} : body(block.arguments);
      current_ = saved;
      ir::Operation ret;
      ret.code = ir::OpCode::kReturn;
      ret.operands = std::move(returned);
      block.ops.push_back(std::move(ret));
    }
    return OpN(ir::OpCode::kWhile, operands, types, {}, std::move(regions));
  }

  // Sets the location of ops added from now on.
  void SetLocation(std::string file, int line, int column, std::string name = "") {
    ir::Location location;
    location.file = std::move(file);
    location.line = line;
    location.column = column;
    location.name = std::move(name);
    module_.locations.push_back(std::move(location));
    location_ = static_cast<ir::LocationId>(module_.locations.size() - 1);
  }

  ir::Module Build(const std::vector<ir::ValueId>& results) {
    AddReturn(module_.functions[0], results);
    return std::move(module_);
  }

  static ir::Attribute IntList(std::vector<int64_t> values) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = ir::Type::Tensor(DType::kS64, {static_cast<int64_t>(values.size())});
    data->bytes.resize(values.size() * 8);
    if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
    return ir::Attribute(ir::Attribute::Elements(std::move(data)));
  }
  static ir::Attribute Int(int64_t value) { return ir::Attribute(ir::Attribute::Integer{value, DType::kS64}); }
  static ir::Attribute Enum(ir::EnumKind kind, int64_t value) { return ir::Attribute(ir::EnumValue{kind, value}); }

  const ir::Type& TypeOf(ir::ValueId v) const { return module_.value_types[v]; }

 private:
  void AddReturn(ir::Function& f, const std::vector<ir::ValueId>& values) {
    ir::Operation ret;
    ret.code = ir::OpCode::kReturn;
    ret.operands = values;
    f.result_types.clear();
    for (ir::ValueId v : values) f.result_types.push_back(module_.value_types[v]);
    f.result_attrs.assign(values.size(), {});
    f.body.blocks[0].ops.push_back(std::move(ret));
  }

  ir::Module module_;
  std::vector<ir::Function> pending_;
  ir::Block* current_;
  ir::LocationId location_ = 0;
};

}  // namespace stablert::ir::testing
