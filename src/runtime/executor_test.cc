#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "kernels/fft_params.h"
#include "kernels/rng_params.h"
#include "kernels/scalar_program.h"
#include "plan/collective_params.h"
#include "plan/host_transfer_params.h"
#include "plan/lower.h"
#include "plan/lowering.h"
#include "ir/test_module_builder.h"

namespace stablert::runtime {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

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

// A kernel that sums its share of x into out[part] (up to 64 parts) through its workspace: each call must
// get its own 64-byte aligned slice of the arena, of the declared size.
Status ScratchSumKernel(const kernels::KernelContext& context, const kernels::KernelArgs& args) {
  const auto [begin, end] = kernels::ShareOf(context, args.inputs[0].num_elements);
  if (args.workspace.size() < static_cast<size_t>(end - begin) * sizeof(float) ||
      reinterpret_cast<uintptr_t>(args.workspace.data()) % 64 != 0)
    return Internal("workspace too small or unaligned");
  auto* scratch = reinterpret_cast<float*>(args.workspace.data());
  const float* x = args.inputs[0].as<const float>();
  for (int64_t i = begin; i < end; ++i) scratch[i - begin] = x[i];
  float sum = 0;
  for (int64_t i = 0; i < end - begin; ++i) sum += scratch[i];
  float* out = args.outputs[0].as<float>();
  out[context.thread_index] = sum;
  if (context.thread_index == 0)  // the arena is not zeroed: the first call clears the unused slots
    for (int64_t i = context.thread_count; i < args.outputs[0].num_elements; ++i) out[i] = 0;
  return OkStatus();
}
int64_t ScratchSumWorkspace(const kernels::KernelArgs& args) { return args.inputs[0].num_elements * 4; }

TEST(ExecutorTest, WorkspacesAreArenaSlicesOnePerCall) {
  kernels::KernelRegistry registry;
  ASSERT_TRUE(registry.RegisterSplittable("scratch_sum.f32", &ScratchSumKernel).ok());
  ASSERT_TRUE(registry.DeclareWorkspace("scratch_sum.f32", &ScratchSumWorkspace).ok());
  EXPECT_EQ(registry.DeclareWorkspace("nothing.f32", &ScratchSumWorkspace).code(), StatusCode::kNotFound);
  constexpr int64_t n = 1 << 17;  // enough to be split
  for (int64_t slices : {1, 2, 4}) {
    plan::ExecutionPlan plan;
    plan.parameter_types = {{DType::kF32, {n}}};
    plan.result_types = {{DType::kF32, {64}}};
    plan.values.push_back({{DType::kF32, {n}}, plan::Storage::kParameter, 0, n * 4});
    plan.values.push_back({{DType::kF32, {64}}, plan::Storage::kArena, 0, 256});
    plan.values.push_back({{DType::kU8, {slices * n * 4}}, plan::Storage::kArena, 256, slices * n * 4});
    plan.arena_size = 256 + slices * n * 4;
    plan::Step step;
    step.kernel = "scratch_sum.f32";
    step.inputs = {0};
    step.outputs = {1};
    step.workspace = 2;
    plan.body.steps.push_back(step);
    plan.results = {1};
    auto loaded = LoadedPlan::Create(plan, registry);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::vector<float> x(n, 1.0f), out(64, 0.0f);
    const void* args[] = {x.data()};
    void* results[] = {out.data()};
    ASSERT_TRUE((*loaded)->Execute(args, results).ok());
    float total = 0;
    for (float v : out) total += v;
    EXPECT_EQ(total, static_cast<float>(n)) << slices << " slices";
  }
  // A workspace smaller than the kernel asks for fails at load, naming both sizes.
  plan::ExecutionPlan plan;
  plan.parameter_types = {{DType::kF32, {8}}};
  plan.result_types = {{DType::kF32, {4}}};
  plan.values.push_back({{DType::kF32, {8}}, plan::Storage::kParameter, 0, 32});
  plan.values.push_back({{DType::kF32, {4}}, plan::Storage::kArena, 0, 16});
  plan.values.push_back({{DType::kU8, {16}}, plan::Storage::kArena, 64, 16});
  plan.arena_size = 128;
  plan::Step step;
  step.kernel = "scratch_sum.f32";
  step.inputs = {0};
  step.outputs = {1};
  step.workspace = 2;
  step.origin = "stablehlo.custom";
  plan.body.steps.push_back(step);
  plan.results = {1};
  auto loaded = LoadedPlan::Create(plan, registry);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("needs a workspace of 32 bytes, the step has 16"), std::string_view::npos)
      << loaded.status().ToString();
}

// Every step's parameter struct is checked against what its kernel or step kind takes when
// the plan is loaded; the error names the step and both structs.
TEST(ExecutorTest, WrongParameterStructsFailAtLoad) {
  auto load = [](plan::Step step, plan::TensorType in, plan::TensorType out, bool writes = true) {
    plan::ExecutionPlan plan;
    plan.parameter_types = {in};
    plan.result_types = {out};
    plan.values.push_back({in, plan::Storage::kParameter, 0, plan::ByteSize(in)});
    plan.values.push_back({out, plan::Storage::kResult, 0, plan::ByteSize(out)});
    step.inputs = {0};
    if (writes) step.outputs = {1};
    step.origin = "stablehlo.op (here)";
    plan.body.steps.push_back(std::move(step));
    plan.results = {1};
    return LoadedPlan::Create(plan, kernels::CpuKernels()).status();
  };
  const plan::TensorType c64{DType::kC64, {8}}, f32{DType::kF32, {8}};
  auto expect_error = [](const Status& status, std::initializer_list<std::string_view> parts) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    for (std::string_view part : parts)
      EXPECT_NE(status.message().find(part), std::string_view::npos) << status.message() << " lacks " << part;
  };

  plan::Step fft;
  fft.kernel = "fft.complex<f32>";
  fft.params = kernels::RngParams{.key = 1};
  expect_error(load(fft, c64, c64), {"stablehlo.op", "fft.complex<f32>", "takes fft parameters", "carries rng"});
  fft.params = {};
  expect_error(load(fft, c64, c64), {"takes fft parameters", "carries none"});
  fft.params = kernels::FftParams{.type = kernels::FftType::kFft, .lengths = {8}};
  EXPECT_TRUE(load(fft, c64, c64).ok());

  plan::Step gather;
  gather.kind = plan::StepKind::kCollective;
  gather.kernel = "all_gather";
  gather.params = plan::AllReduceParams{.groups = {.groups = {}, .group_size = 1}, .body = {}};
  expect_error(load(gather, f32, f32), {"collective step 'all_gather' takes all_gather parameters", "carries all_reduce"});
  gather.params = plan::AllGatherParams{.groups = {.groups = {}, .group_size = 1}, .dimension = 0};
  EXPECT_TRUE(load(gather, f32, f32).ok());

  plan::Step send;
  send.kind = plan::StepKind::kHostTransfer;
  send.kernel = "host_send";
  expect_error(load(send, f32, f32, /*writes=*/false),
               {"host transfer step 'host_send' takes host_transfer parameters", "carries none"});
  send.params = plan::HostTransferParams{.channel_id = 3};
  EXPECT_TRUE(load(send, f32, f32, /*writes=*/false).ok());

  plan::Step manual;
  manual.kind = plan::StepKind::kManual;
  manual.regions.resize(1);
  manual.params = plan::HostTransferParams{.channel_id = 3};
  expect_error(load(manual, f32, f32), {"manual step takes manual parameters", "carries host_transfer"});
  manual.params = plan::ManualParams{.num_partitions = 0};
  expect_error(load(manual, f32, f32), {"manual step over 0 partitions"});
}

TEST(ExecutorTest, ReduceDotSliceConcatIotaCompareSelect) {
  // x: f32[2,3]; w: f32[3,4]
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2, 3});
  auto w = b.Param(DType::kF32, {3, 4});
  auto zero = b.Constant<float>(DType::kF32, {}, {0.0f});
  std::vector<ir::Region> body;
  body.push_back(b.BinaryBody(OpCode::kAdd, DType::kF32));
  auto row_sums = b.Op(OpCode::kReduce, {x, zero}, DType::kF32, {2}, {{"dimensions", ModuleBuilder::IntList({1})}},
                       std::move(body));
  auto xw = b.OpN(OpCode::kDotGeneral, {x, w}, {ir::Type::Tensor(DType::kF32, {2, 4})},
                  {{"lhs_contracting_dimensions", ModuleBuilder::IntList({1})},
                   {"rhs_contracting_dimensions", ModuleBuilder::IntList({0})}})[0];
  auto sliced = b.Op(OpCode::kSlice, {xw}, DType::kF32, {2, 2},
                     {{"start_indices", ModuleBuilder::IntList({0, 1})},
                      {"limit_indices", ModuleBuilder::IntList({2, 4})},
                      {"strides", ModuleBuilder::IntList({1, 2})}});
  auto joined = b.Op(OpCode::kConcatenate, {sliced, x}, DType::kF32, {2, 5}, {{"dimension", ModuleBuilder::Int(1)}});
  auto iota = b.Op(OpCode::kIota, {}, DType::kF32, {2, 5}, {{"iota_dimension", ModuleBuilder::Int(1)}});
  auto less = b.Op(OpCode::kCompare, {joined, iota}, DType::kPred, {2, 5},
                   {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
  auto picked = b.Op(OpCode::kSelect, {less, joined, iota}, DType::kF32, {2, 5});
  ir::Module module = b.Build({row_sums, xw, picked});

  std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  std::vector<float> ws = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1};
  auto results = LowerAndRun(module, {xs.data(), ws.data()});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(As<float>(results[0]), (std::vector<float>{6, 15}));
  // xw = [[1,2,3,6],[4,5,6,15]]; sliced columns 1 and 3: [[2,6],[5,15]].
  EXPECT_EQ(As<float>(results[1]), (std::vector<float>{1, 2, 3, 6, 4, 5, 6, 15}));
  // joined = [[2,6,1,2,3],[5,15,4,5,6]]; iota = [0..4]; select(joined < iota, joined, iota).
  EXPECT_EQ(As<float>(results[2]), (std::vector<float>{0, 1, 1, 2, 3, 0, 1, 2, 3, 4}));
}

TEST(ExecutorTest, ZeroSizedAndScalarValues) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {0, 3});
  auto s = b.Param(DType::kS64, {});
  auto y = b.Op(OpCode::kExponential, {x}, DType::kF32, {0, 3});
  auto t = b.Op(OpCode::kMultiply, {s, s}, DType::kS64, {});
  auto zero = b.Constant<float>(DType::kF32, {}, {5.0f});
  std::vector<ir::Region> body;
  body.push_back(b.BinaryBody(OpCode::kAdd, DType::kF32));
  auto sum = b.Op(OpCode::kReduce, {x, zero}, DType::kF32, {3}, {{"dimensions", ModuleBuilder::IntList({0})}},
                  std::move(body));
  ir::Module module = b.Build({y, t, sum});
  int64_t sv = -3000000000LL;
  auto results = LowerAndRun(module, {nullptr, &sv});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].empty());
  EXPECT_EQ(As<int64_t>(results[1]), (std::vector<int64_t>{9000000000000000000LL}));
  EXPECT_EQ(As<float>(results[2]), (std::vector<float>{5, 5, 5}));
}

// Random DAGs of f32 ops, run by the executor and by a naive evaluator in the same
// float operations: results must be bit-identical (catches buffer assignment bugs).
TEST(ExecutorTest, RandomDagsMatchNaiveEvaluation) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 40; ++trial) {
    ModuleBuilder b;
    std::map<ir::ValueId, std::vector<float>> naive;
    std::vector<ir::ValueId> values;
    std::vector<std::vector<float>> inputs;
    for (int i = 0; i < 3; ++i) {
      int64_t n = 1 + rng() % 50;
      ir::ValueId p = b.Param(DType::kF32, {n});
      std::vector<float> data(static_cast<size_t>(n));
      for (float& f : data) f = static_cast<float>(rng() % 100) / 10.0f - 5.0f;
      naive[p] = data;
      inputs.push_back(data);
      values.push_back(p);
    }
    for (int i = 0; i < 30; ++i) {
      ir::ValueId a = values[rng() % values.size()];
      const std::vector<float>& av = naive[a];
      const int64_t n = static_cast<int64_t>(av.size());
      std::vector<ir::ValueId> same;
      for (ir::ValueId v : values)
        if (naive[v].size() == av.size()) same.push_back(v);
      ir::ValueId c = same[rng() % same.size()];
      const std::vector<float>& cv = naive[c];
      std::vector<float> out(av.size());
      ir::ValueId result;
      switch (rng() % 4) {
        case 0:
          result = b.Op(OpCode::kAdd, {a, c}, DType::kF32, {n});
          for (size_t k = 0; k < out.size(); ++k) out[k] = av[k] + cv[k];
          break;
        case 1:
          result = b.Op(OpCode::kMultiply, {a, c}, DType::kF32, {n});
          for (size_t k = 0; k < out.size(); ++k) out[k] = av[k] * cv[k];
          break;
        case 2:
          result = b.Op(OpCode::kNegate, {a}, DType::kF32, {n});
          for (size_t k = 0; k < out.size(); ++k) out[k] = -av[k];
          break;
        default: {
          // Tile: [n] -> [2, n] -> reshape [2n].
          ir::ValueId tiled = b.Op(OpCode::kBroadcastInDim, {a}, DType::kF32, {2, n},
                                   {{"broadcast_dimensions", ModuleBuilder::IntList({1})}});
          result = b.Op(OpCode::kReshape, {tiled}, DType::kF32, {2 * n});
          out = av;
          out.insert(out.end(), av.begin(), av.end());
          break;
        }
      }
      naive[result] = out;
      values.push_back(result);
    }
    std::vector<ir::ValueId> returned;
    for (int i = 0; i < 4; ++i) returned.push_back(values[rng() % values.size()]);
    ir::Module module = b.Build(returned);
    std::vector<const void*> args;
    for (auto& in : inputs) args.push_back(in.data());
    auto results = LowerAndRun(module, args);
    ASSERT_EQ(results.size(), returned.size());
    for (size_t i = 0; i < returned.size(); ++i)
      ASSERT_EQ(As<float>(results[i]), naive[returned[i]]) << "trial " << trial << " result " << i;
  }
}

// Builds `while (i < n) { (i, a, b) = (i + 1, b, a + b) }` with an outer-scope value used
// inside the body (the step `one`), checking the carried swap behaves as a parallel
// assignment.
TEST(ExecutorTest, WhileLoopWithSwappedCarries) {
  ModuleBuilder b;
  auto n = b.Param(DType::kS32, {});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto a0 = b.Constant<int64_t>(DType::kS64, {2}, {0, 10});
  auto b0 = b.Constant<int64_t>(DType::kS64, {2}, {1, 20});
  const ir::Type i32 = ir::Type::Tensor(DType::kS32, {});
  const ir::Type v2 = ir::Type::Tensor(DType::kS64, {2});
  // Regions are built by hand: cond(i, a, b) = i < n; body(i, a, b) = (i + one, b, a + b).
  ir::Module module;
  {
    ModuleBuilder& m = b;
    ir::Region cond, body;
    cond.blocks.emplace_back();
    body.blocks.emplace_back();
    // Values for region arguments and ops come from the builder's module via Op-less
    // helpers: create them through a scratch function.
    m.BeginFunction("scratch_cond");
    auto ci = m.Param(DType::kS32, {});
    auto ca = m.Param(DType::kS64, {2});
    auto cb = m.Param(DType::kS64, {2});
    auto lt = m.Op(OpCode::kCompare, {ci, n}, DType::kPred, {},
                   {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
    m.EndFunction({lt});
    m.BeginFunction("scratch_body");
    auto bi = m.Param(DType::kS32, {});
    auto ba = m.Param(DType::kS64, {2});
    auto bb = m.Param(DType::kS64, {2});
    auto next_i = m.Op(OpCode::kAdd, {bi, one}, DType::kS32, {});
    auto sum = m.Op(OpCode::kAdd, {ba, bb}, DType::kS64, {2});
    m.EndFunction({next_i, bb, sum});
    (void)ca, (void)cb;
    auto loop = m.OpN(OpCode::kWhile, {zero, a0, b0}, {i32, v2, v2});
    module = m.Build({loop[0], loop[1], loop[2]});
  }
  // Move the scratch functions' bodies into the while op's regions.
  ir::Function& main = module.functions[0];
  ir::Operation& loop_op = main.body.blocks[0].ops[main.body.blocks[0].ops.size() - 2];
  ASSERT_EQ(loop_op.code, OpCode::kWhile);
  loop_op.regions.resize(2);
  loop_op.regions[0] = std::move(module.functions[1].body);
  loop_op.regions[1] = std::move(module.functions[2].body);
  module.functions.resize(1);

  int32_t count = 10;
  auto results = LowerAndRun(module, {&count});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(As<int32_t>(results[0]), (std::vector<int32_t>{10}));
  // Fibonacci-like: after 10 steps (a, b) = (F10, F11) from (0, 1); (1440, 2330) from (10, 20).
  EXPECT_EQ(As<int64_t>(results[1]), (std::vector<int64_t>{55, 1440}));
  EXPECT_EQ(As<int64_t>(results[2]), (std::vector<int64_t>{89, 2330}));
  count = 0;
  results = LowerAndRun(module, {&count});
  EXPECT_EQ(As<int64_t>(results[1]), (std::vector<int64_t>{0, 10}));
}

TEST(ExecutorTest, IfAndCaseRunOneBranch) {
  ModuleBuilder b;
  auto p = b.Param(DType::kPred, {});
  auto index = b.Param(DType::kS32, {});
  auto x = b.Param(DType::kF32, {3});
  b.BeginFunction("t");
  auto t = b.Op(OpCode::kNegate, {x}, DType::kF32, {3});
  b.EndFunction({t});
  b.BeginFunction("f");
  auto f = b.Op(OpCode::kExponential, {x}, DType::kF32, {3});
  b.EndFunction({f});
  b.BeginFunction("c2");
  b.EndFunction({x});
  const ir::Type v3 = ir::Type::Tensor(DType::kF32, {3});
  auto if_result = b.OpN(OpCode::kIf, {p}, {v3});
  auto case_result = b.OpN(OpCode::kCase, {index}, {v3});
  ir::Module module = b.Build({if_result[0], case_result[0]});
  auto& ops = module.functions[0].body.blocks[0].ops;
  ir::Operation& if_op = ops[ops.size() - 3];
  ir::Operation& case_op = ops[ops.size() - 2];
  if_op.regions.resize(2);
  if_op.regions[0] = module.functions[1].body;
  if_op.regions[1] = module.functions[2].body;
  case_op.regions = {module.functions[1].body, module.functions[2].body, module.functions[3].body};
  // The branch bodies are used twice; give each copy... values may be shared since the
  // lowering binds them afresh each time.
  module.functions.resize(1);

  std::vector<float> xs = {0, 1, -1};
  for (int32_t i : {-5, 0, 1, 2, 3, 100}) {
    for (uint8_t flag : {0, 1}) {
      auto results = LowerAndRun(module, {&flag, &i, xs.data()});
      ASSERT_EQ(results.size(), 2u);
      std::vector<float> negated = {-0.0f, -1, 1}, exponent = {1, std::exp(1.0f), std::exp(-1.0f)};
      EXPECT_EQ(As<float>(results[0]), flag ? negated : exponent);
      const std::vector<float>& want = i == 0 ? negated : i == 1 ? exponent : xs;
      EXPECT_EQ(As<float>(results[1]), want) << "index " << i;
    }
  }
}

// The plan's body-program opcodes and the kernels' decoder agree on every op.
TEST(ExecutorTest, BodyProgramOpcodesMatchKernels) {
  int mapped = 0;
  for (int i = 0; i < ir::kNumOps; ++i) {
    auto code = static_cast<OpCode>(i);
    int64_t opcode = plan::BodyProgramOpcode(code);
    if (opcode == 0) continue;
    ++mapped;
    std::string_view mnemonic = ir::OpName(code);
    EXPECT_EQ(kernels::ScalarOpName(opcode), mnemonic.substr(mnemonic.find('.') + 1)) << mnemonic;
  }
  EXPECT_EQ(mapped, 45);
}

// argmax over a row as a two-operand reduce whose body uses compare/select and a constant
// from outside the body; then a two-operand sort on (key descending, payload).
TEST(ExecutorTest, BodyProgramsForVariadicReduceAndSort) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2, 4});
  auto idx = b.Op(OpCode::kIota, {}, DType::kS32, {2, 4}, {{"iota_dimension", ModuleBuilder::Int(1)}});
  auto neg_inf = b.Constant<float>(DType::kF32, {}, {-INFINITY});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto unused_outer = b.Constant<int32_t>(DType::kS32, {}, {0});
  // Body: (a, ai, b, bi) -> (a >= b ? a : b, a >= b ? ai : bi + outer_zero)
  b.BeginFunction("body");
  auto a_ = b.Param(DType::kF32, {});
  auto ai = b.Param(DType::kS32, {});
  auto b_ = b.Param(DType::kF32, {});
  auto bi = b.Param(DType::kS32, {});
  auto ge = b.Op(OpCode::kCompare, {a_, b_}, DType::kPred, {},
                 {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 2)}});
  auto best = b.Op(OpCode::kSelect, {ge, a_, b_}, DType::kF32, {});
  auto bi2 = b.Op(OpCode::kAdd, {bi, unused_outer}, DType::kS32, {});
  auto best_i = b.Op(OpCode::kSelect, {ge, ai, bi2}, DType::kS32, {});
  b.EndFunction({best, best_i});
  auto reduced = b.OpN(OpCode::kReduce, {x, idx, neg_inf, zero},
                       {ir::Type::Tensor(DType::kF32, {2}), ir::Type::Tensor(DType::kS32, {2})},
                       {{"dimensions", ModuleBuilder::IntList({1})}});
  // Comparator: (k_l, k_r, p_l, p_r) -> k_l > k_r
  b.BeginFunction("cmp");
  auto kl = b.Param(DType::kF32, {});
  auto kr = b.Param(DType::kF32, {});
  b.Param(DType::kS32, {});
  b.Param(DType::kS32, {});
  auto gt = b.Op(OpCode::kCompare, {kl, kr}, DType::kPred, {},
                 {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 3)},
                  {"compare_type", ModuleBuilder::Enum(ir::EnumKind::kComparisonType, 2)}});
  b.EndFunction({gt});
  auto sorted = b.OpN(OpCode::kSort, {x, idx}, {ir::Type::Tensor(DType::kF32, {2, 4}), ir::Type::Tensor(DType::kS32, {2, 4})},
                      {{"dimension", ModuleBuilder::Int(1)}, {"is_stable", ir::Attribute(true)}});
  ir::Module module = b.Build({reduced[0], reduced[1], sorted[0], sorted[1]});
  auto& ops = module.functions[0].body.blocks[0].ops;
  for (ir::Operation& op : ops) {
    if (op.code == OpCode::kReduce) op.regions = {module.functions[1].body};
    if (op.code == OpCode::kSort) op.regions = {module.functions[2].body};
  }
  // Drop the helper functions' returns from the regions? They end in kReturn already.
  module.functions.resize(1);

  std::vector<float> xs = {1, 5, 5, 2, -1, -3, 7, 7};
  auto results = LowerAndRun(module, {xs.data()});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(As<float>(results[0]), (std::vector<float>{5, 7}));
  EXPECT_EQ(As<int32_t>(results[1]), (std::vector<int32_t>{1, 2}));  // ties keep the first (a >= b)
  EXPECT_EQ(As<float>(results[2]), (std::vector<float>{5, 5, 2, 1, 7, 7, -1, -3}));
  EXPECT_EQ(As<int32_t>(results[3]), (std::vector<int32_t>{1, 2, 3, 0, 2, 3, 0, 1}));  // stable
}

// An outer computed value read only inside a loop must stay intact across iterations
// while the body's temporaries reuse arena memory.
TEST(ExecutorTest, LoopCapturedValuesSurviveIterations) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {64});
  auto count = b.Param(DType::kS32, {});
  auto outer = b.Op(OpCode::kMultiply, {x, x}, DType::kF32, {64});  // arena value, last read in the loop
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto one = b.Constant<int32_t>(DType::kS32, {}, {1});
  b.BeginFunction("cond");
  auto ci = b.Param(DType::kS32, {});
  b.Param(DType::kF32, {64});
  auto lt = b.Op(OpCode::kCompare, {ci, count}, DType::kPred, {},
                 {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 5)}});
  b.EndFunction({lt});
  b.BeginFunction("body");
  auto bi = b.Param(DType::kS32, {});
  auto bc = b.Param(DType::kF32, {64});
  auto t1 = b.Op(OpCode::kAdd, {bc, outer}, DType::kF32, {64});
  auto t2 = b.Op(OpCode::kNegate, {t1}, DType::kF32, {64});
  auto t3 = b.Op(OpCode::kMultiply, {t2, t2}, DType::kF32, {64});
  auto t4 = b.Op(OpCode::kSqrt, {t3}, DType::kF32, {64});
  auto next = b.Op(OpCode::kAdd, {bi, one}, DType::kS32, {});
  b.EndFunction({next, t4});
  auto loop = b.OpN(OpCode::kWhile, {zero, x}, {ir::Type::Tensor(DType::kS32, {}), ir::Type::Tensor(DType::kF32, {64})});
  ir::Module module = b.Build({loop[1]});
  for (ir::Operation& op : module.functions[0].body.blocks[0].ops)
    if (op.code == OpCode::kWhile) op.regions = {module.functions[1].body, module.functions[2].body};
  module.functions.resize(1);

  std::vector<float> xs(64);
  for (int i = 0; i < 64; ++i) xs[i] = static_cast<float>(i % 5) * 0.5f;
  int32_t n = 4;
  auto results = LowerAndRun(module, {xs.data(), &n});
  ASSERT_EQ(results.size(), 1u);
  std::vector<float> want = xs;
  for (int iteration = 0; iteration < n; ++iteration)
    for (int i = 0; i < 64; ++i) {
      float t = -(want[i] + xs[i] * xs[i]);
      want[i] = std::sqrt(t * t);
    }
  EXPECT_EQ(As<float>(results[0]), want);
}

}  // namespace
}  // namespace stablert::runtime

namespace stablert::runtime::concurrent_steps {

// A kernel that runs as one call: out = in0 (+ in1 when given).
Status CopyAddKernel(const kernels::KernelContext&, const kernels::KernelArgs& args) {
  const int64_t n = args.outputs[0].num_elements;
  float* out = args.outputs[0].as<float>();
  const float* a = args.inputs[0].as<const float>();
  const float* b = args.inputs.size() > 1 ? args.inputs[1].as<const float>() : nullptr;
  for (int64_t i = 0; i < n; ++i) out[i] = b ? a[i] + b[i] : a[i];
  return OkStatus();
}

constexpr int64_t kN = int64_t{1} << 20;  // floats per value: 4 MiB, well above the pairing cost
constexpr int64_t kBytes = kN * 4;

const kernels::KernelRegistry& Registry() {
  static const kernels::KernelRegistry* registry = [] {
    auto* r = new kernels::KernelRegistry();
    (void)r->Register("copy_add.f32", &CopyAddKernel);
    return r;
  }();
  return *registry;
}

// A plan over f32[kN] values: `params` parameters, `results` results, arena values at the
// given slots (byte offset = slot * kBytes).
struct Builder {
  plan::ExecutionPlan plan;
  Builder(int params, int results) {
    for (int p = 0; p < params; ++p) {
      plan.parameter_types.push_back({DType::kF32, {kN}});
      plan.values.push_back({{DType::kF32, {kN}}, plan::Storage::kParameter, p, kBytes});
    }
    for (int r = 0; r < results; ++r) {
      plan.result_types.push_back({DType::kF32, {kN}});
      plan.values.push_back({{DType::kF32, {kN}}, plan::Storage::kResult, r, kBytes});
      plan.results.push_back(static_cast<plan::ValueId>(plan.values.size() - 1));
    }
  }
  plan::ValueId Param(int p) const { return static_cast<plan::ValueId>(p); }
  plan::ValueId Result(int r) const { return static_cast<plan::ValueId>(plan.parameter_types.size() + r); }
  plan::ValueId Arena(int64_t slot) {
    plan.values.push_back({{DType::kF32, {kN}}, plan::Storage::kArena, slot * kBytes, kBytes});
    plan.arena_size = std::max(plan.arena_size, (slot + 1) * kBytes);
    return static_cast<plan::ValueId>(plan.values.size() - 1);
  }
  void Step(std::vector<plan::ValueId> inputs, plan::ValueId output) {
    plan::Step step;
    step.kernel = "copy_add.f32";
    step.inputs = std::move(inputs);
    step.outputs = {output};
    step.origin = "test.step" + std::to_string(plan.body.steps.size());
    plan.body.steps.push_back(step);
  }
  std::unique_ptr<LoadedPlan> Load() {
    auto loaded = LoadedPlan::Create(plan, Registry());
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? std::move(loaded).value() : nullptr;
  }
};

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

TEST(ConcurrentStepsTest, IndependentStepsPairAndDependentOnesDoNot) {
  Builder b(2, 1);
  const plan::ValueId a0 = b.Arena(0), a1 = b.Arena(1);
  b.Step({b.Param(0)}, a0);       // 0
  b.Step({b.Param(1)}, a1);       // 1: independent of 0
  b.Step({a0, a1}, b.Result(0));  // 2: reads both
  auto loaded = b.Load();
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->ConcurrentPairs(), (Pairs{{0, 1}}));

  std::vector<float> x(kN), y(kN), out(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i), y[i] = 0.5f * static_cast<float>(i % 7);
  const void* args[] = {x.data(), y.data()};
  void* results[] = {out.data()};
  for (int run = 0; run < 20; ++run) {
    LoadedPlan::SetConcurrentSteps(run % 2 == 0);
    std::fill(out.begin(), out.end(), -1.0f);
    ASSERT_TRUE(loaded->Execute(args, results).ok());
    for (int64_t i = 0; i < kN; i += 4099) ASSERT_EQ(out[i], x[i] + y[i]) << "run " << run << " element " << i;
  }
  LoadedPlan::SetConcurrentSteps(false);
}

TEST(ConcurrentStepsTest, ReadAfterWriteKeepsOrder) {
  Builder b(1, 1);
  const plan::ValueId a0 = b.Arena(0), a1 = b.Arena(1);
  b.Step({b.Param(0)}, a0);
  b.Step({a0}, a1);
  b.Step({a1}, b.Result(0));
  auto loaded = b.Load();
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->ConcurrentPairs(), Pairs{});
}

TEST(ConcurrentStepsTest, ReusedBufferIsAWriteAfterReadHazard) {
  // a1 takes a0's bytes once a0 is dead: the step writing a1 must wait for the step reading a0.
  Builder b(2, 2);
  const plan::ValueId a0 = b.Arena(0), a2 = b.Arena(1), a1 = b.Arena(0);
  b.Step({b.Param(0)}, a0);  // 0
  b.Step({a0}, a2);          // 1: last read of a0
  b.Step({b.Param(1)}, a1);  // 2: writes over a0's bytes
  b.Step({a2}, b.Result(0));
  b.Step({a1}, b.Result(1));
  auto loaded = b.Load();
  ASSERT_NE(loaded, nullptr);
  for (const auto& [first, second] : loaded->ConcurrentPairs()) {
    EXPECT_FALSE(first <= 1 && second == 2) << first << " beside " << second;
  }
  // The same program with a1 in fresh bytes: step 2 may run beside step 0.
  Builder fresh(2, 2);
  const plan::ValueId f0 = fresh.Arena(0), f2 = fresh.Arena(1), f1 = fresh.Arena(2);
  fresh.Step({fresh.Param(0)}, f0);
  fresh.Step({f0}, f2);
  fresh.Step({fresh.Param(1)}, f1);
  fresh.Step({f2}, fresh.Result(0));
  fresh.Step({f1}, fresh.Result(1));
  auto fresh_loaded = fresh.Load();
  ASSERT_NE(fresh_loaded, nullptr);
  EXPECT_EQ(fresh_loaded->ConcurrentPairs(), (Pairs{{0, 2}, {3, 4}}));  // 3 and 4: different results

  std::vector<float> x(kN, 3.0f), y(kN, 4.0f), r0(kN), r1(kN);
  const void* args[] = {x.data(), y.data()};
  void* results[] = {r0.data(), r1.data()};
  for (LoadedPlan* plan : {loaded.get(), fresh_loaded.get()}) {
    for (int run = 0; run < 10; ++run) {
      LoadedPlan::SetConcurrentSteps(run % 2 == 0);
      ASSERT_TRUE(plan->Execute(args, results).ok());
      for (int64_t i = 0; i < kN; i += 4099) {
        ASSERT_EQ(r0[i], 3.0f);
        ASSERT_EQ(r1[i], 4.0f);
      }
    }
  }
  LoadedPlan::SetConcurrentSteps(false);
}

TEST(ConcurrentStepsTest, ResultWritesNeverOverlapParameterReads) {
  // A donated parameter may hold a result: writing a result and reading a parameter keep
  // their order.
  Builder b(2, 2);
  b.Step({b.Param(0)}, b.Result(0));
  b.Step({b.Param(1)}, b.Result(1));
  auto loaded = b.Load();
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->ConcurrentPairs(), Pairs{});
}

TEST(ConcurrentStepsTest, SmallStepsStayInOrder) {
  // Below the cost threshold: in order.
  plan::ExecutionPlan plan;
  plan.parameter_types = {{DType::kF32, {64}}, {DType::kF32, {64}}};
  plan.result_types = {{DType::kF32, {64}}};
  plan.values.push_back({{DType::kF32, {64}}, plan::Storage::kParameter, 0, 256});
  plan.values.push_back({{DType::kF32, {64}}, plan::Storage::kParameter, 1, 256});
  plan.values.push_back({{DType::kF32, {64}}, plan::Storage::kArena, 0, 256});
  plan.values.push_back({{DType::kF32, {64}}, plan::Storage::kArena, 256, 256});
  plan.values.push_back({{DType::kF32, {64}}, plan::Storage::kResult, 0, 256});
  plan.arena_size = 512;
  for (auto [in, out] : {std::pair<plan::ValueId, plan::ValueId>{0, 2}, {1, 3}}) {
    plan::Step step;
    step.kernel = "copy_add.f32";
    step.inputs = {in};
    step.outputs = {out};
    plan.body.steps.push_back(step);
  }
  plan::Step sum;
  sum.kernel = "copy_add.f32";
  sum.inputs = {2, 3};
  sum.outputs = {4};
  plan.body.steps.push_back(sum);
  plan.results = {4};
  auto loaded = LoadedPlan::Create(plan, Registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->ConcurrentPairs(), Pairs{});
}

}  // namespace stablert::runtime::concurrent_steps
