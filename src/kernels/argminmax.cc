// argmax/argmin reductions recognized from their body (argminmax.h).
#include "kernels/argminmax.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/argminmax_params.h"
#include "kernels/families.h"
#include "kernels/registry.h"
#include "kernels/scalar_program.h"
#include "kernels/simd/argminmax_simd.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

// Canonical text of each register's value as an expression over the arguments a, i, b, j;
// or/and are flattened and sorted, == and != sorted, > and >= written as swapped < and <=.
class Symbolic {
 public:
  explicit Symbolic(std::span<const int64_t> code) : code_(code) {}

  bool Run(std::vector<std::string>* outputs, std::vector<DType>* dtypes) {
    size_t p = 0;
    auto next = [&](int64_t* v) {
      if (p >= code_.size()) return false;
      *v = code_[p++];
      return true;
    };
    int64_t version, registers, inputs, constants, count;
    if (!next(&version) || version != 1 || !next(&registers) || registers < 4) return false;
    dtypes->resize(static_cast<size_t>(registers));
    for (auto& dtype : *dtypes) {
      int64_t ordinal;
      if (!next(&ordinal)) return false;
      auto d = DTypeFromOrdinal(static_cast<int>(ordinal));
      if (!d) return false;
      dtype = *d;
    }
    if (!next(&inputs) || inputs != 4 || !next(&constants) || constants != 0 || !next(&count)) return false;
    std::vector<std::string> value(static_cast<size_t>(registers));
    value[0] = "a", value[1] = "i", value[2] = "b", value[3] = "j";
    auto reg = [&](int64_t r) -> const std::string& { return value[static_cast<size_t>(r)]; };
    for (int64_t n = 0; n < count; ++n) {
      int64_t f[6];
      for (int64_t& field : f)
        if (!next(&field)) return false;
      const auto op = static_cast<ScalarOp>(f[0]);
      for (int k = 1; k < 5; ++k)
        if (f[k] < 0 || f[k] >= registers) return false;
      std::string& dst = value[static_cast<size_t>(f[1])];
      if (op == ScalarOp::kCompare) {
        const int64_t direction = f[5] / 8, type = f[5] % 8;
        const bool is_float = IsFloat((*dtypes)[static_cast<size_t>(f[2])]);
        if (is_float ? type != 1 : type != 3) return false;  // FLOAT, SIGNED
        std::string x = reg(f[2]), y = reg(f[3]);
        static const char* kNames[] = {"eq", "ne", "le", "lt", "le", "lt"};
        if (direction < 0 || direction > 5) return false;
        if (direction == 2 || direction == 3) std::swap(x, y);       // x >= y  is  y <= x
        if ((direction == 0 || direction == 1) && y < x) std::swap(x, y);  // symmetric
        dst = std::string(kNames[direction]) + (is_float ? "f(" : "s(") + x + "," + y + ")";
      } else if (op == ScalarOp::kOr || op == ScalarOp::kAnd) {
        const std::string name = op == ScalarOp::kOr ? "or" : "and";
        std::vector<std::string> terms;
        for (const std::string* t : {&reg(f[2]), &reg(f[3])}) {
          if (t->rfind(name + "{", 0) == 0) {
            // Flatten: split the inner terms of a same-named group at top-level commas.
            const std::string inner = t->substr(name.size() + 1, t->size() - name.size() - 2);
            int depth = 0;
            size_t start = 0;
            for (size_t k = 0; k <= inner.size(); ++k) {
              if (k == inner.size() || (inner[k] == ';' && depth == 0)) {
                terms.push_back(inner.substr(start, k - start));
                start = k + 1;
              } else if (inner[k] == '(' || inner[k] == '{') {
                ++depth;
              } else if (inner[k] == ')' || inner[k] == '}') {
                --depth;
              }
            }
          } else {
            terms.push_back(*t);
          }
        }
        std::sort(terms.begin(), terms.end());
        terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
        std::string joined;
        for (const auto& t : terms) joined += (joined.empty() ? "" : ";") + t;
        dst = name + "{" + joined + "}";
      } else if (op == ScalarOp::kSelect) {
        dst = "sel(" + reg(f[2]) + "," + reg(f[3]) + "," + reg(f[4]) + ")";
      } else {
        return false;
      }
    }
    int64_t results;
    if (!next(&results) || results != 2) return false;
    for (int k = 0; k < 2; ++k) {
      int64_t r;
      if (!next(&r) || r < 0 || r >= registers) return false;
      outputs->push_back(value[static_cast<size_t>(r)]);
    }
    return p == code_.size();
  }

 private:
  static bool IsFloat(DType d) { return d == DType::kF32 || d == DType::kF64; }
  std::span<const int64_t> code_;
};

std::string Expected(bool is_max, bool index) {
  const std::string better = is_max ? "ltf(b,a)" : "ltf(a,b)";
  const std::string keep_v = "or{" + std::min(better, std::string("nef(a,a)")) + ";" +
                             std::max(better, std::string("nef(a,a)")) + "}";
  if (!index) return "sel(" + keep_v + ",a,b)";
  std::vector<std::string> terms = {better, "nef(a,a)", "and{eqf(a,b);lts(i,j)}"};
  std::sort(terms.begin(), terms.end());
  return "sel(or{" + terms[0] + ";" + terms[1] + ";" + terms[2] + "},i,j)";
}

// The body on scalars (the definition the vector loops reproduce).
template <bool kMax, typename V, typename I>
inline void StepOne(V& value, I& index, V x, I idx) {
  const bool keep_value = (kMax ? value > x : value < x) || std::isnan(value);
  const bool keep_index = keep_value || (value == x && index < idx);
  if (!keep_value) value = x;
  if (!keep_index) index = idx;
}

template <typename V, typename I>
void Row(bool is_max, const V* x, const I* idx, int64_t n, V* value, I* index) {
  if constexpr ((std::is_same_v<V, float> && std::is_same_v<I, int32_t>) ||
                (std::is_same_v<V, double> && std::is_same_v<I, int64_t>) ||
                (std::is_same_v<V, float> && std::is_same_v<I, int64_t>)) {
    simd::ArgRow(is_max, x, idx, n, value, index);
  } else {
    for (int64_t k = 0; k < n; ++k) {
      if (is_max) StepOne<true>(*value, *index, x[k], idx[k]);
      else StepOne<false>(*value, *index, x[k], idx[k]);
    }
  }
}

template <typename V, typename I>
void Rows(bool is_max, V* value, I* index, const V* x, const I* idx, int64_t stride, int64_t count, int64_t width) {
  if constexpr ((std::is_same_v<V, float> && std::is_same_v<I, int32_t>) ||
                (std::is_same_v<V, double> && std::is_same_v<I, int64_t>)) {
    simd::ArgRows(is_max, value, index, x, idx, stride, count, width);
  } else {
    for (int64_t r = 0; r < count; ++r)
      for (int64_t c = 0; c < width; ++c) {
        if (is_max) StepOne<true>(value[c], index[c], x[r * stride + c], idx[r * stride + c]);
        else StepOne<false>(value[c], index[c], x[r * stride + c], idx[r * stride + c]);
      }
  }
}

template <typename V, typename I>
Status Run(bool is_max, std::span<const int64_t> dimensions, const KernelContext& context, const KernelArgs& args,
           bool* done) {
  const BufferView& in = args.inputs[0];
  const V* x = args.inputs[0].as<const V>();
  const I* idx = args.inputs[1].as<const I>();
  const V init_value = args.inputs[2].as<const V>()[0];
  const I init_index = args.inputs[3].as<const I>()[0];
  V* value = args.outputs[0].as<V>();
  I* index = args.outputs[1].as<I>();
  // Runs of reduced (flag 1) or kept dims, size-1 dims dropped.
  const size_t rank = in.dims.size();
  DimVector is_reduced(rank, 0), size(rank), flag(rank);
  for (int64_t d : dimensions) is_reduced[static_cast<size_t>(d)] = 1;
  size_t n = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (in.dims[i] == 1) continue;
    if (n > 0 && flag[n - 1] == is_reduced[i]) {
      size[n - 1] *= in.dims[i];
      continue;
    }
    size[n] = in.dims[i];
    flag[n] = is_reduced[i];
    ++n;
  }
  auto init = [&](int64_t begin, int64_t end) {
    std::fill(value + begin, value + end, init_value);
    std::fill(index + begin, index + end, init_index);
  };
  if (n == 1 && flag[0] == 1) {  // everything to one element
    *done = true;
    if (context.thread_index != 0) return OkStatus();
    init(0, 1);
    Row(is_max, x, idx, size[0], value, index);
  } else if (n == 2 && flag[0] == 0) {  // rows
    *done = true;
    const int64_t length = size[1];
    const auto [begin, end] = ShareOf(context, size[0]);
    init(begin, end);
    for (int64_t r = begin; r < end; ++r) Row(is_max, x + r * length, idx + r * length, length, value + r, index + r);
  } else if ((n == 2 || n == 3) && flag[n - 1] == 0 && flag[n - 2] == 1) {  // columns, [outer,] rows, columns
    *done = true;
    const int64_t outer = n == 3 ? size[0] : 1, rows = size[n - 2], width = size[n - 1];
    constexpr int64_t kChunk = 16;
    const int64_t chunks = (width + kChunk - 1) / kChunk;
    const auto [begin, end] = ShareOf(context, outer * chunks);
    for (int64_t u = begin; u < end;) {
      // A run of chunks within one outer block.
      const int64_t o = u / chunks, c0 = u % chunks, c1 = std::min(chunks, c0 + (end - u));
      const int64_t first = c0 * kChunk, last = std::min(width, c1 * kChunk);
      V* v = value + o * width + first;
      I* i = index + o * width + first;
      std::fill(v, v + (last - first), init_value);
      std::fill(i, i + (last - first), init_index);
      const int64_t base = o * rows * width + first;
      Rows(is_max, v, i, x + base, idx + base, width, rows, last - first);
      u += c1 - c0;
    }
  }
  return OkStatus();
}

//===--- "argminmax.<V>.<I>": indices are positions along the reduced dimension ---===//

// The state of the fold after some elements: (value, index) as the body leaves them.
template <typename V>
struct Folded {
  V value;
  int64_t index;
};

// The fold over x[0..n) whose element k has index `base + k`, from its first element. The
// body is associative on (value, index) pairs (the first NaN; else the best value, the
// smallest index among the elements equal to it, the bits of the last of those), so long
// runs are folded in pieces and the pieces combined in order with StepOne.
template <typename V>
Folded<V> FoldRun(bool is_max, const V* x, int64_t n, int64_t base) {
  constexpr int64_t kPiece = int64_t{1} << 30;  // positions within a piece fit in 32 bits
  Folded<V> acc{};
  for (int64_t begin = 0; begin < n; begin += kPiece) {
    const int64_t length = std::min(kPiece, n - begin);
    Folded<V> piece{};
    simd::ArgRowIota(is_max, x + begin, length, &piece.value, &piece.index);
    piece.index += base + begin;
    if (begin == 0) {
      acc = piece;
    } else if (is_max) {
      StepOne<true>(acc.value, acc.index, piece.value, piece.index);
    } else {
      StepOne<false>(acc.value, acc.index, piece.value, piece.index);
    }
  }
  return acc;
}

// Writes init folded with `folded` (the elements come after the init values).
template <typename V, typename I>
inline void Finish(bool is_max, V init_value, I init_index, Folded<V> folded, V* value, I* index) {
  V v = init_value;
  I i = init_index;
  const I j = static_cast<I>(folded.index);
  if (is_max) StepOne<true>(v, i, folded.value, j);
  else StepOne<false>(v, i, folded.value, j);
  *value = v;
  *index = i;
}

// Partial folds of the calls of one split whole-array step, keyed by its output buffer
// (distinct for steps running concurrently).
struct IotaPartials {
  std::mutex mu;
  struct Pending {
    std::vector<Folded<double>> partials;  // one per call, V's bits in a double
    int arrived = 0;
  };
  std::map<const void*, Pending> pending;
};

IotaPartials& Partials() {
  static IotaPartials* table = new IotaPartials;
  return *table;
}

constexpr int64_t kMinElementsToSplit = int64_t{1} << 18;

template <typename V, typename I>
Status IotaKernel(const KernelContext& context, const KernelArgs& args) {
  const ArgMinMaxParams& params = args.Params<ArgMinMaxParams>();
  const BufferView& in = args.inputs[0];
  const bool is_max = params.is_max;
  const V* x = in.as<const V>();
  const V init_value = args.inputs[1].as<const V>()[0];
  const I init_index = args.inputs[2].as<const I>()[0];
  V* value = args.outputs[0].as<V>();
  I* index = args.outputs[1].as<I>();
  const auto dim = static_cast<size_t>(params.dimension);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dim; ++d) outer *= in.dims[d];
  for (size_t d = dim + 1; d < in.dims.size(); ++d) inner *= in.dims[d];
  const int64_t rows = in.dims[dim];
  const int64_t outputs = outer * inner;
  const bool split = context.thread_count > 1 && in.num_elements >= kMinElementsToSplit;
  if (!split && context.thread_index != 0) return OkStatus();
  const KernelContext share = split ? context : KernelContext{};
  if (rows == 0) {  // nothing to fold: the init values
    const auto [begin, end] = ShareOf(share, outputs);
    std::fill(value + begin, value + end, init_value);
    std::fill(index + begin, index + end, init_index);
    return OkStatus();
  }
  if (outputs == 1) {  // the whole array
    const auto [begin, end] = ShareOf(share, rows);
    Folded<V> mine{V(0), -1};  // index -1: an empty share
    if (begin < end) mine = FoldRun(is_max, x + begin, end - begin, begin);
    if (!split) {
      Finish(is_max, init_value, init_index, mine, value, index);
      return OkStatus();
    }
    IotaPartials& table = Partials();
    std::vector<Folded<double>> partials;
    {
      std::lock_guard<std::mutex> lock(table.mu);
      IotaPartials::Pending& pending = table.pending[value];
      pending.partials.resize(static_cast<size_t>(context.thread_count));
      Folded<double>& slot = pending.partials[static_cast<size_t>(context.thread_index)];
      std::memcpy(&slot.value, &mine.value, sizeof(V));
      slot.index = mine.index;
      if (++pending.arrived < context.thread_count) return OkStatus();
      partials = std::move(pending.partials);
      table.pending.erase(value);
    }
    bool any = false;
    Folded<V> acc{};
    for (const Folded<double>& p : partials) {  // in call order: the shares' order
      if (p.index < 0) continue;
      Folded<V> f{};
      std::memcpy(&f.value, &p.value, sizeof(V));
      f.index = p.index;
      if (!any) acc = f;
      else if (is_max) StepOne<true>(acc.value, acc.index, f.value, f.index);
      else StepOne<false>(acc.value, acc.index, f.value, f.index);
      any = true;
    }
    Finish(is_max, init_value, init_index, acc, value, index);
    return OkStatus();
  }
  if (inner == 1) {  // rows
    const auto [begin, end] = ShareOf(share, outer);
    for (int64_t r = begin; r < end; ++r)
      Finish(is_max, init_value, init_index, FoldRun(is_max, x + r * rows, rows, 0), value + r, index + r);
    return OkStatus();
  }
  if (rows > INT32_MAX) return Unimplemented("argminmax: more than 2^31 - 1 rows over kept columns");
  // [outer, rows, inner]: strips of columns of each outer block, the strip's accumulators
  // in L1 while the rows stream through.
  using P = std::conditional_t<sizeof(V) == 4, int32_t, int64_t>;
  constexpr int64_t kStrip = 4096 / sizeof(V);
  const int64_t strips = (inner + kStrip - 1) / kStrip;
  const auto [unit_begin, unit_end] = ShareOf(share, outer * strips);
  P position[kStrip];
  for (int64_t unit = unit_begin; unit < unit_end; ++unit) {
    const int64_t o = unit / strips, first = (unit % strips) * kStrip;
    const int64_t width = std::min(kStrip, inner - first);
    V* v = value + o * inner + first;
    I* i = index + o * inner + first;
    simd::ArgColumnsIota(is_max, x + o * rows * inner + first, inner, rows, width, v, position);
    for (int64_t c = 0; c < width; ++c)
      Finish(is_max, init_value, init_index, Folded<V>{v[c], position[c]}, v + c, i + c);
  }
  return OkStatus();
}


}  // namespace

ArgKind MatchArgMinMaxBody(std::span<const int64_t> encoding) {
  std::vector<std::string> outputs;
  std::vector<DType> dtypes;
  if (!Symbolic(encoding).Run(&outputs, &dtypes)) return ArgKind::kNone;
  if (dtypes[0] != dtypes[2] || dtypes[1] != dtypes[3]) return ArgKind::kNone;
  if (dtypes[0] != DType::kF32 && dtypes[0] != DType::kF64) return ArgKind::kNone;
  if (dtypes[1] != DType::kS32 && dtypes[1] != DType::kS64) return ArgKind::kNone;
  for (bool is_max : {true, false})
    if (outputs[0] == Expected(is_max, false) && outputs[1] == Expected(is_max, true))
      return is_max ? ArgKind::kArgMax : ArgKind::kArgMin;
  return ArgKind::kNone;
}

Status RunArgMinMax(ArgKind kind, std::span<const int64_t> dimensions, const KernelContext& context,
                    const KernelArgs& args, bool* done) {
  *done = false;
  if (kind == ArgKind::kNone || args.inputs.size() != 4 || args.outputs.size() != 2) return OkStatus();
  if (args.inputs[0].num_elements == 0) return OkStatus();
  const bool is_max = kind == ArgKind::kArgMax;
  const DType v = args.inputs[0].dtype, i = args.inputs[1].dtype;
  if (v == DType::kF32 && i == DType::kS32) return Run<float, int32_t>(is_max, dimensions, context, args, done);
  if (v == DType::kF32 && i == DType::kS64) return Run<float, int64_t>(is_max, dimensions, context, args, done);
  if (v == DType::kF64 && i == DType::kS32) return Run<double, int32_t>(is_max, dimensions, context, args, done);
  if (v == DType::kF64 && i == DType::kS64) return Run<double, int64_t>(is_max, dimensions, context, args, done);
  return OkStatus();
}

Status RegisterArgMinMaxKernels(KernelRegistry& registry) {
  STABLERT_RETURN_IF_ERROR(registry.RegisterSplittable<ArgMinMaxParams>(
      KernelKey("argminmax", {DType::kF32, DType::kS32}), &IotaKernel<float, int32_t>));
  STABLERT_RETURN_IF_ERROR(registry.RegisterSplittable<ArgMinMaxParams>(
      KernelKey("argminmax", {DType::kF32, DType::kS64}), &IotaKernel<float, int64_t>));
  STABLERT_RETURN_IF_ERROR(registry.RegisterSplittable<ArgMinMaxParams>(
      KernelKey("argminmax", {DType::kF64, DType::kS32}), &IotaKernel<double, int32_t>));
  return registry.RegisterSplittable<ArgMinMaxParams>(KernelKey("argminmax", {DType::kF64, DType::kS64}),
                                                      &IotaKernel<double, int64_t>);
}

}  // namespace stablert::kernels
