// The IR: a Module of Functions whose bodies are Regions of Blocks of Operations over
// SSA values.
//
// Values are numbered module-wide (ValueId indexes Module::value_types), so passes and
// lowering can keep per-value side tables in flat vectors. A Module is built once by
// stablehlo/ (or a test), verified by ir::Verify, then owned and transformed by one
// compilation at a time: not thread-safe for concurrent mutation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/op_table.h"
#include "ir/type.h"

namespace stablert::ir {

using ValueId = uint32_t;

// Where an op came from in the user's program. `name` carries JAX's name stack
// (e.g. "jit(f)/mul"); file/line are zero/empty when unknown.
struct Location {
  std::string file;
  int32_t line = 0;
  int32_t column = 0;
  std::string name;
  // "name at file:line:column", or "unknown location".
  std::string ToString() const;
  // Takes what this location lacks from `other` (a callee's caller, a fused location's
  // later parts): the name, and the file position as a whole.
  void FillFrom(const Location& other);
};

using LocationId = uint32_t;  // index into Module::locations; 0 = unknown

struct Region;

struct Operation {
  OpCode code;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  Attribute::Dictionary attrs;  // op attributes (properties and discardable attrs), by name
  std::vector<Region> regions;
  LocationId location = 0;

  const Attribute* attr(std::string_view name) const { return FindAttr(attrs, name); }
};

struct Block {
  std::vector<ValueId> arguments;
  std::vector<Operation> ops;  // last op is a terminator
};

struct Region {
  std::vector<Block> blocks;
};

struct Function {
  std::string name;
  bool is_public = true;
  std::vector<Type> argument_types;
  std::vector<Type> result_types;
  std::vector<Attribute::Dictionary> argument_attrs;  // one per argument (may be empty dicts)
  std::vector<Attribute::Dictionary> result_attrs;    // one per result
  Region body;                                        // one block; its arguments are the parameters
  LocationId location = 0;
};

struct Module {
  std::string name;                // sym_name of the module, e.g. "jit_f"
  Attribute::Dictionary attrs;     // module attributes (mhlo.num_partitions, ...)
  std::vector<Function> functions;
  // Shardy meshes declared with sdy.mesh, by symbol name.
  std::vector<std::pair<std::string, Attribute>> meshes;
  std::vector<Type> value_types;   // indexed by ValueId
  std::vector<Location> locations; // indexed by LocationId; [0] is the unknown location

  Module() { locations.emplace_back(); }
  ValueId AddValue(Type type) {
    value_types.push_back(std::move(type));
    return static_cast<ValueId>(value_types.size() - 1);
  }
  const Type& type_of(ValueId value) const { return value_types[value]; }
  const Function* FindFunction(std::string_view name) const;
  // The entry function: "main" if present, else the only public function.
  const Function* EntryFunction() const;
};

}  // namespace stablert::ir
