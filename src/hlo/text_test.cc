#include "hlo/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>

namespace stablert::hlo {
namespace {

Shape Array(DType dtype, Dims dims = {}) { return Shape::Array(dtype, std::move(dims)); }
Shape F32(Dims dims = {}) { return Array(DType::kF32, std::move(dims)); }
Shape S32(Dims dims = {}) { return Array(DType::kS32, std::move(dims)); }
Shape Pred(Dims dims = {}) { return Array(DType::kPred, std::move(dims)); }

template <typename T>
ir::Attribute::Elements Elements(DType dtype, Dims dims, const std::vector<T>& values) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(dtype, std::move(dims));
  data->bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
  return data;
}

// Builds one computation: ids come from the module-wide counter `next_id`, instructions are
// named `<opcode>.<id>` (parameters `Arg_<number>.<id>`), and the last one is the root.
class ComputationBuilder {
 public:
  ComputationBuilder(const std::string& name, int64_t* next_id) : next_id_(next_id) {
    computation_.id = (*next_id_)++;
    computation_.name = name + "." + std::to_string(computation_.id);
  }

  Instruction& Op(const std::string& opcode, Shape shape, std::vector<int64_t> operands = {}) {
    Instruction& inst = instructions_.emplace_back();
    inst.id = (*next_id_)++;
    inst.name = opcode + "." + std::to_string(inst.id);
    inst.opcode = opcode;
    inst.shape = std::move(shape);
    inst.operands = std::move(operands);
    return inst;
  }

  Instruction& Param(Shape shape) {
    Instruction& inst = Op("parameter", shape);
    inst.parameter_number = static_cast<int64_t>(computation_.parameter_shapes.size());
    inst.name = "Arg_" + std::to_string(*inst.parameter_number) + "." + std::to_string(inst.id);
    computation_.parameter_shapes.push_back(std::move(shape));
    computation_.parameter_names.push_back(inst.name);
    return inst;
  }

  Instruction& Constant(ir::Attribute::Elements literal) {
    Instruction& inst = Op("constant", Array(literal->type.dtype, literal->type.dims));
    inst.literal = std::move(literal);
    return inst;
  }

  Computation Build() {
    computation_.instructions.assign(instructions_.begin(), instructions_.end());
    computation_.root_id = instructions_.back().id;
    computation_.result_shape = instructions_.back().shape;
    return computation_;
  }

 private:
  int64_t* next_id_;
  Computation computation_;
  std::deque<Instruction> instructions_;  // stable references while building
};

Module MakeModule(std::vector<Computation> computations) {
  Module module;
  module.name = "jit_f";
  module.entry_computation_id = computations.back().id;
  module.computations = std::move(computations);
  return module;
}

// (a, b) -> a `opcode` b on f32 scalars; a compare gets `direction` and the total order.
Computation ScalarRegion(const std::string& opcode, int64_t* next_id, const std::string& direction = "") {
  ComputationBuilder b("region_" + opcode, next_id);
  const int64_t lhs = b.Param(F32()).id;
  const int64_t rhs = b.Param(F32()).id;
  Instruction& op = b.Op(opcode, opcode == "compare" ? Pred() : F32(), {lhs, rhs});
  if (opcode == "compare") {
    op.comparison_direction = direction;
    op.comparison_type = "TOTALORDER";
  }
  return b.Build();
}

TEST(HloTextTest, ReduceCallsItsRegion) {
  int64_t ids = 2;
  Computation region = ScalarRegion("add", &ids);
  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({3})).id;
  const int64_t zero = b.Constant(Elements<float>(DType::kF32, {}, {0})).id;
  Instruction& reduce = b.Op("reduce", F32(), {x, zero});
  reduce.dimensions = std::vector<int64_t>{0};
  reduce.called = {region.id};
  EXPECT_EQ(ToText(MakeModule({region, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[]}

region_add.2 {
  Arg_0.3 = f32[] parameter(0)
  Arg_1.4 = f32[] parameter(1)
  ROOT add.5 = f32[] add(Arg_0.3, Arg_1.4)
}

ENTRY main.6 {
  Arg_0.7 = f32[3]{0} parameter(0)
  constant.8 = f32[] constant(0)
  ROOT reduce.9 = f32[] reduce(Arg_0.7, constant.8), dimensions={0}, to_apply=region_add.2
}
)hlo");
}

TEST(HloTextTest, DataMovement) {
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({4, 6})).id;
  const int64_t i = b.Param(S32()).id;
  b.Op("broadcast", F32({2, 4, 6}), {x}).dimensions = std::vector<int64_t>{1, 2};
  Instruction& transpose = b.Op("transpose", F32({6, 4}), {x});
  transpose.shape.minor_to_major = {0, 1};
  transpose.dimensions = std::vector<int64_t>{1, 0};
  b.Op("slice", F32({2, 3}), {x}).slice = std::vector<SliceDimension>{{0, 2, 1}, {1, 6, 2}};
  b.Op("slice", F32({2, 5}), {x}).slice = std::vector<SliceDimension>{{0, 2, 1}, {1, 6, 1}};
  const int64_t zero = b.Constant(Elements<float>(DType::kF32, {}, {0})).id;
  b.Op("pad", F32({5, 12}), {x, zero}).padding = std::vector<PaddingDimension>{{0, 1, 0}, {1, 0, 1}};
  b.Op("pad", F32({6, 7}), {x, zero}).padding = std::vector<PaddingDimension>{{1, 1, 0}, {0, 1, 0}};
  b.Op("concatenate", F32({8, 6}), {x, x}).dimensions = std::vector<int64_t>{0};
  b.Op("dynamic-slice", F32({2, 2}), {x, i, i}).dynamic_slice_sizes = std::vector<int64_t>{2, 2};
  b.Op("iota", S32({4})).dimensions = std::vector<int64_t>{0};
  b.Op("reverse", F32({4, 6}), {x}).dimensions = std::vector<int64_t>{0, 1};
  EXPECT_EQ(ToText(MakeModule({b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[4,6]{1,0}, s32[])->f32[4,6]{1,0}}

ENTRY main.1 {
  Arg_0.2 = f32[4,6]{1,0} parameter(0)
  Arg_1.3 = s32[] parameter(1)
  broadcast.4 = f32[2,4,6]{2,1,0} broadcast(Arg_0.2), dimensions={1,2}
  transpose.5 = f32[6,4]{0,1} transpose(Arg_0.2), dimensions={1,0}
  slice.6 = f32[2,3]{1,0} slice(Arg_0.2), slice={[0:2:1], [1:6:2]}
  slice.7 = f32[2,5]{1,0} slice(Arg_0.2), slice={[0:2], [1:6]}
  constant.8 = f32[] constant(0)
  pad.9 = f32[5,12]{1,0} pad(Arg_0.2, constant.8), padding=0_1_0x1_0_1
  pad.10 = f32[6,7]{1,0} pad(Arg_0.2, constant.8), padding=1_1x0_1
  concatenate.11 = f32[8,6]{1,0} concatenate(Arg_0.2, Arg_0.2), dimensions={0}
  dynamic-slice.12 = f32[2,2]{1,0} dynamic-slice(Arg_0.2, Arg_1.3, Arg_1.3), dynamic_slice_sizes={2,2}
  iota.13 = s32[4]{0} iota(), iota_dimension=0
  ROOT reverse.14 = f32[4,6]{1,0} reverse(Arg_0.2), dimensions={0,1}
}
)hlo");
}

TEST(HloTextTest, ConstantsReadBackExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  b.Constant(Elements<float>(DType::kF32, {2, 3}, {1, inf, -inf, nan, -0.0f, 0.1f}));
  b.Constant(Elements<float>(DType::kF32, {}, {std::numeric_limits<float>::max()}));
  b.Constant(Elements<double>(DType::kF64, {3}, {0.1, 1.0 / 3, 12345678901234567168.0}));
  b.Constant(Elements<uint8_t>(DType::kPred, {}, {1}));
  b.Constant(Elements<uint8_t>(DType::kPred, {3}, {1, 0, 1}));
  b.Constant(Elements<uint16_t>(DType::kBF16, {3}, {0x3FC0, 0x4053, 0xFF80}));  // 1.5, 3.3, -inf
  b.Constant(Elements<uint16_t>(DType::kF16, {2}, {0x2E66, 0x7BFF}));           // 0.1, 65504
  b.Constant(Elements<uint8_t>(DType::kF8E4M3FN, {2}, {0xFE, 0x1D}));           // -448, 0.1015625
  b.Constant(Elements<int8_t>(DType::kS8, {3}, {-128, 0, 127}));
  b.Constant(Elements<uint64_t>(DType::kU64, {1}, {std::numeric_limits<uint64_t>::max()}));
  b.Constant(Elements<uint8_t>(DType::kS4, {3}, {0xF8, 0x0F, 0x07}));  // -8, -1, 7
  b.Constant(Elements<float>(DType::kC64, {2}, {1, -2.5f, 0, inf}));
  b.Constant(Elements<float>(DType::kF32, {0, 2}, {}));
  b.Constant(Elements<float>(DType::kF32, {0}, {}));
  auto splat = std::make_shared<ir::ElementsData>(*Elements<int32_t>(DType::kS32, {2, 2}, {7}));
  splat->splat = true;
  b.Constant(splat);
  b.Constant(Elements<int32_t>(DType::kS32, {1, 2, 1}, {1, 2}));
  EXPECT_EQ(ToText(MakeModule({b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={()->s32[1,2,1]{2,1,0}}

ENTRY main.1 {
  constant.2 = f32[2,3]{1,0} constant({ { 1, inf, -inf }, { nan, -0.0, 0.1 } })
  constant.3 = f32[] constant(3.4028235e+38)
  constant.4 = f64[3]{0} constant({0.1, 0.3333333333333333, 12345678901234567168.0})
  constant.5 = pred[] constant(true)
  constant.6 = pred[3]{0} constant({true, false, true})
  constant.7 = bf16[3]{0} constant({1.5, 3.296875, -inf})
  constant.8 = f16[2]{0} constant({0.0999755859375, 65504})
  constant.9 = f8e4m3fn[2]{0} constant({-448, 0.1015625})
  constant.10 = s8[3]{0} constant({-128, 0, 127})
  constant.11 = u64[1]{0} constant({18446744073709551615})
  constant.12 = s4[3]{0} constant({-8, -1, 7})
  constant.13 = c64[2]{0} constant({(1, -2.5), (0, inf)})
  constant.14 = f32[0,2]{1,0} constant({  })
  constant.15 = f32[0]{0} constant({})
  constant.16 = s32[2,2]{1,0} constant({ { 7, 7 }, { 7, 7 } })
  ROOT constant.17 = s32[1,2,1]{2,1,0} constant({ { {1}, {2} } })
}
)hlo");
}

// Compilation may run on a thread that flushes denormals (FTZ/DAZ); subnormal constants
// still print as their value.
TEST(HloTextTest, SubnormalConstantsUnderFlushToZero) {
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  b.Constant(Elements<float>(DType::kF32, {2}, {std::numeric_limits<float>::denorm_min(), -1e-40f}));
  std::string text;
#if defined(__x86_64__)
  const unsigned saved = __builtin_ia32_stmxcsr();
  __builtin_ia32_ldmxcsr(saved | 0x8040);  // FTZ | DAZ
  text = ToText(MakeModule({b.Build()}));
  __builtin_ia32_ldmxcsr(saved);
#else
  text = ToText(MakeModule({b.Build()}));
#endif
  EXPECT_NE(text.find("constant({1.401298464324817e-45, -9.99994610111476e-41})"), std::string::npos) << text;
}

TEST(HloTextTest, CompareWritesTypeOnlyWhenNotTheDefault) {
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({4})).id;
  const int64_t y = b.Param(S32({4})).id;
  Instruction& total = b.Op("compare", Pred({4}), {x, x});
  total.comparison_direction = "LT";
  total.comparison_type = "TOTALORDER";
  Instruction& flt = b.Op("compare", Pred({4}), {x, x});
  flt.comparison_direction = "GE";
  flt.comparison_type = "FLOAT";
  Instruction& sgn = b.Op("compare", Pred({4}), {y, y});
  sgn.comparison_direction = "EQ";
  sgn.comparison_type = "SIGNED";
  Instruction& uns = b.Op("compare", Pred({4}), {y, y});
  uns.comparison_direction = "NE";
  uns.comparison_type = "UNSIGNED";
  b.Op("tuple", Shape::Tuple({Pred({4}), Pred({4}), Pred({4}), Pred({4})}),
       {total.id, flt.id, sgn.id, uns.id});
  EXPECT_EQ(ToText(MakeModule({b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[4]{0}, s32[4]{0})->(pred[4]{0}, pred[4]{0}, pred[4]{0}, pred[4]{0})}

ENTRY main.1 {
  Arg_0.2 = f32[4]{0} parameter(0)
  Arg_1.3 = s32[4]{0} parameter(1)
  compare.4 = pred[4]{0} compare(Arg_0.2, Arg_0.2), direction=LT, type=TOTALORDER
  compare.5 = pred[4]{0} compare(Arg_0.2, Arg_0.2), direction=GE
  compare.6 = pred[4]{0} compare(Arg_1.3, Arg_1.3), direction=EQ
  compare.7 = pred[4]{0} compare(Arg_1.3, Arg_1.3), direction=NE, type=UNSIGNED
  ROOT tuple.8 = (pred[4]{0}, pred[4]{0}, pred[4]{0}, pred[4]{0}) tuple(compare.4, compare.5, compare.6, compare.7)
}
)hlo");
}

TEST(HloTextTest, DotDimensionNumbersAndPrecision) {
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  const int64_t lhs = b.Param(F32({2, 3, 4})).id;
  const int64_t rhs = b.Param(F32({2, 4, 5})).id;
  const int64_t vec = b.Param(F32({4})).id;
  Instruction& batched = b.Op("dot", F32({2, 3, 5}), {lhs, rhs});
  batched.dot_dimension_numbers = DotDimensionNumbers{{2}, {1}, {0}, {0}};
  batched.operand_precision = {2, 0};
  Instruction& inner = b.Op("dot", F32(), {vec, vec});
  inner.dot_dimension_numbers = DotDimensionNumbers{{0}, {0}, {}, {}};
  inner.operand_precision = {0, 0};
  b.Op("tuple", Shape::Tuple({F32({2, 3, 5}), F32()}), {batched.id, inner.id});
  EXPECT_EQ(ToText(MakeModule({b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[2,3,4]{2,1,0}, f32[2,4,5]{2,1,0}, f32[4]{0})->(f32[2,3,5]{2,1,0}, f32[])}

ENTRY main.1 {
  Arg_0.2 = f32[2,3,4]{2,1,0} parameter(0)
  Arg_1.3 = f32[2,4,5]{2,1,0} parameter(1)
  Arg_2.4 = f32[4]{0} parameter(2)
  dot.5 = f32[2,3,5]{2,1,0} dot(Arg_0.2, Arg_1.3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,default}
  dot.6 = f32[] dot(Arg_2.4, Arg_2.4), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT tuple.7 = (f32[2,3,5]{2,1,0}, f32[]) tuple(dot.5, dot.6)
}
)hlo");
}

TEST(HloTextTest, ConvolutionWindowAndDimLabels) {
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  const int64_t input = b.Param(F32({1, 5, 5, 2})).id;
  const int64_t kernel = b.Param(F32({2, 2, 1, 4})).id;
  const int64_t input_1d = b.Param(F32({3, 2, 5})).id;
  const int64_t kernel_1d = b.Param(F32({4, 2, 3})).id;
  Instruction& conv = b.Op("convolution", F32({1, 2, 8, 4}), {input, kernel});
  conv.window = std::vector<WindowDimension>{{2, 2, 0, 1, 2, 1, false}, {2, 1, 0, 0, 1, 2, true}};
  conv.convolution_dimension_numbers = ConvolutionDimensionNumbers{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  conv.feature_group_count = 2;
  Instruction& conv_1d = b.Op("convolution", F32({3, 4, 3}), {input_1d, kernel_1d});
  conv_1d.window = std::vector<WindowDimension>{{3}};
  conv_1d.convolution_dimension_numbers = ConvolutionDimensionNumbers{0, 1, {2}, 1, 0, {2}, 0, 1, {2}};
  conv_1d.operand_precision = {1, 1};
  b.Op("tuple", Shape::Tuple({F32({1, 2, 8, 4}), F32({3, 4, 3})}), {conv.id, conv_1d.id});
  EXPECT_EQ(ToText(MakeModule({b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[1,5,5,2]{3,2,1,0}, f32[2,2,1,4]{3,2,1,0}, f32[3,2,5]{2,1,0}, f32[4,2,3]{2,1,0})->(f32[1,2,8,4]{3,2,1,0}, f32[3,4,3]{2,1,0})}

ENTRY main.1 {
  Arg_0.2 = f32[1,5,5,2]{3,2,1,0} parameter(0)
  Arg_1.3 = f32[2,2,1,4]{3,2,1,0} parameter(1)
  Arg_2.4 = f32[3,2,5]{2,1,0} parameter(2)
  Arg_3.5 = f32[4,2,3]{2,1,0} parameter(3)
  convolution.6 = f32[1,2,8,4]{3,2,1,0} convolution(Arg_0.2, Arg_1.3), window={size=2x2 stride=2x1 pad=0_1x0_0 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  convolution.7 = f32[3,4,3]{2,1,0} convolution(Arg_2.4, Arg_3.5), window={size=3}, dim_labels=bf0_oi0->bf0, operand_precision={high,high}
  ROOT tuple.8 = (f32[1,2,8,4]{3,2,1,0}, f32[3,4,3]{2,1,0}) tuple(convolution.6, convolution.7)
}
)hlo");
}

TEST(HloTextTest, WindowedReductions) {
  int64_t ids = 1;
  Computation add = ScalarRegion("add", &ids);
  Computation ge = ScalarRegion("compare", &ids, "GE");
  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({4, 6})).id;
  const int64_t zero = b.Constant(Elements<float>(DType::kF32, {}, {0})).id;
  Instruction& pooled = b.Op("reduce-window", F32({2, 3}), {x, zero});
  pooled.window = std::vector<WindowDimension>{{2, 2}, {2, 2}};
  pooled.called = {add.id};
  Instruction& scalar = b.Op("reduce-window", F32(), {zero, zero});
  scalar.window = std::vector<WindowDimension>{};
  scalar.called = {add.id};
  Instruction& scattered = b.Op("select-and-scatter", F32({4, 6}), {x, pooled.id, zero});
  scattered.window = std::vector<WindowDimension>{{2, 2}, {2, 2}};
  scattered.called = {ge.id, add.id};
  scattered.called_role = CalledRole::kSelectScatter;
  b.Op("tuple", Shape::Tuple({F32(), F32({4, 6})}), {scalar.id, scattered.id});
  EXPECT_EQ(ToText(MakeModule({add, ge, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[4,6]{1,0})->(f32[], f32[4,6]{1,0})}

region_add.1 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.3 = f32[] parameter(1)
  ROOT add.4 = f32[] add(Arg_0.2, Arg_1.3)
}

region_compare.5 {
  Arg_0.6 = f32[] parameter(0)
  Arg_1.7 = f32[] parameter(1)
  ROOT compare.8 = pred[] compare(Arg_0.6, Arg_1.7), direction=GE, type=TOTALORDER
}

ENTRY main.9 {
  Arg_0.10 = f32[4,6]{1,0} parameter(0)
  constant.11 = f32[] constant(0)
  reduce-window.12 = f32[2,3]{1,0} reduce-window(Arg_0.10, constant.11), window={size=2x2 stride=2x2}, to_apply=region_add.1
  reduce-window.13 = f32[] reduce-window(constant.11, constant.11), to_apply=region_add.1
  select-and-scatter.14 = f32[4,6]{1,0} select-and-scatter(Arg_0.10, reduce-window.12, constant.11), window={size=2x2 stride=2x2}, select=region_compare.5, scatter=region_add.1
  ROOT tuple.15 = (f32[], f32[4,6]{1,0}) tuple(reduce-window.13, select-and-scatter.14)
}
)hlo");
}

TEST(HloTextTest, GatherAndScatter) {
  int64_t ids = 1;
  Computation add = ScalarRegion("add", &ids);
  ComputationBuilder b("main", &ids);
  const int64_t operand = b.Param(F32({2, 3, 4})).id;
  const int64_t indices = b.Param(S32({2, 2, 1})).id;
  const int64_t updates = b.Param(F32({2, 2, 4})).id;
  const int64_t flat_operand = b.Param(F32({3, 4})).id;
  const int64_t flat_indices = b.Param(S32({2, 1})).id;
  Instruction& flat = b.Op("gather", F32({2, 4}), {flat_operand, flat_indices});
  flat.gather_dimension_numbers = GatherDimensionNumbers{{1}, {0}, {0}, 1, {}, {}};
  flat.gather_slice_sizes = std::vector<int64_t>{1, 4};
  flat.indices_are_sorted = true;
  Instruction& batched = b.Op("gather", F32({2, 2, 4}), {operand, indices});
  batched.gather_dimension_numbers = GatherDimensionNumbers{{2}, {1}, {1}, 2, {0}, {0}};
  batched.gather_slice_sizes = std::vector<int64_t>{1, 1, 4};
  Instruction& scatter = b.Op("scatter", F32({2, 3, 4}), {operand, indices, updates});
  scatter.scatter_dimension_numbers = ScatterDimensionNumbers{{2}, {1}, {1}, 2, {0}, {0}};
  scatter.indices_are_sorted = true;
  scatter.unique_indices = true;
  scatter.called = {add.id};
  b.Op("tuple", Shape::Tuple({F32({2, 4}), F32({2, 2, 4}), F32({2, 3, 4})}), {flat.id, batched.id, scatter.id});
  EXPECT_EQ(ToText(MakeModule({add, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[2,3,4]{2,1,0}, s32[2,2,1]{2,1,0}, f32[2,2,4]{2,1,0}, f32[3,4]{1,0}, s32[2,1]{1,0})->(f32[2,4]{1,0}, f32[2,2,4]{2,1,0}, f32[2,3,4]{2,1,0})}

region_add.1 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.3 = f32[] parameter(1)
  ROOT add.4 = f32[] add(Arg_0.2, Arg_1.3)
}

ENTRY main.5 {
  Arg_0.6 = f32[2,3,4]{2,1,0} parameter(0)
  Arg_1.7 = s32[2,2,1]{2,1,0} parameter(1)
  Arg_2.8 = f32[2,2,4]{2,1,0} parameter(2)
  Arg_3.9 = f32[3,4]{1,0} parameter(3)
  Arg_4.10 = s32[2,1]{1,0} parameter(4)
  gather.11 = f32[2,4]{1,0} gather(Arg_3.9, Arg_4.10), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true
  gather.12 = f32[2,2,4]{2,1,0} gather(Arg_0.6, Arg_1.7), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
  scatter.13 = f32[2,3,4]{2,1,0} scatter(Arg_0.6, Arg_1.7, Arg_2.8), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, indices_are_sorted=true, unique_indices=true, to_apply=region_add.1
  ROOT tuple.14 = (f32[2,4]{1,0}, f32[2,2,4]{2,1,0}, f32[2,3,4]{2,1,0}) tuple(gather.11, gather.12, scatter.13)
}
)hlo");
}

TEST(HloTextTest, WhileLoopOverATuple) {
  int64_t ids = 1;
  const Shape state = Shape::Tuple({S32(), F32({3})});
  ComputationBuilder cond("cond", &ids);
  const int64_t cond_state = cond.Param(state).id;
  Instruction& counter = cond.Op("get-tuple-element", S32(), {cond_state});
  counter.tuple_index = 0;
  const int64_t limit = cond.Constant(Elements<int32_t>(DType::kS32, {}, {10})).id;
  Instruction& less = cond.Op("compare", Pred(), {counter.id, limit});
  less.comparison_direction = "LT";
  less.comparison_type = "SIGNED";
  Computation condition = cond.Build();

  ComputationBuilder body("body", &ids);
  const int64_t body_state = body.Param(state).id;
  Instruction& count = body.Op("get-tuple-element", S32(), {body_state});
  count.tuple_index = 0;
  Instruction& value = body.Op("get-tuple-element", F32({3}), {body_state});
  value.tuple_index = 1;
  const int64_t one = body.Constant(Elements<int32_t>(DType::kS32, {}, {1})).id;
  const int64_t next = body.Op("add", S32(), {count.id, one}).id;
  body.Op("tuple", state, {next, value.id});
  Computation loop_body = body.Build();

  ComputationBuilder b("main", &ids);
  const int64_t start = b.Param(S32()).id;
  const int64_t x = b.Param(F32({3})).id;
  const int64_t init = b.Op("tuple", state, {start, x}).id;
  Instruction& loop = b.Op("while", state, {init});
  loop.called = {loop_body.id, condition.id};  // body first, as XLA keeps it
  loop.called_role = CalledRole::kWhile;
  b.Op("get-tuple-element", F32({3}), {loop.id}).tuple_index = 1;
  EXPECT_EQ(ToText(MakeModule({condition, loop_body, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(s32[], f32[3]{0})->f32[3]{0}}

cond.1 {
  Arg_0.2 = (s32[], f32[3]{0}) parameter(0)
  get-tuple-element.3 = s32[] get-tuple-element(Arg_0.2), index=0
  constant.4 = s32[] constant(10)
  ROOT compare.5 = pred[] compare(get-tuple-element.3, constant.4), direction=LT
}

body.6 {
  Arg_0.7 = (s32[], f32[3]{0}) parameter(0)
  get-tuple-element.8 = s32[] get-tuple-element(Arg_0.7), index=0
  get-tuple-element.9 = f32[3]{0} get-tuple-element(Arg_0.7), index=1
  constant.10 = s32[] constant(1)
  add.11 = s32[] add(get-tuple-element.8, constant.10)
  ROOT tuple.12 = (s32[], f32[3]{0}) tuple(add.11, get-tuple-element.9)
}

ENTRY main.13 {
  Arg_0.14 = s32[] parameter(0)
  Arg_1.15 = f32[3]{0} parameter(1)
  tuple.16 = (s32[], f32[3]{0}) tuple(Arg_0.14, Arg_1.15)
  while.17 = (s32[], f32[3]{0}) while(tuple.16), condition=cond.1, body=body.6
  ROOT get-tuple-element.18 = f32[3]{0} get-tuple-element(while.17), index=1
}
)hlo");
}

TEST(HloTextTest, ConditionalBranches) {
  int64_t ids = 1;
  ComputationBuilder negate("branch_0", &ids);
  negate.Op("negate", F32(), {negate.Param(F32()).id});
  Computation branch_0 = negate.Build();
  ComputationBuilder abs("branch_1", &ids);
  abs.Op("abs", F32(), {abs.Param(F32()).id});
  Computation branch_1 = abs.Build();

  ComputationBuilder b("main", &ids);
  const int64_t index = b.Param(S32()).id;
  const int64_t flag = b.Param(Pred()).id;
  const int64_t x = b.Param(F32()).id;
  Instruction& indexed = b.Op("conditional", F32(), {index, x, x});
  indexed.called = {branch_0.id, branch_1.id};
  indexed.called_role = CalledRole::kBranches;
  Instruction& predicated = b.Op("conditional", F32(), {flag, x, x});
  predicated.called = {branch_0.id, branch_1.id};
  predicated.called_role = CalledRole::kTrueFalse;
  b.Op("tuple", Shape::Tuple({F32(), F32()}), {indexed.id, predicated.id});
  EXPECT_EQ(ToText(MakeModule({branch_0, branch_1, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(s32[], pred[], f32[])->(f32[], f32[])}

branch_0.1 {
  Arg_0.2 = f32[] parameter(0)
  ROOT negate.3 = f32[] negate(Arg_0.2)
}

branch_1.4 {
  Arg_0.5 = f32[] parameter(0)
  ROOT abs.6 = f32[] abs(Arg_0.5)
}

ENTRY main.7 {
  Arg_0.8 = s32[] parameter(0)
  Arg_1.9 = pred[] parameter(1)
  Arg_2.10 = f32[] parameter(2)
  conditional.11 = f32[] conditional(Arg_0.8, Arg_2.10, Arg_2.10), branch_computations={branch_0.1, branch_1.4}
  conditional.12 = f32[] conditional(Arg_1.9, Arg_2.10, Arg_2.10), true_computation=branch_0.1, false_computation=branch_1.4
  ROOT tuple.13 = (f32[], f32[]) tuple(conditional.11, conditional.12)
}
)hlo");
}

TEST(HloTextTest, CustomCalls) {
  int64_t ids = 1;
  ComputationBuilder callee("callee", &ids);
  callee.Op("negate", F32(), {callee.Param(F32()).id});
  Computation called = callee.Build();

  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({2, 3})).id;
  const int64_t n = b.Param(S32()).id;
  const Shape pair = Shape::Tuple({F32({2}), S32()});
  Instruction& ffi = b.Op("custom-call", pair, {x, n});
  ffi.custom_call_target = "my_ffi_target";
  Shape column_major = F32({2, 3});
  column_major.minor_to_major = {0, 1};
  ffi.operand_shapes_with_layout = std::vector<Shape>{column_major, S32()};
  ffi.custom_call_has_side_effect = true;
  ffi.custom_call_api_version = 4;
  ffi.backend_config = "{key = 1 : i32}";
  ffi.metadata = {"jit(f)/ffi_call", "/src/f.py", 12};
  Instruction& first = b.Op("get-tuple-element", F32({2}), {ffi.id});
  first.tuple_index = 0;
  Instruction& legacy = b.Op("custom-call", F32(), {n});
  legacy.custom_call_target = "quote\"d";
  legacy.called = {called.id};
  legacy.called_role = CalledRole::kCustomCall;
  legacy.custom_call_api_version = 2;
  legacy.backend_config = "tab\there \\ caf\xC3\xA9\x01";
  Instruction& original = b.Op("custom-call", F32(), {n});
  original.custom_call_target = "plain";
  original.custom_call_api_version = 1;
  original.backend_config = "";
  b.Op("tuple", Shape::Tuple({F32({2}), F32(), F32()}), {first.id, legacy.id, original.id});
  EXPECT_EQ(ToText(MakeModule({called, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0}, s32[])->(f32[2]{0}, f32[], f32[])}

callee.1 {
  Arg_0.2 = f32[] parameter(0)
  ROOT negate.3 = f32[] negate(Arg_0.2)
}

ENTRY main.4 {
  Arg_0.5 = f32[2,3]{1,0} parameter(0)
  Arg_1.6 = s32[] parameter(1)
  custom-call.7 = (f32[2]{0}, s32[]) custom-call(Arg_0.5, Arg_1.6), custom_call_target="my_ffi_target", operand_layout_constraints={f32[2,3]{0,1}, s32[]}, custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, metadata={op_name="jit(f)/ffi_call" source_file="/src/f.py" source_line=12}, backend_config="{key = 1 : i32}"
  get-tuple-element.8 = f32[2]{0} get-tuple-element(custom-call.7), index=0
  custom-call.9 = f32[] custom-call(Arg_1.6), custom_call_target="quote\"d", api_version=API_VERSION_STATUS_RETURNING, called_computations={callee.1}, backend_config="tab\there \\ caf\303\251\001"
  custom-call.10 = f32[] custom-call(Arg_1.6), custom_call_target="plain"
  ROOT tuple.11 = (f32[2]{0}, f32[], f32[]) tuple(get-tuple-element.8, custom-call.9, custom-call.10)
}
)hlo");
}

TEST(HloTextTest, MetadataWritesOnlyItsSetFields) {
  int64_t ids = 1;
  ComputationBuilder b("main", &ids);
  Instruction& x = b.Param(F32({2}));
  x.metadata = {"x", "", 0};
  Instruction& negated = b.Op("negate", F32({2}), {x.id});
  negated.metadata = {"", "/src/a \"b\".py", 7};
  Instruction& absolute = b.Op("abs", F32({2}), {negated.id});
  absolute.metadata = {"jit(f)/abs", "", 0};
  b.Op("exponential", F32({2}), {absolute.id});
  EXPECT_EQ(ToText(MakeModule({b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

ENTRY main.1 {
  Arg_0.2 = f32[2]{0} parameter(0), metadata={op_name="x"}
  negate.3 = f32[2]{0} negate(Arg_0.2), metadata={source_file="/src/a \"b\".py" source_line=7}
  abs.4 = f32[2]{0} abs(negate.3), metadata={op_name="jit(f)/abs"}
  ROOT exponential.5 = f32[2]{0} exponential(abs.4)
}
)hlo");
}

TEST(HloTextTest, Collectives) {
  int64_t ids = 1;
  Computation add = ScalarRegion("add", &ids);
  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({4})).id;
  Instruction& grouped = b.Op("all-reduce", F32({4}), {x});
  grouped.channel_id = 1;
  grouped.replica_groups = std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}};
  grouped.use_global_device_ids = true;
  grouped.called = {add.id};
  Instruction& everyone = b.Op("all-reduce", F32({4}), {x});
  everyone.replica_groups = std::vector<std::vector<int64_t>>{};
  everyone.called = {add.id};
  Instruction& gathered = b.Op("all-gather", F32({8}), {x});
  gathered.channel_id = 2;
  gathered.replica_groups = std::vector<std::vector<int64_t>>{{0, 1}};
  gathered.dimensions = std::vector<int64_t>{0};
  gathered.use_global_device_ids = true;
  Instruction& scattered = b.Op("reduce-scatter", F32({2}), {x});
  scattered.channel_id = 3;
  scattered.replica_groups = std::vector<std::vector<int64_t>>{{0, 1}};
  scattered.dimensions = std::vector<int64_t>{0};
  scattered.use_global_device_ids = true;
  scattered.called = {add.id};
  Instruction& exchanged = b.Op("all-to-all", F32({4}), {x});
  exchanged.channel_id = 4;
  exchanged.replica_groups = std::vector<std::vector<int64_t>>{{0, 1}};
  exchanged.dimensions = std::vector<int64_t>{0};
  Instruction& permuted = b.Op("collective-permute", F32({4}), {x});
  permuted.channel_id = 5;
  permuted.source_target_pairs = std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}};
  b.Op("tuple", Shape::Tuple({F32({4}), F32({4}), F32({8}), F32({2}), F32({4}), F32({4})}),
       {grouped.id, everyone.id, gathered.id, scattered.id, exchanged.id, permuted.id});
  EXPECT_EQ(ToText(MakeModule({add, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, f32[4]{0}, f32[8]{0}, f32[2]{0}, f32[4]{0}, f32[4]{0})}

region_add.1 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.3 = f32[] parameter(1)
  ROOT add.4 = f32[] add(Arg_0.2, Arg_1.3)
}

ENTRY main.5 {
  Arg_0.6 = f32[4]{0} parameter(0)
  all-reduce.7 = f32[4]{0} all-reduce(Arg_0.6), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=region_add.1
  all-reduce.8 = f32[4]{0} all-reduce(Arg_0.6), replica_groups={}, to_apply=region_add.1
  all-gather.9 = f32[8]{0} all-gather(Arg_0.6), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  reduce-scatter.10 = f32[2]{0} reduce-scatter(Arg_0.6), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=region_add.1
  all-to-all.11 = f32[4]{0} all-to-all(Arg_0.6), channel_id=4, replica_groups={{0,1}}, dimensions={0}
  collective-permute.12 = f32[4]{0} collective-permute(Arg_0.6), channel_id=5, source_target_pairs={{0,1},{1,0}}
  ROOT tuple.13 = (f32[4]{0}, f32[4]{0}, f32[8]{0}, f32[2]{0}, f32[4]{0}, f32[4]{0}) tuple(all-reduce.7, all-reduce.8, all-gather.9, reduce-scatter.10, all-to-all.11, collective-permute.12)
}
)hlo");
}

TEST(HloTextTest, OpOptions) {
  int64_t ids = 1;
  Computation less = ScalarRegion("compare", &ids, "LT");
  ComputationBuilder b("main", &ids);
  const int64_t x = b.Param(F32({4, 4})).id;
  const int64_t token = b.Param(Shape::Token()).id;
  Instruction& sorted = b.Op("sort", F32({4, 4}), {x});
  sorted.dimensions = std::vector<int64_t>{1};
  sorted.is_stable = true;
  sorted.called = {less.id};
  Instruction& solved = b.Op("triangular-solve", F32({4, 4}), {x, x});
  solved.left_side = true;
  solved.lower = true;
  solved.unit_diagonal = false;
  solved.transpose_a = 1;
  Instruction& adjoint = b.Op("triangular-solve", F32({4, 4}), {x, x});
  adjoint.left_side = false;
  adjoint.lower = false;
  adjoint.unit_diagonal = true;
  adjoint.transpose_a = 3;
  b.Op("cholesky", F32({4, 4}), {x}).lower = true;
  const int64_t key = b.Constant(Elements<uint64_t>(DType::kU64, {2}, {1, 2})).id;
  const Shape random_pair = Shape::Tuple({Array(DType::kU64, {2}), Array(DType::kU32, {4, 4})});
  b.Op("rng-bit-generator", random_pair, {key}).rng_algorithm = 1;
  const int64_t low = b.Constant(Elements<float>(DType::kF32, {}, {0})).id;
  const int64_t high = b.Constant(Elements<float>(DType::kF32, {}, {1})).id;
  b.Op("rng", F32({4, 4}), {low, high}).rng_distribution = 1;
  const int64_t complex = b.Op("convert", Array(DType::kC64, {4, 4}), {x}).id;
  Instruction& fft = b.Op("fft", Array(DType::kC64, {4, 4}), {complex});
  fft.fft_type = 0;
  fft.fft_length = std::vector<int64_t>{4, 4};
  Instruction& irfft = b.Op("fft", F32({4, 6}), {complex});
  irfft.fft_type = 3;
  irfft.fft_length = std::vector<int64_t>{4, 6};
  const int64_t scale = b.Constant(Elements<float>(DType::kF32, {4}, {1, 1, 1, 1})).id;
  Instruction& norm = b.Op("batch-norm-training", Shape::Tuple({F32({4, 4}), F32({4}), F32({4})}), {x, scale, scale});
  norm.epsilon = 0.001f;
  norm.feature_index = 1;
  Instruction& rounded = b.Op("reduce-precision", F32({4, 4}), {x});
  rounded.exponent_bits = 5;
  rounded.mantissa_bits = 10;
  b.Op("after-all", Shape::Token(), {token});
  EXPECT_EQ(ToText(MakeModule({less, b.Build()})),
            R"hlo(HloModule jit_f, entry_computation_layout={(f32[4,4]{1,0}, token[])->token[]}

region_compare.1 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.3 = f32[] parameter(1)
  ROOT compare.4 = pred[] compare(Arg_0.2, Arg_1.3), direction=LT, type=TOTALORDER
}

ENTRY main.5 {
  Arg_0.6 = f32[4,4]{1,0} parameter(0)
  Arg_1.7 = token[] parameter(1)
  sort.8 = f32[4,4]{1,0} sort(Arg_0.6), dimensions={1}, is_stable=true, to_apply=region_compare.1
  triangular-solve.9 = f32[4,4]{1,0} triangular-solve(Arg_0.6, Arg_0.6), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  triangular-solve.10 = f32[4,4]{1,0} triangular-solve(Arg_0.6, Arg_0.6), unit_diagonal=true, transpose_a=ADJOINT
  cholesky.11 = f32[4,4]{1,0} cholesky(Arg_0.6), lower=true
  constant.12 = u64[2]{0} constant({1, 2})
  rng-bit-generator.13 = (u64[2]{0}, u32[4,4]{1,0}) rng-bit-generator(constant.12), algorithm=rng_three_fry
  constant.14 = f32[] constant(0)
  constant.15 = f32[] constant(1)
  rng.16 = f32[4,4]{1,0} rng(constant.14, constant.15), distribution=rng_uniform
  convert.17 = c64[4,4]{1,0} convert(Arg_0.6)
  fft.18 = c64[4,4]{1,0} fft(convert.17), fft_type=FFT, fft_length={4,4}
  fft.19 = f32[4,6]{1,0} fft(convert.17), fft_type=IRFFT, fft_length={4,6}
  constant.20 = f32[4]{0} constant({1, 1, 1, 1})
  batch-norm-training.21 = (f32[4,4]{1,0}, f32[4]{0}, f32[4]{0}) batch-norm-training(Arg_0.6, constant.20, constant.20), epsilon=0.001, feature_index=1
  reduce-precision.22 = f32[4,4]{1,0} reduce-precision(Arg_0.6), exponent_bits=5, mantissa_bits=10
  ROOT after-all.23 = token[] after-all(Arg_1.7)
}
)hlo");
}

}  // namespace
}  // namespace stablert::hlo
