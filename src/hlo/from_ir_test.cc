#include "hlo/from_ir.h"

#include <gtest/gtest.h>

#include <string>

#include "hlo/proto.h"
#include "ir/test_module_builder.h"

namespace stablert::hlo {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

const Instruction* Find(const Computation& computation, std::string_view opcode) {
  for (const Instruction& inst : computation.instructions)
    if (inst.opcode == opcode) return &inst;
  return nullptr;
}

TEST(HloFromIrTest, EntryParametersAndSeveralResultsAsATuple) {
  ModuleBuilder b;
  ir::ValueId x = b.Param(DType::kF32, {4});
  ir::ValueId y = b.Param(DType::kF32, {4});
  ir::ValueId sum = b.Op(OpCode::kAdd, {x, y}, DType::kF32, {4});
  ir::ValueId product = b.Op(OpCode::kMultiply, {x, y}, DType::kF32, {4});
  StatusOr<Module> module = FromIr(b.Build({sum, product}));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Computation& entry = module->entry();
  EXPECT_EQ(module->entry_computation_id, entry.id);
  ASSERT_EQ(entry.parameter_shapes.size(), 2u);
  EXPECT_EQ(entry.instructions[0].opcode, "parameter");
  EXPECT_EQ(entry.instructions[0].parameter_number, 0);
  EXPECT_EQ(entry.instructions[1].parameter_number, 1);
  const Instruction& root = entry.instructions.back();
  EXPECT_EQ(root.id, entry.root_id);
  EXPECT_EQ(root.opcode, "tuple");
  EXPECT_EQ(root.operands.size(), 2u);
  EXPECT_EQ(entry.result_shape.kind, Shape::Kind::kTuple);
  EXPECT_FALSE(ToProto(*module).empty());
}

TEST(HloFromIrTest, WhileCarriesTheValuesItsRegionsCapture) {
  ModuleBuilder b;
  ir::ValueId x = b.Param(DType::kS32, {});
  ir::ValueId limit = b.Param(DType::kS32, {});  // used inside the condition only
  ir::ValueId step = b.Param(DType::kS32, {});   // used inside the body only
  std::vector<ir::ValueId> results = b.While(
      {x},
      [&](const std::vector<ir::ValueId>& args) {
        return b.Op(OpCode::kCompare, {args[0], limit}, DType::kPred, {},
                    {{"comparison_direction", ir::Attribute(ir::EnumValue{ir::EnumKind::kComparisonDirection, 5})}});
      },
      [&](const std::vector<ir::ValueId>& args) {
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {args[0], step}, DType::kS32, {})};
      });
  StatusOr<Module> module = FromIr(b.Build(results));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Instruction* loop = Find(module->entry(), "while");
  ASSERT_NE(loop, nullptr);
  // One tuple operand: the carried value, then both captured values.
  ASSERT_EQ(loop->shape.kind, Shape::Kind::kTuple);
  EXPECT_EQ(loop->shape.elements.size(), 3u);
  ASSERT_EQ(loop->called.size(), 2u);
  // Condition and body are defined before the entry and take the same tuple.
  ASSERT_EQ(module->computations.size(), 3u);
  const Computation& condition = module->computations[0];
  const Computation& body = module->computations[1];
  EXPECT_EQ(body.id, loop->called[0]);  // XLA's order: body, then condition
  EXPECT_EQ(condition.id, loop->called[1]);
  ASSERT_EQ(condition.parameter_shapes.size(), 1u);
  EXPECT_EQ(condition.parameter_shapes[0].elements.size(), 3u);
  EXPECT_EQ(Find(condition, "compare")->comparison_direction, "LT");
  EXPECT_EQ(Find(condition, "compare")->comparison_type, "SIGNED");
  // The body returns the new value and passes the captured ones through.
  EXPECT_EQ(body.result_shape.elements.size(), 3u);
  EXPECT_EQ(module->entry().instructions.back().opcode, "get-tuple-element");
}

TEST(HloFromIrTest, ExpandingBroadcastBecomesReshapeAndBroadcast) {
  ModuleBuilder b;
  ir::ValueId x = b.Param(DType::kF32, {1, 3});
  ir::Attribute dims(std::vector<ir::Attribute>{ir::Attribute(ir::Attribute::Integer{0, DType::kS64}),
                                                ir::Attribute(ir::Attribute::Integer{1, DType::kS64})});
  ir::ValueId y = b.Op(OpCode::kBroadcastInDim, {x}, DType::kF32, {5, 3}, {{"broadcast_dimensions", dims}});
  StatusOr<Module> module = FromIr(b.Build({y}));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Instruction* reshape = Find(module->entry(), "reshape");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->shape.dims, (Dims{3}));
  const Instruction* broadcast = Find(module->entry(), "broadcast");
  ASSERT_NE(broadcast, nullptr);
  EXPECT_EQ(*broadcast->dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(broadcast->operands[0], reshape->id);
}

TEST(HloFromIrTest, OpsWithoutAnHloFormAreNamed) {
  ModuleBuilder b;
  ir::ValueId x = b.Param(DType::kF32, {4});
  ir::ValueId y = b.Op(OpCode::kUniformQuantize, {x}, DType::kS8, {4});
  StatusOr<Module> module = FromIr(b.Build({y}));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(module.status().message().find("stablehlo.uniform_quantize"), std::string::npos);
}

TEST(HloFromIrTest, ReductionBodiesMayNotCaptureValues) {
  ModuleBuilder b;
  ir::ValueId x = b.Param(DType::kF32, {4});
  ir::ValueId scale = b.Param(DType::kF32, {});
  ir::ValueId init = b.Constant<float>(DType::kF32, {}, {0.0f});
  ir::Region body = b.Region({ir::Type::Tensor(DType::kF32, {}), ir::Type::Tensor(DType::kF32, {})},
                             [&](const std::vector<ir::ValueId>& args) {
                               ir::ValueId sum = b.Op(OpCode::kAdd, {args[0], args[1]}, DType::kF32, {});
                               return std::vector<ir::ValueId>{b.Op(OpCode::kMultiply, {sum, scale}, DType::kF32, {})};
                             });
  std::vector<ir::Region> regions;
  regions.push_back(std::move(body));
  ir::Attribute dims(std::vector<ir::Attribute>{ir::Attribute(ir::Attribute::Integer{0, DType::kS64})});
  ir::ValueId r = b.Op(OpCode::kReduce, {x, init}, DType::kF32, {}, {{"dimensions", dims}}, std::move(regions));
  StatusOr<Module> module = FromIr(b.Build({r}));
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("stablehlo.reduce"), std::string::npos);
}

}  // namespace
}  // namespace stablert::hlo
