// CHLO expansion (chlo_expand.h) through the text reader: the StableHLO ops each CHLO op
// becomes, result binding, locations, and the errors for ops and types without an
// expansion. The numbers are checked against JAX in tests/jax/test_mlir_text.py.
#include "stablehlo/chlo_expand.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/text_parser.h"

namespace stablert::stablehlo {
namespace {

// A one-function module with `body` (ops and a return) over `args`.
std::string Module(const std::string& args, const std::string& results, const std::string& body) {
  return "module {\n  func.func @main(" + args + ") -> (" + results + ") {\n" + body + "\n  }\n}\n";
}

StatusOr<std::string> Printed(const std::string& text, bool locations = false) {
  STABLERT_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, ParseModuleText(text));
  STABLERT_RETURN_IF_ERROR(ir::Verify(*module));
  ir::PrintOptions options;
  options.locations = locations;
  return ir::PrintModule(*module, options);
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

TEST(ChloExpand, TopKIsIotaStableSortAndSlicesBoundAsAGroup) {
  StatusOr<std::string> printed = Printed(Module(
      "%x: tensor<4x10xf32>", "tensor<4x3xf32>, tensor<4x3xi32>",
      "    %r:2 = chlo.top_k(%x, k = 3) : tensor<4x10xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)\n"
      "    return %r#0, %r#1 : tensor<4x3xf32>, tensor<4x3xi32>"));
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_EQ(Count(*printed, "stablehlo.iota {iota_dimension = 1 : i64} : tensor<4x10xi32>"), 1u)
      << *printed;
  EXPECT_EQ(Count(*printed, "stablehlo.sort"), 1u);
  EXPECT_NE(printed->find("is_stable = true"), std::string::npos);
  EXPECT_NE(printed->find("comparison_type TOTALORDER"), std::string::npos);
  EXPECT_NE(printed->find("comparison_direction GT"), std::string::npos);
  EXPECT_EQ(Count(*printed, "stablehlo.slice"), 2u);
  EXPECT_NE(printed->find("limit_indices = dense<[4, 3]>"), std::string::npos);
}

TEST(ChloExpand, GenericTopKReadsItsProperty) {
  StatusOr<std::string> printed =
      Printed(Module("%x: tensor<10xf32>", "tensor<2xf32>, tensor<2xi32>",
                     "    %v, %i = \"chlo.top_k\"(%x) <{k = 2 : i64}> : (tensor<10xf32>) -> "
                     "(tensor<2xf32>, tensor<2xi32>)\n"
                     "    return %v, %i : tensor<2xf32>, tensor<2xi32>"));
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_NE(printed->find("limit_indices = dense<[2]>"), std::string::npos) << *printed;
}

TEST(ChloExpand, BroadcastBinaryUsesBroadcastDimensionsOrTrailingAlignment) {
  StatusOr<std::string> printed = Printed(
      Module("%x: tensor<4x3xf32>, %c: tensor<4xf32>, %r: tensor<1x3xf32>",
             "tensor<4x3xf32>, tensor<4x3xf32>",
             "    %0 = chlo.broadcast_subtract %x, %c {broadcast_dimensions = array<i64: 0>} : "
             "(tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>\n"
             "    %1 = chlo.broadcast_power %r, %x : (tensor<1x3xf32>, tensor<4x3xf32>) -> "
             "tensor<4x3xf32>\n"
             "    return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>"));
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_NE(printed->find("broadcast_dimensions = dense<[0]> : tensor<1xi64>} : (tensor<4xf32>) -> "
                          "tensor<4x3xf32>"),
            std::string::npos)
      << *printed;
  EXPECT_NE(
      printed->find("broadcast_dimensions = dense<[0, 1]> : tensor<2xi64>} : (tensor<1x3xf32>)"),
      std::string::npos)
      << *printed;
  EXPECT_EQ(Count(*printed, "stablehlo.broadcast_in_dim"), 2u);  // %x itself is not broadcast
  EXPECT_EQ(Count(*printed, "stablehlo.subtract"), 1u);
  EXPECT_EQ(Count(*printed, "stablehlo.power"), 1u);
}

TEST(ChloExpand, HalfPrecisionMathRunsInF32) {
  StatusOr<std::string> printed = Printed(Module("%x: tensor<8xbf16>", "tensor<8xbf16>",
                                                 "    %0 = chlo.lgamma %x : tensor<8xbf16> -> "
                                                 "tensor<8xbf16>\n    return %0 : tensor<8xbf16>"));
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_NE(printed->find("(tensor<8xbf16>) -> tensor<8xf32>"), std::string::npos) << *printed;
  EXPECT_NE(printed->find("(tensor<8xf32>) -> tensor<8xbf16>"), std::string::npos) << *printed;
}

TEST(ChloExpand, EveryUnaryMathOpVerifiesForEachFloatType) {
  for (const char* op :
       {"erf", "erfc", "erf_inv", "lgamma", "digamma", "sinh", "cosh", "tan", "atan", "asin",
        "acos", "asinh", "acosh", "atanh", "square", "bessel_i1e", "conj"}) {
    for (const char* t : {"f16", "bf16", "f32", "f64"}) {
      const std::string type = std::string("tensor<3x") + t + ">";
      StatusOr<std::string> printed =
          Printed(Module("%x: " + type, type,
                         "    %0 = chlo." + std::string(op) + " %x : " + type + " -> " + type +
                             "\n    return %0 : " + type));
      EXPECT_TRUE(printed.ok()) << op << " " << t << ": " << printed.status().ToString();
    }
  }
  for (const char* op : {"next_after", "zeta", "polygamma"}) {
    for (const char* t : {"f16", "bf16", "f32", "f64"}) {
      const std::string type = std::string("tensor<3x") + t + ">";
      StatusOr<std::string> printed =
          Printed(Module("%x: " + type + ", %y: " + type, type,
                         "    %0 = chlo." + std::string(op) + " %x, %y : " + type + ", " + type +
                             " -> " + type + "\n    return %0 : " + type));
      EXPECT_TRUE(printed.ok()) << op << " " << t << ": " << printed.status().ToString();
    }
  }
}

TEST(ChloExpand, ExpansionCarriesTheOpLocation) {
  StatusOr<std::string> printed = Printed(
      Module("%x: tensor<2xf32>", "tensor<2xi1>",
             "    %0 = chlo.is_neg_inf %x : tensor<2xf32> -> tensor<2xi1> loc(\"f.py\":7:3)\n"
             "    return %0 : tensor<2xi1>"),
      /*locations=*/true);
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  EXPECT_EQ(Count(*printed, "f.py"), 2u) << *printed;  // the constant and the compare
}

TEST(ChloExpand, ComplexInverseTrigonometricOpsExpandAndVerify) {
  for (const char* op : {"asin", "acos", "atan", "asinh", "acosh", "atanh", "sinh", "cosh"}) {
    for (const char* t : {"complex<f32>", "complex<f64>"}) {
      const std::string type = std::string("tensor<3x") + t + ">";
      StatusOr<std::string> printed =
          Printed(Module("%x: " + type, type,
                         "    %0 = chlo." + std::string(op) + " %x : " + type + " -> " + type +
                             "\n    return %0 : " + type));
      ASSERT_TRUE(printed.ok()) << op << " " << t << ": " << printed.status().ToString();
      EXPECT_EQ(printed->find("chlo."), std::string::npos) << *printed;
    }
  }
}

TEST(ChloExpand, ComplexTanIsStablehloTan) {
  for (const char* t : {"complex<f32>", "complex<f64>"}) {
    const std::string type = std::string("tensor<3x") + t + ">";
    StatusOr<std::string> printed = Printed(Module(
        "%x: " + type, type, "    %0 = chlo.tan %x : " + type + " -> " + type + "\n    return %0 : " + type));
    ASSERT_TRUE(printed.ok()) << t << ": " << printed.status().ToString();
    EXPECT_EQ(printed->find("chlo."), std::string::npos) << *printed;
    EXPECT_EQ(Count(*printed, "stablehlo.tan"), 1u) << *printed;
  }
}

TEST(ChloExpand, MulhiVerifiesForEachIntegerType) {
  for (const char* t : {"i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"}) {
    const std::string type = std::string("tensor<3x") + t + ">";
    StatusOr<std::string> printed = Printed(Module("%x: " + type + ", %y: " + type, type,
                                                   "    %0 = chlo.mulhi %x, %y : " + type + ", " + type + " -> " +
                                                       type + "\n    return %0 : " + type));
    ASSERT_TRUE(printed.ok()) << t << ": " << printed.status().ToString();
    EXPECT_EQ(printed->find("chlo."), std::string::npos) << *printed;
  }
}

TEST(ChloExpand, ErrorsNameTheOpAndPosition) {
  struct Case {
    std::string text, error;
  };
  const Case cases[] = {
      {Module(
           "%x: tensor<4xf32>", "tensor<5xf32>, tensor<5xi32>",
           "    %v, %i = chlo.top_k(%x, k = 5) : tensor<4xf32> -> (tensor<5xf32>, tensor<5xi32>)"),
       "INVALID_ARGUMENT: MLIR text 3:5: chlo.top_k: k = 5 is out of range for tensor<4xf32>"},
      {Module("%x: tensor<4xi32>", "tensor<4xi32>",
              "    %0 = chlo.erf %x : tensor<4xi32> -> tensor<4xi32>"),
       "UNIMPLEMENTED: MLIR text 3:5: CHLO op 'chlo.erf' on tensor<4xi32> is not supported"},
      {Module("%x: tensor<4xf32>", "tensor<4xf32>",
              "    %0 = chlo.mulhi %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"),
       "UNIMPLEMENTED: MLIR text 3:5: CHLO op 'chlo.mulhi' on tensor<4xf32> is not supported"},
      {Module("%x: tensor<4xf32>", "tensor<4xi1>",
              "    %0 = chlo.broadcast_compare %x, %x : (tensor<4xf32>, tensor<4xf32>) -> "
              "tensor<4xi1>"),
       "INVALID_ARGUMENT: MLIR text 3:5: chlo.broadcast_compare expects a comparison_direction "
       "(EQ, NE, GE, GT, LE, "
       "LT)"},
      {Module("%x: tensor<4xf32>", "tensor<4xf32>",
              "    %0 = chlo.erf %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"),
       "INVALID_ARGUMENT: MLIR text 3:5: chlo.erf expects 1 operand(s) and 1 result(s), got 2 and "
       "1"},
      {Module("%x: tensor<4xf32>", "tensor<4xf32>",
              "    %0 = chlo.erf %x : tensor<4xf32> -> tensor<4xf64>"),
       "INVALID_ARGUMENT: MLIR text 3:5: chlo.erf: result 0 is tensor<4xf32> but the op states "
       "tensor<4xf64>"},
      {Module("%x: tensor<4xf32>", "tensor<4xf64>", "    %0 = chlo.erf %x : tensor<4xf64> -> tensor<4xf64>"),
       "INVALID_ARGUMENT: MLIR text 3:5: chlo.erf: operand 0 is tensor<4xf32> but the op states tensor<4xf64>"},
      {Module("%x: tensor<4xf32>", "tensor<4xf32>", "    %0 = chlo.erf %x : tensor<4xf32> ->"),
       "INVALID_ARGUMENT: MLIR text 4:3: expected a type"},
  };
  for (const Case& c : cases) {
    StatusOr<std::unique_ptr<ir::Module>> module = ParseModuleText(c.text);
    ASSERT_FALSE(module.ok()) << c.text;
    EXPECT_EQ(module.status().ToString().substr(0, c.error.size()), c.error) << c.text;
  }
}

}  // namespace
}  // namespace stablert::stablehlo
