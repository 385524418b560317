// f32 convolutions on oneDNN: "convolution_dnnl.f32", same operands and params as
// "convolution.<T>" (convolution.cc). The prepare function maps the convolution onto one
// oneDNN primitive, created once per plan step:
//   - forward convolution when no lhs_dilation is used (any layout through strided memory
//     descriptors, strides, padding, rhs dilation, feature groups; window reversal by a
//     flipped copy of the kernel; negative padding by cropping the input view);
//   - backward-data (a transposed convolution) when lhs_dilation > 1 and window strides are
//     1: the form of the input gradient (kernel flipped back, its features swapped);
//   - backward-weights for the form of the kernel gradient (batch and feature swapped, the
//     "kernel" larger than the result's spatial extent, no groups).
// Activations stay in the caller's layout when a direct (jit/brgconv) implementation takes
// it -- or gemm, for 1x1 forward and backward-data -- else every operand uses the layout the
// primitive prefers, reordered per call by reorder primitives prepared with it (for NCHW
// with kernels above 1x1 that beats im2col+gemm, reorders included). Weights always use the preferred layout (a small reorder
// per call). Anything oneDNN cannot express (batch groups, strided transposed convolutions,
// 0-D spatial...) runs the loop kernel.
//
// Threads: a large convolution is cut into tiles, each its own primitive (oneDNN's primitive
// cache makes equal ones one) run on one thread (onednn_common.h: no OpenMP team), the tiles
// spread over StableRT's pool:
//   - forward and input gradient: over the images (lhs batch and output batch), so tiles
//     write disjoint parts of the output;
//   - kernel gradient: over oneDNN's minibatch (the images: the lhs feature and rhs input
//     feature dims of this form), the dimension the result sums over. A slice of the
//     outermost dim of NHWC/NCHW is still a dense NHWC/NCHW tensor, so each tile runs the
//     direct jit implementation on the caller's data; each writes a partial result in the
//     primitive's layout, the partials are added in tile order and reordered into the output
//     once. The sum therefore depends on the tile count (the core budget), not on timing.
//     Should the minibatch be too small to split, the tiles cut the input features instead
//     (disjoint outputs, strided views that oneDNN reorders).
// The kernel is registered as splittable; its prepare function decides per step
// (PreparedStep::single_call): a oneDNN step is called once and runs its tiles itself, a
// loop step is split over StableRT's pool like `convolution.f32`. oneDNN exceptions become
// Status errors.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "base/thread_pool.h"
#include "kernels/convolution_params.h"
#include "kernels/families.h"
#include "kernels/onednn_common.h"
#include "kernels/registry.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

using dnnl::memory;

using onednn::Engine;

enum class Buffer { kLhs, kRhs, kOut };

// How a step is cut into tiles: over the batch (each tile writes its part of the output) or,
// for the kernel-gradient form, over the sum (each tile adds up a part of every output).
enum class Split { kBatch, kSum };

// One operand of the primitive: a view of one of the step's buffers in oneDNN's logical
// order, and how it reaches the primitive.
struct Role {
  int arg = 0;                 // DNNL_ARG_*
  Buffer buffer = Buffer::kLhs;
  bool output = false;
  int64_t offset = 0;          // elements into the buffer (cropped views)
  memory::dims dims;           // logical (oneDNN) dims
  memory::dims strides;        // in the buffer, elements
  std::vector<bool> flip;      // per logical dim: read reversed (needs a dense copy)
  bool copy = false;           // any flip: gather into a dense buffer first
  memory::desc user;           // the view (or the dense copy)
  memory::desc prim;           // what the primitive takes
  dnnl::reorder reorder;       // user -> prim (inputs) or prim -> user (output), if they differ
  memory::desc reorder_scratchpad;
  bool reordered = false;
};

// The convolution over one slice of the batch.
struct ConvTile {
  dnnl::primitive primitive;
  memory::desc scratchpad;  // per call: primitives run on any thread, concurrently
  std::vector<Role> roles;
};

struct DnnlConvState {
  bool loops = false;  // fall back to the loop kernel
  KernelFn loop_kernel = nullptr;
  Split split = Split::kBatch;
  std::vector<ConvTile> tiles;
};

// Convolutions with fewer multiply-adds run as one tile on the calling thread.
constexpr double kMinSplitMacs = 1 << 21;

KernelFn g_loop_kernel = nullptr;

// Logical dims and strides of a buffer whose physical dims are `physical` (dense row-major),
// taking logical dim i from physical dim `order[i]`.
void View(const std::span<const int64_t> physical, const std::vector<int64_t>& order, memory::dims* dims,
          memory::dims* strides) {
  DimVector dense = DenseStrides(physical);
  dims->clear();
  strides->clear();
  for (int64_t d : order) {
    dims->push_back(physical[static_cast<size_t>(d)]);
    strides->push_back(dense[static_cast<size_t>(d)]);
  }
}

// Turns [N, C, spatial...]-ordered dims/strides of a kernel [O, I, spatial...] into the grouped
// form [G, O/G, I, spatial...] when groups > 1.
void Group(int64_t groups, memory::dims* dims, memory::dims* strides) {
  if (groups == 1) return;
  const int64_t per_group = (*dims)[0] / groups;
  dims->insert(dims->begin(), groups);
  (*dims)[1] = per_group;
  strides->insert(strides->begin(), per_group * (*strides)[0]);
}

// Crops spatial dim `d` of `role` by `front` elements at the start and `back` at the end.
void Crop(Role& role, size_t d, int64_t front, int64_t back) {
  role.offset += front * role.strides[d];
  role.dims[d] -= front + back;
}

// Low/high padding so that `out` = (in + low + high - span) / stride + 1 with `high` minimal;
// negative padding crops the input role's spatial dim `d`. False if nothing is left.
bool FitPadding(Role& input, size_t d, int64_t out, int64_t span, int64_t stride, int64_t* low, int64_t* high) {
  if (*low < 0) {
    Crop(input, d, -*low, 0);
    *low = 0;
  }
  *high = (out - 1) * stride + span - input.dims[d] - *low;
  if (*high < 0) {
    Crop(input, d, 0, -*high);
    *high = 0;
  }
  return input.dims[d] > 0;
}

memory::dims Dense(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

bool IsRef(const dnnl::primitive_desc_base& pd) {
  const std::string name = pd.impl_info_str();
  return name.rfind("ref", 0) == 0;
}

// oneDNN's im2col + GEMM implementation ("gemm:jit"), the one it picks for NCHW activations.
// On one Zen 5 core, for 3x3 kernels: forward 163, backward-data 127, backward-weights 37-115
// GFLOP/s, where the direct jit ones (blocked layouts) run at 240-290 -- faster even with
// their reorders. A 1x1 forward or backward-data is one plain GEMM (140-230 GFLOP/s), which
// beats the reorders.
bool IsGemm(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).find("gemm") != std::string::npos;
}

// Scratchpads are the caller's (allocated per call): oneDNN's own is tied to a thread.
dnnl::primitive_attr Attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

memory::desc Any(const Role& role) { return memory::desc(role.dims, memory::data_type::f32, memory::format_tag::any); }

enum class Path { kForward, kBackwardData, kBackwardWeights };

// Which oneDNN primitive runs the convolution (see the file comment); `rhs_spatial` and
// `out_spatial` are the products of the kernel's and the result's spatial sizes.
Path ChoosePath(const ConvolutionParams& conv, int64_t rhs_spatial, int64_t out_spatial) {
  const bool lhs_dilated =
      std::any_of(conv.lhs_dilation.begin(), conv.lhs_dilation.end(), [](int64_t d) { return d != 1; });
  const bool reversed = std::any_of(conv.reversal.begin(), conv.reversal.end(), [](int64_t r) { return r != 0; });
  if (lhs_dilated) return Path::kBackwardData;
  if (conv.feature_groups == 1 && !reversed && rhs_spatial > out_spatial) return Path::kBackwardWeights;
  return Path::kForward;
}

// Prepares the convolution over entries [batch_begin, batch_begin + batch_count) of the split
// dimension into `tile`; false if oneDNN cannot run it. Split::kBatch slices the lhs batch
// and the output's batch; Split::kSum (kernel-gradient form only) slices oneDNN's minibatch,
// so the tile's diff_weights is a partial sum (always reordered to the caller's layout).
bool PrepareTile(const KernelArgs& args, Split split, int64_t batch_begin, int64_t batch_count, ConvTile* tile) {
  const std::span<const int64_t> lhs = args.inputs[0].dims, rhs = args.inputs[1].dims, out = args.outputs[0].dims;
  const ConvolutionParams& conv = args.Params<ConvolutionParams>();
  const auto& [lhs_dims, rhs_dims, out_dims, strides, padding_low, high, lhs_dilation, rhs_dilation, reversal,
               feature_groups, batch_groups] = conv;
  std::vector<int64_t> low = padding_low;  // adjusted below where oneDNN needs other padding
  const size_t spatial = strides.size();
  auto fallback = [] { return false; };
  // The role's view of the batch slice; `logical` is the role's dim of the sliced batch.
  auto slice = [&](Role& r, size_t logical) {
    r.offset += batch_begin * r.strides[logical];
    r.dims[logical] = batch_count;
  };
  if (spatial < 1 || spatial > 3 || batch_groups != 1 || args.outputs[0].num_elements == 0 ||
      args.inputs[0].num_elements == 0 || args.inputs[1].num_elements == 0)
    return fallback();
  const bool lhs_dilated = std::any_of(lhs_dilation.begin(), lhs_dilation.end(), [](int64_t d) { return d != 1; });
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s != 1; });
  int64_t out_spatial = 1, rhs_spatial = 1;
  for (size_t s = 0; s < spatial; ++s) {
    out_spatial *= out[static_cast<size_t>(out_dims[2 + s])];
    rhs_spatial *= rhs[static_cast<size_t>(rhs_dims[2 + s])];
  }
  if (lhs_dilated && strided) return fallback();
  const Path path = ChoosePath(conv, rhs_spatial, out_spatial);
  if (split == Split::kSum && path != Path::kBackwardWeights) return fallback();

  auto role = [&](int arg, Buffer buffer, bool output, std::span<const int64_t> physical, int64_t n, int64_t c,
                  const std::vector<int64_t>& spatial_dims) {
    Role r;
    r.arg = arg;
    r.buffer = buffer;
    r.output = output;
    std::vector<int64_t> order = {n, c};
    order.insert(order.end(), spatial_dims.begin(), spatial_dims.end());
    View(physical, order, &r.dims, &r.strides);
    r.flip.assign(r.dims.size(), false);
    return r;
  };
  const std::vector<int64_t> lhs_sp(lhs_dims.begin() + 2, lhs_dims.end()), rhs_sp(rhs_dims.begin() + 2, rhs_dims.end()),
      out_sp(out_dims.begin() + 2, out_dims.end());
  memory::dims fwd_strides(spatial), fwd_dilates(spatial), pad_l(spatial), pad_r(spatial);
  Role a, w, b;  // the activation-like input, the weights-like operand, the other activation
  try {
    switch (path) {
      case Path::kForward: {
        a = role(DNNL_ARG_SRC, Buffer::kLhs, false, lhs, lhs_dims[0], lhs_dims[1], lhs_sp);
        w = role(DNNL_ARG_WEIGHTS, Buffer::kRhs, false, rhs, rhs_dims[1], rhs_dims[0], rhs_sp);
        b = role(DNNL_ARG_DST, Buffer::kOut, true, out, out_dims[0], out_dims[1], out_sp);
        slice(a, 0);
        slice(b, 0);
        for (size_t s = 0; s < spatial; ++s) {
          const int64_t k = w.dims[2 + s];
          w.flip[2 + s] = reversal[s] != 0;
          fwd_strides[s] = strides[s];
          fwd_dilates[s] = rhs_dilation[s] - 1;
          pad_l[s] = low[s];
          if (!FitPadding(a, 2 + s, b.dims[2 + s], (k - 1) * rhs_dilation[s] + 1, strides[s], &pad_l[s], &pad_r[s]))
            return fallback();
        }
        Group(feature_groups, &w.dims, &w.strides);
        if (feature_groups > 1) w.flip.insert(w.flip.begin(), false);
        break;
      }
      case Path::kBackwardData: {
        // out[n, f, p] = sum lhs[n, c, q] rhs[c, f, k] with p + k*rd - low = q*ld: oneDNN's
        // diff_src = out, diff_dst = lhs, weights[oc = c, ic = f, K-1-k], stride ld.
        a = role(DNNL_ARG_DIFF_DST, Buffer::kLhs, false, lhs, lhs_dims[0], lhs_dims[1], lhs_sp);
        w = role(DNNL_ARG_WEIGHTS, Buffer::kRhs, false, rhs, rhs_dims[0], rhs_dims[1], rhs_sp);
        b = role(DNNL_ARG_DIFF_SRC, Buffer::kOut, true, out, out_dims[0], out_dims[1], out_sp);
        slice(a, 0);
        slice(b, 0);
        for (size_t s = 0; s < spatial; ++s) {
          const int64_t k = w.dims[2 + s];
          w.flip[2 + s] = reversal[s] == 0;
          fwd_strides[s] = lhs_dilation[s];
          fwd_dilates[s] = rhs_dilation[s] - 1;
          const int64_t span = (k - 1) * rhs_dilation[s] + 1;
          pad_l[s] = (k - 1) * rhs_dilation[s] - low[s];
          pad_r[s] = (a.dims[2 + s] - 1) * lhs_dilation[s] + span - b.dims[2 + s] - pad_l[s];
          if (pad_l[s] < 0 || pad_r[s] < 0) return fallback();
        }
        // Weights [oc = c (per group), ic = f]: grouped over ic's groups.
        if (feature_groups > 1) {
          const int64_t per_group = w.dims[1] / feature_groups;
          w.dims.insert(w.dims.begin(), feature_groups);
          w.dims[2] = per_group;
          w.strides.insert(w.strides.begin(), per_group * w.strides[1]);
          w.flip.insert(w.flip.begin(), false);
        }
        break;
      }
      case Path::kBackwardWeights: {
        // out[b, f, k] = sum lhs[b, c, k*ws + q*rd - low] rhs[c, f, q]: oneDNN's src = lhs with
        // N = its feature dim and C = its batch dim, diff_dst = rhs (N = c, C = f),
        // diff_weights = out [OC = f, IC = b], forward stride rd, dilation ws.
        a = role(DNNL_ARG_SRC, Buffer::kLhs, false, lhs, lhs_dims[1], lhs_dims[0], lhs_sp);
        w = role(DNNL_ARG_DIFF_DST, Buffer::kRhs, false, rhs, rhs_dims[0], rhs_dims[1], rhs_sp);
        b = role(DNNL_ARG_DIFF_WEIGHTS, Buffer::kOut, true, out, out_dims[1], out_dims[0], out_sp);
        if (split == Split::kSum) {
          slice(a, 0);  // oneDNN's minibatch: the lhs feature and rhs input-feature dims
          slice(w, 0);
        } else {
          slice(a, 1);  // the lhs batch is oneDNN's input-feature dim here
          slice(b, 1);
        }
        for (size_t s = 0; s < spatial; ++s) {
          const int64_t k = b.dims[2 + s];
          fwd_strides[s] = rhs_dilation[s];
          fwd_dilates[s] = strides[s] - 1;
          pad_l[s] = low[s];
          if (!FitPadding(a, 2 + s, w.dims[2 + s], (k - 1) * strides[s] + 1, rhs_dilation[s], &pad_l[s], &pad_r[s]))
            return fallback();
        }
        break;
      }
    }
    for (Role* r : {&a, &w, &b}) {
      r->copy = std::any_of(r->flip.begin(), r->flip.end(), [](bool f) { return f; });
      r->user = memory::desc(r->dims, memory::data_type::f32, r->copy ? Dense(r->dims) : r->strides);
    }
    // Activations in the caller's layout if an optimized implementation takes it, else in
    // the primitive's preferred layout (reordered per call); weights always as preferred.
    const bool weights_is_b = path == Path::kBackwardWeights;
    Role& act1 = a;
    Role& act2 = weights_is_b ? w : b;
    Role& weights = weights_is_b ? b : w;
    // The caller's layout is taken only by a direct implementation, or by gemm where it wins.
    const bool gemm_ok = path != Path::kBackwardWeights && rhs_spatial == 1;
    auto slow = [&](const dnnl::primitive_desc_base& pd) { return IsRef(pd) || (!gemm_ok && IsGemm(pd)); };
    auto create = [&](bool plain) -> bool {
      const memory::desc m1 = plain ? act1.user : Any(act1), m2 = plain ? act2.user : Any(act2), mw = Any(weights);
      try {
        switch (path) {
          case Path::kForward: {
            dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                              m1, mw, m2, fwd_strides, fwd_dilates, pad_l, pad_r);
            dnnl::convolution_forward::primitive_desc pd(d, Attr(), Engine());
            if (plain && slow(pd)) return false;
            a.prim = pd.src_desc();
            w.prim = pd.weights_desc();
            b.prim = pd.dst_desc();
            tile->primitive = dnnl::convolution_forward(pd);
            tile->scratchpad = pd.scratchpad_desc();
            return true;
          }
          case Path::kBackwardData: {
            dnnl::convolution_forward::desc hint_d(dnnl::prop_kind::forward_training,
                                                   dnnl::algorithm::convolution_direct, m2, mw, m1, fwd_strides,
                                                   fwd_dilates, pad_l, pad_r);
            dnnl::convolution_forward::primitive_desc hint(hint_d, Engine());
            dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, m2, mw, m1, fwd_strides,
                                                    fwd_dilates, pad_l, pad_r);
            dnnl::convolution_backward_data::primitive_desc pd(d, Attr(), Engine(), hint);
            if (plain && slow(pd)) return false;
            a.prim = pd.diff_dst_desc();
            w.prim = pd.weights_desc();
            b.prim = pd.diff_src_desc();
            tile->primitive = dnnl::convolution_backward_data(pd);
            tile->scratchpad = pd.scratchpad_desc();
            return true;
          }
          case Path::kBackwardWeights: {
            dnnl::convolution_forward::desc hint_d(dnnl::prop_kind::forward_training,
                                                   dnnl::algorithm::convolution_direct, m1, mw, m2, fwd_strides,
                                                   fwd_dilates, pad_l, pad_r);
            dnnl::convolution_forward::primitive_desc hint(hint_d, Engine());
            dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, m1, mw, m2, fwd_strides,
                                                       fwd_dilates, pad_l, pad_r);
            dnnl::convolution_backward_weights::primitive_desc pd(d, Attr(), Engine(), hint);
            if (plain && slow(pd)) return false;
            a.prim = pd.src_desc();
            w.prim = pd.diff_dst_desc();
            b.prim = pd.diff_weights_desc();
            tile->primitive = dnnl::convolution_backward_weights(pd);
            tile->scratchpad = pd.scratchpad_desc();
            return true;
          }
        }
      } catch (const dnnl::error&) {
      }
      return false;
    };
    if (!create(true) && !create(false)) return fallback();
    for (Role* r : {&a, &w, &b}) {
      // A partial sum is written to a buffer of its own and reordered (copied) out after the sum.
      r->reordered = r->user != r->prim || (split == Split::kSum && r->output);
      if (!r->reordered) continue;
      dnnl::reorder::primitive_desc pd = r->output
                                             ? dnnl::reorder::primitive_desc(Engine(), r->prim, Engine(), r->user, Attr())
                                             : dnnl::reorder::primitive_desc(Engine(), r->user, Engine(), r->prim, Attr());
      r->reorder = dnnl::reorder(pd);
      r->reorder_scratchpad = pd.scratchpad_desc();
    }
  } catch (const dnnl::error&) {
    return fallback();
  }
  tile->roles = {a, w, b};
  return true;
}

// Multiply-adds of the convolution: each output element sums over the kernel's other dims.
double Macs(const KernelArgs& args, const ConvolutionParams& conv) {
  const int64_t out_features = args.inputs[1].dims[static_cast<size_t>(conv.rhs_dims[1])];
  if (out_features == 0) return 0;
  return static_cast<double>(args.outputs[0].num_elements) *
         static_cast<double>(args.inputs[1].num_elements / out_features);
}

// Tiles for `threads` threads over `entries` entries of the split dimension: one below
// kMinSplitMacs, else `threads` slices (twice as many from 2^28 multiply-adds when
// `may_double`, so that a descheduled thread holds back less).
int TileCount(double macs, int64_t entries, int threads, bool may_double) {
  if (threads <= 1 || entries < 2 || macs < kMinSplitMacs) return 1;
  const int64_t wanted = may_double && macs >= 1 << 28 ? 2 * threads : threads;
  const int64_t chunk = (entries + wanted - 1) / wanted;
  return static_cast<int>((entries + chunk - 1) / chunk);
}

// Prepares `parts` tiles splitting `entries` entries of `split`'s dimension into `state`;
// false (and no tiles) if oneDNN cannot run one of them, or, for partial sums, if the tiles'
// diff_weights layouts differ (their sum is taken in that layout).
bool PrepareTiles(const KernelArgs& args, Split split, int64_t entries, int parts, DnnlConvState* state) {
  state->split = split;
  state->tiles.clear();
  const int64_t chunk = (entries + parts - 1) / parts;
  for (int part = 0; part < parts; ++part) {
    ConvTile tile;
    const int64_t begin = part * chunk;
    if (!PrepareTile(args, split, begin, std::min(chunk, entries - begin), &tile) ||
        (split == Split::kSum && !state->tiles.empty() && tile.roles[2].prim != state->tiles.front().roles[2].prim)) {
      state->tiles.clear();
      return false;
    }
    state->tiles.push_back(std::move(tile));
  }
  return true;
}

StatusOr<PreparedStep> Prepare(const KernelArgs& args) {
  auto state = std::make_shared<DnnlConvState>();
  state->loop_kernel = g_loop_kernel;
  const ConvolutionParams& conv = args.Params<ConvolutionParams>();
  const std::span<const int64_t> lhs = args.inputs[0].dims, rhs = args.inputs[1].dims, out = args.outputs[0].dims;
  const int64_t batch = lhs[static_cast<size_t>(conv.lhs_dims[0])];
  onednn::OneDnnThreadScope single;
  const int threads = CoreBudget();
  const double macs = Macs(args, conv);
  // The kernel-gradient form sums over oneDNN's minibatch (the lhs feature dim): tiles over
  // it keep every tile's activations in the caller's dense layout (a slice of the outermost
  // dim), which oneDNN's jit implementation takes without a reorder; tiles over the input
  // features (the lhs batch) are strided views it reorders, and narrow ones (8 channels)
  // run on its AVX2 code.
  int64_t rhs_spatial = 1, out_spatial = 1;
  for (size_t s = 0; s < conv.strides.size(); ++s) {
    rhs_spatial *= rhs[static_cast<size_t>(conv.rhs_dims[2 + s])];
    out_spatial *= out[static_cast<size_t>(conv.out_dims[2 + s])];
  }
  if (conv.batch_groups == 1 && conv.lhs_dims.size() >= 3 &&
      ChoosePath(conv, rhs_spatial, out_spatial) == Path::kBackwardWeights) {
    const int64_t sum_entries = lhs[static_cast<size_t>(conv.lhs_dims[1])];
    // Partial sums cost a copy of the result each: no more tiles than threads when large.
    const bool small_result = args.outputs[0].num_elements <= (1 << 20) / (2 * threads);
    const int parts = TileCount(macs, sum_entries, threads, small_result);
    if (parts > 1 && PrepareTiles(args, Split::kSum, sum_entries, parts, state.get()))
      return PreparedStep(state, /*once=*/true);
  }
  const int parts = conv.batch_groups == 1 ? TileCount(macs, batch, threads, /*may_double=*/true) : 1;
  if (!PrepareTiles(args, Split::kBatch, batch, parts, state.get())) {
    // The loop kernel, split over StableRT's pool by the executor.
    state->loops = true;
    return PreparedStep(state, /*once=*/false);
  }
  return PreparedStep(state, /*once=*/true);
}

// Gathers `role`'s view of `base` into the dense buffer `to`, reading flipped dims reversed.
void GatherFlipped(const Role& role, const float* base, float* to) {
  const size_t rank = role.dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t count = 1;
  for (int64_t d : role.dims) count *= d;
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += (role.flip[d] ? role.dims[d] - 1 - index[d] : index[d]) * role.strides[d];
    to[i] = base[offset];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < role.dims[d]) break;
      index[d] = 0;
    }
  }
}

// Runs `role`'s reorder from `from` to `to` on `stream`, waiting for it.
void Reorder(const Role& role, const memory& from, const memory& to, dnnl::stream& stream) {
  std::unordered_map<int, memory> reorder_args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (role.reorder_scratchpad.get_size() > 0)
    reorder_args.emplace(DNNL_ARG_SCRATCHPAD, memory(role.reorder_scratchpad, Engine()));
  role.reorder.execute(stream, reorder_args);
  stream.wait();  // before its scratchpad goes
}

// Runs one tile on the calling thread. With `partial`, the tile's output stays in the
// primitive's layout there (its reorder is the caller's, after the sum).
Status RunTile(const ConvTile& tile, const KernelArgs& args, float* partial = nullptr) {
  try {
    onednn::OneDnnThreadScope single;
    dnnl::stream& stream = onednn::ThreadStream();
    std::unordered_map<int, memory> primitive_args;
    std::vector<std::pair<const Role*, std::pair<memory, memory>>> outputs;
    std::vector<std::vector<float>> copies;
    for (const Role& role : tile.roles) {
      const BufferView& view = role.buffer == Buffer::kLhs   ? args.inputs[0]
                               : role.buffer == Buffer::kRhs ? args.inputs[1]
                                                             : args.outputs[0];
      float* base = view.as<float>() + role.offset;
      if (role.copy) {
        copies.emplace_back(static_cast<size_t>(role.user.get_size() / sizeof(float)));
        GatherFlipped(role, base, copies.back().data());
        base = copies.back().data();
      }
      memory user(role.user, Engine(), base);
      if (!role.reordered) {
        primitive_args.emplace(role.arg, user);
        continue;
      }
      if (role.output && partial != nullptr) {
        primitive_args.emplace(role.arg, memory(role.prim, Engine(), partial));
        continue;
      }
      memory prim(role.prim, Engine());
      if (role.output) {
        outputs.push_back({&role, {prim, user}});
      } else {
        Reorder(role, user, prim, stream);
      }
      primitive_args.emplace(role.arg, prim);
    }
    if (tile.scratchpad.get_size() > 0)
      primitive_args.emplace(DNNL_ARG_SCRATCHPAD,
                             memory(tile.scratchpad, Engine(), onednn::ThreadScratch(tile.scratchpad.get_size())));
    tile.primitive.execute(stream, primitive_args);
    stream.wait();
    for (auto& [role, memories] : outputs) Reorder(*role, memories.first, memories.second, stream);
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "convolution");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory running a oneDNN convolution");
  }
  return OkStatus();
}

// Tiles that each sum a part of the kernel gradient: each writes its partial result in the
// primitive's layout, the partials are added in tile order into the first, which is then
// reordered into the output.
Status RunPartialSums(const DnnlConvState& state, const KernelArgs& args) {
  const Role& out = state.tiles[0].roles[2];
  const size_t count = out.prim.get_size() / sizeof(float);
  const size_t tiles = state.tiles.size();
  try {
    std::vector<memory> partials;  // oneDNN's allocations: aligned as its kernels prefer
    for (size_t t = 0; t < tiles; ++t) partials.emplace_back(out.prim, Engine());
    std::vector<Status> statuses(tiles);
    ThreadPool::Shared().ParallelFor(static_cast<int>(tiles), [&](int t) {
      const size_t i = static_cast<size_t>(t);
      statuses[i] = RunTile(state.tiles[i], args, static_cast<float*>(partials[i].get_data_handle()));
    });
    for (Status& status : statuses)
      if (!status.ok()) return status;
    float* sum = static_cast<float*>(partials[0].get_data_handle());
    for (size_t t = 1; t < tiles; ++t) {
      const float* part = static_cast<const float*>(partials[t].get_data_handle());
      for (size_t i = 0; i < count; ++i) sum[i] += part[i];
    }
    onednn::OneDnnThreadScope single;
    Reorder(out, partials[0], memory(out.user, Engine(), args.outputs[0].as<float>() + out.offset),
            onednn::ThreadStream());
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "convolution");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory for the partial sums of a oneDNN convolution");
  }
  return OkStatus();
}

Status DnnlConvolutionKernel(const KernelContext& context, const KernelArgs& args) {
  const auto& state = *static_cast<const DnnlConvState*>(args.state);
  if (state.loops) return state.loop_kernel(context, args);
  // A oneDNN step is called once; should a caller still split it, one call does the work.
  if (context.thread_index != 0) return OkStatus();
  if (state.split == Split::kSum) return RunPartialSums(state, args);
  if (state.tiles.size() == 1) return RunTile(state.tiles[0], args);
  std::vector<Status> statuses(state.tiles.size());
  ThreadPool::Shared().ParallelFor(static_cast<int>(state.tiles.size()), [&](int t) {
    statuses[static_cast<size_t>(t)] = RunTile(state.tiles[static_cast<size_t>(t)], args);
  });
  for (Status& status : statuses)
    if (!status.ok()) return status;
  return OkStatus();
}

}  // namespace

Status RegisterDnnlConvolutionKernels(KernelRegistry& r, KernelFn loop_kernel_f32) {
  g_loop_kernel = loop_kernel_f32;
  return r.RegisterSplittable<ConvolutionParams>(KernelKey("convolution_dnnl", {DType::kF32}), &DnnlConvolutionKernel, &Prepare);
}

}  // namespace stablert::kernels
