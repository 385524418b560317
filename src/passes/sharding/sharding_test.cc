// Shard layouts and their xla.OpSharding form, for unreduced (partial-sum) shardings.
#include "passes/sharding/sharding.h"

#include <gtest/gtest.h>

#include "base/proto_wire.h"

namespace stablert::passes {
namespace {

// A mesh x=2, y=2 (partition = 2 * x + y).
TensorSharding Sharded(std::vector<std::vector<AxisRef>> dims, std::vector<AxisRef> unreduced) {
  TensorSharding sharding;
  sharding.mesh.axes = {{"x", 2}, {"y", 2}};
  sharding.dims = std::move(dims);
  sharding.unreduced = std::move(unreduced);
  return sharding;
}

struct OpShardingFields {
  uint64_t type = 0;
  std::vector<int64_t> tile_dims, devices, last_tile_dims;
};

OpShardingFields Decode(const std::string& bytes) {
  OpShardingFields out;
  proto::WireReader reader(bytes);
  while (!reader.done()) {
    auto field = reader.Next();
    EXPECT_TRUE(field.ok());
    if (!field.ok()) break;
    if (field->number == 1) out.type = field->varint;
    if (field->number == 3) EXPECT_TRUE(proto::WireReader::AppendPackedVarints(*field, &out.tile_dims).ok());
    if (field->number == 4) EXPECT_TRUE(proto::WireReader::AppendPackedVarints(*field, &out.devices).ok());
    if (field->number == 8) EXPECT_TRUE(proto::WireReader::AppendPackedVarints(*field, &out.last_tile_dims).ok());
  }
  return out;
}

TEST(ShardingTest, UnreducedAxisGroupsPartialsAndKeepsBlocks) {
  // P("x", None, unreduced={"y"}) over f32[2, 2]: rows split by x; along y, partials.
  auto layout = LayoutShards(Sharded({{AxisRef{0}}, {}}, {AxisRef{1}}), {2, 2}, 4, "test");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->local_dims, (Dims{1, 2}));
  EXPECT_EQ(layout->partial_group_size, 2);
  EXPECT_EQ(layout->partial_index, (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(layout->partial_groups, (std::vector<int64_t>{0, 1, 2, 3}));

  // What JAX writes for this sharding: {devices=[2,1,2]<=[4] last_tile_dims={unreduced}}.
  OpShardingFields proto = Decode(SerializeOpSharding(*layout, {2, 2}));
  EXPECT_EQ(proto.type, 3u);  // OTHER
  EXPECT_EQ(proto.tile_dims, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(proto.devices, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(proto.last_tile_dims, (std::vector<int64_t>{6}));  // UNREDUCED
}

TEST(ShardingTest, UnreducedAlongTheMajorAxisWithReplication) {
  // P(None, None, unreduced={"x"}): groups pair partitions across x; y replicates.
  auto layout = LayoutShards(Sharded({{}, {}}, {AxisRef{0}}), {2, 2}, 4, "test");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->partial_index, (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(layout->partial_groups, (std::vector<int64_t>{0, 2, 1, 3}));
  OpShardingFields proto = Decode(SerializeOpSharding(*layout, {2, 2}));
  EXPECT_EQ(proto.tile_dims, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(proto.last_tile_dims, (std::vector<int64_t>{6, 0}));  // UNREDUCED, REPLICATED
  // As JAX writes it: {devices=[1,1,2,2]<=[4] last_tile_dims={unreduced, replicated}}.
  EXPECT_EQ(proto.devices, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(ShardingTest, FullyUnreducedIsTheUnreducedType) {
  auto layout = LayoutShards(Sharded({{}, {}}, {AxisRef{0}, AxisRef{1}}), {2, 2}, 4, "test");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->partial_group_size, 4);
  EXPECT_EQ(Decode(SerializeOpSharding(*layout, {2, 2})).type, 6u);
}

}  // namespace
}  // namespace stablert::passes
