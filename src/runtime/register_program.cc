#include "runtime/register_program.h"

#include <cstring>

namespace stablert::runtime {
namespace {

// Copies one element of `bytes` (1, 2, 4 or 8) bytes.
inline void CopyElement(void* dst, const void* src, uint8_t bytes) {
  switch (bytes) {
    case 1: std::memcpy(dst, src, 1); break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    default: std::memcpy(dst, src, 8); break;
  }
}

inline void RunAll(const std::vector<kernels::ScalarInstruction>& code, kernels::ScalarSlot* registers) {
  for (const kernels::ScalarInstruction& instruction : code) instruction.fn(registers, instruction);
}

}  // namespace

void RegisterProgram::Run(const kernels::BufferView* views) const {
  kernels::ScalarSlot registers[kMaxRegisters];
  for (const Transfer& load : loads_) CopyElement(&registers[load.reg], views[load.slot].data, load.bytes);
  if (predicate_ >= 0) {
    while (true) {
      RunAll(condition_, registers);
      if (!kernels::GetSlot<uint8_t>(registers[predicate_])) break;
      RunAll(body_, registers);
    }
  } else {
    RunAll(body_, registers);
  }
  for (const Transfer& store : stores_) CopyElement(views[store.slot].data, &registers[store.reg], store.bytes);
}

int32_t RegisterProgramBuilder::RegisterOf(const Operand& operand) {
  if (operand.value >= plan_->values.size()) return -1;
  const plan::Value& value = plan_->values[operand.value];
  const int bytes = DTypeByteSize(value.type.dtype);
  if (!value.strides.empty() || ElementCount(value.type.dims) != 1 || bytes < 1 || bytes > 8 ||
      value.byte_size != bytes)
    return -1;
  for (size_t r = 0; r < locations_.size(); ++r) {
    const Location& location = locations_[r];
    if (location.storage != value.storage) continue;
    if (location.index == value.index) return location.bytes == bytes ? static_cast<int32_t>(r) : -1;
    // Distinct arena locations must not overlap (parameters, constants and results are
    // separate buffers).
    if (value.storage == plan::Storage::kArena && location.index < value.index + bytes &&
        value.index < location.index + location.bytes)
      return -1;
  }
  if (locations_.size() >= static_cast<size_t>(RegisterProgram::kMaxRegisters)) return -1;
  locations_.push_back(Location{value.storage, value.index, static_cast<uint8_t>(bytes), operand.slot});
  return static_cast<int32_t>(locations_.size() - 1);
}

bool RegisterProgramBuilder::Add(kernels::ScalarFn fn, int64_t attr, std::span<const Operand> inputs,
                                 Operand output) {
  if (failed_ || fn == nullptr || inputs.empty() || inputs.size() > 3) return !(failed_ = true);
  int32_t operands[3] = {0, 0, 0};
  for (size_t i = 0; i < inputs.size(); ++i) {
    operands[i] = RegisterOf(inputs[i]);
    if (operands[i] < 0) return !(failed_ = true);
  }
  const int32_t dst = RegisterOf(output);
  if (dst < 0 || plan_->values[output.value].storage == plan::Storage::kParameter ||
      plan_->values[output.value].storage == plan::Storage::kConstant)
    return !(failed_ = true);
  for (size_t i = 0; i < inputs.size(); ++i) locations_[static_cast<size_t>(operands[i])].read = true;
  locations_[static_cast<size_t>(dst)].written = true;
  instructions_.push_back(kernels::ScalarInstruction{fn, dst, operands[0], operands[1], operands[2], attr});
  return true;
}

bool RegisterProgramBuilder::EndCondition(Operand predicate) {
  if (failed_ || predicate_ >= 0 || plan_->values[predicate.value].type.dtype != DType::kPred) return !(failed_ = true);
  predicate_ = RegisterOf(predicate);
  if (predicate_ < 0 || !locations_[static_cast<size_t>(predicate_)].written) return !(failed_ = true);
  condition_end_ = instructions_.size();
  return true;
}

std::optional<RegisterProgram> RegisterProgramBuilder::Finish() {
  if (failed_) return std::nullopt;
  RegisterProgram program;
  program.condition_.assign(instructions_.begin(), instructions_.begin() + static_cast<std::ptrdiff_t>(condition_end_));
  program.body_.assign(instructions_.begin() + static_cast<std::ptrdiff_t>(condition_end_), instructions_.end());
  program.predicate_ = predicate_;
  program.num_registers_ = static_cast<int>(locations_.size());
  for (size_t r = 0; r < locations_.size(); ++r) {
    const Location& location = locations_[r];
    const RegisterProgram::Transfer transfer{static_cast<int32_t>(r), location.slot, location.bytes};
    if (location.read) program.loads_.push_back(transfer);
    if (location.written) program.stores_.push_back(transfer);
  }
  return program;
}

}  // namespace stablert::runtime
