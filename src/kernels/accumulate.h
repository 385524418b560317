// Pairwise (blocked) accumulation of float and complex sums, shared by the reduce,
// reduce_window and dot kernels. Internal to kernels/.
//
// A long sum is cut into leaves; each leaf is accumulated flatly, and the leaf results are
// combined pairwise by a binary carry cascade: level j holds the sum of 2^j leaves, and a
// finished leaf carries into the levels as a binary counter increments. A contiguous run
// is summed in kLanes independent lanes (which the compiler vectorizes without
// reassociation flags), 8 elements per lane and leaf, the lanes combined as a tree at the
// end; whole rows or vectors reaching the same output are accumulated 32 per leaf. So every
// element goes through at most c + log2(n) roundings (c = 8 + 4 for contiguous runs, 32
// for rows), and the error of an n-element sum is bounded by about (c + log2 n) u sum |x_i|
// (u: unit roundoff) instead of n u sum |x_i| for one running sum. A sum of rows at most
// one leaf long is accumulated exactly as a single running sum would be.
//
// -0.0 is the additive identity that every partial starts from (-0 + x == x for every x,
// +0 and -0 included), so signed zeros come out as a single running sum gives them.
#pragma once

#include <algorithm>
#include <bit>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace stablert::kernels::pairwise {

template <typename C>
inline C NegativeZero() {
  if constexpr (std::is_floating_point_v<C>) {
    return C(-0.0);
  } else {
    using R = typename C::value_type;
    return C(R(-0.0), R(-0.0));
  }
}

template <typename C>
inline C Add(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return a + b;
  } else {
    return C(a.real() + b.real(), a.imag() + b.imag());
  }
}

// Contributions per leaf of a sum whose contributions are whole rows or vectors.
inline constexpr int64_t kLeafRows = 32;

// Sums pushed one by one, combined pairwise over leaves of `leaf` pushes each.
template <typename C>
class ScalarCascade {
 public:
  explicit ScalarCascade(int64_t leaf = 1, C first = NegativeZero<C>()) : leaf_(leaf) { Reset(first); }

  void Reset(C first) {
    current_ = first;
    in_leaf_ = 0;
    leaves_ = 0;
  }

  void Push(C x) {
    if (in_leaf_ == leaf_) {
      Carry();
      current_ = NegativeZero<C>();
      in_leaf_ = 0;
    }
    current_ = Add(current_, x);
    ++in_leaf_;
  }

  C Result() const {
    C sum = current_;
    for (int j = 0; j < 64; ++j)
      if ((leaves_ >> j) & 1) sum = Add(level_[j], sum);
    return sum;
  }

 private:
  void Carry() {
    C sum = current_;
    int j = 0;
    while ((leaves_ >> j) & 1) sum = Add(level_[j++], sum);
    level_[j] = sum;
    ++leaves_;
  }

  int64_t leaf_;
  C current_;
  int64_t in_leaf_;
  uint64_t leaves_;
  C level_[64];
};

// A contiguous sum runs in kLanes independent lanes (16 floats or 8 doubles: 64 bytes,
// vectorized by the compiler), each lane adding kPerLane elements flatly per leaf block;
// the blocks' lane vectors are combined pairwise by a binary carry cascade of lane vectors,
// and the lanes by a tree at the end. Every element goes through at most
// kPerLane + log2(n / block) + log2(kLanes) roundings.
inline constexpr int kPerLane = 8;

// The pairwise sum of `count` scalars x[0..count) in lanes: out[w] = sum of x[i] with
// i % W == w (W = 2 sums complex values stored as (re, im) pairs).
template <int W, typename R>
inline void LaneSum(const R* x, int64_t count, R* out) {
  constexpr int kLanes = static_cast<int>(64 / sizeof(R));
  static_assert(kLanes % W == 0);
  constexpr int64_t kBlockSize = int64_t{kLanes} * kPerLane;
  R level[64][kLanes];
  uint64_t blocks = 0;
  R p[kLanes];
  int64_t i = 0;
  for (; i + kBlockSize <= count; i += kBlockSize) {
    for (int j = 0; j < kLanes; ++j) p[j] = x[i + j];
    for (int k = 1; k < kPerLane; ++k)
      for (int j = 0; j < kLanes; ++j) p[j] += x[i + k * kLanes + j];
    int l = 0;
    for (; (blocks >> l) & 1; ++l)
      for (int j = 0; j < kLanes; ++j) p[j] = level[l][j] + p[j];
    for (int j = 0; j < kLanes; ++j) level[l][j] = p[j];
    ++blocks;
  }
  // The last partial block, then the levels from the lowest up, then the lanes as a tree.
  for (int j = 0; j < kLanes; ++j) p[j] = R(-0.0);
  for (int64_t k = 0; i + k < count; ++k) p[k % kLanes] += x[i + k];
  for (int l = 0; l < 64; ++l)
    if ((blocks >> l) & 1)
      for (int j = 0; j < kLanes; ++j) p[j] = level[l][j] + p[j];
  for (int h = kLanes / 2; h >= W; h /= 2)
    for (int j = 0; j < h; ++j) p[j] += p[j + h];
  for (int w = 0; w < W; ++w) out[w] = p[w];
}

// Scalars per block of a blocked sum (dot products, kernels/dot.cc).
inline constexpr int64_t kBlock = 256;

// The pairwise sum of n contiguous values (float, double or their complex).
template <typename C>
inline C Sum(const C* x, int64_t n) {
  if constexpr (std::is_floating_point_v<C>) {
    C sum;
    LaneSum<1>(x, n, &sum);
    return sum;
  } else {
    using R = typename C::value_type;
    R parts[2];
    LaneSum<2>(reinterpret_cast<const R*>(x), 2 * n, parts);
    return C(parts[0], parts[1]);
  }
}

// Pairwise accumulation of whole vectors: `segments` output vectors of `width` elements
// each (at out + s * width) receive at most `per_segment` contributions each, in order.
// Next(s) returns the vector to add the next contribution into; NextLeaf(s) the vector to
// add the next kLeaf contributions (or fewer) into, counting them all. A vector that
// completed a leaf of kLeaf (32 by default) contributions is carried into the level buffers
// first and restarts at -0. Finish() folds the levels back into the outputs. With
// per_segment <= kLeaf this is exactly one running sum per output element and allocates
// nothing.
template <typename C, int64_t kLeaf = kLeafRows>
class VectorCascade {
 public:
  VectorCascade(C* out, int64_t width, int64_t segments, int64_t per_segment)
      : out_(out), width_(width), segments_(segments) {
    if (per_segment <= kLeaf) return;
    const auto leaves = static_cast<uint64_t>((per_segment + kLeaf - 1) / kLeaf);
    levels_count_ = std::bit_width(leaves);
    levels_.resize(static_cast<size_t>(levels_count_ * segments_ * width_));
    counts_.assign(static_cast<size_t>(segments_), 0);
  }

  C* Next(int64_t segment) {
    C* dst = out_ + segment * width_;
    if (levels_count_ == 0) return dst;
    const int64_t count = counts_[static_cast<size_t>(segment)]++;
    if (count > 0 && count % kLeaf == 0) Carry(segment, static_cast<uint64_t>(count / kLeaf - 1), dst);
    return dst;
  }

  // Only when the segment's count is a multiple of kLeaf (only NextLeaf used on it).
  C* NextLeaf(int64_t segment) {
    C* dst = out_ + segment * width_;
    if (levels_count_ == 0) return dst;
    const int64_t count = counts_[static_cast<size_t>(segment)];
    counts_[static_cast<size_t>(segment)] += kLeaf;
    if (count > 0) Carry(segment, static_cast<uint64_t>(count / kLeaf - 1), dst);
    return dst;
  }

  void Finish() {
    if (levels_count_ == 0) return;
    for (int64_t s = 0; s < segments_; ++s) {
      const int64_t count = counts_[static_cast<size_t>(s)];
      if (count == 0) continue;
      const auto carried = static_cast<uint64_t>((count - 1) / kLeaf);
      C* dst = out_ + s * width_;
      for (int j = 0; j < levels_count_; ++j) {
        if (!((carried >> j) & 1)) continue;
        const C* level = Level(j, s);
        for (int64_t i = 0; i < width_; ++i) dst[i] = Add(level[i], dst[i]);
      }
    }
  }

 private:
  // Leaf number `finished` (in dst) is complete: carry it like a binary counter.
  void Carry(int64_t segment, uint64_t finished, C* dst) {
    int j = 0;
    while ((finished >> j) & 1) {
      const C* level = Level(j++, segment);
      for (int64_t i = 0; i < width_; ++i) dst[i] = Add(level[i], dst[i]);
    }
    C* level = Level(j, segment);
    for (int64_t i = 0; i < width_; ++i) {
      level[i] = dst[i];
      dst[i] = NegativeZero<C>();
    }
  }

  C* Level(int j, int64_t segment) { return levels_.data() + (j * segments_ + segment) * width_; }

  C* out_;
  int64_t width_, segments_;
  int levels_count_ = 0;
  std::vector<C> levels_;
  std::vector<int64_t> counts_;
};

}  // namespace stablert::kernels::pairwise
