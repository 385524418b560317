#include "kernels/onednn_matmul.h"

#include <algorithm>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/dot_params.h"
#include "kernels/onednn_common.h"

namespace stablert::kernels::onednn {
namespace {

// The memory objects of one call's arguments, pointed at that call's buffers (a memory
// object only holds a pointer: rebinding it allocates nothing, where creating one costs
// two allocations), in the primitive's argument order: lhs, rhs, out, the post-ops'
// inputs, the scratchpad.
struct BoundArguments {
  std::vector<dnnl::memory> memories;
  std::vector<dnnl_exec_arg_t> arguments;
};

// One primitive, for one tile size.
struct TilePrimitive {
  dnnl::memory::desc lhs, rhs, out;
  std::vector<dnnl::memory::desc> post_inputs;  // one per binary epilogue op
  int post_op_base = 0;
  dnnl::matmul primitive;
  dnnl::memory::desc scratchpad;
  size_t scratchpad_bytes = 0;
  // Argument sets not in use: a call takes one (or makes one) and returns it, so calls on
  // several threads never share one.
  std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();
  mutable std::vector<std::unique_ptr<BoundArguments>> idle;

  std::unique_ptr<BoundArguments> Take() const {
    {
      std::lock_guard<std::mutex> lock(*mutex);
      if (!idle.empty()) {
        std::unique_ptr<BoundArguments> bound = std::move(idle.back());
        idle.pop_back();
        return bound;
      }
    }
    auto bound = std::make_unique<BoundArguments>();
    const dnnl::engine& engine = Engine();
    const auto add = [&](int argument, const dnnl::memory::desc& desc) {
      bound->memories.emplace_back(desc, engine, nullptr);
      bound->arguments.push_back({argument, bound->memories.back().get()});
    };
    bound->memories.reserve(4 + post_inputs.size());
    add(DNNL_ARG_SRC, lhs);
    add(DNNL_ARG_WEIGHTS, rhs);
    add(DNNL_ARG_DST, out);
    for (size_t i = 0; i < post_inputs.size(); ++i)
      add(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op_base + static_cast<int>(i)) | DNNL_ARG_SRC_1, post_inputs[i]);
    if (scratchpad_bytes > 0) add(DNNL_ARG_SCRATCHPAD, scratchpad);
    return bound;
  }
  void Return(std::unique_ptr<BoundArguments> bound) const {
    std::lock_guard<std::mutex> lock(*mutex);
    idle.push_back(std::move(bound));
  }
};

// One product of a tile: over k values [k0, k0 + kn) (all of k unless the contraction is
// blocked), with its primitive.
struct KStep {
  int64_t lhs_offset = 0, rhs_offset = 0;  // elements into each buffer, k0 included
  size_t primitive = 0;
};

// A tile: batches [b0, b0 + batch), rows [m0, m0 + m), columns [n0, n0 + n) of the output,
// computed by its steps in order (each after the first adds to the output).
struct Tile {
  int64_t out_offset = 0;  // elements into the output
  int64_t b0 = 0, bn = 0, m0 = 0, mn = 0, n0 = 0, nn = 0;  // the output region
  std::vector<KStep> steps;
};

struct MatmulState {
  int64_t batch = 0, k = 0, n = 0;
  int64_t rhs_row = 0;  // > 0: the primitives read a copy of rhs with rows this far apart
  std::vector<epilogue::Op> epilogue;
  size_t post_ops = 0;  // epilogue ops oneDNN applies (the rest: epilogue::Apply per tile)
  int64_t m = 0;
  std::vector<TilePrimitive> primitives;
  std::vector<Tile> tiles;
  size_t element_size = 0;
  std::string implementation;
};

// Thrown inside PrepareMatmul where oneDNN offers only its reference implementation.
struct UnimplementedProduct {
  std::string message;
};

// Which dimension the tiles slice, and into how many parts of `chunk` (the last may be
// shorter).
struct Split {
  enum Dim { kNone, kBatch, kM, kN } dim = kNone;
  int64_t chunk = 0;
  int parts = 1;
};

// The length of the contraction blocks a product's tiles run in (0: one block).
int64_t KBlockOf(const MatmulShape& s) {
  const double macs = static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.n) *
                      static_cast<double>(s.k);
  if (s.dtype != DType::kF32 || s.k < kMinBlockedK || macs < kMinKBlockedMacs || OnGemmJit(s)) return 0;
  return kKBlock;
}

Split ChooseSplit(const MatmulShape& s, int threads) {
  const double macs = static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.n) *
                      static_cast<double>(s.k);
  Split split;
  if (threads <= 1 || macs < kMinSplitMacs) return split;
  // Cut large products finer than one tile per thread, so that a thread that is descheduled
  // (the machine is shared) holds back a small part only. Each tile of an M or N split reads
  // all of the other operand, so tiles stay large.
  // Products in contraction blocks: four per thread (each block's rows of rhs then serve fewer
  // rows of lhs between two passes over the tile's output).
  const int wanted = KBlockOf(s) > 0 ? 4 * threads : macs >= 1 << 28 && !OnGemmJit(s) ? 2 * threads : threads;
  // Granularity: a batch is indivisible; rows and columns go in multiples of the vector width.
  auto cut = [&](Split::Dim dim, int64_t extent, int64_t granule) {
    int64_t chunk = (extent + wanted - 1) / wanted;
    chunk = std::max(granule, (chunk + granule - 1) / granule * granule);
    const auto parts = static_cast<int>((extent + chunk - 1) / chunk);
    if (parts > 1) split = Split{dim, chunk, parts};
  };
  if (s.batch >= threads) cut(Split::kBatch, s.batch, 1);
  else if (s.m >= s.n && !(OnGemmJit(s) && macs >= kMinGemmJitNSplitMacs)) cut(Split::kM, s.m, 16);
  else cut(Split::kN, s.n, 64);
  return split;
}

// Which part of a blocked contraction a primitive computes: whether it adds to the output
// (a sum post-op) and whether the epilogue's post-ops follow.
struct StepRole {
  bool sum;
  bool epilogue;
  auto operator<=>(const StepRole&) const = default;
};

// Whether the CPU's vendor string is Intel's.
bool IntelCpu() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::memcmp(vendor, "GenuineIntel", 12) == 0;
#else
  return false;
#endif
}

// The descriptor of `product` with `attr`: on the gemm:jit driver when `gemm_jit` and oneDNN
// has it for these operands, else oneDNN's first choice.
dnnl::matmul::primitive_desc MatmulDescriptor(const dnnl::matmul::desc& product, const dnnl::primitive_attr& attr,
                                              bool gemm_jit) {
  if (gemm_jit) {
    dnnl_primitive_desc_iterator_t iterator = nullptr;
    if (dnnl_primitive_desc_iterator_create(&iterator, &product.data, attr.get(), Engine().get(), nullptr) ==
        dnnl_success) {
      std::unique_ptr<dnnl_primitive_desc_iterator, decltype(&dnnl_primitive_desc_iterator_destroy)> owned(
          iterator, &dnnl_primitive_desc_iterator_destroy);
      do {
        // The iterator hands out a descriptor the caller destroys; the C++ object holds a clone.
        std::unique_ptr<dnnl_primitive_desc, decltype(&dnnl_primitive_desc_destroy)> candidate(
            dnnl_primitive_desc_iterator_fetch(iterator), &dnnl_primitive_desc_destroy);
        if (candidate == nullptr) break;
        dnnl::matmul::primitive_desc descriptor(candidate.get());
        if (std::string(descriptor.impl_info_str()).rfind("gemm:jit", 0) == 0) return descriptor;
      } while (dnnl_primitive_desc_iterator_next(iterator) == dnnl_success);
    }
  }
  return dnnl::matmul::primitive_desc(product, attr, Engine());
}

}  // namespace

bool F32OnGemmJit() {
  static const bool on_gemm_jit = [] {
    try {
      OneDnnThreadScope single;
      using dims = dnnl::memory::dims;
      const auto f32 = dnnl::memory::data_type::f32;
      const dnnl::memory::desc a(dims{1, 256, 512}, f32, dims{256 * 512, 512, 1});
      const dnnl::memory::desc b(dims{1, 512, 512}, f32, dims{512 * 512, 512, 1});
      const dnnl::memory::desc c(dims{1, 256, 512}, f32, dims{256 * 512, 512, 1});
      dnnl::matmul::primitive_desc descriptor(dnnl::matmul::desc(a, b, c), Engine());
      return std::string(descriptor.impl_info_str()).rfind("gemm:jit", 0) == 0;
    } catch (const std::exception&) {
      return false;
    }
  }();
  return on_gemm_jit;
}

bool OnGemmJit(const MatmulShape& shape) {
  if (shape.dtype != DType::kF32) return false;
  if (F32OnGemmJit()) return true;
  static const bool intel = IntelCpu();
  const double macs = static_cast<double>(shape.batch) * static_cast<double>(shape.m) *
                      static_cast<double>(shape.n) * static_cast<double>(shape.k);
  return intel && shape.batch == 1 && macs >= kMinGemmJitMacs;
}

bool Bf16MatmulNative() {
  static const bool native = [] {
    try {
      OneDnnThreadScope single;
      using dims = dnnl::memory::dims;
      const auto bf16 = dnnl::memory::data_type::bf16;
      const dnnl::memory::desc a(dims{1, 256, 256}, bf16, dims{256 * 256, 256, 1});
      dnnl::matmul::primitive_desc descriptor(dnnl::matmul::desc(a, a, a), Engine());
      return std::string(descriptor.impl_info_str()).find("ref") == std::string::npos;
    } catch (const std::exception&) {
      return false;
    }
  }();
  return native;
}

int64_t PaddedRhsBytes(const MatmulShape& shape) {
  if (shape.dtype != DType::kF32 || shape.rhs_bnk || shape.n % kBadRhsRow != 0 || shape.n <= 0 || shape.k <= 0 ||
      shape.batch <= 0 || !F32OnGemmJit())
    return 0;
  return shape.batch * shape.k * (shape.n + kRhsRowPad) * static_cast<int64_t>(sizeof(float));
}

MatmulShape DotShape(const KernelArgs& args) {
  MatmulShape shape;
  const BufferView& lhs = args.inputs[0];
  const BufferView& out = args.outputs[0];
  shape.dtype = out.dtype;
  shape.lhs_bkm = args.Params<DotParams>().lhs_is_bkm;
  shape.rhs_bnk = args.Params<DotParams>().rhs_is_bnk;
  shape.batch = out.dims[0];
  shape.m = out.dims[1];
  shape.n = out.dims[2];
  shape.k = shape.lhs_bkm ? lhs.dims[1] : lhs.dims[2];
  shape.accumulate = args.inputs.size() > 2;
  return shape;
}

int TileCount(const MatmulShape& shape, int threads) { return ChooseSplit(shape, threads).parts; }

int64_t ContractionBlock(const MatmulShape& shape) { return KBlockOf(shape); }

StatusOr<KernelState> PrepareMatmul(const MatmulShape& shape, int threads) {
  auto type = DnnlType(shape.dtype);
  if (!type.ok()) return type.status();
  const int64_t b = shape.batch, m = shape.m, n = shape.n, k = shape.k;
  if (b <= 0 || m <= 0 || n <= 0 || k <= 0) return Unimplemented("oneDNN matmul of an empty product");
  const Split split = ChooseSplit(shape, threads > 0 ? threads : CoreBudget());
  try {
    using dims = dnnl::memory::dims;
    OneDnnThreadScope single;
    auto state = std::make_shared<MatmulState>();
    state->element_size = static_cast<size_t>(DTypeByteSize(shape.dtype));
    state->epilogue = shape.epilogue;
    state->post_ops = epilogue::LibraryPrefix(shape.epilogue);
    state->m = m;
    state->batch = b, state->k = k, state->n = n;
    if (PaddedRhsBytes(shape) > 0) state->rhs_row = n + kRhsRowPad;
    // Strides of the whole buffers (rhs: of its padded copy, if any); logical dims are
    // [B,M,K] x [B,K,N] -> [B,M,N].
    const int64_t rhs_row = state->rhs_row > 0 ? state->rhs_row : n;
    const dims lhs_strides = shape.lhs_bkm ? dims{m * k, 1, m} : dims{m * k, k, 1};
    const dims rhs_strides = shape.rhs_bnk ? dims{k * n, 1, k} : dims{k * rhs_row, rhs_row, 1};
    const dims out_strides = {m * n, n, 1};
    const int64_t k_block = KBlockOf(shape);
    const bool gemm_jit = OnGemmJit(shape);
    std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, StepRole>, size_t> by_size;
    // The primitive for a tile's product over kn values of k in `role`, made once per size.
    const auto primitive_for = [&](int64_t bn, int64_t mn, int64_t nn, int64_t kn, StepRole role) -> size_t {
      auto [it, added] = by_size.try_emplace({bn, mn, nn, kn, role}, state->primitives.size());
      if (!added) return it->second;
      TilePrimitive p;
      p.post_op_base = role.sum ? 1 : 0;
      // A single-batch tile's batch stride is free: give it the dense one, so that a tile
      // of whole rows is a plain matrix. oneDNN 2.6 runs plain f32 matrices on its brgemm
      // kernels (a 64 KB - 256 KB scratchpad from the thread's scratch), other strides on
      // its gemm:jit driver, which allocates packing buffers of up to tens of MB per call.
      const auto single = [&](dims strides, int64_t rows, int64_t cols) {
        if (bn == 1) strides[0] = rows * cols;
        return strides;
      };
      p.lhs = dnnl::memory::desc(dims{bn, mn, kn}, *type, single(lhs_strides, mn, k));
      p.rhs = dnnl::memory::desc(dims{bn, kn, nn}, *type, single(rhs_strides, k, rhs_row));
      p.out = dnnl::memory::desc(dims{bn, mn, nn}, *type, single(out_strides, mn, nn));
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // from the running thread's scratch
      dnnl::post_ops post;
      if (role.sum) post.append_sum(1.0f);  // dst += product: the addend is already in dst
      for (size_t i = 0; role.epilogue && i < state->post_ops; ++i) {
        const epilogue::Op& op = shape.epilogue[i];
        dnnl::memory::desc y;
        switch (op.operand) {
          case epilogue::Operand::kScalar: y = dnnl::memory::desc(dims{1, 1, 1}, *type, dims{1, 1, 1}); break;
          case epilogue::Operand::kRow: y = dnnl::memory::desc(dims{1, 1, nn}, *type, dims{nn, nn, 1}); break;
          default: y = p.out; break;  // the whole output's layout
        }
        const dnnl::algorithm algorithm = op.op == EpilogueOp::kAdd        ? dnnl::algorithm::binary_add
                                          : op.op == EpilogueOp::kMultiply ? dnnl::algorithm::binary_mul
                                          : op.op == EpilogueOp::kSubtract ? dnnl::algorithm::binary_sub
                                                                           : dnnl::algorithm::binary_div;
        post.append_binary(algorithm, y);
        p.post_inputs.push_back(y);
      }
      if (post.len() > 0) attr.set_post_ops(post);
      const dnnl::matmul::primitive_desc descriptor =
          MatmulDescriptor(dnnl::matmul::desc(p.lhs, p.rhs, p.out), attr, gemm_jit);
      std::string implementation = descriptor.impl_info_str();
      // The reference implementation is a plain loop nest, slower than StableRT's own.
      if (implementation.find("ref") != std::string::npos)
        throw UnimplementedProduct{"oneDNN has only its reference matmul for " + std::string(DTypeName(shape.dtype)) +
                                   (shape.epilogue.empty() ? "" : " with this epilogue")};
      if (state->implementation.empty()) state->implementation = implementation;
      p.scratchpad = descriptor.scratchpad_desc();
      p.scratchpad_bytes = p.scratchpad.get_size();
      p.primitive = dnnl::matmul(descriptor);
      state->primitives.push_back(std::move(p));
      return it->second;
    };
    for (int part = 0; part < split.parts; ++part) {
      int64_t b0 = 0, bn = b, m0 = 0, mn = m, n0 = 0, nn = n;
      const int64_t begin = part * split.chunk;
      switch (split.dim) {
        case Split::kNone: break;
        case Split::kBatch: b0 = begin, bn = std::min(split.chunk, b - begin); break;
        case Split::kM: m0 = begin, mn = std::min(split.chunk, m - begin); break;
        case Split::kN: n0 = begin, nn = std::min(split.chunk, n - begin); break;
      }
      Tile tile;
      tile.out_offset = b0 * out_strides[0] + m0 * out_strides[1] + n0;
      tile.b0 = b0, tile.bn = bn, tile.m0 = m0, tile.mn = mn, tile.n0 = n0, tile.nn = nn;
      const int64_t block = k_block > 0 ? k_block : k;
      for (int64_t k0 = 0; k0 < k; k0 += block) {
        const int64_t kn = std::min(block, k - k0);
        const StepRole role{k0 > 0 || shape.accumulate, k0 + kn == k};
        KStep step;
        step.lhs_offset = b0 * lhs_strides[0] + m0 * lhs_strides[1] + k0 * lhs_strides[2];
        step.rhs_offset = b0 * rhs_strides[0] + n0 * rhs_strides[2] + k0 * rhs_strides[1];
        step.primitive = primitive_for(bn, mn, nn, kn, role);
        tile.steps.push_back(step);
      }
      state->tiles.push_back(std::move(tile));
    }
    return KernelState(std::move(state));
  } catch (const UnimplementedProduct& unimplemented) {
    return Unimplemented(unimplemented.message);
  } catch (const dnnl::error& error) {
    if (error.status == dnnl_unimplemented)
      return Unimplemented("oneDNN has no matmul for " + std::string(DTypeName(shape.dtype)) + " on this CPU");
    return FromDnnlError(error, "matmul creation");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory creating a oneDNN matmul");
  } catch (const std::exception& error) {
    return Internal(std::string("oneDNN matmul creation failed: ") + error.what());
  }
}

Status RunMatmul(const void* state_ptr, const KernelArgs& args) {
  const auto& state = *static_cast<const MatmulState*>(state_ptr);
  auto* lhs_base = static_cast<char*>(args.inputs[0].data);
  auto* rhs_base = static_cast<char*>(args.inputs[1].data);
  if (state.rhs_row > 0) {
    // The padded copy of rhs the primitives read (PaddedRhsBytes).
    const auto bytes = static_cast<size_t>(state.batch * state.k * state.rhs_row) * sizeof(float);
    float* copy;
    if (args.workspace.size() >= bytes) {
      copy = reinterpret_cast<float*>(args.workspace.data());
    } else {
      struct Free {
        void operator()(void* p) const { std::free(p); }
      };
      thread_local std::unique_ptr<void, Free> buffer;
      thread_local size_t capacity = 0;
      if (bytes > capacity) {
        buffer.reset(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
        capacity = buffer == nullptr ? 0 : bytes;
        if (buffer == nullptr) return ResourceExhausted("out of memory for a oneDNN matmul's rhs copy");
      }
      copy = static_cast<float*>(buffer.get());
    }
    const auto* rhs = reinterpret_cast<const float*>(rhs_base);
    for (int64_t row = 0; row < state.batch * state.k; ++row)
      std::memcpy(copy + row * state.rhs_row, rhs + row * state.n, static_cast<size_t>(state.n) * sizeof(float));
    rhs_base = reinterpret_cast<char*>(copy);
  }
  auto* out_base = static_cast<char*>(args.outputs[0].data);
  // One product of a tile on its primitive; the epilogue's post-op inputs if it takes them.
  const auto run_step = [&](const Tile& tile, const KStep& step) {
    const TilePrimitive& p = state.primitives[step.primitive];
    const auto size = static_cast<int64_t>(state.element_size);
    std::unique_ptr<BoundArguments> bound = p.Take();
    // Same order as TilePrimitive::Take: lhs, rhs, out, post-op inputs, scratchpad.
    size_t slot = 0;
    const auto bind = [&](void* data) { bound->memories[slot++].set_data_handle(data); };
    bind(lhs_base + step.lhs_offset * size);
    bind(rhs_base + step.rhs_offset * size);
    bind(out_base + tile.out_offset * size);
    for (size_t i = 0; i < p.post_inputs.size(); ++i) {
      const epilogue::Op& op = state.epilogue[i];
      auto* y = static_cast<char*>(args.inputs[static_cast<size_t>(op.input)].data);
      if (op.operand == epilogue::Operand::kRow) y += tile.n0 * size;
      else if (op.operand == epilogue::Operand::kFull) y += tile.out_offset * size;
      bind(y);
    }
    if (p.scratchpad_bytes > 0) bind(ThreadScratch(p.scratchpad_bytes));
    dnnl::stream& stream = ThreadStream();
    const dnnl_status_t status = dnnl_primitive_execute(p.primitive.get(), stream.get(),
                                                        static_cast<int>(bound->arguments.size()),
                                                        bound->arguments.data());
    p.Return(std::move(bound));
    if (status != dnnl_success) throw dnnl::error(status, "could not execute a primitive");
    stream.wait();
  };
  const auto run_tile = [&](size_t index) -> Status {
    const Tile& tile = state.tiles[index];
    try {
      OneDnnThreadScope single;
      for (const KStep& step : tile.steps) run_step(tile, step);
      if (state.post_ops < state.epilogue.size()) {
        const auto tail = std::span<const epilogue::Op>(state.epilogue).subspan(state.post_ops);
        for (int64_t b = tile.b0; b < tile.b0 + tile.bn; ++b)
          epilogue::Apply(tail, args, b * state.m + tile.m0, b * state.m + tile.m0 + tile.mn, tile.n0,
                          tile.n0 + tile.nn);
      }
      return OkStatus();
    } catch (const dnnl::error& error) {
      return FromDnnlError(error, "matmul");
    } catch (const std::bad_alloc&) {
      return ResourceExhausted("out of memory running a oneDNN matmul");
    } catch (const std::exception& error) {
      return Internal(std::string("oneDNN matmul failed: ") + error.what());
    }
  };
  if (state.tiles.size() == 1) return run_tile(0);
  std::vector<Status> statuses(state.tiles.size());
  ThreadPool::Shared().ParallelFor(static_cast<int>(state.tiles.size()),
                                   [&](int t) { statuses[static_cast<size_t>(t)] = run_tile(static_cast<size_t>(t)); });
  for (Status& status : statuses)
    if (!status.ok()) return status;
  return OkStatus();
}

const char* ImplementationName(const void* state) {
  return static_cast<const MatmulState*>(state)->implementation.c_str();
}

int PreparedTileCount(const void* state) {
  return static_cast<int>(static_cast<const MatmulState*>(state)->tiles.size());
}

}  // namespace stablert::kernels::onednn
