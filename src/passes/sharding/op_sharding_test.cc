// LayoutFromOpSharding: the shardings compiled executables report, read back into layouts.
#include <gtest/gtest.h>

#include "base/proto_wire.h"
#include "passes/sharding/sharding.h"

namespace stablert::passes {
namespace {

// xla.OpSharding type OTHER over `tiles`, with an iota tile assignment (reshape, perm).
std::string IotaSharding(const std::vector<int64_t>& tiles, const std::vector<int64_t>& reshape,
                         const std::vector<int64_t>& perm, bool replicate_last) {
  proto::WireWriter w;
  w.Varint(1, 3);
  w.PackedVarints(3, tiles);
  if (replicate_last) w.Varint(6, 1);
  w.PackedVarints(9, reshape);
  w.PackedVarints(10, perm);
  return w.Take();
}

TEST(LayoutFromOpSharding, IotaColumnsOverATwoByFourMeshReplicatedOnItsFirstAxis) {
  // P(None, 'b') on mesh {a: 2, b: 4} (partition = 4a + b): tiles [1, 4] x 2 replicas,
  // devices [0, 4, 1, 5, 2, 6, 3, 7] as iota [2, 4] transposed by [1, 0].
  StatusOr<ShardLayout> layout =
      LayoutFromOpSharding(IotaSharding({1, 4, 2}, {2, 4}, {1, 0}, true), Dims{6, 4}, 8, "output 1");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->local_dims, (Dims{6, 1}));
  for (int64_t p = 0; p < 8; ++p) {
    EXPECT_EQ(layout->starts[p], (Dims{0, p % 4})) << p;
    EXPECT_EQ(layout->first_holder[p], p % 4) << p;
  }
}

TEST(LayoutFromOpSharding, ReadsBackWhatSerializeOpShardingWrites) {
  // Rows split over 4 partitions in reverse order, replicated twice.
  ShardLayout original;
  original.local_dims = {2, 3};
  for (int64_t p = 0; p < 8; ++p) original.starts.push_back({(3 - p % 4) * 2, 0});
  for (int64_t p = 0; p < 8; ++p) original.first_holder.push_back(p % 4);
  std::string serialized = SerializeOpSharding(original, Dims{8, 3});
  StatusOr<ShardLayout> layout = LayoutFromOpSharding(serialized, Dims{8, 3}, 8, "x");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->local_dims, original.local_dims);
  EXPECT_EQ(layout->starts, original.starts);
  EXPECT_EQ(layout->first_holder, original.first_holder);
}

TEST(LayoutFromOpSharding, ReplicatedAndMaximal) {
  proto::WireWriter replicated;
  replicated.Varint(1, 0);
  StatusOr<ShardLayout> whole = LayoutFromOpSharding(replicated.data(), Dims{5}, 4, "x");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->local_dims, Dims{5});
  EXPECT_EQ(whole->first_holder, (std::vector<int64_t>{0, 0, 0, 0}));
  proto::WireWriter maximal;
  maximal.Varint(1, 1);
  maximal.PackedVarints(4, {2});
  StatusOr<ShardLayout> on_two = LayoutFromOpSharding(maximal.data(), Dims{5}, 4, "x");
  ASSERT_TRUE(on_two.ok());
  EXPECT_EQ(on_two->first_holder, (std::vector<int64_t>{2, 2, 2, 2}));
}

TEST(LayoutFromOpSharding, RefusesWhatItCannotPlaceNamingTheOutput) {
  StatusOr<ShardLayout> uneven = LayoutFromOpSharding(IotaSharding({4}, {4}, {0}, false), Dims{6}, 4, "output 3");
  ASSERT_FALSE(uneven.ok());
  EXPECT_EQ(uneven.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(uneven.status().message().find("output 3"), std::string::npos);
  proto::WireWriter manual;
  manual.Varint(1, 4);
  EXPECT_EQ(LayoutFromOpSharding(manual.data(), Dims{4}, 2, "y").status().code(), StatusCode::kUnimplemented);
  // Tiles for 4 devices on an 8-partition executable; a device named twice; garbage.
  EXPECT_EQ(LayoutFromOpSharding(IotaSharding({4}, {4}, {0}, false), Dims{8}, 8, "z").status().code(),
            StatusCode::kInvalidArgument);
  proto::WireWriter twice;
  twice.Varint(1, 3);
  twice.PackedVarints(3, {2});
  twice.PackedVarints(4, {1, 1});
  EXPECT_EQ(LayoutFromOpSharding(twice.data(), Dims{4}, 2, "z").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LayoutFromOpSharding("\xff\xff", Dims{4}, 2, "z").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stablert::passes
