#include "ir/printer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace stablert::ir {
namespace {

Attribute F32Elements(Dims dims, std::vector<float> values) {
  auto data = std::make_shared<ElementsData>();
  data->type = Type::Tensor(DType::kF32, std::move(dims));
  data->bytes.resize(values.size() * 4);
  std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
  return Attribute(Attribute::Elements(std::move(data)));
}

TEST(AttributeToStringTest, Scalars) {
  EXPECT_EQ(AttributeToString(Attribute()), "unit");
  EXPECT_EQ(AttributeToString(Attribute(true)), "true");
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Integer{-3, DType::kS32})), "-3 : i32");
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Integer{-1, DType::kU64})),
            "18446744073709551615 : ui64");
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Float{2.0, DType::kF32})), "2.0 : f32");
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Float{0.1, DType::kF64})), "0.1 : f64");
  EXPECT_EQ(AttributeToString(Attribute(std::string("a\"b\n"))), "\"a\\\"b\\0A\"");
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Symbol{"main"})), "@main");
  EXPECT_EQ(AttributeToString(Attribute(EnumValue{EnumKind::kComparisonDirection, 5})),
            "#stablehlo<comparison_direction LT>");
  EXPECT_EQ(AttributeToString(Attribute(Type::Tensor(DType::kBF16, {2, 3}))),
            "tensor<2x3xbf16>");
}

TEST(AttributeToStringTest, Containers) {
  Attribute::Dictionary dict{{"a", Attribute(Attribute::Integer{1, DType::kS64})},
                             {"b", Attribute(Attribute::Array{Attribute(false), Attribute()})}};
  EXPECT_EQ(AttributeToString(Attribute(dict)), "{a = 1 : i64, b = [false, unit]}");
}

TEST(AttributeToStringTest, Elements) {
  EXPECT_EQ(AttributeToString(F32Elements({2, 2}, {1, 2, 3, 4.5})),
            "dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>");
  EXPECT_EQ(AttributeToString(F32Elements({3}, {7, 7, 7})), "dense<7.0> : tensor<3xf32>");
  EXPECT_EQ(AttributeToString(F32Elements({}, {-0.5})), "dense<-0.5> : tensor<f32>");
  auto half = std::make_shared<ElementsData>();
  half->type = Type::Tensor(DType::kF16, {2});
  half->bytes = {0x00, 0x3C, 0x00, 0xC0};  // 1.0, -2.0
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Elements(half))),
            "dense<[1.0, -2.0]> : tensor<2xf16>");
  auto pred = std::make_shared<ElementsData>();
  pred->type = Type::Tensor(DType::kPred, {2});
  pred->bytes = {1, 0};
  EXPECT_EQ(AttributeToString(Attribute(Attribute::Elements(pred))),
            "dense<[true, false]> : tensor<2xi1>");
}

TEST(PrintModuleTest, FunctionWithRegionAndCall) {
  Module m;
  m.name = "jit_f";
  m.attrs.emplace_back("mhlo.num_partitions", Attribute(Attribute::Integer{1, DType::kS32}));
  Type scalar = Type::Tensor(DType::kF32, {});
  Type vec = Type::Tensor(DType::kF32, {4});
  Function f;
  f.name = "main";
  f.argument_types = {vec};
  f.result_types = {scalar};
  f.argument_attrs.resize(1);
  f.result_attrs.resize(1);
  Block entry;
  ValueId arg = m.AddValue(vec);
  entry.arguments = {arg};
  Operation constant;
  constant.code = OpCode::kConstant;
  constant.results = {m.AddValue(scalar)};
  constant.attrs.emplace_back("value", F32Elements({}, {0}));
  Operation reduce;
  reduce.code = OpCode::kReduce;
  reduce.operands = {arg, constant.results[0]};
  reduce.results = {m.AddValue(scalar)};
  reduce.attrs.emplace_back("dimensions", Attribute(Type::Tensor(DType::kS64, {1})));
  Block body;
  body.arguments = {m.AddValue(scalar), m.AddValue(scalar)};
  Operation add;
  add.code = OpCode::kAdd;
  add.operands = body.arguments;
  add.results = {m.AddValue(scalar)};
  Operation inner_return;
  inner_return.code = OpCode::kReturn;
  inner_return.operands = add.results;
  body.ops = {add, inner_return};
  reduce.regions.resize(1);
  reduce.regions[0].blocks.push_back(body);
  Operation ret;
  ret.code = OpCode::kReturn;
  ret.operands = reduce.results;
  entry.ops = {constant, reduce, ret};
  f.body.blocks.push_back(entry);
  m.functions.push_back(f);
  EXPECT_EQ(PrintModule(m),
            "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n"
            "  func.func public @main(%0: tensor<4xf32>) -> (tensor<f32>) {\n"
            "    %1 = stablehlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>\n"
            "    %2 = stablehlo.reduce %0, %1 {dimensions = tensor<1xi64>} ({\n"
            "    ^bb0(%3: tensor<f32>, %4: tensor<f32>):\n"
            "      %5 = stablehlo.add %3, %4 : tensor<f32>\n"
            "      stablehlo.return %5 : tensor<f32>\n"
            "    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
            "    stablehlo.return %2 : tensor<f32>\n"
            "  }\n"
            "}\n");
}

TEST(PrintModuleTest, LocationsAreOptional) {
  Module m;
  m.locations.push_back(Location{"f.py", 3, 7, "jit(f)/add"});
  Function f;
  f.name = "main";
  Operation ret;
  ret.code = OpCode::kReturn;
  ret.location = 1;
  f.body.blocks.emplace_back();
  f.body.blocks[0].ops.push_back(ret);
  m.functions.push_back(f);
  PrintOptions options;
  options.locations = true;
  EXPECT_NE(PrintModule(m, options).find("loc(\"jit(f)/add at f.py:3:7\")"), std::string::npos);
  EXPECT_EQ(PrintModule(m).find("loc("), std::string::npos);
}

}  // namespace
}  // namespace stablert::ir
