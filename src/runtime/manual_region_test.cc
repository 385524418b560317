// Manual regions (sdy.manual_computation) built by hand: lowering, execution with one
// thread per partition, collectives, and a mismatched collective timing out.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "plan/lower.h"
#include "ir/test_module_builder.h"
#include "runtime/executor.h"

namespace stablert::runtime {
namespace {

using ir::Attribute;
using ir::OpCode;
using ir::testing::ModuleBuilder;

Attribute Str(std::string s) { return Attribute(Attribute::Value(std::move(s))); }

Attribute Mesh(const std::vector<std::pair<std::string, int64_t>>& axes) {
  Attribute::Array list;
  for (const auto& [name, size] : axes)
    list.push_back(Attribute(Attribute::Dictionary{{"name", Str(name)}, {"size", ModuleBuilder::Int(size)}}));
  return Attribute(Attribute::Dictionary{{"axes", Attribute(std::move(list))}});
}

// A sharding over `mesh` with dims[d] split by the named axes.
Attribute Sharding(const Attribute& mesh, const std::vector<std::vector<std::string>>& dims) {
  Attribute::Array list;
  for (const auto& axes : dims) {
    Attribute::Array refs;
    for (const std::string& axis : axes) refs.push_back(Attribute(Attribute::Dictionary{{"name", Str(axis)}}));
    list.push_back(Attribute(Attribute::Dictionary{{"axes", Attribute(std::move(refs))}}));
  }
  return Attribute(Attribute::Dictionary{{"mesh", mesh}, {"dim_shardings", Attribute(std::move(list))}});
}

Attribute Groups(const std::vector<std::vector<int64_t>>& groups) {
  auto data = std::make_shared<ir::ElementsData>();
  int64_t size = groups.empty() ? 0 : static_cast<int64_t>(groups[0].size());
  data->type = ir::Type::Tensor(DType::kS64, {static_cast<int64_t>(groups.size()), size});
  for (const auto& group : groups)
    for (int64_t id : group) {
      uint8_t bytes[8];
      std::memcpy(bytes, &id, 8);
      data->bytes.insert(data->bytes.end(), bytes, bytes + 8);
    }
  return Attribute(Attribute::Elements(std::move(data)));
}

Attribute::Dictionary AllReduceAttrs(int partitions) {
  std::vector<int64_t> all;
  for (int p = 0; p < partitions; ++p) all.push_back(p);
  return {{"channel_id", ModuleBuilder::Int(1)},
          {"replica_groups", Groups({all})},
          {"use_global_device_ids", Attribute(Attribute::Value(true))}};
}

using BodyFn = std::function<std::vector<ir::ValueId>(ModuleBuilder&, ir::ValueId)>;

// main(x: f32[partitions * k]) = manual_computation(x) over a 1-D mesh "i": the body gets
// the partition's f32[k] block and returns one f32 value of `out_local` dims, assembled
// by `out_dims` (sharded along "i" when `out_sharded`).
// With a larger `mesh` whose "i" axis has `blocks` positions, x is f32[blocks * k].
ir::Module ManualModule(int partitions, int64_t k, Dims out_local, bool out_sharded, const BodyFn& body,
                        std::vector<std::string> manual_axes = {"i"}, Attribute mesh = Attribute(),
                        int64_t blocks = 0) {
  if (mesh.get<Attribute::Dictionary>() == nullptr) mesh = Mesh({{"i", partitions}});
  if (blocks == 0) blocks = partitions;
  ModuleBuilder b;
  b.SetLocation("model.py", 7, 3);
  ir::ValueId x = b.Param(DType::kF32, {blocks * k});
  b.BeginFunction("manual_body");
  ir::ValueId arg = b.Param(DType::kF32, {k});
  std::vector<ir::ValueId> returned = body(b, arg);
  b.EndFunction(returned);
  Dims out_global = out_local;
  if (out_sharded) out_global[0] *= blocks;
  Attribute::Array axes;
  for (const std::string& axis : manual_axes) axes.push_back(Str(axis));
  ir::ValueId y = b.Op(OpCode::kSdyManualComputation, {x}, DType::kF32, out_global,
                       {{"in_shardings", Attribute(Attribute::Array{Sharding(mesh, {{"i"}})})},
                        {"out_shardings", Attribute(Attribute::Array{Sharding(
                                              mesh, out_sharded ? std::vector<std::vector<std::string>>{{"i"}}
                                                                : std::vector<std::vector<std::string>>(out_local.size()))})},
                        {"manual_axes", Attribute(std::move(axes))}});
  ir::Module module = b.Build({y});
  // Move the body function into the manual computation's region.
  for (auto it = module.functions.begin(); it != module.functions.end(); ++it) {
    if (it->name != "manual_body") continue;
    ir::Region region = std::move(it->body);
    region.blocks[0].ops.back().code = OpCode::kSdyReturn;
    module.functions.erase(it);
    for (ir::Operation& op : module.functions[0].body.blocks[0].ops)
      if (op.code == OpCode::kSdyManualComputation) op.regions.push_back(std::move(region));
    break;
  }
  module.attrs.emplace_back("mhlo.num_partitions", ModuleBuilder::Int(partitions));
  return module;
}

StatusOr<std::vector<float>> LowerAndRun(const ir::Module& module, const std::vector<float>& x) {
  STABLERT_ASSIGN_OR_RETURN(plan::ExecutionPlan plan, plan::LowerToPlan(module));
  std::vector<float> out(static_cast<size_t>(ElementCount(plan.result_types[0].dims)));
  std::vector<const void*> args = {x.data()};
  std::vector<void*> results = {out.data()};
  STABLERT_RETURN_IF_ERROR(ExecutePlan(plan, args, results));
  return out;
}

std::vector<float> Iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

TEST(ManualRegionTest, PsumPlusOwnBlock) {
  // Each partition: block + psum(block), sharded back.
  ir::Module module = ManualModule(4, 2, {2}, true, [](ModuleBuilder& b, ir::ValueId arg) {
    ir::ValueId sum = b.Op(OpCode::kAllReduce, {arg}, DType::kF32, {2}, AllReduceAttrs(4),
                           {b.BinaryBody(OpCode::kAdd, DType::kF32)});
    return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {arg, sum}, DType::kF32, {2})};
  });
  auto plan = plan::LowerToPlan(module);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::string printed = plan::PrintPlan(*plan);
  EXPECT_NE(printed.find("manual"), std::string::npos) << printed;
  EXPECT_NE(printed.find("all_reduce.add.f32"), std::string::npos) << printed;
  // The steps' parameter structs, as the dump prints them.
  EXPECT_NE(printed.find("{num_partitions=4}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("{groups={groups=[[0,1,2,3]] group_size=4} body=[]}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("manual_operand"), std::string::npos) << printed;
  EXPECT_NE(printed.find("{block_starts=[[0],[2],[4],[6]] takes_zeros=[]}"), std::string::npos) << printed;
  auto out = LowerAndRun(module, Iota(8));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // psum of blocks [0,1],[2,3],[4,5],[6,7] = [12, 16].
  EXPECT_EQ(*out, (std::vector<float>{12, 17, 14, 19, 16, 21, 18, 23}));
}

TEST(ManualRegionTest, PartitionIdAllGatherAndReplicatedResult) {
  // Each partition: all_gather(block * partition_id) -> replicated f32[8].
  ir::Module module = ManualModule(4, 2, {8}, false, [](ModuleBuilder& b, ir::ValueId arg) {
    ir::ValueId id = b.Op(OpCode::kPartitionId, {}, DType::kU32, {});
    ir::ValueId idf = b.Op(OpCode::kConvert, {id}, DType::kF32, {});
    ir::ValueId idb = b.Op(OpCode::kBroadcastInDim, {idf}, DType::kF32, {2},
                           {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
    ir::ValueId scaled = b.Op(OpCode::kMultiply, {arg, idb}, DType::kF32, {2});
    Attribute::Dictionary attrs = AllReduceAttrs(4);
    attrs.emplace_back("all_gather_dim", ModuleBuilder::Int(0));
    return std::vector<ir::ValueId>{b.Op(OpCode::kAllGather, {scaled}, DType::kF32, {8}, attrs)};
  });
  auto out = LowerAndRun(module, Iota(8));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<float>{0, 0, 2, 3, 8, 10, 18, 21}));
}

TEST(ManualRegionTest, GeneralReductionBodyUsesBodyProgram) {
  // subtract is no recognized reduction: the body program combines, in group order.
  ir::Module module = ManualModule(4, 1, {1}, false, [](ModuleBuilder& b, ir::ValueId arg) {
    ir::Region body = b.BinaryBody(OpCode::kSubtract, DType::kF32);  // left fold: ((x0 - x1) - x2) - x3
    return std::vector<ir::ValueId>{
        b.Op(OpCode::kAllReduce, {arg}, DType::kF32, {1}, AllReduceAttrs(4), {std::move(body)})};
  });
  auto out = LowerAndRun(module, std::vector<float>{10, 1, 2, 3});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<float>{4}));
}

TEST(ManualRegionTest, PartiallyManualRegionCutsBlocksAlongManualAxesOnly) {
  // Mesh i=2 x j=2, only "i" manual: partitions (i, j) = 0:(0,0) 1:(0,1) 2:(1,0) 3:(1,1).
  // Each gets x's half along "i" (j stays automatic); psum over "i" pairs {0,2} and {1,3}.
  Attribute mesh = Mesh({{"i", 2}, {"j", 2}});
  ir::Module module = ManualModule(4, 2, {2}, false, [](ModuleBuilder& b, ir::ValueId arg) {
    Attribute::Dictionary attrs = {{"channel_id", ModuleBuilder::Int(1)},
                                   {"replica_groups", Groups({{0, 2}, {1, 3}})},
                                   {"use_global_device_ids", Attribute(Attribute::Value(true))}};
    return std::vector<ir::ValueId>{b.Op(OpCode::kAllReduce, {arg}, DType::kF32, {2}, attrs,
                                         {b.BinaryBody(OpCode::kAdd, DType::kF32)})};
  }, {"i"}, mesh, /*blocks=*/2);
  auto out = LowerAndRun(module, std::vector<float>{1, 2, 10, 20});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<float>{11, 22}));
}

TEST(ManualRegionTest, MismatchedCollectiveTimesOutNamingOpAndMissingDevices) {
  // Only partition 0 reaches the all_reduce (inside `if partition_id == 0`).
  ::setenv("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "0.5", 1);
  ir::Module module = ManualModule(4, 2, {2}, true, [](ModuleBuilder& b, ir::ValueId arg) {
    ir::ValueId id = b.Op(OpCode::kPartitionId, {}, DType::kU32, {});
    ir::ValueId zero = b.Constant<uint32_t>(DType::kU32, {}, {0});
    ir::ValueId first = b.Op(OpCode::kCompare, {id, zero}, DType::kPred, {},
                             {{"comparison_direction", ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, 0)}});
    b.BeginFunction("then");
    b.SetLocation("model.py", 12, 5);
    ir::ValueId sum = b.Op(OpCode::kAllReduce, {arg}, DType::kF32, {2}, AllReduceAttrs(4),
                           {b.BinaryBody(OpCode::kAdd, DType::kF32)});
    b.EndFunction({sum});
    b.BeginFunction("else");
    b.EndFunction({arg});
    return std::vector<ir::ValueId>{b.Op(OpCode::kIf, {first}, DType::kF32, {2})};
  });
  // Attach the branch functions as the if's regions.
  std::vector<ir::Region> branches;
  for (const char* name : {"then", "else"}) {
    for (auto it = module.functions.begin(); it != module.functions.end(); ++it) {
      if (it->name != name) continue;
      branches.push_back(std::move(it->body));
      module.functions.erase(it);
      break;
    }
  }
  ASSERT_EQ(branches.size(), 2u);
  for (ir::Operation& op : module.functions[0].body.blocks[0].ops)
    if (op.code == OpCode::kSdyManualComputation)
      for (ir::Operation& inner : op.regions[0].blocks[0].ops)
        if (inner.code == OpCode::kIf) inner.regions = std::move(branches);

  auto start = std::chrono::steady_clock::now();
  auto out = LowerAndRun(module, Iota(8));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::unsetenv("STABLERT_COLLECTIVE_TIMEOUT_SECONDS");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded) << out.status().ToString();
  std::string message(out.status().message());
  EXPECT_NE(message.find("stablehlo.all_reduce"), std::string::npos) << message;
  EXPECT_NE(message.find("model.py:12"), std::string::npos) << message;
  EXPECT_NE(message.find("1, 2, 3"), std::string::npos) << message;
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace stablert::runtime
