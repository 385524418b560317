// Conformance against StableHLO's portable-artifact test vectors
// (stablehlo/tests/vhlo/stablehlo_legalize_to_vhlo.<version>.mlir.bc in openxla/stablehlo).
// Opt-in: set STABLERT_VHLO_VECTORS_DIR to a directory holding them. Every container must
// read, every attribute/type entry must decode or be reported Unimplemented (never
// malformed), every op property blob must be consumed exactly by the op table, and every
// function must import (or be Unimplemented) and the rest verify.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/bytecode_reader.h"
#include "stablehlo/entry_decoder.h"
#include "stablehlo/import.h"
#include "stablehlo/vhlo_ops.h"

namespace stablert::stablehlo {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Reads the property blob of `op` as one required attribute reference per name.
Status CheckProperties(const BytecodeFile& file, const RawOperation& op,
                       std::string_view names) {
  if (op.properties == kNoIndex) {
    return names.empty() ? OkStatus() : InvalidArgument("missing properties");
  }
  Cursor c(file.properties[op.properties], file.properties_offsets[op.properties], "properties");
  while (!names.empty()) {
    size_t comma = names.find(',');
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    uint64_t index;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(file.attributes.size(), &index, "property"));
  }
  return c.ExpectEnd("properties");
}

TEST(VhloVectorsTest, DecodeAndImport) {
  const char* dir = std::getenv("STABLERT_VHLO_VECTORS_DIR");
  if (!dir) GTEST_SKIP() << "StableHLO's VHLO test vectors come from its GitHub repository, which CI cannot reach; set STABLERT_VHLO_VECTORS_DIR to a checkout's stablehlo/tests/vhlo to run";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("stablehlo_legalize_to_vhlo.", 0) != 0 &&
        name.rfind("vhlo_emit_version_api.", 0) != 0) {
      continue;
    }
    SCOPED_TRACE(name);
    ++files;
    std::string bytes = ReadFile(entry.path());
    auto file = ReadBytecode(bytes);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EntryDecoder decoder(*file);
    int unimplemented = 0;
    for (uint32_t i = 0; i < file->types.size(); ++i) {
      auto type = decoder.Type(i);
      if (!type.ok()) {
        EXPECT_EQ(type.status().code(), StatusCode::kUnimplemented) << type.status().ToString();
        ++unimplemented;
      }
    }
    for (uint32_t i = 0; i < file->attributes.size(); ++i) {
      auto attr = decoder.Attribute(i);
      if (!attr.ok()) {
        EXPECT_EQ(attr.status().code(), StatusCode::kUnimplemented) << attr.status().ToString();
        ++unimplemented;
      }
    }
    std::set<std::string> unknown;
    for (const RawOperation& op : file->ops) {
      if (file->dialect_of(op) != "vhlo") continue;
      const VhloOpInfo* info = FindVhloOp(file->op_name(op));
      if (!info) {
        unknown.insert(std::string(file->op_name(op)));
        continue;
      }
      if (file->version >= 5) {
        Status status = CheckProperties(*file, op, info->properties);
        EXPECT_TRUE(status.ok()) << file->op_name(op) << ": " << status.ToString();
      }
    }
    EXPECT_TRUE(unknown.empty()) << "unknown ops, e.g. " << *unknown.begin();
    std::vector<Status> skipped;
    ImportOptions options;
    options.skipped_functions = &skipped;
    auto module = ImportModule(*file, options);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    Status verified = ir::Verify(**module);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    ir::PrintOptions print_options;
    print_options.locations = true;
    std::string text = ir::PrintModule(**module, print_options);
    EXPECT_FALSE(text.empty());
    if (std::getenv("STABLERT_VHLO_VECTORS_PRINT")) std::cout << text;
    std::cout << name << ": " << (*module)->functions.size() << " functions imported, "
              << skipped.size() << " skipped; " << unimplemented << " entries unimplemented\n";
    for (const Status& s : skipped) std::cout << "    " << s.message().substr(0, 200) << "\n";
  }
  EXPECT_GT(files, 0);
}

// Byte flips over the much larger vectors reach every attribute, type and op decoder.
TEST(VhloVectorsTest, ByteFlipsNeverCrash) {
  const char* dir = std::getenv("STABLERT_VHLO_VECTORS_DIR");
  if (!dir) GTEST_SKIP() << "StableHLO's VHLO test vectors come from its GitHub repository, which CI cannot reach; set STABLERT_VHLO_VECTORS_DIR to a checkout's stablehlo/tests/vhlo to run";
  std::mt19937 rng(5);
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".bc") continue;
    const std::string original = ReadFile(entry.path());
    for (int trial = 0; trial < 300; ++trial) {
      std::string bytes = original;
      for (int f = 0; f < 3; ++f) {
        size_t at = rng() % bytes.size();
        bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
      }
      auto file = ReadBytecode(bytes);
      if (!file.ok()) continue;
      std::vector<Status> skipped;
      ImportOptions options;
      options.skipped_functions = &skipped;
      auto module = ImportModule(*file, options);
      if (!module.ok()) continue;
      ir::Verify(**module).IgnoreError();
      ir::PrintModule(**module);
    }
  }
}

}  // namespace
}  // namespace stablert::stablehlo
