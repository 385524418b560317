// Register programs (runtime/register_program.h) through the executor: while loops of
// scalar steps, runs of scalar steps, loops whose condition alone is scalar. Each result is
// checked bit for bit against the steps' kernels run one by one.
#include "runtime/register_program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "ir/test_module_builder.h"
#include "kernels/kernel_test_util.h"
#include "plan/lower.h"
#include "runtime/executor.h"

namespace stablert::runtime {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;
using kernels::testing::Array;

ir::Attribute::Dictionary LessThan() {
  return {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}};
}

// The kernel `op` of `dtype` on one element (the step-by-step result).
template <typename T>
T KernelOnOne(const char* op, DType dtype, std::vector<T> operands) {
  std::vector<Array> inputs;
  for (T value : operands) inputs.push_back(kernels::testing::ArrayOf<T>(dtype, {}, {value}));
  std::vector<const Array*> pointers;
  for (const Array& input : inputs) pointers.push_back(&input);
  Array out(dtype, {});
  kernels::testing::RunKernel(kernels::KernelKey(op, {dtype}), pointers, {&out});
  return kernels::testing::ElementAt<T>(out, 0);
}

struct Lowered {
  plan::ExecutionPlan plan;
  std::unique_ptr<LoadedPlan> loaded;
};

Lowered Load(const ir::Module& module) {
  auto plan = plan::LowerToPlan(module);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  Lowered lowered{std::move(plan).value(), nullptr};
  auto loaded = LoadedPlan::Create(lowered.plan, kernels::CpuKernels());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  lowered.loaded = std::move(loaded).value();
  return lowered;
}

template <typename T>
std::vector<T> Execute(const Lowered& lowered, std::vector<const void*> arguments) {
  std::vector<T> out(static_cast<size_t>(plan::ByteSize(lowered.plan.result_types[0]) / sizeof(T)));
  void* results[] = {out.data()};
  Status status = lowered.loaded->Execute(arguments, results);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out;
}

// y <- y + h * (-0.5 y + sin(1.1 y) * 0.3 - 0.01 y^2 + 1), `steps` times (an Euler
// integration), on a scalar of `dtype`.
template <typename T>
ir::Module EulerLoop(DType dtype, int32_t steps) {
  ModuleBuilder b;
  auto y0 = b.Param(dtype, {});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto n = b.Constant<int32_t>(DType::kS32, {}, {steps});
  auto loop = b.While(
      {zero, y0}, [&](const std::vector<ir::ValueId>& a) { return b.Op(OpCode::kCompare, {a[0], n}, DType::kPred, {}, LessThan()); },
      [&](const std::vector<ir::ValueId>& a) {
        auto c = [&](T value) { return b.Constant<T>(dtype, {}, {value}); };
        auto mul = [&](ir::ValueId x, ir::ValueId y) { return b.Op(OpCode::kMultiply, {x, y}, dtype, {}); };
        auto y = a[1];
        auto s = mul(b.Op(OpCode::kSine, {mul(y, c(T(1.1)))}, dtype, {}), c(T(0.3)));
        auto d = b.Op(OpCode::kAdd, {mul(c(T(-0.5)), y), s}, dtype, {});
        d = b.Op(OpCode::kSubtract, {d, mul(mul(y, y), c(T(0.01)))}, dtype, {});
        d = b.Op(OpCode::kAdd, {d, c(T(1))}, dtype, {});
        auto next = b.Op(OpCode::kAdd, {y, mul(c(T(0.001)), d)}, dtype, {});
        auto i = b.Op(OpCode::kAdd, {a[0], b.Constant<int32_t>(DType::kS32, {}, {1})}, DType::kS32, {});
        return std::vector<ir::ValueId>{i, next};
      });
  return b.Build({loop[1]});
}

template <typename T>
T EulerReference(DType dtype, T y, int32_t steps) {
  for (int32_t i = 0; i < steps; ++i) {
    const T s = KernelOnOne<T>("sine", dtype, {y * T(1.1)}) * T(0.3);
    const T d = T(-0.5) * y + s - y * y * T(0.01) + T(1);
    y = y + T(0.001) * d;
  }
  return y;
}

TEST(RegisterProgramTest, EulerLoopF32IsBitExact) {
  Lowered lowered = Load(EulerLoop<float>(DType::kF32, 3000));
  // The copies into the loop's buffers, the body's run (unused: the loop runs as a whole),
  // and the whole loop.
  EXPECT_EQ(lowered.loaded->num_register_programs(), 3u);
  for (float y0 : {1.0f, -3.5f, 0.0f, 20.0f}) {
    const float got = Execute<float>(lowered, {&y0})[0];
    const float want = EulerReference<float>(DType::kF32, y0, 3000);
    EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << y0 << ": " << got << " vs " << want;
  }
}

TEST(RegisterProgramTest, EulerLoopF64IsBitExact) {
  Lowered lowered = Load(EulerLoop<double>(DType::kF64, 2500));
  EXPECT_EQ(lowered.loaded->num_register_programs(), 3u);
  const double y0 = 0.25;
  const double got = Execute<double>(lowered, {&y0})[0];
  const double want = EulerReference<double>(DType::kF64, y0, 2500);
  EXPECT_EQ(std::memcmp(&got, &want, 8), 0) << got << " vs " << want;
}

// (a, b) <- (b, a * 1103515245 + b ^ (b >> 7)) on u32, carries that swap places.
TEST(RegisterProgramTest, IntegerLoopWithSwappedCarries) {
  ModuleBuilder b;
  auto a0 = b.Param(DType::kU32, {});
  auto b0 = b.Param(DType::kU32, {});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto n = b.Constant<int32_t>(DType::kS32, {}, {5000});
  auto loop = b.While(
      {zero, a0, b0},
      [&](const std::vector<ir::ValueId>& v) { return b.Op(OpCode::kCompare, {v[0], n}, DType::kPred, {}, LessThan()); },
      [&](const std::vector<ir::ValueId>& v) {
        auto u = [&](uint32_t value) { return b.Constant<uint32_t>(DType::kU32, {}, {value}); };
        auto mul = b.Op(OpCode::kMultiply, {v[1], u(1103515245u)}, DType::kU32, {});
        auto shifted = b.Op(OpCode::kShiftRightLogical, {v[2], u(7)}, DType::kU32, {});
        auto mixed = b.Op(OpCode::kXor, {v[2], shifted}, DType::kU32, {});
        auto next = b.Op(OpCode::kAdd, {mul, mixed}, DType::kU32, {});
        auto i = b.Op(OpCode::kAdd, {v[0], b.Constant<int32_t>(DType::kS32, {}, {1})}, DType::kS32, {});
        return std::vector<ir::ValueId>{i, v[2], next};
      });
  Lowered lowered = Load(b.Build({loop[1], loop[2]}));
  EXPECT_EQ(lowered.loaded->num_register_programs(), 3u);
  uint32_t a = 7, c = 12345;
  uint32_t got[2];
  void* results[] = {&got[0], &got[1]};
  const void* arguments[] = {&a, &c};
  ASSERT_TRUE(lowered.loaded->Execute(arguments, results).ok());
  for (int i = 0; i < 5000; ++i) {
    const uint32_t next = a * 1103515245u + (c ^ (c >> 7));
    a = c;
    c = next;
  }
  EXPECT_EQ(got[0], a);
  EXPECT_EQ(got[1], c);
}

// A loop whose body has a vector step: its condition runs as a program, and the body's
// scalar steps (s <- s * 1.01 + 0.1) as one run.
TEST(RegisterProgramTest, VectorBodyWithScalarRuns) {
  ModuleBuilder b;
  auto x0 = b.Param(DType::kF32, {64});
  auto s0 = b.Param(DType::kF32, {});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto n = b.Constant<int32_t>(DType::kS32, {}, {1000});
  auto loop = b.While(
      {zero, x0, s0},
      [&](const std::vector<ir::ValueId>& v) { return b.Op(OpCode::kCompare, {v[0], n}, DType::kPred, {}, LessThan()); },
      [&](const std::vector<ir::ValueId>& v) {
        auto f = [&](float value) { return b.Constant<float>(DType::kF32, {}, {value}); };
        auto s = b.Op(OpCode::kAdd, {b.Op(OpCode::kMultiply, {v[2], f(1.01f)}, DType::kF32, {}), f(0.1f)}, DType::kF32, {});
        auto ts = b.Op(OpCode::kTanh, {s}, DType::kF32, {});
        auto bs = b.Op(OpCode::kBroadcastInDim, {ts}, DType::kF32, {64},
                       {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
        auto half = b.Op(OpCode::kBroadcastInDim, {f(0.5f)}, DType::kF32, {64},
                         {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
        auto x = b.Op(OpCode::kAdd, {b.Op(OpCode::kMultiply, {v[1], half}, DType::kF32, {64}), bs}, DType::kF32, {64});
        auto i = b.Op(OpCode::kAdd, {v[0], b.Constant<int32_t>(DType::kS32, {}, {1})}, DType::kS32, {});
        return std::vector<ir::ValueId>{i, x, s};
      });
  Lowered lowered = Load(b.Build({loop[1], loop[2]}));
  EXPECT_GE(lowered.loaded->num_register_programs(), 2u);  // the condition, the scalar run
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) * 0.25f - 3.0f;
  float s = 0.5f;
  std::vector<float> got_x(64);
  float got_s;
  void* results[] = {got_x.data(), &got_s};
  const void* arguments[] = {x.data(), &s};
  ASSERT_TRUE(lowered.loaded->Execute(arguments, results).ok());
  for (int step = 0; step < 1000; ++step) {
    s = s * 1.01f + 0.1f;
    const float t = KernelOnOne<float>("tanh", DType::kF32, {s});
    for (float& value : x) value = value * 0.5f + t;
  }
  EXPECT_EQ(got_s, s);
  EXPECT_EQ(got_x, x);
}

// A loop whose body is a fused step over the carried array and the counter's increment:
// the whole loop is one register program (the condition and the counter in registers) that
// calls the bound fused step each iteration. A second loop reads the counter in its fused
// step, so the counter's memory must be current: that loop is refused as one program and
// runs step by step, with the same results.
TEST(RegisterProgramTest, LoopWithBoundCalls) {
  auto build = [](bool read_counter) {
    ModuleBuilder b;
    auto x0 = b.Param(DType::kF32, {64});
    auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
    auto n = b.Constant<int32_t>(DType::kS32, {}, {700});
    auto loop = b.While(
        {zero, x0},
        [&](const std::vector<ir::ValueId>& v) { return b.Op(OpCode::kCompare, {v[0], n}, DType::kPred, {}, LessThan()); },
        [&](const std::vector<ir::ValueId>& v) {
          auto splat = [&](ir::ValueId scalar) {
            return b.Op(OpCode::kBroadcastInDim, {scalar}, DType::kF32, {64},
                        {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
          };
          auto f = [&](float value) { return splat(b.Constant<float>(DType::kF32, {}, {value})); };
          auto x = b.Op(OpCode::kAdd, {b.Op(OpCode::kMultiply, {v[1], f(0.999f)}, DType::kF32, {64}), f(1.0f)},
                        DType::kF32, {64});
          if (read_counter)
            x = b.Op(OpCode::kAdd, {x, splat(b.Op(OpCode::kConvert, {v[0]}, DType::kF32, {}))}, DType::kF32, {64});
          auto i = b.Op(OpCode::kAdd, {v[0], b.Constant<int32_t>(DType::kS32, {}, {1})}, DType::kS32, {});
          return std::vector<ir::ValueId>{i, x};
        });
    return b.Build({loop[1], loop[0]});
  };
  for (bool read_counter : {false, true}) {
    SCOPED_TRACE(read_counter ? "reading the counter" : "not reading the counter");
    Lowered lowered = Load(build(read_counter));
    if (!read_counter) EXPECT_EQ(lowered.loaded->num_register_programs(), 2u);  // the condition, the loop
    std::vector<float> x(64);
    for (int i = 0; i < 64; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f - 7.0f;
    std::vector<float> got_x(64);
    int32_t got_i = -1;
    void* results[] = {got_x.data(), &got_i};
    const void* arguments[] = {x.data()};
    ASSERT_TRUE(lowered.loaded->Execute(arguments, results).ok());
    for (int step = 0; step < 700; ++step)
      for (float& value : x) value = value * 0.999f + 1.0f + (read_counter ? static_cast<float>(step) : 0.0f);
    EXPECT_EQ(got_i, 700);
    EXPECT_EQ(got_x, x);
  }
}

// Chains of dependent arithmetic with the running value on either side of subtract and
// divide, read twice (v * v), and a link whose other operand is an earlier link's result.
TEST(RegisterProgramTest, ArithmeticChainsKeepOperandOrder) {
  ModuleBuilder b;
  auto y0 = b.Param(DType::kF64, {});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto n = b.Constant<int32_t>(DType::kS32, {}, {1500});
  auto loop = b.While(
      {zero, y0}, [&](const std::vector<ir::ValueId>& a) { return b.Op(OpCode::kCompare, {a[0], n}, DType::kPred, {}, LessThan()); },
      [&](const std::vector<ir::ValueId>& a) {
        auto c = [&](double value) { return b.Constant<double>(DType::kF64, {}, {value}); };
        auto op = [&](OpCode code, ir::ValueId x, ir::ValueId y) { return b.Op(code, {x, y}, DType::kF64, {}); };
        auto t = op(OpCode::kDivide, op(OpCode::kSubtract, c(3.0), a[1]), c(7.0));  // (3 - y) / 7
        auto u = op(OpCode::kDivide, c(1.5), t);                                    // 1.5 / t
        auto v = op(OpCode::kSubtract, u, t);                                       // u - t
        auto w = op(OpCode::kMultiply, v, v);
        auto next = op(OpCode::kDivide, w, op(OpCode::kAdd, w, c(2.0)));            // w / (w + 2)
        auto i = b.Op(OpCode::kAdd, {a[0], b.Constant<int32_t>(DType::kS32, {}, {1})}, DType::kS32, {});
        return std::vector<ir::ValueId>{i, next};
      });
  Lowered lowered = Load(b.Build({loop[1]}));
  double y = 0.25;
  const double got = Execute<double>(lowered, {&y})[0];
  for (int i = 0; i < 1500; ++i) {
    const double t = (3.0 - y) / 7.0;
    const double u = 1.5 / t;
    const double v = u - t;
    const double w = v * v;
    const double s = w + 2.0;
    y = w / s;
  }
  EXPECT_EQ(std::memcmp(&got, &y, 8), 0) << got << " vs " << y;
}

// f32 chains with cos as a link (kernels::ScalarF32FunctionOf), subtract and divide with the
// running value on the right, and loops whose condition is one integer compare of every
// direction and counter type (run inline): each loop's result against the steps' kernels
// one by one. The counters count down, up by 3 or to an exact value, so each direction's
// exit is exercised, including loops that run zero times (y grows by at least 0.005 per
// iteration, so one more or less changes the result).
TEST(RegisterProgramTest, CosChainsAndIntegerLoopTests) {
  struct Case {
    DType counter;
    int64_t start, limit, step;
    int direction;  // VHLO: EQ 0, NE 1, GE 2, GT 3, LE 4, LT 5
  };
  const Case cases[] = {
      {DType::kS32, 0, 20, 1, 5},   {DType::kS32, 20, 0, -1, 3},  {DType::kS64, -30, 30, 3, 4},
      {DType::kS64, 9, -9, -1, 2},  {DType::kU32, 0, 17, 1, 1},   {DType::kU64, 20, 7, -1, 2},
      {DType::kU32, 5, 5, 1, 0},    {DType::kS32, 10, 0, 1, 5},   {DType::kU64, 3, 3, 1, 1}};
  for (const Case& test : cases) {
    SCOPED_TRACE(std::string(DTypeName(test.counter)) + " direction " + std::to_string(test.direction) + " from " +
                 std::to_string(test.start));
    ModuleBuilder b;
    auto y0 = b.Param(DType::kF32, {});
    auto counter = [&](int64_t value) {
      if (test.counter == DType::kS32) return b.Constant<int32_t>(DType::kS32, {}, {static_cast<int32_t>(value)});
      if (test.counter == DType::kU32) return b.Constant<uint32_t>(DType::kU32, {}, {static_cast<uint32_t>(value)});
      if (test.counter == DType::kS64) return b.Constant<int64_t>(DType::kS64, {}, {value});
      return b.Constant<uint64_t>(DType::kU64, {}, {static_cast<uint64_t>(value)});
    };
    auto limit = counter(test.limit);
    ir::Attribute::Dictionary direction = {
        {"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, test.direction)}};
    auto loop = b.While(
        {counter(test.start), y0},
        [&](const std::vector<ir::ValueId>& a) { return b.Op(OpCode::kCompare, {a[0], limit}, DType::kPred, {}, direction); },
        [&](const std::vector<ir::ValueId>& a) {
          auto c = [&](float value) { return b.Constant<float>(DType::kF32, {}, {value}); };
          auto op = [&](OpCode code, ir::ValueId x, ir::ValueId y) { return b.Op(code, {x, y}, DType::kF32, {}); };
          auto y = a[1];
          auto t = b.Op(OpCode::kCosine, {op(OpCode::kMultiply, y, c(0.7f))}, DType::kF32, {});  // cos(0.7 y)
          auto u = op(OpCode::kSubtract, c(2.0f), t);                                             // 2 - t
          auto v = op(OpCode::kDivide, c(1.5f), u);                                               // 1.5 / u
          auto next = op(OpCode::kAdd, y, op(OpCode::kMultiply, c(0.01f), v));                    // y + 0.01 v
          auto step = b.Op(test.step > 0 ? OpCode::kAdd : OpCode::kSubtract, {a[0], counter(std::abs(test.step))},
                           test.counter, {});
          return std::vector<ir::ValueId>{step, next};
        });
    Lowered lowered = Load(b.Build({loop[1]}));
    float y = 0.25f;
    const float got = Execute<float>(lowered, {&y})[0];
    auto go = [&](int64_t i) {
      const bool is_unsigned = test.counter == DType::kU32 || test.counter == DType::kU64;
      const auto x = is_unsigned ? static_cast<int64_t>(static_cast<uint64_t>(i)) : i;
      switch (test.direction) {
        case 0: return x == test.limit;
        case 1: return x != test.limit;
        case 2: return x >= test.limit;
        case 3: return x > test.limit;
        case 4: return x <= test.limit;
        default: return x < test.limit;
      }
    };
    for (int64_t i = test.start; go(i); i += test.step) {
      const float t = KernelOnOne<float>("cosine", DType::kF32, {y * 0.7f});
      y = y + 0.01f * (1.5f / (2.0f - t));
    }
    EXPECT_EQ(std::memcmp(&got, &y, 4), 0) << got << " vs " << y;
  }
}

// Straight-line scalar steps outside loops run as one program.
TEST(RegisterProgramTest, StraightLineRun) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF64, {});
  auto e = b.Op(OpCode::kExponential, {x}, DType::kF64, {});
  auto l = b.Op(OpCode::kLogPlusOne, {e}, DType::kF64, {});
  auto m = b.Op(OpCode::kMaximum, {l, x}, DType::kF64, {});
  auto c = b.Op(OpCode::kConvert, {m}, DType::kF32, {});
  auto r = b.Op(OpCode::kRsqrt, {c}, DType::kF32, {});
  Lowered lowered = Load(b.Build({r}));
  EXPECT_EQ(lowered.loaded->num_register_programs(), 1u);
  for (double value : {0.5, -2.0, 30.0, 1e-300}) {
    const double ev = KernelOnOne<double>("exponential", DType::kF64, {value});
    const double lv = KernelOnOne<double>("log_plus_one", DType::kF64, {ev});
    const float want = KernelOnOne<float>("rsqrt", DType::kF32, {static_cast<float>(std::fmax(lv, value))});
    const float got = Execute<float>(lowered, {&value})[0];
    EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << value << ": " << got << " vs " << want;
  }
}

// Concurrent executions each have their own registers.
TEST(RegisterProgramTest, ConcurrentExecutions) {
  Lowered lowered = Load(EulerLoop<float>(DType::kF32, 500));
  const float want = EulerReference<float>(DType::kF32, 2.0f, 500);
  std::vector<std::thread> threads;
  std::vector<float> got(4);
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      const float y0 = 2.0f;
      for (int repeat = 0; repeat < 20; ++repeat) got[t] = Execute<float>(lowered, {&y0})[0];
    });
  for (std::thread& thread : threads) thread.join();
  for (float value : got) EXPECT_EQ(value, want);
}

}  // namespace
}  // namespace stablert::runtime
