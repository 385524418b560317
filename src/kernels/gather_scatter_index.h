// The index arithmetic a gather or scatter step applies to each start index component
// before it indexes the operand (kernels/gather_scatter.cc). Lowering folds JAX's index
// arithmetic around a gather or scatter into it (plan/fold_gather_scatter.cc), so that
// the kernel reads the raw indices once instead of separate steps each making a full pass
// over the index array.
//
// Parameters: IndexTransformParams (gather_scatter_params.h), the `index_transform` of the
// step's GatherParams or ScatterParams. k is the index vector length (start_index_map /
// scatter_dims_to_operand_dims). For component j with value v (the integer the index
// element holds), in this order:
//   wrap_j != 0:  v < 0 becomes v + wrap_j (JAX's negative-index normalization,
//                 select(v < 0, v + n, v); 0: no wrap);
//   bits != 0:    v becomes its low `bits` bits as a signed integer (8, 16 or 32; a convert
//                 of signed indices to a narrower signed type, e.g. JAX's i64 -> i32);
//   mode 1, fill (gather only): if any component lies outside [lo_j, hi_j], the whole
//                 slice is the fill value (a scalar of the result type, input 2) — JAX's
//                 mode="fill", select(all(lo <= v <= hi), gather, fill); otherwise the
//                 slice is gathered as usual;
//   mode 2, clamp (scatter only): v becomes clamp(v, lo_j, hi_j) (JAX's mode="clip");
//   then gather clamps start indices into the operand and scatter skips windows that do not
//   fit, as without the list (StableHLO semantics).
// Thread-safety: plain values, immutable after parsing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/gather_scatter_params.h"
#include "kernels/kernel.h"

namespace stablert::kernels {

struct IndexTransform {
  enum Mode : int64_t { kNone = 0, kFill = 1, kClamp = 2 };
  Mode mode = kNone;
  int shift = 0;                      // 64 - bits, or 0: no narrowing
  std::vector<int64_t> wrap, lo, hi;  // per component; lo/hi empty in mode kNone

  bool identity() const {
    return mode == kNone && shift == 0 && std::all_of(wrap.begin(), wrap.end(), [](int64_t w) { return w == 0; });
  }
  // v's low 64 - shift bits as a signed integer.
  static int64_t Narrow(int64_t v, int shift) {
    return static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
  }
  // The component's value after wrapping, narrowing (and clamping in mode kClamp).
  int64_t Apply(size_t j, int64_t v) const {
    if (j < wrap.size()) v += v < 0 ? wrap[j] : 0;
    v = Narrow(v, shift);
    if (mode == kClamp) v = std::clamp(v, lo[j], hi[j]);
    return v;
  }
  // Mode kFill: whether component j (after Apply) selects a gathered slice.
  bool InRange(size_t j, int64_t v) const { return v >= lo[j] && v <= hi[j]; }
};

// The transform `params` describes, for index vectors of length `k`; InvalidArgument when
// it does not fit them. `what` names the kernel in errors.
inline StatusOr<IndexTransform> MakeIndexTransform(const IndexTransformParams& params, size_t k, const char* what) {
  IndexTransform t;
  t.wrap.assign(k, 0);
  if (params.mode < IndexTransformParams::Mode::kNone || params.mode > IndexTransformParams::Mode::kClamp)
    return InvalidArgument(std::string(what) + ": the index transform mode must be none, fill or clamp");
  t.mode = static_cast<IndexTransform::Mode>(params.mode);
  const int64_t bits = params.bits;
  if (bits != 0 && bits != 8 && bits != 16 && bits != 32)
    return InvalidArgument(std::string(what) + ": the index transform narrows to 0, 8, 16 or 32 bits");
  t.shift = bits == 0 ? 0 : static_cast<int>(64 - bits);
  if (!params.wrap.empty()) {
    if (params.wrap.size() != k)
      return InvalidArgument(std::string(what) + ": the index transform has " + std::to_string(params.wrap.size()) +
                             " wrap sizes for index vectors of " + std::to_string(k));
    for (size_t j = 0; j < k; ++j) {
      if (params.wrap[j] < 0) return InvalidArgument(std::string(what) + ": negative wrap size in the index transform");
      t.wrap[j] = params.wrap[j];
    }
  }
  if (t.mode != IndexTransform::kNone) {
    if (params.lo.size() != k || params.hi.size() != k)
      return InvalidArgument(std::string(what) + ": the index transform needs one bound pair per index component");
    t.lo = params.lo;
    t.hi = params.hi;
  }
  return t;
}

}  // namespace stablert::kernels
