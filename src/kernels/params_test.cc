#include "kernels/params.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stablert::kernels {
namespace {

enum class Mode : int64_t { kA = 0, kB = 3 };

struct Inner {
  int64_t x = 0;
  template <typename Visit>
  void Fields(Visit&& visit) const { visit("x", x); }
};

struct SampleParams {
  static constexpr std::string_view kFamily = "sample";
  std::vector<int64_t> dims;
  bool flag = false;
  Mode mode = Mode::kA;
  double scale = 1.0;
  std::vector<std::vector<int64_t>> groups;
  Inner inner;
  std::string name;
  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("dims", dims);
    visit("flag", flag);
    visit("mode", mode);
    visit("scale", scale);
    visit("groups", groups);
    visit("inner", inner);
    visit("name", name);
  }
};

struct OtherParams {
  static constexpr std::string_view kFamily = "other";
  int64_t n = 0;
  template <typename Visit>
  void Fields(Visit&& visit) const { visit("n", n); }
};

TEST(KernelParams, PrintsEveryFieldByName) {
  KernelParams params(SampleParams{{2, 3}, true, Mode::kB, 0.5, {{1}, {2, 3}}, {7}, "ab"});
  EXPECT_EQ(params.family(), "sample");
  EXPECT_EQ(params.ToString(), "dims=[2,3] flag=true mode=3 scale=0.500000 groups=[[1],[2,3]] inner={x=7} name=\"ab\"");
  EXPECT_EQ(KernelParams().ToString(), "");
  EXPECT_EQ(KernelParams().family(), "none");
}

TEST(KernelParams, TypedAccessOnlyForItsOwnType) {
  KernelParams params(OtherParams{5});
  ASSERT_NE(params.As<OtherParams>(), nullptr);
  EXPECT_EQ(params.As<OtherParams>()->n, 5);
  EXPECT_EQ(params.As<SampleParams>(), nullptr);
  EXPECT_EQ(params.type(), ParamsTypeOf<OtherParams>());
  EXPECT_TRUE(KernelParams().empty());
  EXPECT_EQ(KernelParams().As<OtherParams>(), nullptr);
}

TEST(KernelParams, EqualityComparesFieldsAndType) {
  SampleParams a{{2, 3}, true, Mode::kB, 0.5, {{1}}, {7}, "ab"};
  SampleParams b = a;
  EXPECT_EQ(KernelParams(a), KernelParams(b));
  for (int field = 0; field < 7; ++field) {
    SampleParams c = a;
    switch (field) {
      case 0: c.dims.push_back(1); break;
      case 1: c.flag = false; break;
      case 2: c.mode = Mode::kA; break;
      case 3: c.scale = 2; break;
      case 4: c.groups[0][0] = 2; break;
      case 5: c.inner.x = 8; break;
      case 6: c.name = "b"; break;
    }
    EXPECT_FALSE(KernelParams(a) == KernelParams(c)) << field;
  }
  EXPECT_FALSE(KernelParams(OtherParams{}) == KernelParams());
  EXPECT_EQ(KernelParams(), KernelParams());
  // Copies share the struct.
  KernelParams shared(a), copy = shared;
  EXPECT_EQ(shared.get(), copy.get());
}

}  // namespace
}  // namespace stablert::kernels
