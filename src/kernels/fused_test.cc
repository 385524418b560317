// The "fused" kernel: equals running its sub-ops one by one (and the reduce kernel), across
// tile boundaries, thread splits, strided and repeated inputs, and element types.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/compare_params.h"
#include "kernels/fused_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/reduce_params.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::RunKernel;

bool FloatType(DType d) { return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64; }

Array RandomArray(DType dtype, Dims dims, uint32_t seed) {
  Array a(dtype, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-4, 4);
  std::uniform_int_distribution<int> small(0, 60);
  for (int64_t i = 0; i < a.size(); ++i) {
    if (FloatType(dtype)) testing::SetDouble(a, i, real(rng));
    else testing::SetInt(a, i, small(rng));
  }
  return a;
}

// Runs the fused step with `threads` calls (each with its own workspace), as the executor
// would.
void RunFused(const FusedParams& params, const std::vector<BufferView>& inputs, const std::vector<Array*>& outputs,
              int threads) {
  testing::RunKernelSplit("fused", &params, inputs, outputs, threads);
}

FusedOp Op(std::string kernel, std::vector<int64_t> in, int64_t out, KernelParams params = {}) {
  FusedOp op{std::move(kernel), std::move(in), out, params, params.ToString()};
  return op;
}

// t = a * b; u = t + a; c = u > s; v = select(c, u, b); w = convert(v) to f32
// with a dense, b a broadcast of one row (strides [0, 1]) and s one repeated element.
void CheckChain(DType dtype, int64_t rows = 3, int64_t cols = 1003) {
  SCOPED_TRACE(std::string(DTypeName(dtype)) + " over " + std::to_string(rows) + "x" + std::to_string(cols));
  const int64_t n = rows * cols;
  Array a = RandomArray(dtype, {rows, cols}, 1);
  Array row = RandomArray(dtype, {cols}, 2);
  Array scalar = RandomArray(dtype, {1}, 3);
  const std::vector<int64_t> row_strides = {0, 1}, splat_strides = {0, 0};
  const Dims dims = {rows, cols};
  BufferView b_view = row.View(), s_view = scalar.View();
  b_view.dims = dims, b_view.num_elements = n, b_view.strides = row_strides;
  s_view.dims = dims, s_view.num_elements = n, s_view.strides = splat_strides;
  // The reference: the views materialized, the sub-ops one by one.
  Array b(dtype, dims), s(dtype, dims);
  GatherViewElements(b_view, 0, n, b.bytes.data());
  GatherViewElements(s_view, 0, n, s.bytes.data());
  Array t(dtype, dims), u(dtype, dims), c(DType::kPred, dims), v(dtype, dims), w(DType::kF32, dims);
  const std::string type(DTypeName(dtype));
  const CompareParams gt{CompareDirection::kGt, FloatType(dtype) ? CompareType::kFloat
                                                 : (dtype == DType::kS8 || dtype == DType::kS32 || dtype == DType::kS64)
                                                     ? CompareType::kSigned
                                                     : CompareType::kUnsigned};
  RunKernel("multiply." + type, {&a, &b}, {&t});
  RunKernel("add." + type, {&t, &a}, {&u});
  RunKernel("compare." + type, {&u, &s}, {&c}, gt);
  RunKernel("select." + type, {&c, &u, &b}, {&v});
  const std::string to_f32 = dtype == DType::kF32 ? "" : "convert." + type + ".f32";
  if (!to_f32.empty()) RunKernel(to_f32, {&v}, {&w});

  FusedParams params;
  params.num_elements = n;
  const auto d = static_cast<int64_t>(dtype);
  params.slot_dtypes = {d, d, d, d, d, static_cast<int64_t>(DType::kPred), d};
  params.ops = {Op("multiply." + type, {0, 1}, 3), Op("add." + type, {3, 0}, 4), Op("compare." + type, {4, 2}, 5, gt),
                Op("select." + type, {5, 4, 1}, 6)};
  params.output_slots = {3, 6};
  if (!to_f32.empty()) {
    params.slot_dtypes.push_back(static_cast<int64_t>(DType::kF32));
    params.ops.push_back(Op(to_f32, {6}, 7));
    params.output_slots.push_back(7);
  }
  for (int threads : {1, 2, 3, 7}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Array t2(dtype, dims), v2(dtype, dims), w2(DType::kF32, dims);
    std::vector<Array*> outs = {&t2, &v2};
    if (!to_f32.empty()) outs.push_back(&w2);
    RunFused(params, {a.View(), b_view, s_view}, outs, threads);
    EXPECT_EQ(t2.bytes, t.bytes);
    EXPECT_EQ(v2.bytes, v.bytes);
    if (!to_f32.empty()) EXPECT_EQ(w2.bytes, w.bytes);
  }
}

TEST(FusedKernelTest, ChainEqualsSubOpsOneByOne) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kS8, DType::kS32, DType::kS64,
                      DType::kU8, DType::kU32, DType::kU64})
    CheckChain(dtype);
}

// Steps of 2^18 elements or more stream their inputs in tiles sized to the core's L1 (with
// the next tile prefetched): the same results, across a short last tile and thread splits.
TEST(FusedKernelTest, LargeChainEqualsSubOpsOneByOne) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kU8}) CheckChain(dtype, 263, 1003);
}

// A float binary sub-op whose operand is a row broadcast ([rows, length] with strides
// [1, 0]) or a splat runs on that one value (simd::BinaryScalar) where a tile lies within
// one row, and on the filled tile otherwise: both give the bytes of the kernel on the
// materialized operand, either operand order, with NaN, signed zeros, infinities and
// denormals among the values.
TEST(FusedKernelTest, UniformOperandsEqualSubOpsOneByOne) {
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -0.0, 0.0,
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             1e-40, -1e-310};
  for (DType dtype : {DType::kF32, DType::kF64}) {
    const std::string type(DTypeName(dtype));
    const auto d = static_cast<int64_t>(dtype);
    // Rows shorter than a tile (tiles span rows: filled), and longer (one value per tile).
    for (int64_t length : {int64_t{37}, int64_t{1003}, int64_t{3000}}) {
      const int64_t rows = 9, n = rows * length;
      const Dims dims = {rows, length};
      Array x = RandomArray(dtype, dims, 5), per_row = RandomArray(dtype, {rows}, 6), one = RandomArray(dtype, {1}, 7);
      for (int64_t i = 0; i < 7; ++i) {
        testing::SetDouble(x, i * 11 % n, specials[i]);
        testing::SetDouble(per_row, i, specials[(i + 3) % 7]);
      }
      const std::vector<int64_t> row_strides = {1, 0}, splat_strides = {0, 0};
      BufferView row_view = per_row.View(), splat_view = one.View();
      row_view.dims = dims, row_view.num_elements = n, row_view.strides = row_strides;
      splat_view.dims = dims, splat_view.num_elements = n, splat_view.strides = splat_strides;
      for (const BufferView* uniform : {&row_view, &splat_view}) {
        Array u(dtype, dims);
        GatherViewElements(*uniform, 0, n, u.bytes.data());
        for (const char* name : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
          for (bool uniform_first : {false, true}) {
            SCOPED_TRACE(type + " " + name + " length " + std::to_string(length) +
                         (uniform == &row_view ? " row" : " splat") + (uniform_first ? " first" : " second"));
            const std::string kernel = std::string(name) + "." + type;
            Array want(dtype, dims), then(dtype, dims);
            if (uniform_first) RunKernel(kernel, {&u, &x}, {&want});
            else RunKernel(kernel, {&x, &u}, {&want});
            RunKernel("add." + type, {&want, &x}, {&then});
            // slot 2 = op(x, u) (or op(u, x)), slot 3 = slot 2 + x: both outputs.
            FusedParams params;
            params.num_elements = n;
            params.slot_dtypes = {d, d, d, d};
            params.ops = {Op(kernel, uniform_first ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1}, 2),
                          Op("add." + type, {2, 0}, 3)};
            params.output_slots = {2, 3};
            for (int threads : {1, 3}) {
              Array got(dtype, dims), got_then(dtype, dims);
              RunFused(params, {x.View(), *uniform}, {&got, &got_then}, threads);
              EXPECT_EQ(got.bytes, want.bytes) << "threads " << threads;
              EXPECT_EQ(got_then.bytes, then.bytes) << "threads " << threads;
            }
          }
        }
      }
    }
  }
}

// Rank-0 operands (clamp's bounds) take the kernels' own view path, sub-ops given by tile
// functions the direct one; both equal the sub-ops one by one.
TEST(FusedKernelTest, RankZeroOperandsEqualSubOpsOneByOne) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kS32}) {
    SCOPED_TRACE(std::string(DTypeName(dtype)));
    const std::string type(DTypeName(dtype));
    const int64_t n = 5000;
    Array x = RandomArray(dtype, {n}, 7), lo = RandomArray(dtype, {}, 8), hi(dtype, {});
    if (FloatType(dtype)) testing::SetDouble(hi, 0, testing::GetDouble(lo, 0) + 2);
    else testing::SetInt(hi, 0, testing::GetInt(lo, 0) + 20);
    Array c(dtype, {n}), e(dtype, {n});
    RunKernel("clamp." + type, {&lo, &x, &hi}, {&c});
    RunKernel("negate." + type, {&c}, {&e});
    FusedParams params;
    params.num_elements = n;
    const auto d = static_cast<int64_t>(dtype);
    params.slot_dtypes = {d, d, d, d, d};
    params.ops = {Op("clamp." + type, {1, 0, 2}, 3), Op("negate." + type, {3}, 4)};
    params.output_slots = {4};
    for (int threads : {1, 3}) {
      Array got(dtype, {n});
      RunFused(params, {x.View(), lo.View(), hi.View()}, {&got}, threads);
      EXPECT_EQ(got.bytes, e.bytes);
    }
  }
}

// A step bound to its operands (as loop bodies bind it) computes what its call computes,
// and a bound run reads the operands' current contents: a repeated element changed between
// runs is refilled.
TEST(FusedKernelTest, BoundCallEqualsCallAndRereadsItsOperands) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("fused");
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(entry->bind, nullptr);
  const int64_t n = 200;
  Array x = RandomArray(DType::kF32, {n}, 9), scalar = RandomArray(DType::kF32, {1}, 10);
  const Dims dims = {n};
  const std::vector<int64_t> splat_strides = {0};
  BufferView s_view = scalar.View();
  s_view.dims = dims, s_view.num_elements = n, s_view.strides = splat_strides;
  FusedParams params;
  params.num_elements = n;
  const auto f = static_cast<int64_t>(DType::kF32);
  params.slot_dtypes = {f, f, f, f};
  params.ops = {Op("multiply.f32", {0, 1}, 2), Op("exponential.f32", {2}, 3)};
  params.output_slots = {3};
  Array expected(DType::kF32, dims), got(DType::kF32, dims);
  const std::vector<BufferView> inputs = {x.View(), s_view};
  const std::vector<BufferView> outputs = {got.View()};
  // Prepared as the executor prepares it: operands that are not plan constants have no data yet.
  std::vector<BufferView> unknown = inputs;
  for (BufferView& view : unknown) view.data = nullptr;
  auto prepared = entry->prepare(KernelArgs{unknown, outputs, &params});
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  KernelArgs args{inputs, outputs, &params};
  args.state = prepared->state.get();
  std::vector<std::byte> workspace(static_cast<size_t>(entry->workspace(args)) + 64);
  args.workspace = std::span<std::byte>(workspace.data(), workspace.size() - 64);
  BoundCall call;
  ASSERT_TRUE(entry->bind(args, call));
  for (float value : {0.5f, -1.25f, 3.0f}) {
    std::memcpy(scalar.bytes.data(), &value, sizeof(value));
    RunFused(params, {x.View(), s_view}, {&expected}, 1);
    call.run(call.storage);
    EXPECT_EQ(got.bytes, expected.bytes) << value;
  }
}

// exp(x) * y reduced (sum, max) over rows of several lengths, and over everything in
// segments, against the reduce kernel on the materialized product.
template <typename T>
void CheckReduce(DType dtype, const std::string& body, int64_t rows, int64_t length, int64_t segments) {
  SCOPED_TRACE(body + " " + std::string(DTypeName(dtype)) + " rows " + std::to_string(rows) + " length " +
               std::to_string(length) + " segments " + std::to_string(segments));
  const int64_t n = rows * length;
  const std::string type(DTypeName(dtype));
  const bool is_float = FloatType(dtype);
  Array x = RandomArray(dtype, {rows, length}, 4), y = RandomArray(dtype, {rows, length}, 5);
  Array init = RandomArray(dtype, {}, 6);
  Array e(dtype, {rows, length}), p(dtype, {rows, length}), expected(dtype, {rows});
  const std::string first = is_float ? "exponential." + type : "negate." + type;
  RunKernel(first, {&x}, {&e});
  RunKernel("multiply." + type, {&e, &y}, {&p});
  const std::string reduce = "reduce_" + body + "." + type;
  RunKernel(reduce, {&p, &init}, {&expected}, ReduceParams{{1}});

  FusedParams params;
  params.num_elements = n;
  const auto d = static_cast<int64_t>(dtype);
  params.slot_dtypes = {d, d, d, d};
  params.ops = {Op(first, {0}, 2), Op("multiply." + type, {2, 1}, 3)};
  params.reduce = {FusedReduce{reduce, 3, rows, length, segments}};
  for (int threads : {1, 2, 5}) {
    Array partial(dtype, {rows, segments}), got(dtype, {rows});
    RunFused(params, {x.View(), y.View(), init.View()}, {&partial}, threads);
    if (segments == 1) {
      got = partial;
    } else {
      RunKernel(reduce, {&partial, &init}, {&got}, ReduceParams{{1}});
    }
    for (int64_t r = 0; r < rows; ++r) {
      const T want = testing::ElementAt<T>(expected, r), have = testing::ElementAt<T>(got, r);
      if (is_float && body == "add") {
        double magnitude = 0;  // sum |x|: pairwise sums err by about log2(n) u of it
        for (int64_t i = 0; i < length; ++i) magnitude += std::abs(testing::GetDouble(p, r * length + i));
        const double u = dtype == DType::kF32 ? 6e-8 : 1.2e-16;
        EXPECT_NEAR(have, want, 4 * u * std::log2(static_cast<double>(length) + 2) * magnitude) << r;
      } else {
        EXPECT_EQ(have, want) << r;
      }
    }
    // A row within one tile is summed as the reduce kernel sums it, bit for bit.
    if (segments == 1 && length <= 256) {
      EXPECT_EQ(got.bytes, expected.bytes);
    }
  }
}

TEST(FusedKernelTest, ReductionEqualsReduceKernel) {
  for (auto [rows, length, segments] : {std::tuple<int64_t, int64_t, int64_t>{64, 100, 1}, {5, 3001, 1},
                                        {1, 100003, 1}, {1, 100003, 7}, {3, 50000, 4}}) {
    CheckReduce<float>(DType::kF32, "add", rows, length, segments);
    CheckReduce<double>(DType::kF64, "add", rows, length, segments);
    CheckReduce<float>(DType::kF32, "max", rows, length, segments);
    CheckReduce<double>(DType::kF64, "min", rows, length, segments);
    CheckReduce<int32_t>(DType::kS32, "add", rows, length, segments);
    CheckReduce<uint8_t>(DType::kU8, "max", rows, length, segments);
    CheckReduce<int64_t>(DType::kS64, "or", rows, length, segments);
  }
}

TEST(FusedKernelTest, MalformedParametersAreErrors) {
  Array x(DType::kF32, {8}), y(DType::kF32, {8});
  FusedParams params;
  params.num_elements = 8;
  params.slot_dtypes = {static_cast<int64_t>(DType::kF32), static_cast<int64_t>(DType::kF32)};
  params.ops = {Op("sort_keys.f32", {0}, 1)};
  params.output_slots = {1};
  std::vector<BufferView> in = {x.View()}, out = {y.View()};
  KernelArgs args{in, out, &params};
  auto prepared = CpuKernels().Lookup("fused")->prepare(args);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("not an elementwise kernel"), std::string::npos);
  params.ops = {Op("negate.f32", {1}, 1)};
  EXPECT_FALSE(CpuKernels().Lookup("fused")->prepare(args).ok());
}

// Runs a fused_rows step with `threads` calls, as the executor would.
void RunRows(const FusedRowsParams& params, const std::vector<BufferView>& inputs, const std::vector<Array*>& outputs,
             int threads) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("fused_rows");
  ASSERT_NE(entry, nullptr);
  std::vector<BufferView> out;
  for (Array* a : outputs) out.push_back(a->View());
  KernelArgs args{inputs, out, &params};
  auto prepared = entry->prepare(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  args.state = prepared->state.get();
  const auto bytes = static_cast<size_t>(entry->workspace(args));
  for (int t = 0; t < threads; ++t) {
    std::vector<std::byte> workspace(bytes + 64);
    KernelArgs call = args;
    call.workspace = std::span<std::byte>(workspace.data(), bytes);
    Status status = entry->fn(KernelContext{t, threads}, call);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
}

// softmax(x * g) over rows, g a [length] vector: max; exp(x * g - max) and its sum in one
// fused sub-step (the exp kept for the divide); the divide. Equals the kernels one by one
// (bit for bit where a row fits a tile) for row counts that leave a short last block, -inf
// entries, and any thread count.
void CheckRowsSoftmax(int64_t rows, int64_t length) {
  SCOPED_TRACE("rows " + std::to_string(rows) + " length " + std::to_string(length));
  const DType f32 = DType::kF32;
  const auto d = static_cast<int64_t>(f32);
  Array x = RandomArray(f32, {rows, length}, 7), g = RandomArray(f32, {length}, 8);
  if (rows > 2) testing::SetDouble(x, length + 3, -std::numeric_limits<double>::infinity());
  Array low(f32, {}), zero(f32, {});
  testing::SetDouble(low, 0, -std::numeric_limits<double>::infinity());
  testing::SetDouble(zero, 0, 0);
  const Dims full = {rows, length};
  const std::vector<int64_t> column = {0, 1}, row_bcast = {1, 0};
  BufferView g_view = g.View();
  g_view.dims = full, g_view.num_elements = rows * length, g_view.strides = column;
  // Reference.
  Array gb(f32, full), xg(f32, full), m(f32, {rows}), mb(f32, full), t(f32, full), e(f32, full), s(f32, {rows}),
      sb(f32, full), want(f32, full);
  GatherViewElements(g_view, 0, rows * length, gb.bytes.data());
  RunKernel("multiply.f32", {&x, &gb}, {&xg});
  RunKernel("reduce_max.f32", {&xg, &low}, {&m}, ReduceParams{{1}});
  auto broadcast = [&](const Array& r, Array& to) {
    BufferView v = r.View();
    v.dims = full, v.num_elements = rows * length, v.strides = row_bcast;
    GatherViewElements(v, 0, rows * length, to.bytes.data());
  };
  broadcast(m, mb);
  RunKernel("subtract.f32", {&xg, &mb}, {&t});
  RunKernel("exponential.f32", {&t}, {&e});
  RunKernel("reduce_add.f32", {&e, &zero}, {&s}, ReduceParams{{1}});
  broadcast(s, sb);
  RunKernel("divide.f32", {&e, &sb}, {&want});

  // values: 0 x, 1 g (column), 2 -inf, 3 0, 4 xg, 5 m, 6 m broadcast, 7 e, 8 s, 9 s broadcast, 10 out
  FusedRowsParams params;
  params.rows = rows, params.length = length;
  params.values = {{0, d, 0, -1}, {3, d, 1, -1}, {4, d, 2, -1}, {4, d, 3, -1}, {0, d, -1, -1}, {1, d, -1, -1},
                   {2, d, -1, 5}, {0, d, -1, -1}, {1, d, -1, -1}, {2, d, -1, 8}, {0, d, -1, -1}};
  FusedParams chain;
  chain.num_elements = rows * length;
  chain.slot_dtypes = {d, d, d, d};
  chain.ops = {Op("subtract.f32", {0, 1}, 2), Op("exponential.f32", {2}, 3)};
  chain.output_slots = {3};
  chain.reduce = {FusedReduce{"reduce_add.f32", 3, rows, length, 1}};
  FusedParams product;
  product.num_elements = rows * length;
  product.slot_dtypes = {d, d, d};
  product.ops = {Op("multiply.f32", {0, 1}, 2)};
  product.output_slots = {2};
  auto step = [](std::string kernel, std::vector<int64_t> in, std::vector<int64_t> out, KernelParams p) {
    return FusedRowsStep{std::move(kernel), std::move(in), std::move(out), p, p.ToString()};
  };
  params.steps = {step("fused", {0, 1}, {4}, product), step("reduce_max.f32", {4, 2}, {5}, ReduceParams{{1}}),
                  step("fused", {4, 6, 3}, {7, 8}, chain), step("divide.f32", {7, 9}, {10}, {})};
  params.outputs = {10, 5};
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    Array got(f32, full), got_max(f32, {rows});
    RunRows(params, {x.View(), g_view, low.View(), zero.View()}, {&got, &got_max}, threads);
    EXPECT_EQ(got_max.bytes, m.bytes);
    if (length <= 256) {  // sums of one tile: the reduce kernel's, bit for bit
      EXPECT_EQ(got.bytes, want.bytes);
      continue;
    }
    // Longer rows sum tile by tile (pairwise within and across tiles): within a few ulps.
    for (int64_t i = 0; i < rows * length; ++i) {
      const float w = testing::ElementAt<float>(want, i), h = testing::ElementAt<float>(got, i);
      ASSERT_NEAR(h, w, 4e-6f * std::abs(w) + 1e-37f) << i;
    }
  }
}

TEST(FusedKernelTest, RowBlocksEqualStepsOneByOne) {
  for (auto [rows, length] : {std::pair<int64_t, int64_t>{37, 1003}, {2, 7}, {1000, 3}, {5, 100000}, {64, 4096},
                              {1, 5000}})
    CheckRowsSoftmax(rows, length);
}

TEST(FusedKernelTest, MalformedRowsParametersAreErrors) {
  const auto d = static_cast<int64_t>(DType::kF32);
  Array x(DType::kF32, {4, 8}), y(DType::kF32, {4, 8});
  FusedRowsParams params;
  params.rows = 4, params.length = 8;
  params.values = {{0, d, 0, -1}, {0, d, -1, -1}};
  params.steps = {FusedRowsStep{"negate.f32", {1}, {1}, {}, ""}};  // reads what it writes
  params.outputs = {1};
  std::vector<BufferView> in = {x.View()}, out = {y.View()};
  KernelArgs args{in, out, &params};
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("fused_rows");
  auto prepared = entry->prepare(args);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("fused_rows step"), std::string::npos);
  params.steps = {FusedRowsStep{"sort_keys.f32", {0}, {1}, {}, ""}};
  EXPECT_FALSE(entry->prepare(args).ok());
  params.steps = {FusedRowsStep{"negate.f32", {0}, {1}, {}, ""}};
  params.values[0].form = 1;  // a [rows] input of 32 elements
  EXPECT_FALSE(entry->prepare(args).ok());
  params.values[0].form = 0;
  EXPECT_TRUE(entry->prepare(args).ok());
}

// A folded iota: each element's index along one dimension, across tiles and thread splits,
// then a sub-op on it.
TEST(FusedKernelTest, FoldedIotaCountsAcrossTilesAndSplits) {
  const Dims dims = {7, 1001, 3};
  const int64_t n = 7 * 1001 * 3;
  for (DType dtype : {DType::kU32, DType::kS64}) {
    for (int64_t dimension : {0, 1, 2}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " dimension " + std::to_string(dimension));
      FusedIotaParams iota;
      iota.size = dims[static_cast<size_t>(dimension)];
      for (size_t k = static_cast<size_t>(dimension) + 1; k < dims.size(); ++k) iota.inner *= dims[k];
      const std::string type(DTypeName(dtype));
      Array x = RandomArray(dtype, dims, 4);
      FusedParams params;
      params.num_elements = n;
      const auto d = static_cast<int64_t>(dtype);
      params.slot_dtypes = {d, d, d};
      params.ops = {Op(KernelKey("fused_iota", {dtype}), {}, 1, iota), Op("add." + type, {1, 0}, 2)};
      params.output_slots = {1, 2};
      for (int threads : {1, 3}) {
        Array index(dtype, dims), sum(dtype, dims);
        RunFused(params, {x.View()}, {&index, &sum}, threads);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t want = i / iota.inner % iota.size;
          ASSERT_EQ(testing::GetInt(index, i), want) << "element " << i;
          ASSERT_EQ(testing::GetInt(sum, i), want + testing::GetInt(x, i)) << "element " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace stablert::kernels
