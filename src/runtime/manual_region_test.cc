// Manual regions (sdy.manual_computation) built by hand: lowering, execution with one
// thread per partition, collectives, and a mismatched collective timing out.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "passes/sharding/partition.h"
#include "plan/lower.h"
#include "ir/test_module_builder.h"
#include "runtime/executor.h"
#include "runtime/host_transfer.h"

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

// A host that records what each device sends and answers a recv on channel c for device d
// with d * 100 + c in every element.
class RecordingHost : public HostTransferHandler {
 public:
  Status Send(int device, int64_t channel, const void* data, size_t size) const override {
    std::vector<float> values(size / sizeof(float));
    std::memcpy(values.data(), data, values.size() * sizeof(float));
    std::lock_guard<std::mutex> lock(mutex_);
    sent_.emplace_back(device, channel, std::move(values));
    return OkStatus();
  }
  Status Recv(int device, int64_t channel, void* data, size_t size) const override {
    std::vector<float> values(size / sizeof(float), static_cast<float>(device * 100 + channel));
    std::memcpy(data, values.data(), values.size() * sizeof(float));
    return OkStatus();
  }
  std::vector<std::tuple<int, int64_t, std::vector<float>>> Sent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto sent = sent_;
    std::sort(sent.begin(), sent.end());
    return sent;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::tuple<int, int64_t, std::vector<float>>> sent_;
};

TEST(ManualRegionTest, HostCallbacksRunPerPartitionInThePartitionedProgram) {
  // A shard_map body calling back to the host (JAX's send/recv host transfers): each
  // partition sends its block on channel 2, adds what it receives on channel 3 and sends
  // its block again on channel 4 (a callback without results). The SPMD
  // partitioner keeps the body (and its unused tokens) in the per-partition program; each
  // partition's run calls the host for its own device, as the global view does.
  const int partitions = 4;
  ir::Module module = ManualModule(partitions, 2, {2}, true, [](ModuleBuilder& b, ir::ValueId arg) {
    auto host_transfer = [](int64_t channel, int64_t type) {
      return Attribute::Dictionary{{"channel_id", ModuleBuilder::Int(channel)},
                                   {"channel_type", ModuleBuilder::Int(type)},
                                   {"is_host_transfer", Attribute(Attribute::Value(true))}};
    };
    ir::ValueId token = b.OpN(OpCode::kCreateToken, {}, {ir::Type::Token()})[0];
    ir::ValueId sent = b.OpN(OpCode::kSend, {arg, token}, {ir::Type::Token()}, host_transfer(2, 2))[0];
    std::vector<ir::ValueId> received =
        b.OpN(OpCode::kRecv, {sent}, {ir::Type::Tensor(DType::kF32, {2}), ir::Type::Token()}, host_transfer(3, 3));
    // A callback without results (jax.debug.print): its send's token is not used.
    b.OpN(OpCode::kSend, {arg, received[1]}, {ir::Type::Token()}, host_transfer(4, 2));
    return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {arg, received[0]}, DType::kF32, {2})};
  });
  module.functions[0].argument_attrs[0] = {{"sdy.sharding", Sharding(Mesh({{"i", partitions}}), {{"i"}})}};
  const std::vector<float> x = Iota(2 * partitions);
  std::vector<float> want;
  for (int p = 0; p < partitions; ++p)
    for (int k = 0; k < 2; ++k) want.push_back(x[static_cast<size_t>(2 * p + k)] + static_cast<float>(p * 100 + 3));

  // The global view: one plan, its manual step running the partitions on threads.
  RecordingHost global_host;
  HostTransfers global{&global_host, {0, 1, 2, 3}, 0};
  auto global_plan = plan::LowerToPlan(module);
  ASSERT_TRUE(global_plan.ok()) << global_plan.status().ToString();
  std::vector<float> global_out(x.size());
  std::vector<const void*> args = {x.data()};
  std::vector<void*> results = {global_out.data()};
  ASSERT_TRUE(ExecutePlan(*global_plan, args, results, &global).ok());
  EXPECT_EQ(global_out, want);

  // Partitioned: each partition runs the per-partition program on its block.
  auto partitioned = passes::PartitionProgram(module, partitions);
  ASSERT_TRUE(partitioned.ok()) << partitioned.status().ToString();
  auto local_plan = plan::LowerToPlan(partitioned->module, partitions);
  ASSERT_TRUE(local_plan.ok()) << local_plan.status().ToString();
  RecordingHost local_host;
  HostTransfers local{&local_host, {0, 1, 2, 3}, 0};
  std::vector<float> local_out;
  for (int p = 0; p < partitions; ++p) {
    std::vector<float> block(x.begin() + 2 * p, x.begin() + 2 * p + 2), out(2);
    std::vector<const void*> block_args = {block.data()};
    std::vector<void*> block_results = {out.data()};
    const PartitionContext partition{p, nullptr};
    Status status = ExecutePlan(*local_plan, block_args, block_results, &local, &partition);
    ASSERT_TRUE(status.ok()) << status.ToString();
    local_out.insert(local_out.end(), out.begin(), out.end());
  }
  EXPECT_EQ(local_out, want);
  const auto sent = local_host.Sent();
  ASSERT_EQ(sent.size(), static_cast<size_t>(2 * partitions));
  for (int p = 0; p < partitions; ++p) {
    const std::vector<float> block{x[static_cast<size_t>(2 * p)], x[static_cast<size_t>(2 * p + 1)]};
    EXPECT_EQ(sent[static_cast<size_t>(2 * p)], std::make_tuple(p, int64_t{2}, block));
    EXPECT_EQ(sent[static_cast<size_t>(2 * p + 1)], std::make_tuple(p, int64_t{4}, block));
  }
  EXPECT_EQ(sent, global_host.Sent());
}

}  // namespace
}  // namespace stablert::runtime
