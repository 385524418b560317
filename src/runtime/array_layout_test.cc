#include "runtime/array_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ir/test_module_builder.h"

namespace stablert::runtime {
namespace {

using ir::Attribute;
using ir::OpCode;
using ir::testing::ModuleBuilder;

// Element (i0, i1, ...) of a row-major array of `dims` whose bytes are in layout `m2m`:
// its offset, computed directly from the definition.
int64_t OffsetInLayout(const Dims& dims, const MajorToMinor& m2m, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (int64_t d : m2m) offset = offset * dims[static_cast<size_t>(d)] + index[static_cast<size_t>(d)];
  return offset;
}

TEST(ArrayLayoutTest, CopiesMatchTheDefinitionBothWays) {
  for (const auto& [dims, m2m] : std::vector<std::pair<Dims, MajorToMinor>>{
           {{8, 128}, {1, 0}}, {{3, 5, 7}, {2, 0, 1}}, {{3, 5, 7}, {1, 2, 0}}, {{300, 257}, {1, 0}},
           {{2, 1, 4, 3}, {3, 1, 0, 2}}}) {
    const int64_t count = ElementCount(dims);
    std::vector<int32_t> row_major(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) row_major[static_cast<size_t>(i)] = static_cast<int32_t>(i * 7 + 1);
    std::vector<int32_t> laid_out(row_major.size(), -1), back(row_major.size(), -1);
    CopyRowMajorToLayout(row_major.data(), dims, DType::kS32, m2m, laid_out.data());
    std::vector<int64_t> index(dims.size(), 0);
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(laid_out[static_cast<size_t>(OffsetInLayout(dims, m2m, index))], row_major[static_cast<size_t>(i)])
          << DimsToString(dims) << " element " << i;
      for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    CopyLayoutToRowMajor(laid_out.data(), dims, DType::kS32, m2m, back.data());
    EXPECT_EQ(back, row_major) << DimsToString(dims);
    EXPECT_EQ(PhysicalDims(dims, m2m).size(), dims.size());
  }
}

TEST(ArrayLayoutTest, CopiesBetweenTwoLayoutsInOnePass) {
  // Every pair of layouts of a rank-3 array (and a rank-4 one with a dimension of extent 1):
  // the copy equals going through row-major.
  for (const Dims& dims : std::vector<Dims>{{3, 5, 7}, {2, 1, 4, 3}}) {
    std::vector<MajorToMinor> layouts;
    MajorToMinor order(dims.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int64_t>(d);
    do layouts.push_back(order);
    while (std::next_permutation(order.begin(), order.end()));
    const int64_t count = ElementCount(dims);
    std::vector<int32_t> row_major(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) row_major[static_cast<size_t>(i)] = static_cast<int32_t>(i * 3 - 5);
    for (const MajorToMinor& from : layouts) {
      std::vector<int32_t> source(row_major.size()), expected(row_major.size()), got(row_major.size(), -1);
      CopyRowMajorToLayout(row_major.data(), dims, DType::kS32, NormalizeLayout(from), source.data());
      for (const MajorToMinor& to : layouts) {
        CopyRowMajorToLayout(row_major.data(), dims, DType::kS32, NormalizeLayout(to), expected.data());
        CopyBetweenLayouts(source.data(), dims, DType::kS32, NormalizeLayout(from), to, got.data());
        ASSERT_EQ(got, expected) << DimsToString(dims) << " from " << LayoutToString(from, dims.size()) << " to "
                                 << LayoutToString(to, dims.size());
      }
    }
  }
}

TEST(ArrayLayoutTest, RowMajorIsEmptyAndBadPermutationsAreNamed) {
  EXPECT_TRUE(NormalizeLayout({0, 1, 2}).empty());
  EXPECT_EQ(NormalizeLayout({1, 0}), (MajorToMinor{1, 0}));
  EXPECT_EQ(MinorToMajor({}, 3), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(LayoutToString({1, 0}, 2), "{0,1}");
  Status bad = CheckLayout({0, 0}, 2, "argument 3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("argument 3"), std::string_view::npos) << bad.message();
  EXPECT_FALSE(CheckLayout({0, 1, 2}, 2, "x").ok());
}

TEST(ArrayLayoutTest, EntryLayoutsFromLayoutModes) {
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {2, 4, 4});
  auto y = b.Param(DType::kF32, {8, 16});
  auto t = b.Op(OpCode::kTranspose, {x}, DType::kF32, {4, 4, 2}, {{"permutation", ModuleBuilder::IntList({2, 1, 0})}});
  auto twice = b.Op(OpCode::kAdd, {y, y}, DType::kF32, {8, 16});
  auto ty = b.Op(OpCode::kTranspose, {y}, DType::kF32, {16, 8}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  ir::Module module = b.Build({t, twice, ty, twice});
  ir::Function& entry = module.functions[0];
  entry.argument_attrs.assign(2, {});
  entry.result_attrs.assign(4, {});
  entry.argument_attrs[1].emplace_back("mhlo.layout_mode", Attribute(std::string("{0,1}")));  // column-major
  entry.result_attrs[0].emplace_back("mhlo.layout_mode", Attribute(std::string("auto")));
  entry.result_attrs[1].emplace_back("mhlo.layout_mode", Attribute(std::string("auto")));
  entry.result_attrs[2].emplace_back("mhlo.layout_mode", Attribute(std::string("auto")));
  entry.result_attrs[3].emplace_back("mhlo.layout_mode", Attribute(std::string("default")));
  auto layouts = ReadEntryLayouts(module, entry);
  ASSERT_TRUE(layouts.ok()) << layouts.status().message();
  EXPECT_TRUE(layouts->parameters[0].empty());
  EXPECT_EQ(layouts->parameters[1], (MajorToMinor{1, 0}));
  // x.T of a row-major x is free in major_to_minor (2, 1, 0), as XLA chooses.
  EXPECT_EQ(layouts->results[0], (MajorToMinor{2, 1, 0}));
  EXPECT_TRUE(layouts->results[1].empty());  // elementwise: row-major
  // The transpose of a column-major [8, 16] has its bytes in row-major order.
  EXPECT_TRUE(layouts->results[2].empty());
  EXPECT_TRUE(layouts->results[3].empty());

  entry.result_attrs[3][0].second = Attribute(std::string("{0,1}:T(8,128)"));
  auto tiled = ReadEntryLayouts(module, entry);
  ASSERT_FALSE(tiled.ok());
  EXPECT_NE(tiled.status().message().find("result 3"), std::string_view::npos) << tiled.status().message();
  entry.result_attrs[3][0].second = Attribute(std::string("{0,0}"));
  EXPECT_FALSE(ReadEntryLayouts(module, entry).ok());
}

}  // namespace
}  // namespace stablert::runtime
