// Unit tests of the SPMD partitioner's geometry and rules (partitioner.h). End-to-end
// behaviour (results equal XLA's, per-device partials, compiled text) is tested from JAX in
// tests/jax_multi_device/test_partitioner.py.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "passes/sharding/partitioner.h"

namespace stablert::passes::partitioning {
namespace {

Mesh TwoByFour() { return Mesh{{{"x", 2}, {"y", 4}}, {}}; }

TEST(MeshGeometryTest, BlockIndicesFollowRowMajorPositions) {
  MeshGeometry mesh(TwoByFour(), 8);
  // Partition p sits at (p / 4, p % 4).
  EXPECT_EQ(mesh.BlockIndex(6, {0}), 1);
  EXPECT_EQ(mesh.BlockIndex(6, {1}), 2);
  EXPECT_EQ(mesh.BlockIndex(6, {0, 1}), 6);
  EXPECT_EQ(mesh.BlockIndex(6, {1, 0}), 5);  // y major: 2 * 2 + 1
  EXPECT_EQ(mesh.Pieces({0, 1}), 8);
}

TEST(MeshGeometryTest, GroupsHoldPartitionsDifferingOnlyAlongTheAxes) {
  MeshGeometry mesh(TwoByFour(), 8);
  EXPECT_EQ(mesh.Groups({0}), (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(mesh.Groups({1}), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(MeshGeometryTest, DeviceIdsPermutePartitions) {
  // Position i of the mesh is partition device_ids[i].
  MeshGeometry mesh(Mesh{{{"x", 2}, {"y", 2}}, {3, 2, 1, 0}}, 4);
  EXPECT_EQ(mesh.BlockIndex(3, {0}), 0);  // partition 3 is at position 0
  EXPECT_EQ(mesh.BlockIndex(0, {0, 1}), 3);
  EXPECT_EQ(mesh.Groups({1}), (std::vector<int64_t>{3, 2, 1, 0}));
}

TEST(SpecTest, LocalDimsAndFits) {
  MeshGeometry mesh(TwoByFour(), 8);
  Spec spec{{{0}, {1}}, {}};
  EXPECT_EQ(LocalDims({8, 8}, spec, mesh), (Dims{4, 2}));
  EXPECT_TRUE(Fits(spec, {8, 8}, mesh));
  EXPECT_FALSE(Fits(spec, {8, 6}, mesh));                      // 6 does not split in 4
  EXPECT_FALSE(Fits(Spec{{{0}, {0}}, {}}, {8, 8}, mesh));      // an axis used twice
  EXPECT_FALSE(Fits(Spec{{{0}, {}}, {0}}, {8, 8}, mesh));      // split and unreduced along x
  EXPECT_TRUE(Fits(Spec{{{0}, {}}, {1}}, {8, 8}, mesh));
}

TEST(ReshapeDimPairsTest, DimensionsWithEqualPrefixesSplitAlike) {
  // [8, 8] -> [4, 16]: rows pair up (prefix 1); columns do not (prefix 8 vs 4).
  EXPECT_EQ(ReshapeDimPairs({8, 8}, {4, 16}), (std::vector<std::pair<int64_t, int64_t>>{{0, 0}}));
  // [4, 2, 3] -> [8, 3]: the first dimensions pair, and the last (prefix 8 on both sides).
  EXPECT_EQ(ReshapeDimPairs({4, 2, 3}, {8, 3}), (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {2, 1}}));
  // Size-1 dimensions carry no split: [1, 8] -> [8] pairs only the 8s.
  EXPECT_EQ(ReshapeDimPairs({1, 8}, {8}), (std::vector<std::pair<int64_t, int64_t>>{{1, 0}}));
  EXPECT_EQ(ReshapeDimPairs({8, 1}, {1, 8}), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}}));
}

TEST(IsIdentityTest, InitValuesThatPartialsMayRepeat) {
  auto bytes = [](auto value) {
    std::vector<uint8_t> out(sizeof(value));
    std::memcpy(out.data(), &value, sizeof(value));
    return out;
  };
  EXPECT_TRUE(IsIdentity(OpCode::kAdd, DType::kF32, bytes(0.0f)));
  EXPECT_FALSE(IsIdentity(OpCode::kAdd, DType::kF32, bytes(1.0f)));
  EXPECT_TRUE(IsIdentity(OpCode::kMaximum, DType::kF32, bytes(-std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(IsIdentity(OpCode::kMinimum, DType::kF64, bytes(std::numeric_limits<double>::infinity())));
  EXPECT_TRUE(IsIdentity(OpCode::kMaximum, DType::kS32, bytes(std::numeric_limits<int32_t>::min())));
  EXPECT_TRUE(IsIdentity(OpCode::kMinimum, DType::kU8, bytes(uint8_t{255})));
  EXPECT_TRUE(IsIdentity(OpCode::kAnd, DType::kPred, bytes(uint8_t{1})));
  EXPECT_FALSE(IsIdentity(OpCode::kMultiply, DType::kF32, bytes(1.0f)));  // products are not combined
}

}  // namespace
}  // namespace stablert::passes::partitioning
