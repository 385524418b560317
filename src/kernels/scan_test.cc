// Long scans (kernels/scan.h) through the reduce_window kernels, bit for bit against
// scan::ReferenceScans (XLA's grouping written directly) at realistic sizes: single lines
// of millions of elements with odd lengths, rows and columns of 2048x2048, middle axes,
// forward and reverse, inclusive and exclusive, f32/f64/s32/s64/bf16 and NaN, signed zeros
// and denormals in max/min scans, at every instruction-set level the CPU has and with the
// work split across several calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "kernels/dtype_traits.h"
#include "kernels/kernel_test_util.h"
#include "kernels/scalar_ops.h"
#include "kernels/scan.h"
#include "kernels/simd/dispatch.h"
#include "kernels/simd/scan_simd.h"
#include "kernels/window_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

std::vector<env::Isa> Levels() {
  std::vector<env::Isa> levels;
  for (env::Isa level : {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest})
    if (simd::CpuHas(level)) levels.push_back(level);
  return levels;
}

class ScanTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

WindowParams ScanWindow(const Dims& dims, size_t axis, bool reverse, bool exclusive) {
  WindowParams p;
  const size_t rank = dims.size();
  p.window_dimensions.assign(rank, 1);
  p.window_strides.assign(rank, 1);
  p.base_dilations.assign(rank, 1);
  p.window_dilations.assign(rank, 1);
  p.padding_low.assign(rank, 0);
  p.padding_high.assign(rank, 0);
  const int64_t n = dims[axis];
  p.window_dimensions[axis] = n;
  (reverse ? p.padding_high : p.padding_low)[axis] = exclusive ? n : n - 1;
  return p;
}

// Runs the kernel once and split over `calls` calls; both must equal the reference fold.
template <DType D, typename Body>
void CheckScan(const std::string& op, const Dims& dims, size_t axis, bool reverse, bool exclusive,
               const Array& in, Storage<D> init_value, const std::string& what, int calls = 3) {
  using T = Storage<D>;
  SCOPED_TRACE(what + " " + op + " axis " + std::to_string(axis) + (reverse ? " reverse" : " forward") +
               (exclusive ? " exclusive" : " inclusive") + " on " + simd::CurrentTarget());
  const WindowParams params = ScanWindow(dims, axis, reverse, exclusive);
  Dims out_dims = dims;
  if (exclusive) ++out_dims[axis];
  const Array init = ArrayOf(D, {}, std::vector<T>{init_value});

  // The reference: lines gathered into [n][lines] (line k = (outer o, inner kk)).
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[axis], out_n = out_dims[axis], lines = outer * inner;
  std::vector<T> x(static_cast<size_t>(n * lines)), scanned(x.size());
  const T* src = reinterpret_cast<const T*>(in.bytes.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t kk = 0; kk < inner; ++kk)
        x[static_cast<size_t>(i * lines + o * inner + kk)] = src[(o * n + i) * inner + kk];
  auto combine = [](T acc, T v) { return StoreAs<T>(Body::Apply(Load(acc), Load(v))); };
  scan::ReferenceScans(x.data(), n, lines, reverse, scanned.data(), init_value, combine);
  Array want(D, out_dims);
  T* w = reinterpret_cast<T*>(want.bytes.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < out_n; ++i) {
      const int64_t from = exclusive && !reverse ? i - 1 : i;
      for (int64_t kk = 0; kk < inner; ++kk)
        w[(o * out_n + i) * inner + kk] =
            from < 0 || from >= n ? init_value : scanned[static_cast<size_t>(from * lines + o * inner + kk)];
    }

  Array got(D, out_dims);
  RunKernel(Key(op, D), {&in, &init}, {&got}, params);
  auto first_difference = [&](const Array& a) {
    for (size_t e = 0; e < a.bytes.size(); e += sizeof(T))
      if (std::memcmp(&a.bytes[e], &want.bytes[e], sizeof(T)) != 0) return static_cast<int64_t>(e / sizeof(T));
    return int64_t{-1};
  };
  ASSERT_EQ(first_difference(got), -1) << "one call";

  // Split: every call does its share, as the runtime's calls of a step do.
  Array split(D, out_dims);
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(Key(op, D));
  const BufferView inputs[] = {in.View(), init.View()};
  const BufferView outputs[] = {split.View()};
  const KernelArgs args = ArgsWith(inputs, outputs, params);
  for (int c = 0; c < calls; ++c) ASSERT_TRUE(entry->fn(KernelContext{c, calls}, args).ok());
  ASSERT_EQ(first_difference(split), -1) << calls << " calls";
}

Array RandomF32(Dims dims, uint32_t seed, double scale = 1.0) {
  Array a(DType::kF32, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  float* p = reinterpret_cast<float*>(a.bytes.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = normal(rng);
  return a;
}

TEST_F(ScanTest, LongF32LinesAtEveryLevel) {
  const int64_t n = (int64_t{4} << 20) + 7;  // 4M + 7: a partial last tile at every level
  const Array in = RandomF32({n}, 1);
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (bool reverse : {false, true}) {
      CheckScan<DType::kF32, ops::AddOp>("reduce_window_add", {n}, 0, reverse, false, in, 0.0f, "cumsum 4M+7");
      CheckScan<DType::kF32, ops::MaxOp>("reduce_window_max", {n}, 0, reverse, false, in,
                                         -std::numeric_limits<float>::infinity(), "cummax 4M+7");
    }
  }
}

TEST_F(ScanTest, ExclusiveAndShortAndExactTileLengths) {
  // Lengths around the tile (16), group (256) and chunk (2048 = 128 tiles) boundaries.
  // 65536 + 255: fifteen whole tiles and a partial one after the last whole group.
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (int64_t n : {17, 31, 255, 256, 257, 272, 273, 2047, 2048, 2053, 2064, 4096, 4097, 4111, 4352 + 7,
                      65536 + 16 * 5 + 3, 65536 + 255, 65536 + 2048, 65536 + 4096 + 16 + 1}) {
      const Array in = RandomF32({n}, static_cast<uint32_t>(n));
      for (bool reverse : {false, true})
        for (bool exclusive : {false, true}) {
          CheckScan<DType::kF32, ops::AddOp>("reduce_window_add", {n}, 0, reverse, exclusive, in, 0.0f, "n");
          CheckScan<DType::kF32, ops::MultiplyOp>("reduce_window_mul", {n}, 0, reverse, exclusive, in, 1.0f, "n");
        }
    }
  }
}

// simd::ScanLinePart writes the bits of ScanLine over the whole line, part by part, where
// the parts run in any order (the second part folds the first part's tile totals itself).
TEST_F(ScanTest, LineParts) {
  const int64_t n = (int64_t{1} << 20) + 16 * 5 + 3;
  const Array in = RandomF32({n}, 6);
  const float* x = reinterpret_cast<const float*>(in.bytes.data());
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (simd::ScanBody body : {simd::ScanBody::kAdd, simd::ScanBody::kMul}) {
      const float init = body == simd::ScanBody::kAdd ? 0.0f : 1.0f;
      std::vector<float> whole(static_cast<size_t>(n));
      simd::ScanLine(body, false, x, whole.data(), n, init, false);
      for (int64_t s : {int64_t{256}, n / 512 * 256, n / 256 * 256}) {
        std::vector<float> parts(static_cast<size_t>(n), -1.0f);
        simd::ScanLinePart(body, x, parts.data(), n, init, false, s, n);
        simd::ScanLinePart(body, x, parts.data(), n, init, false, 0, s);
        ASSERT_EQ(std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(float)), 0)
            << "split at " << s << " on " << simd::CurrentTarget();
      }
    }
  }
}

// simd::ScanLine with y == x gives the bits it gives into a separate output.
TEST_F(ScanTest, LineInPlace) {
  const int64_t n = 65536 + 16 * 7 + 5;
  const Array in = RandomF32({n}, 5);
  const float* x = reinterpret_cast<const float*>(in.bytes.data());
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (bool reverse : {false, true}) {
      std::vector<float> separate(static_cast<size_t>(n)), same(x, x + n);
      simd::ScanLine(simd::ScanBody::kAdd, reverse, x, separate.data(), n, 0.0f, false);
      simd::ScanLine(simd::ScanBody::kAdd, reverse, same.data(), same.data(), n, 0.0f, false);
      ASSERT_EQ(std::memcmp(separate.data(), same.data(), separate.size() * sizeof(float)), 0)
          << (reverse ? "reverse" : "forward") << " on " << simd::CurrentTarget();
    }
  }
}

// `bytes` of storage starting `offset` bytes past a 64-byte boundary and ending where the
// allocation ends (a sanitizer build catches any access past it).
class OffsetBuffer {
 public:
  OffsetBuffer(size_t bytes, size_t offset)
      : base_(static_cast<uint8_t*>(::operator new(bytes + offset, std::align_val_t{64}))), offset_(offset) {}
  ~OffsetBuffer() { ::operator delete(base_, std::align_val_t{64}); }
  OffsetBuffer(const OffsetBuffer&) = delete;
  OffsetBuffer& operator=(const OffsetBuffer&) = delete;
  float* f32() { return reinterpret_cast<float*>(base_ + offset_); }

 private:
  uint8_t* base_;
  size_t offset_;
};

// Borrowed host buffers (a NumPy array passed without a copy) need not be 64-byte aligned:
// every path gives the reference's bits with input and output at 4, 16, 32 and 60 bytes
// past a cache line, the same bits as aligned buffers, the stream path (outputs of 16 MiB
// and more) and the reverse walks included.
TEST_F(ScanTest, BuffersOffTheCacheLine) {
  struct Case {
    const char* op;
    Dims dims;
    bool reverse;
    int calls;
  };
  const int64_t n = (int64_t{4} << 20) + 7;
  const Case cases[] = {{"reduce_window_add", {n}, false, 1},          {"reduce_window_add", {n}, true, 1},
                        {"reduce_window_max", {n}, true, 1},           {"reduce_window_add", {61, 4111}, true, 2},
                        {"reduce_window_add", {61, 4111}, false, 2}};
  const Array in = RandomF32({n}, 31);
  const float* source = reinterpret_cast<const float*>(in.bytes.data());
  for (const Case& c : cases) {
    const bool max = std::string(c.op) == "reduce_window_max";
    const float init = max ? -std::numeric_limits<float>::infinity() : 0.0f;
    const int64_t line = c.dims.back(), count = ElementCount(c.dims);
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    // The reference, line by line.
    std::vector<float> want(static_cast<size_t>(count));
    auto combine = [max](float acc, float v) { return max ? ops::MaxOp::Apply(acc, v) : ops::AddOp::Apply(acc, v); };
    for (int64_t l = 0; l < count / line; ++l)
      scan::ReferenceScans(source + l * line, line, 1, c.reverse, want.data() + l * line, init, combine);
    const WindowParams params = ScanWindow(c.dims, c.dims.size() - 1, c.reverse, false);
    const KernelRegistry::Entry* entry = CpuKernels().Lookup(Key(c.op, DType::kF32));
    ASSERT_NE(entry, nullptr);
    for (env::Isa level : Levels()) {
      ASSERT_TRUE(simd::SetIsa(level).ok());
      // (input, output) offsets in bytes: the output alone off the line, and both.
      const std::pair<size_t, size_t> offsets[] = {{0, 0},  {0, 4},   {4, 4},   {0, 16}, {16, 16},
                                                   {0, 32}, {32, 32}, {0, 60},  {60, 60}};
      for (const auto& [in_offset, out_offset] : offsets) {
        SCOPED_TRACE(std::string(c.op) + " " + std::to_string(count) + (c.reverse ? " reverse" : " forward") +
                     ", input +" + std::to_string(in_offset) + " bytes, output +" + std::to_string(out_offset) +
                     " bytes, on " + simd::CurrentTarget());
        OffsetBuffer x(bytes, in_offset), y(bytes, out_offset);
        std::memcpy(x.f32(), source, bytes);
        std::memset(y.f32(), 0xff, bytes);
        const BufferView inputs[] = {{x.f32(), DType::kF32, c.dims, count},
                                     {const_cast<float*>(&init), DType::kF32, {}, 1}};
        const BufferView outputs[] = {{y.f32(), DType::kF32, c.dims, count}};
        const KernelArgs args = ArgsWith(inputs, outputs, params);
        for (int t = 0; t < c.calls; ++t) ASSERT_TRUE(entry->fn(KernelContext{t, c.calls}, args).ok());
        int64_t first = -1;
        for (int64_t i = 0; i < count && first < 0; ++i)
          if (std::memcmp(&y.f32()[i], &want[static_cast<size_t>(i)], sizeof(float)) != 0) first = i;
        ASSERT_EQ(first, -1);
        ASSERT_EQ(std::memcmp(x.f32(), source, bytes), 0) << "input changed";
      }
    }
  }
}

TEST_F(ScanTest, RowsColumnsAndMiddleAxes) {
  const Array square = RandomF32({2048, 2048}, 7);
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (size_t axis : {size_t{0}, size_t{1}})
      for (bool reverse : {false, true})
        CheckScan<DType::kF32, ops::AddOp>("reduce_window_add", {2048, 2048}, axis, reverse, false, square, 0.0f,
                                           "2048x2048");
  }
  const Array long_rows = RandomF32({7, 4111}, 9);  // several contiguous lines, partial chunks
  for (bool reverse : {false, true})
    for (bool exclusive : {false, true})
      CheckScan<DType::kF32, ops::AddOp>("reduce_window_add", {7, 4111}, 1, reverse, exclusive, long_rows, 0.0f,
                                         "7x4111");
  const Array odd = RandomF32({3, 517, 133}, 8);  // lane chunks with a partial one, a tail tile
  for (size_t axis : {size_t{0}, size_t{1}, size_t{2}})
    for (bool reverse : {false, true})
      for (bool exclusive : {false, true}) {
        Dims dims = {3, 517, 133};
        CheckScan<DType::kF32, ops::AddOp>("reduce_window_add", dims, axis, reverse, exclusive, odd, 0.0f, "3x517x133");
        CheckScan<DType::kF32, ops::MinOp>("reduce_window_min", dims, axis, reverse, exclusive, odd,
                                           std::numeric_limits<float>::infinity(), "3x517x133");
      }
}

TEST_F(ScanTest, MaxMinWithNaNSignedZerosAndDenormals) {
  const int64_t n = (int64_t{1} << 20) + 3;
  Array in = RandomF32({n}, 9);
  float* p = reinterpret_cast<float*>(in.bytes.data());
  std::mt19937 rng(10);
  for (int k = 0; k < 2000; ++k) {
    const auto i = static_cast<int64_t>(rng() % static_cast<uint32_t>(n));
    switch (k % 5) {
      case 0: p[i] = 0.0f; break;
      case 1: p[i] = -0.0f; break;
      case 2: p[i] = std::numeric_limits<float>::denorm_min() * static_cast<float>(1 + k); break;
      case 3: p[i] = -std::numeric_limits<float>::denorm_min(); break;
      default: break;
    }
  }
  // NaNs of several payloads and signs late in the line (max scans keep the first one a
  // fold meets, so the grouping decides which payload an output holds).
  const uint32_t payloads[] = {0x7fc00001u, 0xffc00002u, 0x7fa00003u, 0x7fc00004u};
  for (int k = 0; k < 4; ++k) std::memcpy(&p[n - 1 - 4000 * k - 17 * k], &payloads[k], 4);
  const Array all_zero_signs = [&] {
    Array z(DType::kF32, {4099});
    float* q = reinterpret_cast<float*>(z.bytes.data());
    for (int64_t i = 0; i < z.size(); ++i) q[i] = (i * 7919) % 3 == 0 ? -0.0f : (i % 5 == 0 ? 0.0f : -1e-40f);
    return z;
  }();
  // Dense: a third NaNs of random payloads and signs, so tiles hold several (the first
  // one in fold order must win), between zeros of both signs and denormals.
  Array dense(DType::kF32, {999, 133});
  float* q = reinterpret_cast<float*>(dense.bytes.data());
  for (int64_t i = 0; i < dense.size(); ++i) {
    const uint32_t r = static_cast<uint32_t>(rng());
    uint32_t bits = r % 3 == 0 ? (0x7fc00000u | (r >> 10)) | (r & 0x80000000u)
                    : r % 3 == 1 ? (r & 0x80000000u) | ((r >> 8) % 4 == 0 ? 0u : (r >> 12) % 0x00800000u)
                                 : 0;
    std::memcpy(&q[i], &bits, 4);
    if (r % 3 == 2) q[i] = static_cast<float>(static_cast<int>(r % 41) - 20);
  }
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (bool reverse : {false, true}) {
      for (size_t axis : {size_t{0}, size_t{1}}) {
        CheckScan<DType::kF32, ops::MaxOp>("reduce_window_max", {999, 133}, axis, reverse, false, dense,
                                           -std::numeric_limits<float>::infinity(), "dense NaN");
        CheckScan<DType::kF32, ops::MinOp>("reduce_window_min", {999, 133}, axis, reverse, true, dense, -0.0f,
                                           "dense NaN");
      }
      CheckScan<DType::kF32, ops::MaxOp>("reduce_window_max", {n}, 0, reverse, false, in,
                                         -std::numeric_limits<float>::infinity(), "NaN line");
      CheckScan<DType::kF32, ops::MinOp>("reduce_window_min", {n}, 0, reverse, false, in,
                                         std::numeric_limits<float>::infinity(), "NaN line");
      CheckScan<DType::kF32, ops::MaxOp>("reduce_window_max", {4099}, 0, reverse, false, all_zero_signs, -0.0f,
                                         "zeros");
      CheckScan<DType::kF32, ops::MinOp>("reduce_window_min", {4099}, 0, reverse, false, all_zero_signs, 0.0f,
                                         "zeros");
    }
  }
}

// Contiguous max/min lines take one running fold when the values allow it (no NaN): lines
// of zeros of both signs, denormals and normals, with one NaN placed in the first block, in
// the last partial block or nowhere, a NaN init, exclusive forms, f32 and f64 (the running
// fold and the grouped path must give the same bits either way).
TEST_F(ScanTest, RunningMaxMinMatchesTheGroupingWithAndWithoutNaN) {
  const int64_t n = 3 * 2048 + 37;
  auto line = [&](DType dtype, int64_t nan_at, uint32_t seed) {
    Array a(dtype, {n});
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t r = static_cast<uint32_t>(rng());
      const double tiny = dtype == DType::kF32 ? 1e-40 : 1e-310;
      const double v = r % 4 == 0 ? (r & 8 ? -0.0 : 0.0) : r % 4 == 1 ? (r & 8 ? -tiny : tiny) * (r % 7 + 1)
                                                        : static_cast<double>(static_cast<int>(r % 2001) - 1000) / 64;
      SetDouble(a, i, v);
    }
    if (nan_at >= 0) SetDouble(a, nan_at, -std::numeric_limits<double>::quiet_NaN());
    return a;
  };
  const float nanf = std::numeric_limits<float>::quiet_NaN();
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (int64_t nan_at : {int64_t{-1}, int64_t{2}, int64_t{5}, n - 3}) {
      const Array f32 = line(DType::kF32, nan_at, 21), f64 = line(DType::kF64, nan_at, 22);
      const std::string what = "NaN at " + std::to_string(nan_at);
      for (bool reverse : {false, true})
        for (bool exclusive : {false, true}) {
          CheckScan<DType::kF32, ops::MaxOp>("reduce_window_max", {n}, 0, reverse, exclusive, f32, -0.0f, what);
          CheckScan<DType::kF32, ops::MinOp>("reduce_window_min", {n}, 0, reverse, exclusive, f32, 0.0f, what);
          CheckScan<DType::kF64, ops::MaxOp>("reduce_window_max", {n}, 0, reverse, exclusive, f64,
                                             -std::numeric_limits<double>::infinity(), what);
          CheckScan<DType::kF64, ops::MinOp>("reduce_window_min", {n}, 0, reverse, exclusive, f64, 1e-310, what);
        }
      CheckScan<DType::kF32, ops::MaxOp>("reduce_window_max", {n}, 0, false, false, f32, nanf, what + ", NaN init");
      CheckScan<DType::kF32, ops::MinOp>("reduce_window_min", {n}, 0, true, false, f32, nanf, what + ", NaN init");
    }
  }
}

TEST_F(ScanTest, F64S32S64AndBf16) {
  const int64_t n = (int64_t{1} << 20) + 5;
  Array f64(DType::kF64, {n}), s32(DType::kS32, {n}), s64(DType::kS64, {n}), bf16(DType::kBF16, {n});
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  for (int64_t i = 0; i < n; ++i) {
    const double v = normal(rng);
    SetDouble(f64, i, v);
    reinterpret_cast<int32_t*>(s32.bytes.data())[i] = static_cast<int32_t>(rng());  // sums wrap
    reinterpret_cast<int64_t*>(s64.bytes.data())[i] = static_cast<int64_t>(rng());
    SetDouble(bf16, i, v);
  }
  const Array f64_near_one = [&] {
    Array a(DType::kF64, {n});
    for (int64_t i = 0; i < n; ++i) SetDouble(a, i, 1.0 + GetDouble(f64, i) * 1e-6);
    return a;
  }();
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (bool reverse : {false, true}) {
      CheckScan<DType::kF64, ops::AddOp>("reduce_window_add", {n}, 0, reverse, false, f64, 0.0, "f64");
      CheckScan<DType::kF64, ops::MultiplyOp>("reduce_window_mul", {n}, 0, reverse, false, f64_near_one, 1.0, "f64");
      CheckScan<DType::kF64, ops::MaxOp>("reduce_window_max", {n}, 0, reverse, false, f64,
                                         -std::numeric_limits<double>::infinity(), "f64");
      CheckScan<DType::kS32, ops::AddOp>("reduce_window_add", {n}, 0, reverse, false, s32, 0, "s32");
      CheckScan<DType::kS32, ops::MultiplyOp>("reduce_window_mul", {n}, 0, reverse, false, s32, 1, "s32");
      CheckScan<DType::kS32, ops::MaxOp>("reduce_window_max", {n}, 0, reverse, false, s32,
                                         std::numeric_limits<int32_t>::min(), "s32");
      CheckScan<DType::kS64, ops::AddOp>("reduce_window_add", {n}, 0, reverse, false, s64, 0, "s64");
      CheckScan<DType::kS64, ops::MinOp>("reduce_window_min", {n}, 0, reverse, false, s64,
                                         std::numeric_limits<int64_t>::max(), "s64");
    }
  }
  Array bf16_square(DType::kBF16, {1024, 1024});
  std::memcpy(bf16_square.bytes.data(), bf16.bytes.data(), bf16_square.bytes.size());
  for (bool reverse : {false, true}) {
    const Storage<DType::kBF16> zero{};
    CheckScan<DType::kBF16, ops::AddOp>("reduce_window_add", {n}, 0, reverse, false, bf16, zero, "bf16");
    CheckScan<DType::kBF16, ops::AddOp>("reduce_window_add", {1024, 1024}, 0, reverse, true, bf16_square, zero, "bf16");
    CheckScan<DType::kBF16, ops::AddOp>("reduce_window_add", {1024, 1024}, 1, reverse, false, bf16_square, zero, "bf16");
  }
}

}  // namespace
}  // namespace stablert::kernels
