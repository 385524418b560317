// The CLI's pure parts: .npy files and output comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "compare.h"
#include "npy.h"
#include "jax_export.h"
#include "program_file.h"

namespace stablert::cli {
namespace {

host::Literal F32(std::vector<int64_t> dims, std::vector<float> values) {
  host::Literal literal{PJRT_Buffer_Type_F32, std::move(dims), {}};
  literal.bytes.resize(values.size() * 4);
  std::memcpy(literal.bytes.data(), values.data(), literal.bytes.size());
  return literal;
}

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(Npy, RoundTripsEveryRankAndRejectsWhatItCannotRead) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {3}, {2, 3}, {1, 2, 2}}) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(0.5f * static_cast<float>(i) - 1.0f);
    host::Literal literal = F32(dims, values);
    std::string path = TempPath("round_trip.npy");
    ASSERT_TRUE(WriteNpy(path, literal).ok());
    StatusOr<host::Literal> read = ReadNpy(path);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->type, PJRT_Buffer_Type_F32);
    EXPECT_EQ(read->dims, dims);
    EXPECT_EQ(read->bytes, literal.bytes);
  }
  std::string bad = TempPath("bad.npy");
  std::ofstream(bad) << "not numpy";
  StatusOr<host::Literal> rejected = ReadNpy(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("not a .npy file"), std::string::npos);

  // A file whose data is shorter than its shape says.
  host::Literal literal = F32({4}, {1, 2, 3, 4});
  std::string path = TempPath("short.npy");
  ASSERT_TRUE(WriteNpy(path, literal).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  StatusOr<host::Literal> truncated = ReadNpy(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("bytes of data for shape (4,)"), std::string::npos)
      << truncated.status().ToString();
}

TEST(Npy, ReadsFortranOrderAsAColumnMajorHostArray) {
  // np.asfortranarray([[0, 1, 2], [3, 4, 5]]) holds 0 3 1 4 2 5: written here as a C-order
  // (3, 2) file of those bytes whose header is then changed to Fortran order, shape (2, 3).
  std::string path = TempPath("fortran.npy");
  ASSERT_TRUE(WriteNpy(path, F32({3, 2}, {0, 3, 1, 4, 2, 5})).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string c_order = "'fortran_order': False, 'shape': (3, 2), }";
  size_t at = bytes.find(c_order);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, c_order.size(), "'fortran_order': True, 'shape': (2, 3), } ");
  std::ofstream(path, std::ios::binary) << bytes;
  StatusOr<host::Literal> read = ReadNpy(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(read->byte_strides, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(read->bytes, F32({3, 2}, {0, 3, 1, 4, 2, 5}).bytes);
  // Written back in C order.
  ASSERT_TRUE(WriteNpy(path, *read).ok());
  StatusOr<host::Literal> c = ReadNpy(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->byte_strides.empty());
  EXPECT_EQ(c->bytes, F32({2, 3}, {0, 1, 2, 3, 4, 5}).bytes);
}

TEST(Compare, FloatsWithinToleranceIntegersExactNansAndShapes) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Comparison same = CompareLiterals(F32({3}, {1, nan, 3}), F32({3}, {1.000001f, nan, 3}), {});
  EXPECT_TRUE(same.agree) << same.detail;
  Comparison differ = CompareLiterals(F32({3}, {1, 2, 3}), F32({3}, {1, 2.01f, 3}), {});
  EXPECT_FALSE(differ.agree);
  EXPECT_EQ(differ.mismatches, 1);
  EXPECT_EQ(differ.first_mismatch, 1);
  Comparison loose = CompareLiterals(F32({3}, {1, 2, 3}), F32({3}, {1, 2.01f, 3}), Tolerance{0.1, 0.0});
  EXPECT_TRUE(loose.agree) << loose.detail;
  Comparison nan_vs_number = CompareLiterals(F32({1}, {nan}), F32({1}, {0}), {});
  EXPECT_FALSE(nan_vs_number.agree);
  Comparison shapes = CompareLiterals(F32({2}, {1, 2}), F32({1, 2}, {1, 2}), {});
  EXPECT_FALSE(shapes.agree);
  EXPECT_NE(shapes.detail.find("f32[2]"), std::string::npos) << shapes.detail;

  host::Literal a{PJRT_Buffer_Type_S32, {2}, std::vector<uint8_t>(8, 0)};
  host::Literal b = a;
  b.bytes[4] = 1;
  Comparison ints = CompareLiterals(a, b, Tolerance{1.0, 1.0});
  EXPECT_FALSE(ints.agree);  // tolerances never apply to integers
  EXPECT_EQ(ints.first_mismatch, 1);
}

TEST(Inputs, GeneratedFromTheSignatureAreFixedBySeed) {
  ProgramFile file;
  file.has_signature = true;
  file.arguments = {{PJRT_Buffer_Type_F32, {4}}, {PJRT_Buffer_Type_S32, {2, 2}}, {PJRT_Buffer_Type_BF16, {3}}};
  StatusOr<std::vector<host::Literal>> a = MakeInputs(file, {}, InputKind::kRandom, 7);
  StatusOr<std::vector<host::Literal>> b = MakeInputs(file, {}, InputKind::kRandom, 7);
  StatusOr<std::vector<host::Literal>> c = MakeInputs(file, {}, InputKind::kRandom, 8);
  StatusOr<std::vector<host::Literal>> zeros = MakeInputs(file, {}, InputKind::kZeros, 7);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && zeros.ok());
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[1].bytes.size(), 16u);
  EXPECT_EQ((*a)[2].bytes.size(), 6u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*a)[i].bytes, (*b)[i].bytes);
  EXPECT_NE((*a)[0].bytes, (*c)[0].bytes);
  for (const host::Literal& z : *zeros)
    for (uint8_t byte : z.bytes) EXPECT_EQ(byte, 0);
  // Inputs from files must match the signature.
  std::string path = TempPath("wrong_shape.npy");
  ASSERT_TRUE(WriteNpy(path, F32({5}, {1, 2, 3, 4, 5})).ok());
  file.arguments.resize(1);
  StatusOr<std::vector<host::Literal>> wrong = MakeInputs(file, {path}, InputKind::kRandom, 0);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("argument 0 of the program is f32[4]"), std::string::npos)
      << wrong.status().ToString();
  EXPECT_FALSE(ParseInputKind("ones").ok());
}

}  // namespace
}  // namespace stablert::cli

namespace stablert::cli {
namespace {

std::string ReadTestArtifact(const std::string& name) {
  std::ifstream in(std::string(STABLERT_CLI_TESTDATA_DIR) + "/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(JaxExport, ReadsModuleDevicesTypesAndShardings) {
  std::string bytes = ReadTestArtifact("sharded.jaxexport");
  ASSERT_FALSE(bytes.empty());
  ASSERT_TRUE(LooksLikeJaxExport(bytes));
  StatusOr<ExportedArtifact> a = ReadJaxExport(bytes);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->num_devices, 2);
  EXPECT_EQ(a->platforms, std::vector<std::string>{"cpu"});
  EXPECT_EQ(a->module.compare(0, 4, "ML\xefR"), 0);
  ASSERT_EQ(a->inputs.size(), 3u);
  EXPECT_EQ(a->inputs[0].type, PJRT_Buffer_Type_F32);
  EXPECT_EQ(a->inputs[0].shape, (std::vector<std::string>{"16", "32"}));
  ASSERT_EQ(a->input_shardings.size(), 3u);
  ASSERT_TRUE(a->input_shardings[0].has_value());
  EXPECT_EQ(a->input_shardings[0]->ToString(), "P('d', None) on mesh {d: 2}");
  ASSERT_TRUE(a->input_shardings[1].has_value());
  EXPECT_EQ(a->input_shardings[1]->ToString(), "P() on mesh {d: 2}");
  ASSERT_EQ(a->outputs.size(), 2u);
  EXPECT_EQ(a->outputs[1].shape, std::vector<std::string>{"16"});
  ASSERT_TRUE(a->output_shardings[1].has_value());
  EXPECT_EQ(a->output_shardings[1]->ToString(), "P('d') on mesh {d: 2}");

  // The program file: the module's signature and a row-split layout for x.
  StatusOr<ProgramFile> file = LoadProgram(bytes, "sharded.jaxexport");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->kind, "jax.export");
  EXPECT_EQ(file->num_partitions, 2);
  ASSERT_EQ(file->argument_layouts.size(), 3u);
  EXPECT_EQ(file->argument_layouts[0].local_dims, (Dims{8, 32}));
  EXPECT_EQ(file->argument_layouts[1].local_dims, (Dims{32, 8}));
  EXPECT_EQ(file->result_layouts.at(1).local_dims, Dims{8});

  StatusOr<ExportedArtifact> single = ReadJaxExport(ReadTestArtifact("single.jaxexport"));
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_EQ(single->num_devices, 1);
}

TEST(JaxExport, TruncatedOrCorruptArtifactsAreErrorsNotCrashes) {
  std::string bytes = ReadTestArtifact("sharded.jaxexport");
  ASSERT_FALSE(bytes.empty());
  for (size_t n = 0; n < bytes.size(); n += 7) {
    std::string prefix = bytes.substr(0, n);
    (void)LooksLikeJaxExport(prefix);
    StatusOr<ExportedArtifact> a = ReadJaxExport(prefix);
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << n << ": " << a.status().ToString();
    }
  }
  // Every byte flipped in turn: any outcome but a crash or a read out of bounds (ASan builds).
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string corrupt = bytes;
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0xa5);
    (void)ReadJaxExport(corrupt);
  }
  EXPECT_FALSE(LooksLikeJaxExport("ML\xefR plus bytecode"));
  EXPECT_FALSE(ReadJaxExport("short").ok());
}

TEST(Shards, CutAndReassembleAGlobalArray) {
  passes::ShardLayout layout;
  layout.local_dims = {2, 3};
  layout.starts = {{0, 0}, {0, 3}, {2, 0}, {2, 3}};
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  host::Literal global = F32({4, 6}, values);
  StatusOr<host::Literal> shard = ShardOf(global, layout, 3);
  ASSERT_TRUE(shard.ok());
  std::vector<float> got(6);
  std::memcpy(got.data(), shard->bytes.data(), 24);
  EXPECT_EQ(got, (std::vector<float>{15, 16, 17, 21, 22, 23}));
  host::Literal rebuilt = F32({4, 6}, std::vector<float>(24, -1));
  for (int p = 0; p < 4; ++p) {
    StatusOr<host::Literal> piece = ShardOf(global, layout, p);
    ASSERT_TRUE(piece.ok());
    ASSERT_TRUE(PlaceShard(*piece, layout, p, rebuilt).ok());
  }
  EXPECT_EQ(rebuilt.bytes, global.bytes);
  EXPECT_FALSE(PlaceShard(F32({3}, {1, 2, 3}), layout, 0, rebuilt).ok());
}

}  // namespace
}  // namespace stablert::cli
