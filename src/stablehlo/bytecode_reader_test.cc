// Container-level tests over hand-built bytecode: varint forms, sections and alignment,
// value numbering with forward references, use-list orders, and malformed variants.
#include "stablehlo/bytecode_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stablehlo/encoding.h"

namespace stablert::stablehlo {
namespace {

std::string VarInt(uint64_t v) {
  std::string out;
  for (int n = 1; n <= 8; ++n) {
    if (n < 8 ? v < (uint64_t{1} << (7 * n)) : v < (uint64_t{1} << 56)) {
      uint64_t encoded = (v << n) | (uint64_t{1} << (n - 1));
      for (int i = 0; i < n; ++i) out += static_cast<char>((encoded >> (8 * i)) & 0xFF);
      return out;
    }
  }
  out += '\0';
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

std::string Flag(uint64_t v, bool flag) { return VarInt((v << 1) | (flag ? 1 : 0)); }

std::string Section(int id, const std::string& payload) {
  return std::string(1, static_cast<char>(id)) + VarInt(payload.size()) + payload;
}

TEST(CursorTest, VarIntForms) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383},
                     uint64_t{16384}, uint64_t{1} << 40, (uint64_t{1} << 56) - 1,
                     uint64_t{1} << 56, ~uint64_t{0}}) {
    std::string bytes = VarInt(v);
    Cursor c(bytes, 0, "test");
    uint64_t out = 0;
    ASSERT_TRUE(c.ReadVarInt(&out, "value").ok()) << v;
    EXPECT_EQ(out, v);
    EXPECT_TRUE(c.empty());
  }
  // Non-minimal: 5 encoded in two bytes.
  std::string two = {static_cast<char>((5 << 2 | 2) & 0xFF), static_cast<char>(5 >> 6)};
  Cursor c(two, 0, "test");
  uint64_t out = 0;
  ASSERT_TRUE(c.ReadVarInt(&out, "value").ok());
  EXPECT_EQ(out, 5u);
}

TEST(CursorTest, SignedAndTruncated) {
  std::string bytes = VarInt(~uint64_t{0});  // zig-zag of INT64_MIN
  Cursor c(bytes, 10, "test window");
  int64_t v = 0;
  ASSERT_TRUE(c.ReadSignedVarInt(&v, "value").ok());
  EXPECT_EQ(v, INT64_MIN);
  std::string cut = bytes.substr(0, 4);
  Cursor t(cut, 10, "test window");
  Status status = t.ReadSignedVarInt(&v, "dimension");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "malformed bytecode: test window at byte offset 10: expected dimension, but the "
            "data ends");
}

TEST(CursorTest, CountsAreBoundedByRemainingBytes) {
  std::string bytes = VarInt(1000) + "abc";
  Cursor c(bytes, 0, "test");
  uint64_t count;
  EXPECT_FALSE(c.ReadCount(1, &count, "list size").ok());
  EXPECT_EQ(c.position(), 0u);
}

// A tiny module: builtin.module { %0 = test.a(%1); %1 = test.b }, where test.a uses the
// result of the later test.b (a forward reference) and test.b carries a use-list order.
struct TinyModule {
  uint64_t version = 6;
  std::string ir_override;
  bool align_strings = false;

  std::string Strings() const {
    std::vector<std::string> strings = {"builtin", "module", "test", "a", "b"};
    std::string out = VarInt(strings.size());
    for (auto it = strings.rbegin(); it != strings.rend(); ++it) out += VarInt(it->size() + 1);
    for (const std::string& s : strings) out += s + '\0';
    return out;
  }
  std::string Dialects() const {
    std::string out = VarInt(2) + Flag(0, false) + Flag(2, false) + VarInt(3);
    out += VarInt(0) + VarInt(1) + Flag(1, true);
    out += VarInt(1) + VarInt(2) + Flag(3, true) + Flag(4, true);
    return out;
  }
  std::string Ir() const {
    if (!ir_override.empty()) return ir_override;
    std::string region = VarInt(1) + VarInt(2) + Flag(2, false);
    region += VarInt(1) + '\x06' + VarInt(0) + VarInt(1) + VarInt(0) + VarInt(1) + VarInt(1);
    region += VarInt(2) + '\x22' + VarInt(0) + VarInt(1) + VarInt(0) + Flag(1, false) + VarInt(0);
    std::string module = VarInt(0) + '\x10' + VarInt(0) + Flag(1, true) + Section(4, region);
    return Flag(1, false) + module;
  }
  std::string Build() const {
    std::string out = "ML\xEFR" + VarInt(version) + "test producer" + '\0';
    out += Section(1, Dialects());
    out += Section(3, VarInt(1) + VarInt(1) + VarInt(0) + VarInt(1) + Flag(1, true) + VarInt(0) +
                          VarInt(1) + Flag(3, true));
    out += Section(2, VarInt(15) + VarInt(0) + VarInt(32 << 2));
    out += Section(4, Ir());
    if (align_strings) {
      std::string strings = Strings();
      out += static_cast<char>(0x80);
      out += VarInt(strings.size()) + VarInt(16);
      while (out.size() % 16) out += '\xCB';
      out += strings;
    } else {
      out += Section(0, Strings());
    }
    out += Section(8, "");
    return out;
  }
};

TEST(BytecodeReaderTest, ReadsTinyModuleWithForwardReference) {
  TinyModule tiny;
  std::string bytes = tiny.Build();
  auto file = ReadBytecode(bytes);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->version, 6u);
  EXPECT_EQ(file->producer, "test producer");
  ASSERT_EQ(file->op_names.size(), 3u);
  EXPECT_EQ(file->op_names[2].name, "b");
  ASSERT_EQ(file->ops.size(), 3u);
  const RawOperation& root = file->ops[file->root_op];
  EXPECT_EQ(file->op_name(root), "module");
  EXPECT_TRUE(root.isolated);
  const RawBlock& block = file->blocks[file->regions[root.first_region].first_block];
  ASSERT_EQ(block.num_ops, 2u);
  const RawOperation& a = file->ops[block.first_op];
  const RawOperation& b = file->ops[block.first_op + 1];
  EXPECT_EQ(file->op_name(a), "a");
  ASSERT_EQ(a.num_operands, 1u);
  EXPECT_EQ(file->operands[a.first_operand], b.first_result);
}

TEST(BytecodeReaderTest, AlignedSectionsArePadded) {
  TinyModule tiny;
  tiny.align_strings = true;
  std::string bytes = tiny.Build();
  auto file = ReadBytecode(bytes);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->strings[0], "builtin");
}

TEST(BytecodeReaderTest, RejectsUndefinedForwardReference) {
  TinyModule tiny;
  // test.a refers to slot 1, but the region defines only test.a's result.
  std::string region = VarInt(1) + VarInt(2) + Flag(1, false);
  region += VarInt(1) + '\x06' + VarInt(0) + VarInt(1) + VarInt(0) + VarInt(1) + VarInt(1);
  tiny.ir_override = Flag(1, false) + VarInt(0) + '\x10' + VarInt(0) + Flag(1, true) +
                     Section(4, region);
  std::string bytes = tiny.Build();
  auto file = ReadBytecode(bytes);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("used but never defined"), std::string::npos)
      << file.status().message();
}

TEST(BytecodeReaderTest, RejectsOutOfScopeValues) {
  TinyModule tiny;
  std::string region = VarInt(1) + VarInt(1) + Flag(1, false);
  region += VarInt(1) + '\x06' + VarInt(0) + VarInt(1) + VarInt(0) + VarInt(1) + VarInt(7);
  tiny.ir_override = Flag(1, false) + VarInt(0) + '\x10' + VarInt(0) + Flag(1, true) +
                     Section(4, region);
  std::string bytes = tiny.Build();
  auto file = ReadBytecode(bytes);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("refers to value #7 but only 1 values are in scope"),
            std::string::npos)
      << file.status().message();
}

TEST(BytecodeReaderTest, RejectsBadSectionsAndVersions) {
  TinyModule tiny;
  std::string good = tiny.Build();
  std::string unknown = good + Section(12, "");
  EXPECT_NE(ReadBytecode(unknown).status().message().find("invalid top-level section id 12"),
            std::string::npos);
  std::string duplicate = good + Section(8, "");
  EXPECT_NE(ReadBytecode(duplicate).status().message().find("duplicate properties section"),
            std::string::npos);
  tiny.version = 7;
  EXPECT_NE(ReadBytecode(tiny.Build()).status().message().find("bytecode version 7"),
            std::string::npos);
}

}  // namespace
}  // namespace stablert::stablehlo
