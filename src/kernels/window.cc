// reduce_window kernels.
//
//   "reduce_window_<body>.<T>"  body in add, mul, max, min, and, or
//                               in: x, init (scalar)   out: windows reduced
//                               params: WindowParams
//   "reduce_window_program"     in: N operands, N init scalars   out: N arrays
//                               params: ReduceWindowProgramParams (the windows and the
//                               body program, as reduce_program's)
// (kernels/window_params.h).
// Each output element starts at init and folds in its window's elements in row-major
// window order. Positions in padding or base-dilation holes are skipped, as XLA's CPU
// backend does (StableHLO's spec would fold in the init value there; the two agree when
// init is the body's identity, which is what JAX emits). f16/bf16 round after every step.
// f32/f64/c64/c128 sums over windows longer than 32 elements accumulate pairwise
// (kernels/accumulate.h: leaves of 32 elements in window order, the leaves combined
// pairwise), and windows covering whole dimensions run as the reduce kernel (pairwise, see
// reduce.cc); windows of at most 32 elements are one running sum.
// Long scans (cumsum, cumprod, cummax, ...) of every type (kernels/scan.h), and f16/bf16
// windows covering whole dimensions, are grouped as XLA's CPU backend groups them.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/accumulate.h"
#include "kernels/complex_ops.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/reduce_params.h"
#include "kernels/registry.h"
#include "kernels/scalar_ops.h"
#include "kernels/scalar_program.h"
#include "kernels/scan.h"
#include "kernels/simd/scan_simd.h"
#include "kernels/strided.h"
#include "kernels/window_params.h"

namespace stablert::kernels {
namespace {

// For every output element and window position, the linear input index or -1 (padding).
// Calls visit(out_linear, window_position, input_linear) in row-major order of both.
class WindowWalker {
 public:
  // From reduce_window's windows.
  WindowWalker(const WindowParams& params, std::span<const int64_t> in_dims, std::span<const int64_t> out_dims)
      : WindowWalker(params.window_dimensions, params.window_strides, params.base_dilations, params.window_dilations,
                     params.padding_low, in_dims, out_dims) {}

  WindowWalker(std::span<const int64_t> window, std::span<const int64_t> strides,
               std::span<const int64_t> base_dilations, std::span<const int64_t> window_dilations,
               std::span<const int64_t> low, std::span<const int64_t> in_dims, std::span<const int64_t> out_dims)
      : rank_(in_dims.size()), out_dims_(out_dims) {
    DimVector in_strides = DenseStrides(in_dims);
    for (size_t d = 0; d < rank_; ++d) {
      window_.push_back(window[d]);
      dims_.push_back({strides[d], window_dilations[d], base_dilations[d], low[d], in_dims[d], in_strides[d]});
      // Per dimension: input offset (already multiplied by its stride) or -1, indexed by
      // out_index * window + window_index; computed on the fly where the table would be large.
      std::vector<int64_t> table;
      if (out_dims[d] * window[d] <= kMaxTable) {
        table.resize(static_cast<size_t>(out_dims[d] * window[d]));
        for (int64_t o = 0; o < out_dims[d]; ++o)
          for (int64_t w = 0; w < window[d]; ++w) table[static_cast<size_t>(o * window[d] + w)] = dims_[d].Offset(o, w);
      }
      tables_.push_back(std::move(table));
    }
  }

  template <typename Visit>
  void Run(int64_t out_elements, Visit visit) const {
    DimVector out_index(rank_, 0), w_index(rank_, 0);
    for (int64_t o = 0; o < out_elements; ++o) {
      bool empty_window = false;
      for (size_t d = 0; d < rank_; ++d) empty_window = empty_window || window_[d] == 0;
      if (!empty_window) {
        for (size_t d = 0; d < rank_; ++d) w_index[d] = 0;
        while (true) {
          int64_t linear = 0;
          bool padded = false;
          for (size_t d = 0; d < rank_; ++d) {
            int64_t offset = tables_[d].empty() ? dims_[d].Offset(out_index[d], w_index[d])
                                                : tables_[d][static_cast<size_t>(out_index[d] * window_[d] + w_index[d])];
            if (offset < 0) padded = true;
            linear += offset;
          }
          visit(o, padded ? -1 : linear);
          size_t d = rank_;
          bool done = true;
          while (d > 0) {
            --d;
            if (++w_index[d] < window_[d]) {
              done = false;
              break;
            }
            w_index[d] = 0;
          }
          if (done) break;
        }
      }
      for (size_t d = rank_; d-- > 0;) {
        if (++out_index[d] < out_dims_[d]) break;
        out_index[d] = 0;
      }
    }
  }

 private:
  static constexpr int64_t kMaxTable = int64_t{1} << 20;
  struct Dimension {
    int64_t stride, window_dilation, base_dilation, low, in_size, in_stride;
    // The input offset of window position w of output index o, or -1 in padding or holes.
    int64_t Offset(int64_t o, int64_t w) const {
      const int64_t position = o * stride + w * window_dilation - low;
      if (position < 0 || position % base_dilation != 0 || position / base_dilation >= in_size) return -1;
      return position / base_dilation * in_stride;
    }
  };
  size_t rank_;
  std::span<const int64_t> out_dims_;
  std::vector<int64_t> window_;
  std::vector<Dimension> dims_;
  std::vector<std::vector<int64_t>> tables_;
};

// Long scans (kernels/scan.h): false if the window is not one. Typed values run
// scan::ScanLines, split across the calls (vector steps for f32/f64/s32/s64 add, mul, max,
// min); ScalarSlot values (the variadic kernel's body program) run scan::ReferenceScans on
// blocks of lines gathered into [n][w] arrays, on the first call.
template <typename V, typename Steps>
bool ScanTree(const KernelContext& context, const KernelArgs& args, const WindowParams& params, const Steps& steps) {
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  scan::ScanForm form;
  if (!scan::MatchScan(params, in.dims, out.dims, &form)) return false;
  const auto [first, last] = ShareOf(context, scan::ScanUnits(form));
  scan::ScanLines(form, static_cast<const V*>(in.data), static_cast<V*>(out.data), steps, first, last);
  return true;
}

template <typename Combine>
bool ProgramScanTree(const KernelArgs& args, const WindowParams& params, const Combine& combine) {
  using V = ScalarSlot;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  scan::ScanForm form;
  if (!scan::MatchScan(params, in.dims, out.dims, &form)) return false;
  const int64_t n = form.n, inner = form.inner, out_n = form.out_n;
  const bool forward = !form.reverse, exclusive = form.exclusive;
  const size_t size = static_cast<size_t>(DTypeByteSize(in.dtype));
  V init{};
  std::memcpy(&init, args.inputs[1].data, size);
  const auto* src = static_cast<const uint8_t*>(in.data);
  auto* dst = static_cast<uint8_t*>(out.data);
  // Lines (outer index o, inner index kk: element i at (o * n + i) * inner + kk) in blocks
  // of up to `width` consecutive lines, about 64 KB of values per [n][w] array.
  const int64_t lines = form.outer * inner;
  const int64_t width = std::clamp<int64_t>((int64_t{1} << 16) / (n * static_cast<int64_t>(sizeof(V))), 1, 64);
  std::vector<V> line(static_cast<size_t>(n * width)), scanned(line.size());
  std::vector<int64_t> in_base(static_cast<size_t>(width)), out_base(in_base.size());
  for (int64_t l0 = 0; l0 < lines; l0 += width) {
    const int64_t w = std::min(width, lines - l0);
    for (int64_t k = 0; k < w; ++k) {
      const int64_t o = (l0 + k) / inner, kk = (l0 + k) % inner;
      in_base[static_cast<size_t>(k)] = o * n * inner + kk;
      out_base[static_cast<size_t>(k)] = o * out_n * inner + kk;
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < w; ++k)
        std::memcpy(&line[static_cast<size_t>(i * w + k)], src + static_cast<size_t>(in_base[static_cast<size_t>(k)] + i * inner) * size, size);
    scan::ReferenceScans(line.data(), n, w, form.reverse, scanned.data(), init, combine);
    for (int64_t i = 0; i < out_n; ++i) {
      const int64_t from = !exclusive ? i : forward ? i - 1 : i;
      for (int64_t k = 0; k < w; ++k) {
        const V& v = from < 0 || from >= n ? init : scanned[static_cast<size_t>(from * w + k)];
        std::memcpy(dst + static_cast<size_t>(out_base[static_cast<size_t>(k)] + i * inner) * size, &v, size);
      }
    }
  }
  return true;
}

// The vector scan steps (simd/scan_simd.h) for T and Body where they exist.
template <typename Body, typename T>
constexpr bool kVectorScan =
    (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
     std::is_same_v<T, int64_t>) &&
    (std::is_same_v<Body, ops::AddOp> || std::is_same_v<Body, ops::MaxOp> || std::is_same_v<Body, ops::MinOp> ||
     (std::is_same_v<Body, ops::MultiplyOp> && !std::is_same_v<T, int64_t>));

template <typename Body, typename T>
struct VectorScanSteps {
  static constexpr simd::ScanBody kBody = std::is_same_v<Body, ops::AddOp>        ? simd::ScanBody::kAdd
                                          : std::is_same_v<Body, ops::MultiplyOp> ? simd::ScanBody::kMul
                                          : std::is_same_v<Body, ops::MaxOp>      ? simd::ScanBody::kMax
                                                                                  : simd::ScanBody::kMin;
  T init;
  T One(T a, T b) const { return Body::Apply(a, b); }
  void Tile(bool reverse, const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t w, const T* e,
            T* total) const {
    simd::ScanTile(kBody, reverse, x, xs, y, ys, rows, w, init, e, total);
  }
  void Carry(T* y, int64_t ys, int64_t rows, int64_t w, const T* e) const { simd::ScanCarry(kBody, y, ys, rows, w, e); }
  bool Running(bool reverse, const T* x, T* y, int64_t n) const {
    return (kBody == simd::ScanBody::kMax || kBody == simd::ScanBody::kMin) && simd::ScanRunning(kBody, reverse, x, y, n, init);
  }
  void Line(bool reverse, const T* x, T* y, int64_t n, bool stream, const T* floor) const {
    simd::ScanLine(kBody, reverse, x, y, n, init, stream, floor);
  }
};

// XLA's CPU backend turns a reduce_window whose windows each cover whole dimensions (no
// padding or dilation) into a reduce, which then follows its tree-reduction rewrite. For
// f16/bf16 sums and products this decides the rounding, and f32/f64/complex sums are then
// pairwise, so such windows run as the reduce kernel `reduce_<body>` does; false if the
// window is not of that form.
template <typename Body>
Status WholeDimensionReduce(const KernelContext& context, const KernelArgs& args, bool* done) {
  *done = false;
  std::string_view body;
  if constexpr (std::is_same_v<Body, ops::AddOp> || std::is_same_v<Body, cx::AddOp>) body = "reduce_add";
  else if constexpr (std::is_same_v<Body, ops::MultiplyOp>) body = "reduce_mul";
  else return OkStatus();
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  const WindowParams& params = args.Params<WindowParams>();
  ReduceParams reduce;
  std::vector<int64_t>& reduced = reduce.dimensions;
  std::vector<int64_t> kept;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    if (params.base_dilations[d] != 1 || params.window_dilations[d] != 1 || params.padding_low[d] != 0 ||
        params.padding_high[d] != 0)
      return OkStatus();
    const int64_t window = params.window_dimensions[d];
    if (window == 1) {
      kept.push_back(in.dims[d]);
    } else if (window == in.dims[d] && out.dims[d] == 1) {
      reduced.push_back(static_cast<int64_t>(d));
    } else {
      return OkStatus();
    }
  }
  if (reduced.empty()) return OkStatus();
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(KernelKey(body, {in.dtype}));
  if (entry == nullptr) return OkStatus();
  BufferView result = out;
  result.dims = kept;
  const BufferView outputs[] = {result};
  KernelArgs reduce_args;
  reduce_args.inputs = args.inputs;
  reduce_args.outputs = outputs;
  reduce_args.params = &reduce;  // the reduce kernels take ReduceParams (reduce.cc)
  *done = true;
  return entry->fn(context, reduce_args);
}

template <typename Body, DType D>
Status ReduceWindowKernel(const KernelContext& context, const KernelArgs& args) {
  using T = Storage<D>;
  using C = Compute<T>;
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  // Scans (cumsum, cummax, ...) in linear time, grouped as XLA groups them, split across
  // the calls of the step; the other forms run on the first call alone (WholeDimensionReduce
  // hands the call's share to the splittable reduce kernel).
  const WindowParams& params = args.Params<WindowParams>();
  const T scan_init = args.inputs[1].as<const T>()[0];
  if constexpr (kVectorScan<Body, T>) {
    if (ScanTree<T>(context, args, params, VectorScanSteps<Body, T>{scan_init})) return OkStatus();
  } else {
    auto combine = [](T acc, T x) { return StoreAs<T>(Body::Apply(Load(acc), Load(x))); };
    if (ScanTree<T>(context, args, params, scan::GenericScanSteps<T, decltype(combine)>{combine, scan_init}))
      return OkStatus();
  }
  constexpr bool pairwise_sum =
      !kIsHalf<T> && ((std::is_same_v<Body, ops::AddOp> && std::is_floating_point_v<T>) || std::is_same_v<Body, cx::AddOp>);
  if constexpr (kIsHalf<T> || pairwise_sum) {
    bool done = false;
    STABLERT_RETURN_IF_ERROR(WholeDimensionReduce<Body>(context, args, &done));
    if (done) return OkStatus();
  }
  if (context.thread_index != 0) return OkStatus();
  const T init = args.inputs[1].as<const T>()[0];
  const T* src = in.as<const T>();
  std::vector<C> acc(static_cast<size_t>(out.num_elements), Load(init));
  WindowWalker walker(params, in.dims, out.dims);
  if constexpr (pairwise_sum) {
    // Each output's window elements arrive consecutively: one cascade at a time.
    pairwise::ScalarCascade<C> cascade(pairwise::kLeafRows, Load(init));
    int64_t current = -1;
    walker.Run(out.num_elements, [&](int64_t o, int64_t linear) {
      if (o != current) {
        if (current >= 0) acc[static_cast<size_t>(current)] = cascade.Result();
        cascade.Reset(Load(init));
        current = o;
      }
      if (linear >= 0) cascade.Push(src[linear]);
    });
    if (current >= 0) acc[static_cast<size_t>(current)] = cascade.Result();
  } else {
    // f16/bf16 round to their format after every step, as XLA's CPU backend does.
    auto step = [](C a, T x) -> C {
      if constexpr (kIsHalf<T>) return Load(StoreAs<T>(Body::Apply(a, Load(x))));
      else return Body::Apply(a, x);
    };
    walker.Run(out.num_elements, [&](int64_t o, int64_t linear) {
      if (linear >= 0) acc[static_cast<size_t>(o)] = step(acc[static_cast<size_t>(o)], src[linear]);
    });
  }
  T* dst = out.as<T>();
  for (int64_t i = 0; i < out.num_elements; ++i) dst[i] = StoreAs<T>(acc[static_cast<size_t>(i)]);
  return OkStatus();
}

StatusOr<PreparedStep> PrepareWindowProgram(const KernelArgs& args) {
  STABLERT_ASSIGN_OR_RETURN(ScalarProgram program,
                            ScalarProgram::Decode(args.Params<ReduceWindowProgramParams>().body, CpuKernels()));
  const size_t n = args.outputs.size();
  if (static_cast<size_t>(program.num_inputs()) != 2 * n || program.outputs().size() != n)
    return InvalidArgument("reduce_window body arity does not match its operands");
  for (size_t i = 0; i < n; ++i) {
    DType dtype = args.inputs[i].dtype;
    if (program.register_dtype(static_cast<int>(i)) != dtype || program.register_dtype(static_cast<int>(n + i)) != dtype ||
        program.register_dtype(program.outputs()[i]) != dtype)
      return InvalidArgument("reduce_window body types do not match its operands");
  }
  return KernelState(std::make_shared<const ScalarProgram>(std::move(program)));
}

Status ReduceWindowProgramKernel(const KernelContext&, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("ReduceWindowProgram called without its prepared state");
  const auto& program = *static_cast<const ScalarProgram*>(args.state);
  const WindowParams& params = args.Params<ReduceWindowProgramParams>().window;
  const size_t n = args.outputs.size();
  const BufferView& out0 = args.outputs[0];
  if (out0.num_elements == 0) return OkStatus();
  std::vector<ScalarSlot> registers(static_cast<size_t>(program.num_registers()));
  program.Initialize(registers.data());
  if (n == 1) {
    const int32_t result = program.outputs()[0];
    auto combine = [&](ScalarSlot acc, ScalarSlot x) {
      registers[0] = acc;
      registers[1] = x;
      program.Run(registers.data());
      return registers[static_cast<size_t>(result)];
    };
    if (ProgramScanTree(args, params, combine)) return OkStatus();
  }
  std::vector<int> sizes(n);
  std::vector<ScalarSlot> acc(static_cast<size_t>(out0.num_elements) * n), staged(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = DTypeByteSize(args.outputs[i].dtype);
    ScalarSlot init{};
    std::memcpy(&init, args.inputs[n + i].data, sizes[i]);
    for (int64_t o = 0; o < out0.num_elements; ++o) acc[static_cast<size_t>(o) * n + i] = init;
  }
  WindowWalker walker(params, args.inputs[0].dims, out0.dims);
  walker.Run(out0.num_elements, [&](int64_t o, int64_t linear) {
    if (linear < 0) return;
    for (size_t i = 0; i < n; ++i) {
      registers[i] = acc[static_cast<size_t>(o) * n + i];
      std::memcpy(&registers[n + i], static_cast<const uint8_t*>(args.inputs[i].data) + linear * sizes[i], sizes[i]);
    }
    program.Run(registers.data());
    for (size_t i = 0; i < n; ++i) staged[i] = registers[static_cast<size_t>(program.outputs()[i])];
    for (size_t i = 0; i < n; ++i) acc[static_cast<size_t>(o) * n + i] = staged[i];
  });
  for (size_t i = 0; i < n; ++i) {
    auto* dst = static_cast<uint8_t*>(args.outputs[i].data);
    for (int64_t o = 0; o < out0.num_elements; ++o)
      std::memcpy(dst + o * sizes[i], &acc[static_cast<size_t>(o) * n + i], sizes[i]);
  }
  return OkStatus();
}

// select_and_scatter: "select_and_scatter.<T>" (every element type, complex too)
//   in: operand, source, init (scalar)   out: operand-shaped result
//   params: SelectAndScatterParams (windows, select program (a, b) -> i1, scatter program
//           (a, b) -> T)
// For each window (one per source element) the selected operand element is the first in
// row-major window order that select(current, candidate) keeps over every later one;
// the result, filled with init, gets scatter(result[selected], source) there. Windows
// positions in padding are skipped.
struct SelectScatterPrograms {
  ScalarProgram select, scatter;
};

StatusOr<PreparedStep> PrepareSelectAndScatter(const KernelArgs& args) {
  const SelectAndScatterParams& params = args.Params<SelectAndScatterParams>();
  const DType dtype = args.inputs[0].dtype;
  auto state = std::make_shared<SelectScatterPrograms>();
  STABLERT_ASSIGN_OR_RETURN(state->select, ScalarProgram::Decode(params.select, CpuKernels()));
  STABLERT_ASSIGN_OR_RETURN(state->scatter, ScalarProgram::Decode(params.scatter, CpuKernels()));
  for (const ScalarProgram* program : {&state->select, &state->scatter}) {
    if (program->num_inputs() != 2 || program->outputs().size() != 1 || program->register_dtype(0) != dtype ||
        program->register_dtype(1) != dtype)
      return InvalidArgument("select_and_scatter bodies must take two values of the operand type");
  }
  if (state->select.register_dtype(state->select.outputs()[0]) != DType::kPred ||
      state->scatter.register_dtype(state->scatter.outputs()[0]) != dtype)
    return InvalidArgument("select must return i1 and scatter the operand type");
  return KernelState(std::move(state));
}

Status SelectAndScatterKernel(const KernelContext&, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("SelectAndScatter called without its prepared state");
  const auto& programs = *static_cast<const SelectScatterPrograms*>(args.state);
  const BufferView& operand = args.inputs[0];
  const BufferView& source = args.inputs[1];
  const BufferView& out = args.outputs[0];
  const int size = DTypeByteSize(operand.dtype);
  auto* result = static_cast<uint8_t*>(out.data);
  const auto* data = static_cast<const uint8_t*>(operand.data);
  const auto* src = static_cast<const uint8_t*>(source.data);
  for (int64_t i = 0; i < out.num_elements; ++i) std::memcpy(result + i * size, args.inputs[2].data, size);
  if (source.num_elements == 0 || operand.num_elements == 0) return OkStatus();
  std::vector<ScalarSlot> select_registers(static_cast<size_t>(programs.select.num_registers()));
  std::vector<ScalarSlot> scatter_registers(static_cast<size_t>(programs.scatter.num_registers()));
  programs.select.Initialize(select_registers.data());
  programs.scatter.Initialize(scatter_registers.data());
  const int32_t keep = programs.select.outputs()[0], scattered = programs.scatter.outputs()[0];
  const std::vector<int64_t> ones(operand.dims.size(), 1);
  const SelectAndScatterParams& params = args.Params<SelectAndScatterParams>();
  WindowWalker walker(params.window_dimensions, params.window_strides, ones, ones, params.padding_low, operand.dims,
                      source.dims);
  int64_t current = -1, selected = -1;
  auto finish = [&]() {
    if (current < 0 || selected < 0) return;
    std::memcpy(&scatter_registers[0], result + selected * size, size);
    std::memcpy(&scatter_registers[1], src + current * size, size);
    programs.scatter.Run(scatter_registers.data());
    std::memcpy(result + selected * size, &scatter_registers[static_cast<size_t>(scattered)], size);
  };
  walker.Run(source.num_elements, [&](int64_t o, int64_t linear) {
    if (o != current) {
      finish();
      current = o;
      selected = -1;
    }
    if (linear < 0) return;
    if (selected < 0) {
      selected = linear;
      return;
    }
    std::memcpy(&select_registers[0], data + selected * size, size);
    std::memcpy(&select_registers[1], data + linear * size, size);
    programs.select.Run(select_registers.data());
    if (!GetSlot<uint8_t>(select_registers[static_cast<size_t>(keep)])) selected = linear;
  });
  finish();
  return OkStatus();
}

template <typename Body, DType... Ds>
Status Register(KernelRegistry& registry, std::string_view name, DTypeList<Ds...> list) {
  return ForEachDType(list, [&]<DType D>() {
    return registry.RegisterSplittable<WindowParams>(KernelKey(name, {D}), &ReduceWindowKernel<Body, D>);
  });
}

using Pred = DTypeList<DType::kPred>;
using IntAndFloatDTypes =
    DTypeList<DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8, DType::kU16, DType::kU32,
              DType::kU64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64>;
using IntAndPredDTypes = DTypeList<DType::kPred, DType::kS8, DType::kS16, DType::kS32, DType::kS64, DType::kU8,
                                   DType::kU16, DType::kU32, DType::kU64>;

}  // namespace

Status RegisterWindowKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(Register<ops::AddOp>(r, "reduce_window_add", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::OrOp>(r, "reduce_window_add", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::MultiplyOp>(r, "reduce_window_mul", IntAndFloatDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::AndOp>(r, "reduce_window_mul", Pred{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::MaxOp>(r, "reduce_window_max", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::MinOp>(r, "reduce_window_min", AllDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::AndOp>(r, "reduce_window_and", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<ops::OrOp>(r, "reduce_window_or", IntAndPredDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<cx::AddOp>(r, "reduce_window_add", ComplexDTypes{}));
  STABLERT_RETURN_IF_ERROR(Register<cx::MultiplyOp>(r, "reduce_window_mul", ComplexDTypes{}));
  STABLERT_RETURN_IF_ERROR(r.Register<ReduceWindowProgramParams>("reduce_window_program", &ReduceWindowProgramKernel,
                                                                  &PrepareWindowProgram));
  auto select_and_scatter = [&]<DType D>() {
    return r.Register<SelectAndScatterParams>(KernelKey("select_and_scatter", {D}), &SelectAndScatterKernel,
                                              &PrepareSelectAndScatter);
  };
  STABLERT_RETURN_IF_ERROR(ForEachDType(AllDTypes{}, select_and_scatter));
  // Complex values fit a scalar slot (16 bytes); the bodies compare and combine them.
  STABLERT_RETURN_IF_ERROR(ForEachDType(ComplexDTypes{}, select_and_scatter));
  return OkStatus();
}

}  // namespace stablert::kernels
