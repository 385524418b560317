#include "stablehlo/import.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "stablehlo/entry_decoder.h"
#include "stablehlo/sdy_text.h"
#include "stablehlo/upgrade.h"
#include "stablehlo/version.h"
#include "stablehlo/vhlo_ops.h"

namespace stablert::stablehlo {
namespace {

constexpr ir::ValueId kUnmapped = 0xFFFFFFFFu;
constexpr uint64_t kVersionNativeProperties = 5;

using AttrRefs = std::vector<std::pair<std::string_view, uint32_t>>;

// One attribute of an op's property blob.
struct PropertyName {
  std::string_view name;
  bool optional;  // encoded with a presence flag
};

// "a,b?,c" -> {a}, {b, optional}, {c}.
std::vector<PropertyName> ParsePropertyNames(std::string_view names) {
  std::vector<PropertyName> out;
  while (!names.empty()) {
    size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    bool optional = !name.empty() && name.back() == '?';
    if (optional) name.remove_suffix(1);
    out.push_back({name, optional});
  }
  return out;
}

// What an op name of the file imports as, resolved once per name.
struct OpKind {
  ir::OpCode code = ir::OpCode::kReturn;
  std::vector<PropertyName> properties;
  enum : uint8_t { kUnknown, kVhlo, kSdy, kCast } kind = kUnknown;
};

// Stable insertion sort: ops carry a handful of attributes, and std::stable_sort would
// allocate a buffer per op.
void SortByName(ir::Attribute::Dictionary& attrs) {
  for (size_t i = 1; i < attrs.size(); ++i) {
    for (size_t j = i; j > 0 && attrs[j].first < attrs[j - 1].first; --j) {
      std::swap(attrs[j], attrs[j - 1]);
    }
  }
}

class Importer {
 public:
  Importer(const BytecodeFile& file, const ImportOptions& options)
      : file_(file),
        options_(options),
        decoder_(file),
        value_map_(file.values.size(), kUnmapped),
        location_map_(file.attributes.size(), kUnmapped),
        module_(std::make_unique<ir::Module>()) {
    module_->value_types.reserve(file.values.size());
    op_kinds_.resize(file.op_names.size());
    for (size_t i = 0; i < file.op_names.size(); ++i) {
      std::string_view dialect = file.dialects[file.op_names[i].dialect].name;
      std::string_view name = file.op_names[i].name;
      OpKind& kind = op_kinds_[i];
      if (dialect == "vhlo") {
        const VhloOpInfo* info = FindVhloOp(name);
        if (info && name != "func_v1") {
          kind = {info->code, ParsePropertyNames(info->properties), OpKind::kVhlo};
        }
      } else if (dialect == "sdy") {
        if (const SdyOpInfo* info = FindSdyOp(name)) {
          kind = {info->code, ParsePropertyNames(info->properties), OpKind::kSdy};
        }
      } else if (dialect == "builtin" && name == "unrealized_conversion_cast") {
        kind.kind = OpKind::kCast;
      }
    }
  }

  StatusOr<std::unique_ptr<ir::Module>> Run() {
    if (file_.root_op == kNoIndex) return InvalidArgument("bytecode holds no operation");
    const RawOperation& root = file_.ops[file_.root_op];
    std::string root_name = FullName(root);
    if (root_name != "builtin.module") {
      return InvalidArgument("the top-level operation is '" + root_name +
                             "', expected 'builtin.module'");
    }
    AttrRefs refs;
    STABLERT_RETURN_IF_ERROR(PropertyRefs(root, "sym_name?,sym_visibility?", &refs));
    AttrRefs discardable;
    STABLERT_RETURN_IF_ERROR(DiscardableRefs(root, &discardable));
    for (auto& [name, index] : discardable) {
      if (name == "sym_name" || name == "sym_visibility") {
        refs.emplace_back(name, index);
        continue;
      }
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* value, decoder_.Attribute(index));
      module_->attrs.emplace_back(name, *value);
    }
    for (const auto& [name, index] : refs) {
      if (name == "sym_name") {
        STABLERT_ASSIGN_OR_RETURN(module_->name, decoder_.String(index));
      }
    }
    if (root.num_regions != 1) return InvalidArgument("builtin.module must have one region");
    ImportExportedMeshes();
    const RawRegion& region = file_.regions[root.first_region];
    if (region.num_blocks > 1) return InvalidArgument("builtin.module must have one block");
    if (region.num_blocks == 0) return std::move(module_);
    const RawBlock& block = file_.blocks[region.first_block];
    for (uint32_t i = 0; i < block.num_ops; ++i) {
      const RawOperation& op = file_.ops[block.first_op + i];
      std::string name = FullName(op);
      Status status;
      if (name == "vhlo.func_v1") {
        status = ImportFunction(op);
        if (!status.ok() && options_.skipped_functions &&
            status.code() == StatusCode::kUnimplemented) {
          options_.skipped_functions->push_back(status);
          status = OkStatus();
        }
      } else if (name == "sdy.mesh") {
        status = ImportMesh(op);
      } else {
        status = Unimplemented("unexpected top-level operation '" + name +
                               "' in the module (expected vhlo.func_v1 or sdy.mesh)");
      }
      if (!status.ok()) return status;
    }
    return std::move(module_);
  }

 private:
  std::string FullName(const RawOperation& op) const {
    return std::string(file_.dialect_of(op)) + "." + std::string(file_.op_name(op));
  }

  // "vhlo.add_v1 at jit(f)/add at f.py:3:4".
  std::string Describe(const RawOperation& op) {
    std::string text = FullName(op);
    StatusOr<ir::LocationId> loc = Location(op.location);
    if (loc.ok() && *loc != 0) text += " at " + module_->locations[*loc].ToString();
    return text;
  }

  StatusOr<ir::LocationId> Location(uint32_t attr) {
    if (attr >= location_map_.size()) return InvalidArgument("location is out of range");
    if (location_map_[attr] != kUnmapped) return location_map_[attr];
    STABLERT_ASSIGN_OR_RETURN(ir::Location loc, decoder_.Location(attr));
    ir::LocationId id = 0;
    if (!loc.file.empty() || !loc.name.empty()) {
      id = static_cast<ir::LocationId>(module_->locations.size());
      module_->locations.push_back(std::move(loc));
    }
    location_map_[attr] = id;
    return id;
  }

  StatusOr<ir::ValueId> Value(uint32_t file_value) {
    if (file_value >= value_map_.size()) return InvalidArgument("value is out of range");
    if (value_map_[file_value] != kUnmapped) return value_map_[file_value];
    STABLERT_ASSIGN_OR_RETURN(ir::Type type, decoder_.ValueType(file_.values[file_value].type));
    ir::ValueId id = module_->AddValue(std::move(type));
    value_map_[file_value] = id;
    return id;
  }

  // Attribute references from the op's property blob, in `names` order (a comma-separated
  // list, optional attributes marked with '?').
  Status PropertyRefs(const RawOperation& op, std::string_view names, AttrRefs* refs) {
    return PropertyRefs(op, ParsePropertyNames(names), refs);
  }

  Status PropertyRefs(const RawOperation& op, const std::vector<PropertyName>& names,
                      AttrRefs* refs) {
    if (op.properties == kNoIndex) {
      bool all_optional = true;
      for (const PropertyName& p : names) all_optional = all_optional && p.optional;
      if (file_.version >= kVersionNativeProperties && !names.empty() && !all_optional) {
        std::string expected;
        for (const PropertyName& p : names) {
          expected += (expected.empty() ? "" : ",") + std::string(p.name);
        }
        return InvalidArgument("operation has no properties; expected " + expected);
      }
      return OkStatus();
    }
    // Reused buffer: naming the blob costs no allocation per op.
    where_.assign("properties #");
    char digits[16];
    where_.append(digits, std::to_chars(digits, digits + sizeof(digits), op.properties).ptr);
    Cursor c(file_.properties[op.properties], file_.properties_offsets[op.properties], where_);
    for (const auto& [name, optional] : names) {
      uint64_t index;
      if (optional) {
        bool present;
        STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&index, &present, name));
        if (!present) continue;
        if (index >= file_.attributes.size()) {
          return c.Error(std::string(name) + " attribute is out of range");
        }
      } else {
        STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.attributes.size(), &index, name));
      }
      refs->emplace_back(name, static_cast<uint32_t>(index));
    }
    return c.ExpectEnd("the operation's properties");
  }

  // Appends the op's discardable attributes.
  Status DiscardableRefs(const RawOperation& op, AttrRefs* refs) {
    if (op.attr_dict == kNoIndex) return OkStatus();
    return decoder_.DictionaryEntries(op.attr_dict, refs);
  }

  Status ImportFunction(const RawOperation& op) {
    body_error_ = false;
    function_name_.clear();
    Status status = ImportFunctionBody(op);
    if (status.ok()) return status;
    std::string where = "in function @" + function_name_ + ": ";
    return Status(status.code(), where + std::string(status.message()));
  }

  Status ImportFunctionBody(const RawOperation& op) {
    const VhloOpInfo* info = FindVhloOp("func_v1");
    AttrRefs refs;
    STABLERT_RETURN_IF_ERROR(PropertyRefs(op, info->properties, &refs));
    AttrRefs discardable;
    STABLERT_RETURN_IF_ERROR(DiscardableRefs(op, &discardable));
    refs.insert(refs.end(), discardable.begin(), discardable.end());
    ir::Function function;
    STABLERT_ASSIGN_OR_RETURN(function.location, Location(op.location));
    const ir::Attribute* arg_attrs = nullptr;
    const ir::Attribute* res_attrs = nullptr;
    bool has_type = false, has_name = false;
    for (const auto& [name, index] : refs) {
      if (name == "sym_name") {
        STABLERT_ASSIGN_OR_RETURN(function.name, decoder_.String(index));
        function_name_ = function.name;
        has_name = true;
      }
    }
    for (const auto& [name, index] : refs) {
      if (name == "sym_name") {
        continue;
      } else if (name == "sym_visibility") {
        STABLERT_ASSIGN_OR_RETURN(std::string visibility, decoder_.String(index));
        function.is_public = visibility.empty() || visibility == "public";
      } else if (name == "function_type") {
        STABLERT_ASSIGN_OR_RETURN(const DecodedType* type, decoder_.TypeOfTypeAttr(index));
        if (type->kind != DecodedType::Kind::kFunction) {
          return InvalidArgument("function_type is not a function type");
        }
        function.argument_types = type->inputs;
        function.result_types = type->outputs;
        has_type = true;
      } else if (name == "arg_attrs") {
        STABLERT_ASSIGN_OR_RETURN(arg_attrs, decoder_.Attribute(index));
      } else if (name == "res_attrs") {
        STABLERT_ASSIGN_OR_RETURN(res_attrs, decoder_.Attribute(index));
      }
    }
    if (!has_name || !has_type) return InvalidArgument("function lacks sym_name or function_type");
    STABLERT_RETURN_IF_ERROR(
        PerValueAttrs(arg_attrs, function.argument_types.size(), "arg_attrs",
                      &function.argument_attrs));
    STABLERT_RETURN_IF_ERROR(
        PerValueAttrs(res_attrs, function.result_types.size(), "res_attrs",
                      &function.result_attrs));
    if (op.num_regions != 1) return InvalidArgument("function must have one body region");
    // A declaration (no body) cannot run; it is left out and calls to it fail verification.
    if (file_.regions[op.first_region].num_blocks == 0) return OkStatus();
    Status status = ImportRegion(file_.regions[op.first_region], function.body);
    if (!status.ok()) {
      body_error_ = true;
      return status;
    }
    for (auto* list : {&function.argument_attrs, &function.result_attrs}) {
      for (ir::Attribute::Dictionary& attrs : *list) ImportExportedSharding(attrs);
    }
    module_->functions.push_back(std::move(function));
    return OkStatus();
  }

  // Artifacts for targets before 1.11.0 carry Shardy meshes and shardings as text in
  // mhlo.frontend_attributes (xla.sdy.meshes on the module, xla.sdy.sharding on
  // arguments and results). They are parsed into Module::meshes and "sdy.sharding"
  // attributes, as mixed artifacts carry them; the text stays as well.
  static const std::string* FrontendString(const ir::Attribute::Dictionary& attrs,
                                           std::string_view key) {
    const ir::Attribute* frontend = ir::FindAttr(attrs, "mhlo.frontend_attributes");
    const auto* dict = frontend ? frontend->get<ir::Attribute::Dictionary>() : nullptr;
    const ir::Attribute* value = dict ? ir::FindAttr(*dict, key) : nullptr;
    return value ? value->get<std::string>() : nullptr;
  }

  void ImportExportedMeshes() {
    const std::string* text = FrontendString(module_->attrs, "xla.sdy.meshes");
    if (!text || !module_->meshes.empty()) return;
    StatusOr<ir::Attribute> table = ParseSdyText(*text);
    const auto* dict = table.ok() ? table->get<ir::Attribute::Dictionary>() : nullptr;
    if (!dict) return;
    for (const auto& [name, mesh] : *dict) module_->meshes.emplace_back(name, mesh);
  }

  static void ImportExportedSharding(ir::Attribute::Dictionary& attrs) {
    const std::string* text = FrontendString(attrs, "xla.sdy.sharding");
    if (!text || ir::FindAttr(attrs, "sdy.sharding")) return;
    StatusOr<ir::Attribute> sharding = ParseSdyText(*text);
    if (sharding.ok()) attrs.emplace_back("sdy.sharding", std::move(sharding).value());
  }

  Status PerValueAttrs(const ir::Attribute* attr, size_t count, std::string_view what,
                       std::vector<ir::Attribute::Dictionary>* out) {
    out->assign(count, {});
    if (!attr) return OkStatus();
    const auto* array = attr->get<ir::Attribute::Array>();
    if (!array) return InvalidArgument(std::string(what) + " is not an array");
    if (array->empty()) return OkStatus();
    if (array->size() != count) {
      return InvalidArgument(std::string(what) + " has " + std::to_string(array->size()) +
                             " entries for " + std::to_string(count) + " values");
    }
    for (size_t i = 0; i < count; ++i) {
      const auto* dict = (*array)[i].get<ir::Attribute::Dictionary>();
      if (!dict) return InvalidArgument(std::string(what) + " entry is not a dictionary");
      (*out)[i] = *dict;
    }
    return OkStatus();
  }

  Status ImportMesh(const RawOperation& op) {
    AttrRefs refs;
    Status status = PropertyRefs(op, "mesh,sym_name", &refs);
    AttrRefs discardable;
    if (status.ok()) status = DiscardableRefs(op, &discardable);
    if (!status.ok()) return status.WithPrefix("in " + Describe(op));
    if (file_.version < kVersionNativeProperties) refs = discardable;
    std::string name;
    ir::Attribute mesh;
    for (const auto& [key, index] : refs) {
      if (key == "sym_name") {
        STABLERT_ASSIGN_OR_RETURN(name, decoder_.String(index));
      } else if (key == "mesh") {
        STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* value, decoder_.Attribute(index));
        mesh = *value;
      }
    }
    module_->meshes.emplace_back(std::move(name), std::move(mesh));
    return OkStatus();
  }

  Status ImportRegion(const RawRegion& raw, ir::Region& region) {
    region.blocks.resize(raw.num_blocks);
    for (uint32_t b = 0; b < raw.num_blocks; ++b) {
      const RawBlock& block = file_.blocks[raw.first_block + b];
      ir::Block& out = region.blocks[b];
      out.arguments.reserve(block.num_arguments);
      for (uint32_t a = 0; a < block.num_arguments; ++a) {
        STABLERT_ASSIGN_OR_RETURN(ir::ValueId id, Value(block.first_argument + a));
        out.arguments.push_back(id);
      }
      out.ops.reserve(block.num_ops);
      for (uint32_t i = 0; i < block.num_ops; ++i) {
        const RawOperation& op = file_.ops[block.first_op + i];
        STABLERT_RETURN_IF_ERROR(ImportOp(op, out));
      }
    }
    return OkStatus();
  }

  // Errors name the op; errors of nested ops name the innermost op.
  Status ImportOp(const RawOperation& raw, ir::Block& block) {
    bool nested_error = false;
    Status status = ImportOpImpl(raw, block, &nested_error);
    if (status.ok() || nested_error) return status;
    return status.WithPrefix("in " + Describe(raw));
  }

  Status ImportOpImpl(const RawOperation& raw, ir::Block& block, bool* nested_error) {
    const OpKind& kind = op_kinds_[raw.name];
    switch (kind.kind) {
      case OpKind::kVhlo:
      case OpKind::kSdy:
        break;
      case OpKind::kCast:
        return FoldCast(raw);
      case OpKind::kUnknown: {
        std::string_view dialect = file_.dialect_of(raw);
        if (dialect == "vhlo") {
          return Unimplemented("unknown VHLO op '" + FullName(raw) +
                               "' (this reader knows the ops of StableHLO " +
                               kMinimumVersion.ToString() + " to " +
                               kCurrentVersion.ToString() + ")");
        }
        if (dialect == "sdy") {
          return Unimplemented("Shardy op '" + FullName(raw) + "' is not supported");
        }
        return Unimplemented("operation '" + FullName(raw) +
                             "' is not supported (only VHLO and Shardy ops)");
      }
    }
    if (raw.num_successors != 0) return Unimplemented("operations with successor blocks");

    ir::Operation op;
    op.code = kind.code;
    STABLERT_ASSIGN_OR_RETURN(op.location, Location(raw.location));
    // refs_ is reused across ops; it is consumed before nested regions are imported.
    AttrRefs& refs = refs_;
    refs.clear();
    STABLERT_RETURN_IF_ERROR(PropertyRefs(raw, kind.properties, &refs));
    STABLERT_RETURN_IF_ERROR(DiscardableRefs(raw, &refs));
    op.attrs.reserve(refs.size());
    for (const auto& [key, index] : refs) {
      STABLERT_ASSIGN_OR_RETURN(const ir::Attribute* value, decoder_.Attribute(index));
      op.attrs.emplace_back(key, *value);
    }
    op.results.reserve(raw.num_results);
    for (uint32_t i = 0; i < raw.num_results; ++i) {
      STABLERT_ASSIGN_OR_RETURN(ir::ValueId id, Value(raw.first_result + i));
      op.results.push_back(id);
    }
    op.operands.reserve(raw.num_operands);
    for (uint32_t i = 0; i < raw.num_operands; ++i) {
      STABLERT_ASSIGN_OR_RETURN(ir::ValueId id, Value(file_.operands[raw.first_operand + i]));
      op.operands.push_back(id);
    }
    op.regions.resize(raw.num_regions);
    for (uint32_t i = 0; i < raw.num_regions; ++i) {
      Status status = ImportRegion(file_.regions[raw.first_region + i], op.regions[i]);
      if (!status.ok()) {
        *nested_error = true;
        return status;
      }
    }
    if (kind.kind == OpKind::kVhlo) {
      STABLERT_RETURN_IF_ERROR(UpgradeVhloAttributes(file_.op_name(raw), op));
    }
    SortByName(op.attrs);
    block.ops.push_back(std::move(op));
    return OkStatus();
  }

  // builtin.unrealized_conversion_cast bridges in mixed artifacts: identical types only.
  Status FoldCast(const RawOperation& raw) {
    if (raw.num_operands != 1 || raw.num_results != 1 || raw.num_regions != 0) {
      return Unimplemented("unrealized_conversion_cast with other than one operand and result");
    }
    STABLERT_ASSIGN_OR_RETURN(ir::ValueId source, Value(file_.operands[raw.first_operand]));
    STABLERT_ASSIGN_OR_RETURN(ir::Type type, decoder_.ValueType(file_.values[raw.first_result].type));
    if (!(module_->type_of(source) == type)) {
      return Unimplemented("unrealized_conversion_cast from " +
                           ir::TypeToString(module_->type_of(source)) + " to " +
                           ir::TypeToString(type) + " changes the type");
    }
    if (value_map_[raw.first_result] != kUnmapped) {
      return Unimplemented("unrealized_conversion_cast result used before its definition");
    }
    value_map_[raw.first_result] = source;
    return OkStatus();
  }

  const BytecodeFile& file_;
  const ImportOptions& options_;
  EntryDecoder decoder_;
  std::vector<ir::ValueId> value_map_;
  std::vector<ir::LocationId> location_map_;
  std::unique_ptr<ir::Module> module_;
  bool body_error_ = false;
  std::string function_name_;
  std::vector<OpKind> op_kinds_;
  AttrRefs refs_;
  std::string where_;
};

}  // namespace

StatusOr<std::unique_ptr<ir::Module>> ImportModule(const BytecodeFile& file,
                                                   const ImportOptions& options) {
  Importer importer(file, options);
  return importer.Run();
}

}  // namespace stablert::stablehlo
