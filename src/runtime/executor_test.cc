#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "plan/lower.h"
#include "plan/test_module_builder.h"

namespace stablert::runtime {
namespace {

using ir::OpCode;
using plan::testing::ModuleBuilder;

// Lowers `module` and runs it on `args`, returning the results as byte vectors.
std::vector<std::vector<uint8_t>> LowerAndRun(const ir::Module& module, const std::vector<const void*>& args) {
  auto plan = plan::LowerToPlan(module);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return {};
  std::vector<std::vector<uint8_t>> results;
  std::vector<void*> pointers;
  for (const plan::TensorType& type : plan->result_types) results.emplace_back(plan::ByteSize(type) + 1);
  for (auto& r : results) pointers.push_back(r.data());
  Status status = ExecutePlan(*plan, args, pointers);
  EXPECT_TRUE(status.ok()) << status.ToString();
  for (size_t i = 0; i < results.size(); ++i) results[i].resize(plan::ByteSize(plan->result_types[i]));
  return results;
}

template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(ExecutorTest, AddMultiplyConstantBroadcastConvert) {
  // f(x: f32[2,3], y: i32[3]) = (x + 2) * convert(broadcast(y))
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2, 3});
  auto y = b.Param(DType::kS32, {3});
  auto two = b.Constant<float>(DType::kF32, {}, {2.0f});
  auto two_b = b.Op(OpCode::kBroadcastInDim, {two}, DType::kF32, {2, 3},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto sum = b.Op(OpCode::kAdd, {x, two_b}, DType::kF32, {2, 3});
  auto yf = b.Op(OpCode::kConvert, {y}, DType::kF32, {3});
  auto yb = b.Op(OpCode::kBroadcastInDim, {yf}, DType::kF32, {2, 3},
                 {{"broadcast_dimensions", ModuleBuilder::IntList({1})}});
  auto product = b.Op(OpCode::kMultiply, {sum, yb}, DType::kF32, {2, 3});
  ir::Module module = b.Build({product});

  std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> ys = {10, -1, 0};
  auto results = LowerAndRun(module, {xs.data(), ys.data()});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(As<float>(results[0]), (std::vector<float>{30, -4, 0, 60, -7, 0}));
}

TEST(ExecutorTest, ResultsMayBeParametersConstantsOrRepeated) {
  ModuleBuilder b;
  auto x = b.Param(DType::kS32, {2});
  auto c = b.Constant<int32_t>(DType::kS32, {2}, {7, 8});
  auto sum = b.Op(OpCode::kAdd, {x, c}, DType::kS32, {2});
  auto reshaped = b.Op(OpCode::kReshape, {sum}, DType::kS32, {2, 1});
  ir::Module module = b.Build({x, c, sum, sum, reshaped});
  std::vector<int32_t> xs = {1, 2};
  auto results = LowerAndRun(module, {xs.data()});
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(As<int32_t>(results[0]), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(As<int32_t>(results[1]), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(As<int32_t>(results[2]), (std::vector<int32_t>{8, 10}));
  EXPECT_EQ(As<int32_t>(results[3]), (std::vector<int32_t>{8, 10}));
  EXPECT_EQ(As<int32_t>(results[4]), (std::vector<int32_t>{8, 10}));
}

TEST(ExecutorTest, ConcurrentExecutionsOfOnePlan) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {1024});
  auto e = b.Op(OpCode::kMultiply, {x, x}, DType::kF32, {1024});
  auto f = b.Op(OpCode::kAdd, {e, x}, DType::kF32, {1024});
  ir::Module module = b.Build({f});
  auto plan = plan::LowerToPlan(module);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> in(1024), out(1024);
      for (int i = 0; i < 1024; ++i) in[i] = static_cast<float>(i % 7 + t);
      for (int iteration = 0; iteration < 200; ++iteration) {
        const void* args[] = {in.data()};
        void* results[] = {out.data()};
        if (!ExecutePlan(*plan, args, results).ok()) ++failures[t];
        for (int i = 0; i < 1024; ++i)
          if (out[i] != in[i] * in[i] + in[i]) ++failures[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(ExecutorTest, WrongBufferCountsAreErrors) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2});
  ir::Module module = b.Build({b.Op(OpCode::kNegate, {x}, DType::kF32, {2})});
  auto plan = plan::LowerToPlan(module);
  ASSERT_TRUE(plan.ok());
  float out[2];
  void* results[] = {out};
  Status status = ExecutePlan(*plan, {}, results);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

TEST(ExecutorTest, MissingKernelFailsAtLoad) {
  plan::ExecutionPlan plan;
  plan.parameter_types = {{DType::kF32, {2}}};
  plan.result_types = {{DType::kF32, {2}}};
  plan.values.push_back({{DType::kF32, {2}}, plan::Storage::kParameter, 0, 8});
  plan.values.push_back({{DType::kF32, {2}}, plan::Storage::kResult, 0, 8});
  plan::Step step;
  step.kernel = "no_such_kernel.f32";
  step.inputs = {0};
  step.outputs = {1};
  step.origin = "stablehlo.foo (unknown location)";
  plan.body.steps.push_back(step);
  plan.results = {1};
  auto loaded = LoadedPlan::Create(plan, kernels::CpuKernels());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(loaded.status().message().find("stablehlo.foo"), std::string_view::npos);
  EXPECT_NE(loaded.status().message().find("no_such_kernel.f32"), std::string_view::npos);
}

}  // namespace
}  // namespace stablert::runtime
