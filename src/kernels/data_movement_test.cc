// Cross-checks data movement kernels against index arithmetic on random shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "kernels/data_movement_params.h"
#include "kernels/kernel_test_util.h"
#include "kernels/simd/dispatch.h"
#include "kernels/simd/movement_simd.h"
#include "kernels/simd/transpose_simd.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

// One dtype per element width.
const DType kWidths[] = {DType::kS8, DType::kBF16, DType::kF32, DType::kS64};

Array RandomBytes(DType dtype, Dims dims, std::mt19937& rng) {
  Array a(dtype, std::move(dims));
  for (uint8_t& b : a.bytes) b = static_cast<uint8_t>(rng());
  return a;
}

Dims RandomDims(std::mt19937& rng, int rank, int max_size = 4) {
  Dims dims(static_cast<size_t>(rank));
  for (int64_t& d : dims) d = static_cast<int64_t>(rng() % max_size) + (rng() % 8 == 0 ? 0 : 1);
  return dims;
}

// Element `index` (multi-dimensional) of a row-major array, as bytes.
const uint8_t* At(const Array& a, const Dims& index) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear = linear * a.dims[i] + index[i];
  return &a.bytes[static_cast<size_t>(linear * DTypeByteSize(a.dtype))];
}

// Calls fn(index) for every index of `dims` in row-major order.
template <typename Fn>
void ForEachIndex(const Dims& dims, Fn fn) {
  if (ElementCount(dims) == 0) return;
  Dims index(dims.size(), 0);
  while (true) {
    fn(index);
    size_t d = dims.size();
    while (d > 0) {
      --d;
      if (++index[d] < dims[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (dims.empty()) return;
  }
}

TEST(DataMovementTest, TransposeMatchesIndexing) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kWidths[trial % 4];
    int rank = static_cast<int>(rng() % 6);
    Dims dims = RandomDims(rng, rank);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Dims out_dims;
    for (int64_t p : perm) out_dims.push_back(dims[static_cast<size_t>(p)]);
    Array in = RandomBytes(dtype, dims, rng), out(dtype, out_dims);
    RunKernel(Key("transpose", dtype), {&in}, {&out}, TransposeParams{.permutation = perm});
    ForEachIndex(out_dims, [&](const Dims& index) {
      Dims source(dims.size());
      for (size_t i = 0; i < perm.size(); ++i) source[static_cast<size_t>(perm[i])] = index[i];
      ASSERT_EQ(0, std::memcmp(At(out, index), At(in, source), DTypeByteSize(dtype)));
    });
  }
}

// Runs "transpose.<dtype>" as a step split into `parts` calls.
void RunTransposeSplit(DType dtype, const Array& in, Array& out, const std::vector<int64_t>& perm, int parts) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(Key("transpose", dtype));
  ASSERT_NE(entry, nullptr);
  ASSERT_TRUE(entry->splittable);
  BufferView views[2] = {in.View(), out.View()};
  const TransposeParams params{.permutation = perm};
  const KernelArgs args = ArgsWith({&views[0], 1}, {&views[1], 1}, params);
  for (int p = 0; p < parts; ++p) ASSERT_TRUE(entry->fn(KernelContext{p, parts}, args).ok());
}

// Every permutation of ranks 1-4 with odd sizes, every element width, split 1/2/3 ways;
// the sizes are large enough for tiles with remainders and for split calls.
TEST(DataMovementTest, TransposeAllPermutationsSplit) {
  const DType widths[] = {DType::kS8, DType::kBF16, DType::kF32, DType::kS64, DType::kC128};
  const Dims shapes[] = {{1}, {300001}, {1}, {3, 5}, {37, 131}, {531, 517}, {1, 263}, {3, 1, 7},
                         {5, 7, 9}, {19, 33, 41}, {67, 65, 63}, {3, 5, 7, 9}, {7, 1, 35, 37},
                         {13, 17, 19, 23}, {9, 33, 31, 35}};
  std::mt19937 rng(21);
  for (const Dims& dims : shapes) {
    std::vector<int64_t> perm(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      Dims out_dims;
      for (int64_t p : perm) out_dims.push_back(dims[static_cast<size_t>(p)]);
      for (DType dtype : widths) {
        const int64_t bytes = DTypeByteSize(dtype);
        Array in = RandomBytes(dtype, dims, rng), expected(dtype, out_dims);
        ForEachIndex(out_dims, [&](const Dims& index) {
          Dims source(dims.size());
          for (size_t i = 0; i < perm.size(); ++i) source[static_cast<size_t>(perm[i])] = index[i];
          std::memcpy(const_cast<uint8_t*>(At(expected, index)), At(in, source), static_cast<size_t>(bytes));
        });
        for (int parts = 1; parts <= 3; ++parts) {
          Array out(dtype, out_dims);
          RunTransposeSplit(dtype, in, out, perm, parts);
          ASSERT_TRUE(out.bytes == expected.bytes)
              << DTypeName(dtype) << " dims " << ::testing::PrintToString(dims) << " perm "
              << ::testing::PrintToString(perm) << " parts " << parts;
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(DataMovementTest, BroadcastInDimMatchesIndexing) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kWidths[trial % 4];
    int out_rank = static_cast<int>(rng() % 5);
    Dims out_dims = RandomDims(rng, out_rank);
    // Pick an increasing subset of output dims; each operand dim is the output size or 1.
    std::vector<int64_t> mapping;
    Dims in_dims;
    for (int d = 0; d < out_rank; ++d) {
      if (rng() % 2) continue;
      mapping.push_back(d);
      in_dims.push_back(rng() % 3 == 0 ? 1 : out_dims[static_cast<size_t>(d)]);
    }
    Array in = RandomBytes(dtype, in_dims, rng), out(dtype, out_dims);
    RunKernel(Key("broadcast_in_dim", dtype), {&in}, {&out}, BroadcastInDimParams{.dimensions = mapping});
    ForEachIndex(out_dims, [&](const Dims& index) {
      Dims source(in_dims.size());
      for (size_t i = 0; i < mapping.size(); ++i)
        source[i] = in_dims[i] == 1 ? 0 : index[static_cast<size_t>(mapping[i])];
      ASSERT_EQ(0, std::memcmp(At(out, index), At(in, source), DTypeByteSize(dtype)));
    });
  }
}

TEST(DataMovementTest, SliceMatchesIndexing) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kWidths[trial % 4];
    int rank = static_cast<int>(rng() % 5);
    Dims dims = RandomDims(rng, rank, 7);
    std::vector<int64_t> start, limit, stride;
    Dims out_dims;
    for (int64_t d : dims) {
      int64_t s = static_cast<int64_t>(rng() % (d + 1));
      int64_t l = s + static_cast<int64_t>(rng() % (d - s + 1));
      int64_t st = 1 + static_cast<int64_t>(rng() % 3);
      start.push_back(s), limit.push_back(l), stride.push_back(st);
      out_dims.push_back((l - s + st - 1) / st);
    }
    Array in = RandomBytes(dtype, dims, rng), out(dtype, out_dims);
    RunKernel(Key("slice", dtype), {&in}, {&out},
              SliceParams{.start = start, .limit = limit, .stride = stride});
    ForEachIndex(out_dims, [&](const Dims& index) {
      Dims source(dims.size());
      for (size_t i = 0; i < dims.size(); ++i) source[i] = start[i] + index[i] * stride[i];
      ASSERT_EQ(0, std::memcmp(At(out, index), At(in, source), DTypeByteSize(dtype)));
    });
  }
}

TEST(DataMovementTest, ConcatenateMatchesIndexing) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 200; ++trial) {
    DType dtype = kWidths[trial % 4];
    int rank = 1 + static_cast<int>(rng() % 4);
    Dims dims = RandomDims(rng, rank);
    int64_t dim = static_cast<int64_t>(rng() % rank);
    int parts = 1 + static_cast<int>(rng() % 4);
    std::vector<Array> inputs;
    Dims out_dims = dims;
    out_dims[static_cast<size_t>(dim)] = 0;
    for (int p = 0; p < parts; ++p) {
      Dims part = dims;
      part[static_cast<size_t>(dim)] = static_cast<int64_t>(rng() % 4);
      out_dims[static_cast<size_t>(dim)] += part[static_cast<size_t>(dim)];
      inputs.push_back(RandomBytes(dtype, part, rng));
    }
    Array out(dtype, out_dims);
    std::vector<const Array*> pointers;
    for (const Array& a : inputs) pointers.push_back(&a);
    RunKernel(Key("concatenate", dtype), pointers, {&out}, ConcatenateParams{.dimension = dim});
    ForEachIndex(out_dims, [&](const Dims& index) {
      Dims source = index;
      size_t p = 0;
      while (source[static_cast<size_t>(dim)] >= inputs[p].dims[static_cast<size_t>(dim)]) {
        source[static_cast<size_t>(dim)] -= inputs[p].dims[static_cast<size_t>(dim)];
        ++p;
      }
      ASSERT_EQ(0, std::memcmp(At(out, index), At(inputs[p], source), DTypeByteSize(dtype)));
    });
  }
}

TEST(DataMovementTest, IotaEveryDtype) {
  const DType types[] = {DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16,
                         DType::kU32, DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  for (DType dtype : types) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      Dims dims = {3, 300, 2};
      Array out(dtype, dims);
      RunKernel(Key("iota", dtype), {}, {&out}, IotaParams{.dimension = dim});
      int64_t i = 0;
      ForEachIndex(dims, [&](const Dims& index) {
        int64_t want = index[static_cast<size_t>(dim)];
        if (IsFloat(dtype)) {
          Array expected(dtype, {1});
          SetDouble(expected, 0, static_cast<double>(want));
          ASSERT_EQ(GetDouble(out, i), GetDouble(expected, 0));
        } else {
          Array expected(dtype, {1});
          SetInt(expected, 0, want);  // wraps like a conversion from i64
          ASSERT_EQ(GetInt(out, i), GetInt(expected, 0))
              << DTypeName(dtype);
        }
        ++i;
      });
    }
  }
}

TEST(DataMovementTest, CopyAndScalars) {
  std::mt19937 rng(15);
  for (DType dtype : kWidths) {
    Array in = RandomBytes(dtype, {}, rng), out(dtype, {});
    RunKernel(Key("copy", dtype), {&in}, {&out});
    EXPECT_EQ(in.bytes, out.bytes);
    Array big = RandomBytes(dtype, {1000}, rng), big_out(dtype, {1000});
    RunKernel(Key("copy", dtype), {&big}, {&big_out});
    EXPECT_EQ(big.bytes, big_out.bytes);
    Array scalar_out(dtype, {3, 4});
    RunKernel(Key("broadcast_in_dim", dtype), {&in}, {&scalar_out}, BroadcastInDimParams{});
    for (int64_t i = 0; i < 12; ++i)
      EXPECT_EQ(0, std::memcmp(&scalar_out.bytes[static_cast<size_t>(i * DTypeByteSize(dtype))], in.bytes.data(),
                               DTypeByteSize(dtype)));
  }
}

// The instruction-set levels the CPU has, best last; the best is restored after each test.
std::vector<env::Isa> Levels() {
  std::vector<env::Isa> levels;
  for (env::Isa level : {env::Isa::kSse4, env::Isa::kAvx2, env::Isa::kAvx512, env::Isa::kBest})
    if (simd::CpuHas(level)) levels.push_back(level);
  return levels;
}

class TransposeLevelsTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(simd::SetIsa(env::Isa::kBest).ok()); }
};

// The block transposes at their edges: every extent from 0 to past two blocks of the widest
// target (16 lanes of 4 bytes, 16 of 2, 8 of 8), with leading strides beyond the extents,
// streaming and not, into aligned and misaligned destinations. Elements outside the
// destination rectangle must be left alone.
template <typename T>
void CheckTileEdges() {
  std::mt19937 rng(31);
  const int64_t side = simd::TransposeBlockSide(sizeof(T));
  ASSERT_GE(side, 1);
  const int64_t extents[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40};
  for (int64_t rows : extents) {
    for (int64_t cols : extents) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool stream = variant & 1;
        // Strides: exact-ish and padded to a whole number of 64 bytes (so streaming applies).
        const int64_t pad = (variant & 2) ? (64 / static_cast<int64_t>(sizeof(T))) : 3;
        const int64_t lds = rows + pad, ldd = cols + pad;
        const int64_t offset = (variant & 2) ? 0 : 1;  // misaligned destination
        std::vector<T> src(static_cast<size_t>(std::max<int64_t>(cols, 1) * lds));
        for (T& v : src) v = static_cast<T>(rng());
        const size_t dst_size = static_cast<size_t>(std::max<int64_t>(rows, 1) * ldd + offset + 64);
        T* buffer = static_cast<T*>(std::aligned_alloc(64, (dst_size * sizeof(T) + 63) / 64 * 64));
        std::fill(buffer, buffer + dst_size, static_cast<T>(0x5a5a5a5a5a5a5a5aULL));
        T* dst = buffer + offset;
        simd::TransposeTile(dst, ldd, src.data(), lds, rows, cols, stream);
        if (stream) simd::TransposeStreamFence();
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < ldd; ++j) {
            const T want = j < cols ? src[static_cast<size_t>(j * lds + i)] : static_cast<T>(0x5a5a5a5a5a5a5a5aULL);
            ASSERT_EQ(dst[i * ldd + j], want) << sizeof(T) << "-byte rows " << rows << " cols " << cols << " variant "
                                              << variant << " at " << i << "," << j << " target "
                                              << simd::CurrentTarget();
          }
        }
        std::free(buffer);
      }
    }
  }
}

TEST_F(TransposeLevelsTest, TileEdgesAtEveryLevel) {
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    CheckTileEdges<uint16_t>();
    CheckTileEdges<uint32_t>();
    CheckTileEdges<uint64_t>();
  }
}

// Large transposes through the kernel at every level, split 1 and 2 ways: outputs of 16 MiB
// and more are written with non-temporal stores (kMinTransposeBytesToStream), smaller ones not.
TEST_F(TransposeLevelsTest, LargeTransposesAtEveryLevel) {
  struct Case {
    DType dtype;
    Dims dims;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {
      {DType::kF32, {2900, 2900}, {1, 0}},      // 33.6 MB: streamed
      {DType::kF64, {2048, 2048}, {1, 0}},      // 32 MiB: streamed
      {DType::kF32, {1023, 2049}, {1, 0}},      // odd sides: edges on both; not streamed
      {DType::kBF16, {2049, 1023}, {1, 0}},
      {DType::kC64, {64, 250, 130}, {2, 1, 0}},
      {DType::kF32, {64, 130, 250}, {0, 2, 1}},  // inner 2-D of a batch
      {DType::kF32, {33, 65, 129}, {1, 2, 0}},
      {DType::kF32, {64, 256, 257}, {1, 0, 2}},   // row copies of 1028 bytes, 16.04 MiB: streamed
      {DType::kBF16, {40, 512, 411}, {1, 0, 2}},  // row copies of 822 bytes, streamed
      {DType::kF32, {16, 64, 250}, {1, 0, 2}},    // row copies, not streamed
  };
  std::mt19937 rng(41);
  for (const Case& c : cases) {
    Dims out_dims;
    for (int64_t p : c.perm) out_dims.push_back(c.dims[static_cast<size_t>(p)]);
    Array in = RandomBytes(c.dtype, c.dims, rng), expected(c.dtype, out_dims);
    const auto bytes = static_cast<size_t>(DTypeByteSize(c.dtype));
    ForEachIndex(out_dims, [&](const Dims& index) {
      Dims source(c.dims.size());
      for (size_t i = 0; i < c.perm.size(); ++i) source[static_cast<size_t>(c.perm[i])] = index[i];
      std::memcpy(const_cast<uint8_t*>(At(expected, index)), At(in, source), bytes);
    });
    for (env::Isa level : Levels()) {
      ASSERT_TRUE(simd::SetIsa(level).ok());
      for (int parts = 1; parts <= 2; ++parts) {
        Array out(c.dtype, out_dims);
        RunTransposeSplit(c.dtype, in, out, c.perm, parts);
        ASSERT_TRUE(out.bytes == expected.bytes) << DTypeName(c.dtype) << " dims " << ::testing::PrintToString(c.dims)
                                                 << " parts " << parts << " target " << simd::CurrentTarget();
      }
    }
  }
}

// The vector row loops (simd/movement_simd.h) at every level, for every count from 0 to
// past four vectors of the widest target, into misaligned destinations: the row is exact
// and the guard elements after it are left alone.
template <typename T>
void CheckMovementRows() {
  std::mt19937 rng(51);
  constexpr T kGuard = static_cast<T>(0x5a5a5a5a5a5a5a5aULL);
  for (int64_t count = 0; count <= 300; ++count) {
    for (int64_t offset : {0, 1}) {
      std::vector<T> dst(static_cast<size_t>(count + offset + 16), kGuard);
      std::vector<T> src(static_cast<size_t>(2 * count + 1));
      for (T& v : src) v = static_cast<T>(rng());
      const T value = static_cast<T>(rng());
      simd::FillRow(dst.data() + offset, count, value);
      for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
        const bool inside = i >= offset && i < offset + count;
        ASSERT_EQ(dst[static_cast<size_t>(i)], inside ? value : kGuard)
            << "fill " << sizeof(T) << "-byte count " << count << " at " << i << " target " << simd::CurrentTarget();
      }
      std::fill(dst.begin(), dst.end(), kGuard);
      simd::StreamCopy(dst.data() + offset, src.data(), count * static_cast<int64_t>(sizeof(T)));
      simd::TransposeStreamFence();
      for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
        const bool inside = i >= offset && i < offset + count;
        ASSERT_EQ(dst[static_cast<size_t>(i)], inside ? src[static_cast<size_t>(i - offset)] : kGuard)
            << "stream copy " << sizeof(T) << "-byte count " << count << " at " << i << " target "
            << simd::CurrentTarget();
      }
      if constexpr (sizeof(T) >= 2) {
        std::fill(dst.begin(), dst.end(), kGuard);
        simd::GatherEvenRow(dst.data() + offset, src.data() + offset, count - offset > 0 ? count - offset : 0);
        const int64_t n = std::max<int64_t>(count - offset, 0);
        for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
          const bool inside = i >= offset && i < offset + n;
          const T want = inside ? src[static_cast<size_t>(offset + 2 * (i - offset))] : kGuard;
          ASSERT_EQ(dst[static_cast<size_t>(i)], want)
              << "even " << sizeof(T) << "-byte count " << n << " at " << i << " target " << simd::CurrentTarget();
        }
      }
    }
  }
}

template <typename T>
void CheckIotaRows() {
  for (int64_t count = 0; count <= 300; ++count) {
    std::vector<T> dst(static_cast<size_t>(count + 17), T{-7});
    const T first = static_cast<T>(count * 3 - 100);
    simd::IotaRow(dst.data() + 1, count, first);
    ASSERT_EQ(dst[0], T{-7});
    for (int64_t i = 0; i < count; ++i) ASSERT_EQ(dst[static_cast<size_t>(i + 1)], static_cast<T>(first + i));
    for (size_t i = static_cast<size_t>(count + 1); i < dst.size(); ++i) ASSERT_EQ(dst[i], T{-7});
  }
}

TEST_F(TransposeLevelsTest, MovementRowsAtEveryLevel) {
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    CheckMovementRows<uint8_t>();
    CheckMovementRows<uint16_t>();
    CheckMovementRows<uint32_t>();
    CheckMovementRows<uint64_t>();
    CheckIotaRows<int32_t>();
    CheckIotaRows<int64_t>();
  }
}

// Runs splittable kernel `key` as `parts` calls of one step.
void RunSplit(const std::string& key, const std::vector<const Array*>& inputs, Array& out,
              const KernelParams& params, int parts) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << key;
  ASSERT_TRUE(entry->splittable) << key;
  std::vector<BufferView> in;
  for (const Array* a : inputs) in.push_back(a->View());
  BufferView out_view = out.View();
  const KernelArgs args{in, {&out_view, 1}, params.get()};
  for (int p = 0; p < parts; ++p) ASSERT_TRUE(entry->fn(KernelContext{p, parts}, args).ok()) << key;
}

// Benchmark-sized broadcasts, strided slices and iotas (16 MiB outputs) through the kernels
// at every level, one call and split in two, against index arithmetic.
TEST_F(TransposeLevelsTest, LargeFillsGathersAndIotasAtEveryLevel) {
  std::mt19937 rng(61);
  const int64_t n = 2048;
  for (env::Isa level : Levels()) {
    ASSERT_TRUE(simd::SetIsa(level).ok());
    for (int parts = 1; parts <= 2; ++parts) {
      // Column broadcast f32[2048, 1] -> [2048, 2048] and row broadcast (f64).
      Array column = RandomBytes(DType::kF32, {n, 1}, rng), wide(DType::kF32, {n, n});
      RunSplit(Key("broadcast_in_dim", DType::kF32), {&column}, wide, BroadcastInDimParams{.dimensions = {0, 1}}, parts);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; j += 97)
          ASSERT_EQ(0, std::memcmp(At(wide, {i, j}), At(column, {i, 0}), 4)) << i << "," << j;
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(0, std::memcmp(At(wide, {i, n - 1}), At(column, {i, 0}), 4));
      // Every second column: 2-, 4- and 8-byte elements, an odd row length for the edges.
      for (DType dtype : {DType::kBF16, DType::kF32, DType::kF64}) {
        const int64_t cols = n + 1;
        Array in = RandomBytes(dtype, {n, cols}, rng), out(dtype, {n, (cols + 1) / 2});
        RunSplit(Key("slice", dtype), {&in}, out, SliceParams{.start = {0, 0}, .limit = {n, cols}, .stride = {1, 2}},
                 parts);
        const auto bytes = static_cast<size_t>(DTypeByteSize(dtype));
        ForEachIndex(out.dims, [&](const Dims& index) {
          ASSERT_EQ(0, std::memcmp(At(out, index), At(in, {index[0], 2 * index[1]}), bytes))
              << DTypeName(dtype) << " at " << index[0] << "," << index[1] << " target " << simd::CurrentTarget();
        });
      }
      // Iotas along each dimension, s32 and s64.
      for (int dim = 0; dim < 2; ++dim) {
        Array out32(DType::kS32, {n, n}), out64(DType::kS64, {n, n / 2});
        RunSplit(Key("iota", DType::kS32), {}, out32, IotaParams{.dimension = dim}, parts);
        RunSplit(Key("iota", DType::kS64), {}, out64, IotaParams{.dimension = dim}, parts);
        const auto* v32 = reinterpret_cast<const int32_t*>(out32.bytes.data());
        const auto* v64 = reinterpret_cast<const int64_t*>(out64.bytes.data());
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < n; ++j) ASSERT_EQ(v32[i * n + j], dim == 0 ? i : j) << i << "," << j;
          for (int64_t j = 0; j < n / 2; ++j) ASSERT_EQ(v64[i * (n / 2) + j], dim == 0 ? i : j) << i << "," << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace stablert::kernels
