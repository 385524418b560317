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

StatusOr<ProgramFile> LoadProgramFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the program file");
  std::stringstream bytes;
  bytes << in.rdbuf();
  ProgramFile file;
  file.program.code = bytes.str();
  file.program.format = "mlir";
  if (file.program.code.compare(0, 4, kBytecodeMagic) != 0) return file;  // MLIR text
  StatusOr<std::unique_ptr<ir::Module>> module = stablehlo::ReadModule(file.program.code);
  if (!module.ok()) return module.status().WithPrefix(path);
  const ir::Function* entry = (*module)->EntryFunction();
  if (!entry) return InvalidArgument(path + ": the program has no entry function (main)");
  for (const ir::Type& type : entry->argument_types) {
    if (type.kind != ir::Type::Kind::kTensor)
      return Unimplemented(path + ": entry arguments other than tensors (tokens, tuples) are not supported here");
    ArgumentSpec spec;
    spec.type = static_cast<PJRT_Buffer_Type>(static_cast<int>(type.dtype));
    spec.dims.assign(type.dims.begin(), type.dims.end());
    file.arguments.push_back(std::move(spec));
  }
  if (const ir::Attribute* partitions = ir::FindAttr((*module)->attrs, "mhlo.num_partitions"))
    if (std::optional<int64_t> n = partitions->AsInt()) file.num_partitions = static_cast<int>(*n);
  if (const ir::Attribute* replicas = ir::FindAttr((*module)->attrs, "mhlo.num_replicas"))
    if (std::optional<int64_t> n = replicas->AsInt()) file.num_replicas = static_cast<int>(*n);
  file.has_signature = true;
  return file;
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

std::string DescribeLiteral(const host::Literal& literal) {
  std::string out = host::ElementTypeName(literal.type) + "[";
  for (size_t i = 0; i < literal.dims.size(); ++i) out += (i ? "," : "") + std::to_string(literal.dims[i]);
  return out + "]";
}

}  // namespace stablert::cli
