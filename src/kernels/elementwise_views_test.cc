// Elementwise kernels over strided views (elementwise_views.h) against the same kernels on
// materialized copies: broadcasts (zero strides), transposes, mixed, split over calls.
#include "kernels/elementwise_views.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::GetDouble;
using testing::SetDouble;

// Element `flat` (row-major over dims) of a view with `strides`: its element offset.
int64_t Offset(const Dims& dims, const std::vector<int64_t>& strides, int64_t flat) {
  int64_t offset = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    offset += (flat % dims[d]) * strides[d];
    flat /= dims[d];
  }
  return offset;
}

// Copies the view of `source` (dims, strides) into a dense array.
Array Materialize(const Array& source, const Dims& dims, const std::vector<int64_t>& strides) {
  Array out(source.dtype, dims);
  const size_t element = static_cast<size_t>(DTypeByteSize(source.dtype));
  for (int64_t i = 0; i < out.size(); ++i)
    std::memcpy(&out.bytes[static_cast<size_t>(i) * element],
                &source.bytes[static_cast<size_t>(Offset(dims, strides, i)) * element], element);
  return out;
}

BufferView ViewOf(const Array& source, const Dims& dims, const std::vector<int64_t>& strides) {
  BufferView view = source.View();
  view.dims = dims;
  view.strides = strides;
  view.num_elements = 1;
  for (int64_t d : dims) view.num_elements *= d;
  return view;
}

TEST(ElementwiseViews, GatherMatchesTheViewForEveryElementSize) {
  std::mt19937 rng(11);
  const Dims dims = {3, 5, 7, 2};
  // A [5, 1, 2] source broadcast to dims (dim 0 and 2 repeat), and a [2, 7, 5, 3]
  // source read transposed.
  const std::vector<std::vector<int64_t>> views = {{0, 2, 0, 1}, {1, 3, 15, 105}, {0, 0, 0, 0}, {70, 14, 2, 1}};
  const std::vector<int64_t> source_sizes = {10, 210, 1, 210};
  for (DType dtype : {DType::kU8, DType::kF16, DType::kF32, DType::kF64, DType::kC128}) {
    for (size_t v = 0; v < views.size(); ++v) {
      Array source(dtype, {source_sizes[v]});
      for (uint8_t& byte : source.bytes) byte = static_cast<uint8_t>(rng());
      const Array expected = Materialize(source, dims, views[v]);
      const BufferView view = ViewOf(source, dims, views[v]);
      for (int trial = 0; trial < 20; ++trial) {
        const int64_t begin = static_cast<int64_t>(rng() % 210), count = static_cast<int64_t>(rng() % (211 - begin));
        const size_t element = static_cast<size_t>(DTypeByteSize(dtype));
        std::vector<uint8_t> got(static_cast<size_t>(count) * element + 1, 0xEE);
        GatherViewElements(view, begin, count, got.data());
        ASSERT_EQ(std::memcmp(got.data(), &expected.bytes[static_cast<size_t>(begin) * element],
                              static_cast<size_t>(count) * element), 0)
            << DTypeName(dtype) << " view " << v << " begin " << begin << " count " << count;
        EXPECT_EQ(got.back(), 0xEE) << "wrote past the end";
      }
    }
  }
}

// Runs `key` on inputs that are views and on their materialized copies, split over
// 1..3 calls, and expects the same bytes.
void ExpectSameAsDense(const std::string& key, const std::vector<std::pair<const Array*, std::vector<int64_t>>>& inputs,
                       const Dims& dims, DType out_dtype, const KernelParams& params = KernelParams()) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << key;
  ASSERT_TRUE(entry->strided_inputs) << key;
  std::vector<Array> dense;
  std::vector<BufferView> views, dense_views;
  for (const auto& [array, strides] : inputs) {
    if (strides.empty()) {
      views.push_back(array->View());
      dense_views.push_back(array->View());
    } else {
      views.push_back(ViewOf(*array, dims, strides));
      dense.push_back(Materialize(*array, dims, strides));
    }
  }
  for (size_t i = 0, d = 0; i < inputs.size(); ++i)
    if (!inputs[i].second.empty()) dense_views.insert(dense_views.begin() + static_cast<long>(i), dense[d++].View());
  Array want(out_dtype, dims);
  std::vector<BufferView> want_out = {want.View()};
  KernelArgs dense_args{dense_views, want_out};
  dense_args.params = params.get();
  ASSERT_TRUE(entry->fn(KernelContext{}, dense_args).ok());
  for (int calls = 1; calls <= 3; ++calls) {
    Array got(out_dtype, dims);
    std::vector<BufferView> got_out = {got.View()};
    KernelArgs args{views, got_out};
    args.params = params.get();
    for (int c = 0; c < calls; ++c) ASSERT_TRUE(entry->fn(KernelContext{c, calls}, args).ok());
    ASSERT_EQ(got.bytes, want.bytes) << key << " in " << calls << " calls";
  }
}

TEST(ElementwiseViews, KernelsReadBroadcastAndTransposedInputsInPlace) {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  const Dims dims = {37, 129};  // several blocks, odd sizes
  Array x(DType::kF32, dims), row(DType::kF32, {129}), column(DType::kF32, {37}), xt(DType::kF32, {129, 37});
  for (Array* a : {&x, &row, &column, &xt})
    for (int64_t i = 0; i < a->size(); ++i) SetDouble(*a, i, normal(rng));
  ExpectSameAsDense("subtract.f32", {{&x, {}}, {&column, {1, 0}}}, dims, DType::kF32);
  ExpectSameAsDense("multiply.f32", {{&row, {0, 1}}, {&x, {}}}, dims, DType::kF32);
  ExpectSameAsDense("add.f32", {{&xt, {1, 37}}, {&column, {1, 0}}}, dims, DType::kF32);
  ExpectSameAsDense("exponential.f32", {{&xt, {1, 37}}}, dims, DType::kF32);
  ExpectSameAsDense("maximum.f32", {{&x, {}}, {&row, {0, 0}}}, dims, DType::kF32);  // one element repeated
  Array pred(DType::kPred, {129});
  for (int64_t i = 0; i < pred.size(); ++i) pred.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(rng() % 2);
  ExpectSameAsDense("select.f32", {{&pred, {0, 1}}, {&x, {}}, {&column, {1, 0}}}, dims, DType::kF32);
  Array scalar_pred(DType::kPred, {});
  scalar_pred.bytes[0] = 1;
  ExpectSameAsDense("select.f32", {{&scalar_pred, {}}, {&xt, {1, 37}}, {&x, {}}}, dims, DType::kF32);
  ExpectSameAsDense("convert.f32.f16", {{&xt, {1, 37}}}, dims, DType::kF16);
  Array xi(DType::kS32, {129, 37});
  for (int64_t i = 0; i < xi.size(); ++i) testing::SetInt(xi, i, static_cast<int64_t>(rng() % 100));
  Array yi(DType::kS32, {37});
  for (int64_t i = 0; i < yi.size(); ++i) testing::SetInt(yi, i, static_cast<int64_t>(rng() % 100));
  ExpectSameAsDense("remainder.i32", {{&xi, {1, 37}}, {&yi, {1, 0}}}, dims, DType::kS32);
}

}  // namespace
}  // namespace stablert::kernels
