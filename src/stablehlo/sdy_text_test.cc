#include "stablehlo/sdy_text.h"

#include <gtest/gtest.h>

#include <random>

namespace stablert::stablehlo {
namespace {

std::string Parse(std::string_view text) {
  auto attr = ParseSdyText(text);
  if (!attr.ok()) return "error: " + std::string(attr.status().message());
  return ir::AttributeToString(*attr);
}

TEST(SdyTextTest, Meshes) {
  EXPECT_EQ(Parse("#sdy.mesh<[\"x\"=2, \"y\"=4]>"),
            "{axes = [{name = \"x\", size = 2 : i64}, {name = \"y\", size = 4 : i64}], "
            "device_ids = dense<[]> : tensor<0xi64>}");
  EXPECT_EQ(Parse("#sdy.mesh<[\"a\"=2], device_ids=[1, 0]>"),
            "{axes = [{name = \"a\", size = 2 : i64}], device_ids = dense<[1, 0]> : "
            "tensor<2xi64>}");
  EXPECT_EQ(Parse("#sdy.mesh<device_ids=[0]>"),
            "{axes = [], device_ids = dense<[0]> : tensor<1xi64>}");
  EXPECT_EQ(Parse("{mesh = #sdy.mesh<[\"x\"=2]>, \"other mesh\" = #sdy.mesh<[]>}"),
            "{mesh = {axes = [{name = \"x\", size = 2 : i64}], device_ids = dense<[]> : "
            "tensor<0xi64>}, other mesh = {axes = [], device_ids = dense<[]> : tensor<0xi64>}}");
}

TEST(SdyTextTest, Shardings) {
  EXPECT_EQ(Parse("#sdy.sharding<@mesh, [{\"x\"}, {}]>"),
            "{mesh = @mesh, dim_shardings = [{axes = [{name = \"x\"}], is_closed = true}, "
            "{axes = [], is_closed = true}], replicated_axes = [], unreduced_axes = []}");
  EXPECT_EQ(Parse("#sdy.sharding<@m, [{\"x\":(2)4, ?}p1, {?}], replicated={\"y\"}>"),
            "{mesh = @m, dim_shardings = [{axes = [{name = \"x\", sub_axis_info = {pre_size = "
            "2 : i64, size = 4 : i64}}], is_closed = false, priority = 1 : i64}, {axes = [], "
            "is_closed = false}], replicated_axes = [{name = \"y\"}], unreduced_axes = []}");
  EXPECT_EQ(Parse("#sdy.sharding_per_value<[<@mesh, []>, <mesh<[\"x\"=2]>, [{}]>]>"),
            "[{mesh = @mesh, dim_shardings = [], replicated_axes = [], unreduced_axes = []}, "
            "{mesh = {axes = [{name = \"x\", size = 2 : i64}], device_ids = dense<[]> : "
            "tensor<0xi64>}, dim_shardings = [{axes = [], is_closed = true}], replicated_axes = "
            "[], unreduced_axes = []}]");
  EXPECT_EQ(Parse("#sdy<manual_axes{\"x\", \"y\"}>"), "[\"x\", \"y\"]");
}

TEST(SdyTextTest, Errors) {
  EXPECT_EQ(Parse("#sdy.sharding<@mesh, [{\"x\"}"),
            "error: sdy attribute text at offset 27: expected ',' in "
            "'#sdy.sharding<@mesh, [{\"x\"}'");
  EXPECT_NE(Parse("#sdy.mesh<[\"x\"=99999999999999999999]>").find("smaller integer"),
            std::string::npos);
  EXPECT_NE(Parse("#other<x>").find("expected #sdy.mesh"), std::string::npos);
  EXPECT_NE(Parse("#sdy.mesh<[]> trailing").find("end of text"), std::string::npos);
}

TEST(SdyTextTest, MutationsNeverCrash) {
  const std::string samples[] = {
      "{mesh = #sdy.mesh<[\"x\"=2], device_ids=[1, 0]>}",
      "#sdy.sharding_per_value<[<@mesh, [{\"x\":(2)4, ?}p1, {?}], replicated={\"y\"}>]>",
      "#sdy<manual_axes{\"x\", \"y\"}>"};
  std::mt19937 rng(3);
  for (const std::string& sample : samples) {
    for (int trial = 0; trial < 3000; ++trial) {
      std::string text = sample;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        size_t at = rng() % text.size();
        switch (rng() % 3) {
          case 0: text[at] = static_cast<char>(rng()); break;
          case 1: text.erase(at, 1); break;
          default: text.insert(at, 1, "{}[]<>,=\"?:()p@#"[rng() % 17]); break;
        }
        if (text.empty()) text = "x";
      }
      ParseSdyText(text).status().IgnoreError();
    }
  }
}

}  // namespace
}  // namespace stablert::stablehlo
