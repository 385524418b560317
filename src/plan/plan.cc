#include "plan/plan.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace stablert::plan {

std::string TensorTypeToString(const TensorType& type) {
  return std::string(DTypeName(type.dtype)) + DimsToString(type.dims);
}

int64_t ByteSize(const TensorType& type) { return ElementCount(type.dims) * DTypeByteSize(type.dtype); }

int64_t ViewByteSize(const TensorType& type, const std::vector<int64_t>& strides) {
  if (strides.empty()) return ByteSize(type);
  int64_t last = 0;
  for (size_t d = 0; d < type.dims.size(); ++d) {
    if (type.dims[d] == 0) return 0;
    last += (type.dims[d] - 1) * strides[d];
  }
  return (last + 1) * DTypeByteSize(type.dtype);
}

RuntimeCache& RuntimeCache::operator=(const RuntimeCache&) {
  std::lock_guard<std::mutex> lock(mutex_);
  value_.store(nullptr, std::memory_order_release);
  owner_.reset();
  return *this;
}

const void* RuntimeCache::GetOrSet(std::shared_ptr<const void> state) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (owner_ == nullptr) {
    owner_ = std::move(state);
    value_.store(owner_.get(), std::memory_order_release);
  }
  return owner_.get();
}

namespace {

std::string ElementToString(DType dtype, const uint8_t* p) {
  char buffer[48];
  auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (dtype) {
    case DType::kPred: return *p ? "true" : "false";
    case DType::kS8: return std::to_string(load(int8_t{}));
    case DType::kS16: return std::to_string(load(int16_t{}));
    case DType::kS32: return std::to_string(load(int32_t{}));
    case DType::kS64: return std::to_string(load(int64_t{}));
    case DType::kU8: return std::to_string(load(uint8_t{}));
    case DType::kU16: return std::to_string(load(uint16_t{}));
    case DType::kU32: return std::to_string(load(uint32_t{}));
    case DType::kU64: return std::to_string(load(uint64_t{}));
    case DType::kF32: std::snprintf(buffer, sizeof(buffer), "%.9g", load(float{})); return buffer;
    case DType::kF64: std::snprintf(buffer, sizeof(buffer), "%.17g", load(double{})); return buffer;
    case DType::kF16:
    case DType::kBF16: std::snprintf(buffer, sizeof(buffer), "0x%04x", load(uint16_t{})); return buffer;
    default: return "?";
  }
}

std::string ConstantToString(const TensorType& type, const std::vector<uint8_t>& bytes) {
  constexpr int64_t kMaxShown = 8;
  const int size = DTypeByteSize(type.dtype);
  if (size == 0) return "{}";
  const int64_t count = static_cast<int64_t>(bytes.size()) / size;
  std::string out = "{";
  for (int64_t i = 0; i < count && i < kMaxShown; ++i) {
    if (i) out += ", ";
    out += ElementToString(type.dtype, &bytes[static_cast<size_t>(i * size)]);
  }
  if (count > kMaxShown) out += ", ...";
  return out + "}";
}

std::string IntListToString(const std::vector<int64_t>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(list[i]);
  }
  return out + "]";
}

std::string ValueListToString(const std::vector<ValueId>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += '%';
    out += std::to_string(values[i]);
  }
  return out;
}

void PrintSequence(const Sequence& sequence, const std::string& indent, std::string& out) {
  for (const Step& step : sequence.steps) {
    out += indent;
    switch (step.kind) {
      case StepKind::kKernel: out += step.kernel; break;
      case StepKind::kWhile: out += "while"; break;
      case StepKind::kIf: out += "if"; break;
      case StepKind::kCase: out += "case"; break;
      case StepKind::kManual: out += "manual"; break;
      case StepKind::kCollective: out += step.kernel; break;
      case StepKind::kHostTransfer: out += step.kernel; break;
    }
    out += ' ';
    out += ValueListToString(step.inputs);
    out += " -> ";
    out += ValueListToString(step.outputs);
    if (step.workspace != kNoValue) out += " workspace %" + std::to_string(step.workspace);
    if (!step.params.empty()) {
      out += " {";
      out += step.params.ToString();
      out += "}";
    }
    if (!step.origin.empty()) {
      out += "  # ";
      out += step.origin;
    }
    out += "\n";
    for (size_t r = 0; r < step.regions.size(); ++r) {
      out += indent + "  region " + std::to_string(r) + ":\n";
      PrintSequence(step.regions[r], indent + "    ", out);
    }
  }
}

}  // namespace

std::string PrintPlan(const ExecutionPlan& plan) {
  std::string out = "plan v" + std::to_string(plan.version) + "\n";
  auto types = [](const std::vector<TensorType>& list) {
    std::string text;
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) text += ", ";
      text += TensorTypeToString(list[i]);
    }
    return text;
  };
  out += "parameters: (" + types(plan.parameter_types) + ")\n";
  out += "results: (" + types(plan.result_types) + ")\n";
  out += "arena: " + std::to_string(plan.arena_size) + " bytes\n";
  out += "values:\n";
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const Value& value = plan.values[i];
    out += "  %";
    out += std::to_string(i);
    out += ' ';
    out += TensorTypeToString(value.type);
    out += ' ';
    switch (value.storage) {
      case Storage::kArena:
        out += "arena @";
        out += std::to_string(value.index);
        out += " (";
        out += std::to_string(value.byte_size);
        out += " bytes)";
        break;
      case Storage::kParameter: out += "parameter "; out += std::to_string(value.index); break;
      case Storage::kResult: out += "result "; out += std::to_string(value.index); break;
      case Storage::kConstant: {
        out += "constant ";
        out += std::to_string(value.index);
        if (value.index >= 0 && static_cast<size_t>(value.index) < plan.constants.size())
          out += " = " + ConstantToString(value.type, plan.constants[static_cast<size_t>(value.index)]);
        break;
      }
    }
    if (!value.strides.empty()) out += " view strides " + IntListToString(value.strides);
    out += "\n";
  }
  out += "steps:\n";
  PrintSequence(plan.body, "  ", out);
  out += "return " + ValueListToString(plan.results) + "\n";
  return out;
}

}  // namespace stablert::plan
