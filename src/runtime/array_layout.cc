#include "runtime/array_layout.h"

#include <cstring>
#include <map>
#include <span>

#include "base/thread_pool.h"
#include "ir/op_table.h"
#include "kernels/data_movement_params.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"

namespace stablert::runtime {

MajorToMinor NormalizeLayout(MajorToMinor m2m) {
  for (size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<int64_t>(i)) return m2m;
  return {};
}

Status CheckLayout(const MajorToMinor& m2m, size_t rank, const std::string& what) {
  if (m2m.empty()) return OkStatus();
  std::vector<bool> seen(rank, false);
  bool ok = m2m.size() == rank;
  for (int64_t d : m2m) {
    if (!ok || d < 0 || d >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(d)]) {
      ok = false;
      break;
    }
    seen[static_cast<size_t>(d)] = true;
  }
  if (ok) return OkStatus();
  std::string text;
  for (int64_t d : m2m) text += (text.empty() ? "" : ",") + std::to_string(d);
  return InvalidArgument(what + ": layout (major_to_minor " + text + ") is not a permutation of the " +
                         std::to_string(rank) + " dimensions");
}

Dims PhysicalDims(const Dims& dims, const MajorToMinor& m2m) {
  if (m2m.empty()) return dims;
  Dims physical;
  for (int64_t d : m2m) physical.push_back(dims[static_cast<size_t>(d)]);
  return physical;
}

std::vector<int64_t> MinorToMajor(const MajorToMinor& m2m, size_t rank) {
  std::vector<int64_t> result;
  if (m2m.empty()) {
    for (size_t d = rank; d-- > 0;) result.push_back(static_cast<int64_t>(d));
  } else {
    result.assign(m2m.rbegin(), m2m.rend());
  }
  return result;
}

std::string LayoutToString(const MajorToMinor& m2m, size_t rank) {
  std::string text = "{";
  for (int64_t d : MinorToMajor(m2m, rank)) text += (text.size() > 1 ? "," : "") + std::to_string(d);
  return text + "}";
}

namespace {

// dst = transpose(src) with output dim i = input dim perm[i], on the transpose kernel (split
// over the shared pool from 64K elements, as plan steps are).
void Transpose(const void* src, const Dims& src_dims, DType dtype, const std::vector<int64_t>& perm, void* dst) {
  const int64_t count = ElementCount(src_dims);
  if (count == 0) return;
  Dims out_dims;
  for (int64_t p : perm) out_dims.push_back(src_dims[static_cast<size_t>(p)]);
  const kernels::KernelRegistry::Entry* entry =
      kernels::CpuKernels().Lookup(kernels::KernelKey("transpose", {dtype}));
  const kernels::TransposeParams params{perm};
  kernels::BufferView in{const_cast<void*>(src), dtype, src_dims, count};
  kernels::BufferView out{dst, dtype, out_dims, count};
  const kernels::KernelArgs args{std::span<const kernels::BufferView>(&in, 1),
                                 std::span<const kernels::BufferView>(&out, 1), &params};
  if (entry == nullptr) {
    // Element types without a transpose kernel (none today): element by element.
    const size_t size = DTypeByteSize(dtype);
    Dims in_strides = RowMajorStrides(src_dims);
    std::vector<int64_t> index(out_dims.size(), 0);
    for (int64_t linear = 0; linear < count; ++linear) {
      int64_t offset = 0;
      for (size_t i = 0; i < index.size(); ++i) offset += index[i] * in_strides[static_cast<size_t>(perm[i])];
      std::memcpy(static_cast<char*>(dst) + linear * size, static_cast<const char*>(src) + offset * size, size);
      for (size_t i = index.size(); i-- > 0;) {
        if (++index[i] < out_dims[i]) break;
        index[i] = 0;
      }
    }
    return;
  }
  constexpr int64_t kMinElementsToSplit = 1 << 16;
  const int parts = count >= kMinElementsToSplit ? ThreadPool::Shared().parallelism() : 1;
  if (parts <= 1) {
    entry->fn(kernels::KernelContext{}, args).IgnoreError();
    return;
  }
  ThreadPool::Shared().ParallelFor(parts, [&](int part) {
    entry->fn(kernels::KernelContext{part, parts}, args).IgnoreError();
  });
}

}  // namespace

void CopyBetweenLayouts(const void* src, const Dims& dims, DType dtype, const MajorToMinor& from,
                        const MajorToMinor& to, void* dst) {
  // Physical dim q of the destination is logical dim to[q], which lies at physical dim
  // from^-1(to[q]) of the source (identities where a layout is empty).
  const size_t rank = dims.size();
  std::vector<int64_t> from_inverse(rank);
  for (size_t q = 0; q < rank; ++q)
    from_inverse[from.empty() ? q : static_cast<size_t>(from[q])] = static_cast<int64_t>(q);
  std::vector<int64_t> perm(rank);
  bool identity = true;
  for (size_t q = 0; q < rank; ++q) {
    perm[q] = from_inverse[to.empty() ? q : static_cast<size_t>(to[q])];
    identity = identity && perm[q] == static_cast<int64_t>(q);
  }
  if (identity) {
    std::memcpy(dst, src, static_cast<size_t>(ElementCount(dims)) * DTypeByteSize(dtype));
    return;
  }
  Transpose(src, PhysicalDims(dims, from), dtype, perm, dst);
}

void CopyRowMajorToLayout(const void* src, const Dims& dims, DType dtype, const MajorToMinor& m2m, void* dst) {
  CopyBetweenLayouts(src, dims, dtype, {}, m2m, dst);
}

void CopyLayoutToRowMajor(const void* src, const Dims& dims, DType dtype, const MajorToMinor& m2m, void* dst) {
  CopyBetweenLayouts(src, dims, dtype, m2m, {}, dst);
}

namespace {

// A "{1,0}" minor_to_major list (XLA's layout text) as major_to_minor.
StatusOr<MajorToMinor> ParseLayoutText(std::string_view text, size_t rank, const std::string& what) {
  const std::string original(text);
  auto bad = [&] {
    return InvalidArgument(what + ": mhlo.layout_mode '" + original +
                           "' is not 'default', 'auto' or a minor_to_major list such as '{1,0}'");
  };
  if (text.size() < 2 || text.front() != '{') return bad();
  const size_t close = text.find('}');
  if (close == std::string_view::npos) return bad();
  // Anything after the minor_to_major list (tiles, memory space) is not supported.
  if (close + 1 != text.size())
    return Unimplemented(what + ": mhlo.layout_mode '" + original +
                         "' has tiles or other parts beyond the minor_to_major list; StableRT supports "
                         "dimension permutations only");
  std::vector<int64_t> minor_to_major;
  std::string_view body = text.substr(1, close - 1);
  while (!body.empty()) {
    size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    int64_t value = 0;
    if (item.empty()) return bad();
    for (char c : item) {
      if (c == ' ') continue;
      if (c < '0' || c > '9') return bad();
      value = value * 10 + (c - '0');
      if (value > 64) return bad();
    }
    minor_to_major.push_back(value);
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  MajorToMinor m2m(minor_to_major.rbegin(), minor_to_major.rend());
  if (rank == 0 && m2m.empty()) return MajorToMinor{};
  STABLERT_RETURN_IF_ERROR(CheckLayout(m2m, rank, what));
  return NormalizeLayout(std::move(m2m));
}

enum class Mode { kDefault, kAuto, kExplicit };

StatusOr<Mode> ReadMode(const ir::Attribute::Dictionary& attrs, size_t rank, const std::string& what,
                        MajorToMinor& m2m) {
  const ir::Attribute* attr = ir::FindAttr(attrs, "mhlo.layout_mode");
  if (attr == nullptr) return Mode::kDefault;
  auto text = attr->AsString();
  if (!text) return InvalidArgument(what + ": mhlo.layout_mode is not a string");
  if (*text == "default") return Mode::kDefault;
  if (*text == "auto") return Mode::kAuto;
  STABLERT_ASSIGN_OR_RETURN(m2m, ParseLayoutText(*text, rank, what));
  return Mode::kExplicit;
}

// The layout in which `value` (defined in the entry's body) costs nothing to produce from what
// it is computed from: through transposes, LayoutConstraint custom calls and sharding
// annotations back to a parameter (in its layout) or any other value (row-major).
MajorToMinor ChosenLayout(const ir::Module& module, const std::map<ir::ValueId, const ir::Operation*>& definer,
                          const std::map<ir::ValueId, MajorToMinor>& parameter_layouts, ir::ValueId value,
                          int depth = 0) {
  if (auto p = parameter_layouts.find(value); p != parameter_layouts.end()) return p->second;
  auto it = definer.find(value);
  if (it == definer.end() || depth > 64) return {};
  const ir::Operation& op = *it->second;
  const size_t rank = static_cast<size_t>(module.type_of(value).rank());
  switch (op.code) {
    case ir::OpCode::kTranspose: {
      const ir::Attribute* attr = op.attr("permutation");
      auto perm = attr ? attr->AsIntArray() : std::nullopt;
      if (!perm || perm->size() != rank || op.operands.size() != 1) return {};
      MajorToMinor in = ChosenLayout(module, definer, parameter_layouts, op.operands[0], depth + 1);
      if (in.empty())
        for (size_t d = 0; d < rank; ++d) in.push_back(static_cast<int64_t>(d));
      // Result dim i is operand dim perm[i]: the result in the layout listing, major first,
      // the result dims of the operand's dims in its order has the operand's bytes.
      std::vector<int64_t> inverse(rank);
      for (size_t i = 0; i < rank; ++i) inverse[static_cast<size_t>((*perm)[i])] = static_cast<int64_t>(i);
      MajorToMinor out;
      for (int64_t d : in) out.push_back(inverse[static_cast<size_t>(d)]);
      return NormalizeLayout(std::move(out));
    }
    case ir::OpCode::kCustomCall: {
      const ir::Attribute* target = op.attr("call_target_name");
      auto name = target ? target->AsString() : std::nullopt;
      if (!name || op.operands.size() != 1 || op.results.size() != 1) return {};
      if (*name == "LayoutConstraint") {
        const ir::Attribute* layouts = op.attr("result_layouts");
        const auto* list = layouts ? layouts->get<ir::Attribute::Array>() : nullptr;
        if (list == nullptr || list->empty()) return {};
        auto minor_to_major = (*list)[0].AsIntArray();
        if (!minor_to_major) return {};
        MajorToMinor m2m(minor_to_major->rbegin(), minor_to_major->rend());
        if (!CheckLayout(m2m, rank, "LayoutConstraint").ok()) return {};
        return NormalizeLayout(std::move(m2m));
      }
      if (*name == "Sharding" || *name == "SPMDFullToShardShape" || *name == "SPMDShardToFullShape")
        return ChosenLayout(module, definer, parameter_layouts, op.operands[0], depth + 1);
      return {};
    }
    case ir::OpCode::kSdyShardingConstraint:
      return ChosenLayout(module, definer, parameter_layouts, op.operands[0], depth + 1);
    default:
      return {};
  }
}

}  // namespace

StatusOr<EntryLayouts> ReadEntryLayouts(const ir::Module& module, const ir::Function& entry) {
  EntryLayouts layouts;
  const size_t num_parameters = entry.argument_types.size(), num_results = entry.result_types.size();
  static const ir::Attribute::Dictionary kNone;
  std::map<ir::ValueId, MajorToMinor> parameter_layouts;
  const ir::Block* body = entry.body.blocks.empty() ? nullptr : &entry.body.blocks.front();
  for (size_t i = 0; i < num_parameters; ++i) {
    const auto& attrs = i < entry.argument_attrs.size() ? entry.argument_attrs[i] : kNone;
    MajorToMinor m2m;
    const size_t rank = static_cast<size_t>(entry.argument_types[i].rank());
    STABLERT_ASSIGN_OR_RETURN(Mode mode, ReadMode(attrs, rank, "PJRT_Client_Compile: argument " + std::to_string(i), m2m));
    (void)mode;  // "auto" parameters take the row-major layout
    if (body && i < body->arguments.size()) parameter_layouts[body->arguments[i]] = m2m;
    layouts.parameters.push_back(std::move(m2m));
    layouts.token_parameters.push_back(entry.argument_types[i].kind == ir::Type::Kind::kToken);
  }
  std::map<ir::ValueId, const ir::Operation*> definer;
  const ir::Operation* terminator = nullptr;
  if (body) {
    for (const ir::Operation& op : body->ops)
      for (ir::ValueId r : op.results) definer[r] = &op;
    if (!body->ops.empty()) terminator = &body->ops.back();
  }
  for (size_t i = 0; i < num_results; ++i) {
    const auto& attrs = i < entry.result_attrs.size() ? entry.result_attrs[i] : kNone;
    MajorToMinor m2m;
    const size_t rank = static_cast<size_t>(entry.result_types[i].rank());
    STABLERT_ASSIGN_OR_RETURN(Mode mode, ReadMode(attrs, rank, "PJRT_Client_Compile: result " + std::to_string(i), m2m));
    if (mode == Mode::kAuto && terminator && i < terminator->operands.size() && entry.result_types[i].dims.size() == rank)
      m2m = ChosenLayout(module, definer, parameter_layouts, terminator->operands[i]);
    layouts.results.push_back(std::move(m2m));
    layouts.token_results.push_back(entry.result_types[i].kind == ir::Type::Kind::kToken);
  }
  return layouts;
}

}  // namespace stablert::runtime
