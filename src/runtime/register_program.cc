#include "runtime/register_program.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/registry.h"

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

enum ChainOp : uint8_t { kNone = 0, kAdd, kSubtract, kMultiply, kDivide, kUnary };
// A link's operation with the running value's side: running op other, or other op running.
enum LinkOp : uint8_t { kLinkAdd, kLinkSubtract, kLinkSubtractFrom, kLinkMultiply, kLinkDivide, kLinkDivideInto,
                        kLinkUnary };

LinkOp LinkOpOf(uint8_t op, bool running_left) {
  switch (op) {
    case kAdd: return kLinkAdd;
    case kSubtract: return running_left ? kLinkSubtract : kLinkSubtractFrom;
    case kMultiply: return kLinkMultiply;
    case kDivide: return running_left ? kLinkDivide : kLinkDivideInto;
    default: return kLinkUnary;
  }
}

// The loop-test type of an integer compare kernel ("compare.s32"), 0 for others.
uint8_t CompareTypeOf(std::string_view kernel) {
  const DType types[] = {DType::kS32, DType::kS64, DType::kU32, DType::kU64};
  for (uint8_t t = 0; t < 4; ++t)
    if (kernel == kernels::KernelKey("compare", {types[t]})) return static_cast<uint8_t>(t + 1);
  return 0;
}

ChainOp ChainOpOf(std::string_view kernel, DType* dtype) {
  const size_t dot = kernel.find('.');
  if (dot == std::string_view::npos) return kNone;
  const std::string_view op = kernel.substr(0, dot), type = kernel.substr(dot + 1);
  if (type == "f32") *dtype = DType::kF32;
  else if (type == "f64") *dtype = DType::kF64;
  else return kNone;
  if (op == "add") return kAdd;
  if (op == "subtract") return kSubtract;
  if (op == "multiply") return kMultiply;
  if (op == "divide") return kDivide;
  return kNone;
}

inline void RunAll(const std::vector<kernels::ScalarInstruction>& code, kernels::ScalarSlot* registers) {
  for (const kernels::ScalarInstruction& instruction : code) instruction.fn(registers, instruction);
}

}  // namespace

struct ChainRunner {
  // One operation per statement, each rounded to T: the same results as the kernels
  // (IEEE operations under the executor's flush-to-zero mode), never contracted. The
  // switch compiles to compare-and-branch (no jump table): per link a few well-predicted
  // branches, measured ~1 ns per iteration faster on the Euler loop than a jump table or
  // threaded code (a computed goto per link).
  template <typename T>
#if defined(__GNUC__) && !defined(__clang__)
  __attribute__((optimize("fp-contract=off", "no-jump-tables")))
#endif
  static void Run(kernels::ScalarSlot* r, const kernels::ScalarInstruction& instruction) {
    const auto* link = reinterpret_cast<const RegisterProgram::ChainLink*>(instruction.attr);
    const auto* end = link + instruction.c;
    T running = kernels::GetSlot<T>(r[instruction.a]);
    for (; link != end; ++link) {
      const T x = kernels::GetSlot<T>(r[link->other]);
      switch (link->op) {
        case kLinkAdd: running = running + x; break;
        case kLinkSubtract: running = running - x; break;
        case kLinkSubtractFrom: running = x - running; break;
        case kLinkMultiply: running = running * x; break;
        case kLinkDivide: running = running / x; break;
        case kLinkDivideInto: running = x / running; break;
        default:
          if constexpr (std::is_same_v<T, float>) running = link->unary(running);
          break;
      }
      kernels::SetSlot(r[link->dst], running);
    }
  }
};

namespace {
// A call instruction: r[a] holds the address of the bound calls, attr the call's number.
void RunBoundCall(kernels::ScalarSlot* registers, const kernels::ScalarInstruction& instruction) {
  const auto* calls = reinterpret_cast<const kernels::BoundCall*>(static_cast<uintptr_t>(registers[instruction.a].bits));
  const kernels::BoundCall& call = calls[instruction.attr];
  call.run(call.storage);
}
}  // namespace

template <typename I>
void RegisterProgram::RunLoop(kernels::ScalarSlot* registers) const {
  const kernels::ScalarSlot& a = registers[test_.a];
  const kernels::ScalarSlot& b = registers[test_.b];
  auto test = [&] {
    const I x = kernels::GetSlot<I>(a), y = kernels::GetSlot<I>(b);
    switch (test_.direction) {
      case 0: return x == y;
      case 1: return x != y;
      case 2: return x >= y;
      case 3: return x > y;
      case 4: return x <= y;
      default: return x < y;
    }
  };
  while (test()) RunAll(body_, registers);
  kernels::SetSlot<uint8_t>(registers[predicate_], 0);  // what the condition left at the exit
}

void RegisterProgram::Run(const kernels::BufferView* views, const kernels::BoundCall* calls) const {
  kernels::ScalarSlot registers[kMaxRegisters];
  if (calls_register_ >= 0) registers[calls_register_].bits = reinterpret_cast<uintptr_t>(calls);
  for (const Transfer& load : loads_) CopyElement(&registers[load.reg], views[load.slot].data, load.bytes);
  switch (test_.type) {
    case 1: RunLoop<int32_t>(registers); break;
    case 2: RunLoop<int64_t>(registers); break;
    case 3: RunLoop<uint32_t>(registers); break;
    case 4: RunLoop<uint64_t>(registers); break;
    default:
      if (predicate_ < 0) {
        RunAll(body_, registers);
        break;
      }
      while (true) {
        RunAll(condition_, registers);
        if (!kernels::GetSlot<uint8_t>(registers[predicate_])) break;
        RunAll(body_, registers);
      }
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

bool RegisterProgramBuilder::Add(std::string_view kernel, kernels::ScalarFn fn, int64_t attr,
                                 std::span<const Operand> inputs, Operand output) {
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
  DType dtype = DType::kInvalid;
  ChainOp op = inputs.size() == 2 ? ChainOpOf(kernel, &dtype) : kNone;
  const kernels::ScalarF32Fn unary = inputs.size() == 1 ? kernels::ScalarF32FunctionOf(kernel) : nullptr;
  if (unary != nullptr) op = kUnary, dtype = DType::kF32;
  for (size_t i = 0; i < inputs.size() && op != kNone; ++i)
    if (plan_->values[inputs[i].value].type.dtype != dtype) op = kNone;
  if (plan_->values[output.value].type.dtype != dtype) op = kNone;
  info_.push_back(Info{static_cast<int8_t>(inputs.size()), op, dtype, op == kUnary ? unary : nullptr,
                       CompareTypeOf(kernel)});
  return true;
}

std::vector<size_t> RegisterProgramBuilder::Schedule(size_t begin, size_t end) const {
  const size_t n = end - begin;
  std::vector<size_t> order;
  order.reserve(n);
  constexpr size_t kMaxReordered = 256;  // quadratic below; longer runs keep step order
  if (n > kMaxReordered) {
    for (size_t i = begin; i < end; ++i) order.push_back(i);
    return order;
  }
  auto reads = [&](size_t i, int32_t r) {
    const kernels::ScalarInstruction& x = instructions_[i];
    const int inputs = info_[i].inputs;
    return (inputs > 0 && x.a == r) || (inputs > 1 && x.b == r) || (inputs > 2 && x.c == r);
  };
  // j (> i) must run after i if it reads what i writes, writes what i reads or writes.
  auto depends = [&](size_t i, size_t j) {
    const int32_t wi = instructions_[i].dst, wj = instructions_[j].dst;
    return reads(j, wi) || reads(i, wj) || wi == wj;
  };
  auto extends = [&](size_t last, size_t j) {  // j continues a chain ending with last
    return info_[last].op != kNone && info_[j].op != kNone && info_[j].dtype == info_[last].dtype &&
           reads(j, instructions_[last].dst);
  };
  std::vector<std::vector<uint16_t>> successors(n);
  std::vector<int> waiting(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if (depends(begin + i, begin + j)) successors[i].push_back(static_cast<uint16_t>(j)), ++waiting[j];
  // Height: the longest path of reads to the end, counting a chain link 1 and any other
  // instruction (a function call) 4.
  std::vector<int> height(n, 0);
  for (size_t i = n; i-- > 0;) {
    const kernels::ScalarInstruction& x = instructions_[begin + i];
    const uint8_t op = info_[begin + i].op;
    int below = 0;
    for (uint16_t j : successors[i])
      if (reads(begin + j, x.dst)) below = std::max(below, height[j]);
    height[i] = below + (op != kNone && op != kUnary ? 1 : 4);
  }
  std::vector<bool> done(n, false);
  size_t last = n;
  for (size_t step = 0; step < n; ++step) {
    size_t pick = n;
    if (last < n)  // continue the chain: the ready reader of the last result on the longest path
      for (size_t j = 0; j < n; ++j)
        if (!done[j] && waiting[j] == 0 && extends(begin + last, begin + j) && (pick == n || height[j] > height[pick]))
          pick = j;
    if (pick == n)  // start anew: the ready instruction on the shortest path first
      for (size_t j = 0; j < n; ++j)
        if (!done[j] && waiting[j] == 0 && (pick == n || height[j] < height[pick])) pick = j;
    done[pick] = true;
    for (uint16_t j : successors[pick]) --waiting[j];
    order.push_back(begin + pick);
    last = pick;
  }
  return order;
}

void RegisterProgramBuilder::EmitWithChains(size_t begin, size_t end, RegisterProgram& program,
                                            std::vector<kernels::ScalarInstruction>& out) const {
  // Calls stay where they are; the instructions between them are scheduled.
  std::vector<size_t> order;
  for (size_t i = begin; i < end;) {
    size_t j = i;
    while (j < end && info_[j].inputs >= 0) ++j;
    const std::vector<size_t> part = Schedule(i, j);
    order.insert(order.end(), part.begin(), part.end());
    if (j < end) order.push_back(j++);
    i = j;
  }
  for (size_t i = 0; i < order.size();) {
    // The longest chain from i: same type, each link reading the previous link's result.
    const kernels::ScalarInstruction& first = instructions_[order[i]];
    size_t j = i + 1;
    if (info_[order[i]].op != kNone) {
      while (j < order.size()) {
        const Info& next = info_[order[j]];
        const kernels::ScalarInstruction& x = instructions_[order[j]];
        const int32_t previous = instructions_[order[j - 1]].dst;
        if (next.op == kNone || next.dtype != info_[order[i]].dtype ||
            !(x.a == previous || (next.inputs > 1 && x.b == previous)))
          break;
        ++j;
      }
    }
    if (j - i < 2) {
      out.push_back(first);
      i = j;
      continue;
    }
    auto links = std::make_unique<RegisterProgram::ChainLink[]>(j - i);
    for (size_t k = i; k < j; ++k) {
      const kernels::ScalarInstruction& instruction = instructions_[order[k]];
      const Info& info = info_[order[k]];
      const bool left = k == i || instruction.a == instructions_[order[k - 1]].dst;
      links[k - i] = RegisterProgram::ChainLink{LinkOpOf(info.op, left), left ? instruction.b : instruction.a,
                                                instruction.dst, info.unary};
    }
    const kernels::ScalarFn fn =
        info_[order[i]].dtype == DType::kF32 ? &ChainRunner::Run<float> : &ChainRunner::Run<double>;
    out.push_back(kernels::ScalarInstruction{fn, first.dst, first.a, 0, static_cast<int32_t>(j - i),
                                             static_cast<int64_t>(reinterpret_cast<intptr_t>(links.get()))});
    program.chains_.push_back(std::move(links));
    i = j;
  }
}

bool RegisterProgramBuilder::AddCall(std::span<const plan::ValueId> touched) {
  if (failed_) return false;
  touched_by_calls_.insert(touched_by_calls_.end(), touched.begin(), touched.end());
  // `a` becomes the calls' register when the program is finished.
  instructions_.push_back(kernels::ScalarInstruction{&RunBoundCall, -1, -1, 0, 0, num_calls_++});
  info_.push_back(Info{-1, kNone, DType::kInvalid, nullptr});
  return true;
}

bool RegisterProgramBuilder::Overlaps(plan::ValueId value, size_t r) const {
  const plan::Value& v = plan_->values[value];
  const Location& location = locations_[r];
  // A donated parameter's buffer may be a result's.
  if ((v.storage == plan::Storage::kParameter && location.storage == plan::Storage::kResult) ||
      (v.storage == plan::Storage::kResult && location.storage == plan::Storage::kParameter))
    return true;
  // Constants are only read, by calls and registers alike.
  if (v.storage != location.storage || v.storage == plan::Storage::kConstant) return false;
  if (v.storage != plan::Storage::kArena || !v.strides.empty()) return v.storage == plan::Storage::kArena || v.index == location.index;
  return location.index < v.index + v.byte_size && v.index < location.index + location.bytes;
}

bool RegisterProgramBuilder::EndCondition(Operand predicate) {
  if (failed_ || predicate_ >= 0 || plan_->values[predicate.value].type.dtype != DType::kPred) return !(failed_ = true);
  predicate_ = RegisterOf(predicate);
  if (predicate_ < 0 || !locations_[static_cast<size_t>(predicate_)].written) return !(failed_ = true);
  condition_end_ = instructions_.size();
  return true;
}

int RegisterProgramBuilder::Rename(size_t begin, size_t end, int next) {
  // The writes to each register in [begin, end), and how many of them are left.
  std::vector<int> writes_left(locations_.size(), 0);
  for (size_t i = begin; i < end; ++i)
    if (info_[i].inputs >= 0) ++writes_left[static_cast<size_t>(instructions_[i].dst)];
  std::vector<int32_t> current(locations_.size());
  for (size_t r = 0; r < current.size(); ++r) current[r] = static_cast<int32_t>(r);
  for (size_t i = begin; i < end; ++i) {
    kernels::ScalarInstruction& x = instructions_[i];
    const int inputs = info_[i].inputs;
    if (inputs < 0) continue;
    if (inputs > 0) x.a = current[static_cast<size_t>(x.a)];
    if (inputs > 1) x.b = current[static_cast<size_t>(x.b)];
    if (inputs > 2) x.c = current[static_cast<size_t>(x.c)];
    const size_t location = static_cast<size_t>(x.dst);
    if (--writes_left[location] > 0 && next < RegisterProgram::kMaxRegisters - 1) {
      current[location] = next++;  // not the last write: a register of its own
    } else {
      current[location] = static_cast<int32_t>(location);
    }
    x.dst = current[location];
  }
  return next;
}

std::optional<RegisterProgram> RegisterProgramBuilder::Finish() {
  if (failed_) return std::nullopt;
  // Temporaries sharing a location get registers of their own (the calls register, if any,
  // comes after them).
  int registers = static_cast<int>(locations_.size());
  registers = Rename(0, condition_end_, registers);
  registers = Rename(condition_end_, instructions_.size(), registers);
  RegisterProgram program;
  EmitWithChains(0, condition_end_, program, program.condition_);
  EmitWithChains(condition_end_, instructions_.size(), program, program.body_);
  program.predicate_ = predicate_;
  if (predicate_ >= 0 && program.condition_.size() == 1 && condition_end_ == 1 && info_[0].compare != 0 &&
      instructions_[0].dst == predicate_) {
    program.test_ = RegisterProgram::LoopTest{info_[0].compare, static_cast<uint8_t>(instructions_[0].attr / 8),
                                              instructions_[0].a, instructions_[0].b};
    program.condition_.clear();
  }
  program.num_registers_ = registers;
  if (num_calls_ > 0) {
    for (plan::ValueId value : touched_by_calls_)
      for (size_t r = 0; r < locations_.size(); ++r)
        if (Overlaps(value, r)) return std::nullopt;
    if (program.num_registers_ >= RegisterProgram::kMaxRegisters) return std::nullopt;
    program.calls_register_ = program.num_registers_++;
    program.num_calls_ = num_calls_;
    for (auto* code : {&program.condition_, &program.body_})
      for (kernels::ScalarInstruction& instruction : *code)
        if (instruction.fn == &RunBoundCall) instruction.a = program.calls_register_;
  }
  for (size_t r = 0; r < locations_.size(); ++r) {
    const Location& location = locations_[r];
    const RegisterProgram::Transfer transfer{static_cast<int32_t>(r), location.slot, location.bytes};
    if (location.read) program.loads_.push_back(transfer);
    if (location.written) program.stores_.push_back(transfer);
  }
  return program;
}

}  // namespace stablert::runtime
