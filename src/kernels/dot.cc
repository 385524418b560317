// Batched matrix product: "dot.<T>", out[b,m,n] = sum_k lhs(b,m,k) * rhs(b,k,n), for
// integers (wrapping), floats (f16/bf16 accumulate in f32 and round once), complex, and
// booleans (or of ands, as XLA computes a pred dot).
// lhs is stored [B,M,K] or [B,K,M] and rhs [B,K,N] or [B,N,K] (DotParams says which);
// the plan reshapes/transposes dot_general operands into these forms.
// "dot.f32" also accumulates: with a third input, the addend [B,M,N] (dense), it computes
// out = addend + lhs . rhs (plan/fold_dot_add.cc), and the output may be the addend's
// storage (InPlace::kThirdInput). libxsmm and oneDNN add the product to the output in their
// kernels (beta 1, a sum post-op); the loops and the matrix-vector path compute the product
// into a temporary first. On the library paths the addend enters the kernel's accumulator,
// so the sum rounds differently from XLA's (the product rounded, then added).
// "dot_epilogue.f32" (DotEpilogueParams; plan/fold_dot_epilogue.cc) computes the product
// on the same paths and applies elementwise ops to it (bias, scalar and full adds,
// multiplies, divides, relu; dot_epilogue.h): oneDNN as post-ops up to the first relu and
// the rest per tile while it is in cache, the other paths in one pass after the product.
// Each op rounds as XLA's separate op does. Its output never shares an input's storage.
//
// f32 and bf16 products of at least kMinOneDnnMacs multiply-adds run on oneDNN's matmul
// primitive (onednn_matmul.h), created once per step by the prepare function; such a step
// is called once (PreparedStep::single_call) and spreads its tiles over StableRT's pool
// itself. bf16 products accumulate in f32 and round once, as the loops do; oneDNN 2.6 has
// them natively on AVX512_BF16 CPUs (brg:avx512_core_bf16) and otherwise only a reference
// implementation: there the operands are widened to f32 in the step's workspace and the
// product runs on oneDNN's f32 path, rounded once to bf16 (RunWidened). oneDNN 2.6 has no f16 matmul on x86 CPUs
// without AVX512_FP16, and no f64 one. f32 products up to 512 per dim whose rhs fits the
// L2 (and is not stored [N,K]) run on libxsmm's kernels instead (xsmm_matmul.h), the larger
// ones in row tiles on the pool. f32 matrix-vector products (M or N is 1) run on
// dot_matvec.h's vector loops, which stream the matrix once on every core. Everything else
// -- smaller products, empty ones, f64, f16, integers, complex and pred -- runs on the loop
// nest below, split across StableRT's pool like other kernels.
//
// The loops: a straightforward nest whose inner loop runs over contiguous memory.
// Float and complex contractions accumulate pairwise (kernels/accumulate.h): when k is
// contiguous in rhs (rhs [B,N,K], or N == 1) each output is a dot product summed in blocks
// of 256 products in vectorized partial sums, the blocks combined pairwise; otherwise an
// output row accumulates 128 values of k at a time, those leaves combined pairwise. A long
// contraction's error thus grows with log2 k, not k; contractions of at most 128 (rows)
// terms round as before.
#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/dot.h"
#include "kernels/dot_params.h"

#include "base/thread_pool.h"
#include "kernels/accumulate.h"
#include "kernels/complex_ops.h"
#include "kernels/dot_epilogue.h"
#include "kernels/dot_matvec.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/onednn_matmul.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/xsmm_matmul.h"

namespace stablert::kernels {
namespace {

template <DType D, typename C>
inline C MultiplyAdd(C acc, C a, C b) {
  if constexpr (D == DType::kPred) return static_cast<C>((acc | (a & b)) != 0);  // or of ands
  else if constexpr (std::is_integral_v<C>) return ops::AddOp::Apply(acc, ops::MultiplyOp::Apply(a, b));
  else if constexpr (kIsComplex<C>) return cx::Add(acc, cx::Multiply(a, b));
  else return acc + a * b;
}

// Values of k accumulated flatly into an output row before the row is carried into the
// pairwise levels (a carry costs about two passes over the row).
constexpr int64_t kRowLeaf = 128;

// Float and complex products accumulate pairwise.
template <DType D, typename C>
inline constexpr bool kPairwiseDot = D != DType::kPred && !std::is_integral_v<C>;

// The pairwise dot product of a[0..k) (computing type) and b[0..k) (storage type).
template <DType D, typename C, typename T>
C PairwiseDot(const C* a, const T* b, int64_t k) {
  if constexpr (std::is_floating_point_v<C>) {
    constexpr int kLanes = static_cast<int>(64 / sizeof(C));
    pairwise::ScalarCascade<C> cascade;
    for (int64_t begin = 0; begin < k; begin += pairwise::kBlock) {
      const int64_t count = std::min(pairwise::kBlock, k - begin);
      const C* x = a + begin;
      const T* y = b + begin;
      C p[kLanes];
      for (int j = 0; j < kLanes; ++j) p[j] = C(-0.0);
      int64_t i = 0;
      for (; i + kLanes <= count; i += kLanes)
        for (int j = 0; j < kLanes; ++j) p[j] += x[i + j] * C(Load(y[i + j]));
      for (int j = 0; i + j < count; ++j) p[j] += x[i + j] * C(Load(y[i + j]));
      for (int h = kLanes / 2; h >= 1; h /= 2)
        for (int j = 0; j < h; ++j) p[j] += p[j + h];
      if (k <= pairwise::kBlock) return C(0) + p[0];
      cascade.Push(p[0]);
    }
    return C(0) + cascade.Result();
  } else {
    pairwise::ScalarCascade<C> cascade(pairwise::kLeafRows, C(0));
    for (int64_t i = 0; i < k; ++i) cascade.Push(cx::Multiply(a[i], C(Load(b[i]))));
    return cascade.Result();
  }
}

template <DType D>
Status DotLoops(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  using C = Compute<T>;  // float for f16/bf16; integers wrap
  const BufferView& lhs_view = args.inputs[0];
  const BufferView& rhs_view = args.inputs[1];
  const BufferView& out_view = args.outputs[0];
  const bool lhs_bkm = args.Params<DotParams>().lhs_is_bkm;
  const bool rhs_bnk = args.Params<DotParams>().rhs_is_bnk;
  const int64_t batch = out_view.dims[0];
  const int64_t m_size = out_view.dims[1];
  const int64_t n_size = out_view.dims[2];
  const int64_t k_size = lhs_bkm ? lhs_view.dims[1] : lhs_view.dims[2];
  // Element strides of lhs(m, k) and rhs(k, n) within one batch.
  const int64_t lhs_sm = lhs_bkm ? 1 : k_size, lhs_sk = lhs_bkm ? m_size : 1;
  const int64_t rhs_sk = rhs_bnk ? 1 : n_size, rhs_sn = rhs_bnk ? k_size : 1;
  const T* lhs = lhs_view.as<const T>();
  const T* rhs = rhs_view.as<const T>();
  T* out = out_view.as<T>();
  std::vector<C> row_buffer(kIsHalf<T> ? static_cast<size_t>(n_size) : 0);
  // With N == 1, k is contiguous in rhs in either layout.
  const bool rhs_k_contiguous = rhs_bnk || n_size == 1;
  const int64_t rhs_k_stride = rhs_bnk ? 1 : rhs_sk;
  // The pairwise dot products read lhs(m, :) contiguously in the computing type.
  std::vector<C> lhs_row(kPairwiseDot<D, C> && rhs_k_contiguous && (lhs_sk != 1 || kIsHalf<T>)
                             ? static_cast<size_t>(k_size)
                             : 0);
  // This call's share: rows (b, m) of the flattened [batch * m_size] output rows.
  const auto [first_row, last_row] = ShareOf(context, batch * m_size);
  for (int64_t row_index = first_row; row_index < last_row; ++row_index) {
    const int64_t b = row_index / m_size, m = row_index % m_size;
    const T* l = lhs + b * m_size * k_size;
    const T* r = rhs + b * k_size * n_size;
    T* o = out + b * m_size * n_size;
    if (!rhs_k_contiguous) {
      // Inner loop over n, contiguous in rhs and out.
      C* row;
      if constexpr (kIsHalf<T>) row = row_buffer.data();
      else row = o + m * n_size;
      for (int64_t n = 0; n < n_size; ++n) row[n] = C(0);
      if constexpr (kPairwiseDot<D, C>) {
        pairwise::VectorCascade<C, kRowLeaf> cascade(row, n_size, 1, k_size);
        for (int64_t first = 0; first < k_size; first += kRowLeaf) {
          C* dst = cascade.NextLeaf(0);
          const int64_t last = std::min(k_size, first + kRowLeaf);
          for (int64_t k = first; k < last; ++k) {
            const C a = Load(l[m * lhs_sm + k * lhs_sk]);
            const T* r_row = r + k * rhs_sk;
            for (int64_t n = 0; n < n_size; ++n) dst[n] = MultiplyAdd<D>(dst[n], a, Load(r_row[n]));
          }
        }
        cascade.Finish();
      } else {
        for (int64_t k = 0; k < k_size; ++k) {
          const C a = Load(l[m * lhs_sm + k * lhs_sk]);
          const T* r_row = r + k * rhs_sk;
          for (int64_t n = 0; n < n_size; ++n) row[n] = MultiplyAdd<D>(row[n], a, Load(r_row[n]));
        }
      }
      if constexpr (kIsHalf<T>)
        for (int64_t n = 0; n < n_size; ++n) o[m * n_size + n] = StoreAs<T>(row[n]);
    } else if constexpr (kPairwiseDot<D, C>) {
      // Dot products over k, contiguous in rhs.
      const C* a;
      if (lhs_row.empty()) {
        a = reinterpret_cast<const C*>(l + m * lhs_sm);
      } else {
        for (int64_t k = 0; k < k_size; ++k) lhs_row[static_cast<size_t>(k)] = Load(l[m * lhs_sm + k * lhs_sk]);
        a = lhs_row.data();
      }
      for (int64_t n = 0; n < n_size; ++n) o[m * n_size + n] = StoreAs<T>(PairwiseDot<D>(a, r + n * rhs_sn, k_size));
    } else {
      // Inner loop over k, contiguous in rhs.
      for (int64_t n = 0; n < n_size; ++n) {
        const T* r_row = r + n * rhs_sn;
        C sum = 0;
        for (int64_t k = 0; k < k_size; ++k)
          sum = MultiplyAdd<D>(sum, C(Load(l[m * lhs_sm + k * lhs_sk])), C(Load(r_row[k * rhs_k_stride])));
        o[m * n_size + n] = StoreAs<T>(sum);
      }
    }
  }
  return OkStatus();
}

// Which path runs a product, from measurements on the 2-core Zen 5 machine
// (benchmarks/dot_kernel_benchmark.cc; f32, N x N x N; loops and oneDNN on one thread,
// oneDNN's primitive created once, then executed):
//            loops     oneDNN, 1 thread
//   16^3     1.0 us    1.1 us
//   24^3     3.0 us    1.9 us
//   32^3     6.0 us    1.7 us
//   64^3     33 us     3.8 us
//   128^3    240 us    26 us
// so products of at least 16*16*32 multiply-adds go to oneDNN, which cuts the large ones
// into tiles run on StableRT's pool (onednn_matmul.h; no OpenMP team). f32 matrix-vector
// products (M == 1 or N == 1) are memory-bound and run on dot_matvec.h's vector loops:
// oneDNN's matmul was slower on them (1x4096x4096: 8.5 ms on one thread, the scalar loops
// 4.6 ms on one; 256x256x1: 15 us vs 10 us); other types' stay on the loops.
constexpr double kMinOneDnnMacs = 16.0 * 16.0 * 32.0;

// The library path a prepared step takes (KernelArgs::state of "dot.f32"/"dot.bf16").
struct DotState {
  using Path = DotPath;
  Path path;
  KernelState impl;  // xsmm's or onednn's state
};

// A bf16 product where oneDNN has only its reference bf16 matmul (CPUs without
// AVX512_BF16, or STABLERT_ISA below avx512): the operands widened to f32 (exactly), the
// product on oneDNN's f32 path (f32 accumulation, as the loops), then rounded once to bf16.
// The f32 copies live in the step's workspace (WidenedBytes).
struct Widened {
  onednn::MatmulShape shape;  // the f32 product
  KernelState impl;           // its oneDNN state
  int64_t lhs = 0, rhs = 0, out = 0;  // elements
};

int64_t Rounded64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Workspace bytes of a widened product of `shape` (bf16): the three f32 copies, then the
// f32 product's own workspace (onednn::PaddedRhsBytes).
int64_t WidenedBytes(const onednn::MatmulShape& shape) {
  const int64_t lhs = shape.batch * shape.m * shape.k, rhs = shape.batch * shape.k * shape.n,
                out = shape.batch * shape.m * shape.n;
  onednn::MatmulShape f32 = shape;
  f32.dtype = DType::kF32;
  return Rounded64(lhs * 4) + Rounded64(rhs * 4) + Rounded64(out * 4) + onednn::PaddedRhsBytes(f32);
}

StatusOr<KernelState> PrepareWidened(const onednn::MatmulShape& shape) {
  auto state = std::make_shared<Widened>();
  state->shape = shape;
  state->shape.dtype = DType::kF32;
  STABLERT_ASSIGN_OR_RETURN(state->impl, onednn::PrepareMatmul(state->shape));
  state->lhs = shape.batch * shape.m * shape.k;
  state->rhs = shape.batch * shape.k * shape.n;
  state->out = shape.batch * shape.m * shape.n;
  return KernelState(std::move(state));
}

Status RunWidened(const Widened& w, const KernelArgs& args) {
  const auto bytes = static_cast<size_t>(WidenedBytes(w.shape));
  std::byte* base;
  std::span<std::byte> rest;  // the f32 product's workspace
  if (args.workspace.size() >= bytes) {
    base = args.workspace.data();
    rest = args.workspace.subspan(static_cast<size_t>(Rounded64(w.lhs * 4) + Rounded64(w.rhs * 4) + Rounded64(w.out * 4)));
  } else {
    // Called without the plan's workspace (tests, benchmarks): a buffer of this thread.
    thread_local std::vector<float> buffer;
    if (buffer.size() * sizeof(float) < bytes + 64) buffer.resize(bytes / sizeof(float) + 16);
    base = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) / 64 * 64);
  }
  auto* lhs = reinterpret_cast<float*>(base);
  auto* rhs = reinterpret_cast<float*>(base + Rounded64(w.lhs * 4));
  auto* out = reinterpret_cast<float*>(base + Rounded64(w.lhs * 4) + Rounded64(w.rhs * 4));
  const auto widen = [](const BF16* from, float* to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = Load(from[i]);
  };
  widen(args.inputs[0].as<const BF16>(), lhs, w.lhs);
  widen(args.inputs[1].as<const BF16>(), rhs, w.rhs);
  BufferView views[3] = {args.inputs[0], args.inputs[1], args.outputs[0]};
  views[0].data = lhs, views[1].data = rhs, views[2].data = out;
  for (BufferView& view : views) view.dtype = DType::kF32;
  KernelArgs f32 = args;
  f32.inputs = {views, 2};
  f32.outputs = {views + 2, 1};
  f32.workspace = rest;
  STABLERT_RETURN_IF_ERROR(onednn::RunMatmul(w.impl.get(), f32));
  BF16* result = args.outputs[0].as<BF16>();
  for (int64_t i = 0; i < w.out; ++i) result[i] = StoreAs<BF16>(out[i]);
  return OkStatus();
}

// Whether PrepareDot gives a product of `shape` to oneDNN (beyond the matrix-vector and
// libxsmm paths, which take f32 products first).
bool OnOneDnn(const onednn::MatmulShape& shape) {
  const double macs = static_cast<double>(shape.batch) * static_cast<double>(shape.m) *
                      static_cast<double>(shape.n) * static_cast<double>(shape.k);
  return shape.m > 1 && shape.n > 1 && macs >= kMinOneDnnMacs;
}

template <DType D>
StatusOr<PreparedStep> PrepareDot(const KernelArgs& args) {
  onednn::MatmulShape shape = onednn::DotShape(args);
  // Unimplemented from a library means "not this product": the next path takes it.
  auto library = [](DotState::Path path, StatusOr<KernelState> impl) -> StatusOr<std::optional<PreparedStep>> {
    if (!impl.ok()) {
      if (impl.status().code() == StatusCode::kUnimplemented) return std::optional<PreparedStep>();
      return impl.status();
    }
    auto state = std::make_shared<DotState>(DotState{path, std::move(impl).value()});
    return std::optional<PreparedStep>(PreparedStep(std::move(state), /*once=*/true));
  };
  const double macs = static_cast<double>(shape.batch) * static_cast<double>(shape.m) *
                      static_cast<double>(shape.n) * static_cast<double>(shape.k);
  if constexpr (D == DType::kF32) {
    // Matrix-vector products beyond libxsmm's smallest (where its kernels' lead is clear)
    // stream their matrix on the vector loops.
    const bool tiny = std::max({shape.m, shape.n, shape.k}) <= xsmm::kMaxSmallDim;
    if (!tiny && matvec::IsMatVec(shape)) {
      STABLERT_ASSIGN_OR_RETURN(auto mv, library(DotState::Path::kMatVec, matvec::PrepareMatVec(shape)));
      if (mv) return *std::move(mv);
    }
    if (xsmm::IsSmallProduct(shape)) {
      STABLERT_ASSIGN_OR_RETURN(auto small, library(DotState::Path::kSmall, xsmm::PrepareSmallMatmul(shape)));
      if (small) return *std::move(small);
    }
    if (matvec::IsMatVec(shape)) {
      STABLERT_ASSIGN_OR_RETURN(auto mv, library(DotState::Path::kMatVec, matvec::PrepareMatVec(shape)));
      if (mv) return *std::move(mv);
    }
  }
  // An accumulating product on the loops runs as one call (DotKernel adds the product once).
  const auto loops = [&] {
    if (!shape.accumulate) return PreparedStep();
    return PreparedStep(std::make_shared<DotState>(DotState{DotPath::kLoops, nullptr}), /*once=*/true);
  };
  if (macs < kMinOneDnnMacs || shape.m == 1 || shape.n == 1) return loops();
  STABLERT_ASSIGN_OR_RETURN(auto onednn, library(DotState::Path::kOneDnn, onednn::PrepareMatmul(shape)));
  if (onednn) return *std::move(onednn);
  if constexpr (D == DType::kBF16) {
    if (!onednn::Bf16MatmulNative()) {
      STABLERT_ASSIGN_OR_RETURN(auto widened, library(DotState::Path::kWidened, PrepareWidened(shape)));
      if (widened) return *std::move(widened);
    }
  }
  return loops();  // no fast library implementation (or an empty product): the loops
}

// out = addend + product for the paths that only write a product (loops, matrix-vector):
// the product goes to a temporary, then is added to the output (which holds the addend).
template <typename Run>
Status AccumulateThroughTemporary(const KernelContext& context, const KernelArgs& args, Run&& run) {
  const BufferView& out = args.outputs[0];
  std::vector<float> product(static_cast<size_t>(out.num_elements));
  BufferView product_view = out;
  product_view.data = product.data();
  KernelArgs product_args = args;
  product_args.inputs = args.inputs.first(2);
  product_args.outputs = {&product_view, 1};
  STABLERT_RETURN_IF_ERROR(run(context, product_args));
  float* o = out.as<float>();
  for (size_t i = 0; i < product.size(); ++i) o[i] += product[i];
  return OkStatus();
}

template <DType D>
Status DotKernel(const KernelContext& context, const KernelArgs& args) {
  if (args.state == nullptr) {
    if (args.inputs.size() > 2) return Internal("dot with an addend: the step was not prepared");
    return DotLoops<D>(context, args);
  }
  // A library step is called once; should a caller still split it, one call does the work.
  if (context.thread_index != 0) return OkStatus();
  const auto& state = *static_cast<const DotState*>(args.state);
  if constexpr (D == DType::kF32) {
    if (args.inputs.size() > 2) {
      // out = addend + product. The output holds the addend first (it may be its storage).
      const BufferView& addend = args.inputs[2];
      const BufferView& out = args.outputs[0];
      if (addend.data != out.data)
        std::memcpy(out.data, addend.data, static_cast<size_t>(out.num_elements) * sizeof(float));
      if (state.path == DotPath::kLoops)
        return AccumulateThroughTemporary(context, args, [](const KernelContext& c, const KernelArgs& a) {
          return DotLoops<D>(c, a);
        });
      if (state.path == DotPath::kMatVec)
        return AccumulateThroughTemporary(context, args, [&](const KernelContext&, const KernelArgs& a) {
          return matvec::RunMatVec(state.impl.get(), a);
        });
    }
  }
  KernelArgs library_args = args;
  library_args.state = state.impl.get();
  switch (state.path) {
    case DotState::Path::kSmall: return xsmm::RunSmallMatmul(state.impl.get(), library_args);
    case DotState::Path::kOneDnn: return onednn::RunMatmul(state.impl.get(), library_args);
    case DotState::Path::kMatVec: return matvec::RunMatVec(state.impl.get(), library_args);
    case DotState::Path::kWidened: return RunWidened(*static_cast<const Widened*>(state.impl.get()), args);
    case DotState::Path::kLoops: break;
  }
  return Internal("dot: unknown library path");
}

// "dot_epilogue.f32": the product on its own path (PrepareDot), then the ops of
// DotEpilogueParams -- as oneDNN post-ops when oneDNN runs the product and offers them in
// a fast implementation, on each libxsmm tile as it is written, else by epilogue::Apply
// over the written product.
struct EpilogueState {
  std::vector<epilogue::Op> ops;
  PreparedStep product;     // the product's prepared step (its state null on the loops)
  bool by_library = false;  // the library path applies the ops (oneDNN post-ops, libxsmm per tile)
};

// `args` as the product's own step: DotParams, lhs and rhs.
KernelArgs ProductArgs(const KernelArgs& args) {
  KernelArgs product = args;
  product.params = &args.Params<DotEpilogueParams>().dot;
  product.inputs = args.inputs.first(std::min<size_t>(2, args.inputs.size()));
  return product;
}

StatusOr<PreparedStep> PrepareDotEpilogue(const KernelArgs& args) {
  if (args.inputs.size() < 2) return InvalidArgument("dot_epilogue.f32: expected lhs and rhs inputs");
  STABLERT_ASSIGN_OR_RETURN(std::vector<epilogue::Op> ops, epilogue::Describe(args.Params<DotEpilogueParams>(), args));
  const KernelArgs product = ProductArgs(args);
  auto state = std::make_shared<EpilogueState>();
  state->ops = ops;
  STABLERT_ASSIGN_OR_RETURN(state->product, PrepareDot<DType::kF32>(product));
  const DotPath path = PreparedDotPath(state->product.state.get());
  if (path == DotPath::kOneDnn || path == DotPath::kSmall) {
    onednn::MatmulShape shape = onednn::DotShape(product);
    shape.epilogue = ops;
    const double macs = static_cast<double>(shape.batch) * static_cast<double>(shape.m) *
                        static_cast<double>(shape.n) * static_cast<double>(shape.k);
    // Split products prefer oneDNN's post-ops, which run on the accumulators in registers;
    // epilogue::Apply's extra pass over each tile costs more than libxsmm saves (attention's
    // scaled scores, 32 x 256x64x256 then a divide: 2.8-3.1 ms per call against 2.2-2.5).
    std::vector<DotPath> tries = {path};
    if (path == DotPath::kSmall && macs >= onednn::kMinSplitMacs) tries = {DotPath::kOneDnn, DotPath::kSmall};
    for (DotPath library : tries) {
      StatusOr<KernelState> fused =
          library == DotPath::kOneDnn ? onednn::PrepareMatmul(shape) : xsmm::PrepareSmallMatmul(shape);
      if (fused.ok()) {
        state->product.state = std::make_shared<DotState>(DotState{library, std::move(fused).value()});
        state->by_library = true;
        break;
      }
      if (fused.status().code() != StatusCode::kUnimplemented) return fused.status();
    }
  }
  return PreparedStep(std::move(state), /*once=*/true);
}

Status DotEpilogueKernel(const KernelContext& context, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("dot_epilogue.f32: the step was not prepared");
  if (context.thread_index != 0) return OkStatus();
  const auto& state = *static_cast<const EpilogueState*>(args.state);
  KernelArgs product = ProductArgs(args);
  product.state = state.product.state.get();
  if (state.by_library) {
    product.inputs = args.inputs;  // the epilogue reads its operands from inputs 2, 3, ...
    const auto& library = *static_cast<const DotState*>(product.state);
    if (library.path == DotPath::kSmall) return xsmm::RunSmallMatmul(library.impl.get(), product);
    return onednn::RunMatmul(library.impl.get(), product);
  }
  STABLERT_RETURN_IF_ERROR(DotKernel<DType::kF32>(KernelContext{}, product));
  const BufferView& out = args.outputs[0];
  epilogue::Apply(state.ops, args, 0, out.dims[0] * out.dims[1]);
  return OkStatus();
}

}  // namespace

namespace {

// The workspace of "dot.f32" and "dot_epilogue.f32": the padded rhs copy of a product oneDNN
// runs on its gemm:jit driver (onednn::PaddedRhsBytes), for the products PrepareDot gives
// oneDNN; none for the others (matrix-vector, libxsmm's, the loops').
int64_t DotWorkspace(const KernelArgs& args) {
  const onednn::MatmulShape shape = onednn::DotShape(args);
  if (!OnOneDnn(shape) || xsmm::IsSmallProduct(shape)) return 0;
  return onednn::PaddedRhsBytes(shape);
}

// "dot.bf16": the f32 copies of a widened product (and their product's workspace).
int64_t DotBf16Workspace(const KernelArgs& args) {
  const onednn::MatmulShape shape = onednn::DotShape(args);
  if (!OnOneDnn(shape) || onednn::Bf16MatmulNative()) return 0;
  return WidenedBytes(shape);
}
int64_t DotEpilogueWorkspace(const KernelArgs& args) {
  if (args.inputs.size() < 2) return 0;
  return DotWorkspace(ProductArgs(args));
}

}  // namespace

bool PreparedEpilogueByLibrary(const void* state) { return static_cast<const EpilogueState*>(state)->by_library; }

DotPath PreparedDotPath(const void* state) {
  return state == nullptr ? DotPath::kLoops : static_cast<const DotState*>(state)->path;
}

Status RegisterDotKernels(KernelRegistry& r) {
  using Numeric = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
                            DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kC64,
                            DType::kC128>;
  return ForEachDType(Numeric{}, [&]<DType D>() {
    if constexpr (D == DType::kF32) {
      STABLERT_RETURN_IF_ERROR(
          r.RegisterSplittable<DotParams>(KernelKey("dot", {D}), &DotKernel<D>, &PrepareDot<D>));
      // Never in place: oneDNN may write partial products to the output before its post-ops
      // read their operands.
      STABLERT_RETURN_IF_ERROR(r.Register<DotEpilogueParams>(KernelKey("dot_epilogue", {D}), &DotEpilogueKernel,
                                                             &PrepareDotEpilogue));
      STABLERT_RETURN_IF_ERROR(r.DeclareWorkspace(KernelKey("dot", {D}), &DotWorkspace));
      STABLERT_RETURN_IF_ERROR(r.DeclareWorkspace(KernelKey("dot_epilogue", {D}), &DotEpilogueWorkspace));
      return r.DeclareInPlace(KernelKey("dot", {D}), InPlace::kThirdInput);
    }
    if constexpr (D == DType::kBF16) {
      STABLERT_RETURN_IF_ERROR(r.RegisterSplittable<DotParams>(KernelKey("dot", {D}), &DotKernel<D>, &PrepareDot<D>));
      return r.DeclareWorkspace(KernelKey("dot", {D}), &DotBf16Workspace);
    }
    else
      return r.RegisterSplittable<DotParams>(KernelKey("dot", {D}), &DotLoops<D>);
  });
}

}  // namespace stablert::kernels
