#include "passes/fold_constants.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/printer.h"
#include "ir/test_module_builder.h"
#include "passes/dead_code.h"

namespace stablert::passes {
namespace {

using ir::OpCode;
using ir::testing::ModuleBuilder;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string Folded(ir::Module& module, int expected_folds) {
  EXPECT_EQ(FoldConstants(module), expected_folds);
  RemoveDeadCode(module);
  return ir::PrintModule(module);
}

ir::Attribute Direction(int64_t direction) { return ModuleBuilder::Enum(ir::EnumKind::kComparisonDirection, direction); }

// The elements of the constant result `index` of the entry function returns.
template <typename T>
std::vector<T> ResultValues(const ir::Module& module, size_t index) {
  const ir::Function* entry = module.EntryFunction();
  const ir::ValueId v = entry->body.blocks[0].ops.back().operands[index];
  for (const ir::Operation& op : entry->body.blocks[0].ops)
    if (!op.results.empty() && op.results[0] == v) {
      if (op.code != OpCode::kConstant) return {};
      const auto& data = *op.attr("value")->get<ir::Attribute::Elements>();
      std::vector<uint8_t> bytes = data->Expanded();
      std::vector<T> values(bytes.size() / sizeof(T));
      std::memcpy(values.data(), bytes.data(), bytes.size());
      return values;
    }
  return {};
}

TEST(FoldConstantsTest, IntegerArithmeticWrapsAndFollowsStableHloDivisionAndShifts) {
  ModuleBuilder b;
  const int32_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();
  auto a = b.Constant<int32_t>(DType::kS32, {4}, {kMax, kMin, 7, -7});
  auto c = b.Constant<int32_t>(DType::kS32, {4}, {1, -1, 0, 2});
  auto sum = b.Op(OpCode::kAdd, {a, c}, DType::kS32, {4});          // kMax + 1 wraps
  auto quotient = b.Op(OpCode::kDivide, {a, c}, DType::kS32, {4});  // kMin / -1, 7 / 0
  auto remainder = b.Op(OpCode::kRemainder, {a, c}, DType::kS32, {4});
  auto shifts = b.Constant<int32_t>(DType::kS32, {4}, {31, 32, -1, 3});
  auto left = b.Op(OpCode::kShiftLeft, {a, shifts}, DType::kS32, {4});
  auto arithmetic = b.Op(OpCode::kShiftRightArithmetic, {a, shifts}, DType::kS32, {4});
  auto logical = b.Op(OpCode::kShiftRightLogical, {a, shifts}, DType::kS32, {4});
  auto u = b.Constant<uint8_t>(DType::kU8, {3}, {200, 0, 255});
  auto u_product = b.Op(OpCode::kMultiply, {u, u}, DType::kU8, {3});
  auto u_negated = b.Op(OpCode::kNegate, {u}, DType::kU8, {3});
  auto x = b.Param(DType::kS32, {4});
  ir::Module module = b.Build({b.Op(OpCode::kAdd, {x, sum}, DType::kS32, {4}), quotient, remainder, left, arithmetic,
                               logical, u_product, u_negated});
  EXPECT_EQ(Folded(module, 8), R"(module @test {
  func.func public @main(%12: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<3xui8>, tensor<3xui8>) {
    %2 = stablehlo.constant {value = dense<[-2147483648, 2147483647, 7, -5]> : tensor<4xi32>} : tensor<4xi32>
    %3 = stablehlo.constant {value = dense<[2147483647, -2147483648, -1, -3]> : tensor<4xi32>} : tensor<4xi32>
    %4 = stablehlo.constant {value = dense<[0, 0, 7, -1]> : tensor<4xi32>} : tensor<4xi32>
    %6 = stablehlo.constant {value = dense<[-2147483648, 0, 0, -56]> : tensor<4xi32>} : tensor<4xi32>
    %7 = stablehlo.constant {value = dense<[0, -1, 0, -1]> : tensor<4xi32>} : tensor<4xi32>
    %8 = stablehlo.constant {value = dense<[0, 0, 0, 536870911]> : tensor<4xi32>} : tensor<4xi32>
    %10 = stablehlo.constant {value = dense<[64, 0, 1]> : tensor<3xui8>} : tensor<3xui8>
    %11 = stablehlo.constant {value = dense<[56, 0, 1]> : tensor<3xui8>} : tensor<3xui8>
    %13 = stablehlo.add %12, %2 : tensor<4xi32>
    stablehlo.return %13, %3, %4, %6, %7, %8, %10, %11 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<3xui8>, tensor<3xui8>
  }
}
)");
}

TEST(FoldConstantsTest, FloatsFoldExactlyRoundedOpsWithNaNInfAndSignedZeros) {
  ModuleBuilder b;
  auto a = b.Constant<float>(DType::kF32, {5}, {1.0f, -0.0f, kInf, kNaN, 2.0f});
  auto c = b.Constant<float>(DType::kF32, {5}, {3.0f, 0.0f, -kInf, 1.0f, -0.0f});
  auto sum = b.Op(OpCode::kAdd, {a, c}, DType::kF32, {5});        // 4, +0, NaN, NaN, 2
  auto quotient = b.Op(OpCode::kDivide, {a, c}, DType::kF32, {5});  // 1/3, NaN, NaN, NaN, -inf
  auto root = b.Op(OpCode::kSqrt, {c}, DType::kF32, {5});         // sqrt(3), 0, NaN, 1, -0
  auto largest = b.Op(OpCode::kMaximum, {a, c}, DType::kF32, {5});  // 3, +0, inf, NaN, 2
  auto smallest = b.Op(OpCode::kMinimum, {a, c}, DType::kF32, {5});  // 1, -0, -inf, NaN, -0
  ir::Module module = b.Build({sum, quotient, root, largest, smallest});
  ASSERT_EQ(FoldConstants(module), 5);
  auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
  auto same = [&](const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
      else EXPECT_EQ(bits(got[i]), bits(want[i])) << i << ": " << got[i] << " vs " << want[i];
    }
  };
  same(ResultValues<float>(module, 0), {4.0f, 0.0f, kNaN, kNaN, 2.0f});
  same(ResultValues<float>(module, 1), {1.0f / 3.0f, kNaN, kNaN, kNaN, -kInf});
  same(ResultValues<float>(module, 2), {std::sqrt(3.0f), 0.0f, kNaN, 1.0f, -0.0f});
  same(ResultValues<float>(module, 3), {3.0f, 0.0f, kInf, kNaN, 2.0f});
  same(ResultValues<float>(module, 4), {1.0f, -0.0f, -kInf, kNaN, -0.0f});
}

TEST(FoldConstantsTest, TranscendentalsDenormalsAndTinyResultsStay) {
  ModuleBuilder b;
  const float denormal = std::numeric_limits<float>::denorm_min();
  const float tiny = std::numeric_limits<float>::min();
  auto one = b.Constant<float>(DType::kF32, {2}, {1.0f, 2.0f});
  auto exp = b.Op(OpCode::kExponential, {one}, DType::kF32, {2});       // vector polynomial: stays
  auto tanh = b.Op(OpCode::kTanh, {one}, DType::kF32, {2});             // stays
  auto pow = b.Op(OpCode::kPower, {one, one}, DType::kF32, {2});        // stays
  auto with_denormal = b.Constant<float>(DType::kF32, {2}, {denormal, 1.0f});
  auto denormal_sum = b.Op(OpCode::kAdd, {with_denormal, one}, DType::kF32, {2});  // flushed at run time: stays
  auto small = b.Constant<float>(DType::kF32, {2}, {tiny, 1.0f});
  auto underflow = b.Op(OpCode::kMultiply, {small, b.Constant<float>(DType::kF32, {2}, {0.5f, 1.0f})}, DType::kF32,
                        {2});  // a denormal product: stays
  auto fine = b.Op(OpCode::kMultiply, {one, one}, DType::kF32, {2});    // folds
  ir::Module module = b.Build({exp, tanh, pow, denormal_sum, underflow, fine});
  EXPECT_EQ(Folded(module, 1), R"(module @test {
  func.func public @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %0 = stablehlo.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
    %1 = stablehlo.exponential %0 : tensor<2xf32>
    %2 = stablehlo.tanh %0 : tensor<2xf32>
    %3 = stablehlo.power %0, %0 : tensor<2xf32>
    %4 = stablehlo.constant {value = dense<[1e-45, 1.0]> : tensor<2xf32>} : tensor<2xf32>
    %5 = stablehlo.add %4, %0 : tensor<2xf32>
    %6 = stablehlo.constant {value = dense<[1.1754944e-38, 1.0]> : tensor<2xf32>} : tensor<2xf32>
    %7 = stablehlo.constant {value = dense<[0.5, 1.0]> : tensor<2xf32>} : tensor<2xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<2xf32>
    %9 = stablehlo.constant {value = dense<[1.0, 4.0]> : tensor<2xf32>} : tensor<2xf32>
    stablehlo.return %1, %2, %3, %5, %8, %9 : tensor<2xf32>
  }
}
)");
}

TEST(FoldConstantsTest, ConvertsSaturateRoundToNearestEvenAndSkipDoubleRounding) {
  ModuleBuilder b;
  auto f = b.Constant<float>(DType::kF32, {5}, {3.0e9f, -3.0e9f, kNaN, -2.75f, 1.00048828125f});
  auto to_i32 = b.Op(OpCode::kConvert, {f}, DType::kS32, {5});    // saturates, NaN -> 0, truncates
  auto to_u8 = b.Op(OpCode::kConvert, {f}, DType::kU8, {5});
  auto to_pred = b.Op(OpCode::kConvert, {f}, DType::kPred, {5});  // NaN -> true
  auto finite = b.Constant<float>(DType::kF32, {3}, {1.00048828125f, 65520.0f, -1.0009765625f});
  auto to_f16 = b.Op(OpCode::kConvert, {finite}, DType::kF16, {3});    // ties to even; 65520 -> inf
  auto to_bf16 = b.Op(OpCode::kConvert, {finite}, DType::kBF16, {3});
  auto big = b.Constant<int64_t>(DType::kS64, {2}, {(int64_t{1} << 40) + 1, -5});
  auto big_to_bf16 = b.Op(OpCode::kConvert, {big}, DType::kBF16, {2});  // rounds twice at run time: stays
  auto wrapped = b.Op(OpCode::kConvert, {big}, DType::kS8, {2});
  auto d = b.Constant<double>(DType::kF64, {1}, {0.1});
  auto d_to_f16 = b.Op(OpCode::kConvert, {d}, DType::kF16, {1});       // through f32 at run time: stays
  ir::Module module = b.Build({to_i32, to_u8, to_pred, to_f16, to_bf16, big_to_bf16, wrapped, d_to_f16});
  EXPECT_EQ(Folded(module, 6), R"(module @test {
  func.func public @main() -> (tensor<5xi32>, tensor<5xui8>, tensor<5xi1>, tensor<3xf16>, tensor<3xbf16>, tensor<2xbf16>, tensor<2xi8>, tensor<1xf16>) {
    %1 = stablehlo.constant {value = dense<[2147483647, -2147483648, 0, -2, 1]> : tensor<5xi32>} : tensor<5xi32>
    %2 = stablehlo.constant {value = dense<[255, 0, 0, 0, 1]> : tensor<5xui8>} : tensor<5xui8>
    %3 = stablehlo.constant {value = dense<true> : tensor<5xi1>} : tensor<5xi1>
    %5 = stablehlo.constant {value = dense<[1.0, inf, -1.0009766]> : tensor<3xf16>} : tensor<3xf16>
    %6 = stablehlo.constant {value = dense<[1.0, 65536.0, -1.0]> : tensor<3xbf16>} : tensor<3xbf16>
    %7 = stablehlo.constant {value = dense<[1099511627777, -5]> : tensor<2xi64>} : tensor<2xi64>
    %8 = stablehlo.convert %7 : (tensor<2xi64>) -> tensor<2xbf16>
    %9 = stablehlo.constant {value = dense<[1, -5]> : tensor<2xi8>} : tensor<2xi8>
    %10 = stablehlo.constant {value = dense<[0.1]> : tensor<1xf64>} : tensor<1xf64>
    %11 = stablehlo.convert %10 : (tensor<1xf64>) -> tensor<1xf16>
    stablehlo.return %1, %2, %3, %5, %6, %8, %9, %11 : tensor<5xi32>, tensor<5xui8>, tensor<5xi1>, tensor<3xf16>, tensor<3xbf16>, tensor<2xbf16>, tensor<2xi8>, tensor<1xf16>
  }
}
)");
}

TEST(FoldConstantsTest, CompareSelectClampAndTotalOrder) {
  ModuleBuilder b;
  auto a = b.Constant<float>(DType::kF32, {4}, {-0.0f, kNaN, 1.0f, 2.0f});
  auto c = b.Constant<float>(DType::kF32, {4}, {0.0f, kNaN, 2.0f, 2.0f});
  auto eq = b.Op(OpCode::kCompare, {a, c}, DType::kPred, {4}, {{"comparison_direction", Direction(0)}});
  auto total_lt = b.Op(OpCode::kCompare, {a, c}, DType::kPred, {4},
                       {{"comparison_direction", Direction(5)},
                        {"compare_type", ModuleBuilder::Enum(ir::EnumKind::kComparisonType, 2)}});
  auto i = b.Constant<int32_t>(DType::kS32, {4}, {-5, 0, 5, 10});
  auto unsigned_i = b.Constant<uint32_t>(DType::kU32, {4}, {0xfffffffbu, 0, 5, 10});
  auto five = b.Constant<int32_t>(DType::kS32, {}, {5});
  auto five_u = b.Constant<uint32_t>(DType::kU32, {}, {5});
  auto zero = b.Constant<int32_t>(DType::kS32, {}, {0});
  auto clamped = b.Op(OpCode::kClamp, {zero, i, five}, DType::kS32, {4});  // rank-0 bounds
  auto lt_u = b.Op(OpCode::kCompare, {unsigned_i, b.Op(OpCode::kBroadcastInDim, {five_u}, DType::kU32, {4},
                                                      {{"broadcast_dimensions", ModuleBuilder::IntList({})}})},
                   DType::kPred, {4}, {{"comparison_direction", Direction(5)}});  // unsigned order
  auto chosen = b.Op(OpCode::kSelect, {lt_u, i, clamped}, DType::kS32, {4});
  ir::Module module = b.Build({eq, total_lt, chosen});
  EXPECT_EQ(Folded(module, 5), R"(module @test {
  func.func public @main() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi32>) {
    %2 = stablehlo.constant {value = dense<[true, false, false, true]> : tensor<4xi1>} : tensor<4xi1>
    %3 = stablehlo.constant {value = dense<[true, false, true, false]> : tensor<4xi1>} : tensor<4xi1>
    %12 = stablehlo.constant {value = dense<[0, 0, 5, 5]> : tensor<4xi32>} : tensor<4xi32>
    stablehlo.return %2, %3, %12 : tensor<4xi1>, tensor<4xi1>, tensor<4xi32>
  }
}
)");
}

TEST(FoldConstantsTest, DataMovementFoldsBroadcastsAndIotasStaySymbolic) {
  ModuleBuilder b;
  auto m = b.Constant<int32_t>(DType::kS32, {2, 3}, {0, 1, 2, 3, 4, 5});
  auto t = b.Op(OpCode::kTranspose, {m}, DType::kS32, {3, 2}, {{"permutation", ModuleBuilder::IntList({1, 0})}});
  auto flat = b.Op(OpCode::kReshape, {t}, DType::kS32, {6});
  auto sliced = b.Op(OpCode::kSlice, {flat}, DType::kS32, {2},
                     {{"start_indices", ModuleBuilder::IntList({1})},
                      {"limit_indices", ModuleBuilder::IntList({5})},
                      {"strides", ModuleBuilder::IntList({3})}});
  auto reversed = b.Op(OpCode::kReverse, {sliced}, DType::kS32, {2}, {{"dimensions", ModuleBuilder::IntList({0})}});
  auto iota = b.Op(OpCode::kIota, {}, DType::kS32, {3}, {{"iota_dimension", ModuleBuilder::Int(0)}});
  auto joined = b.Op(OpCode::kConcatenate, {reversed, iota}, DType::kS32, {5}, {{"dimension", ModuleBuilder::Int(0)}});
  auto seven = b.Op(OpCode::kBroadcastInDim, {b.Constant<int32_t>(DType::kS32, {}, {7})}, DType::kS32, {5},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto shifted = b.Op(OpCode::kAdd, {joined, seven}, DType::kS32, {5});
  auto x = b.Param(DType::kS32, {3});
  auto used_iota = b.Op(OpCode::kIota, {}, DType::kS32, {3}, {{"iota_dimension", ModuleBuilder::Int(0)}});
  ir::Module module = b.Build({shifted, seven, b.Op(OpCode::kMultiply, {x, used_iota}, DType::kS32, {3})});
  EXPECT_EQ(Folded(module, 6), R"(module @test {
  func.func public @main(%10: tensor<3xi32>) -> (tensor<5xi32>, tensor<5xi32>, tensor<3xi32>) {
    %7 = stablehlo.constant {value = dense<7> : tensor<i32>} : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %7 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<i32>) -> tensor<5xi32>
    %9 = stablehlo.constant {value = dense<[9, 10, 7, 8, 9]> : tensor<5xi32>} : tensor<5xi32>
    %11 = stablehlo.iota {iota_dimension = 0 : i64} : tensor<3xi32>
    %12 = stablehlo.multiply %10, %11 : tensor<3xi32>
    stablehlo.return %9, %8, %12 : tensor<5xi32>, tensor<5xi32>, tensor<3xi32>
  }
}
)");
}

ir::ValueId Reduce(ModuleBuilder& b, OpCode body, ir::ValueId input, ir::ValueId init, DType dtype, Dims dims,
                   std::vector<int64_t> reduced) {
  std::vector<ir::Region> regions;
  regions.push_back(b.BinaryBody(body, dtype));
  return b.Op(OpCode::kReduce, {input, init}, dtype, std::move(dims),
              {{"dimensions", ModuleBuilder::IntList(reduced)}}, std::move(regions));
}

TEST(FoldConstantsTest, ReducesFoldWhenTheOrderCannotMatter) {
  ModuleBuilder b;
  auto ints = b.Constant<int32_t>(DType::kS32, {2, 3}, {2147483647, 1, 2, 3, 4, 5});
  auto int_sum = Reduce(b, OpCode::kAdd, ints, b.Constant<int32_t>(DType::kS32, {}, {0}), DType::kS32, {2}, {1});
  auto int_max = Reduce(b, OpCode::kMaximum, ints, b.Constant<int32_t>(DType::kS32, {}, {100}), DType::kS32, {3}, {0});
  auto exact = b.Constant<float>(DType::kF32, {4}, {0.5f, 1024.0f, -3.25f, 0.125f});
  auto exact_sum = Reduce(b, OpCode::kAdd, exact, b.Constant<float>(DType::kF32, {}, {0.0f}), DType::kF32, {}, {0});
  auto exact_product =
      Reduce(b, OpCode::kMultiply, exact, b.Constant<float>(DType::kF32, {}, {1.0f}), DType::kF32, {}, {0});
  auto inexact = b.Constant<float>(DType::kF32, {3}, {1.0e8f, 1.0f, -1.0e8f});  // the order decides: stays
  auto inexact_sum = Reduce(b, OpCode::kAdd, inexact, b.Constant<float>(DType::kF32, {}, {0.0f}), DType::kF32, {}, {0});
  auto seeded_sum =  // an init that is not the identity may be applied more than once: stays
      Reduce(b, OpCode::kAdd, ints, b.Constant<int32_t>(DType::kS32, {}, {1}), DType::kS32, {2}, {1});
  ir::Module module = b.Build({int_sum, int_max, exact_sum, exact_product, inexact_sum, seeded_sum});
  EXPECT_EQ(Folded(module, 4), R"(module @test {
  func.func public @main() -> (tensor<2xi32>, tensor<3xi32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<2xi32>) {
    %0 = stablehlo.constant {value = dense<[[2147483647, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>} : tensor<2x3xi32>
    %5 = stablehlo.constant {value = dense<[-2147483646, 12]> : tensor<2xi32>} : tensor<2xi32>
    %10 = stablehlo.constant {value = dense<[2147483647, 100, 100]> : tensor<3xi32>} : tensor<3xi32>
    %16 = stablehlo.constant {value = dense<1021.375> : tensor<f32>} : tensor<f32>
    %21 = stablehlo.constant {value = dense<-208.0> : tensor<f32>} : tensor<f32>
    %22 = stablehlo.constant {value = dense<[1e+08, 1.0, -1e+08]> : tensor<3xf32>} : tensor<3xf32>
    %23 = stablehlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
    %27 = stablehlo.reduce %22, %23 {dimensions = dense<[0]> : tensor<1xi64>} ({
    ^bb0(%24: tensor<f32>, %25: tensor<f32>):
      %26 = stablehlo.add %24, %25 : tensor<f32>
      stablehlo.return %26 : tensor<f32>
    }) : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %28 = stablehlo.constant {value = dense<1> : tensor<i32>} : tensor<i32>
    %32 = stablehlo.reduce %0, %28 {dimensions = dense<[1]> : tensor<1xi64>} ({
    ^bb0(%29: tensor<i32>, %30: tensor<i32>):
      %31 = stablehlo.add %29, %30 : tensor<i32>
      stablehlo.return %31 : tensor<i32>
    }) : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
    stablehlo.return %5, %10, %16, %21, %27, %32 : tensor<2xi32>, tensor<3xi32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<2xi32>
  }
}
)");
}

TEST(FoldConstantsTest, LargeIotasBroadcastsAndRandomBitsStaySymbolic) {
  // A million-element iota times a broadcast constant, and random bits from a constant
  // state, are never computed at compile time; large splats stay splats.
  ModuleBuilder b;
  const int64_t n = 1 << 20;
  auto iota = b.Op(OpCode::kIota, {}, DType::kF32, {n}, {{"iota_dimension", ModuleBuilder::Int(0)}});
  auto two = b.Op(OpCode::kBroadcastInDim, {b.Constant<float>(DType::kF32, {}, {2.0f})}, DType::kF32, {n},
                  {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto scaled = b.Op(OpCode::kMultiply, {iota, two}, DType::kF32, {n});
  auto state = b.Constant<uint64_t>(DType::kU64, {2}, {1, 2});
  auto bits = b.OpN(OpCode::kRngBitGenerator, {state},
                    {ir::Type::Tensor(DType::kU64, {2}), ir::Type::Tensor(DType::kU32, {4})},
                    {{"rng_algorithm", ModuleBuilder::Enum(ir::EnumKind::kRngAlgorithm, 1)}});
  auto splat = std::make_shared<ir::ElementsData>();
  splat->type = ir::Type::Tensor(DType::kF32, {n});
  splat->bytes.resize(4);
  const float three = 3.0f;
  std::memcpy(splat->bytes.data(), &three, 4);
  splat->splat = true;
  auto big = b.Op(OpCode::kConstant, {}, DType::kF32, {n}, {{"value", ir::Attribute(ir::Attribute::Elements(splat))}});
  auto squared = b.Op(OpCode::kMultiply, {big, big}, DType::kF32, {n});  // one element computed, kept a splat
  ir::Module module = b.Build({scaled, bits[1], squared});
  EXPECT_EQ(Folded(module, 1), R"(module @test {
  func.func public @main() -> (tensor<1048576xf32>, tensor<4xui32>, tensor<1048576xf32>) {
    %0 = stablehlo.iota {iota_dimension = 0 : i64} : tensor<1048576xf32>
    %1 = stablehlo.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1 {broadcast_dimensions = dense<[]> : tensor<0xi64>} : (tensor<f32>) -> tensor<1048576xf32>
    %3 = stablehlo.multiply %0, %2 : tensor<1048576xf32>
    %4 = stablehlo.constant {value = dense<[1, 2]> : tensor<2xui64>} : tensor<2xui64>
    %5, %6 = stablehlo.rng_bit_generator %4 {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
    %8 = stablehlo.constant {value = dense<9.0> : tensor<1048576xf32>} : tensor<1048576xf32>
    stablehlo.return %3, %6, %8 : tensor<1048576xf32>, tensor<4xui32>, tensor<1048576xf32>
  }
}
)");
  const auto& folded = ResultValues<float>(module, 2);
  EXPECT_EQ(folded.size(), static_cast<size_t>(n));
}

TEST(FoldConstantsTest, BoundOnMaterializedResults) {
  // Just within the bound folds; one element more stays.
  for (int64_t n : {kMaxFoldedElements, kMaxFoldedElements + 1}) {
    ModuleBuilder b;
    auto iota = b.Op(OpCode::kIota, {}, DType::kS32, {n}, {{"iota_dimension", ModuleBuilder::Int(0)}});
    auto one = b.Op(OpCode::kBroadcastInDim, {b.Constant<int32_t>(DType::kS32, {}, {1})}, DType::kS32, {n},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
    ir::Module module = b.Build({b.Op(OpCode::kAdd, {iota, one}, DType::kS32, {n})});
    EXPECT_EQ(FoldConstants(module), n <= kMaxFoldedElements ? 1 : 0) << n;
    if (n <= kMaxFoldedElements) {
      std::vector<int32_t> values = ResultValues<int32_t>(module, 0);
      ASSERT_EQ(values.size(), static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(values[static_cast<size_t>(i)], i + 1);
    }
  }
}

TEST(FoldConstantsTest, CompileTimeDoesNotGrowWithTheData) {
  // jnp.arange(10**7) * 3 + a broadcast, over 10^7 elements: nothing is computed.
  ModuleBuilder b;
  const int64_t n = 10'000'000;
  auto iota = b.Op(OpCode::kIota, {}, DType::kS32, {n}, {{"iota_dimension", ModuleBuilder::Int(0)}});
  auto three = b.Op(OpCode::kBroadcastInDim, {b.Constant<int32_t>(DType::kS32, {}, {3})}, DType::kS32, {n},
                    {{"broadcast_dimensions", ModuleBuilder::IntList({})}});
  auto wide = b.Op(OpCode::kBroadcastInDim, {b.Constant<int32_t>(DType::kS32, {1}, {5})}, DType::kS32, {1000, n / 1000},
                   {{"broadcast_dimensions", ModuleBuilder::IntList({0})}});
  auto product = b.Op(OpCode::kMultiply, {iota, three}, DType::kS32, {n});
  auto flat = b.Op(OpCode::kReshape, {wide}, DType::kS32, {n});
  ir::Module module = b.Build({b.Op(OpCode::kAdd, {product, flat}, DType::kS32, {n})});
  const std::string before = ir::PrintModule(module);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(FoldConstants(module), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 0.01);
  EXPECT_EQ(ir::PrintModule(module), before);
}

TEST(FoldConstantsTest, EffectsCallsAndLoopsAreLeftAlone) {
  ModuleBuilder b;
  auto c = b.Constant<int32_t>(DType::kS32, {}, {1});
  auto call = b.OpN(OpCode::kCustomCall, {c}, {ir::Type::Tensor(DType::kS32, {})},
                    {{"call_target_name", ir::Attribute(std::string("host_callback"))}});
  auto after = b.Op(OpCode::kAdd, {call[0], c}, DType::kS32, {});  // reads the call: stays
  // Inside a loop body, constant subexpressions fold; the carried value does not.
  auto loop = b.While(
      {c},
      [&](const std::vector<ir::ValueId>& args) {
        return b.Op(OpCode::kCompare, {args[0], c}, DType::kPred, {}, {{"comparison_direction", Direction(5)}});
      },
      [&](const std::vector<ir::ValueId>& args) {
        auto two = b.Op(OpCode::kAdd, {c, c}, DType::kS32, {});
        return std::vector<ir::ValueId>{b.Op(OpCode::kAdd, {args[0], two}, DType::kS32, {})};
      });
  ir::Module module = b.Build({after, loop[0]});
  EXPECT_EQ(Folded(module, 1), R"(module @test {
  func.func public @main() -> (tensor<i32>, tensor<i32>) {
    %0 = stablehlo.constant {value = dense<1> : tensor<i32>} : tensor<i32>
    %1 = stablehlo.custom_call %0 {call_target_name = "host_callback"} : tensor<i32>
    %2 = stablehlo.add %1, %0 : tensor<i32>
    %8 = stablehlo.while %0 ({
    ^bb0(%3: tensor<i32>):
      %4 = stablehlo.compare %3, %0 {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    }, {
    ^bb0(%5: tensor<i32>):
      %6 = stablehlo.constant {value = dense<2> : tensor<i32>} : tensor<i32>
      %7 = stablehlo.add %5, %6 : tensor<i32>
      stablehlo.return %7 : tensor<i32>
    }) : tensor<i32>
    stablehlo.return %2, %8 : tensor<i32>
  }
}
)");
}

TEST(FoldConstantsTest, HalfPrecisionComputesInF32AndRoundsOnce) {
  ModuleBuilder b;
  // f16 1 + 2^-11 rounds to even (1.0); 1 + 3 2^-11 rounds up; bf16 likewise at 2^-8.
  auto h = b.Constant<uint16_t>(DType::kF16, {3}, {0x3c00, 0x3c00, 0x7bff});    // 1, 1, 65504
  auto e = b.Constant<uint16_t>(DType::kF16, {3}, {0x1000, 0x1600, 0x5000});    // 2^-11, 3 2^-11, 32
  auto sum = b.Op(OpCode::kAdd, {h, e}, DType::kF16, {3});                        // 1, 1 + 2^-9... , inf
  auto sub = b.Constant<uint16_t>(DType::kF16, {1}, {0x0001});                    // subnormal: stays
  auto sub_sum = b.Op(OpCode::kAdd, {sub, sub}, DType::kF16, {1});
  auto bh = b.Constant<uint16_t>(DType::kBF16, {2}, {0x3f80, 0x3f80});           // 1, 1
  auto be = b.Constant<uint16_t>(DType::kBF16, {2}, {0x3b80, 0x3c40});           // 2^-8, 3 2^-8
  auto bsum = b.Op(OpCode::kAdd, {bh, be}, DType::kBF16, {2});
  ir::Module module = b.Build({sum, sub_sum, bsum});
  ASSERT_EQ(FoldConstants(module), 2);
  EXPECT_EQ(ResultValues<uint16_t>(module, 0), (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7c00}));
  EXPECT_TRUE(ResultValues<uint16_t>(module, 1).empty());
  EXPECT_EQ(ResultValues<uint16_t>(module, 2), (std::vector<uint16_t>{0x3f80, 0x3f82}));
}

TEST(FoldConstantsTest, TheCallersFloatingPointModeDoesNotMatter) {
  // With denormals flushed on the calling thread (as on the executor's threads), a denormal
  // operand or result is still recognised and left to run time.
  auto build = [] {
    ModuleBuilder b;
    auto a = b.Constant<float>(DType::kF32, {2}, {1.0f, std::numeric_limits<float>::denorm_min()});
    auto c = b.Constant<float>(DType::kF32, {2}, {3.0e38f, 1.0f});
    return b.Build({b.Op(OpCode::kDivide, {a, c}, DType::kF32, {2})});
  };
  ir::Module plain = build();
  EXPECT_EQ(FoldConstants(plain), 0);
#if defined(__x86_64__)
  ir::Module flushed = build();
  const unsigned saved = __builtin_ia32_stmxcsr();
  __builtin_ia32_ldmxcsr(saved | 0x8040);  // FTZ | DAZ
  const int folds = FoldConstants(flushed);
  const unsigned after = __builtin_ia32_stmxcsr();
  __builtin_ia32_ldmxcsr(saved);
  EXPECT_EQ(folds, 0);
  EXPECT_EQ(after, saved | 0x8040);  // restored
#endif
}

TEST(FoldConstantsTest, InconsistentAttributesAreLeftToTheVerifier) {
  // Never verified here: the pass must neither crash nor fold what it cannot index.
  ModuleBuilder b;
  auto m = b.Constant<int32_t>(DType::kS32, {2, 2}, {1, 2, 3, 4});
  auto bad_transpose = b.Op(OpCode::kTranspose, {m}, DType::kS32, {2, 2}, {{"permutation", ModuleBuilder::IntList({0, 0})}});
  auto bad_slice = b.Op(OpCode::kSlice, {m}, DType::kS32, {2, 2},
                        {{"start_indices", ModuleBuilder::IntList({1, 0})},
                         {"limit_indices", ModuleBuilder::IntList({3, 2})},
                         {"strides", ModuleBuilder::IntList({1, 1})}});
  auto no_dimension = b.Op(OpCode::kConcatenate, {m, m}, DType::kS32, {4, 2});
  auto bad_compare = b.Op(OpCode::kCompare, {m, m}, DType::kPred, {2, 2});  // no direction
  auto short_operand = b.Op(OpCode::kAdd, {m, b.Constant<int32_t>(DType::kS32, {3}, {1, 2, 3})}, DType::kS32, {2, 2});
  ir::Module module = b.Build({bad_transpose, bad_slice, no_dimension, bad_compare, short_operand});
  EXPECT_EQ(FoldConstants(module), 0);
}

TEST(FoldConstantsTest, Deterministic) {
  auto build = [] {
    ModuleBuilder b;
    auto a = b.Constant<int32_t>(DType::kS32, {3}, {1, 2, 3});
    auto t = b.Op(OpCode::kMultiply, {a, a}, DType::kS32, {3});
    return b.Build({b.Op(OpCode::kSubtract, {t, a}, DType::kS32, {3})});
  };
  ir::Module first = build(), second = build();
  EXPECT_EQ(FoldConstants(first), FoldConstants(second));
  EXPECT_EQ(ir::PrintModule(first), ir::PrintModule(second));
}

}  // namespace
}  // namespace stablert::passes
