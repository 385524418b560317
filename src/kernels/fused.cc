// "fused": a chain of elementwise kernels run tile by tile (parameters: kernels/fused_params.h,
// built by plan/fuse_elementwise.cc).
//
// Each call takes its share of the elements (or, with a reduction, of the [rows, segments]
// units) and walks it in tiles of a few hundred to a thousand elements: strided inputs are
// gathered into tile buffers (GatherViewElements), dense inputs are read in place, each
// sub-op's dense kernel runs on the tile, outputs are written straight into their buffers
// and internal slots live in tile buffers only. Tile buffers are reused once a slot is
// last read, so a tile's live slots stay in L1: a tile is 4 KiB per slot, smaller when many
// slots are live at once (down to 256 elements), and in steps of kPrefetchFrom elements or
// more without a reduction as large as lets the tile and the next tile's prefetched inputs fit
// in the core's L1 together (1 to 4 KiB per slot; their inputs stream from DRAM).
//
// Add-rotate-xor chains (kernels/fused_arx.h: the rounds and key injections of Threefry-2x32
// as JAX lowers them) found when the step is prepared run as one sub-op: simd::ArxChain
// keeps the word pair in vector registers through every round instead of one tile pass per
// sub-op; their inner values get no tile at all (only the slots the remaining sub-ops touch
// are placed), and their addends (the keys, read at run time) are resolved once per call.
// A "fused_iota.<T>" sub-op (FusedIotaParams) fills its tile with the elements' indices along
// one dimension, so an iota the fusion pass folded in never exists as an array.
//
// A float add/subtract/multiply/divide/maximum/minimum whose other operand holds one value per
// tile (a row broadcast, for a tile within one row; a splat) runs simd::BinaryScalar on that
// value, bit for bit what the tile function gives on the filled tile; a row broadcast that only
// such sub-ops read is then never filled. Steps of kPrefetchFrom elements or more prefetch their
// dense inputs' next tile into L2 while the current one computes.
//
// A fused reduction folds its slot tile by tile. Float sums keep reduce.cc's accuracy: a
// tile is summed pairwise (simd::PairwiseSum) and a segment's tile sums are combined by a
// pairwise cascade; a row of at most one tile is init + PairwiseSum(row), bit for bit what
// the reduce kernel computes. Other bodies fold in row-major order (max/min and integer
// bodies are exact in any order; float products run one segment per row, in order).
//
// "fused_rows" (FusedRowsParams) runs a sequence of sub-steps (reduce kernels, elementwise
// kernels, fused steps) over blocks of rows: each call takes whole blocks, a block runs every
// sub-step before the next block starts, values only the step reads live in the call's
// workspace (a block's full values within ~384 KiB, so they stay in L2). Sub-steps are
// prepared once for a full block and once for the short last block. A fused sub-step reads
// row values broadcast back as [rows, length] views with strides [1, 0] (Place::
// kRowBroadcast: the row's value filled into the tile buffer, once per row).
//
// State (from the prepare function): the sub-ops' kernel functions, looked up once per plan
// load, and the tile layout. Thread-safety: reentrant; calls of a split step write disjoint
// elements. Failure: InvalidArgument from the prepare function on malformed parameters;
// calls fail only if a sub-op does.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "base/cpu_caches.h"
#include "kernels/accumulate.h"
#include "kernels/dtype_traits.h"
#include "kernels/elementwise_views.h"
#include "kernels/families.h"
#include "kernels/fused_arx.h"
#include "kernels/fused_params.h"
#include "kernels/reduce_widened.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/simd/arx_simd.h"
#include "kernels/simd/binary_simd.h"
#include "kernels/simd/reduce_simd.h"

namespace stablert::kernels {
namespace {

constexpr int64_t kSlotBytes = 4096;       // tile bytes per slot
constexpr int64_t kTileBudget = 32 * 1024;  // bytes of all live tile buffers
constexpr int64_t kMinTile = 256;
// Steps of at least this many elements prefetch their dense inputs a tile ahead (their
// inputs are larger than the caches; smaller steps' inputs are usually cached already).
constexpr int64_t kPrefetchFrom = 1 << 18;
// Tile bytes per slot of such a step without a reduction: its inputs come from DRAM, so a
// tile's runs of its dense inputs, the next tile's prefetched runs of them, its output runs and
// its tile buffers should all stay in L1 together, within three quarters of it (the rest: the
// stack, the step's state, the sub-ops' constants). A power of two from kMinStreamingSlotBytes
// to kSlotBytes (StreamingSlotBytes). With a 32 KiB L1, tanh(a * b + c) over three 16 MiB
// inputs touched 36 KiB per tile at 4 KiB slots and ran 1.4x slower than at 1 KiB; with a
// 48 KiB L1, 4 KiB slots are the fastest or level on every large chain measured
// (docs/benchmarks.md).
constexpr int64_t kMinStreamingSlotBytes = 1024;

struct FusedState;
using ReduceRunFn = Status (*)(const FusedState& state, const KernelContext& context, const KernelArgs& args);

// Where a slot's tile lives.
// kSplat: a view repeating one element (all strides 0), filled once per call;
// kConstantSplat: the same of a plan constant, filled once when the plan is loaded;
// kRows: a view whose tiles are usually contiguous runs of its storage (innermost stride 1),
// read in place when a tile lies within one run, gathered otherwise.
// kRowBroadcast: a [rows, length] view with strides [1, 0] (one value per row, as fused_rows
// passes a row value), filled per tile from its rows.
enum class Place : uint8_t {
  kScalar, kDenseInput, kGathered, kSplat, kConstantSplat, kRows, kRowBroadcast, kOutput, kBuffer
};

bool AllZero(std::span<const int64_t> strides) {
  for (int64_t s : strides)
    if (s != 0) return false;
  return true;
}

struct FusedState {
  struct Op {
    KernelFn fn;
    TileFn tile;  // the kernel's tile function, or nullptr
    const void* params;
    std::vector<int> inputs;
    int output;
    int arx = -1;  // >= 0: the add-rotate-xor chain arx[this] (fused_arx.h), not a kernel
    const FusedIotaParams* iota = nullptr;  // a folded iota (fused_params.h), not a kernel
    DType iota_dtype = DType::kInvalid;
    // 0 or 1: a float add/subtract/multiply/divide/maximum/minimum whose operand `uniform`
    // holds one value per tile (a row broadcast within one row, a splat): run by
    // simd::BinaryScalar on that value, without the operand's tile.
    int uniform = -1;
    simd::BinaryFn binary = simd::BinaryFn::kAdd;
    bool f64 = false;
  };
  std::vector<Op> ops;
  std::vector<ArxChainOp> arx;
  bool has_iota = false;
  // The slots a tile places (PlaceSlots): all, or with chains those the remaining sub-ops,
  // the chains' words, the outputs and the reduction touch (a chain's inner values have no
  // tiles; its addends are read once per call).
  std::vector<int> placed;
  // Every sub-op has a tile function and no input is a rank-0 scalar: tiles run the tile
  // functions on the slots' data pointers, with no views built.
  bool direct = false;
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
  int64_t row_length = 0;       // length of the rows of kRowBroadcast inputs (tiles stay within one)
  std::vector<int> prefetched;  // dense input slots whose next tile is prefetched (PrefetchTile)
  // Per slot: a kRowBroadcast input only sub-ops with `uniform` read, so a tile within one
  // row does not fill its buffer.
  std::vector<bool> scalar_only;
};

Status Malformed(const std::string& what) { return InvalidArgument("fused step: " + what); }

// Bytes per slot of a large step without a reduction (see kMinStreamingSlotBytes).
int64_t StreamingSlotBytes(int64_t dense_inputs, int64_t outputs, int64_t buffers) {
  const int64_t runs = std::max<int64_t>(1, 2 * dense_inputs + outputs + buffers);
  const int64_t fit = L1DataCacheBytes() * 3 / 4 / runs;
  int64_t bytes = kMinStreamingSlotBytes;
  while (bytes * 2 <= std::min(fit, kSlotBytes)) bytes *= 2;
  return bytes;
}

// Slot places, buffer reuse and tile size (everything but the kernel functions).
Status Layout(const FusedParams& params, std::span<const BufferView> inputs, size_t num_outputs, FusedState& state) {
  const size_t slots = params.slot_dtypes.size();
  const bool has_reduce = !params.reduce.empty();
  const size_t num_inputs = inputs.size() - (has_reduce ? 1 : 0);
  if (num_inputs > slots || params.num_elements <= 0) return Malformed("more inputs than slots, or no elements");
  if (params.output_slots.size() + (has_reduce ? 1 : 0) != num_outputs)
    return Malformed("its outputs do not match its parameters");
  state.num_inputs = static_cast<int>(num_inputs);
  state.scalar_only.assign(slots, false);
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
    else if (in.rank() == 2 && in.strides[0] == 1 && in.strides[1] == 0 &&
             (state.row_length == 0 || state.row_length == in.dims[1])) {
      state.place[k] = Place::kRowBroadcast;
      state.row_length = in.dims[1];
    }
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
    if (state.place[k] == Place::kGathered || state.place[k] == Place::kRows || state.place[k] == Place::kSplat ||
        state.place[k] == Place::kRowBroadcast)
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
  int64_t dense_inputs = 0;
  for (size_t k = 0; k < num_inputs; ++k) dense_inputs += state.place[k] == Place::kDenseInput ? 1 : 0;
  const int64_t slot_bytes =
      params.num_elements >= kPrefetchFrom && !has_reduce
          ? StreamingSlotBytes(dense_inputs, static_cast<int64_t>(params.output_slots.size()), max_live)
          : kSlotBytes;
  const int64_t per_slot = std::min<int64_t>(slot_bytes, kTileBudget / (max_live + 1));
  int64_t tile = per_slot / widest;
  tile = std::max(kMinTile, tile / 64 * 64);
  state.tile = tile;
  state.buffer_bytes = (tile * widest + 63) / 64 * 64;
  state.placed.resize(slots);
  for (size_t s = 0; s < slots; ++s) state.placed[s] = static_cast<int>(s);
  return OkStatus();
}

// `n` copies of `value` at `dst`, with the widest stores the machine has (a plain loop
// compiles to the baseline ISA's narrow ones; the bytes are the same on every path).
#if defined(__x86_64__) && defined(__GNUC__)
#define STABLERT_WIDE_STORES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STABLERT_WIDE_STORES
#endif
STABLERT_WIDE_STORES void Splat32(uint32_t value, int64_t n, uint32_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}
STABLERT_WIDE_STORES void Splat64(uint64_t value, int64_t n, uint64_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}
STABLERT_WIDE_STORES void Splat16(uint16_t value, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}
template <typename T>
void Splat(T value, int64_t n, T* dst) {
  if constexpr (sizeof(T) == 4) Splat32(value, n, dst);
  else if constexpr (sizeof(T) == 8) Splat64(value, n, dst);
  else if constexpr (sizeof(T) == 2) Splat16(value, n, dst);
  else std::fill_n(dst, n, value);
}

template <typename T>
void FillRowsOf(const T* rows, int64_t length, int64_t first, int64_t count, T* dst) {
  for (int64_t i = 0; i < count;) {
    const int64_t row = (first + i) / length;
    const int64_t n = std::min(count - i, (row + 1) * length - (first + i));
    Splat(rows[row], n, dst + i);
    i += n;
  }
}

// Elements [first, first + count) of a [rows, length] broadcast of `rows` (one element per
// row) into `dst`.
void FillRows(const void* rows, int64_t bytes, int64_t length, int64_t first, int64_t count, void* dst) {
  switch (bytes) {
    case 1: return FillRowsOf(static_cast<const uint8_t*>(rows), length, first, count, static_cast<uint8_t*>(dst));
    case 2: return FillRowsOf(static_cast<const uint16_t*>(rows), length, first, count, static_cast<uint16_t*>(dst));
    case 4: return FillRowsOf(static_cast<const uint32_t*>(rows), length, first, count, static_cast<uint32_t*>(dst));
    case 8: return FillRowsOf(static_cast<const uint64_t*>(rows), length, first, count, static_cast<uint64_t*>(dst));
    default:
      for (int64_t i = 0; i < count; ++i)
        std::memcpy(static_cast<std::byte*>(dst) + i * bytes,
                    static_cast<const std::byte*>(rows) + (first + i) / length * bytes, static_cast<size_t>(bytes));
  }
}

// One call's slot data pointers, slot views (the generic path) and fill marks: on the
// stack for up to kInlineSlots slots (calls on small tiles, e.g. in loop bodies, allocate
// nothing), on the heap beyond. Views repeating one element are filled here, a tile's worth.
class SlotViews {
 public:
  SlotViews(const FusedState& state, const KernelArgs& args) {
    const auto& params = args.Params<FusedParams>();
    for (size_t k = 0; k < static_cast<size_t>(state.num_inputs); ++k)
      if (state.place[k] == Place::kSplat)
        GatherViewElements(args.inputs[k], 0, std::min(state.tile, params.num_elements),
                           args.workspace.data() + static_cast<size_t>(state.index[k]) * static_cast<size_t>(state.buffer_bytes));
    const size_t slots = state.place.size();
    const size_t view_slots = state.direct ? 0 : slots;
    if (slots <= kInlineSlots) {
      data_ = std::span<void*>(inline_data_.data(), slots);
      views_ = std::span<BufferView>(inline_views_.views.data(), view_slots);
      filled_ = std::span<int64_t>(inline_filled_.data(), 2 * slots);
    } else {
      heap_data_.resize(slots);
      heap_views_.resize(view_slots);
      heap_filled_.resize(2 * slots);
      data_ = heap_data_;
      views_ = heap_views_;
      filled_ = heap_filled_;
    }
    for (size_t s = 0; s < view_slots; ++s)
      std::construct_at(&views_[s], BufferView{nullptr, static_cast<DType>(params.slot_dtypes[s]), {}, 0, {}});
    std::fill(filled_.begin(), filled_.end(), -1);
    if (!state.arx.empty()) ResolveArx(state, args);
  }
  // Chain c's steps with this call's addends.
  std::span<const simd::ArxStep> arx_steps(int c) const {
    return std::span<const simd::ArxStep>(arx_steps_).subspan(arx_first_[static_cast<size_t>(c)],
                                                              arx_first_[static_cast<size_t>(c) + 1] - arx_first_[static_cast<size_t>(c)]);
  }
  void** data() { return data_.data(); }
  std::span<BufferView> views() { return views_; }
  int64_t* filled() { return filled_.data(); }

 private:
  // Addends are uniform slots (the first element is every element's): splats filled above,
  // constant splats' tiles, rank-0 inputs. Consecutive additions to one word are summed.
  void ResolveArx(const FusedState& state, const KernelArgs& args) {
    for (const ArxChainOp& chain : state.arx) {
      arx_first_.push_back(arx_steps_.size());
      const size_t start = arx_steps_.size();
      for (size_t k = 0; k < chain.steps.size(); ++k) {
        simd::ArxStep step = chain.steps[k];
        if (step.kind != simd::ArxKind::kRound) {
          const auto s = static_cast<size_t>(chain.addend_slot[k]);
          const int index = state.index[s];
          const void* data =
              state.place[s] == Place::kConstantSplat ? static_cast<const void*>(state.constant_tiles[static_cast<size_t>(index)].data())
              : state.place[s] == Place::kScalar      ? args.inputs[static_cast<size_t>(index)].data
                                                      : args.workspace.data() + static_cast<size_t>(index) * static_cast<size_t>(state.buffer_bytes);
          std::memcpy(&step.value, data, sizeof(uint32_t));
          if (arx_steps_.size() > start && arx_steps_.back().kind == step.kind) {
            arx_steps_.back().value += step.value;
            continue;
          }
        }
        arx_steps_.push_back(step);
      }
    }
    arx_first_.push_back(arx_steps_.size());
  }

  static constexpr size_t kInlineSlots = 24;
  // Uninitialized storage (constructed as needed above: the direct path builds no views).
  union InlineViews {
    InlineViews() {}
    std::array<BufferView, kInlineSlots> views;
  };
  std::array<void*, kInlineSlots> inline_data_;
  InlineViews inline_views_;
  std::array<int64_t, 2 * kInlineSlots> inline_filled_;
  std::vector<void*> heap_data_;
  std::vector<BufferView> heap_views_;
  std::vector<int64_t> heap_filled_;
  std::span<void*> data_;
  std::span<BufferView> views_;
  std::span<int64_t> filled_;
  std::vector<simd::ArxStep> arx_steps_;
  std::vector<size_t> arx_first_;
};

// Points data[s] at elements [first, first + count) of every slot s (count <= tile):
// inputs and outputs in place where they are dense runs, tile buffers (gathered or filled)
// otherwise, a rank-0 scalar input at its element. `filled` (two entries per slot, {-1, 0}
// at the start of a call) remembers which row a kRowBroadcast buffer holds, and how many
// elements of it.
void PlaceSlots(const FusedState& state, const KernelArgs& args, int64_t first, int64_t count, std::byte* buffers,
                int64_t* filled, void** data) {
  for (const int slot : state.placed) {
    const auto s = static_cast<size_t>(slot);
    const int index = state.index[s];
    const size_t offset = static_cast<size_t>(first * state.bytes[s]);
    std::byte* buffer = buffers + static_cast<size_t>(index) * static_cast<size_t>(state.buffer_bytes);
    switch (state.place[s]) {
      case Place::kScalar:
        data[s] = args.inputs[static_cast<size_t>(index)].data;
        break;
      case Place::kDenseInput:
        data[s] = static_cast<uint8_t*>(args.inputs[static_cast<size_t>(index)].data) + offset;
        break;
      case Place::kRowBroadcast: {
        const BufferView& in = args.inputs[s];
        data[s] = buffer;
        const int64_t row = first / in.dims[1];
        int64_t* have = filled + 2 * s;
        if (first % in.dims[1] + count <= in.dims[1]) {  // one row: one value, kept across tiles
          if (state.scalar_only[s]) break;  // its readers take the row's value (ComputeTile)
          if (have[0] != row || have[1] < count) {
            FillRows(in.data, state.bytes[s], in.dims[1], first, count, buffer);
            have[0] = row, have[1] = count;
          }
        } else {
          FillRows(in.data, state.bytes[s], in.dims[1], first, count, buffer);
          have[0] = -1;
        }
        break;
      }
      case Place::kSplat:  // filled by SlotViews
      case Place::kBuffer:
        data[s] = buffer;
        break;
      case Place::kConstantSplat:
        data[s] = const_cast<uint64_t*>(state.constant_tiles[static_cast<size_t>(index)].data());
        break;
      case Place::kRows: {
        const BufferView& in = args.inputs[s];  // input slots are the inputs, in order
        const int64_t inner = in.dims.back();
        if (first % inner + count <= inner) {
          // Within one innermost run: its element offset from the outer indices.
          int64_t element = first % inner, rest = first / inner;
          for (size_t d = in.dims.size() - 1; d-- > 0;) {
            element += rest % in.dims[d] * in.strides[d];
            rest /= in.dims[d];
          }
          data[s] = static_cast<uint8_t*>(in.data) + static_cast<size_t>(element * state.bytes[s]);
          break;
        }
        [[fallthrough]];
      }
      case Place::kGathered:
        GatherViewElements(args.inputs[s], first, count, buffer);
        data[s] = buffer;
        break;
      case Place::kOutput:
        data[s] = static_cast<uint8_t*>(args.outputs[static_cast<size_t>(index)].data) + offset;
        break;
    }
  }
}

// Elements [first, first + count) of a folded iota: (i / inner) % size.
template <typename T>
void FillIotaOf(int64_t size, int64_t inner, int64_t first, int64_t count, T* out) {
  int64_t r = first % inner, c = first / inner % size;
  for (int64_t i = 0; i < count;) {
    if (inner == 1) {  // increasing runs up to the wrap
      const int64_t m = std::min(count - i, size - c);
      for (int64_t k = 0; k < m; ++k) out[i + k] = static_cast<T>(c + k);
      i += m;
      c = c + m == size ? 0 : c + m;
      continue;
    }
    const int64_t run = std::min(count - i, inner - r);
    std::fill_n(out + i, run, static_cast<T>(c));
    i += run;
    r = 0;
    c = c + 1 == size ? 0 : c + 1;
  }
}

void FillIota(const FusedState::Op& op, int64_t first, int64_t count, void* out) {
  const int64_t size = op.iota->size, inner = op.iota->inner;
  switch (op.iota_dtype) {
    case DType::kS32: return FillIotaOf(size, inner, first, count, static_cast<int32_t*>(out));
    case DType::kU32: return FillIotaOf(size, inner, first, count, static_cast<uint32_t*>(out));
    case DType::kS64: return FillIotaOf(size, inner, first, count, static_cast<int64_t*>(out));
    default: return FillIotaOf(size, inner, first, count, static_cast<uint64_t*>(out));
  }
}

// An add-rotate-xor chain over the tile, its steps resolved for the call (SlotViews).
void RunArx(const ArxChainOp& chain, std::span<const simd::ArxStep> steps, void* const* data, int64_t count) {
  simd::ArxChain(steps.data(), steps.size(), static_cast<const uint32_t*>(data[chain.x0_in]),
                 static_cast<const uint32_t*>(data[chain.x1_in]), static_cast<uint32_t*>(data[chain.x0_out]),
                 static_cast<uint32_t*>(data[chain.x1_out]), static_cast<size_t>(count));
}

// The value of a sub-op's uniform operand for the tile [first, first + count), or nullptr
// when it is a row broadcast whose tile spans several rows.
const void* UniformValue(const FusedState& state, const KernelArgs& args, int slot, int64_t first, int64_t count,
                         void* const* data) {
  const auto s = static_cast<size_t>(slot);
  if (state.place[s] != Place::kRowBroadcast) return data[s];  // a splat's tile: its first element
  const int64_t length = args.inputs[s].dims[1];
  if (first % length + count > length) return nullptr;
  return static_cast<const std::byte*>(args.inputs[s].data) + first / length * state.bytes[s];
}

// A binary sub-op with one uniform operand (FusedState::Op::uniform).
void RunUniform(const FusedState::Op& op, const void* x, const void* value, void* out, int64_t count) {
  const bool first = op.uniform == 0;
  if (op.f64)
    simd::BinaryScalar(op.binary, static_cast<const double*>(x), *static_cast<const double*>(value), first,
                       static_cast<double*>(out), static_cast<size_t>(count));
  else
    simd::BinaryScalar(op.binary, static_cast<const float*>(x), *static_cast<const float*>(value), first,
                       static_cast<float*>(out), static_cast<size_t>(count));
}

// Computes elements [first, first + count) of every computed slot (count <= tile), each
// sub-op on the whole tile: by its tile function (direct) or its kernel on tile views.
Status ComputeTile(const FusedState& state, const KernelArgs& args, int64_t first, int64_t count, std::byte* buffers,
                   SlotViews& slots) {
  void** data = slots.data();
  PlaceSlots(state, args, first, count, buffers, slots.filled(), data);
  if (state.direct) {
    const void* op_inputs[3];
    for (const FusedState::Op& op : state.ops) {
      if (op.uniform >= 0) {
        const int u = op.inputs[static_cast<size_t>(op.uniform)], x = op.inputs[static_cast<size_t>(1 - op.uniform)];
        if (const void* value = UniformValue(state, args, u, first, count, data)) {
          RunUniform(op, data[x], value, data[op.output], count);
          continue;
        }
      }
      if (op.arx >= 0) {
        RunArx(state.arx[static_cast<size_t>(op.arx)], slots.arx_steps(op.arx), data, count);
        continue;
      }
      if (op.iota != nullptr) {
        FillIota(op, first, count, data[op.output]);
        continue;
      }
      for (size_t k = 0; k < op.inputs.size(); ++k) op_inputs[k] = data[op.inputs[k]];
      op.tile(op_inputs, data[op.output], count, op.params);
    }
    return OkStatus();
  }
  const std::span<BufferView> slot_views = slots.views();
  const int64_t dims[1] = {count};
  for (const int slot : state.placed) {
    const auto s = static_cast<size_t>(slot);
    BufferView& view = slot_views[s];
    if (state.place[s] == Place::kScalar) {
      view = args.inputs[static_cast<size_t>(state.index[s])];
      continue;
    }
    view.data = data[s];
    view.dims = std::span<const int64_t>(dims, 1);
    view.num_elements = count;
    view.strides = {};
  }
  const KernelContext one_call;
  BufferView op_inputs[3];
  for (const FusedState::Op& op : state.ops) {
    if (op.arx >= 0) {
      RunArx(state.arx[static_cast<size_t>(op.arx)], slots.arx_steps(op.arx), data, count);
      continue;
    }
    if (op.iota != nullptr) {
      FillIota(op, first, count, data[op.output]);
      continue;
    }
    for (size_t k = 0; k < op.inputs.size(); ++k) op_inputs[k] = slot_views[static_cast<size_t>(op.inputs[k])];
    KernelArgs op_args;
    op_args.inputs = std::span<const BufferView>(op_inputs, op.inputs.size());
    op_args.outputs = std::span<const BufferView>(&slot_views[static_cast<size_t>(op.output)], 1);
    op_args.params = op.params;
    STABLERT_RETURN_IF_ERROR(op.fn(one_call, op_args));
  }
  return OkStatus();
}

// Asks for elements [first, first + count) of the dense inputs in `state.prefetched` to be
// brought into L2 (the tile after the one about to be computed): their memory traffic then
// overlaps the sub-ops of the current tile instead of stalling the next tile's first sub-op
// (hardware prefetchers stop at page boundaries, and a tile spans about one page per input).
void PrefetchTile(const FusedState& state, const KernelArgs& args, int64_t first, int64_t count) {
  for (const int s : state.prefetched) {
    const auto* data = static_cast<const std::byte*>(args.inputs[static_cast<size_t>(s)].data);
    const int64_t bytes = state.bytes[static_cast<size_t>(s)];
    const std::byte* from = data + first * bytes;
    const std::byte* to = data + (first + count) * bytes;
    for (const std::byte* p = from; p < to; p += 64) __builtin_prefetch(p, 0, 2);
  }
}

Status FusedKernel(const KernelContext& context, const KernelArgs& args) {
  const auto& state = *static_cast<const FusedState*>(args.state);
  if (state.reduce != nullptr) return state.reduce(state, context, args);
  const int64_t n = args.Params<FusedParams>().num_elements;
  const auto [begin, end] = ShareOf(context, n);
  SlotViews slots(state, args);
  const int64_t row = state.row_length;
  for (int64_t first = begin; first < end;) {
    int64_t next = std::min(first + state.tile, end);
    // Tiles of long rows stay within one row (a row broadcast is then one value).
    if (row >= state.tile) next = std::min(next, (first / row + 1) * row);
    if (!state.prefetched.empty() && next < end) PrefetchTile(state, args, next, std::min(state.tile, end - next));
    STABLERT_RETURN_IF_ERROR(ComputeTile(state, args, first, next - first, args.workspace.data(), slots));
    first = next;
  }
  return OkStatus();
}

// ---- Bound calls: a direct step of one tile, its slot pointers resolved once ----

struct BoundTiles {
  struct Op {
    TileFn tile;
    const void* params;
    const void* in[3];
    void* out;
  };
  struct Splat {
    const BufferView* view;  // the step's input (the executor's operand view)
    void* dst;
  };
  static constexpr size_t kMaxOps = 8, kMaxSplats = 2;
  int64_t n = 0;
  uint32_t num_ops = 0, num_splats = 0;
  Splat splats[kMaxSplats];
  Op ops[kMaxOps];
};
static_assert(sizeof(BoundTiles) <= BoundCall::kStorage && alignof(BoundTiles) <= 16);

void RunBoundTiles(const void* storage) {
  const auto& bound = *static_cast<const BoundTiles*>(storage);
  for (uint32_t i = 0; i < bound.num_splats; ++i) GatherViewElements(*bound.splats[i].view, 0, bound.n, bound.splats[i].dst);
  for (uint32_t i = 0; i < bound.num_ops; ++i) {
    const BoundTiles::Op& op = bound.ops[i];
    op.tile(op.in, op.out, bound.n, op.params);
  }
}

// Binds a direct step whose elements fit one tile, whose inputs are dense arrays, constant
// splats or at most two views repeating one element (refilled on every run).
bool BindFused(const KernelArgs& args, BoundCall& call) {
  const auto& state = *static_cast<const FusedState*>(args.state);
  const int64_t n = args.Params<FusedParams>().num_elements;
  const size_t slots = state.place.size();
  constexpr size_t kMaxSlots = 24;
  if (!state.direct || state.reduce != nullptr || !state.arx.empty() || state.has_iota || n > state.tile || state.ops.size() > BoundTiles::kMaxOps ||
      slots > kMaxSlots)
    return false;
  auto* bound = std::construct_at(reinterpret_cast<BoundTiles*>(call.storage));
  bound->n = n;
  for (size_t s = 0; s < slots; ++s) {
    switch (state.place[s]) {
      case Place::kDenseInput: case Place::kConstantSplat: case Place::kOutput: case Place::kBuffer:
        break;
      case Place::kSplat:
        if (bound->num_splats == BoundTiles::kMaxSplats) return false;
        bound->splats[bound->num_splats++] = {&args.inputs[s], args.workspace.data() +
                                              static_cast<size_t>(state.index[s]) * static_cast<size_t>(state.buffer_bytes)};
        break;
      default:
        return false;
    }
  }
  void* data[kMaxSlots];
  PlaceSlots(state, args, 0, n, args.workspace.data(), nullptr, data);  // no row broadcasts to mark
  for (const FusedState::Op& op : state.ops) {
    BoundTiles::Op& bound_op = bound->ops[bound->num_ops++];
    bound_op = {op.tile, op.params, {}, data[op.output]};
    for (size_t k = 0; k < op.inputs.size(); ++k) bound_op.in[k] = data[op.inputs[k]];
  }
  call.run = &RunBoundTiles;
  return true;
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
  SlotViews slots(state, args);
  std::byte* buffers = args.workspace.data();
  void* const& reduced = slots.data()[state.reduce_slot];
  const int64_t length = state.length, tile = state.tile;
  if (final && length <= tile) {
    // Whole rows per tile.
    const auto [begin, end] = ShareOf(context, state.rows);
    const int64_t rows_per_tile = tile / length;
    for (int64_t r = begin; r < end; r += rows_per_tile) {
      const int64_t n = std::min(rows_per_tile, end - r);
      STABLERT_RETURN_IF_ERROR(ComputeTile(state, args, r * length, n * length, buffers, slots));
      const T* x = static_cast<const T*>(reduced);
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
      STABLERT_RETURN_IF_ERROR(ComputeTile(state, args, row * length + first, n, buffers, slots));
      acc.Add(static_cast<const T*>(reduced), n);
    }
    out[unit] = acc.Result();
  }
  return OkStatus();
}

// A step that only widens a dense f16/bf16 input to f32 and sums it (jnp.sum of half types):
// summed as it is widened (kernels/reduce_widened.h).
Status WidenedSumRun(const FusedState& state, const KernelContext& context, const KernelArgs& args) {
  const float start = state.segments == 1 ? args.inputs.back().as<const float>()[0] : -0.0f;
  SumWidenedRows(context, args.inputs[0].dtype == DType::kBF16, args.inputs[0].as<const uint16_t>(), state.rows,
                 state.length, state.segments, start, args.outputs.back().as<float>());
  return OkStatus();
}

bool IsWidenedSum(const FusedParams& params, const FusedState& state) {
  const FusedReduce& r = params.reduce[0];
  if (r.kernel != KernelKey("reduce_add", {DType::kF32}) || params.ops.size() != 1 || !params.output_slots.empty() ||
      state.num_inputs != 1 || state.place[0] != Place::kDenseInput)
    return false;
  const FusedOp& op = params.ops[0];
  return op.inputs == std::vector<int64_t>{0} && op.output == r.slot &&
         (op.kernel == KernelKey("convert", {DType::kBF16, DType::kF32}) ||
          op.kernel == KernelKey("convert", {DType::kF16, DType::kF32}));
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

// Replaces the sub-ops of add-rotate-xor chains (fused_arx.h) by one sub-op each. Run after
// the constant splats are known (a round's rotations must be plan constants).
void FindChains(const FusedParams& params, FusedState& state) {
  std::vector<ArxSlot> slots(state.place.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    const Place place = state.place[s];
    slots[s].uniform = place == Place::kSplat || place == Place::kConstantSplat || place == Place::kScalar;
    slots[s].scalar = place == Place::kScalar;
    slots[s].external = place == Place::kOutput || static_cast<int>(s) == state.reduce_slot;
    if (place == Place::kConstantSplat && state.bytes[s] == 4) {
      slots[s].constant = true;
      std::memcpy(&slots[s].value, state.constant_tiles[static_cast<size_t>(state.index[s])].data(), 4);
    }
  }
  if (!params.reduce.empty()) slots[static_cast<size_t>(params.reduce[0].slot)].external = true;
  std::vector<ArxChainOp> chains = FindArxChains(params, slots);
  if (chains.empty()) return;
  std::vector<FusedState::Op> ops;
  size_t next = 0;
  for (size_t c = 0; c < chains.size(); ++c) {
    for (; next < chains[c].first_op; ++next) ops.push_back(std::move(state.ops[next]));
    FusedState::Op op{nullptr, nullptr, nullptr, {}, static_cast<int>(chains[c].x1_out), static_cast<int>(c)};
    ops.push_back(std::move(op));
    next = chains[c].last_op + 1;
  }
  for (; next < state.ops.size(); ++next) ops.push_back(std::move(state.ops[next]));
  state.ops = std::move(ops);
  state.arx = std::move(chains);
  std::vector<bool> used(slots.size(), false);
  for (size_t s = 0; s < slots.size(); ++s)
    used[s] = state.place[s] == Place::kOutput || static_cast<int>(s) == state.reduce_slot ||
              (!params.reduce.empty() && static_cast<int64_t>(s) == params.reduce[0].slot);
  for (const FusedState::Op& op : state.ops) {
    for (int s : op.inputs) used[static_cast<size_t>(s)] = true;
    used[static_cast<size_t>(op.output)] = true;
  }
  for (const ArxChainOp& chain : state.arx)  // addends are read from their own storage (SlotViews)
    for (int64_t s : {chain.x0_in, chain.x1_in, chain.x0_out, chain.x1_out}) used[static_cast<size_t>(s)] = true;
  state.placed.clear();
  for (size_t s = 0; s < slots.size(); ++s)
    if (used[s]) state.placed.push_back(static_cast<int>(s));
}

// The vector function of a float binary sub-op ("add.f32"), if it may take a uniform
// operand (simd::BinaryScalar).
bool UniformBinary(const std::string& kernel, simd::BinaryFn& fn, bool& f64) {
  static constexpr std::pair<std::string_view, simd::BinaryFn> kOps[] = {
      {"add", simd::BinaryFn::kAdd}, {"subtract", simd::BinaryFn::kSub}, {"multiply", simd::BinaryFn::kMul},
      {"divide", simd::BinaryFn::kDiv}, {"maximum", simd::BinaryFn::kMax}, {"minimum", simd::BinaryFn::kMin}};
  for (const auto& [name, op] : kOps) {
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      if (kernel == KernelKey(name, {dtype})) {
        fn = op;
        f64 = dtype == DType::kF64;
        return true;
      }
    }
  }
  return false;
}

// Marks the float binary sub-ops with one uniform operand (a row broadcast or a splat) and
// the row broadcasts only they read (FusedState::scalar_only). Direct steps without chains.
void FindUniformOperands(const FusedParams& params, FusedState& state) {
  if (!state.arx.empty()) return;  // chains read their slots outside `inputs`
  const size_t slots = state.place.size();
  auto uniform = [&](int s) {
    const Place place = state.place[static_cast<size_t>(s)];
    return place == Place::kRowBroadcast || place == Place::kSplat || place == Place::kConstantSplat;
  };
  std::vector<int> readers(slots, 0), scalar_readers(slots, 0);
  for (const FusedState::Op& op : state.ops)
    for (int s : op.inputs) ++readers[static_cast<size_t>(s)];
  // Sub-ops keep their kernel keys in params.ops, in order, unless chains replaced some
  // (FindChains): match them by output slot.
  std::vector<const FusedOp*> by_output(slots, nullptr);
  for (const FusedOp& op : params.ops) by_output[static_cast<size_t>(op.output)] = &op;
  for (FusedState::Op& op : state.ops) {
    if (op.arx >= 0 || op.iota != nullptr || op.inputs.size() != 2) continue;
    const FusedOp* source = by_output[static_cast<size_t>(op.output)];
    if (source == nullptr || !UniformBinary(source->kernel, op.binary, op.f64)) continue;
    const bool u0 = uniform(op.inputs[0]), u1 = uniform(op.inputs[1]);
    if (u0 == u1) continue;  // neither, or both (left to the tile function)
    op.uniform = u0 ? 0 : 1;
    ++scalar_readers[static_cast<size_t>(op.inputs[static_cast<size_t>(op.uniform)])];
  }
  state.scalar_only.assign(slots, false);
  for (size_t s = 0; s < slots; ++s)
    state.scalar_only[s] = state.place[s] == Place::kRowBroadcast && readers[s] > 0 && readers[s] == scalar_readers[s];
}

StatusOr<PreparedStep> PrepareFused(const KernelArgs& args) {
  const auto& params = args.Params<FusedParams>();
  auto state = std::make_shared<FusedState>();
  STABLERT_RETURN_IF_ERROR(Layout(params, args.inputs, args.outputs.size(), *state));
  const KernelRegistry& registry = CpuKernels();
  for (const FusedOp& op : params.ops) {
    if (op.kernel.starts_with(kFusedIota)) {
      const auto* iota = op.params.As<FusedIotaParams>();
      const auto dtype = static_cast<DType>(params.slot_dtypes[static_cast<size_t>(op.output)]);
      if (iota == nullptr || !op.inputs.empty() || iota->size < 1 || iota->inner < 1 ||
          (dtype != DType::kS32 && dtype != DType::kU32 && dtype != DType::kS64 && dtype != DType::kU64) ||
          op.kernel != KernelKey(kFusedIota, {dtype}))
        return Malformed("sub-op '" + op.kernel + "' expected as an s32/u32/s64/u64 iota with size and inner >= 1");
      FusedState::Op resolved{nullptr, nullptr, nullptr, {}, static_cast<int>(op.output)};
      resolved.iota = iota;
      resolved.iota_dtype = dtype;
      state->ops.push_back(std::move(resolved));
      state->has_iota = true;
      continue;
    }
    const KernelRegistry::Entry* entry = registry.Lookup(op.kernel);
    if (entry == nullptr || !entry->strided_inputs || op.kernel.rfind("fused", 0) == 0)
      return Malformed("sub-op '" + op.kernel + "' is not an elementwise kernel");
    if (entry->params != op.params.type())
      return Malformed("sub-op '" + op.kernel + "' takes " + std::string(entry->params ? entry->params->family : "no") +
                       " parameters, not " + std::string(op.params.family()));
    if (op.inputs.empty() || op.inputs.size() > 3) return Malformed("sub-op with 0 or more than 3 inputs");
    FusedState::Op resolved{entry->fn, entry->tile, op.params.get(), {}, static_cast<int>(op.output)};
    for (int64_t s : op.inputs) resolved.inputs.push_back(static_cast<int>(s));
    state->ops.push_back(std::move(resolved));
  }
  state->direct = std::all_of(state->ops.begin(), state->ops.end(),
                              [](const FusedState::Op& op) { return op.tile != nullptr || op.iota != nullptr; }) &&
                  std::find(state->place.begin(), state->place.end(), Place::kScalar) == state->place.end();
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
  FindChains(params, *state);
  if (state->direct) FindUniformOperands(params, *state);
  if (params.num_elements >= kPrefetchFrom)
    for (const int s : state->placed)
      if (state->place[static_cast<size_t>(s)] == Place::kDenseInput) state->prefetched.push_back(s);
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
    if (IsWidenedSum(params, *state)) state->reduce = &WidenedSumRun;
  }
  return PreparedStep(std::move(state));
}

int64_t FusedWorkspace(const KernelArgs& args) {
  FusedState state;
  if (!Layout(args.Params<FusedParams>(), args.inputs, args.outputs.size(), state).ok()) return 0;
  return state.num_buffers * state.buffer_bytes;
}

// ---- "fused_rows": a sequence of steps over blocks of rows ----

constexpr int64_t kRowsBlockBudget = 384 * 1024;  // bytes a block's full values may touch (L2: 1 MiB)
constexpr int64_t kMinBlocks = 8;                 // blocks per step at least, where rows allow

constexpr int64_t kRowBroadcastStrides[2] = {1, 0};
constexpr int64_t kColumnStrides[2] = {0, 1};
constexpr int64_t kSplatStrides[2] = {0, 0};

struct RowsState {
  struct Sub {
    KernelFn fn = nullptr;
    std::vector<int> inputs, outputs;
    KernelParams params[2];  // for a full block and for the last block
    KernelState state[2];
  };
  std::vector<Sub> subs;
  std::vector<RowsForm> form;
  std::vector<int64_t> bytes;
  std::vector<DType> dtype;
  std::vector<int> input, of, output;  // per value: step input, broadcast value, step output (-1: none)
  std::vector<int64_t> offset;         // per internal computed value: its buffer in the workspace
  int64_t rows = 0, length = 0, block = 1, blocks = 1, last = 1;
  int64_t sub_workspace = 0;           // workspace offset of the sub-steps' own workspace
  int64_t workspace = 0;
  int64_t full_dims[2][2] = {}, row_dims[2][1] = {};
};

// Dense, or strided only along dims of extent 1.
bool DenseEquivalent(const BufferView& view) {
  int64_t expect = 1;
  for (size_t d = view.strides.size(); d-- > 0;) {
    if (view.dims[d] != 1 && view.strides[d] != expect) return false;
    expect *= view.dims[d];
  }
  return true;
}

Status MalformedRows(const std::string& what) { return InvalidArgument("fused_rows step: " + what); }

// The views of every value for the block of `count` rows from `r0` (`size`: 0 for a full
// block, 1 for the last one); `workspace` null at prepare time.
void BlockViews(const RowsState& st, const KernelArgs& args, int64_t r0, int size, std::byte* workspace,
                std::vector<BufferView>& views) {
  const int64_t count = size == 0 ? st.block : st.last;
  const std::span<const int64_t> full(st.full_dims[size], 2), row(st.row_dims[size], 1);
  for (size_t v = 0; v < views.size(); ++v) {
    BufferView& view = views[v];
    const int in = st.input[v], out = st.output[v];
    const auto bytes = st.bytes[v];
    auto base = [&](int64_t element) -> void* {
      void* data = in >= 0 ? args.inputs[static_cast<size_t>(in)].data
                           : out >= 0 ? args.outputs[static_cast<size_t>(out)].data : nullptr;
      if (data != nullptr) return static_cast<std::byte*>(data) + element * bytes;
      return workspace == nullptr ? nullptr : workspace + st.offset[v];
    };
    view.strides = {};
    view.dtype = st.dtype[v];
    switch (st.form[v]) {
      case RowsForm::kFull:
        view.data = base(r0 * st.length), view.dims = full, view.num_elements = count * st.length;
        break;
      case RowsForm::kRow:
        view.data = base(r0), view.dims = row, view.num_elements = count;
        break;
      case RowsForm::kRowBroadcast:
        view.data = st.of[v] >= 0 ? views[static_cast<size_t>(st.of[v])].data : base(r0);
        view.dims = full, view.num_elements = count * st.length, view.strides = kRowBroadcastStrides;
        break;
      case RowsForm::kColumn:
        view.data = args.inputs[static_cast<size_t>(in)].data;
        view.dims = full, view.num_elements = count * st.length, view.strides = kColumnStrides;
        break;
      case RowsForm::kScalar:
        view = args.inputs[static_cast<size_t>(in)];
        break;
      case RowsForm::kSplatFull:
        view.data = args.inputs[static_cast<size_t>(in)].data;
        view.dims = full, view.num_elements = count * st.length, view.strides = kSplatStrides;
        break;
      case RowsForm::kSplatRow:
        view.data = args.inputs[static_cast<size_t>(in)].data;
        view.dims = row, view.num_elements = count, view.strides = std::span<const int64_t>(kSplatStrides, 1);
        break;
    }
  }
}

// A sub-step's parameters for a block of `count` rows.
KernelParams BlockParams(const FusedRowsStep& step, int64_t rows, int64_t length, int64_t count) {
  const auto* fused = step.params.As<FusedParams>();
  if (fused == nullptr) return step.params;
  FusedParams p = *fused;
  p.num_elements = p.num_elements == rows * length ? count * length : count;
  for (FusedReduce& r : p.reduce) r.rows = count;
  return p;
}

StatusOr<std::shared_ptr<RowsState>> RowsLayout(const KernelArgs& args, bool prepare_subs) {
  const auto& params = args.Params<FusedRowsParams>();
  auto st = std::make_shared<RowsState>();
  st->rows = params.rows, st->length = params.length;
  if (st->rows < 1 || st->length < 1) return MalformedRows("no rows");
  const size_t n = params.values.size();
  st->form.resize(n), st->bytes.resize(n), st->dtype.resize(n), st->input.assign(n, -1), st->of.assign(n, -1), st->output.assign(n, -1);
  st->offset.assign(n, -1);
  std::vector<bool> computed(n, false);
  for (size_t j = 0; j < params.outputs.size(); ++j) {
    const int64_t v = params.outputs[j];
    if (v < 0 || static_cast<size_t>(v) >= n || st->output[v] >= 0) return MalformedRows("bad output value");
    st->output[v] = static_cast<int>(j);
  }
  if (params.outputs.size() != args.outputs.size()) return MalformedRows("outputs do not match its parameters");
  int64_t per_row = 0;  // bytes of full values per row
  for (size_t v = 0; v < n; ++v) {
    const FusedRowsValue& value = params.values[v];
    const auto dtype = static_cast<DType>(value.dtype);
    if (!FusibleDType(dtype) || value.form < 0 || value.form > static_cast<int64_t>(RowsForm::kSplatRow))
      return MalformedRows("value of an unsupported type or form");
    st->form[v] = static_cast<RowsForm>(value.form);
    st->bytes[v] = DTypeByteSize(dtype);
    st->dtype[v] = dtype;
    st->input[v] = static_cast<int>(value.input);
    st->of[v] = static_cast<int>(value.of);
    const RowsForm form = st->form[v];
    if (value.input >= 0) {
      if (static_cast<size_t>(value.input) >= args.inputs.size() || st->output[v] >= 0 ||
          args.inputs[static_cast<size_t>(value.input)].dtype != dtype)
        return MalformedRows("bad input value");
      const BufferView& in = args.inputs[static_cast<size_t>(value.input)];
      const int64_t want = form == RowsForm::kFull ? st->rows * st->length
                           : form == RowsForm::kRow ? st->rows : in.num_elements;
      if (in.num_elements != want || (form == RowsForm::kScalar && in.num_elements != 1))
        return MalformedRows("input of another element count");
      if ((form == RowsForm::kFull || form == RowsForm::kRow) && !DenseEquivalent(in))
        return MalformedRows("input expected dense");
      if ((form == RowsForm::kSplatFull || form == RowsForm::kSplatRow) && !AllZero(in.strides))
        return MalformedRows("splat input expected with zero strides");
      if ((form == RowsForm::kRowBroadcast || form == RowsForm::kColumn) && in.num_elements != st->rows * st->length)
        return MalformedRows("broadcast input expected as a [rows, length] view");
      if (form == RowsForm::kFull) per_row += st->bytes[v] * st->length;
    } else if (form == RowsForm::kRowBroadcast) {
      if (value.of < 0 || static_cast<size_t>(value.of) >= v || st->form[value.of] != RowsForm::kRow ||
          params.values[value.of].dtype != value.dtype)
        return MalformedRows("row broadcast of no earlier row value");
    } else if (form != RowsForm::kFull && form != RowsForm::kRow) {
      return MalformedRows("computed value of an input form");
    }
  }
  // Sub-steps: inputs computed before, each computed value written once.
  for (const FusedRowsStep& step : params.steps) {
    for (int64_t v : step.inputs) {
      if (v < 0 || static_cast<size_t>(v) >= n) return MalformedRows("sub-step reads no value");
      const int64_t src = st->of[v] >= 0 ? st->of[v] : v;
      if (st->input[v] < 0 && !computed[src]) return MalformedRows("sub-step reads a value not computed before it");
    }
    if (step.outputs.empty()) return MalformedRows("sub-step without outputs");
    for (int64_t v : step.outputs) {
      if (v < 0 || static_cast<size_t>(v) >= n || computed[v] || st->input[v] >= 0 ||
          (st->form[v] != RowsForm::kFull && st->form[v] != RowsForm::kRow))
        return MalformedRows("sub-step writes an input or a value written before");
      computed[v] = true;
    }
  }
  for (size_t v = 0; v < n; ++v)
    if (st->input[v] < 0 && (st->form[v] == RowsForm::kFull || st->form[v] == RowsForm::kRow) && !computed[v])
      return MalformedRows("value computed by no sub-step");
  for (size_t v = 0; v < n; ++v)
    if (st->input[v] < 0 && st->form[v] == RowsForm::kFull) per_row += st->bytes[v] * st->length;
  // Rows per block: the block's full values within the budget, and enough blocks to share.
  int64_t block = std::max<int64_t>(1, kRowsBlockBudget / std::max<int64_t>(1, per_row));
  block = std::min(block, std::max<int64_t>(1, st->rows / kMinBlocks));
  st->block = std::min(block, st->rows);
  st->blocks = (st->rows + st->block - 1) / st->block;
  st->last = st->rows - (st->blocks - 1) * st->block;
  for (int size = 0; size < 2; ++size) {
    const int64_t count = size == 0 ? st->block : st->last;
    st->full_dims[size][0] = count, st->full_dims[size][1] = st->length, st->row_dims[size][0] = count;
  }
  // Internal buffers, one per computed value no output holds.
  int64_t offset = 0;
  for (size_t v = 0; v < n; ++v)
    if (st->input[v] < 0 && st->output[v] < 0 && (st->form[v] == RowsForm::kFull || st->form[v] == RowsForm::kRow)) {
      st->offset[v] = offset;
      const int64_t elements = st->form[v] == RowsForm::kFull ? st->block * st->length : st->block;
      offset += (elements * st->bytes[v] + 63) / 64 * 64;
    }
  st->sub_workspace = offset;
  // Sub-steps at both block sizes.
  const KernelRegistry& registry = CpuKernels();
  int64_t sub_bytes = 0;
  std::vector<BufferView> views(n);
  for (const FusedRowsStep& step : params.steps) {
    const KernelRegistry::Entry* entry = registry.Lookup(step.kernel);
    if (entry == nullptr || step.kernel.rfind("fused_rows", 0) == 0)
      return MalformedRows("no kernel '" + step.kernel + "'");
    if (entry->params != step.params.type()) return MalformedRows("sub-step '" + step.kernel + "' parameters");
    if (const auto* fused = step.params.As<FusedParams>())
      for (const FusedOp& op : fused->ops)
        if (op.kernel.starts_with(kFusedIota))
          return MalformedRows("fused sub-step with a folded iota (its blocks would restart the index)");
    RowsState::Sub sub;
    sub.fn = entry->fn;
    for (int64_t v : step.inputs) {
      if (!entry->strided_inputs && st->form[v] != RowsForm::kFull && st->form[v] != RowsForm::kRow &&
          st->form[v] != RowsForm::kScalar)
        return MalformedRows("sub-step '" + step.kernel + "' takes dense inputs only");
      sub.inputs.push_back(static_cast<int>(v));
    }
    for (int64_t v : step.outputs) sub.outputs.push_back(static_cast<int>(v));
    for (int size = 0; size < 2; ++size) {
      const int64_t count = size == 0 ? st->block : st->last;
      sub.params[size] = BlockParams(step, st->rows, st->length, count);
      BlockViews(*st, args, 0, size, nullptr, views);
      std::vector<BufferView> in, out;
      for (int v : sub.inputs) in.push_back(views[static_cast<size_t>(v)]);
      for (int v : sub.outputs) {
        out.push_back(views[static_cast<size_t>(v)]);
        out.back().data = nullptr;
      }
      for (size_t k = 0; k < in.size(); ++k)  // only constants' data at prepare time
        if (st->form[sub.inputs[k]] != RowsForm::kScalar && st->form[sub.inputs[k]] != RowsForm::kSplatFull &&
            st->form[sub.inputs[k]] != RowsForm::kSplatRow)
          in[k].data = nullptr;
      KernelArgs sub_args{in, out, sub.params[size].get()};
      if (entry->workspace != nullptr) sub_bytes = std::max(sub_bytes, (entry->workspace(sub_args) + 63) / 64 * 64);
      if (prepare_subs && entry->prepare != nullptr) {
        auto prepared = entry->prepare(sub_args);
        if (!prepared.ok()) return prepared.status().WithPrefix("fused_rows sub-step '" + step.kernel + "'");
        sub.state[size] = std::move(prepared->state);
      }
    }
    st->subs.push_back(std::move(sub));
  }
  st->workspace = offset + sub_bytes;
  return st;
}

Status FusedRowsKernel(const KernelContext& context, const KernelArgs& args) {
  const auto& st = *static_cast<const RowsState*>(args.state);
  const auto [begin, end] = ShareOf(context, st.blocks);
  std::vector<BufferView> views(st.form.size()), in, out;
  std::byte* workspace = args.workspace.data();
  const std::span<std::byte> sub_workspace =
      args.workspace.empty() ? std::span<std::byte>() : args.workspace.subspan(static_cast<size_t>(st.sub_workspace));
  const KernelContext one_call;
  for (int64_t b = begin; b < end; ++b) {
    const int size = b == st.blocks - 1 && st.last != st.block ? 1 : 0;
    BlockViews(st, args, b * st.block, size, workspace, views);
    for (const RowsState::Sub& sub : st.subs) {
      in.clear(), out.clear();
      for (int v : sub.inputs) in.push_back(views[static_cast<size_t>(v)]);
      for (int v : sub.outputs) out.push_back(views[static_cast<size_t>(v)]);
      KernelArgs sub_args{in, out, sub.params[size].get(), sub.state[size].get(), sub_workspace};
      STABLERT_RETURN_IF_ERROR(sub.fn(one_call, sub_args));
    }
  }
  return OkStatus();
}

StatusOr<PreparedStep> PrepareFusedRows(const KernelArgs& args) {
  auto st = RowsLayout(args, true);
  if (!st.ok()) return st.status();
  return PreparedStep(std::shared_ptr<const void>(std::move(*st)));
}

int64_t FusedRowsWorkspace(const KernelArgs& args) {
  auto st = RowsLayout(args, false);
  return st.ok() ? (*st)->workspace : 0;
}

}  // namespace

Status RegisterFusedKernels(KernelRegistry& registry) {
  STABLERT_RETURN_IF_ERROR(registry.RegisterTakingViews<FusedParams>("fused", &FusedKernel, &PrepareFused));
  STABLERT_RETURN_IF_ERROR(registry.DeclareBind("fused", &BindFused));
  STABLERT_RETURN_IF_ERROR(registry.DeclareWorkspace("fused", &FusedWorkspace));
  STABLERT_RETURN_IF_ERROR(
      registry.RegisterTakingViews<FusedRowsParams>("fused_rows", &FusedRowsKernel, &PrepareFusedRows));
  return registry.DeclareWorkspace("fused_rows", &FusedRowsWorkspace);
}

}  // namespace stablert::kernels
