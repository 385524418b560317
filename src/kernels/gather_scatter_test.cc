// Cross-checks gather and scatter against a per-element reading of the StableHLO spec.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/gather_scatter_params.h"
#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

// The cases below are written as StableHLO's dimension-number lists in attribute order
// (gather: offset_dims, collapsed_slice_dims, operand_batching_dims,
// start_indices_batching_dims, start_index_map, [index_vector_dim], slice_sizes; scatter:
// update_window_dims, inserted_window_dims, input_batching_dims,
// scatter_indices_batching_dims, scatter_dims_to_operand_dims, [index_vector_dim]), with an
// optional last list [mode, bits, wrap..., lo..., hi...] for the index transform. These
// build the kernels' parameter structs from them.
using Lists = std::vector<std::vector<int64_t>>;

IndexTransformParams TransformOf(const std::vector<int64_t>& l, size_t k) {
  IndexTransformParams t;
  t.mode = static_cast<IndexTransformParams::Mode>(l.at(0));
  t.bits = l.at(1);
  t.wrap.assign(l.begin() + 2, l.begin() + 2 + static_cast<long>(k));
  if (t.mode != IndexTransformParams::Mode::kNone) {
    t.lo.assign(l.begin() + 2 + static_cast<long>(k), l.begin() + 2 + 2 * static_cast<long>(k));
    t.hi.assign(l.begin() + 2 + 2 * static_cast<long>(k), l.end());
  }
  return t;
}

KernelParams ParamsFor(std::string_view key, const Lists& p) {
  if (key.substr(0, 6) == "gather") {
    GatherParams g{p.at(0), p.at(1), p.at(2), p.at(3), p.at(4), p.at(5).at(0), p.at(6), {}};
    if (p.size() > 7) g.index_transform = TransformOf(p[7], g.start_index_map.size());
    return g;
  }
  ScatterParams sc{p.at(0), p.at(1), p.at(2), p.at(3), p.at(4), p.at(5).at(0), {}, {}};
  if (p.size() > 6) sc.index_transform = TransformOf(p[6], sc.scatter_dims_to_operand_dims.size());
  return sc;
}

void RunGS(const std::string& key, const std::vector<const Array*>& inputs, const std::vector<Array*>& outputs,
           const Lists& lists) {
  RunKernel(key, inputs, outputs, ParamsFor(key, lists));
}

bool Has(const std::vector<int64_t>& list, int64_t v) { return std::find(list.begin(), list.end(), v) != list.end(); }

int64_t Linear(const Dims& dims, const Dims& index) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

Dims Unravel(const Dims& dims, int64_t linear) {
  Dims index(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

// A random gather/scatter configuration: operand [batch?, a, b, c], indices with an index
// vector dim, optional batching dims.
struct Config {
  Dims operand;
  std::vector<int64_t> batching_operand, batching_indices, index_map, collapsed_or_inserted;
  Dims indices;
  int64_t index_vector_dim;
  Dims slice;  // gather slice sizes / scatter window sizes per operand dim
};

Config RandomConfig(std::mt19937& rng) {
  Config c;
  const bool batched = rng() % 3 == 0;
  const int rank = 2 + static_cast<int>(rng() % 2);
  const int64_t batch_size = 1 + rng() % 3;
  if (batched) c.operand.push_back(batch_size);
  for (int i = 0; i < rank; ++i) c.operand.push_back(1 + static_cast<int64_t>(rng() % 5));
  const int64_t first = batched ? 1 : 0;
  if (batched) c.batching_operand = {0};
  // Index 1 or 2 of the non-batch dims.
  std::vector<int64_t> dims;
  for (int64_t d = first; d < static_cast<int64_t>(c.operand.size()); ++d) dims.push_back(d);
  std::shuffle(dims.begin(), dims.end(), rng);
  const size_t indexed = 1 + rng() % 2;
  c.index_map.assign(dims.begin(), dims.begin() + static_cast<int64_t>(indexed));
  for (int64_t d : c.index_map)
    if (rng() % 2) c.collapsed_or_inserted.push_back(d);
  std::sort(c.collapsed_or_inserted.begin(), c.collapsed_or_inserted.end());
  // Indices: [n, vector] (index_vector_dim = 1) or [vector, n] (0), plus a batch dim.
  const int64_t n = 1 + rng() % 4;
  c.index_vector_dim = static_cast<int64_t>(rng() % 2);
  c.indices = c.index_vector_dim == 0 ? Dims{static_cast<int64_t>(indexed), n} : Dims{n, static_cast<int64_t>(indexed)};
  if (batched) {
    c.indices.push_back(batch_size);
    c.batching_indices = {2};
  }
  for (size_t d = 0; d < c.operand.size(); ++d) {
    int64_t d64 = static_cast<int64_t>(d);
    if (Has(c.batching_operand, d64) || Has(c.collapsed_or_inserted, d64)) c.slice.push_back(1);
    else c.slice.push_back(static_cast<int64_t>(rng() % (c.operand[d] + 1)));
  }
  return c;
}

// Indices in [-2, dim + 1] to exercise clamping (gather) and skipping (scatter).
Array RandomIndices(const Config& c, std::mt19937& rng) {
  Array indices(DType::kS32, c.indices);
  for (int64_t i = 0; i < indices.size(); ++i) SetInt(indices, i, static_cast<int64_t>(rng() % 9) - 2);
  return indices;
}

// The start index vector for batch position `batch` (indices dims without the vector dim).
std::vector<int64_t> StartVector(const Config& c, const Array& indices, const Dims& batch) {
  std::vector<int64_t> start;
  for (size_t k = 0; k < c.index_map.size(); ++k) {
    Dims full;
    size_t b = 0;
    for (size_t d = 0; d < c.indices.size(); ++d)
      full.push_back(static_cast<int64_t>(d) == c.index_vector_dim ? static_cast<int64_t>(k) : batch[b++]);
    start.push_back(GetInt(indices, Linear(c.indices, full)));
  }
  return start;
}

Dims BatchDims(const Config& c) {
  Dims batch;
  for (size_t d = 0; d < c.indices.size(); ++d)
    if (static_cast<int64_t>(d) != c.index_vector_dim) batch.push_back(c.indices[d]);
  return batch;
}

TEST(GatherTest, MatchesSpecPerElement) {
  std::mt19937 rng(61);
  for (int trial = 0; trial < 300; ++trial) {
    Config c = RandomConfig(rng);
    Array operand(DType::kS32, c.operand);
    for (int64_t i = 0; i < operand.size(); ++i) SetInt(operand, i, i * 7 + 1);
    Array indices = RandomIndices(c, rng);
    // Result: batch dims first, then offset dims (offset_dims = the trailing positions).
    Dims batch_dims = BatchDims(c);
    Dims result_dims = batch_dims;
    std::vector<int64_t> offset_operand_dims, offset_dims;
    for (size_t d = 0; d < c.operand.size(); ++d) {
      int64_t d64 = static_cast<int64_t>(d);
      if (Has(c.batching_operand, d64) || Has(c.collapsed_or_inserted, d64)) continue;
      offset_operand_dims.push_back(d64);
      offset_dims.push_back(static_cast<int64_t>(result_dims.size()));
      result_dims.push_back(c.slice[d]);
    }
    Array out(DType::kS32, result_dims);
    RunGS("gather.i32", {&operand, &indices}, {&out},
              {offset_dims, c.collapsed_or_inserted, c.batching_operand, c.batching_indices, c.index_map,
               {c.index_vector_dim}, c.slice});
    for (int64_t r = 0; r < out.size(); ++r) {
      Dims index = Unravel(result_dims, r);
      Dims batch(index.begin(), index.begin() + static_cast<int64_t>(batch_dims.size()));
      std::vector<int64_t> start = StartVector(c, indices, batch);
      Dims operand_index(c.operand.size(), 0);
      for (size_t k = 0; k < c.index_map.size(); ++k) {
        size_t d = static_cast<size_t>(c.index_map[k]);
        operand_index[d] = std::clamp<int64_t>(start[k], 0, c.operand[d] - c.slice[d]);
      }
      if (!c.batching_operand.empty()) operand_index[0] = batch[1];  // indices batch dim 2 -> batch position 1
      for (size_t i = 0; i < offset_operand_dims.size(); ++i)
        operand_index[static_cast<size_t>(offset_operand_dims[i])] += index[batch_dims.size() + i];
      ASSERT_EQ(GetInt(out, r), GetInt(operand, Linear(c.operand, operand_index))) << "trial " << trial << " at " << r;
    }
  }
}

TEST(ScatterTest, MatchesSpecPerElement) {
  std::mt19937 rng(62);
  for (int trial = 0; trial < 300; ++trial) {
    Config c = RandomConfig(rng);
    const bool add = trial % 2;
    Array operand(DType::kS32, c.operand);
    for (int64_t i = 0; i < operand.size(); ++i) SetInt(operand, i, i * 3);
    Array indices = RandomIndices(c, rng);
    Dims batch_dims = BatchDims(c);
    Dims update_dims = batch_dims;
    std::vector<int64_t> window_operand_dims, window_dims;
    for (size_t d = 0; d < c.operand.size(); ++d) {
      int64_t d64 = static_cast<int64_t>(d);
      if (Has(c.batching_operand, d64) || Has(c.collapsed_or_inserted, d64)) continue;
      window_operand_dims.push_back(d64);
      window_dims.push_back(static_cast<int64_t>(update_dims.size()));
      update_dims.push_back(c.slice[d]);
    }
    Array updates(DType::kS32, update_dims);
    for (int64_t i = 0; i < updates.size(); ++i) SetInt(updates, i, 1000 + i);
    Array out(DType::kS32, c.operand);
    RunGS(add ? "scatter_add.i32" : "scatter_assign.i32", {&operand, &indices, &updates}, {&out},
              {window_dims, c.collapsed_or_inserted, c.batching_operand, c.batching_indices, c.index_map,
               {c.index_vector_dim}});
    // Reference: apply every update whose whole window fits, in update order.
    Array want = operand;
    const int64_t batch_count = ElementCount(batch_dims);
    for (int64_t b = 0; b < batch_count; ++b) {
      Dims batch = Unravel(batch_dims, b);
      std::vector<int64_t> start_vector = StartVector(c, indices, batch);
      Dims start(c.operand.size(), 0);
      for (size_t k = 0; k < c.index_map.size(); ++k) start[static_cast<size_t>(c.index_map[k])] = start_vector[k];
      if (!c.batching_operand.empty()) start[0] = batch[1];
      bool fits = true;
      for (size_t d = 0; d < c.operand.size(); ++d) {
        int64_t size = Has(window_operand_dims, static_cast<int64_t>(d)) ? c.slice[d] : 1;
        fits = fits && start[d] >= 0 && start[d] + size <= c.operand[d];
      }
      if (!fits) continue;
      Dims window_sizes;
      for (int64_t d : window_operand_dims) window_sizes.push_back(c.slice[static_cast<size_t>(d)]);
      for (int64_t w = 0; w < ElementCount(window_sizes); ++w) {
        Dims window = Unravel(window_sizes, w);
        Dims target = start, update_index = batch;
        for (size_t i = 0; i < window.size(); ++i) {
          target[static_cast<size_t>(window_operand_dims[i])] += window[i];
          update_index.push_back(window[i]);
        }
        int64_t t = Linear(c.operand, target);
        int64_t u = GetInt(updates, Linear(update_dims, update_index));
        SetInt(want, t, add ? GetInt(want, t) + u : u);
      }
    }
    ASSERT_EQ(out.bytes, want.bytes) << "trial " << trial << (add ? " add" : " assign");
  }
}

// Row forms: operand [outer..., indexed..., inner...] with the index vector last. The
// prepared fast path must match the generic walk (no state) exactly, also when split.
struct RowCase {
  Dims operand, indices;
  std::vector<int64_t> index_map, dropped, window_positions;
  Dims target;  // gather result / scatter updates
};

RowCase RandomRowCase(std::mt19937& rng) {
  RowCase c;
  const int64_t outer_rank = rng() % 2, k = 1 + rng() % 2, inner_rank = rng() % 3;
  for (int64_t i = 0; i < outer_rank + k + inner_rank; ++i) c.operand.push_back(1 + static_cast<int64_t>(rng() % 6));
  for (int64_t j = 0; j < k; ++j) c.index_map.push_back(outer_rank + j);
  if (k == 2 && rng() % 2) std::swap(c.index_map[0], c.index_map[1]);
  const Dims batch = rng() % 3 == 0 ? Dims{2, 1 + static_cast<int64_t>(rng() % 5)} : Dims{static_cast<int64_t>(rng() % 9)};
  c.indices = batch;
  c.indices.push_back(k);
  // Target: outer dims, batch dims, inner dims; indexed dims dropped or kept as size 1 at
  // the batch position.
  for (int64_t d = 0; d < outer_rank; ++d) {
    c.window_positions.push_back(static_cast<int64_t>(c.target.size()));
    c.target.push_back(c.operand[static_cast<size_t>(d)]);
  }
  for (int64_t b : batch) c.target.push_back(b);
  for (int64_t d = outer_rank; d < outer_rank + k; ++d) {
    if (rng() % 3 == 0) {
      c.window_positions.push_back(static_cast<int64_t>(c.target.size()));
      c.target.push_back(1);
    } else {
      c.dropped.push_back(d);
    }
  }
  for (int64_t d = outer_rank + k; d < static_cast<int64_t>(c.operand.size()); ++d) {
    c.window_positions.push_back(static_cast<int64_t>(c.target.size()));
    c.target.push_back(c.operand[static_cast<size_t>(d)]);
  }
  return c;
}

// Runs `key` with its prepared state split into `parts` calls, and without state.
void RunBothPaths(const std::string& key, const std::vector<const Array*>& inputs, Array* fast, Array* generic,
                  const Lists& lists, int parts) {
  const KernelParams params = ParamsFor(key, lists);
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << key;
  ASSERT_NE(entry->prepare, nullptr) << key;
  std::vector<BufferView> in;
  for (const Array* a : inputs) in.push_back(a->View());
  std::vector<BufferView> fast_out = {fast->View()}, generic_out = {generic->View()};
  KernelArgs args;
  args.inputs = in;
  args.outputs = fast_out;
  args.params = params.get();
  auto state = entry->prepare(args);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_NE(state->state.get(), nullptr) << key << ": the row form was not recognized";
  args.state = state->state.get();
  for (int part = 0; part < parts; ++part) ASSERT_TRUE(entry->fn(KernelContext{part, parts}, args).ok());
  KernelArgs generic_args = args;
  generic_args.outputs = generic_out;
  generic_args.state = nullptr;
  ASSERT_TRUE(entry->fn(KernelContext{}, generic_args).ok());
}

TEST(RowFormTest, FastPathsMatchTheGenericWalk) {
  std::mt19937 rng(63);
  const DType index_types[] = {DType::kS32, DType::kS64, DType::kU8, DType::kS8};
  for (int trial = 0; trial < 400; ++trial) {
    RowCase c = RandomRowCase(rng);
    const DType index_type = index_types[trial % 4];
    Array indices(index_type, c.indices);
    for (int64_t i = 0; i < indices.size(); ++i) SetInt(indices, i, static_cast<int64_t>(rng() % 10) - 2);
    const int64_t ivd = static_cast<int64_t>(c.indices.size()) - 1;
    const int parts = 1 + trial % 3;
    Array operand(DType::kS32, c.operand);
    for (int64_t i = 0; i < operand.size(); ++i) SetInt(operand, i, i * 5 + 3);
    {
      Array fast(DType::kS32, c.target), generic(DType::kS32, c.target);
      RunBothPaths("gather.i32", {&operand, &indices}, &fast, &generic,
                   {c.window_positions, c.dropped, {}, {}, c.index_map, {ivd}, [&] {
                      Dims slice = c.operand;
                      for (int64_t d : c.index_map) slice[static_cast<size_t>(d)] = 1;
                      return slice;
                    }()},
                   parts);
      ASSERT_EQ(fast.bytes, generic.bytes) << "gather trial " << trial;
    }
    Array updates(DType::kS32, c.target);
    for (int64_t i = 0; i < updates.size(); ++i) SetInt(updates, i, 100 + static_cast<int64_t>(rng() % 50));
    for (const char* body : {"scatter_assign.i32", "scatter_add.i32", "scatter_max.i32", "scatter_mul.i32"}) {
      Array fast(DType::kS32, c.operand), generic(DType::kS32, c.operand);
      RunBothPaths(body, {&operand, &indices, &updates}, &fast, &generic,
                   {c.window_positions, c.dropped, {}, {}, c.index_map, {ivd}}, parts);
      ASSERT_EQ(fast.bytes, generic.bytes) << body << " trial " << trial;
    }
  }
}

// Float add in index order: duplicates combine in the same order as the generic walk,
// bit for bit; wide rows are split by columns.
TEST(RowFormTest, FloatAddKeepsIndexOrder) {
  std::mt19937 rng(64);
  Array operand(DType::kF32, {7, 300}), indices(DType::kS32, {500, 1}), updates(DType::kF32, {500, 300});
  for (int64_t i = 0; i < operand.size(); ++i) SetDouble(operand, i, std::ldexp(1.0, static_cast<int>(rng() % 40) - 20));
  for (int64_t i = 0; i < updates.size(); ++i)
    SetDouble(updates, i, (static_cast<double>(rng() % 2000) - 1000) * std::ldexp(1.0, static_cast<int>(rng() % 30) - 15));
  for (int64_t i = 0; i < indices.size(); ++i) SetInt(indices, i, static_cast<int64_t>(rng() % 9) - 1);
  for (int parts : {1, 2, 4}) {
    Array fast(DType::kF32, operand.dims), generic(DType::kF32, operand.dims);
    RunBothPaths("scatter_add.f32", {&operand, &indices, &updates}, &fast, &generic, {{1}, {0}, {}, {}, {0}, {1}},
                 parts);
    ASSERT_EQ(fast.bytes, generic.bytes) << parts << " parts";
  }
}

// The index transform (gather_scatter_index.h): wrap and fill (gather), wrap and clamp
// (scatter), per element against the definition, on a 1-D operand.
TEST(IndexTransformTest, MatchesItsDefinition) {
  std::mt19937 rng(65);
  const int64_t n = 11, count = 300;
  Array operand(DType::kF32, {n}), indices(DType::kS32, {count, 1}), fill(DType::kF32, {});
  for (int64_t i = 0; i < n; ++i) SetDouble(operand, i, 10.0 + static_cast<double>(i));
  for (int64_t i = 0; i < count; ++i) SetInt(indices, i, static_cast<int64_t>(rng() % 40) - 20);
  SetDouble(fill, 0, -1.0);
  const Lists base = {{}, {0}, {}, {}, {0}, {1}, {1}};
  auto gather = [&](const std::vector<int64_t>& transform, bool with_fill) {
    Array out(DType::kF32, {count});
    Lists params = base;
    params.push_back(transform);
    std::vector<const Array*> in = {&operand, &indices};
    if (with_fill) in.push_back(&fill);
    RunGS("gather.f32", in, {&out}, params);
    return out;
  };
  const Array wrapped = gather({0, 0, n}, false), filled = gather({1, 0, n, 0, n - 1}, true),
              narrow = gather({1, 0, 0, 2, 5}, true);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t raw = GetInt(indices, i), v = raw < 0 ? raw + n : raw;
    EXPECT_EQ(GetDouble(wrapped, i), 10.0 + static_cast<double>(std::clamp<int64_t>(v, 0, n - 1))) << raw;
    EXPECT_EQ(GetDouble(filled, i), v >= 0 && v < n ? 10.0 + static_cast<double>(v) : -1.0) << raw;
    EXPECT_EQ(GetDouble(narrow, i), raw >= 2 && raw <= 5 ? 10.0 + static_cast<double>(raw) : -1.0) << raw;
  }
  // Narrowing to 32 bits after the wrap (i64 indices converted to i32).
  Array wide(DType::kS64, {count, 1});
  for (int64_t i = 0; i < count; ++i)
    SetInt(wide, i, (static_cast<int64_t>(rng() % 5) - 2) * (int64_t{1} << 32) + static_cast<int64_t>(rng() % 30) - 15);
  {
    Array out(DType::kF32, {count});
    Lists params = base;
    params.push_back({0, 32, n});
    RunGS("gather.f32", {&operand, &wide}, {&out}, params);
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = GetInt(wide, i);
      if (v < 0) v += n;
      v = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
      EXPECT_EQ(GetDouble(out, i), 10.0 + static_cast<double>(std::clamp<int64_t>(v, 0, n - 1))) << GetInt(wide, i);
    }
  }
  // Scatter: wrap, then (mode 2) clamp into [1, 8]; out-of-bounds updates are dropped.
  Array updates(DType::kF32, {count});
  for (int64_t i = 0; i < count; ++i) SetDouble(updates, i, static_cast<double>(i % 7));
  for (const std::vector<int64_t>& transform : {std::vector<int64_t>{0, 0, n}, std::vector<int64_t>{2, 0, n, 1, 8}, std::vector<int64_t>{2, 0, 0, -3, 30}}) {
    Array out(DType::kF32, {n});
    Lists params = {{}, {0}, {}, {}, {0}, {1}, transform};
    RunGS("scatter_add.f32", {&operand, &indices, &updates}, {&out}, params);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = 10.0 + static_cast<double>(i);
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = GetInt(indices, i);
      if (v < 0) v += transform[2];
      if (transform[0] == 2) v = std::clamp(v, transform[3], transform[4]);
      if (v >= 0 && v < n) want[v] += static_cast<double>(i % 7);
    }
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(GetDouble(out, i), want[i]) << "transform mode " << transform[0];
  }
}

// Row forms with an index transform: the fast paths match the generic walk.
TEST(IndexTransformTest, FastPathsMatchTheGenericWalk) {
  std::mt19937 rng(66);
  const DType index_types[] = {DType::kS32, DType::kS64, DType::kU8, DType::kS8};
  for (int trial = 0; trial < 300; ++trial) {
    RowCase c = RandomRowCase(rng);
    const int64_t k = static_cast<int64_t>(c.index_map.size());
    Array indices(index_types[trial % 4], c.indices);
    for (int64_t i = 0; i < indices.size(); ++i) SetInt(indices, i, static_cast<int64_t>(rng() % 16) - 8);
    const int64_t ivd = static_cast<int64_t>(c.indices.size()) - 1;
    const int parts = 1 + trial % 3;
    Array operand(DType::kS32, c.operand), fill(DType::kS32, {});
    for (int64_t i = 0; i < operand.size(); ++i) SetInt(operand, i, i * 5 + 3);
    SetInt(fill, 0, -77);
    // wrap per component by the dim size (or not), bounds around the dim.
    std::vector<int64_t> wrap, lo, hi;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t size = c.operand[static_cast<size_t>(c.index_map[static_cast<size_t>(j)])];
      wrap.push_back(rng() % 3 ? size : 0);
      lo.push_back(static_cast<int64_t>(rng() % 3) - 1);
      hi.push_back(size - 1 + static_cast<int64_t>(rng() % 3) - 1);
    }
    const int64_t bits = trial % 5 == 0 ? 8 : 0;  // values in [-8, 8) survive 8 bits
    auto list = [&](int64_t mode) {
      std::vector<int64_t> l = {mode, bits};
      l.insert(l.end(), wrap.begin(), wrap.end());
      if (mode != 0) {
        l.insert(l.end(), lo.begin(), lo.end());
        l.insert(l.end(), hi.begin(), hi.end());
      }
      return l;
    };
    Dims slice = c.operand;
    for (int64_t d : c.index_map) slice[static_cast<size_t>(d)] = 1;
    for (int64_t mode : {0, 1}) {
      Array fast(DType::kS32, c.target), generic(DType::kS32, c.target);
      std::vector<const Array*> in = {&operand, &indices};
      if (mode == 1) in.push_back(&fill);
      RunBothPaths("gather.i32", in, &fast, &generic,
                   {c.window_positions, c.dropped, {}, {}, c.index_map, {ivd}, slice, list(mode)}, parts);
      ASSERT_EQ(fast.bytes, generic.bytes) << "gather mode " << mode << " trial " << trial;
    }
    Array updates(DType::kS32, c.target);
    for (int64_t i = 0; i < updates.size(); ++i) SetInt(updates, i, 100 + static_cast<int64_t>(rng() % 50));
    for (int64_t mode : {0, 2}) {
      for (const char* body : {"scatter_assign.i32", "scatter_add.i32", "scatter_max.i32"}) {
        Array fast(DType::kS32, c.operand), generic(DType::kS32, c.operand);
        RunBothPaths(body, {&operand, &indices, &updates}, &fast, &generic,
                     {c.window_positions, c.dropped, {}, {}, c.index_map, {ivd}, list(mode)}, parts);
        ASSERT_EQ(fast.bytes, generic.bytes) << body << " mode " << mode << " trial " << trial;
      }
    }
  }
}

// Large row scatters with many duplicates (few destination rows), negative and
// out-of-range indices, with and without the clamp transform: the prepared step run as one
// call and split into 2 and 3 calls (blocks, columns or destination rows, whichever its
// shape takes) match the generic walk bit for bit, so every element sees its updates in
// index order however the step is split.
TEST(RowFormTest, LargeScattersWithFewRowsMatchTheGenericWalk) {
  std::mt19937 rng(67);
  struct Shape {
    int64_t positions, rows, inner;
  };
  // 16 f32 (64-byte rows: one thread), 64 f32 (256-byte rows: split by destination rows),
  // 3 f32 (12-byte rows), 160 f32 (split by columns).
  for (const Shape shape : {Shape{1 << 18, 8, 16}, Shape{1 << 17, 37, 64}, Shape{1 << 20, 5, 3}, Shape{1 << 15, 6, 160}}) {
    Array operand(DType::kF32, {shape.rows, shape.inner}), indices(DType::kS32, {shape.positions, 1}),
        updates(DType::kF32, {shape.positions, shape.inner});
    for (int64_t i = 0; i < operand.size(); ++i) SetDouble(operand, i, std::ldexp(1.0, static_cast<int>(rng() % 40) - 20));
    for (int64_t i = 0; i < updates.size(); ++i)
      SetDouble(updates, i, (static_cast<double>(rng() % 2000) - 1000) * std::ldexp(1.0, static_cast<int>(rng() % 30) - 15));
    for (int64_t i = 0; i < indices.size(); ++i)
      SetInt(indices, i, static_cast<int64_t>(rng() % static_cast<uint32_t>(shape.rows + 4)) - 2);
    for (const bool clamp : {false, true}) {
      Lists lists = {{1}, {0}, {}, {}, {0}, {1}};
      if (clamp) lists.push_back({2, 0, shape.rows, 0, shape.rows - 1});
      for (const char* body : {"scatter_add.f32", "scatter_assign.f32", "scatter_max.f32"}) {
        for (int parts : {1, 2, 3}) {
          Array fast(DType::kF32, operand.dims), generic(DType::kF32, operand.dims);
          RunBothPaths(body, {&operand, &indices, &updates}, &fast, &generic, lists, parts);
          ASSERT_EQ(fast.bytes, generic.bytes)
              << body << " " << shape.positions << "x" << shape.inner << " into " << shape.rows << ", " << parts
              << " parts" << (clamp ? ", clamped" : "");
        }
      }
    }
  }
}

// Row scatters with little work (under 1 MB of updates and result) stay on the first call
// of a split step: the second call writes nothing, even where the shape would split (rows
// of 1 KB); larger ones give it a share.
TEST(RowFormTest, SmallScattersStayOnOneThread) {
  auto second_call_writes = [](int64_t positions) {
    const int64_t rows = 64, inner = 256;
    Array operand(DType::kF32, {rows, inner}), indices(DType::kS32, {positions, 1}),
        updates(DType::kF32, {positions, inner}), out(DType::kF32, {rows, inner});
    for (int64_t i = 0; i < positions; ++i) SetInt(indices, i, i % rows);
    for (int64_t i = 0; i < updates.size(); ++i) SetDouble(updates, i, 1.0);
    for (int64_t i = 0; i < out.size(); ++i) SetDouble(out, i, -7.0);
    const KernelParams params = ParamsFor("scatter_add.f32", {{1}, {0}, {}, {}, {0}, {1}});
    std::vector<BufferView> in = {operand.View(), indices.View(), updates.View()}, outs = {out.View()};
    KernelArgs args{in, outs, params.get()};
    const KernelRegistry::Entry* entry = CpuKernels().Lookup("scatter_add.f32");
    auto prepared = entry->prepare(args);
    EXPECT_TRUE(prepared.ok());
    args.state = prepared->state.get();
    EXPECT_TRUE(entry->fn(KernelContext{1, 2}, args).ok());
    for (int64_t i = 0; i < out.size(); ++i)
      if (GetDouble(out, i) != -7.0) return true;
    return false;
  };
  EXPECT_FALSE(second_call_writes(100));    // 100 KB of updates + 64 KB of result
  EXPECT_TRUE(second_call_writes(4096));    // 4 MB of updates
}

// scatter_add_gathered (a row gather folded into a row scatter-add) against the two steps it
// replaces, bit for bit, split over 1 to 3 calls: negative ids wrapped, ids past the table
// clamped, segments out of range skipped, duplicates, int32 and int64 indices; rows of 128
// f32 (split by columns) and of 5 (one call).
TEST(GatheredScatterTest, MatchesTheGatherThenTheScatterAdd) {
  std::mt19937 rng(71);
  struct Shape {
    int64_t positions, table_rows, segments, width;
  };
  for (const Shape shape : {Shape{1 << 14, 500, 300, 128}, Shape{3000, 40, 17, 5}}) {
    for (const DType index_type : {DType::kS32, DType::kS64}) {
      Array table(DType::kF32, {shape.table_rows, shape.width}), ids(index_type, {shape.positions, 1}),
          segments(index_type, {shape.positions, 1}), operand(DType::kF32, {shape.segments, shape.width});
      for (int64_t i = 0; i < table.size(); ++i)
        SetDouble(table, i, (static_cast<double>(rng() % 2000) - 1000) * std::ldexp(1.0, static_cast<int>(rng() % 30) - 15));
      for (int64_t i = 0; i < operand.size(); ++i) SetDouble(operand, i, static_cast<double>(rng() % 7));
      for (int64_t i = 0; i < shape.positions; ++i) {
        SetInt(ids, i, static_cast<int64_t>(rng() % static_cast<uint32_t>(2 * shape.table_rows + 6)) - shape.table_rows - 3);
        SetInt(segments, i, static_cast<int64_t>(rng() % static_cast<uint32_t>(shape.segments + 6)) - 3);
      }
      // The two steps: gather (ids wrapped by the table's rows), then scatter_add.
      Array rows(DType::kF32, {shape.positions, shape.width}), expected(DType::kF32, operand.dims);
      RunGS("gather.f32", {&table, &ids}, {&rows},
            {{1}, {0}, {}, {}, {0}, {1}, {1, shape.width}, {0, 0, shape.table_rows}});
      RunGS("scatter_add.f32", {&operand, &segments, &rows}, {&expected}, {{1}, {0}, {}, {}, {0}, {1}});
      GatheredScatterParams params;
      params.gather_transform.wrap = {shape.table_rows};
      const KernelParams kernel_params = params;
      const KernelRegistry::Entry* entry = CpuKernels().Lookup("scatter_add_gathered.f32");
      ASSERT_NE(entry, nullptr);
      for (int parts : {1, 2, 3}) {
        Array out(DType::kF32, operand.dims);
        std::vector<BufferView> in = {operand.View(), segments.View(), table.View(), ids.View()}, outs = {out.View()};
        KernelArgs args{in, outs, kernel_params.get()};
        auto prepared = entry->prepare(args);
        ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
        args.state = prepared->state.get();
        for (int part = 0; part < parts; ++part) ASSERT_TRUE(entry->fn(KernelContext{part, parts}, args).ok());
        ASSERT_EQ(out.bytes, expected.bytes) << shape.positions << " rows of " << shape.width << ", "
                                             << DTypeName(index_type) << ", " << parts << " parts";
      }
    }
  }
}

// Float max/min rows (vector code) against the scalar combiner, with NaN, signed zeros,
// denormals and duplicates.
TEST(RowFormTest, FloatMaxMinRowsMatchTheScalarCombiner) {
  std::mt19937 rng(67);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    const std::vector<double> specials = SpecialFloats(dtype);
    for (int64_t width : {4, 5, 16, 33}) {
      Array operand(dtype, {9, width}), indices(DType::kS32, {700, 1}), updates(dtype, {700, width});
      for (int64_t i = 0; i < operand.size(); ++i) SetDouble(operand, i, specials[rng() % specials.size()]);
      for (int64_t i = 0; i < updates.size(); ++i) SetDouble(updates, i, specials[rng() % specials.size()]);
      for (int64_t i = 0; i < indices.size(); ++i) SetInt(indices, i, static_cast<int64_t>(rng() % 11) - 1);
      for (const char* op : {"scatter_max", "scatter_min", "scatter_add", "scatter_mul"}) {
        Array fast(dtype, operand.dims), generic(dtype, operand.dims);
        RunBothPaths(Key(op, dtype), {&operand, &indices, &updates}, &fast, &generic, {{1}, {0}, {}, {}, {0}, {1}}, 1);
        if (std::string(op) == "scatter_max" || std::string(op) == "scatter_min") {
          ASSERT_EQ(fast.bytes, generic.bytes) << op << " " << DTypeName(dtype) << " width " << width;
          continue;
        }
        // add/mul: which NaN operand's payload and sign survive is the hardware's choice.
        for (int64_t i = 0; i < fast.size(); ++i) {
          const double a = GetDouble(fast, i), b = GetDouble(generic, i);
          ASSERT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << op << " " << DTypeName(dtype) << " at " << i;
        }
      }
    }
  }
}

// Forms outside the row forms keep the generic walk (no prepared state).
TEST(RowFormTest, OtherFormsAreNotRowForms) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup("gather.i32");
  ASSERT_NE(entry, nullptr);
  Array operand(DType::kS32, {5, 6, 2}), indices(DType::kS32, {4, 2}), out(DType::kS32, {4, 3});
  std::vector<BufferView> in = {operand.View(), indices.View()}, outs = {out.View()};
  // A window of 3 of 6 along dim 1 (not the whole dim).
  const KernelParams params = ParamsFor("gather", {{1}, {0, 2}, {}, {}, {0, 1}, {1}, {1, 3, 1}});
  KernelArgs args;
  args.inputs = in;
  args.outputs = outs;
  args.params = params.get();
  auto state = entry->prepare(args);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->state.get(), nullptr);
}

}  // namespace
}  // namespace stablert::kernels
