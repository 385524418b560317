// The MLIR text reader (text_parser.h): programs in the pretty and generic forms, the IR
// they import to, and every error path with its line:column message.
#include "stablehlo/text_parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/read_module.h"
#include "stablehlo/text_lexer.h"

namespace stablert::stablehlo {
namespace {

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<ir::Module>> module = ParseModuleText(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  Status verified = ir::Verify(**module);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  return std::move(module).value();
}

std::string Printed(const std::string& text, bool locations = false) {
  std::unique_ptr<ir::Module> module = Parse(text);
  if (!module) return "";
  ir::PrintOptions options;
  options.locations = locations;
  return ir::PrintModule(*module, options);
}

std::string Error(const std::string& text) {
  StatusOr<std::unique_ptr<ir::Module>> module = ParseModuleText(text);
  if (module.ok()) return "ok";
  return module.status().ToString();
}

constexpr char kAdd[] = R"(module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
)";

// Types spelled the same are read once (text_parser_impl.h); other spellings of one type,
// location aliases by number and by name, and errors after cached types must read as before.
TEST(TextParser, CachedTypesAliasesAndNamesReadAsSpelled) {
  const std::string text = R"(#loc1 = loc("a.py":1:2)
#loc01 = loc("b.py":3:4)
module {
  func.func @main(%arg0: tensor<2x3xf32>, %cst_1: tensor< 2x3xf32 >) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
    %0 = stablehlo.add %arg0, %cst_1 : tensor<2x3xf32> loc(#loc1)
    %1 = stablehlo.multiply %0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc1)
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32> loc(#loc01)
    %3 = stablehlo.add %1, %cst_1 : tensor<2x3xf32> loc(#loc01)
    return %3, %2 : tensor<2x3xf32>, tensor<3x2xf32>
  }
}
)";
  std::unique_ptr<ir::Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  const ir::Block& body = module->functions[0].body.blocks[0];
  ASSERT_EQ(body.ops.size(), 5u);
  EXPECT_EQ(module->type_of(body.ops[2].results[0]), ir::Type::Tensor(DType::kF32, {3, 2}));
  EXPECT_EQ(module->type_of(body.ops[3].results[0]), ir::Type::Tensor(DType::kF32, {2, 3}));
  EXPECT_EQ(body.ops[0].location, body.ops[1].location);
  EXPECT_EQ(body.ops[2].location, body.ops[3].location);
  EXPECT_NE(body.ops[0].location, body.ops[2].location);
  EXPECT_EQ(module->locations[body.ops[2].location].file, "b.py");
  // After types read from the cache: a dynamic size and a malformed element type keep their
  // line:column.
  EXPECT_EQ(Error("module {\n  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "    %0 = stablehlo.abs %a : tensor<?xf32>\n    return %0 : tensor<2xf32>\n  }\n}"),
            "UNIMPLEMENTED: MLIR text 3:29: dynamic shapes ('?' dimensions) are not supported");
  EXPECT_EQ(Error("module {\n  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "    %0 = stablehlo.abs %a : tensor<2xf33>\n    return %0 : tensor<2xf32>\n  }\n}"),
            "INVALID_ARGUMENT: MLIR text 3:38: expected a type, found an identifier 'f33>'");
}

TEST(TextLexer, TokensAndPositions) {
  Lexer lex("%0 = \"x\\22y\" : tensor<4x?xf32> -> @f #loc1 // comment\n 1.5e+03 -2 0x1F");
  EXPECT_EQ(lex.Next().kind, TokenKind::kPercentId);
  EXPECT_EQ(lex.Next().kind, TokenKind::kEqual);
  Token s = lex.Next();
  ASSERT_EQ(s.kind, TokenKind::kString);
  std::string unescaped;
  ASSERT_TRUE(UnescapeString(s.text, &unescaped));
  EXPECT_EQ(unescaped, "x\"y");
  EXPECT_EQ(lex.Next().kind, TokenKind::kColon);
  EXPECT_EQ(lex.Next().text, "tensor");
  EXPECT_EQ(lex.Next().kind, TokenKind::kLess);
  std::vector<int64_t> dims;
  size_t bad;
  ASSERT_TRUE(lex.LexDimensions(&dims, &bad));
  EXPECT_EQ(dims, (std::vector<int64_t>{4, -1}));
  EXPECT_EQ(lex.Next().text, "f32");
  EXPECT_EQ(lex.Next().kind, TokenKind::kGreater);
  EXPECT_EQ(lex.Next().kind, TokenKind::kArrow);
  Token at = lex.Next();
  EXPECT_EQ(at.kind, TokenKind::kAtId);
  EXPECT_EQ(at.text, "f");
  EXPECT_EQ(lex.Next().kind, TokenKind::kHashId);
  Token f = lex.Next();
  EXPECT_EQ(f.kind, TokenKind::kFloat);
  EXPECT_EQ(lex.LineColumn(f.offset), "2:2");
  EXPECT_EQ(lex.Next().text, "-2");
  Token hex = lex.Next();
  EXPECT_EQ(hex.kind, TokenKind::kInteger);
  EXPECT_EQ(hex.text, "0x1F");
  EXPECT_EQ(lex.Next().kind, TokenKind::kEof);
}

TEST(TextParser, PrettyAdd) {
  EXPECT_EQ(Printed(kAdd),
            "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
            "  func.func public @main(%0: tensor<2xf32>, %1: tensor<2xf32>) -> (tensor<2xf32> "
            "{jax.result_info = \"result\"}) {\n"
            "    %2 = stablehlo.add %0, %1 : tensor<2xf32>\n"
            "    stablehlo.return %2 : tensor<2xf32>\n"
            "  }\n"
            "}\n");
}

TEST(TextParser, ReadModuleDispatchesOnContent) {
  StatusOr<std::unique_ptr<ir::Module>> module = ReadModule(kAdd);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ((*module)->name, "jit_f");
  EXPECT_FALSE(IsBytecode(kAdd));
  EXPECT_TRUE(IsBytecode(std::string("ML\xEFR", 4)));
  EXPECT_TRUE(IsBytecode("ML"));  // truncated bytecode: its error names the magic bytes
  EXPECT_FALSE(IsBytecode("MLIR"));
}

TEST(TextParser, GenericFormMatchesPrettyForm) {
  constexpr char kGeneric[] = R"("builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
)";
  EXPECT_EQ(Printed(kGeneric), Printed(kAdd));
}

TEST(TextParser, DenseLiterals) {
  std::string text = R"(module {
  func.func @main() -> (tensor<2x2xf32>, tensor<3xi1>, tensor<2xcomplex<f32>>, tensor<f32>, tensor<2xi8>, tensor<1024x1024xf32>, tensor<2xbf16>) {
    %c = stablehlo.constant dense<[[1.000000e+00, 2.0], [3.0, -4.5]]> : tensor<2x2xf32>
    %b = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
    %z = stablehlo.constant dense<[(1.000000e+00,2.000000e+00), (0.0,-3.0)]> : tensor<2xcomplex<f32>>
    %n = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %h = stablehlo.constant dense<"0x01FF"> : tensor<2xi8>
    %s = stablehlo.constant dense<1.000000e+00> : tensor<1024x1024xf32>
    %f = stablehlo.constant dense<[1.0, 3.140625]> : tensor<2xbf16>
    return %c, %b, %z, %n, %h, %s, %f : tensor<2x2xf32>, tensor<3xi1>, tensor<2xcomplex<f32>>, tensor<f32>, tensor<2xi8>, tensor<1024x1024xf32>, tensor<2xbf16>
  }
})";
  std::unique_ptr<ir::Module> module = Parse(text);
  ASSERT_TRUE(module);
  const auto& ops = module->functions[0].body.blocks[0].ops;
  auto data = [&](size_t i) { return *ops[i].attr("value")->get<ir::Attribute::Elements>(); };
  const float expected[] = {1, 2, 3, -4.5f};
  ASSERT_EQ(data(0)->bytes.size(), 16u);
  EXPECT_EQ(std::memcmp(data(0)->bytes.data(), expected, 16), 0);
  EXPECT_EQ(data(1)->bytes, (std::vector<uint8_t>{1, 0, 1}));
  const float complex[] = {1, 2, 0, -3};
  EXPECT_EQ(std::memcmp(data(2)->bytes.data(), complex, 16), 0);
  EXPECT_EQ(data(3)->bytes, (std::vector<uint8_t>{0x00, 0x00, 0xC0, 0x7F}));
  EXPECT_EQ(data(4)->bytes, (std::vector<uint8_t>{0x01, 0xFF}));
  EXPECT_TRUE(data(5)->splat);  // large splats stay one element
  EXPECT_EQ(data(5)->bytes.size(), 4u);
  EXPECT_EQ(data(6)->bytes, (std::vector<uint8_t>{0x80, 0x3F, 0x49, 0x40}));
}

TEST(TextParser, RegionsLocationsAndAliases) {
  std::string text = R"(#loc1 = loc("x")
module @m {
  func.func public @main(%arg0: tensor<4xf32> loc("x"), %arg1: tensor<i32>) -> tensor<f32> {
    %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc3)
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>
    cond {
      %1 = stablehlo.compare  LT, %iterArg, %arg1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.multiply %iterArg_0, %iterArg_0 : tensor<4xf32>
      stablehlo.return %iterArg, %1 : tensor<i32>, tensor<4xf32>
    } loc(#loc4)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%0#1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %2 : tensor<f32>
  } loc(#loc1)
}
#loc2 = loc("f.py":3:4)
#loc3 = loc("jit(f)/const"(#loc2))
#loc4 = loc(callsite(#loc3 at #loc1))
)";
  std::string printed = Printed(text, /*locations=*/true);
  EXPECT_NE(printed.find("%2 = stablehlo.constant {value = dense<0> : tensor<i32>} : tensor<i32> loc(\"jit(f)/const at f.py:3:4\")"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("%3, %4 = stablehlo.while"), std::string::npos) << printed;
  EXPECT_NE(printed.find("^bb0(%5: tensor<i32>, %6: tensor<4xf32>)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("comparison_direction = #stablehlo<comparison_direction LT>"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("%12 = stablehlo.reduce %4, %11"), std::string::npos) << printed;
}

// Location aliases used before their definition, nested in other aliases (callsite, name,
// fused, an alias of an alias, a name that is not `locN`), and inline: equal locations share
// one id, and aliases used only inside others add no location of their own.
TEST(TextParser, LocationAliasesResolveOnceAndEqualLocationsShareAnId) {
  std::string text = R"(module {
  func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc5)
    %1 = stablehlo.transpose %0, dims = [0, 1] : (tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc2)
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("g"("f.py":3:4))
    %3 = stablehlo.add %2, %2 : tensor<2x2xf32> loc(#named)
    %4 = stablehlo.add %3, %3 : tensor<2x2xf32> loc(#loc6)
    return %4 : tensor<2x2xf32>
  }
}
#loc1 = loc("f.py":3:4)
#loc2 = loc("g"(#loc1))
#loc3 = loc("h\"q")
#loc5 = loc(callsite(#loc2 at #loc3))
#named = loc(fused[#loc3, #loc1])
#loc6 = loc(#loc2)
)";
  StatusOr<std::unique_ptr<ir::Module>> module = ParseModuleText(text);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Module& m = **module;
  const auto& ops = m.functions[0].body.blocks[0].ops;
  ASSERT_EQ(ops.size(), 6u);
  ASSERT_NE(ops[0].location, 0u);
  EXPECT_EQ(ops[1].location, ops[0].location);
  EXPECT_EQ(ops[2].location, ops[0].location);
  EXPECT_EQ(ops[4].location, ops[0].location);
  const ir::Location& g = m.locations[ops[0].location];
  EXPECT_EQ(g.name, "g");
  EXPECT_EQ(g.file, "f.py");
  EXPECT_EQ(g.line, 3);
  EXPECT_EQ(g.column, 4);
  const ir::Location& fused = m.locations[ops[3].location];
  EXPECT_EQ(fused.name, "h\"q");
  EXPECT_EQ(fused.file, "f.py");
  EXPECT_EQ(fused.line, 3);
  EXPECT_EQ(m.locations.size(), 3u);  // unknown, g, h"q
  // Equal integer lists read equal, different ones apart.
  EXPECT_EQ(ops[0].attr("permutation")->AsIntArray(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ops[1].attr("permutation")->AsIntArray(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ops[2].attr("permutation")->AsIntArray(), (std::vector<int64_t>{1, 0}));

  StatusOr<std::unique_ptr<ir::Module>> undefined = ParseModuleText(R"(module {
  func.func @main(%a: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32> loc(#loc9)
  }
}
#loc1 = loc("a"(#loc7))
)");
  ASSERT_FALSE(undefined.ok());
  EXPECT_NE(undefined.status().message().find("3:33: undefined location alias '#loc9'"), std::string::npos)
      << undefined.status().ToString();
}

TEST(TextParser, PrettyOpForms) {
  std::string text = R"(module {
  func.func @main(%a: tensor<4x4xf32>, %i: tensor<2x1xi32>) -> (tensor<4x4xf32>) {
    %0 = stablehlo.dot_general %a, %a, batching_dims = [] x [], contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = stablehlo.slice %1 [0:2, 1:4:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %4 = stablehlo.iota dim = 0 : tensor<4x4xf32>
    %5 = stablehlo.concatenate %2, %2, dim = 0 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
    %6 = stablehlo.pad %5, %5, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
    %7 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<4x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
    %8 = stablehlo.convolution(%a, %a) dim_numbers = [0, 1]x[0, 1]->[0, 1], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %9 = stablehlo.custom_call @foo(%a) {has_side_effect = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %10 = stablehlo.select %4, %a, %9 : tensor<4x4xf32>, tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
})";
  StatusOr<std::unique_ptr<ir::Module>> module = ParseModuleText(text);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const auto& ops = (*module)->functions[0].body.blocks[0].ops;
  ASSERT_EQ(ops.size(), 12u);
  EXPECT_EQ(ops[0].attr("lhs_contracting_dimensions")->AsIntArray(), std::vector<int64_t>{1});
  EXPECT_EQ(ops[0].attr("rhs_batching_dimensions")->AsIntArray(), std::vector<int64_t>{});
  EXPECT_EQ(ops[1].attr("permutation")->AsIntArray(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ops[2].attr("strides")->AsIntArray(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ops[4].attr("iota_dimension")->AsInt(), 0);
  EXPECT_EQ(ops[6].attr("edge_padding_low")->AsIntArray(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ops[7].attr("index_vector_dim")->AsInt(), 1);
  EXPECT_EQ(ops[7].attr("operand_batching_dims")->AsIntArray(), std::vector<int64_t>{});
  EXPECT_EQ(ops[7].attr("indices_are_sorted")->AsBool(), false);
  EXPECT_EQ(ops[8].attr("input_spatial_dimensions")->AsIntArray(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ops[8].attr("input_batch_dimension")->AsInt(), -1);
  EXPECT_EQ(ops[8].attr("lhs_dilation")->AsIntArray(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(ops[9].attr("call_target_name")->AsString(), "foo");
  EXPECT_EQ(ops[9].attr("api_version")->get<ir::EnumValue>()->value, 1);
}

struct ErrorCase {
  const char* text;
  const char* message;
};

TEST(TextParser, ErrorsNameLineColumnAndExpectation) {
  const ErrorCase cases[] = {
      {"module {\n  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n    return %b : tensor<2xf32>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:12: use of undefined value '%b'"},
      {"module {\n  func.func @main(%a: tensor<2xf32) -> tensor<2xf32> {\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 2:35: expected '>' to end the tensor type, found ')'"},
      {"module {\n  func.func @main() -> tensor<2xf32> {\n    %0 = stablehlo.constant dense<[1.0]> : tensor<2xf32>\n"
       "    return %0 : tensor<2xf32>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:35: dense literal has 1 elements in dimension 0, the type has 2"},
      {"module {\n  func.func @main() -> tensor<f32> {\n    %0 = stablehlo.constant dense<1.0 : tensor<f32>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:34: unterminated dense literal (expected '>')"},
      {"module {\n  func.func @main(%a: tensor<?xf32>) {\n  }\n}",
       "UNIMPLEMENTED: MLIR text 2:23: dynamic shapes ('?' dimensions) are not supported"},
      {"module {\n  func.func @main(%a: tensor<complex<f32>>) -> tensor<complex<f32>> {\n"
       "    %0 = chlo.erf %a : tensor<complex<f32>> -> tensor<complex<f32>>\n  }\n}",
       "UNIMPLEMENTED: MLIR text 3:5: CHLO op 'chlo.erf' on tensor<complex<f32>> is not supported"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    %0 = stablehlo.compare  XX, %a, %a : "
       "(tensor<f32>, tensor<f32>) -> tensor<i1>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:29: expected a comparison direction, found 'XX'"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    return %a : tensor<f32> loc(#loc9)\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:33: undefined location alias '#loc9'"},
      {"#loc1 = loc(#loc1)\nmodule {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    return %a : tensor<f32> "
       "loc(#loc1)\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 1:13: location alias '#loc1' refers to itself"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    %0 = \"stablehlo.foo\"(%a) : (tensor<f32>) -> "
       "tensor<f32>\n  }\n}",
       "UNIMPLEMENTED: MLIR text 3:5: operation 'stablehlo.foo' is not supported"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    %0 = \"stablehlo.add\"(%a, %a) : "
       "(tensor<f32>) -> tensor<f32>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:5: stablehlo.add has 2 operands but 1 operand types"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    %0:2 = stablehlo.add %a, %a : tensor<f32>\n"
       "    return %0 : tensor<f32>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 4:12: value '%0' names 2 results: expected '#N' after it"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    %0 = stablehlo.add %a, %a : tensor<f32>\n",
       "INVALID_ARGUMENT: MLIR text 4:1: expected '}' to close the region, found end of input"},
      {"module {\n  func.func @main() -> tensor<2xi8> {\n    %0 = stablehlo.constant dense<\"0x01F\"> : tensor<2xi8>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:35: expected a hex string \"0x...\" in the dense literal"},
      {"module {\n  func.func @main() -> tensor<i8> {\n    %0 = stablehlo.constant dense<99999999999999999999> : "
       "tensor<i8>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:35: integer out of range"},
      {"module {\n  func.func @main(%a: tensor<f32>) -> tensor<f32> {\n    %0 = \"stablehlo.add\"(%a, %a) {x = \"\\q\"} "
       ": (tensor<f32>, tensor<f32>) -> tensor<f32>\n  }\n}",
       "INVALID_ARGUMENT: MLIR text 3:39: malformed escape in string"},
      {" \n", "INVALID_ARGUMENT: MLIR text holds no module"},
      {"ML", "INVALID_ARGUMENT: MLIR text 1:1: expected func.func, sdy.mesh or '}', found an identifier 'ML'"},
      {"module {} module {}", "INVALID_ARGUMENT: MLIR text 1:11: a second top-level module"},
      {"module { \x01 }", "INVALID_ARGUMENT: MLIR text 1:10: expected func.func, sdy.mesh or '}', found an unexpected character"},
  };
  for (const ErrorCase& c : cases) {
    std::string error = Error(c.text);
    EXPECT_EQ(error.substr(0, std::string(c.message).size()), c.message) << c.text;
  }
}

TEST(TextParser, DeepNestingIsAnErrorNotACrash) {
  std::string text = "module {\n  func.func @main() -> tensor<f32> {\n    %0 = \"stablehlo.add\"() {x = ";
  for (int i = 0; i < 100000; ++i) text += "[";
  std::string error = Error(text);
  EXPECT_NE(error.find("nested too deeply"), std::string::npos) << error;
  std::string types = "module {\n  func.func @main(%a: ";
  for (int i = 0; i < 100000; ++i) types += "tuple<";
  error = Error(types);
  EXPECT_NE(error.find("nested too deeply"), std::string::npos) << error;
}

TEST(TextParser, LargeConstantIsLinear) {
  // 4M f32 elements as a decimal list: a quadratic reader would take minutes.
  const int64_t n = int64_t{1} << 22;
  std::string text = "module {\n  func.func @main() -> tensor<" + std::to_string(n) +
                     "xf32> {\n    %0 = stablehlo.constant dense<[";
  text.reserve(static_cast<size_t>(n) * 5 + 200);
  for (int64_t i = 0; i < n; ++i) text += i ? ", 1.5" : "1.5";
  text += "]> : tensor<" + std::to_string(n) + "xf32>\n    return %0 : tensor<" + std::to_string(n) +
          "xf32>\n  }\n}\n";
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<ir::Module> module = Parse(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(module);
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace stablert::stablehlo
