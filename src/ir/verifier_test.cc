#include "ir/verifier.h"

#include <gtest/gtest.h>

namespace stablert::ir {
namespace {

// main(%a: T, %b: T) -> T { %c = add %a, %b; return %c }
struct AddModule {
  Module m;
  Type t = Type::Tensor(DType::kF32, {2});
  AddModule() {
    Function f;
    f.name = "main";
    f.argument_types = {t, t};
    f.result_types = {t};
    f.argument_attrs.resize(2);
    f.result_attrs.resize(1);
    Block b;
    b.arguments = {m.AddValue(t), m.AddValue(t)};
    Operation add;
    add.code = OpCode::kAdd;
    add.operands = b.arguments;
    add.results = {m.AddValue(t)};
    add.location = 1;
    Operation ret;
    ret.code = OpCode::kReturn;
    ret.operands = add.results;
    b.ops = {add, ret};
    f.body.blocks.push_back(b);
    m.functions.push_back(f);
    m.locations.push_back(Location{"f.py", 1, 2, "jit(f)/add"});
  }
  Block& block() { return m.functions[0].body.blocks[0]; }
};

void ExpectError(const Module& m, std::string_view fragment) {
  Status status = Verify(m);
  ASSERT_FALSE(status.ok()) << "expected an error containing: " << fragment;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(VerifierTest, AcceptsValidModule) {
  AddModule a;
  EXPECT_TRUE(Verify(a.m).ok()) << Verify(a.m).ToString();
}

TEST(VerifierTest, ByteSizesThatOverflowAreRejected) {
  AddModule a;
  // 4 * (2^62 + 16) bytes wraps to 64 in 64-bit arithmetic.
  Type huge = Type::Tensor(DType::kF32, {(int64_t{1} << 62) + 16});
  for (Type& type : a.m.value_types) type = huge;
  a.m.functions[0].argument_types = {huge, huge};
  a.m.functions[0].result_types = {huge};
  ExpectError(a.m, "overflows int64");
}

TEST(VerifierTest, OperandCount) {
  AddModule a;
  a.block().ops[0].operands.pop_back();
  ExpectError(a.m, "stablehlo.add (at jit(f)/add at f.py:1:2): has 1 operands, expected 2");
}

TEST(VerifierTest, UseBeforeDefinition) {
  AddModule a;
  a.block().ops[0].operands[1] = 2;  // its own result
  ExpectError(a.m, "operand 1 (%2) is not defined before its use");
}

TEST(VerifierTest, MissingTerminator) {
  AddModule a;
  a.block().ops.pop_back();
  ExpectError(a.m, "does not end with a terminator");
}

TEST(VerifierTest, ReturnTypesMatchSignature) {
  AddModule a;
  a.m.functions[0].result_types = {Type::Tensor(DType::kF32, {3})};
  ExpectError(a.m, "expected (tensor<3xf32>) from the function's results");
}

TEST(VerifierTest, EntryArgumentsMatchSignature) {
  AddModule a;
  a.m.functions[0].argument_types[1] = Type::Tensor(DType::kS32, {2});
  ExpectError(a.m, "argument 1 has type tensor<2xf32>, expected tensor<2xi32>");
}

TEST(VerifierTest, ElementwiseShapesAgree) {
  AddModule a;
  a.m.value_types[2] = Type::Tensor(DType::kF32, {3});
  a.m.functions[0].result_types = {Type::Tensor(DType::kF32, {3})};
  ExpectError(a.m, "expected the shape of the result tensor<3xf32>");
}

TEST(VerifierTest, BinaryElementTypesAgree) {
  AddModule a;
  a.m.value_types[1] = Type::Tensor(DType::kS32, {2});
  a.m.functions[0].argument_types[1] = Type::Tensor(DType::kS32, {2});
  ExpectError(a.m, "element types f32 and i32");
}

TEST(VerifierTest, CallTargetsExistWithMatchingTypes) {
  AddModule a;
  Function helper = a.m.functions[0];
  Operation call;
  call.code = OpCode::kCall;
  call.operands = a.block().arguments;
  call.results = {a.m.AddValue(a.t)};
  call.attrs.emplace_back("callee", Attribute(Attribute::Symbol{"helper"}));
  a.block().ops.insert(a.block().ops.begin(), call);
  ExpectError(a.m, "calls @helper, which is not defined");
  helper.name = "helper";
  helper.is_public = false;
  helper.body.blocks[0].arguments = {a.m.AddValue(a.t), a.m.AddValue(a.t)};
  helper.body.blocks[0].ops[0].operands = helper.body.blocks[0].arguments;
  helper.body.blocks[0].ops[0].results = {a.m.AddValue(a.t)};
  helper.body.blocks[0].ops[1].operands = helper.body.blocks[0].ops[0].results;
  a.m.functions.push_back(helper);
  EXPECT_TRUE(Verify(a.m).ok()) << Verify(a.m).ToString();
  a.m.functions[1].result_types = {Type::Tensor(DType::kF32, {9})};
  ExpectError(a.m, "results have types (tensor<2xf32>)");
}

TEST(VerifierTest, ValuesOfOtherFunctionsAreNotVisible) {
  AddModule a;
  Function other = a.m.functions[0];
  other.name = "other";
  other.body.blocks[0].arguments = {a.m.AddValue(a.t), a.m.AddValue(a.t)};
  other.body.blocks[0].ops[0].results = {a.m.AddValue(a.t)};  // operands still main's args
  other.body.blocks[0].ops[1].operands = other.body.blocks[0].ops[0].results;
  a.m.functions.push_back(other);
  ExpectError(a.m, "in @other");
}

TEST(VerifierTest, ConstantMatchesResultType) {
  AddModule a;
  Operation constant;
  constant.code = OpCode::kConstant;
  constant.results = {a.m.AddValue(a.t)};
  auto data = std::make_shared<ElementsData>();
  data->type = Type::Tensor(DType::kF32, {});
  data->bytes.resize(4);
  constant.attrs.emplace_back("value", Attribute(Attribute::Elements(data)));
  a.block().ops.insert(a.block().ops.begin(), constant);
  ExpectError(a.m, "value of type tensor<f32> does not match the result type tensor<2xf32>");
}

TEST(VerifierTest, BranchResultsMatchTheOp) {
  AddModule a;
  Type pred = Type::Tensor(DType::kPred, {});
  Operation branch_if;
  branch_if.code = OpCode::kIf;
  branch_if.operands = {a.m.AddValue(pred)};
  a.block().arguments.push_back(branch_if.operands[0]);
  a.m.functions[0].argument_types.push_back(pred);
  a.m.functions[0].argument_attrs.emplace_back();
  branch_if.results = {a.m.AddValue(a.t)};
  for (int i = 0; i < 2; ++i) {
    Operation ret;
    ret.code = OpCode::kReturn;
    ret.operands = {a.block().arguments[i]};
    Region region;
    region.blocks.emplace_back();
    region.blocks[0].ops.push_back(ret);
    branch_if.regions.push_back(region);
  }
  a.block().ops.insert(a.block().ops.begin(), branch_if);
  EXPECT_TRUE(Verify(a.m).ok()) << Verify(a.m).ToString();
  a.block().ops[0].regions[1].blocks[0].ops[0].operands = {a.block().arguments[2]};
  ExpectError(a.m, "branch results have types (tensor<i1>)");
}

TEST(VerifierTest, CompareProducesBooleans) {
  AddModule a;
  a.block().ops[0].code = OpCode::kCompare;
  ExpectError(a.m, "result must have element type i1");
}

}  // namespace
}  // namespace stablert::ir
