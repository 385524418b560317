#include "ir/stablehlo_text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace stablert::ir {
namespace {

Attribute I64List(std::vector<int64_t> values) {
  auto data = std::make_shared<ElementsData>();
  data->type = Type::Tensor(DType::kS64, {static_cast<int64_t>(values.size())});
  data->bytes.resize(values.size() * 8);
  std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
  return Attribute(Attribute::Elements(std::move(data)));
}

// main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> { transpose; add; return }; tests insert
// ops before the return.
Module TransposeModule() {
  Module module;
  module.name = "m";
  module.attrs.emplace_back("mhlo.num_partitions", Attribute(Attribute::Integer{2, DType::kS32}));
  Function main;
  main.name = "main";
  const Type in = Type::Tensor(DType::kF32, {2, 3}), out = Type::Tensor(DType::kF32, {3, 2});
  main.argument_types = {in};
  main.result_types = {out};
  main.argument_attrs.resize(1);
  main.result_attrs = {{{"jax.result_info", Attribute(std::string("result"))}}};
  Block& block = main.body.blocks.emplace_back();
  ValueId a = module.AddValue(in);
  block.arguments = {a};
  Operation transpose{OpCode::kTranspose, {a}, {module.AddValue(out)}, {{"permutation", I64List({1, 0})}}, {}, 0};
  Operation add{OpCode::kAdd, {transpose.results[0], transpose.results[0]}, {module.AddValue(out)}, {}, {}, 0};
  Operation ret{OpCode::kReturn, {add.results[0]}, {}, {}, {}, 0};
  block.ops = {transpose, add, ret};
  module.functions.push_back(std::move(main));
  return module;
}

TEST(StablehloTextTest, GenericOpsWithStablehloAttributes) {
  auto text = PrintStablehloText(TransposeModule());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("module @m attributes {mhlo.num_partitions = 2 : i32} {"), std::string::npos) << *text;
  EXPECT_NE(text->find("func.func public @main(%v0: tensor<2x3xf32>) -> (tensor<3x2xf32> {jax.result_info = "
                       "\"result\"})"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("%v1 = \"stablehlo.transpose\"(%v0) {permutation = array<i64: 1, 0>} : "
                       "(tensor<2x3xf32>) -> tensor<3x2xf32>"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("\"func.return\"(%v2) : (tensor<3x2xf32>) -> ()"), std::string::npos) << *text;
}

TEST(StablehloTextTest, ChannelIdsBecomeHandlesAndGroupsStayTensors) {
  Module module = TransposeModule();
  Block& block = module.functions[0].body.blocks[0];
  auto groups = std::make_shared<ElementsData>();
  groups->type = Type::Tensor(DType::kS64, {1, 2});
  const int64_t ids[2] = {0, 1};
  groups->bytes.resize(16);
  std::memcpy(groups->bytes.data(), ids, 16);
  const Type out = Type::Tensor(DType::kF32, {6, 2});
  Operation gather{OpCode::kAllGather,
                   {block.ops[1].results[0]},
                   {module.AddValue(out)},
                   {{"all_gather_dim", Attribute(Attribute::Integer{0, DType::kS64})},
                    {"channel_id", Attribute(Attribute::Integer{3, DType::kS64})},
                    {"replica_groups", Attribute(Attribute::Elements(groups))},
                    {"use_global_device_ids", Attribute(true)}},
                   {},
                   0};
  block.ops.insert(block.ops.end() - 1, gather);
  auto text = PrintStablehloText(module);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, "
                       "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}"),
            std::string::npos)
      << *text;
}

TEST(StablehloTextTest, HostTransfersKeepTheirChannelTypes) {
  // A host callback's send (device to host, 2) and recv (host to device, 3), as the reader
  // gives them: channel_id and channel_type. The text form has them in the channel handle.
  Module module = TransposeModule();
  Block& block = module.functions[0].body.blocks[0];
  Operation token{OpCode::kCreateToken, {}, {module.AddValue(Type::Token())}, {}, {}, 0};
  Operation send{OpCode::kSend,
                 {block.ops[1].results[0], token.results[0]},
                 {module.AddValue(Type::Token())},
                 {{"channel_id", Attribute(Attribute::Integer{4, DType::kS64})},
                  {"channel_type", Attribute(Attribute::Integer{2, DType::kS64})},
                  {"is_host_transfer", Attribute(true)}},
                 {},
                 0};
  Operation recv{OpCode::kRecv,
                 {send.results[0]},
                 {module.AddValue(Type::Tensor(DType::kF32, {3, 2})), module.AddValue(Type::Token())},
                 {{"channel_id", Attribute(Attribute::Integer{5, DType::kS64})},
                  {"channel_type", Attribute(Attribute::Integer{3, DType::kS64})},
                  {"is_host_transfer", Attribute(true)}},
                 {},
                 0};
  block.ops.insert(block.ops.end() - 1, {token, send, recv});
  auto text = PrintStablehloText(module);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("channel_handle = #stablehlo.channel_handle<handle = 4, type = 2>"), std::string::npos) << *text;
  EXPECT_NE(text->find("channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>"), std::string::npos) << *text;
  EXPECT_EQ(text->find("channel_type"), std::string::npos) << *text;
}

TEST(StablehloTextTest, ShardyOpsAreRefusedByName) {
  Module module = TransposeModule();
  Block& block = module.functions[0].body.blocks[0];
  Operation constraint{OpCode::kSdyShardingConstraint,
                       {block.ops[1].results[0]},
                       {module.AddValue(Type::Tensor(DType::kF32, {3, 2}))},
                       {},
                       {},
                       0};
  block.ops.insert(block.ops.end() - 1, constraint);
  auto text = PrintStablehloText(module);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(text.status().ToString().find("sdy.sharding_constraint"), std::string::npos) << text.status().ToString();
}

}  // namespace
}  // namespace stablert::ir
