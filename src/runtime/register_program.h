// Register programs: runs of single-element kernel steps, and while loops made only of
// them, executed on a small register file instead of step by step.
//
// The executor (runtime/executor.cc) compiles them once per loaded plan. Each register
// stands for one storage location of the plan (an arena offset, a parameter, a constant or
// a result buffer) holding one element; each step becomes one instruction (its scalar
// function, kernels::ScalarFunctionOf) reading the registers of its inputs' locations and
// writing its output's. The registers emulate those memory locations exactly: a program
// loads the locations it reads, runs its instructions in step order, then stores the
// locations it wrote, so in-place updates and values sharing storage behave as they do step
// by step, and the results are the steps' bit for bit. A loop keeps its carried values,
// counter and constants in registers for all its iterations and touches memory only before
// the first and after the last.
//
// Chains: consecutive f32 or f64 add/subtract/multiply/divide instructions each reading the
// previous one's result run as one instruction that keeps the running value in a machine
// register (each result is still stored to its register), so a dependent chain does not go
// through memory between its links; the operations and their rounding are the same (no
// contraction into FMAs). f32 functions with a plain f32 -> f32 form
// (kernels::ScalarF32FunctionOf: sin, cos) are links too. Before chains are formed, the
// instructions between calls are reordered (respecting every read and write of a register,
// so the registers end as in step order) to make chains long: a chain is continued by an
// instruction reading its last result where one is ready, and side computations (the
// shortest paths to the end) are placed first, so the longest dependent path tends to
// become one chain.
//
// Loops with kernel calls: a loop may also hold calls of bound kernel steps
// (kernels::BoundCall, e.g. a fused step over a carried array), bound per execution and
// passed to Run. A call works on memory, so the builder refuses a program in which a call
// touches a location some register stands for (the memory would be stale until the
// program's final stores); the counter, the condition and the scalar work then stay in
// registers while the calls stream their arrays.
//
// Build with RegisterProgramBuilder; a built program is immutable and may run on many
// threads at once (each run has its registers on its stack). Running cannot fail.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <span>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/scalar_program.h"
#include "plan/plan.h"

namespace stablert::runtime {

class RegisterProgram {
 public:
  // The most registers a program may use (its register file lives on the stack).
  static constexpr int kMaxRegisters = 128;

  // Runs the program with the executor's operand views (`views`: the data pointers of the
  // operand slots the builder was given). A program with calls (num_calls() > 0) takes the
  // bound calls in `calls`, in the order the builder's AddCall numbered them.
  void Run(const kernels::BufferView* views, const kernels::BoundCall* calls = nullptr) const;

  RegisterProgram() = default;
  RegisterProgram(RegisterProgram&&) = default;  // chain instructions point into chains_
  RegisterProgram& operator=(RegisterProgram&&) = default;
  RegisterProgram(const RegisterProgram&) = delete;
  RegisterProgram& operator=(const RegisterProgram&) = delete;

  bool is_loop() const { return predicate_ >= 0; }
  int num_registers() const { return num_registers_; }
  size_t num_instructions() const { return condition_.size() + body_.size() + (test_.type != 0 ? 1 : 0); }
  int num_calls() const { return num_calls_; }

 private:
  friend class RegisterProgramBuilder;
  struct Transfer {
    int32_t reg;
    uint32_t slot;  // operand slot (into the executor's views)
    uint8_t bytes;
  };
  std::vector<kernels::ScalarInstruction> condition_;  // loops: evaluated before each iteration
  std::vector<kernels::ScalarInstruction> body_;
  int32_t predicate_ = -1;  // loops: the register the condition leaves its i1 in
  int num_registers_ = 0;
  int num_calls_ = 0;
  int32_t calls_register_ = -1;  // programs with calls: the register holding the calls' address
  std::vector<Transfer> loads_, stores_;
  // Loops whose condition is one integer compare of two registers: it runs inline (no call,
  // no round trip of the i1 through its register) and the condition code is empty.
  struct LoopTest {
    uint8_t type = 0;  // 0: none; 1 s32, 2 s64, 3 u32, 4 u64
    uint8_t direction = 0;  // VHLO comparison direction (kernels::ops::CompareValues)
    int32_t a = 0, b = 0;
  };
  LoopTest test_;
  template <typename I>
  void RunLoop(kernels::ScalarSlot* registers) const;
  // One link of a chain: running = running op r[other] (or r[other] op running), or
  // running = unary(running), stored to r[dst].
  struct ChainLink {
    uint8_t op;      // LinkOp: the operation and which side the running value is on
    int32_t other;   // r[other] is the other operand
    int32_t dst;
    kernels::ScalarF32Fn unary = nullptr;  // kUnary
  };
  std::vector<std::unique_ptr<ChainLink[]>> chains_;  // a chain instruction's attr points here

  friend struct ChainRunner;
};

// Collects the instructions of a program. Not thread-safe.
class RegisterProgramBuilder {
 public:
  // One operand of a step: its value in the plan and the operand slot it is read or
  // written through.
  struct Operand {
    plan::ValueId value;
    uint32_t slot;
  };

  explicit RegisterProgramBuilder(const plan::ExecutionPlan& plan) : plan_(&plan) {}

  // Appends the instruction of one single-element step (`fn`, `attr` as
  // kernels::ScalarFunctionOf describes). False if its locations do not fit the registers
  // (an element of another size at the same location, overlapping locations, too many
  // registers); the builder is then unusable.
  // `kernel` is the step's kernel key ("multiply.f32").
  bool Add(std::string_view kernel, kernels::ScalarFn fn, int64_t attr, std::span<const Operand> inputs,
           Operand output);
  // Appends a call of the next bound kernel step (numbered 0, 1, ... in the order added),
  // which reads and writes the memory of the values `touched`. Finish refuses the program if
  // any of that memory is a register's location.
  bool AddCall(std::span<const plan::ValueId> touched);
  // Ends the condition of a loop, whose i1 result is `predicate`; the instructions added
  // after it are the loop's body.
  bool EndCondition(Operand predicate);

  // The program: straight-line code, or a loop if EndCondition was called. nullopt if an
  // Add failed.
  std::optional<RegisterProgram> Finish();

 private:
  struct Location {
    plan::Storage storage;
    int64_t index;
    uint8_t bytes;
    uint32_t slot;
    bool read = false, written = false;
  };
  // The register of `operand`'s location, or -1 if it does not fit.
  int32_t RegisterOf(const Operand& operand);

  const plan::ExecutionPlan* plan_;
  std::vector<Location> locations_;  // register r holds locations_[r]
  // Appends `code` to `out`, chains merged into one instruction each (owned by `program`).
  void EmitWithChains(size_t begin, size_t end, RegisterProgram& program,
                      std::vector<kernels::ScalarInstruction>& out) const;

  std::vector<kernels::ScalarInstruction> instructions_;
  // Per instruction: how many registers it reads (a, b, c in order; -1: a call, which
  // touches none), its op for chains (ChainOp, 0: none), element type and f32 function.
  struct Info {
    int8_t inputs;
    uint8_t op;
    DType dtype;
    kernels::ScalarF32Fn unary;
    uint8_t compare = 0;  // an integer compare: RegisterProgram::LoopTest::type
  };
  std::vector<Info> info_;
  // Gives every write to a register in [begin, end) but the last its own register (from
  // `next` on, while they fit), the reads between two writes reading the first's, so that
  // temporaries which share a storage location do not order each other. The register
  // still holds the value from before until the last write and the final value after it,
  // so what the condition, the next iteration and the final stores see is unchanged.
  // Returns the next free register.
  int Rename(size_t begin, size_t end, int next);
  // The order in which to run instructions [begin, end) (no calls among them): chains long.
  std::vector<size_t> Schedule(size_t begin, size_t end) const;
  size_t condition_end_ = 0;
  int32_t predicate_ = -1;
  bool failed_ = false;
  int num_calls_ = 0;
  std::vector<plan::ValueId> touched_by_calls_;
  // Whether `value`'s memory may share bytes with register r's location.
  bool Overlaps(plan::ValueId value, size_t r) const;
};

}  // namespace stablert::runtime
