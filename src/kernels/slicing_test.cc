// Cross-checks dynamic_slice, dynamic_update_slice, pad and reverse against index
// arithmetic on random shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/slicing_params.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

const DType kWidths[] = {DType::kU8, DType::kF16, DType::kS32, DType::kF64};

Array RandomBytes(DType dtype, Dims dims, std::mt19937& rng) {
  Array a(dtype, std::move(dims));
  for (uint8_t& b : a.bytes) b = static_cast<uint8_t>(rng());
  return a;
}

int64_t Linear(const Dims& dims, const Dims& index) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

template <typename Fn>
void ForEachIndex(const Dims& dims, Fn fn) {
  if (ElementCount(dims) == 0) return;
  Dims index(dims.size(), 0);
  while (true) {
    fn(index);
    size_t d = dims.size();
    bool done = true;
    while (d > 0) {
      --d;
      if (++index[d] < dims[d]) {
        done = false;
        break;
      }
      index[d] = 0;
    }
    if (done) return;
  }
}

bool SameElement(const Array& a, int64_t i, const Array& b, int64_t j) {
  int size = DTypeByteSize(a.dtype);
  return std::memcmp(&a.bytes[static_cast<size_t>(i * size)], &b.bytes[static_cast<size_t>(j * size)], size) == 0;
}

TEST(SlicingTest, DynamicSliceClampsStarts) {
  std::mt19937 rng(41);
  const DType index_types[] = {DType::kS32, DType::kS64, DType::kU32, DType::kS8, DType::kU64};
  for (int trial = 0; trial < 200; ++trial) {
    DType dtype = kWidths[trial % 4];
    int rank = static_cast<int>(rng() % 4);
    Dims dims(static_cast<size_t>(rank)), sizes(static_cast<size_t>(rank));
    std::vector<Array> indices;
    Dims starts;
    for (int d = 0; d < rank; ++d) {
      dims[d] = static_cast<int64_t>(rng() % 6);
      sizes[d] = dims[d] == 0 ? 0 : static_cast<int64_t>(rng() % (dims[d] + 1));
      Array index(index_types[rng() % 5], {});
      int64_t start = static_cast<int64_t>(rng() % 11) - 3;
      if (DTypeKindOf(index.dtype) != DTypeKind::kSigned && start < 0) start = static_cast<int64_t>(rng() % 2 ? 0 : 0xffffffffu);
      SetInt(index, 0, start);
      int64_t value = GetInt(index, 0);
      if (index.dtype == DType::kU32) value = static_cast<uint32_t>(value);
      starts.push_back(std::clamp<int64_t>(value, 0, dims[d] - sizes[d]));
      indices.push_back(index);
    }
    Array in = RandomBytes(dtype, dims, rng), out(dtype, sizes);
    std::vector<const Array*> inputs = {&in};
    for (const Array& index : indices) inputs.push_back(&index);
    RunKernel(Key("dynamic_slice", dtype), inputs, {&out});
    ForEachIndex(sizes, [&](const Dims& index) {
      Dims source = index;
      for (size_t d = 0; d < source.size(); ++d) source[d] += starts[d];
      ASSERT_TRUE(SameElement(out, Linear(sizes, index), in, Linear(dims, source)));
    });

    // dynamic_update_slice writes a random update of the same sizes at the same starts.
    Array update = RandomBytes(dtype, sizes, rng), updated(dtype, dims);
    std::vector<const Array*> dus_inputs = {&in, &update};
    for (const Array& index : indices) dus_inputs.push_back(&index);
    RunKernel(Key("dynamic_update_slice", dtype), dus_inputs, {&updated});
    ForEachIndex(dims, [&](const Dims& index) {
      bool inside = true;
      Dims within = index;
      for (size_t d = 0; d < index.size(); ++d) {
        within[d] = index[d] - starts[d];
        inside = inside && within[d] >= 0 && within[d] < sizes[d];
      }
      if (inside) ASSERT_TRUE(SameElement(updated, Linear(dims, index), update, Linear(sizes, within)));
      else ASSERT_TRUE(SameElement(updated, Linear(dims, index), in, Linear(dims, index)));
    });
  }
}

TEST(SlicingTest, PadWithNegativeAndInteriorPadding) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kWidths[trial % 4];
    int rank = static_cast<int>(rng() % 4);
    Dims dims(static_cast<size_t>(rank)), out_dims(static_cast<size_t>(rank));
    std::vector<int64_t> low(rank), high(rank), interior(rank);
    for (int d = 0; d < rank; ++d) {
      dims[d] = static_cast<int64_t>(rng() % 5);
      interior[d] = static_cast<int64_t>(rng() % 3);
      int64_t natural = dims[d] + std::max<int64_t>(dims[d] - 1, 0) * interior[d];
      low[d] = static_cast<int64_t>(rng() % 7) - 3;
      high[d] = static_cast<int64_t>(rng() % 7) - 3;
      if (natural + low[d] + high[d] < 0) high[d] = -natural - low[d];
      out_dims[d] = natural + low[d] + high[d];
    }
    Array in = RandomBytes(dtype, dims, rng), value = RandomBytes(dtype, {}, rng), out(dtype, out_dims);
    RunKernel(Key("pad", dtype), {&in, &value}, {&out},
              PadParams{.low = low, .high = high, .interior = interior});
    ForEachIndex(out_dims, [&](const Dims& index) {
      Dims source(index.size());
      bool from_input = true;
      for (size_t d = 0; d < index.size(); ++d) {
        int64_t shifted = index[d] - low[d];
        int64_t step = interior[d] + 1;
        if (shifted < 0 || shifted % step != 0 || shifted / step >= dims[d]) from_input = false;
        else source[d] = shifted / step;
      }
      if (from_input) ASSERT_TRUE(SameElement(out, Linear(out_dims, index), in, Linear(dims, source)));
      else ASSERT_TRUE(SameElement(out, Linear(out_dims, index), value, 0));
    });
  }
}

TEST(SlicingTest, ReverseAnyDims) {
  std::mt19937 rng(43);
  for (int trial = 0; trial < 200; ++trial) {
    DType dtype = kWidths[trial % 4];
    int rank = 1 + static_cast<int>(rng() % 4);
    Dims dims(static_cast<size_t>(rank));
    std::vector<int64_t> reversed;
    for (int d = 0; d < rank; ++d) {
      dims[d] = 1 + static_cast<int64_t>(rng() % 5);
      if (rng() % 2) reversed.push_back(d);
    }
    Array in = RandomBytes(dtype, dims, rng), out(dtype, dims);
    RunKernel(Key("reverse", dtype), {&in}, {&out}, ReverseParams{.dimensions = reversed});
    ForEachIndex(dims, [&](const Dims& index) {
      Dims source = index;
      for (int64_t d : reversed) source[d] = dims[d] - 1 - index[d];
      ASSERT_TRUE(SameElement(out, Linear(dims, index), in, Linear(dims, source)));
    });
  }
}

}  // namespace
}  // namespace stablert::kernels
