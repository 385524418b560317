// "fused": a chain of elementwise kernels run tile by tile (parameters: kernels/fused_params.h,
// built by plan/fuse_elementwise.cc).
//
// Each call takes its share of the elements (or, with a reduction, of the [rows, segments]
// units) and walks it in tiles of a few hundred to a thousand elements: strided inputs are
// gathered into tile buffers (GatherViewElements), dense inputs are read in place, each
// sub-op's dense kernel runs on the tile, outputs are written straight into their buffers
// and internal slots live in tile buffers only. Tile buffers are reused once a slot is
// last read, so a tile's live slots stay in L1 (48 KiB on the target): a tile is 4 KiB per
// slot, smaller when many slots are live at once (down to 256 elements).
//
// A fused reduction folds its slot tile by tile. Float sums keep reduce.cc's accuracy: a
// tile is summed pairwise (simd::PairwiseSum) and a segment's tile sums are combined by a
// pairwise cascade; a row of at most one tile is init + PairwiseSum(row), bit for bit what
// the reduce kernel computes. Other bodies fold in row-major order (max/min and integer
// bodies are exact in any order; float products run one segment per row, in order).
//
// State (from the prepare function): the sub-ops' kernel functions, looked up once per plan
// load, and the tile layout. Thread-safety: reentrant; calls of a split step write disjoint
// elements. Failure: InvalidArgument from the prepare function on malformed parameters;
// calls fail only if a sub-op does.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/accumulate.h"
#include "kernels/dtype_traits.h"
#include "kernels/elementwise_views.h"
#include "kernels/families.h"
#include "kernels/fused_params.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/reduce_simd.h"

namespace stablert::kernels {
namespace {

constexpr int64_t kSlotBytes = 4096;       // tile bytes per slot
constexpr int64_t kTileBudget = 32 * 1024;  // bytes of all live tile buffers
constexpr int64_t kMinTile = 256;

struct FusedState;
using ReduceRunFn = Status (*)(const FusedState& state, const KernelContext& context, const KernelArgs& args);

// Where a slot's tile lives.
// kSplat: a view repeating one element (all strides 0), filled once per call;
// kConstantSplat: the same of a plan constant, filled once when the plan is loaded;
// kRows: a view whose tiles are usually contiguous runs of its storage (innermost stride 1),
// read in place when a tile lies within one run, gathered otherwise.
enum class Place : uint8_t { kScalar, kDenseInput, kGathered, kSplat, kConstantSplat, kRows, kOutput, kBuffer };

bool AllZero(std::span<const int64_t> strides) {
  for (int64_t s : strides)
    if (s != 0) return false;
  return true;
}

struct FusedState {
  struct Op {
    KernelFn fn;
    const void* params;
    std::vector<int> inputs;
    int output;
  };
  std::vector<Op> ops;
  std::vector<Place> place;     // per slot
  std::vector<int> index;       // input, output, buffer or constant tile number of the slot
  std::vector<std::vector<uint64_t>> constant_tiles;  // a tile of each constant splat input
  std::vector<int64_t> bytes;   // element bytes per slot
  int num_inputs = 0;
  int num_buffers = 0;
  int64_t tile = 0;             // elements per tile
  int64_t buffer_bytes = 0;     // bytes per tile buffer (64-byte multiple)
  ReduceRunFn reduce = nullptr;
  int reduce_slot = -1;
  int64_t rows = 1, length = 0, segments = 1;
};

Status Malformed(const std::string& what) { return InvalidArgument("fused step: " + what); }

// Slot places, buffer reuse and tile size (everything but the kernel functions).
Status Layout(const FusedParams& params, std::span<const BufferView> inputs, size_t num_outputs, FusedState& state) {
  const size_t slots = params.slot_dtypes.size();
  const bool has_reduce = !params.reduce.empty();
  const size_t num_inputs = inputs.size() - (has_reduce ? 1 : 0);
  if (num_inputs > slots || params.num_elements <= 0) return Malformed("more inputs than slots, or no elements");
  if (params.output_slots.size() + (has_reduce ? 1 : 0) != num_outputs)
    return Malformed("its outputs do not match its parameters");
  state.num_inputs = static_cast<int>(num_inputs);
  state.place.assign(slots, Place::kBuffer);
  state.index.assign(slots, -1);
  state.bytes.assign(slots, 0);
  for (size_t s = 0; s < slots; ++s) {
    const auto dtype = static_cast<DType>(params.slot_dtypes[s]);
    if (!FusibleDType(dtype)) return Malformed("slot of an unsupported element type");
    state.bytes[s] = DTypeByteSize(dtype);
  }
  for (size_t k = 0; k < num_inputs; ++k) {
    const BufferView& in = inputs[k];
    if (in.dtype != static_cast<DType>(params.slot_dtypes[k])) return Malformed("input of another element type");
    if (in.rank() == 0 && in.dense()) state.place[k] = Place::kScalar;
    else if (in.num_elements != params.num_elements) return Malformed("input of another element count");
    else if (in.dense()) state.place[k] = Place::kDenseInput;
    else if (AllZero(in.strides)) state.place[k] = Place::kSplat;
    else if (in.strides.back() == 1 && in.dims.back() >= 256) state.place[k] = Place::kRows;
    else state.place[k] = Place::kGathered;
    state.index[k] = static_cast<int>(k);
  }
  std::vector<int> writer(slots, -1), last_use(slots, -1);
  for (size_t i = 0; i < params.ops.size(); ++i) {
    const FusedOp& op = params.ops[i];
    for (int64_t s : op.inputs) {
      if (s < 0 || static_cast<size_t>(s) >= slots || (static_cast<size_t>(s) >= num_inputs && writer[s] < 0))
        return Malformed("sub-op reads a slot not computed before it");
      last_use[s] = static_cast<int>(i);
    }
    if (op.output < static_cast<int64_t>(num_inputs) || static_cast<size_t>(op.output) >= slots || writer[op.output] >= 0)
      return Malformed("sub-op writes an input slot or one written before");
    writer[op.output] = static_cast<int>(i);
  }
  for (size_t s = num_inputs; s < slots; ++s)
    if (writer[s] < 0) return Malformed("slot computed by no sub-op");
  for (size_t j = 0; j < params.output_slots.size(); ++j) {
    const int64_t s = params.output_slots[j];
    if (s < static_cast<int64_t>(num_inputs) || static_cast<size_t>(s) >= slots || state.place[s] == Place::kOutput)
      return Malformed("output is not a computed slot");
    state.place[s] = Place::kOutput;
    state.index[s] = static_cast<int>(j);
  }
  if (has_reduce) {
    const FusedReduce& r = params.reduce[0];
    if (r.slot < static_cast<int64_t>(num_inputs) || static_cast<size_t>(r.slot) >= slots || r.rows < 1 ||
        r.length < 1 || r.segments < 1 || r.segments > r.length || r.rows * r.length != params.num_elements)
      return Malformed("malformed reduction");
    last_use[r.slot] = static_cast<int>(params.ops.size());
    state.reduce_slot = static_cast<int>(r.slot);
    state.rows = r.rows;
    state.length = r.length;
    state.segments = r.segments;
  }
  // Buffers: gathered inputs for the whole tile, internal slots from their sub-op to their
  // last reader (never the buffer of an input of the same sub-op).
  std::vector<int> free_list;
  int live = 0, max_live = 0;
  auto take = [&] {
    ++live;
    max_live = std::max(max_live, live);
    if (!free_list.empty()) {
      const int b = free_list.back();
      free_list.pop_back();
      return b;
    }
    return state.num_buffers++;
  };
  for (size_t k = 0; k < num_inputs; ++k)
    if (state.place[k] == Place::kGathered || state.place[k] == Place::kRows || state.place[k] == Place::kSplat)
      state.index[k] = take();
  int64_t widest = 1;
  for (size_t s = 0; s < slots; ++s) widest = std::max(widest, state.bytes[s]);
  for (size_t i = 0; i < params.ops.size(); ++i) {
    const auto out = static_cast<size_t>(params.ops[i].output);
    if (state.place[out] == Place::kBuffer) {
      state.index[out] = take();
      if (last_use[out] < 0) return Malformed("internal slot nobody reads");
    }
    for (size_t s = num_inputs; s < slots; ++s)  // release what this sub-op read last
      if (state.place[s] == Place::kBuffer && state.index[s] >= 0 && last_use[s] == static_cast<int>(i)) {
        free_list.push_back(state.index[s]);
        --live;
      }
  }
  const int64_t per_slot = std::min<int64_t>(kSlotBytes, kTileBudget / (max_live + 1));
  int64_t tile = per_slot / widest;
  tile = std::max(kMinTile, tile / 64 * 64);
  state.tile = tile;
  state.buffer_bytes = (tile * widest + 63) / 64 * 64;
  return OkStatus();
}

// Computes elements [first, first + count) of every computed slot (count <= tile).
// `slot_views` has one view per slot; `dims` is the tile's one-dimensional shape.
Status ComputeTile(const FusedState& state, const KernelArgs& args, int64_t first, int64_t count, std::byte* buffers,
                   std::vector<BufferView>& slot_views, int64_t* dims) {
  dims[0] = count;
  const std::span<const int64_t> tile_dims(dims, 1);
  for (size_t s = 0; s < slot_views.size(); ++s) {
    BufferView& view = slot_views[s];
    const int index = state.index[s];
    const size_t offset = static_cast<size_t>(first * state.bytes[s]);
    switch (state.place[s]) {
      case Place::kScalar:
        view = args.inputs[static_cast<size_t>(index)];
        continue;
      case Place::kDenseInput:
        view = args.inputs[static_cast<size_t>(index)];
        view.data = static_cast<uint8_t*>(view.data) + offset;
        break;
      case Place::kSplat:  // filled by SlotViews
        view.data = buffers + static_cast<size_t>(index) * static_cast<size_t>(state.buffer_bytes);
        break;
      case Place::kConstantSplat:
        view.data = const_cast<uint64_t*>(state.constant_tiles[static_cast<size_t>(index)].data());
        break;
      case Place::kRows: {
        const BufferView& in = args.inputs[s];  // input slots are the inputs, in order
        const int64_t inner = in.dims.back();
        if (first % inner + count <= inner) {
          // Within one innermost run: its element offset from the outer indices.
          int64_t offset = first % inner, rest = first / inner;
          for (size_t d = in.dims.size() - 1; d-- > 0;) {
            offset += rest % in.dims[d] * in.strides[d];
            rest /= in.dims[d];
          }
          view = in;
          view.data = static_cast<uint8_t*>(in.data) + static_cast<size_t>(offset * state.bytes[s]);
          view.strides = {};
          break;
        }
        [[fallthrough]];
      }
      case Place::kGathered: {
        const BufferView& in = args.inputs[s];
        void* dst = buffers + static_cast<size_t>(index) * static_cast<size_t>(state.buffer_bytes);
        GatherViewElements(in, first, count, dst);
        view = in;
        view.data = dst;
        view.strides = {};
        break;
      }
      case Place::kOutput:
        view = args.outputs[static_cast<size_t>(index)];
        view.data = static_cast<uint8_t*>(view.data) + offset;
        break;
      case Place::kBuffer:
        view.data = buffers + static_cast<size_t>(index) * static_cast<size_t>(state.buffer_bytes);
        break;
    }
    view.dims = tile_dims;
    view.num_elements = count;
  }
  const KernelContext one_call;
  BufferView op_inputs[3];
  for (const FusedState::Op& op : state.ops) {
    for (size_t k = 0; k < op.inputs.size(); ++k) op_inputs[k] = slot_views[static_cast<size_t>(op.inputs[k])];
    KernelArgs op_args;
    op_args.inputs = std::span<const BufferView>(op_inputs, op.inputs.size());
    op_args.outputs = std::span<const BufferView>(&slot_views[static_cast<size_t>(op.output)], 1);
    op_args.params = op.params;
    STABLERT_RETURN_IF_ERROR(op.fn(one_call, op_args));
  }
  return OkStatus();
}

std::vector<BufferView> SlotViews(const FusedState& state, const KernelArgs& args) {
  const auto& params = args.Params<FusedParams>();
  // Views repeating one element: a tile's worth, once per call.
  for (size_t k = 0; k < static_cast<size_t>(state.num_inputs); ++k)
    if (state.place[k] == Place::kSplat)
      GatherViewElements(args.inputs[k], 0, std::min(state.tile, params.num_elements),
                         args.workspace.data() + static_cast<size_t>(state.index[k]) * static_cast<size_t>(state.buffer_bytes));
  std::vector<BufferView> views(state.place.size());
  for (size_t s = 0; s < views.size(); ++s) views[s].dtype = static_cast<DType>(params.slot_dtypes[s]);
  return views;
}

Status FusedKernel(const KernelContext& context, const KernelArgs& args) {
  const auto& state = *static_cast<const FusedState*>(args.state);
  if (state.reduce != nullptr) return state.reduce(state, context, args);
  const int64_t n = args.Params<FusedParams>().num_elements;
  const auto [begin, end] = ShareOf(context, n);
  std::vector<BufferView> views = SlotViews(state, args);
  int64_t dims[1];
  for (int64_t first = begin; first < end; first += state.tile)
    STABLERT_RETURN_IF_ERROR(
        ComputeTile(state, args, first, std::min(state.tile, end - first), args.workspace.data(), views, dims));
  return OkStatus();
}

// ---- Fused reductions ----

template <typename Body, typename T>
inline constexpr bool kFloatSum = std::is_same_v<Body, ops::AddOp> && std::is_floating_point_v<T>;

template <typename Body, typename T>
T Identity() {
  if constexpr (std::is_same_v<Body, ops::AddOp> || std::is_same_v<Body, ops::OrOp>) {
    if constexpr (std::is_floating_point_v<T>) return T(-0.0);
    else return T(0);
  } else if constexpr (std::is_same_v<Body, ops::MultiplyOp>) {
    return T(1);
  } else if constexpr (std::is_same_v<Body, ops::MaxOp>) {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  } else if constexpr (std::is_same_v<Body, ops::MinOp>) {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  } else {
    return static_cast<T>(~T(0));  // and
  }
}

// The fold of one segment, tile by tile.
template <typename Body, typename T>
class Accumulator {
 public:
  explicit Accumulator(T start) : acc_(start) {}
  void Add(const T* x, int64_t n) {
    if constexpr (kFloatSum<Body, T>) {
      cascade_.Push(simd::PairwiseSum(x, n));
    } else if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, double>) &&
                         (std::is_same_v<Body, ops::MaxOp> || std::is_same_v<Body, ops::MinOp>)) {
      acc_ = simd::ReduceRow(std::is_same_v<Body, ops::MaxOp> ? simd::ReduceOp::kMax : simd::ReduceOp::kMin, acc_, x, n);
    } else {
      for (int64_t i = 0; i < n; ++i) acc_ = Body::Apply(acc_, x[i]);
    }
  }
  T Result() const {
    if constexpr (kFloatSum<Body, T>) return acc_ + cascade_.Result();
    else return acc_;
  }

 private:
  struct NoCascade {};
  T acc_;
  std::conditional_t<kFloatSum<Body, T>, pairwise::ScalarCascade<T>, NoCascade> cascade_;
};

template <typename Body, DType D>
Status FusedReduceRun(const FusedState& state, const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  T* out = args.outputs.back().as<T>();
  const bool final = state.segments == 1;
  const T start = final ? args.inputs.back().as<const T>()[0] : Identity<Body, T>();
  std::vector<BufferView> views = SlotViews(state, args);
  int64_t dims[1];
  std::byte* buffers = args.workspace.data();
  const BufferView& reduced = views[static_cast<size_t>(state.reduce_slot)];
  const int64_t length = state.length, tile = state.tile;
  if (final && length <= tile) {
    // Whole rows per tile.
    const auto [begin, end] = ShareOf(context, state.rows);
    const int64_t rows_per_tile = tile / length;
    for (int64_t r = begin; r < end; r += rows_per_tile) {
      const int64_t n = std::min(rows_per_tile, end - r);
      STABLERT_RETURN_IF_ERROR(ComputeTile(state, args, r * length, n * length, buffers, views, dims));
      const T* x = reduced.as<const T>();
      for (int64_t i = 0; i < n; ++i) {
        Accumulator<Body, T> acc(start);
        acc.Add(x + i * length, length);
        out[r + i] = acc.Result();
      }
    }
    return OkStatus();
  }
  const int64_t segments = state.segments, per_segment = (length + segments - 1) / segments;
  const auto [begin, end] = ShareOf(context, state.rows * segments);
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t row = unit / segments, segment = unit % segments;
    const int64_t a = std::min(length, segment * per_segment), b = std::min(length, a + per_segment);
    Accumulator<Body, T> acc(start);
    for (int64_t first = a; first < b; first += tile) {
      const int64_t n = std::min(tile, b - first);
      STABLERT_RETURN_IF_ERROR(ComputeTile(state, args, row * length + first, n, buffers, views, dims));
      acc.Add(reduced.as<const T>(), n);
    }
    out[unit] = acc.Result();
  }
  return OkStatus();
}

// The fused reduction running `kernel` ("reduce_add.f32"), or nullptr if unsupported.
ReduceRunFn FindReduce(const std::string& kernel) {
  ReduceRunFn found = nullptr;
  auto add = [&]<typename Body>(std::string_view name, auto list) {
    (void)ForEachDType(list, [&]<DType D>() {
      if (found == nullptr && KernelKey(name, {D}) == kernel) found = &FusedReduceRun<Body, D>;
      return OkStatus();
    });
  };
  using Floats = DTypeList<DType::kF32, DType::kF64>;
  add.template operator()<ops::AddOp>("reduce_add", Floats{});
  add.template operator()<ops::AddOp>("reduce_add", IntDTypes{});
  add.template operator()<ops::MultiplyOp>("reduce_mul", Floats{});
  add.template operator()<ops::MultiplyOp>("reduce_mul", IntDTypes{});
  add.template operator()<ops::MaxOp>("reduce_max", Floats{});
  add.template operator()<ops::MaxOp>("reduce_max", IntDTypes{});
  add.template operator()<ops::MinOp>("reduce_min", Floats{});
  add.template operator()<ops::MinOp>("reduce_min", IntDTypes{});
  add.template operator()<ops::AndOp>("reduce_and", IntDTypes{});
  add.template operator()<ops::OrOp>("reduce_or", IntDTypes{});
  return found;
}

StatusOr<PreparedStep> PrepareFused(const KernelArgs& args) {
  const auto& params = args.Params<FusedParams>();
  auto state = std::make_shared<FusedState>();
  STABLERT_RETURN_IF_ERROR(Layout(params, args.inputs, args.outputs.size(), *state));
  const KernelRegistry& registry = CpuKernels();
  for (const FusedOp& op : params.ops) {
    const KernelRegistry::Entry* entry = registry.Lookup(op.kernel);
    if (entry == nullptr || !entry->strided_inputs || op.kernel.rfind("fused", 0) == 0)
      return Malformed("sub-op '" + op.kernel + "' is not an elementwise kernel");
    if (entry->params != op.params.type())
      return Malformed("sub-op '" + op.kernel + "' takes " + std::string(entry->params ? entry->params->family : "no") +
                       " parameters, not " + std::string(op.params.family()));
    if (op.inputs.empty() || op.inputs.size() > 3) return Malformed("sub-op with 0 or more than 3 inputs");
    FusedState::Op resolved{entry->fn, op.params.get(), {}, static_cast<int>(op.output)};
    for (int64_t s : op.inputs) resolved.inputs.push_back(static_cast<int>(s));
    state->ops.push_back(std::move(resolved));
  }
  // Constant splats (the prepare function sees plan constants' data): one tile, filled now.
  for (size_t k = 0; k < static_cast<size_t>(state->num_inputs); ++k) {
    if (state->place[k] != Place::kSplat || args.inputs[k].data == nullptr) continue;
    const int64_t count = std::min(state->tile, params.num_elements);
    std::vector<uint64_t>& tile = state->constant_tiles.emplace_back(
        static_cast<size_t>((count * state->bytes[k] + 7) / 8));
    GatherViewElements(args.inputs[k], 0, count, tile.data());
    state->place[k] = Place::kConstantSplat;
    state->index[k] = static_cast<int>(state->constant_tiles.size() - 1);
  }
  if (!params.reduce.empty()) {
    const FusedReduce& r = params.reduce[0];
    state->reduce = FindReduce(r.kernel);
    if (state->reduce == nullptr) return Malformed("reduction '" + r.kernel + "' cannot be fused");
    const auto dtype = static_cast<DType>(params.slot_dtypes[static_cast<size_t>(r.slot)]);
    const BufferView& out = args.outputs.back();
    if (KernelKey(r.kernel.substr(0, r.kernel.find('.')), {dtype}) != r.kernel || out.dtype != dtype ||
        out.num_elements != r.rows * r.segments || args.inputs.back().dtype != dtype ||
        args.inputs.back().num_elements != 1)
      return Malformed("reduction of another element type or shape");
    if (r.kernel.rfind("reduce_mul.f", 0) == 0 && r.segments != 1)
      return Malformed("float products reduce in one segment per row");
  }
  return PreparedStep(std::move(state));
}

int64_t FusedWorkspace(const KernelArgs& args) {
  FusedState state;
  if (!Layout(args.Params<FusedParams>(), args.inputs, args.outputs.size(), state).ok()) return 0;
  return state.num_buffers * state.buffer_bytes;
}

}  // namespace

Status RegisterFusedKernels(KernelRegistry& registry) {
  STABLERT_RETURN_IF_ERROR(registry.RegisterTakingViews<FusedParams>("fused", &FusedKernel, &PrepareFused));
  return registry.DeclareWorkspace("fused", &FusedWorkspace);
}

}  // namespace stablert::kernels
