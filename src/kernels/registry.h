// The kernel registry: stable kernel keys -> kernel functions.
//
// A key is "<op>.<dtype>" where <op> is the StableHLO mnemonic without its dialect and
// <dtype> the StableHLO element type name ("add.f32", "negate.bf16", "not.i1"); a few
// kernels carry two dtypes or a variant in the op part, listed below. Execution plans name
// kernels by key; the runtime resolves each key to a function pointer once per plan.
//
// Registration is explicit (RegisterCpuKernels); there are no static constructors.
// A registry is filled once and then only read: concurrent Find() calls are safe,
// concurrent Register() calls are not.
//
// Kernel families, their operands and their parameters: the family's parameter struct
// (kernels/params.h; "params: DotParams", in <family>_params.h), or none:
//   unary  "<op>.<T>"       in: x            out: y (T; i1 for is_finite)      params: none
//   binary "<op>.<T>"       in: a, b (same shape)  out: T                      params: none
//   "compare.<T>"           in: a, b         out: i1     params: CompareParams (direction
//                           and type as enums in VHLO's numbering; compare_params.h)
//   "select.<T>"            in: pred (i1, scalar or shaped), on_true, on_false
//   "clamp.<T>"             in: min, x, max (min/max scalar or x-shaped)
//   "convert.<From>.<To>"   in: x            out: y
//   "bitcast_convert.<From>.<To>"  between a sub-byte type and one of another width
//                           (repacks bits; byte-sized bitcasts are aliases): see bitcast.cc
//   "copy.<T>"              in: x            out: y (same element count)    params: none
//   "broadcast_in_dim.<T>"  params: BroadcastInDimParams (data_movement_params.h)
//   "transpose.<T>"         params: TransposeParams
//   "slice.<T>"             params: SliceParams
//   "concatenate.<T>"       in: N arrays     params: ConcatenateParams
//   "iota.<T>"              in: none         params: IotaParams
//   "dynamic_slice.<T>", "dynamic_update_slice.<T>" (params: none), "pad.<T>" (params:
//                           PadParams), "reverse.<T>" (params: ReverseParams;
//                           slicing_params.h): see slicing.cc
//   "reduce_program", "sort_program": bodies as programs, see program_kernels.cc,
//                           params: ReduceProgramParams, SortProgramParams (program_params.h);
//                           reduce_program is splittable (argmax/argmin bodies run split,
//                           kernels/argminmax.h; other bodies on the first call)
//   "argminmax.<V>.<I>"     in: values, init value, init index  out: values, indices;
//                           params: ArgMinMaxParams (argminmax_params.h); JAX's argmax/argmin
//                           with the iota of indices counted, not read; splittable
//   "sort_keys.<T>", "sort_by_key.<T>": sorts on order-preserving keys, see sort.cc,
//                           params: SortParams; splittable (rows)
//   "fft.<C>", "rfft.<R>", "irfft.<C>": see fft.cc, params: FftParams
//   "rng_bit_generator_three_fry.<T>", "rng_bit_generator_philox.<T>" (params: none),
//   "rng_uniform.<T>", "rng_normal.<T>" (params: RngParams): see rng.cc
// Splittable as well (each call writes its share of the output): compare, select, clamp,
// convert, copy, broadcast_in_dim, transpose, slice, concatenate, iota, pad, reverse, the
// elementwise unary/binary kernels and reduce_window_<body> (scans split by lines).
//   "reduce_window_<body>.<T>" (params: WindowParams), "reduce_window_program" (params:
//                           ReduceWindowProgramParams), "select_and_scatter.<T>" (params:
//                           SelectAndScatterParams; window_params.h): see window.cc
//   "gather.<T>", "scatter_<body>.<T>", "scatter_program": see gather_scatter.cc, params:
//                           GatherParams, ScatterParams (gather_scatter_params.h)
//   "convolution.<T>": see convolution.cc, params: ConvolutionParams; "convolution_dnnl.f32" (same operands and params;
//                           a oneDNN step runs once and oneDNN threads it, a loop fallback is
//                           split — PreparedStep::single_call): see convolution_dnnl.cc
//   "reduce_precision.<T>": see reduce_precision.cc, params: ReducePrecisionParams
//   "reduce_<body>.<T>"     body in add, mul, max, min, and, or; in: x, init (scalar)
//                           out: x's dims without the reduced ones  params: ReduceParams;
//                           splittable (f32/f64 sum, max, min of 256K+ elements split over
//                           outputs or the range; see reduce.cc)
//   "cholesky.<T>", "triangular_solve.<T>": see linalg.cc, params: CholeskyParams,
//                           TriangularSolveParams (linalg_params.h)
//   "lapack_<routine>.<T>" (LAPACK custom calls): see linalg_custom_calls.cc, params:
//                           Lapack<Routine>Params (linalg_params.h; LapackSvdParams for
//                           gesdd/gesvd) or none (getrf, geqrf, geqp3, orgqr, gtsv)
//   "fused"                 a chain of elementwise kernels run tile by tile, optionally
//                           folding one value into a reduction: see fused.cc, params:
//                           FusedParams (fused_params.h); splittable, takes views
//   "fused_rows"            row reductions and the chains reading their results broadcast
//                           back, run over blocks of rows: see fused.cc, params:
//                           FusedRowsParams (fused_params.h); splittable, takes views
//   "dot.<T>"               in: lhs [B,M,K] (or [B,K,M]), rhs [B,K,N] (or [B,N,K]),
//                           out: [B,M,N]  params: DotParams; f32 and bf16
//                           products above a size threshold run on oneDNN (dot.cc,
//                           onednn_matmul.h)
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "kernels/elementwise_views.h"
#include "kernels/kernel.h"

namespace stablert::kernels {

// "<op>.<dtype>[.<dtype>...]".
std::string KernelKey(std::string_view op, std::initializer_list<DType> dtypes);

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  struct Entry {
    KernelFn fn = nullptr;
    PrepareFn prepare = nullptr;  // optional
    bool splittable = false;      // honours KernelContext's thread_index/thread_count
    // The parameter struct every step of this kernel carries (params.h); nullptr: the
    // kernel takes none.
    const ParamsType* params = nullptr;
    // Its inputs may be strided views (BufferView::strides); see RegisterElementwise.
    bool strided_inputs = false;
    // The scratch memory a call needs (kernel.h), if any.
    WorkspaceFn workspace = nullptr;
    // Which inputs may share storage with output 0 (kernel.h: outputs never alias inputs
    // unless allowed here). Plan buffer assignment writes a step's output over such an
    // input when the input dies at the step (plan/in_place.h).
    InPlace in_place = InPlace::kNone;
    // Elementwise kernels given by a tile function (kernel.h): that function, which fused
    // steps call directly; nullptr for the others.
    TileFn tile = nullptr;
    // Binds a call to fixed arguments (kernel.h: BoundCall), for steps run in loops; or
    // nullptr.
    BindFn bind = nullptr;
  };

  // Adds `fn` (and its optional prepare function) under `key`; InvalidArgument if the key
  // is already taken.
  Status Register(std::string key, KernelFn fn, PrepareFn prepare = nullptr);
  // Adds a kernel that does its share of the work per KernelContext (kernel.h); its
  // prepare function may still ask for a single call per step (PreparedStep::single_call).
  Status RegisterSplittable(std::string key, KernelFn fn, PrepareFn prepare = nullptr);
  // The same for a kernel whose steps carry a parameter struct P (read with
  // KernelArgs::Params<P>()).
  template <ParamStruct P>
  Status Register(std::string key, KernelFn fn, PrepareFn prepare = nullptr) {
    return Add(std::move(key), Entry{fn, prepare, false, ParamsTypeOf<P>()});
  }
  template <ParamStruct P>
  Status RegisterSplittable(std::string key, KernelFn fn, PrepareFn prepare = nullptr) {
    return Add(std::move(key), Entry{fn, prepare, true, ParamsTypeOf<P>()});
  }
  // An elementwise kernel (out[i] from each input's [i]; kernels/elementwise_views.h):
  // splittable, and its inputs may be strided views, which ElementwiseOverViews<Dense>
  // gathers block by block for the dense kernel `Dense`.
  template <KernelFn Dense>
  Status RegisterElementwise(std::string key) {
    return Add(std::move(key), Entry{&ElementwiseOverViews<Dense>, nullptr, true, nullptr, true, nullptr,
                                     InPlace::kElementwise});
  }
  template <ParamStruct P, KernelFn Dense>
  Status RegisterElementwise(std::string key) {
    return Add(std::move(key), Entry{&ElementwiseOverViews<Dense>, nullptr, true, ParamsTypeOf<P>(), true, nullptr,
                                     InPlace::kElementwise});
  }
  // An elementwise kernel given by its tile function (kernel.h): as RegisterElementwise with
  // the dense kernel running `Tile` over its share; fused steps call `Tile` directly.
  template <TileFn Tile>
  Status RegisterElementwiseTile(std::string key) {
    return Add(std::move(key), Entry{&ElementwiseOverViews<&DenseFromTile<Tile>>, nullptr, true, nullptr, true, nullptr,
                                     InPlace::kElementwise, Tile});
  }
  template <ParamStruct P, TileFn Tile>
  Status RegisterElementwiseTile(std::string key) {
    return Add(std::move(key), Entry{&ElementwiseOverViews<&DenseFromTile<Tile>>, nullptr, true, ParamsTypeOf<P>(), true,
                                     nullptr, InPlace::kElementwise, Tile});
  }
  // A splittable kernel with parameter struct P whose inputs may be strided views (it
  // gathers them itself, e.g. "fused", kernels/fused.cc).
  template <ParamStruct P>
  Status RegisterTakingViews(std::string key, KernelFn fn, PrepareFn prepare = nullptr) {
    return Add(std::move(key), Entry{fn, prepare, true, ParamsTypeOf<P>(), true});
  }
  // Declares that the kernel registered under `key` takes a workspace of `fn`'s size;
  // NotFound if there is no such kernel.
  Status DeclareWorkspace(std::string_view key, WorkspaceFn fn);
  // Declares that the kernel registered under `key` may run with output 0 in the storage
  // of the inputs `in_place` names; NotFound if there is no such kernel.
  Status DeclareInPlace(std::string_view key, InPlace in_place);
  // Declares `fn` the tile function (kernel.h) of the elementwise kernel registered under
  // `key` (for kernels whose own dense form also takes rank-0 operands); NotFound if there
  // is no such kernel.
  Status DeclareTile(std::string_view key, TileFn fn);
  // Declares `fn` the bind function (kernel.h: BindFn) of the kernel registered under
  // `key`; NotFound if there is no such kernel.
  Status DeclareBind(std::string_view key, BindFn fn);
  // The kernel registered under `key`, or nullptr.
  KernelFn Find(std::string_view key) const;
  // The entry registered under `key`, or nullptr. Valid as long as the registry.
  const Entry* Lookup(std::string_view key) const;
  // All keys, sorted.
  std::vector<std::string> Keys() const;
  size_t size() const { return kernels_.size(); }

  // Scalar functions of elementwise ops (for body programs, scalar_program.h), keyed
  // like the kernels ("add.f32"). Opaque here; see ScalarFn in scalar_program.h.
  using ScalarFnPtr = void (*)();
  Status RegisterScalar(std::string key, ScalarFnPtr fn);
  ScalarFnPtr FindScalar(std::string_view key) const;

 private:
  Status Add(std::string key, Entry entry);

  std::map<std::string, Entry, std::less<>> kernels_;
  std::map<std::string, ScalarFnPtr, std::less<>> scalars_;
};

// Registers every CPU kernel of this library into `registry`.
Status RegisterCpuKernels(KernelRegistry& registry);

// A process-wide registry holding the CPU kernels, built on first use (thread-safe).
const KernelRegistry& CpuKernels();

}  // namespace stablert::kernels
