// Reads every committed JAX program, verifies it, and compares the printed IR of each
// with its golden text (tests/testdata/golden/<program>[.<version>].txt). Set
// STABLERT_UPDATE_GOLDEN=1 to rewrite the golden files.
#include "stablehlo/read_module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/version.h"

namespace stablert::stablehlo {
namespace {

namespace fs = std::filesystem;

fs::path TestData() { return fs::path(STABLERT_TESTDATA_DIR); }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<fs::path> Programs() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(TestData() / "programs")) {
    if (entry.path().extension() == ".mlirbc") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ReadModuleTest, CommittedProgramsReadAndVerify) {
  std::vector<fs::path> programs = Programs();
  ASSERT_GE(programs.size(), 21u);
  for (const fs::path& path : programs) {
    SCOPED_TRACE(path.filename().string());
    auto module = ReadModule(ReadFile(path));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    Status verified = ir::Verify(**module);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    ASSERT_NE((*module)->EntryFunction(), nullptr);
  }
}

// "<program>.<version>.mlirbc" -> golden "<program>.<version>.txt" if present, else
// "<program>.txt".
TEST(ReadModuleTest, PrintedFormMatchesGolden) {
  bool update = std::getenv("STABLERT_UPDATE_GOLDEN") != nullptr;
  int compared = 0;
  for (const fs::path& path : Programs()) {
    std::string stem = path.stem().string();  // add_i32.1_13_7
    std::string program = stem.substr(0, stem.find('.'));
    fs::path specific = TestData() / "golden" / (stem + ".txt");
    fs::path shared = TestData() / "golden" / (program + ".txt");
    fs::path golden = fs::exists(specific) ? specific : shared;
    if (!fs::exists(golden) && !update) continue;
    SCOPED_TRACE(path.filename().string());
    auto module = ReadModule(ReadFile(path));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    std::string text = ir::PrintModule(**module);
    if (update && !fs::exists(golden)) {
      std::ofstream(golden, std::ios::binary) << text;
      continue;
    }
    EXPECT_EQ(text, ReadFile(golden)) << "golden: " << golden;
    ++compared;
  }
  if (!update) {
    EXPECT_GE(compared, 15);
  }
}

TEST(ReadModuleTest, ImportConventions) {
  auto module = ReadModule(ReadFile(TestData() / "programs" / "call_private.1_13_7.mlirbc"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Module& m = **module;
  EXPECT_EQ(m.name, "jit_call_private");
  const ir::Attribute* partitions = ir::FindAttr(m.attrs, "mhlo.num_partitions");
  ASSERT_NE(partitions, nullptr);
  EXPECT_EQ(partitions->AsInt(), 1);
  const ir::Function* main = m.FindFunction("main");
  ASSERT_NE(main, nullptr);
  EXPECT_TRUE(main->is_public);
  const ir::Function* helper = m.FindFunction("_private_helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->is_public);
  const ir::Operation& call = main->body.blocks[0].ops[0];
  EXPECT_EQ(call.code, ir::OpCode::kCall);
  const ir::Attribute* callee = call.attr("callee");
  ASSERT_NE(callee, nullptr);
  ASSERT_NE(callee->get<ir::Attribute::Symbol>(), nullptr);
  EXPECT_EQ(callee->get<ir::Attribute::Symbol>()->name, "_private_helper");
  EXPECT_EQ(main->body.blocks[0].ops.back().code, ir::OpCode::kReturn);
  ASSERT_EQ(main->result_attrs.size(), 1u);
  const ir::Attribute* info = ir::FindAttr(main->result_attrs[0], "jax.result_info");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->AsString(), "result");
}

TEST(ReadModuleTest, ConstantsAreExpandedWithTheirType) {
  auto module = ReadModule(ReadFile(TestData() / "programs" / "mul_const.1_17_0.mlirbc"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& constant = (*module)->functions[0].body.blocks[0].ops[0];
  ASSERT_EQ(constant.code, ir::OpCode::kConstant);
  const auto* elements = constant.attr("value")->get<ir::Attribute::Elements>();
  ASSERT_NE(elements, nullptr);
  EXPECT_EQ((*elements)->type, ir::Type::Tensor(DType::kF32, {}));
  ASSERT_EQ((*elements)->bytes.size(), 4u);
  float value;
  std::memcpy(&value, (*elements)->bytes.data(), 4);
  EXPECT_EQ(value, 2.0f);
  const ir::Operation& broadcast = (*module)->functions[0].body.blocks[0].ops[1];
  EXPECT_EQ(broadcast.attr("broadcast_dimensions")->AsIntArray(), std::vector<int64_t>{});
}

TEST(ReadModuleTest, ConstantElementStorage) {
  auto module =
      ReadModule(ReadFile(TestData() / "programs" / "constants_of_many_dtypes.1_17_0.mlirbc"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::map<DType, std::vector<uint8_t>> bytes;
  for (const ir::Operation& op : (*module)->EntryFunction()->body.blocks[0].ops) {
    if (op.code != ir::OpCode::kConstant) continue;
    const auto& data = **op.attr("value")->get<ir::Attribute::Elements>();
    bytes[data.type.dtype] = data.bytes;
  }
  // Sub-byte integers: one byte each, signed ones sign-extended.
  EXPECT_EQ(bytes[DType::kS4], (std::vector<uint8_t>{0xF8, 0xFF, 0x00, 0x07}));
  EXPECT_EQ(bytes[DType::kU4], (std::vector<uint8_t>{0, 1, 14, 15}));
  // Booleans: one 0/1 byte each.
  EXPECT_EQ(bytes[DType::kPred], (std::vector<uint8_t>{1, 0, 1, 1}));
  // bf16 and f8 keep their raw bits: 1.5 = 0x3FC0, f8E4M3FN 0.5 = 0x30.
  ASSERT_EQ(bytes[DType::kBF16].size(), 8u);
  EXPECT_EQ(bytes[DType::kBF16][0], 0xC0);
  EXPECT_EQ(bytes[DType::kBF16][1], 0x3F);
  ASSERT_EQ(bytes[DType::kF8E4M3FN].size(), 4u);
  EXPECT_EQ(bytes[DType::kF8E4M3FN][0], 0x30);
  // complex<f32>: (re, im) pairs of f32.
  ASSERT_EQ(bytes[DType::kC64].size(), 32u);
  float pair[2];
  std::memcpy(pair, bytes[DType::kC64].data() + 8, 8);
  EXPECT_EQ(pair[0], 3.0f);
  EXPECT_EQ(pair[1], -4.0f);
}

TEST(ReadModuleTest, ShardyMeshesAndShardings) {
  auto module = ReadModule(ReadFile(TestData() / "programs" / "sdy_sharded_add.1_13_7.mlirbc"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Module& m = **module;
  ASSERT_EQ(m.meshes.size(), 1u);
  EXPECT_EQ(m.meshes[0].first, "mesh");
  const ir::Attribute* axes = ir::FindAttr(*m.meshes[0].second.get<ir::Attribute::Dictionary>(),
                                           "axes");
  ASSERT_NE(axes, nullptr);
  ASSERT_EQ(axes->get<ir::Attribute::Array>()->size(), 1u);
  const ir::Function* main = m.EntryFunction();
  ASSERT_NE(main, nullptr);
  EXPECT_NE(ir::FindAttr(main->argument_attrs[0], "sdy.sharding"), nullptr);
  EXPECT_EQ(ir::FindAttr(m.attrs, "mhlo.num_partitions")->AsInt(), 2);
}

TEST(ReadModuleTest, LocationsCarryJaxNameStacks) {
  auto module = ReadModule(ReadFile(TestData() / "programs" / "add_i32.1_13_7.mlirbc"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation& add = (*module)->functions[0].body.blocks[0].ops[0];
  ASSERT_NE(add.location, 0u);
  const ir::Location& loc = (*module)->locations[add.location];
  EXPECT_EQ(loc.name, "jit(add_i32)/add");
  EXPECT_NE(loc.file.find("generate_programs.py"), std::string::npos);
  EXPECT_GT(loc.line, 0);
}

TEST(ReadModuleTest, VersionBoundsAreReported) {
  std::string bytes = ReadFile(TestData() / "programs" / "add_i32.1_13_7.mlirbc");
  std::string producer = "StableHLO_v1.13.7";
  size_t at = bytes.find(producer);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, producer.size(), "StableHLO_v9.99.9");
  auto module = ReadModule(bytes);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("9.99.9"), std::string::npos);
  EXPECT_NE(module.status().message().find(kMinimumVersion.ToString()), std::string::npos);
  EXPECT_NE(module.status().message().find(kCurrentVersion.ToString()), std::string::npos);
}

TEST(ReadModuleTest, UnknownOpsAreNamed) {
  std::string bytes = ReadFile(TestData() / "programs" / "add_i32.1_13_7.mlirbc");
  size_t at = bytes.find("add_v1");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 6, "add_v9");
  auto module = ReadModule(bytes);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(module.status().message().find("vhlo.add_v9"), std::string::npos)
      << module.status().message();
  EXPECT_NE(module.status().message().find("@main"), std::string::npos);
}

TEST(ReadModuleTest, PlainBytecodeIsRejected) {
  std::string bytes = ReadFile(TestData() / "programs" / "add_i32.1_13_7.mlirbc");
  size_t at = bytes.find("vhlo");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 4, "chlo");
  auto module = ReadModule(bytes);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("not a VHLO portable artifact"), std::string::npos)
      << module.status().message();
}

TEST(ReadModuleTest, FilesThatCannotBeOpenedAreNotFound) {
  auto module = ReadModuleFromFile("/nonexistent/program.mlirbc");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace stablert::stablehlo
