#include "base/proto_wire.h"

#include <gtest/gtest.h>

namespace stablert::proto {
namespace {

TEST(ProtoWire, WriterAndReaderAgree) {
  WireWriter writer;
  writer.Varint(1, 300);
  writer.Bytes(2, "hello");
  writer.Varint(536870911, UINT64_MAX);
  WireReader reader(writer.data());
  auto a = reader.Next();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->number, 1u);
  EXPECT_EQ(a->varint, 300u);
  auto b = reader.Next();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bytes, "hello");
  auto c = reader.Next();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->number, 536870911u);
  EXPECT_EQ(c->varint, UINT64_MAX);
  EXPECT_TRUE(reader.done());
}

TEST(ProtoWire, PackedAndUnpackedRepeatedVarints) {
  WireWriter packed_payload;
  std::string payload = "\x01\x96\x01\x03";
  WireWriter writer;
  writer.Bytes(1, payload);
  writer.Varint(1, 9);
  WireReader reader(writer.data());
  std::vector<int64_t> values;
  while (!reader.done()) {
    auto field = reader.Next();
    ASSERT_TRUE(field.ok());
    ASSERT_TRUE(WireReader::AppendPackedVarints(*field, &values).ok());
  }
  EXPECT_EQ(values, (std::vector<int64_t>{1, 150, 3, 9}));
}

TEST(ProtoWire, MalformedInputIsAnErrorWithItsOffset) {
  for (std::string bytes : {std::string("\x0a\x05hi", 4), std::string("\x08\xff\xff", 3), std::string("\x0b", 1),
                            std::string("\x00\x01", 2)}) {
    WireReader reader(bytes);
    auto field = reader.Next();
    ASSERT_FALSE(field.ok()) << "bytes of size " << bytes.size();
    EXPECT_EQ(field.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(field.status().message().find("byte"), std::string::npos) << field.status().message();
  }
}

}  // namespace
}  // namespace stablert::proto
