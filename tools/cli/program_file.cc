#include "program_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "base/dtype.h"
#include "kernels/half.h"
#include "npy.h"
#include "stablehlo/read_module.h"

namespace stablert::cli {
namespace {

constexpr char kBytecodeMagic[] = "ML\xefR";

// splitmix64: a small, well-mixed generator whose sequence is fixed by its seed.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A float in [-1, 1) with 8 significant bits, so that every float type holds it exactly.
float RandomUnit(uint64_t& state) { return static_cast<float>(static_cast<int>(NextRandom(state) >> 56) - 128) / 128.0f; }

void FillRandom(host::Literal& literal, uint64_t& state) {
  std::optional<DType> dtype = DTypeFromOrdinal(static_cast<int>(literal.type));
  int64_t bytes = static_cast<int64_t>(literal.bytes.size());
  uint8_t* out = literal.bytes.data();
  switch (*dtype) {
    case DType::kF32: case DType::kC64:
      for (int64_t i = 0; i < bytes / 4; ++i) {
        float v = RandomUnit(state);
        std::memcpy(out + 4 * i, &v, 4);
      }
      return;
    case DType::kF64: case DType::kC128:
      for (int64_t i = 0; i < bytes / 8; ++i) {
        double v = RandomUnit(state);
        std::memcpy(out + 8 * i, &v, 8);
      }
      return;
    case DType::kF16:
      for (int64_t i = 0; i < bytes / 2; ++i) {
        // In software: _Float16 conversions would need libgcc 12 (the wheel's glibc tag).
        uint16_t v = kernels::FloatToF16(RandomUnit(state)).bits;
        std::memcpy(out + 2 * i, &v, 2);
      }
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < bytes / 2; ++i) {
        uint16_t v = kernels::FloatToBF16(RandomUnit(state)).bits;
        std::memcpy(out + 2 * i, &v, 2);
      }
      return;
    case DType::kPred:
      for (int64_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(NextRandom(state) & 1);
      return;
    default:
      break;
  }
  if (IsInteger(*dtype)) {
    // Small values: in range for every width, and sums of a few of them do not overflow.
    int width = DTypeByteSize(*dtype);
    bool is_signed = DTypeKindOf(*dtype) == DTypeKind::kSigned;
    int bits = DTypeBitWidth(*dtype);
    int64_t span = bits >= 5 ? 16 : (int64_t{1} << bits);
    for (int64_t i = 0; i < bytes / width; ++i) {
      int64_t v = static_cast<int64_t>(NextRandom(state) % static_cast<uint64_t>(span));
      if (is_signed) v -= span / 2;
      std::memcpy(out + width * i, &v, static_cast<size_t>(width));  // little-endian low bytes
    }
    return;
  }
  // 8-bit and narrower float formats: zeros (every such format has an exact zero).
  std::memset(out, 0, literal.bytes.size());
}

}  // namespace

namespace {

StatusOr<ArgumentSpec> SpecOf(const ir::Type& type, const std::string& what) {
  if (type.kind != ir::Type::Kind::kTensor)
    return Unimplemented(what + ": entry arguments and results other than tensors (tokens, tuples) are not supported here");
  ArgumentSpec spec;
  spec.type = static_cast<PJRT_Buffer_Type>(static_cast<int>(type.dtype));
  spec.dims.assign(type.dims.begin(), type.dims.end());
  return spec;
}

// The sharding a result carries, or the one the program computes it with when it carries none.
StatusOr<passes::TensorSharding> ResultSharding(const ir::Module& module, const ir::Function& entry, size_t i,
                                                int partitions, const std::string& what) {
  const ir::Attribute::Dictionary& attrs = entry.result_attrs.size() > i ? entry.result_attrs[i] : ir::Attribute::Dictionary{};
  const ir::Attribute* sdy = ir::FindAttr(attrs, "sdy.sharding");
  bool annotated = (sdy && !passes::IsUnconstrainedSharding(*sdy)) || ir::FindAttr(attrs, "mhlo.sharding");
  if (!annotated)
    if (std::optional<passes::TensorSharding> propagated = passes::PropagatedResultSharding(module, entry, i, partitions))
      return *propagated;
  return passes::ParseSharding(module, attrs, entry.result_types[i].rank(), partitions, what);
}

}  // namespace

StatusOr<ProgramFile> LoadProgramFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the program file");
  std::stringstream bytes;
  bytes << in.rdbuf();
  return LoadProgram(bytes.str(), path);
}

StatusOr<ProgramFile> LoadProgram(std::string bytes, const std::string& path) {
  ProgramFile file;
  file.program.code = std::move(bytes);
  file.program.format = "mlir";
  if (LooksLikeJaxExport(file.program.code)) {
    StatusOr<ExportedArtifact> exported = ReadJaxExport(file.program.code);
    if (!exported.ok()) return exported.status().WithPrefix(path);
    file.program.code = exported->module;
    file.exported = std::move(*exported);
    file.kind = "jax.export";
  } else if (file.program.code.compare(0, 4, kBytecodeMagic) != 0) {
    file.kind = "text";  // sent to the plugin as written; read here only for its signature
  } else {
    file.kind = "bytecode";
  }
  StatusOr<std::unique_ptr<ir::Module>> module = stablehlo::ReadModule(file.program.code);
  // Text StableRT's reader refuses may still be a program another plugin compiles: it goes
  // to the plugin, which reports its own error, and its inputs must come from --in.
  if (!module.ok() && file.kind == "text") return file;
  if (!module.ok()) return module.status().WithPrefix(path);
  const ir::Function* entry = (*module)->EntryFunction();
  if (!entry) return InvalidArgument(path + ": the program has no entry function (main)");
  for (size_t i = 0; i < entry->argument_types.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ArgumentSpec spec, SpecOf(entry->argument_types[i], path + ": argument " + std::to_string(i)));
    file.arguments.push_back(std::move(spec));
  }
  for (size_t i = 0; i < entry->result_types.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ArgumentSpec spec, SpecOf(entry->result_types[i], path + ": result " + std::to_string(i)));
    file.results.push_back(std::move(spec));
  }
  if (const ir::Attribute* partitions = ir::FindAttr((*module)->attrs, "mhlo.num_partitions"))
    if (std::optional<int64_t> n = partitions->AsInt()) file.num_partitions = static_cast<int>(*n);
  if (const ir::Attribute* replicas = ir::FindAttr((*module)->attrs, "mhlo.num_replicas"))
    if (std::optional<int64_t> n = replicas->AsInt()) file.num_replicas = static_cast<int>(*n);
  if (file.num_partitions < 1 || file.num_replicas < 1 || file.num_partitions > 4096 || file.num_replicas > 4096)
    return InvalidArgument(path + ": mhlo.num_partitions / mhlo.num_replicas out of range");
  if (file.exported) {
    if (file.exported->num_devices != file.num_devices())
      return InvalidArgument(path + ": the artifact is for " + std::to_string(file.exported->num_devices) +
                             " devices, its module for " + std::to_string(file.num_replicas) + " replicas x " +
                             std::to_string(file.num_partitions) + " partitions");
    if (file.exported->platforms.size() > 1 && file.arguments.size() == file.exported->module_kept_var_idx.size() + 1)
      return Unimplemented(path + ": the artifact is exported for several platforms (its module takes a platform "
                           "index first); export it for one platform");
  }
  file.uses_shardy = !(*module)->meshes.empty();
  for (const ir::Attribute::Dictionary& attrs : entry->argument_attrs)
    file.uses_shardy |= ir::FindAttr(attrs, "sdy.sharding") != nullptr;
  if (file.exported && file.exported->module_kept_var_idx.size() == file.arguments.size()) {
    // The module's arguments are the artifact's kept inputs: their types must match.
    for (size_t i = 0; i < file.arguments.size(); ++i) {
      size_t input = static_cast<size_t>(file.exported->module_kept_var_idx[i]);
      if (input >= file.exported->inputs.size() || file.exported->inputs[input].type != file.arguments[i].type)
        return InvalidArgument(path + ": the artifact's input " + std::to_string(input) +
                               " does not match its module's argument " + std::to_string(i));
    }
  }
  if (file.num_partitions > 1) {
    for (size_t i = 0; i < file.arguments.size(); ++i) {
      std::string what = path + ": argument " + std::to_string(i);
      STABLERT_ASSIGN_OR_RETURN(passes::TensorSharding sharding,
                                passes::ParseSharding(**module, entry->argument_attrs[i], entry->argument_types[i].rank(),
                                                      file.num_partitions, what));
      STABLERT_ASSIGN_OR_RETURN(passes::ShardLayout layout,
                                passes::LayoutShards(sharding, file.arguments[i].dims, file.num_partitions, what));
      if (layout.partial_group_size != 1) return Unimplemented(what + ": unreduced (partial-sum) inputs");
      file.argument_layouts.push_back(std::move(layout));
    }
    for (size_t i = 0; i < file.results.size(); ++i) {
      std::string what = path + ": result " + std::to_string(i);
      STABLERT_ASSIGN_OR_RETURN(passes::TensorSharding sharding, ResultSharding(**module, *entry, i, file.num_partitions, what));
      STABLERT_ASSIGN_OR_RETURN(passes::ShardLayout layout,
                                passes::LayoutShards(sharding, file.results[i].dims, file.num_partitions, what));
      file.result_layouts.push_back(std::move(layout));
    }
  }
  file.has_signature = true;
  return file;
}

namespace {

// Copies the block at `starts` of extent `block` between a dense `global` array of `dims` and a
// dense block buffer, `element` bytes per element; to_block picks the direction.
void CopyBlock(uint8_t* global, const Dims& dims, uint8_t* block, const Dims& starts, const Dims& extent,
               size_t element, bool to_block) {
  size_t rank = dims.size();
  if (rank == 0) {
    to_block ? std::memcpy(block, global, element) : std::memcpy(global, block, element);
    return;
  }
  int64_t count = 1;
  for (int64_t e : extent) count *= e;
  if (count == 0) return;
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * dims[d];
  std::vector<int64_t> index(rank, 0);
  size_t row = static_cast<size_t>(extent[rank - 1]) * element;
  for (int64_t done = 0; done < count; done += extent[rank - 1]) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += (starts[d] + index[d]) * strides[d];
    uint8_t* g = global + static_cast<size_t>(offset) * element;
    to_block ? std::memcpy(block, g, row) : std::memcpy(g, block, row);
    block += row;
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < extent[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

StatusOr<host::Literal> ShardOf(const host::Literal& given, const passes::ShardLayout& layout, int partition) {
  // Blocks are cut from row-major bytes (a Fortran-order input is reordered first).
  host::Literal dense;
  if (!given.byte_strides.empty()) {
    STABLERT_ASSIGN_OR_RETURN(dense, host::ToRowMajor(given.view()));
  }
  const host::Literal& global = given.byte_strides.empty() ? given : dense;
  host::Literal shard{global.type, layout.local_dims, {}};
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, host::DenseBytes(shard.type, shard.dims));
  STABLERT_ASSIGN_OR_RETURN(int64_t element, host::DenseBytes(shard.type, {1}));
  shard.bytes.resize(static_cast<size_t>(bytes));
  CopyBlock(const_cast<uint8_t*>(global.bytes.data()), global.dims, shard.bytes.data(),
            layout.starts.at(static_cast<size_t>(partition)), layout.local_dims, static_cast<size_t>(element), true);
  return shard;
}

Status PlaceShard(const host::Literal& shard, const passes::ShardLayout& layout, int partition, host::Literal& global) {
  if (shard.dims != layout.local_dims)
    return Internal("partition " + std::to_string(partition) + "'s output is " + DescribeLiteral(shard) +
                    "; its sharding gives blocks of " + DescribeLiteral(host::Literal{shard.type, layout.local_dims, {}}));
  STABLERT_ASSIGN_OR_RETURN(int64_t element, host::DenseBytes(shard.type, {1}));
  CopyBlock(global.bytes.data(), global.dims, const_cast<uint8_t*>(shard.bytes.data()),
            layout.starts.at(static_cast<size_t>(partition)), layout.local_dims, static_cast<size_t>(element), false);
  return OkStatus();
}

StatusOr<InputKind> ParseInputKind(const std::string& text) {
  if (text == "random") return InputKind::kRandom;
  if (text == "zeros") return InputKind::kZeros;
  return InvalidArgument("--inputs '" + text + "': expected 'random' or 'zeros'");
}

StatusOr<std::vector<host::Literal>> MakeInputs(const ProgramFile& file, const std::vector<std::string>& npy_paths,
                                                InputKind kind, uint64_t seed) {
  std::vector<host::Literal> inputs;
  if (!npy_paths.empty()) {
    if (file.has_signature && npy_paths.size() != file.arguments.size())
      return InvalidArgument(std::to_string(npy_paths.size()) + " --in files for a program of " +
                             std::to_string(file.arguments.size()) + " arguments");
    for (size_t i = 0; i < npy_paths.size(); ++i) {
      STABLERT_ASSIGN_OR_RETURN(host::Literal literal, ReadNpy(npy_paths[i]));
      if (file.has_signature) {
        const ArgumentSpec& spec = file.arguments[i];
        host::Literal expected{spec.type, spec.dims, {}};
        if (literal.type != spec.type || literal.dims != spec.dims)
          return InvalidArgument(npy_paths[i] + " holds " + DescribeLiteral(literal) + "; argument " +
                                 std::to_string(i) + " of the program is " + DescribeLiteral(expected));
      }
      inputs.push_back(std::move(literal));
    }
    return inputs;
  }
  if (!file.has_signature)
    return InvalidArgument("the program is MLIR text: give its inputs with --in FILE.npy (one per argument)");
  uint64_t state = seed;
  for (const ArgumentSpec& spec : file.arguments) {
    host::Literal literal{spec.type, spec.dims, {}};
    STABLERT_ASSIGN_OR_RETURN(int64_t bytes, host::DenseBytes(spec.type, spec.dims));
    literal.bytes.assign(static_cast<size_t>(bytes), 0);
    if (kind == InputKind::kRandom) FillRandom(literal, state);
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

std::string DescribeArtifact(const ExportedArtifact& a) {
  std::string out = "jax.export artifact (serialization version " + std::to_string(a.serialization_version) + "): " +
                    a.function_name + ", " + std::to_string(a.num_devices) + " device(s), platforms";
  for (const std::string& p : a.platforms) out += " " + p;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    out += "\n  input " + std::to_string(i) + ": " + host::ElementTypeName(a.inputs[i].type) + "[";
    for (size_t d = 0; d < a.inputs[i].shape.size(); ++d) out += (d ? "," : "") + a.inputs[i].shape[d];
    out += "]";
    if (i < a.input_shardings.size() && a.input_shardings[i]) out += " " + a.input_shardings[i]->ToString();
  }
  return out;
}

std::string DescribeLiteral(const host::Literal& literal) {
  std::string out = host::ElementTypeName(literal.type) + "[";
  for (size_t i = 0; i < literal.dims.size(); ++i) out += (i ? "," : "") + std::to_string(literal.dims[i]);
  return out + "]";
}

}  // namespace stablert::cli
