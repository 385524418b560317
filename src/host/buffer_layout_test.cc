// Device and host layouts through the host library, on the built StableRT plugin or any other
// (STABLERT_TEST_PLUGIN; CTest also runs these on XLA's CPU plugin when it is installed).
// Values are checked byte for byte against NumPy-style expectations built here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "host/buffer.h"
#include "host/client.h"
#include "host/layout.h"
#include "host/plugin.h"

namespace stablert::host {
namespace {

std::shared_ptr<Client> MakeClient() {
  const char* path = std::getenv("STABLERT_TEST_PLUGIN");
  StatusOr<std::shared_ptr<const Plugin>> plugin = Plugin::Load(path ? path : STABLERT_PLUGIN_PATH);
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  if (!plugin.ok()) return nullptr;
  StatusOr<std::shared_ptr<Client>> client = Client::Create(*plugin);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? *client : nullptr;
}

// Distinct bytes for every element: element i of `count` elements of `element` bytes.
std::vector<uint8_t> Pattern(size_t count, size_t element, uint8_t seed) {
  std::vector<uint8_t> bytes(count * element);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(seed + 37 * i + (i >> 3));
  return bytes;
}

// `row_major` (dims, element bytes each) rearranged into the dense order `minor_to_major`.
std::vector<uint8_t> Rearranged(const std::vector<uint8_t>& row_major, const std::vector<int64_t>& dims,
                                size_t element, const std::vector<int64_t>& minor_to_major) {
  StatusOr<std::vector<int64_t>> strides =
      LayoutByteStrides(MemoryLayout::MinorToMajor(minor_to_major), dims, static_cast<int64_t>(element), "test");
  EXPECT_TRUE(strides.ok()) << strides.status().ToString();
  std::vector<uint8_t> out(row_major.size());
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t e = 0; e < row_major.size() / element; ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) offset += index[d] * (*strides)[d];
    std::memcpy(out.data() + offset, row_major.data() + e * element, element);
    for (size_t d = dims.size(); d-- > 0;)
      if (++index[d] < dims[d]) break; else index[d] = 0;
  }
  return out;
}

bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string_view::npos;
}

// One array through a device layout and back: the device layout reads back as asked, the
// row-major Literal is the original, the Literal in the device's order is the rearranged bytes,
// and an array given in that order on the host (byte strides) lands the same.
void RoundTrip(PJRT_Buffer_Type type, std::vector<int64_t> dims, size_t element, std::vector<uint8_t> row_major,
               std::vector<int64_t> minor_to_major) {
  std::shared_ptr<Client> client = MakeClient();
  ASSERT_NE(client, nullptr);
  const Device& device = client->addressable_devices()[0];
  MemoryLayout layout = MemoryLayout::MinorToMajor(minor_to_major);
  StatusOr<Buffer> buffer = Buffer::FromHost(client, {type, dims, {}, row_major.data()}, device, nullptr, &layout);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  StatusOr<MemoryLayout> read_layout = buffer->Layout();
  ASSERT_TRUE(read_layout.ok()) << read_layout.status().ToString();
  EXPECT_EQ(read_layout->minor_to_major, minor_to_major) << read_layout->ToString();
  EXPECT_TRUE(read_layout->tiles.empty()) << read_layout->ToString();

  StatusOr<Literal> literal = buffer->ToLiteral();
  ASSERT_TRUE(literal.ok()) << literal.status().ToString();
  EXPECT_EQ(literal->type, type);
  EXPECT_EQ(literal->dims, dims);
  EXPECT_TRUE(literal->byte_strides.empty());
  EXPECT_EQ(literal->bytes, row_major);

  std::vector<uint8_t> reordered = Rearranged(row_major, dims, element, minor_to_major);
  StatusOr<Literal> in_order = buffer->ToLiteral(layout);
  ASSERT_TRUE(in_order.ok()) << in_order.status().ToString();
  EXPECT_EQ(in_order->bytes, reordered);
  StatusOr<std::vector<int64_t>> strides = LayoutByteStrides(layout, dims, static_cast<int64_t>(element), "test");
  ASSERT_TRUE(strides.ok());
  EXPECT_EQ(in_order->byte_strides, *strides);
  StatusOr<Literal> back = ToRowMajor(in_order->view());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->bytes, row_major);

  // The same values given in the device's order on the host, with the default device layout.
  StatusOr<Buffer> from_strided = Buffer::FromHost(client, {type, dims, *strides, reordered.data()}, device);
  ASSERT_TRUE(from_strided.ok()) << from_strided.status().ToString();
  StatusOr<MemoryLayout> default_layout = from_strided->Layout();
  ASSERT_TRUE(default_layout.ok()) << default_layout.status().ToString();
  EXPECT_TRUE(MemoryLayout::MinorToMajor(default_layout->minor_to_major).IsRowMajorOrder()) << default_layout->ToString();
  StatusOr<Literal> from_strided_literal = from_strided->ToLiteral();
  ASSERT_TRUE(from_strided_literal.ok()) << from_strided_literal.status().ToString();
  EXPECT_EQ(from_strided_literal->bytes, row_major);
}

TEST(HostLayout, ColumnMajorF32RoundTrip) {
  RoundTrip(PJRT_Buffer_Type_F32, {3, 5}, 4, Pattern(15, 4, 1), {0, 1});
}

TEST(HostLayout, PermutedRank3F32RoundTrip) {
  RoundTrip(PJRT_Buffer_Type_F32, {2, 3, 4}, 4, Pattern(24, 4, 9), {1, 2, 0});
}

TEST(HostLayout, ColumnMajorBf16RoundTrip) {
  RoundTrip(PJRT_Buffer_Type_BF16, {4, 3}, 2, Pattern(12, 2, 5), {0, 1});
}

TEST(HostLayout, ColumnMajorU4RoundTrip) {
  // One byte per element on the host, values 0..15, as ml_dtypes holds uint4. (int4 is left
  // out: XLA's CPU plugin 0.81 drops the sign of strided int4 host arrays, reading -8 as 8.)
  std::vector<uint8_t> values(3 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>((i * 7) % 16);
  RoundTrip(PJRT_Buffer_Type_U4, {3, 5}, 1, values, {0, 1});
}

TEST(HostLayout, ColumnMajorPredRoundTrip) {
  std::vector<uint8_t> values(4 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = (i * 7) % 3 == 0;
  RoundTrip(PJRT_Buffer_Type_PRED, {4, 3}, 1, values, {0, 1});
}

TEST(HostLayout, MalformedRequestsAreRefusedByTheHost) {
  std::shared_ptr<Client> client = MakeClient();
  ASSERT_NE(client, nullptr);
  const Device& device = client->addressable_devices()[0];
  std::vector<float> data(6, 1.0f);
  HostArray array{PJRT_Buffer_Type_F32, {2, 3}, {}, data.data()};
  struct Case {
    MemoryLayout layout;
    const char* expected;
  };
  for (const Case& c : {Case{MemoryLayout::MinorToMajor({0}), "orders 1 dimensions; the array has rank 2"},
                        Case{MemoryLayout::MinorToMajor({0, 0}), "not a permutation"},
                        Case{MemoryLayout::MinorToMajor({2, 0}), "not a permutation"},
                        Case{MemoryLayout::Strides({4}), "1 byte strides; the array has rank 2"},
                        Case{MemoryLayout{MemoryLayout::Kind::kMinorToMajor, {1, 0}, {{0, 2}}, {}}, "tile size 0"}}) {
    StatusOr<Buffer> refused = Buffer::FromHost(client, array, device, nullptr, &c.layout);
    ASSERT_FALSE(refused.ok()) << c.layout.ToString();
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(refused.status(), "Buffer::FromHost: device_layout")) << refused.status().ToString();
    EXPECT_TRUE(Contains(refused.status(), c.expected)) << refused.status().ToString();
  }
  StatusOr<Buffer> buffer = Buffer::FromHost(client, array, device);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  StatusOr<Literal> bad_host = buffer->ToLiteral(MemoryLayout::MinorToMajor({1, 1}));
  ASSERT_FALSE(bad_host.ok());
  EXPECT_EQ(bad_host.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(bad_host.status(), "Buffer::ToLiteral: host_layout {1,1}")) << bad_host.status().ToString();
  MemoryLayout tiled{MemoryLayout::Kind::kMinorToMajor, {1, 0}, {{2, 2}}, {}};
  StatusOr<Literal> tiled_host = buffer->ToLiteral(tiled);
  ASSERT_FALSE(tiled_host.ok());
  EXPECT_TRUE(Contains(tiled_host.status(), "has tiles")) << tiled_host.status().ToString();
}

TEST(HostLayout, LayoutsAPluginRefusesNameTheFunction) {
  std::shared_ptr<Client> client = MakeClient();
  ASSERT_NE(client, nullptr);
  const Device& device = client->addressable_devices()[0];
  std::vector<uint8_t> row_major = Pattern(16, 4, 3);
  HostArray array{PJRT_Buffer_Type_F32, {4, 4}, {}, row_major.data()};
  // Tiles: a CPU plugin holds dense arrays. A plugin that takes them must still give the
  // values back.
  MemoryLayout tiled{MemoryLayout::Kind::kMinorToMajor, {1, 0}, {{2, 2}}, {}};
  StatusOr<Buffer> with_tiles = Buffer::FromHost(client, array, device, nullptr, &tiled);
  if (!with_tiles.ok()) {
    EXPECT_TRUE(Contains(with_tiles.status(), "device_layout {1,0:T(2,2)}: PJRT_Client_BufferFromHostBuffer: "))
        << with_tiles.status().ToString();
  } else {
    StatusOr<Literal> literal = with_tiles->ToLiteral();
    ASSERT_TRUE(literal.ok()) << literal.status().ToString();
    EXPECT_EQ(literal->bytes, row_major);
  }
  // Byte strides of a dense column-major array as the device layout (XLA takes orders only).
  MemoryLayout strides = MemoryLayout::Strides({4, 16});
  StatusOr<Buffer> with_strides = Buffer::FromHost(client, array, device, nullptr, &strides);
  if (!with_strides.ok()) {
    EXPECT_TRUE(Contains(with_strides.status(), "device_layout strides{4,16}: PJRT_Client_BufferFromHostBuffer: "))
        << with_strides.status().ToString();
  } else {
    StatusOr<MemoryLayout> layout = with_strides->Layout();
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    EXPECT_EQ(layout->minor_to_major, (std::vector<int64_t>{0, 1})) << layout->ToString();
    StatusOr<Literal> literal = with_strides->ToLiteral();
    ASSERT_TRUE(literal.ok()) << literal.status().ToString();
    EXPECT_EQ(literal->bytes, row_major);
  }
  // A host layout with gaps: rows 40 bytes apart, elements 8 apart.
  StatusOr<Buffer> buffer = Buffer::FromHost(client, array, device);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  StatusOr<Literal> padded = buffer->ToLiteral(MemoryLayout::Strides({40, 8}));
  if (!padded.ok()) {
    EXPECT_TRUE(Contains(padded.status(), "host_layout strides{40,8}: PJRT_Buffer_ToHostBuffer: "))
        << padded.status().ToString();
  } else {
    EXPECT_EQ(padded->byte_strides, (std::vector<int64_t>{40, 8}));
    ASSERT_GE(padded->bytes.size(), 3 * 40 + 3 * 8 + 4u);
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 4; ++j)
        EXPECT_EQ(std::memcmp(padded->bytes.data() + i * 40 + j * 8, row_major.data() + (i * 4 + j) * 4, 4), 0);
    StatusOr<Literal> dense = ToRowMajor(padded->view());
    ASSERT_TRUE(dense.ok()) << dense.status().ToString();
    EXPECT_EQ(dense->bytes, row_major);
  }
}

TEST(HostLayout, TextFormChecksAndStrides) {
  StatusOr<MemoryLayout> plain = ParseLayoutText("{1,0}", "f");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(*plain, MemoryLayout::RowMajor(2));
  EXPECT_TRUE(plain->IsRowMajorOrder());
  StatusOr<MemoryLayout> scalar = ParseLayoutText("{}", "f");
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->minor_to_major.empty());
  StatusOr<MemoryLayout> tiled = ParseLayoutText("{0,1:T(8,128)(2,1)}", "f");
  ASSERT_TRUE(tiled.ok()) << tiled.status().ToString();
  EXPECT_EQ(tiled->minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tiled->tiles, (std::vector<std::vector<int64_t>>{{8, 128}, {2, 1}}));
  EXPECT_EQ(tiled->ToString(), "{0,1:T(8,128)(2,1)}");
  EXPECT_FALSE(tiled->IsRowMajorOrder());
  StatusOr<MemoryLayout> packed = ParseLayoutText("{0,1:E(4)S(1)}", "f");
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  EXPECT_EQ(*packed, MemoryLayout::ColumnMajor(2));
  for (const char* bad : {"", "1,0", "{1,0", "{1,,0}", "{1,0:T(8}", "{a}", "{1,0} x"}) {
    StatusOr<MemoryLayout> refused = ParseLayoutText(bad, "PJRT_Layouts_MemoryLayout_Serialize");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_TRUE(Contains(refused.status(), "PJRT_Layouts_MemoryLayout_Serialize: cannot read the layout"));
  }
  StatusOr<std::vector<int64_t>> strides =
      LayoutByteStrides(MemoryLayout::ColumnMajor(3), {2, 3, 4}, 2, "f");
  ASSERT_TRUE(strides.ok());
  EXPECT_EQ(*strides, (std::vector<int64_t>{2, 4, 12}));
  EXPECT_FALSE(LayoutByteStrides(*tiled, {16, 256}, 4, "f").ok());

  // A reversed view (negative strides) read into row-major bytes.
  const int32_t values[6] = {0, 1, 2, 3, 4, 5};
  StatusOr<Literal> reversed = ToRowMajor({PJRT_Buffer_Type_S32, {2, 3}, {-12, -4}, &values[5]});
  ASSERT_TRUE(reversed.ok()) << reversed.status().ToString();
  const int32_t expected[6] = {5, 4, 3, 2, 1, 0};
  ASSERT_EQ(reversed->bytes.size(), sizeof expected);
  EXPECT_EQ(std::memcmp(reversed->bytes.data(), expected, sizeof expected), 0);
  EXPECT_FALSE(ToRowMajor({PJRT_Buffer_Type_S32, {2, 3}, {4}, values}).ok());
}

}  // namespace
}  // namespace stablert::host
