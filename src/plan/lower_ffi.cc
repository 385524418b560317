// Lowering of custom calls to handlers registered through XLA's FFI
// (kernels/ffi_registry.h): one "ffi_call" step (kernels/ffi_call.cc) whose parameters are
// the target name and the attributes of the op's backend_config dictionary.
//
// JAX's jax.ffi.ffi_call emits `stablehlo.custom_call @target(...) {api_version = 1,
// mhlo.backend_config = {...}}`; other producers put the dictionary in `backend_config` with
// api_version 4 (typed FFI). Attributes become FFI attributes as XLA encodes them: integers
// (i1 as pred), f16/bf16/f32/f64 floats, strings, dense elements and arrays of scalars of one
// type (flat arrays), nested dictionaries. Operands and results are dense row-major arrays.
//
// Failures (compile time): Unimplemented naming the target if it is not registered, or for
// an attribute, element type or layout an FFI call cannot carry.
#include <cstring>
#include <string>

#include "kernels/ffi_params.h"
#include "kernels/ffi_registry.h"
#include "kernels/half.h"
#include "plan/lower_ffi.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

std::optional<int64_t> ApiVersion(const ir::Operation& op) {
  const ir::Attribute* attr = op.attr("api_version");
  if (attr == nullptr) return std::nullopt;
  if (auto v = attr->AsInt()) return v;
  if (const auto* e = attr->get<ir::EnumValue>()) return e->value;
  return std::nullopt;
}

// The dictionary of FFI attributes, or nullptr if the op has none.
const ir::Attribute::Dictionary* ConfigDictionary(const ir::Operation& op) {
  for (const char* name : {"mhlo.backend_config", "backend_config"}) {
    const ir::Attribute* attr = op.attr(name);
    if (attr != nullptr)
      if (const auto* dict = attr->get<ir::Attribute::Dictionary>()) return dict;
  }
  return nullptr;
}

template <typename T>
std::string BytesOf(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

class AttributeConverter {
 public:
  AttributeConverter(const Lowering& l, const ir::Operation& op, const std::string& target)
      : l_(l), op_(op), target_(target) {}

  Status Dictionary(const ir::Attribute::Dictionary& dict, const std::string& path, std::vector<std::string>* names,
                    std::vector<kernels::FfiAttribute>* values) {
    for (const auto& [name, attr] : dict) {
      kernels::FfiAttribute value;
      STABLERT_RETURN_IF_ERROR(Convert(attr, path.empty() ? name : path + "." + name, &value));
      names->push_back(name);
      values->push_back(std::move(value));
    }
    return OkStatus();
  }

 private:
  Status Unsupported(const std::string& path, std::string_view what) const {
    return l_.Unsupported(op_, "custom_call '" + target_ + "': attribute '" + path + "' " + std::string(what) +
                                   " cannot be passed to an FFI handler");
  }

  // One scalar of `dtype` with integer `i` or float `f`, as element bytes.
  Status ScalarBytes(const ir::Attribute& attr, const std::string& path, DType* dtype, std::string* bytes) {
    if (const bool* b = attr.get<bool>()) {
      *dtype = DType::kPred;
      *bytes = std::string(1, *b ? '\1' : '\0');
      return OkStatus();
    }
    if (const auto* i = attr.get<ir::Attribute::Integer>()) {
      *dtype = i->dtype;
      const int size = DTypeByteSize(i->dtype);
      if (i->dtype == DType::kPred) {
        *bytes = std::string(1, i->value != 0 ? '\1' : '\0');
        return OkStatus();
      }
      if (!IsInteger(i->dtype) || size <= 0 || size > 8 || DTypeBitWidth(i->dtype) < 8)
        return Unsupported(path, "of type " + std::string(DTypeName(i->dtype)));
      *bytes = BytesOf(i->value).substr(0, size);  // little-endian: the low bytes
      return OkStatus();
    }
    if (const auto* f = attr.get<ir::Attribute::Float>()) {
      *dtype = f->dtype;
      switch (f->dtype) {
        case DType::kF32: *bytes = BytesOf(static_cast<float>(f->value)); return OkStatus();
        case DType::kF64: *bytes = BytesOf(f->value); return OkStatus();
        case DType::kF16: *bytes = BytesOf(kernels::FloatToF16(static_cast<float>(f->value))); return OkStatus();
        case DType::kBF16: *bytes = BytesOf(kernels::FloatToBF16(static_cast<float>(f->value))); return OkStatus();
        default: return Unsupported(path, "of type " + std::string(DTypeName(f->dtype)));
      }
    }
    return Unsupported(path, "(" + ir::AttributeToString(attr) + ")");
  }

  Status Convert(const ir::Attribute& attr, const std::string& path, kernels::FfiAttribute* out) {
    using Kind = kernels::FfiAttribute::Kind;
    if (const auto* s = attr.get<std::string>()) {
      out->kind = Kind::kString;
      out->bytes = *s;
      return OkStatus();
    }
    if (const auto* dict = attr.get<ir::Attribute::Dictionary>()) {
      out->kind = Kind::kDictionary;
      return Dictionary(*dict, path, &out->names, &out->fields);
    }
    if (const auto* elements = attr.get<ir::Attribute::Elements>()) {
      const ir::ElementsData& data = **elements;
      const DType dtype = data.type.dtype;
      const bool byte_sized = DTypeBitWidth(dtype) >= 8;
      if (!(IsInteger(dtype) || dtype == DType::kPred || dtype == DType::kF16 || dtype == DType::kBF16 ||
            dtype == DType::kF32 || dtype == DType::kF64) ||
          !byte_sized)
        return Unsupported(path, "(an array of " + std::string(DTypeName(dtype)) + ")");
      out->kind = Kind::kArray;
      out->dtype = dtype;
      std::vector<uint8_t> bytes = data.Expanded();
      out->bytes.assign(bytes.begin(), bytes.end());
      return OkStatus();
    }
    if (const auto* array = attr.get<ir::Attribute::Array>()) {
      out->kind = Kind::kArray;
      for (const ir::Attribute& element : *array) {
        DType dtype;
        std::string bytes;
        STABLERT_RETURN_IF_ERROR(ScalarBytes(element, path, &dtype, &bytes));
        if (out->dtype != DType::kInvalid && out->dtype != dtype)
          return Unsupported(path, "(an array mixing element types)");
        out->dtype = dtype;
        out->bytes += bytes;
      }
      if (out->dtype == DType::kInvalid) out->dtype = DType::kS64;  // an empty list
      return OkStatus();
    }
    out->kind = Kind::kScalar;
    return ScalarBytes(attr, path, &out->dtype, &out->bytes);
  }

  const Lowering& l_;
  const ir::Operation& op_;
  const std::string& target_;
};

// OK if `name` (operand_layouts/result_layouts) is absent or lists the row-major layout of
// every type.
Status CheckLayouts(const Lowering& l, const ir::Operation& op, const std::string& target, const char* name,
                    const std::vector<TensorType>& types) {
  const ir::Attribute* attr = op.attr(name);
  const auto* list = attr ? attr->get<ir::Attribute::Array>() : nullptr;
  if (list == nullptr || list->empty()) return OkStatus();
  if (list->size() != types.size())
    return l.Invalid(op, "custom_call '" + target + "': " + name + " has " + std::to_string(list->size()) +
                             " entries for " + std::to_string(types.size()) + " arrays");
  for (size_t i = 0; i < types.size(); ++i) {
    std::vector<int64_t> row_major;
    for (size_t d = types[i].dims.size(); d-- > 0;) row_major.push_back(static_cast<int64_t>(d));
    auto layout = (*list)[i].AsIntArray();
    if (!layout || *layout != row_major)
      return l.Unsupported(op, "custom_call '" + target + "': " + name + " entry " + std::to_string(i) +
                                   " is not the dense row-major layout StableRT stores");
  }
  return OkStatus();
}

}  // namespace

bool IsFfiCustomCall(const ir::Operation& op, std::string_view target) {
  if (kernels::ffi::FindHandler(target).has_value()) return true;
  return ApiVersion(op) == 4 || ConfigDictionary(op) != nullptr;
}

Status LowerFfiCall(Lowering& l, const ir::Operation& op, std::string_view target_name) {
  const std::string target(target_name);
  if (!kernels::ffi::FindHandler(target))
    return l.Unsupported(op, "custom_call target '" + target +
                                 "' is not supported: no XLA FFI handler is registered for it on platform 'stablert' "
                                 "(jax.ffi.register_ffi_target(..., platform=\"stablert\"))");
  const ir::Attribute* config = op.attr("backend_config");
  if (ConfigDictionary(op) == nullptr && config != nullptr && config->AsString() && !config->AsString()->empty())
    return l.Unsupported(op, "custom_call '" + target +
                                 "': a string backend_config (the legacy custom call API) is not supported; FFI "
                                 "handlers take their attributes from a dictionary");
  std::vector<ValueId> inputs, outputs;
  std::vector<TensorType> in_types, out_types;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId value, l.Operand(op, i));
    TensorType type = l.TypeOf(value);
    if (type.dtype == DType::kToken || DTypeBitWidth(type.dtype) < 8)
      return l.Unsupported(op, "custom_call '" + target + "': operand " + std::to_string(i) + " of type " +
                                   TensorTypeToString(type) + " cannot be passed to an FFI handler");
    inputs.push_back(value);
    in_types.push_back(std::move(type));
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(TensorType type, l.ResultType(op, i));
    if (type.dtype == DType::kToken || DTypeBitWidth(type.dtype) < 8)
      return l.Unsupported(op, "custom_call '" + target + "': result " + std::to_string(i) + " of type " +
                                   TensorTypeToString(type) + " cannot be returned by an FFI handler");
    out_types.push_back(type);
    outputs.push_back(l.NewValue(std::move(type)));
  }
  STABLERT_RETURN_IF_ERROR(CheckLayouts(l, op, target, "operand_layouts", in_types));
  STABLERT_RETURN_IF_ERROR(CheckLayouts(l, op, target, "result_layouts", out_types));
  // Results aliasing operands (jax.ffi.ffi_call's input_output_aliases): the handler expects
  // the result buffer to hold the operand on entry, so the operand is copied into it first
  // (a copy buffer assignment removes when the operand dies there), and the handler gets
  // that buffer as the operand too, as XLA passes one buffer for both.
  if (const ir::Attribute* aliases = op.attr("output_operand_aliases")) {
    const auto* list = aliases->get<ir::Attribute::Array>();
    if (list == nullptr) return l.Invalid(op, "custom_call '" + target + "': output_operand_aliases is not a list");
    for (const ir::Attribute& alias : *list) {
      const auto* fields = alias.get<ir::Attribute::Dictionary>();
      const ir::Attribute* output_index = fields ? ir::FindAttr(*fields, "output_tuple_indices") : nullptr;
      const ir::Attribute* operand_index = fields ? ir::FindAttr(*fields, "operand_index") : nullptr;
      const ir::Attribute* operand_tuple = fields ? ir::FindAttr(*fields, "operand_tuple_indices") : nullptr;
      auto output = output_index ? output_index->AsIntArray() : std::nullopt;
      auto operand = operand_index ? operand_index->AsInt() : std::nullopt;
      auto operand_path = operand_tuple ? operand_tuple->AsIntArray() : std::vector<int64_t>{};
      if (!output || !operand || !operand_path || !operand_path->empty() || output->size() > 1)
        return l.Invalid(op, "custom_call '" + target + "': malformed output_operand_aliases entry");
      const int64_t out = output->empty() ? 0 : (*output)[0];
      if (out < 0 || out >= static_cast<int64_t>(outputs.size()) || *operand < 0 ||
          *operand >= static_cast<int64_t>(inputs.size()) || in_types[*operand] != out_types[out])
        return l.Invalid(op, "custom_call '" + target + "': output_operand_aliases pairs result " +
                                 std::to_string(out) + " with operand " + std::to_string(*operand) +
                                 ", which is missing or of another type");
      l.EmitCopy(op, inputs[*operand], outputs[out]);
      inputs[*operand] = outputs[out];
    }
  }
  kernels::FfiAttributes attributes;
  if (const ir::Attribute::Dictionary* dict = ConfigDictionary(op))
    STABLERT_RETURN_IF_ERROR(AttributeConverter(l, op, target).Dictionary(*dict, "", &attributes.names,
                                                                          &attributes.values));
  l.Emit(op, "ffi_call", std::move(inputs), outputs,
         kernels::FfiCallParams{.target = target, .attributes = kernels::EncodeFfiAttributes(attributes)});
  for (size_t i = 0; i < op.results.size(); ++i) l.Bind(op.results[i], outputs[i]);
  return OkStatus();
}

}  // namespace stablert::plan
