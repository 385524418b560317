// Folds the index arithmetic JAX emits around gathers and scatters into the gather or
// scatter step (kernels/gather_scatter_index.h), so the kernel reads the raw indices once.
// A plan pass after lowering: calls are inlined by then, so the patterns are plain step
// sequences whatever function boundaries JAX put around them.
//
// Folded, walking back from the step's index operand:
//   - views: broadcast_in_dim that only inserts unit dims (x[i]'s [N] -> [N,1]) and
//     reshape aliases; the step reads the source under the dims it expects (an alias);
//   - converts between integer types that keep every value (widening) or reinterpret the
//     same bytes (same width, e.g. u32 -> i32): the step reads the source's bytes; a
//     narrowing convert between signed types (JAX's i64 -> i32 under x64): the transform
//     keeps the low bits;
//   - negative-index normalization select(i < 0, i + n, i) with constant 0 and n: the
//     transform's wrap (on unsigned i, where it changes nothing, it is skipped);
//   - gather only, JAX's fill mode: select(all(lo <= idx <= hi), gather(x, idx), fill) with
//     the mask reduced over the index vector dim and broadcast over the slice: the
//     transform's fill mode with the fill value as a third input.
// Then a row gather whose only reader is a row scatter-add (f32, f64; operand, source and
// updates of rank 2, one index component: segment_sum(table[ids], segments)) is folded into
// it: the scatter becomes "scatter_add_gathered" reading the gather's source and indices, so
// the gathered [N, W] array is neither written nor read (kernels/gather_scatter_params.h).
// A value is walked through only when nothing outside the pattern reads it, so the folded
// producers become dead (DropDeadSteps removes them) and nothing is computed twice. Every
// other form is left as it is. The folded step computes exactly what the steps did.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/compare_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/gather_scatter_params.h"
#include "kernels/reduce_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using kernels::BroadcastInDimParams;
using kernels::CompareDirection;
using kernels::CompareParams;
using kernels::CompareType;
using kernels::GatherParams;
using kernels::IndexTransformParams;
using kernels::ScatterParams;
using kernels::ReduceParams;

std::string Key(std::string_view op, DType dtype) { return std::string(op) + "." + std::string(DTypeName(dtype)); }

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A constant seen through broadcasts: element `index` of a value is the constant's element
// at the sum over dims d with map[d] >= 0 of index[d] * strides[map[d]].
struct ConstantView {
  const std::vector<uint8_t>* bytes = nullptr;
  DType dtype = DType::kInvalid;
  Dims dims;              // the constant's dims
  std::vector<int> map;   // per value dim: the constant dim it reads, or -1
};

class Folder {
 public:
  Folder(ExecutionPlan& plan, std::vector<ValueId>& alias_root) : plan_(plan), alias_root_(alias_root) {
    const size_t n = plan.values.size();
    producer_.assign(n, nullptr);
    producers_.assign(n, 0);
    readers_.assign(n, {});
    external_.assign(n, false);
    Index(plan.body);
    for (ValueId v : plan.results) external_[Root(v)] = true;
  }

  void Run() { Fold(plan_.body); }

 private:
  ValueId Root(ValueId v) const { return alias_root_[v]; }
  const TensorType& TypeOf(ValueId v) const { return plan_.values[v].type; }

  void Index(Sequence& sequence) {
    for (Step& step : sequence.steps) {
      const bool kernel = step.kind == StepKind::kKernel;
      for (ValueId v : step.inputs) {
        if (kernel) readers_[Root(v)].push_back(&step);
        else external_[Root(v)] = true;
      }
      for (ValueId v : step.outputs) {
        if (!kernel) external_[Root(v)] = true;
        ++producers_[Root(v)];
        producer_[Root(v)] = &step;
      }
      for (Sequence& region : step.regions) Index(region);
    }
  }

  // The kernel step computing `v` itself (not an alias of it), if exactly one does.
  Step* Producer(ValueId v) const {
    if (Root(v) != v || producers_[v] != 1 || producer_[v] == nullptr || producer_[v]->kind != StepKind::kKernel)
      return nullptr;
    return producer_[v];
  }

  // Whether every reader of `v` (and of values sharing its storage) is one of `allowed`.
  bool OnlyReadBy(ValueId v, std::initializer_list<const Step*> allowed) const {
    const ValueId root = Root(v);
    if (external_[root]) return false;
    for (const Step* reader : readers_[root])
      if (std::find(allowed.begin(), allowed.end(), reader) == allowed.end()) return false;
    return true;
  }
  bool OnlyReadBy(ValueId v, const std::vector<const Step*>& allowed) const {
    const ValueId root = Root(v);
    if (external_[root]) return false;
    for (const Step* reader : readers_[root])
      if (std::find(allowed.begin(), allowed.end(), reader) == allowed.end()) return false;
    return true;
  }

  // Whether every step reading `v` (or values sharing its storage) is one of `allowed`;
  // unlike OnlyReadBy, `v` may also be a result or read by a control step.
  bool StepsReadingOnly(ValueId v, const std::vector<const Step*>& allowed) const {
    for (const Step* reader : readers_[Root(v)])
      if (std::find(allowed.begin(), allowed.end(), reader) == allowed.end()) return false;
    return true;
  }

  std::optional<ConstantView> Constant(ValueId v) const {
    const ValueId root = Root(v);
    const Value& value = plan_.values[root];
    const TensorType& type = TypeOf(v);
    if (value.storage == Storage::kConstant) {
      ConstantView c{&plan_.constants[static_cast<size_t>(value.index)], value.type.dtype, value.type.dims, {}};
      if (Count(c.dims) == 1) {
        c.map.assign(type.dims.size(), -1);
      } else if (type.dims == c.dims) {
        for (size_t d = 0; d < c.dims.size(); ++d) c.map.push_back(static_cast<int>(d));
      } else {
        return std::nullopt;
      }
      return c;
    }
    const Step* step = Producer(v);
    if (step == nullptr || step->kernel != Key("broadcast_in_dim", type.dtype) || step->inputs.size() != 1 ||
        step->params.As<BroadcastInDimParams>() == nullptr)
      return std::nullopt;
    std::optional<ConstantView> in = Constant(step->inputs[0]);
    if (!in) return std::nullopt;
    const Dims& in_dims = TypeOf(step->inputs[0]).dims;
    const std::vector<int64_t>& dims = step->params.As<BroadcastInDimParams>()->dimensions;
    if (dims.size() != in_dims.size()) return std::nullopt;
    std::vector<int> map(type.dims.size(), -1);
    for (size_t u = 0; u < dims.size(); ++u) {
      const size_t d = static_cast<size_t>(dims[u]);
      if (d >= map.size()) return std::nullopt;
      map[d] = in_dims[u] == 1 && type.dims[d] != 1 ? -1 : in->map[u];
    }
    in->map = std::move(map);
    return in;
  }

  static std::optional<int64_t> Element(const ConstantView& c, int64_t linear) {
    const int size = DTypeByteSize(c.dtype);
    const uint8_t* p = c.bytes->data() + linear * size;
    auto load = [p](auto value) {
      std::memcpy(&value, p, sizeof(value));
      return value;
    };
    switch (c.dtype) {
      case DType::kPred: return load(uint8_t{}) != 0 ? 1 : 0;
      case DType::kS8: return load(int8_t{});
      case DType::kS16: return load(int16_t{});
      case DType::kS32: return load(int32_t{});
      case DType::kS64: return load(int64_t{});
      case DType::kU8: return load(uint8_t{});
      case DType::kU16: return load(uint16_t{});
      case DType::kU32: return load(uint32_t{});
      case DType::kU64: {
        const uint64_t u = load(uint64_t{});
        if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
        return static_cast<int64_t>(u);
      }
      default: return std::nullopt;
    }
  }

  // The one value every element of `v` holds, if `v` is such a constant.
  std::optional<int64_t> Splat(ValueId v) const {
    std::optional<ConstantView> c = Constant(v);
    if (!c) return std::nullopt;
    std::optional<int64_t> first = Element(*c, 0);
    const int64_t n = Count(c->dims);
    for (int64_t i = 1; first && i < n; ++i)
      if (Element(*c, i) != first) return std::nullopt;
    return first;
  }

  // Per index vector component: the value a constant `v` (of the indices' shape) holds at
  // every position with that component, if it depends on nothing else.
  std::optional<std::vector<int64_t>> PerComponent(ValueId v, size_t vector_dim, size_t k) const {
    if (std::optional<int64_t> s = Splat(v)) return std::vector<int64_t>(k, *s);
    std::optional<ConstantView> c = Constant(v);
    const Dims& dims = TypeOf(v).dims;
    if (!c || vector_dim >= dims.size() || static_cast<size_t>(dims[vector_dim]) != k) return std::nullopt;
    for (size_t d = 0; d < dims.size(); ++d)
      if (d != vector_dim && dims[d] != 1 && c->map[d] >= 0) return std::nullopt;
    const int mapped = c->map[vector_dim];
    int64_t stride = 1;
    if (mapped >= 0)
      for (size_t e = static_cast<size_t>(mapped) + 1; e < c->dims.size(); ++e) stride *= c->dims[e];
    std::vector<int64_t> out;
    for (size_t j = 0; j < k; ++j) {
      std::optional<int64_t> e = Element(*c, mapped >= 0 ? static_cast<int64_t>(j) * stride : 0);
      if (!e) return std::nullopt;
      out.push_back(*e);
    }
    return out;
  }

  // Where a step's index operand comes from once views, converts and the normalization
  // are folded: read `value` as `read` (same bytes per element), then wrap by `wrap`.
  struct IndexSource {
    ValueId value;
    DType read;
    int64_t wrap = 0;
    int64_t bits = 0;  // narrowed to this many bits after the wrap (0: not)
  };

  IndexSource WalkIndices(ValueId x, std::vector<const Step*> allowed) const {
    IndexSource s{x, TypeOf(x).dtype, 0, 0};
    bool reinterpreted = false;
    while (OnlyReadBy(s.value, allowed)) {
      const ValueId u = s.value;
      if (Root(u) != u) {  // a reshape alias: same elements in the same order
        if (TypeOf(Root(u)).dtype != TypeOf(u).dtype) break;
        s.value = Root(u);
        continue;
      }
      Step* p = Producer(u);
      if (p == nullptr) break;
      const DType dtype = TypeOf(u).dtype;
      const BroadcastInDimParams* broadcast = p->params.As<BroadcastInDimParams>();
      if (p->kernel == Key("broadcast_in_dim", dtype) && p->inputs.size() == 1 && broadcast != nullptr &&
          Count(TypeOf(p->inputs[0]).dims) == Count(TypeOf(u).dims) &&
          std::is_sorted(broadcast->dimensions.begin(), broadcast->dimensions.end())) {
        s.value = p->inputs[0];  // inserts unit dims only: a view
        allowed = {p};
        continue;
      }
      if (!reinterpreted && p->inputs.size() == 1 && p->kernel.rfind("convert.", 0) == 0) {
        const DType from = TypeOf(p->inputs[0]).dtype;
        if (p->kernel != "convert." + std::string(DTypeName(from)) + "." + std::string(DTypeName(dtype)) ||
            !IsInteger(from) || !IsInteger(dtype))
          break;
        const int from_size = DTypeByteSize(from), to_size = DTypeByteSize(dtype);
        const bool from_signed = DTypeKindOf(from) == DTypeKind::kSigned;
        const bool to_signed = DTypeKindOf(dtype) == DTypeKind::kSigned;
        if (from_size == to_size) {
          s.read = dtype;  // the same bytes under the converted type
          reinterpreted = from != dtype;
        } else if (from_size < to_size && (!from_signed || to_signed)) {
          s.read = from;  // every value kept
        } else if (from_size > to_size && from_signed && to_signed && s.bits == 0 && s.wrap == 0) {
          s.read = from;  // the kernel keeps the low bits (after a wrap further up, as here)
          s.bits = 8 * to_size;
        } else {
          break;
        }
        s.value = p->inputs[0];
        allowed = {p};
        continue;
      }
      // select(compare(i, 0, LT), add(i, n), i): i < 0 becomes i + n; on unsigned i (JAX
      // emits it for them too) nothing is below 0 and the select is i itself.
      const bool is_signed = DTypeKindOf(dtype) == DTypeKind::kSigned;
      if ((is_signed ? s.wrap == 0 && !reinterpreted : DTypeKindOf(dtype) == DTypeKind::kUnsigned) &&
          p->kernel == Key("select", dtype) && p->inputs.size() == 3) {
        const ValueId i = p->inputs[2];
        const Step* less = Producer(p->inputs[0]);
        const Step* add = Producer(p->inputs[1]);
        if (less == nullptr || add == nullptr || less->kernel != Key("compare", dtype) || less->inputs.size() != 2 ||
            less->inputs[0] != i ||
            less->params != kernels::KernelParams(CompareParams{
                                      .direction = CompareDirection::kLt,
                                      .type = is_signed ? CompareType::kSigned : CompareType::kUnsigned}) ||
            Splat(less->inputs[1]) != 0)
          break;
        if (add->kernel != Key("add", dtype) || add->inputs.size() != 2) break;
        const ValueId n_value = add->inputs[0] == i ? add->inputs[1] : add->inputs[1] == i ? add->inputs[0] : i;
        if (n_value == i) break;
        std::optional<int64_t> n = Splat(n_value);
        if (!n || *n <= 0 || !OnlyReadBy(p->inputs[0], {p}) || !OnlyReadBy(p->inputs[1], {p})) break;
        if (is_signed) s.wrap = *n;
        s.value = i;
        allowed = {p, less, add};
        continue;
      }
      break;
    }
    return s;
  }

  // The value the folded step reads its indices from, typed as `want` (same element count
  // and element size as `s.value`'s).
  ValueId IndexOperand(const IndexSource& s, const Dims& dims) {
    const TensorType want{s.read, dims};
    if (TypeOf(s.value) == want) return s.value;
    Value value;
    value.type = want;
    value.byte_size = ByteSize(want);
    plan_.values.push_back(std::move(value));
    alias_root_.push_back(Root(s.value));
    return static_cast<ValueId>(plan_.values.size() - 1);
  }

  static IndexTransformParams Transform(IndexTransformParams::Mode mode, size_t k, const IndexSource& s,
                                        const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
    IndexTransformParams t;
    t.mode = mode;
    t.bits = s.bits;
    t.wrap.assign(k, s.wrap);
    t.lo = lo;
    t.hi = hi;
    return t;
  }

  // JAX's fill mode around gather `g`: select(mask, g, broadcast(fill)). Returns the select
  // step, the fill value, the compares reading the indices, and the bounds.
  struct FillPattern {
    Step* select = nullptr;
    ValueId fill = 0;
    const Step* lower = nullptr;
    const Step* upper = nullptr;
    std::vector<int64_t> lo, hi;
  };

  std::optional<FillPattern> MatchFill(const Step& g) const {
    const ValueId out = g.outputs[0];
    const DType dtype = TypeOf(out).dtype;
    const ValueId indices = g.inputs[1];
    const Dims& index_dims = TypeOf(indices).dims;
    const GatherParams& params = *g.params.As<GatherParams>();
    const size_t vector_dim = static_cast<size_t>(params.index_vector_dim);
    const size_t k = params.start_index_map.size();
    if (Root(out) != out || external_[out] || readers_[out].size() != 1 || vector_dim >= index_dims.size())
      return std::nullopt;
    Step* select = const_cast<Step*>(readers_[out][0]);
    if (select->kernel != Key("select", dtype) || select->inputs.size() != 3 || select->inputs[1] != out ||
        select->inputs[0] == out || select->inputs[2] == out)
      return std::nullopt;
    FillPattern f;
    f.select = select;
    // The fill value: a scalar broadcast.
    const Step* fill = Producer(select->inputs[2]);
    if (fill == nullptr || fill->kernel != Key("broadcast_in_dim", dtype) || fill->inputs.size() != 1 ||
        !TypeOf(fill->inputs[0]).dims.empty())
      return std::nullopt;
    f.fill = fill->inputs[0];
    // The mask, broadcast over the slice dims (the result's batch dims read the mask's).
    ValueId mask = select->inputs[0];
    const Step* mask_user = select;
    std::vector<int64_t> batch_positions;
    const std::vector<int64_t>& offset_dims = params.offset_dims;
    for (int64_t d = 0; d < static_cast<int64_t>(TypeOf(out).dims.size()); ++d)
      if (std::find(offset_dims.begin(), offset_dims.end(), d) == offset_dims.end()) batch_positions.push_back(d);
    Dims batch_dims;
    for (size_t d = 0; d < index_dims.size(); ++d)
      if (d != vector_dim) batch_dims.push_back(index_dims[d]);
    if (!OnlyReadBy(mask, {select})) return std::nullopt;
    if (const Step* b = Producer(mask); b != nullptr && b->kernel == Key("broadcast_in_dim", DType::kPred)) {
      const BroadcastInDimParams* broadcast = b->params.As<BroadcastInDimParams>();
      if (b->inputs.size() != 1 || broadcast == nullptr || broadcast->dimensions != batch_positions) return std::nullopt;
      mask = b->inputs[0];
      mask_user = b;
      if (!OnlyReadBy(mask, {b})) return std::nullopt;
    } else if (!offset_dims.empty()) {
      return std::nullopt;
    }
    if (TypeOf(mask).dims != batch_dims) return std::nullopt;
    (void)mask_user;
    // all over the index vector: reduce_and(and(indices >= lo, indices <= hi), true).
    const Step* all = Producer(mask);
    if (all == nullptr || all->kernel != Key("reduce_and", DType::kPred) || all->inputs.size() != 2 ||
        all->params !=
            kernels::KernelParams(ReduceParams{.dimensions = {static_cast<int64_t>(vector_dim)}}) ||
        Splat(all->inputs[1]) != 1 || !OnlyReadBy(all->inputs[0], {all}))
      return std::nullopt;
    const Step* both = Producer(all->inputs[0]);
    if (both == nullptr || both->kernel != Key("and", DType::kPred) || both->inputs.size() != 2) return std::nullopt;
    const DType index_type = TypeOf(indices).dtype;
    const CompareType compare_type =
        DTypeKindOf(index_type) == DTypeKind::kSigned ? CompareType::kSigned : CompareType::kUnsigned;
    for (ValueId side : both->inputs) {
      const Step* c = Producer(side);
      const CompareParams* compare = c == nullptr ? nullptr : c->params.As<CompareParams>();
      if (c == nullptr || c->kernel != Key("compare", index_type) || c->inputs.size() != 2 ||
          c->inputs[0] != indices || compare == nullptr || compare->type != compare_type ||
          !OnlyReadBy(side, {both}))
        return std::nullopt;
      std::optional<std::vector<int64_t>> bound = PerComponent(c->inputs[1], vector_dim, k);
      if (!bound) return std::nullopt;
      if (compare->direction == CompareDirection::kGe && f.lower == nullptr) {
        f.lower = c;
        f.lo = *bound;
      } else if (compare->direction == CompareDirection::kLe && f.upper == nullptr) {
        f.upper = c;
        f.hi = *bound;
      } else {
        return std::nullopt;
      }
    }
    return f;
  }

  void FoldGather(Step& g) {
    const GatherParams* params = g.params.As<GatherParams>();
    if (g.inputs.size() != 2 || g.outputs.size() != 1 || params == nullptr ||
        params->index_transform.mode != IndexTransformParams::Mode::kNone || !params->index_transform.wrap.empty() ||
        params->index_transform.bits != 0)
      return;
    const ValueId x = g.inputs[1];
    const size_t k = params->start_index_map.size();
    std::optional<FillPattern> fill = MatchFill(g);
    std::vector<const Step*> allowed = {&g};
    if (fill) allowed.insert(allowed.end(), {fill->lower, fill->upper});
    // x itself may also be a result (a unit-dim view of returned indices): the fill folds,
    // the walk below stops at x.
    if (fill && !StepsReadingOnly(x, allowed)) fill.reset();
    if (!fill) allowed = {&g};
    const IndexSource s = WalkIndices(x, allowed);
    if (!fill && s.value == x) return;
    const ValueId indices = IndexOperand(s, TypeOf(x).dims);
    if (!fill) {
      g.inputs[1] = indices;
      if (s.wrap != 0 || s.bits != 0) {
        GatherParams folded = *params;
        folded.index_transform = Transform(IndexTransformParams::Mode::kNone, k, s, {}, {});
        g.params = std::move(folded);
      }
      return;
    }
    // The folded gather takes the select's place and writes its result; the original
    // gather is left unread.
    Step folded = g;
    folded.inputs = {g.inputs[0], indices, fill->fill};
    folded.outputs = fill->select->outputs;
    GatherParams with_fill = *params;
    with_fill.index_transform = Transform(IndexTransformParams::Mode::kFill, k, s, fill->lo, fill->hi);
    folded.params = std::move(with_fill);
    *fill->select = std::move(folded);
  }

  void FoldScatter(Step& sc) {
    const ScatterParams* params = sc.params.As<ScatterParams>();
    if (sc.inputs.size() != 3 || params == nullptr ||
        params->index_transform.mode != IndexTransformParams::Mode::kNone || !params->index_transform.wrap.empty() ||
        params->index_transform.bits != 0)
      return;
    const ValueId x = sc.inputs[1];
    const IndexSource s = WalkIndices(x, {&sc});
    if (s.value == x) return;
    sc.inputs[1] = IndexOperand(s, TypeOf(x).dims);
    if (s.wrap != 0 || s.bits != 0) {
      ScatterParams folded = *params;
      folded.index_transform =
          Transform(IndexTransformParams::Mode::kNone, params->scatter_dims_to_operand_dims.size(), s, {}, {});
      sc.params = std::move(folded);
    }
  }

  // Whether `params` is a one-component index form of a rank-2 row op over `indices`:
  // indices [N, 1] with the vector dim last, or [N] with it implicit; returns N or -1.
  int64_t RowIndexPositions(ValueId indices, int64_t index_vector_dim) const {
    const Dims& dims = TypeOf(indices).dims;
    if (dims.size() == 2 && dims[1] == 1 && index_vector_dim == 1) return dims[0];
    if (dims.size() == 1 && index_vector_dim == 1) return dims[0];
    return -1;
  }

  void FoldGatherIntoScatterAdd(Step& sc) {
    const ScatterParams* sp = sc.params.As<ScatterParams>();
    if (sc.inputs.size() != 3 || sc.outputs.size() != 1 || sp == nullptr || !sp->body.empty() ||
        sp->update_window_dims != std::vector<int64_t>{1} || sp->inserted_window_dims != std::vector<int64_t>{0} ||
        !sp->input_batching_dims.empty() || !sp->scatter_indices_batching_dims.empty() ||
        sp->scatter_dims_to_operand_dims != std::vector<int64_t>{0} ||
        sp->index_transform.mode != IndexTransformParams::Mode::kNone)
      return;
    const ValueId updates = sc.inputs[2];
    Step* g = Producer(updates);
    if (g == nullptr || g->kernel != "gather." + std::string(DTypeName(TypeOf(updates).dtype)) || g->inputs.size() != 2 ||
        g->outputs.size() != 1 || !OnlyReadBy(updates, {&sc}))
      return;
    const GatherParams* gp = g->params.As<GatherParams>();
    if (gp == nullptr || gp->offset_dims != std::vector<int64_t>{1} || gp->collapsed_slice_dims != std::vector<int64_t>{0} ||
        !gp->operand_batching_dims.empty() || !gp->start_indices_batching_dims.empty() ||
        gp->start_index_map != std::vector<int64_t>{0} || gp->index_transform.mode != IndexTransformParams::Mode::kNone)
      return;
    const Dims& operand = TypeOf(sc.inputs[0]).dims;
    const Dims& source = TypeOf(g->inputs[0]).dims;
    const Dims& rows = TypeOf(updates).dims;
    if (operand.size() != 2 || source.size() != 2 || rows.size() != 2 || source[1] != operand[1] ||
        rows[1] != operand[1] || gp->slice_sizes != std::vector<int64_t>{1, operand[1]} || source[0] == 0)
      return;
    const int64_t n = RowIndexPositions(sc.inputs[1], sp->index_vector_dim);
    if (n < 0 || n != rows[0] || RowIndexPositions(g->inputs[1], gp->index_vector_dim) != n) return;
    kernels::GatheredScatterParams folded{sp->index_transform, gp->index_transform};
    sc.kernel = "scatter_add_gathered." + std::string(DTypeName(TypeOf(updates).dtype));
    sc.inputs = {sc.inputs[0], sc.inputs[1], g->inputs[0], g->inputs[1]};
    sc.params = std::move(folded);
    // The gather is left unread (DropDeadSteps removes it); its readers' index stays valid
    // for the other folds, which only walk index operands.
  }

  void Fold(Sequence& sequence) {
    for (size_t i = 0; i < sequence.steps.size(); ++i) {
      Step& step = sequence.steps[i];
      for (Sequence& region : step.regions) Fold(region);
      if (step.kind != StepKind::kKernel) continue;
      if (step.kernel.rfind("gather.", 0) == 0) FoldGather(step);
      else if (step.kernel.rfind("scatter_", 0) == 0) {
        FoldScatter(step);
        if (step.kernel == "scatter_add.f32" || step.kernel == "scatter_add.f64") FoldGatherIntoScatterAdd(step);
      }
    }
  }

  ExecutionPlan& plan_;
  std::vector<ValueId>& alias_root_;
  std::vector<Step*> producer_;             // per root value: a step writing it
  std::vector<int> producers_;              // per root value: how many steps write it
  std::vector<std::vector<const Step*>> readers_;  // per root value: kernel steps reading it
  std::vector<bool> external_;              // per root value: read by a result or a control step
};

}  // namespace

void FoldGatherScatterIndices(ExecutionPlan& plan, std::vector<ValueId>& alias_root) {
  Folder(plan, alias_root).Run();
}

}  // namespace stablert::plan
