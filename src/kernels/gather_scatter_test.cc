// Cross-checks gather and scatter against a per-element reading of the StableHLO spec.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/kernel_test_util.h"

namespace stablert::kernels {
namespace {

using namespace testing;  // NOLINT

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
    RunKernel("gather.i32", {&operand, &indices}, {&out},
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
    RunKernel(add ? "scatter_add.i32" : "scatter_assign.i32", {&operand, &indices, &updates}, {&out},
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

}  // namespace
}  // namespace stablert::kernels
