// Lowering of custom calls to XLA FFI targets: one "ffi_call" step carrying the target and
// the backend_config dictionary as FFI attributes, and compile-time errors naming the target.
#include <gtest/gtest.h>

#include <memory>

#include "ir/test_module_builder.h"
#include "kernels/ffi_params.h"
#include "kernels/ffi_registry.h"
#include "plan/lower.h"

namespace stablert::plan {
namespace {

using ir::Attribute;
using ir::OpCode;
using ir::testing::ModuleBuilder;

int handler_stand_in;  // lowering never calls a handler; only its registration matters

void RegisterTarget(const char* target) {
  kernels::ffi::HandlerBundle bundle;
  bundle.execute = &handler_stand_in;
  ASSERT_TRUE(kernels::ffi::RegisterHandler("test", target, "stablert", bundle).ok());
}

Attribute::Dictionary CallAttrs(const char* target, Attribute::Dictionary config, int64_t api_version = 1) {
  return {{"call_target_name", Attribute(std::string(target))},
          {"api_version", Attribute(Attribute::Integer{api_version, DType::kS32})},
          {"backend_config", Attribute(std::string())},
          {"mhlo.backend_config", Attribute(std::move(config))}};
}

Attribute Int(int64_t v, DType dtype) { return Attribute(Attribute::Integer{v, dtype}); }

TEST(LowerFfiTest, RegisteredTargetIsOneStepWithItsAttributes) {
  RegisterTarget("lower_ffi_test_target");
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kS64, {2});
  data->bytes.resize(16);
  data->bytes[0] = 3;
  data->bytes[8] = 4;
  Attribute::Dictionary config = {
      {"scale", Attribute(Attribute::Float{2.0, DType::kF32})},
      {"count", Int(-7, DType::kS16)},
      {"name", Attribute(std::string("abc"))},
      {"dims", Attribute(Attribute::Elements(data))},
      {"flag", Attribute(true)},
      {"inner", Attribute(Attribute::Dictionary{{"b", Int(1, DType::kU8)}, {"a", Int(2, DType::kU64)}})}};
  ModuleBuilder b;
  auto x = b.Param(DType::kF32, {4, 3});
  auto results = b.OpN(OpCode::kCustomCall, {x},
                       {ir::Type::Tensor(DType::kF32, {4, 3}), ir::Type::Tensor(DType::kS32, {})},
                       CallAttrs("lower_ffi_test_target", config));
  auto plan = LowerToPlan(b.Build({results[0], results[1]}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->body.steps.size(), 1u);
  const Step& step = plan->body.steps[0];
  EXPECT_EQ(step.kernel, "ffi_call");
  EXPECT_EQ(step.inputs.size(), 1u);
  EXPECT_EQ(step.outputs.size(), 2u);
  const auto* params = step.params.As<kernels::FfiCallParams>();
  ASSERT_NE(params, nullptr);
  EXPECT_EQ(params->target, "lower_ffi_test_target");
  StatusOr<kernels::FfiAttributes> attrs = kernels::DecodeFfiAttributes(params->attributes);
  ASSERT_TRUE(attrs.ok()) << attrs.status().ToString();
  EXPECT_EQ(attrs->names, (std::vector<std::string>{"count", "dims", "flag", "inner", "name", "scale"}));
  using Kind = kernels::FfiAttribute::Kind;
  EXPECT_EQ(attrs->values[0].dtype, DType::kS16);
  EXPECT_EQ(attrs->values[0].bytes, std::string("\xf9\xff", 2));
  EXPECT_EQ(attrs->values[1].kind, Kind::kArray);
  EXPECT_EQ(attrs->values[1].bytes.size(), 16u);
  EXPECT_EQ(attrs->values[2].dtype, DType::kPred);
  EXPECT_EQ(attrs->values[3].kind, Kind::kDictionary);
  EXPECT_EQ(attrs->values[3].names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(attrs->values[4].bytes, "abc");
  float scale = 2.0f;
  EXPECT_EQ(attrs->values[5].bytes, std::string(reinterpret_cast<const char*>(&scale), 4));
}

TEST(LowerFfiTest, ErrorsNameTheTargetAndWhat) {
  RegisterTarget("lower_ffi_test_errors");
  auto lower = [](Attribute::Dictionary attrs) {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {4});
    auto y = b.Op(OpCode::kCustomCall, {x}, DType::kF32, {4}, std::move(attrs));
    return LowerToPlan(b.Build({y})).status();
  };
  Status unregistered = lower(CallAttrs("lower_ffi_test_nobody", {}, 4));
  EXPECT_EQ(unregistered.code(), StatusCode::kUnimplemented);
  EXPECT_NE(unregistered.message().find("'lower_ffi_test_nobody'"), std::string_view::npos) << unregistered.message();
  EXPECT_NE(unregistered.message().find("no XLA FFI handler"), std::string_view::npos) << unregistered.message();

  Status symbol = lower(CallAttrs("lower_ffi_test_errors",
                                  {{"cfg", Attribute(Attribute::Dictionary{{"fn", Attribute(Attribute::Symbol{"f"})}})}}));
  EXPECT_EQ(symbol.code(), StatusCode::kUnimplemented);
  EXPECT_NE(symbol.message().find("'cfg.fn'"), std::string_view::npos) << symbol.message();

  Attribute::Dictionary column_major = CallAttrs("lower_ffi_test_errors", {});
  column_major.emplace_back("operand_layouts", Attribute(Attribute::Array{ModuleBuilder::IntList({0, 1})}));
  Status layout = [&] {
    ModuleBuilder b;
    auto x = b.Param(DType::kF32, {2, 2});
    auto y = b.Op(OpCode::kCustomCall, {x}, DType::kF32, {2, 2}, column_major);
    return LowerToPlan(b.Build({y})).status();
  }();
  EXPECT_EQ(layout.code(), StatusCode::kUnimplemented);
  EXPECT_NE(layout.message().find("operand_layouts"), std::string_view::npos) << layout.message();

  Status legacy = lower({{"call_target_name", Attribute(std::string("lower_ffi_test_errors"))},
                         {"backend_config", Attribute(std::string("opaque"))}});
  EXPECT_EQ(legacy.code(), StatusCode::kUnimplemented);
  EXPECT_NE(legacy.message().find("legacy"), std::string_view::npos) << legacy.message();
}

}  // namespace
}  // namespace stablert::plan
