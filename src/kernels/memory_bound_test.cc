// The vector and split paths of the memory-bound kernels against their scalar definitions:
// conversions (simd/convert_simd.h), compare/select/clamp (simd/compare_select_simd.h) and
// argmax/argmin (argminmax.h) at every ISA level the CPU has, and splittable kernels called
// as 1, 2 or 3 calls of one step giving the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/argminmax.h"
#include "kernels/data_movement_params.h"
#include "kernels/half.h"
#include "kernels/kernel_test_util.h"
#include "kernels/program_params.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/compare_select_simd.h"
#include "kernels/simd/convert_simd.h"
#include "kernels/simd/dispatch.h"
#include "kernels/slicing_params.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::ArrayOf;

const env::Isa kLevels[] = {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest};

class MemoryBoundTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// Random f32 bit patterns plus the rounding and range boundaries of the conversions.
std::vector<float> FloatPatterns(size_t n) {
  std::mt19937 rng(1);
  std::vector<uint32_t> bits = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffbfffffu,
                                0x477ff000u, 0x477fefffu, 0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u,
                                0x4f000000u, 0xcf000000u, 0x4effffffu, 0xcf000001u, 0x7f7fffffu, 1u, 0x807fffffu,
                                0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x3f817fffu};
  while (bits.size() < n) bits.push_back(static_cast<uint32_t>(rng()));
  std::vector<float> out(bits.size());
  std::memcpy(out.data(), bits.data(), bits.size() * 4);
  return out;
}

int32_t FloatToS32(float x) {
  if (std::isnan(x)) return 0;
  if (x <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(x);
}

TEST_F(MemoryBoundTest, ConversionsMatchTheScalarOnesAtEveryLevel) {
  const std::vector<float> f = FloatPatterns(1 << 18);
  std::vector<uint16_t> halves(1 << 16);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  const auto n = static_cast<int64_t>(f.size());
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    std::vector<uint16_t> h(f.size());
    simd::F32ToBF16(f.data(), h.data(), n);
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(h[i], FloatToBF16(f[i]).bits) << target << " bf16 of bits " << std::bit_cast<uint32_t>(f[i]);
    simd::F32ToF16(f.data(), h.data(), n);
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(h[i], FloatToF16(f[i]).bits) << target << " f16 of bits " << std::bit_cast<uint32_t>(f[i]);
    std::vector<int32_t> s(f.size());
    simd::F32ToS32(f.data(), s.data(), n);
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(s[i], FloatToS32(f[i])) << target << " s32 of " << f[i];
    std::vector<float> back(f.size());
    std::vector<int32_t> ints(f.size());
    std::memcpy(ints.data(), f.data(), f.size() * 4);
    simd::S32ToF32(ints.data(), back.data(), n);
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(back[i], static_cast<float>(ints[i])) << target;
    std::vector<double> wide(f.size());
    simd::F32ToF64(f.data(), wide.data(), n);
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint64_t>(wide[i]), std::bit_cast<uint64_t>(static_cast<double>(f[i]))) << target;
    for (double& w : wide) w = w * 1.000000123 + 1e-310;  // values between floats, denormal doubles
    simd::F64ToF32(wide.data(), back.data(), n);
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(static_cast<float>(wide[i]))) << target;
    std::vector<float> from_half(halves.size());
    simd::F16ToF32(halves.data(), from_half.data(), static_cast<int64_t>(halves.size()));
    for (size_t i = 0; i < halves.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(from_half[i]), std::bit_cast<uint32_t>(F16ToFloat(F16{halves[i]})))
          << target << " f16 bits " << i;
    simd::BF16ToF32(halves.data(), from_half.data(), static_cast<int64_t>(halves.size()));
    for (size_t i = 0; i < halves.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(from_half[i]), std::bit_cast<uint32_t>(BF16ToFloat(BF16{halves[i]})))
          << target;
  }
}

TEST_F(MemoryBoundTest, CompareSelectClampMatchTheScalarOnesAtEveryLevel) {
  std::vector<float> a = FloatPatterns(100003), b = FloatPatterns(100003);
  std::shuffle(b.begin(), b.end(), std::mt19937(2));
  for (size_t i = 0; i < a.size(); i += 7) b[i] = a[i];
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  std::vector<int32_t> ai(a.size()), bi(a.size());
  for (size_t i = 0; i < a.size(); ++i) ai[i] = static_cast<int32_t>(i % 13) - 6, bi[i] = static_cast<int32_t>(i % 11) - 5;
  const auto n = static_cast<int64_t>(a.size());
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    std::vector<uint8_t> out(a.size());
    for (int direction = 0; direction < 6; ++direction) {
      simd::Compare(direction, a.data(), b.data(), out.data(), n);
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(out[i], ops::CompareValues(a[i], b[i], direction, false)) << target << " f32 dir " << direction;
      simd::Compare(direction, ad.data(), bd.data(), out.data(), n);
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(out[i], ops::CompareValues(ad[i], bd[i], direction, false)) << target << " f64 dir " << direction;
      simd::Compare(direction, ai.data(), bi.data(), out.data(), n);
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(out[i], ops::CompareValues(ai[i], bi[i], direction, false)) << target << " s32 dir " << direction;
    }
    std::vector<uint8_t> pred(a.size());
    for (size_t i = 0; i < a.size(); ++i) pred[i] = static_cast<uint8_t>((i * 2654435761u) >> 7 & 3);  // 0..3
    std::vector<uint64_t> t64(a.size()), f64(a.size()), o64(a.size());
    for (size_t i = 0; i < a.size(); ++i) t64[i] = i * 0x9e3779b97f4a7c15ull, f64[i] = ~t64[i];
    simd::Select(pred.data(), t64.data(), f64.data(), o64.data(), n);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(o64[i], pred[i] ? t64[i] : f64[i]) << target;
    std::vector<uint16_t> t16(a.size()), f16(a.size()), o16(a.size());
    for (size_t i = 0; i < a.size(); ++i) t16[i] = static_cast<uint16_t>(t64[i]), f16[i] = static_cast<uint16_t>(f64[i]);
    simd::Select(pred.data(), t16.data(), f16.data(), o16.data(), n);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(o16[i], pred[i] ? t16[i] : f16[i]) << target;
    std::vector<uint8_t> t8(a.size()), f8(a.size()), o8(a.size());
    for (size_t i = 0; i < a.size(); ++i) t8[i] = static_cast<uint8_t>(t64[i]), f8[i] = static_cast<uint8_t>(f64[i]);
    simd::Select(pred.data(), t8.data(), f8.data(), o8.data(), n);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(o8[i], pred[i] ? t8[i] : f8[i]) << target;
    std::vector<float> clamped(a.size());
    simd::Clamp(b.data(), 1, a.data(), a.data(), 1, clamped.data(), n);  // lo = b, hi = a (often lo > hi)
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(clamped[i]), std::bit_cast<uint32_t>(ops::ClampOne(b[i], a[i], a[i])))
          << target << " clamp " << b[i] << " " << a[i];
    const float lo = -0.0f, hi = 1e-40f;  // a signed zero and a denormal bound
    simd::Clamp(&lo, 0, a.data(), &hi, 0, clamped.data(), n);
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(clamped[i]), std::bit_cast<uint32_t>(ops::ClampOne(lo, a[i], hi))) << target;
    std::vector<double> clamped_d(a.size());
    simd::Clamp(bd.data(), 1, ad.data(), ad.data(), 1, clamped_d.data(), n);
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint64_t>(clamped_d[i]), std::bit_cast<uint64_t>(ops::ClampOne(bd[i], ad[i], ad[i])))
          << target;
  }
}

// JAX's argmax (gt) or argmin (lt) body over (value, index) registers, as the plan encodes it
// (scalar_program.h). `disguised` adds a redundant and(p, p), which the recognizer does not
// accept: the step then runs on the body interpreter, the reference here.
std::vector<int64_t> ArgBody(DType value, DType index, bool is_max, bool disguised) {
  const auto v = static_cast<int64_t>(value), i = static_cast<int64_t>(index), p = static_cast<int64_t>(DType::kPred);
  const int64_t index_type = 3;  // SIGNED
  std::vector<int64_t> code = {1, disguised ? 14 : 13, v, i, v, i, p, p, p, p, p, p, p, v, i};
  if (disguised) code.push_back(p);
  code.insert(code.end(), {4, 0, disguised ? 10 : 9});
  code.insert(code.end(), {70, 4, 0, 2, 0, (is_max ? 3 : 5) * 8 + 1});  // v > w (v < w)
  code.insert(code.end(), {70, 5, 0, 0, 0, 1 * 8 + 1});                 // v != v
  code.insert(code.end(), {50, 6, 4, 5, 0, 0});
  code.insert(code.end(), {70, 7, 0, 2, 0, 0 * 8 + 1});  // v == w
  code.insert(code.end(), {70, 8, 1, 3, 0, 5 * 8 + index_type});  // i < j
  code.insert(code.end(), {49, 9, 7, 8, 0, 0});
  code.insert(code.end(), {50, 10, 6, 9, 0, 0});
  if (disguised) code.insert(code.end(), {49, 13, 10, 10, 0, 0});
  code.insert(code.end(), {71, 11, 6, 0, 2, 0});
  code.insert(code.end(), {71, 12, disguised ? 13 : 10, 1, 3, 0});
  code.insert(code.end(), {2, 11, 12});
  return code;
}

// Runs `key` as `calls` calls of one step (thread_index 0 .. calls-1, one after another),
// with the parameter struct `params`.
void RunCalls(const std::string& key, const std::vector<const Array*>& inputs, const std::vector<Array*>& outputs,
              const KernelParams& params, int calls) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << key;
  ASSERT_TRUE(calls == 1 || entry->splittable) << key << " is not splittable";
  std::vector<BufferView> in, out;
  for (const Array* a : inputs) in.push_back(a->View());
  for (Array* a : outputs) out.push_back(a->View());
  ASSERT_EQ(entry->params, params.type()) << key << " takes other parameters than " << params.family();
  KernelArgs args{in, out, params.get()};
  KernelState state;
  if (entry->prepare != nullptr) {
    auto prepared = entry->prepare(args);
    ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
    state = prepared->state;
    args.state = state.get();
  }
  for (int t = 0; t < calls; ++t) ASSERT_TRUE(entry->fn(KernelContext{t, calls}, args).ok()) << key;
}


template <typename V, typename I>
void CheckArg(DType vd, DType id, const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced, bool is_max,
              const std::string& target) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::mt19937 rng(static_cast<uint32_t>(count + dims.size()));
  std::vector<V> x(static_cast<size_t>(count));
  std::vector<I> idx(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    const uint32_t r = rng();
    x[k] = static_cast<V>(static_cast<int>(r % 9) - 4);  // many ties
    if (r % 11 == 0) x[k] = -V(0);
    if (r % 997 == 0) x[k] = std::numeric_limits<V>::infinity();
    if (r % 4999 == 0) x[k] = std::numeric_limits<V>::quiet_NaN();
    idx[k] = static_cast<I>(rng() % 1000) - 300;  // any indices, not an iota
  }
  if (count > 200) {
    for (size_t k = 0; k < 40; ++k) x[k] = V(0);  // a row of zeros of both signs
    for (size_t k = 0; k < 40; k += 3) x[k] = -V(0);
  }
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) out_dims.push_back(dims[d]);
  const Array xa = ArrayOf(vd, dims, x), ia = ArrayOf(id, dims, idx);
  for (V init : {is_max ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity(), V(0)}) {
    const Array init_v = ArrayOf(vd, {}, std::vector<V>{init}), init_i = ArrayOf(id, {}, std::vector<I>{5});
    Array want_v(vd, out_dims), want_i(id, out_dims);
    RunCalls("reduce_program", {&xa, &ia, &init_v, &init_i}, {&want_v, &want_i},
             ReduceProgramParams{.dimensions = reduced, .body = ArgBody(vd, id, is_max, /*disguised=*/true)}, 1);
    for (int calls : {1, 2, 3}) {
      Array got_v(vd, out_dims), got_i(id, out_dims);
      RunCalls("reduce_program", {&xa, &ia, &init_v, &init_i}, {&got_v, &got_i},
               ReduceProgramParams{.dimensions = reduced, .body = ArgBody(vd, id, is_max, false)}, calls);
      ASSERT_EQ(got_v.bytes, want_v.bytes) << target << " values, calls " << calls << " init " << init;
      ASSERT_EQ(got_i.bytes, want_i.bytes) << target << " indices, calls " << calls << " init " << init;
    }
  }
}

TEST_F(MemoryBoundTest, RecognizesArgMinMaxBodiesOnly) {
  EXPECT_EQ(MatchArgMinMaxBody(ArgBody(DType::kF32, DType::kS32, true, false)), ArgKind::kArgMax);
  EXPECT_EQ(MatchArgMinMaxBody(ArgBody(DType::kF32, DType::kS32, false, false)), ArgKind::kArgMin);
  EXPECT_EQ(MatchArgMinMaxBody(ArgBody(DType::kF64, DType::kS64, true, false)), ArgKind::kArgMax);
  EXPECT_EQ(MatchArgMinMaxBody(ArgBody(DType::kF32, DType::kS32, true, true)), ArgKind::kNone);
  EXPECT_EQ(MatchArgMinMaxBody(ArgBody(DType::kS32, DType::kS32, true, false)), ArgKind::kNone);  // int values
  // The value select taking the index-pick predicate is a different body.
  std::vector<int64_t> swapped = ArgBody(DType::kF32, DType::kS32, true, false);
  const std::vector<int64_t> select_value = {71, 11, 6, 0, 2, 0};
  auto at = std::search(swapped.begin(), swapped.end(), select_value.begin(), select_value.end());
  ASSERT_NE(at, swapped.end());
  at[2] = 10;
  EXPECT_EQ(MatchArgMinMaxBody(swapped), ArgKind::kNone);
  // A TOTALORDER comparison is a different body.
  std::vector<int64_t> total = ArgBody(DType::kF32, DType::kS32, true, false);
  const std::vector<int64_t> gt = {70, 4, 0, 2, 0, 3 * 8 + 1};
  at = std::search(total.begin(), total.end(), gt.begin(), gt.end());
  ASSERT_NE(at, total.end());
  at[5] = 3 * 8 + 2;
  EXPECT_EQ(MatchArgMinMaxBody(total), ArgKind::kNone);
}

TEST_F(MemoryBoundTest, ArgMinMaxMatchesTheBodyInterpreter) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> layouts = {
      {{4099}, {0}}, {{37, 301}, {1}}, {{301, 37}, {0}}, {{5, 67, 41}, {1}}, {{3, 5, 131}, {2}},
      {{64, 1}, {0}}, {{6, 7}, {0, 1}}, {{3, 4, 5}, {0, 2}}};
  for (env::Isa level : kLevels) {
    if (!simd::CpuHas(level)) continue;
    ASSERT_TRUE(simd::SetIsa(level).ok());
    const std::string target = simd::CurrentTarget();
    for (const auto& [dims, reduced] : layouts) {
      for (bool is_max : {true, false}) {
        SCOPED_TRACE(target + (is_max ? " argmax" : " argmin") + " dims " + std::to_string(dims.size()));
        CheckArg<float, int32_t>(DType::kF32, DType::kS32, dims, reduced, is_max, target);
        CheckArg<double, int64_t>(DType::kF64, DType::kS64, dims, reduced, is_max, target);
        CheckArg<float, int64_t>(DType::kF32, DType::kS64, dims, reduced, is_max, target);
      }
    }
  }
}

// Splittable copies: 2 and 3 calls write the same bytes as one.
TEST_F(MemoryBoundTest, SplitCopiesMatchOneCall) {
  std::vector<float> values(3 * 41 * 67);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  const Array x = ArrayOf(DType::kF32, {3, 41, 67}, values);
  const Array x2d = ArrayOf(DType::kF32, {41, 67}, values);
  const Array row = ArrayOf(DType::kF32, {67}, values);
  const Array x1d = ArrayOf(DType::kF32, {4099}, values);
  const Array pad_value = ArrayOf(DType::kF32, {}, std::vector<float>{-1.0f});
  struct Case {
    std::string key;
    std::vector<const Array*> inputs;
    Dims out_dims;
    KernelParams params;
  };
  const std::vector<Case> cases = {
      {"broadcast_in_dim.f32", {&row}, {41, 3, 67}, BroadcastInDimParams{.dimensions = {2}}},
      {"broadcast_in_dim.f32", {&x2d}, {41, 5, 67}, BroadcastInDimParams{.dimensions = {0, 2}}},
      {"broadcast_in_dim.f32", {&pad_value}, {4099}, BroadcastInDimParams{}},
      {"slice.f32", {&x}, {2, 20, 30}, SliceParams{.start = {1, 1, 5}, .limit = {3, 41, 65}, .stride = {1, 2, 2}}},
      {"slice.f32", {&x1d}, {4000}, SliceParams{.start = {50}, .limit = {4050}, .stride = {1}}},
      {"concatenate.f32", {&x, &x}, {3, 82, 67}, ConcatenateParams{.dimension = 1}},
      {"concatenate.f32", {&x2d, &x2d, &x2d}, {41, 201}, ConcatenateParams{.dimension = 1}},
      {"pad.f32", {&x, &pad_value}, {5, 83, 64},
       PadParams{.low = {1, 2, -1}, .high = {1, 0, -1}, .interior = {0, 1, 0}}},
      {"pad.f32", {&x2d, &pad_value}, {30, 70}, PadParams{.low = {-10, 3}, .high = {-2, 0}, .interior = {0, 0}}},
      {"reverse.f32", {&x}, {3, 41, 67}, ReverseParams{.dimensions = {0, 2}}},
      {"reverse.f32", {&x1d}, {4099}, ReverseParams{.dimensions = {0}}},
      {"copy.f32", {&x1d}, {4099}, {}},
      {"iota.f32", {}, {41, 67}, IotaParams{.dimension = 1}},
      {"iota.f32", {}, {3, 41, 67}, IotaParams{.dimension = 1}},
      {"transpose.f32", {&x}, {67, 3, 41}, TransposeParams{.permutation = {2, 0, 1}}},
      {"convert.f32.bf16", {&x1d}, {4099}, {}},
  };
  for (const Case& c : cases) {
    const DType out_dtype = c.key == "convert.f32.bf16" ? DType::kBF16 : DType::kF32;
    Array want(out_dtype, c.out_dims);
    RunCalls(c.key, c.inputs, {&want}, c.params, 1);
    for (int calls : {2, 3}) {
      Array got(out_dtype, c.out_dims);
      RunCalls(c.key, c.inputs, {&got}, c.params, calls);
      EXPECT_EQ(got.bytes, want.bytes) << c.key << " in " << calls << " calls";
    }
  }
  // reverse along the last dim against its definition.
  Array reversed(DType::kF32, {4099});
  RunCalls("reverse.f32", {&x1d}, {&reversed}, ReverseParams{.dimensions = {0}}, 2);
  for (int64_t i = 0; i < 4099; ++i)
    ASSERT_EQ(testing::ElementAt<float>(reversed, i), values[static_cast<size_t>(4098 - i)]);
}

}  // namespace
}  // namespace stablert::kernels
