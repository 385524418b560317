// Malformed input must come back as an error status, never a crash: every truncation of
// small programs, random byte flips, and garbage. Run under -DSTABLERT_SANITIZE=ON too.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/entry_decoder.h"
#include "stablehlo/read_module.h"

namespace stablert::stablehlo {
namespace {

namespace fs = std::filesystem;

std::string Program(const std::string& name) {
  std::ifstream in(fs::path(STABLERT_TESTDATA_DIR) / "programs" / name, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Reads `bytes`; when the read succeeds, the module must also survive verification and
// printing.
Status ReadVerifyPrint(std::string_view bytes) {
  auto module = ReadModule(bytes);
  if (!module.ok()) return module.status();
  Status verified = ir::Verify(**module);
  std::string text = ir::PrintModule(**module);
  EXPECT_FALSE(text.empty());
  return verified;
}

const char* const kSmallPrograms[] = {"add_i32.1_13_7.mlirbc", "add_i32.0_9_0.mlirbc",
                                      "while_loop.1_17_0.mlirbc", "reduce_sum.0_9_0.mlirbc",
                                      "sdy_sharded_add.1_13_7.mlirbc",
                                      "sdy_shard_map_psum.0_9_0.mlirbc"};

TEST(RobustnessTest, EveryTruncationFailsCleanly) {
  for (const char* name : kSmallPrograms) {
    std::string bytes = Program(name);
    ASSERT_FALSE(bytes.empty()) << name;
    for (size_t length = 0; length < bytes.size(); ++length) {
      auto module = ReadModule(std::string_view(bytes).substr(0, length));
      ASSERT_FALSE(module.ok()) << name << " truncated to " << length << " bytes was accepted";
      EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument)
          << name << " @" << length << ": " << module.status().ToString();
      EXPECT_FALSE(module.status().message().empty());
    }
  }
}

TEST(RobustnessTest, TruncationMessagesNameSectionAndOffset) {
  std::string bytes = Program("add_i32.1_13_7.mlirbc");
  auto module = ReadModule(std::string_view(bytes).substr(0, bytes.size() - 3));
  ASSERT_FALSE(module.ok());
  std::string_view message = module.status().message();
  EXPECT_NE(message.find("byte offset"), std::string::npos) << message;
  EXPECT_NE(message.find("section"), std::string::npos) << message;
}

TEST(RobustnessTest, RandomByteFlipsNeverCrash) {
  std::mt19937 rng(1234);
  int rejected = 0, total = 0;
  for (const char* name : kSmallPrograms) {
    const std::string original = Program(name);
    for (int trial = 0; trial < 1500; ++trial) {
      std::string bytes = original;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        size_t at = rng() % bytes.size();
        bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
      }
      Status status = ReadVerifyPrint(bytes);
      ++total;
      if (!status.ok()) {
        ++rejected;
        EXPECT_FALSE(status.message().empty());
      }
    }
  }
  // Most corruptions are detected; the rest (e.g. a changed string) still read safely.
  EXPECT_GT(rejected, total / 2);
}

TEST(RobustnessTest, InsertedAndDeletedBytesNeverCrash) {
  std::mt19937 rng(99);
  for (const char* name : kSmallPrograms) {
    const std::string original = Program(name);
    for (int trial = 0; trial < 500; ++trial) {
      std::string bytes = original;
      size_t at = rng() % bytes.size();
      if (trial % 2) {
        bytes.erase(at, 1 + rng() % 3);
      } else {
        bytes.insert(at, 1 + rng() % 3, static_cast<char>(rng()));
      }
      ReadVerifyPrint(bytes).IgnoreError();
    }
  }
}

TEST(RobustnessTest, GarbageIsRejected) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(rng() % 256, '\0');
    for (char& ch : bytes) ch = static_cast<char>(rng());
    if (trial % 2) bytes.replace(0, std::min<size_t>(4, bytes.size()), "ML\xEFR");
    auto module = ReadModule(bytes);
    EXPECT_FALSE(module.ok());
  }
  auto empty = ReadModule("");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("magic"), std::string::npos);
}

TEST(RobustnessTest, HostileCountsDoNotAllocate) {
  // A header followed by a string section that claims 2^56 strings.
  std::string bytes = "ML\xEFR";
  bytes += '\x0D';  // version 6
  bytes += std::string("StableHLO_v1.13.7") + '\0';
  bytes += '\x00';                               // string section
  bytes += '\x13';                               // length 9
  bytes += std::string("\x80\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 8);  // 8-byte varint count
  bytes += '\x01';
  auto module = ReadModule(bytes);
  ASSERT_FALSE(module.ok());
}

}  // namespace
}  // namespace stablert::stablehlo

namespace stablert::stablehlo {
namespace {

// The fuzzer's committed corpus (tests/fuzz/corpus): seeds and the reproducers of every
// finding, replayed in every build, sanitized or not.
TEST(RobustnessTest, FuzzCorpusReadsOrFailsCleanly) {
  fs::path dir = fs::path(STABLERT_TESTDATA_DIR) / ".." / "fuzz" / "corpus";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    Status status = ReadVerifyPrint(buffer.str());
    if (!status.ok()) EXPECT_FALSE(status.message().empty()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(RobustnessTest, BooleanSplatOfNoElements) {
  Cursor c("\x01", 0, "test blob");
  auto elements = DenseElementsFromBlob(c, ir::Type::Tensor(DType::kPred, {0, 3}), "\x01");
  ASSERT_TRUE(elements.ok()) << elements.status().ToString();
  EXPECT_TRUE((*elements)->bytes.empty());
}

// A large splat stays one element: reading dense<1.0> : tensor<1048576xf32> does no work
// per element (compile time does not grow with the data size).
TEST(RobustnessTest, LargeSplatsStayOneElement) {
  const float one = 1.0f;
  const std::string_view blob(reinterpret_cast<const char*>(&one), sizeof one);
  Cursor c(blob, 0, "test blob");
  auto large = DenseElementsFromBlob(c, ir::Type::Tensor(DType::kF32, {1 << 20}), blob);
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  EXPECT_TRUE((*large)->splat);
  EXPECT_EQ((*large)->bytes.size(), 4u);
  EXPECT_EQ((*large)->NumElements(), 1 << 20);
  float last;
  std::memcpy(&last, (*large)->Element((1 << 20) - 1), 4);
  EXPECT_EQ(last, 1.0f);
  // Small splats are expanded (dimension lists and paddings are read as plain arrays).
  auto small = DenseElementsFromBlob(c, ir::Type::Tensor(DType::kF32, {16}), blob);
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE((*small)->splat);
  EXPECT_EQ((*small)->bytes.size(), 64u);
  // Sub-byte integers are sign-extended in the one stored element; booleans normalized.
  Cursor c4("\x0F", 0, "test blob");
  auto nibbles = DenseElementsFromBlob(c4, ir::Type::Tensor(DType::kS4, {1 << 16}), "\x0F");
  ASSERT_TRUE(nibbles.ok());
  ASSERT_TRUE((*nibbles)->splat);
  EXPECT_EQ(static_cast<int8_t>((*nibbles)->bytes[0]), -1);
  auto flags = DenseElementsFromBlob(c4, ir::Type::Tensor(DType::kPred, {1 << 16}), "\x01");
  ASSERT_TRUE(flags.ok());
  ASSERT_TRUE((*flags)->splat);
  EXPECT_EQ((*flags)->bytes, std::vector<uint8_t>{1});
  EXPECT_EQ((*flags)->Expanded().size(), size_t{1} << 16);
}

}  // namespace
}  // namespace stablert::stablehlo
