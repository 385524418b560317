#include "jax_export.h"

#include <cstring>

namespace stablert::cli {
namespace {

// A bounds-checked view of a FlatBuffer. Tables are positions in the buffer; a field is looked
// up through the table's vtable by its index in the schema (declaration order).
class FlatBuffer {
 public:
  explicit FlatBuffer(std::string_view bytes) : bytes_(bytes) {}

  bool InBounds(uint64_t pos, uint64_t size) const { return pos <= bytes_.size() && size <= bytes_.size() - pos; }

  template <typename T>
  StatusOr<T> Read(uint64_t pos, const char* what) const {
    if (!InBounds(pos, sizeof(T))) return Corrupt(what);
    T v;
    std::memcpy(&v, bytes_.data() + pos, sizeof(T));  // FlatBuffers are little-endian, as is x86-64/arm64
    return v;
  }

  StatusOr<uint64_t> Root() const {
    STABLERT_ASSIGN_OR_RETURN(uint32_t offset, Read<uint32_t>(0, "root offset"));
    return CheckTable(offset, "root table");
  }

  // The position of field `index` of the table at `table`, or nullopt if absent.
  StatusOr<std::optional<uint64_t>> Field(uint64_t table, int index, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(int32_t soffset, Read<int32_t>(table, what));
    int64_t vtable = static_cast<int64_t>(table) - soffset;
    if (vtable < 0) return Corrupt(what);
    STABLERT_ASSIGN_OR_RETURN(uint16_t vtable_size, Read<uint16_t>(static_cast<uint64_t>(vtable), what));
    uint64_t entry = static_cast<uint64_t>(vtable) + 4 + 2 * static_cast<uint64_t>(index);
    if (entry + 2 > static_cast<uint64_t>(vtable) + vtable_size) return std::optional<uint64_t>();
    STABLERT_ASSIGN_OR_RETURN(uint16_t offset, Read<uint16_t>(entry, what));
    if (offset == 0) return std::optional<uint64_t>();
    return std::optional<uint64_t>(table + offset);
  }

  template <typename T>
  StatusOr<T> Scalar(uint64_t table, int index, T fallback, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> pos, Field(table, index, what));
    if (!pos) return fallback;
    return Read<T>(*pos, what);
  }

  // The target of an offset field (table, vector or string), or nullopt if absent.
  StatusOr<std::optional<uint64_t>> Indirect(uint64_t table, int index, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> pos, Field(table, index, what));
    if (!pos) return std::optional<uint64_t>();
    STABLERT_ASSIGN_OR_RETURN(uint64_t target, Follow(*pos, what));
    return std::optional<uint64_t>(target);
  }

  StatusOr<uint64_t> Follow(uint64_t pos, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(uint32_t offset, Read<uint32_t>(pos, what));
    uint64_t target = pos + offset;
    if (!InBounds(target, 4)) return Corrupt(what);
    return target;
  }

  StatusOr<uint64_t> CheckTable(uint64_t pos, const char* what) const {
    if (!InBounds(pos, 4)) return Corrupt(what);
    return pos;
  }

  // A vector at `pos`: its length, elements from pos + 4 of `element_size` bytes each.
  StatusOr<uint32_t> VectorLength(uint64_t pos, uint64_t element_size, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(uint32_t length, Read<uint32_t>(pos, what));
    if (!InBounds(pos + 4, uint64_t{length} * element_size)) return Corrupt(what);
    return length;
  }

  StatusOr<std::string> String(uint64_t pos, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(uint32_t length, VectorLength(pos, 1, what));
    return std::string(bytes_.substr(pos + 4, length));
  }

  StatusOr<std::optional<std::string>> StringField(uint64_t table, int index, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> pos, Indirect(table, index, what));
    if (!pos) return std::optional<std::string>();
    STABLERT_ASSIGN_OR_RETURN(std::string s, String(*pos, what));
    return std::optional<std::string>(std::move(s));
  }

  // Positions of the tables (or strings) of a vector-of-offsets field; empty if absent.
  StatusOr<std::vector<uint64_t>> OffsetVector(uint64_t table, int index, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> pos, Indirect(table, index, what));
    std::vector<uint64_t> out;
    if (!pos) return out;
    STABLERT_ASSIGN_OR_RETURN(uint32_t length, VectorLength(*pos, 4, what));
    for (uint32_t i = 0; i < length; ++i) {
      STABLERT_ASSIGN_OR_RETURN(uint64_t element, Follow(*pos + 4 + 4 * uint64_t{i}, what));
      out.push_back(element);
    }
    return out;
  }

  template <typename T>
  StatusOr<std::vector<T>> ScalarVector(uint64_t table, int index, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> pos, Indirect(table, index, what));
    std::vector<T> out;
    if (!pos) return out;
    STABLERT_ASSIGN_OR_RETURN(uint32_t length, VectorLength(*pos, sizeof(T), what));
    out.resize(length);
    if (length) std::memcpy(out.data(), bytes_.data() + *pos + 4, length * sizeof(T));
    return out;
  }

  StatusOr<std::string_view> Bytes(uint64_t table, int index, const char* what) const {
    STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> pos, Indirect(table, index, what));
    if (!pos) return std::string_view();
    STABLERT_ASSIGN_OR_RETURN(uint32_t length, VectorLength(*pos, 1, what));
    return bytes_.substr(*pos + 4, length);
  }

 private:
  static Status Corrupt(const char* what) {
    return InvalidArgument(std::string("jax.export artifact: ") + what + " lies outside the file (truncated or not an artifact)");
  }
  std::string_view bytes_;
};

// Field indices of serialization.fbs (declaration order).
namespace exported {
constexpr int kSerializationVersion = 0, kFunctionName = 1, kInAvals = 3, kOutAvals = 5, kNrDevicesShort = 6,
              kInShardings = 7, kOutShardings = 8, kPlatforms = 9, kModule = 13, kCallingConvention = 14,
              kKeptVarIdx = 15, kNrDevices = 18, kUniqueAvals = 19, kUniqueMeshes = 20, kUniqueShardings = 21,
              kInAvalsIdxs = 22, kOutAvalsIdxs = 23, kInShardingsIdxs = 24, kOutShardingsIdxs = 25;
}
namespace aval {
constexpr int kShape = 1, kDType = 2;
}
namespace sharding {
constexpr int kNamedSharding = 2;  // Sharding.named_sharding
}
namespace named_sharding {
constexpr int kMesh = 0, kSpec = 1, kMeshIdx = 3;
}
namespace mesh {
constexpr int kAxisSizes = 0, kAxisNames = 1;
}

StatusOr<PJRT_Buffer_Type> TypeOfDType(int8_t dtype) {
  switch (dtype) {
    case 0: return PJRT_Buffer_Type_PRED;
    case 1: return PJRT_Buffer_Type_S8;
    case 2: return PJRT_Buffer_Type_S16;
    case 3: return PJRT_Buffer_Type_S32;
    case 4: return PJRT_Buffer_Type_S64;
    case 5: return PJRT_Buffer_Type_U8;
    case 6: return PJRT_Buffer_Type_U16;
    case 7: return PJRT_Buffer_Type_U32;
    case 8: return PJRT_Buffer_Type_U64;
    case 9: return PJRT_Buffer_Type_F16;
    case 10: return PJRT_Buffer_Type_F32;
    case 11: return PJRT_Buffer_Type_F64;
    case 12: return PJRT_Buffer_Type_C64;
    case 13: return PJRT_Buffer_Type_C128;
    case 14: return PJRT_Buffer_Type_BF16;
    case 15: return PJRT_Buffer_Type_S4;
    case 16: return PJRT_Buffer_Type_U4;
    case 17: return PJRT_Buffer_Type_F8E4M3B11FNUZ;
    case 18: return PJRT_Buffer_Type_F8E4M3FN;
    case 19: return PJRT_Buffer_Type_F8E4M3FNUZ;
    case 20: return PJRT_Buffer_Type_F8E5M2;
    case 21: return PJRT_Buffer_Type_F8E5M2FNUZ;
    case 23: return PJRT_Buffer_Type_F8E4M3;
    case 24: return PJRT_Buffer_Type_F8E3M4;
    case 25: return PJRT_Buffer_Type_F8E8M0FNU;
    case 26: return PJRT_Buffer_Type_F4E2M1FN;
    default:
      return Unimplemented("jax.export artifact: dtype " + std::to_string(dtype) +
                           " (float0 or a PRNG key type) has no PJRT buffer type");
  }
}

StatusOr<ExportedArray> ReadAval(const FlatBuffer& fb, uint64_t table) {
  ExportedArray array;
  STABLERT_ASSIGN_OR_RETURN(int8_t dtype, fb.Scalar<int8_t>(table, aval::kDType, 0, "AbstractValue.dtype"));
  STABLERT_ASSIGN_OR_RETURN(array.type, TypeOfDType(dtype));
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, fb.OffsetVector(table, aval::kShape, "AbstractValue.shape"));
  for (uint64_t d : dims) {
    STABLERT_ASSIGN_OR_RETURN(std::string text, fb.String(d, "AbstractValue.shape"));
    array.shape.push_back(std::move(text));
  }
  return array;
}

StatusOr<std::vector<std::pair<std::string, int64_t>>> ReadMesh(const FlatBuffer& fb, uint64_t table) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint32_t> sizes, fb.ScalarVector<uint32_t>(table, mesh::kAxisSizes, "AbstractMesh.axis_sizes"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> names, fb.OffsetVector(table, mesh::kAxisNames, "AbstractMesh.axis_names"));
  if (sizes.size() != names.size())
    return InvalidArgument("jax.export artifact: a mesh has " + std::to_string(sizes.size()) + " axis sizes and " +
                           std::to_string(names.size()) + " axis names");
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(std::string name, fb.String(names[i], "AbstractMesh.axis_names"));
    out.emplace_back(std::move(name), sizes[i]);
  }
  return out;
}

StatusOr<ExportedSharding> ReadNamedSharding(const FlatBuffer& fb, uint64_t table, const std::vector<uint64_t>& meshes) {
  ExportedSharding s;
  STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> mesh_table, fb.Indirect(table, named_sharding::kMesh, "NamedSharding.mesh"));
  if (mesh_table) {
    STABLERT_ASSIGN_OR_RETURN(s.mesh, ReadMesh(fb, *mesh_table));
  } else {
    STABLERT_ASSIGN_OR_RETURN(uint32_t index, fb.Scalar<uint32_t>(table, named_sharding::kMeshIdx, 0, "NamedSharding.abstract_mesh_idx"));
    if (index >= meshes.size())
      return InvalidArgument("jax.export artifact: mesh index " + std::to_string(index) + " of " +
                             std::to_string(meshes.size()));
    STABLERT_ASSIGN_OR_RETURN(s.mesh, ReadMesh(fb, meshes[index]));
  }
  STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> spec, fb.Indirect(table, named_sharding::kSpec, "NamedSharding.spec"));
  if (spec) {
    STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> partitions, fb.OffsetVector(*spec, 0, "PartitionSpec.partitions"));
    for (uint64_t p : partitions) {
      STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> axes, fb.OffsetVector(p, 0, "PartitionSpecOneAxis.axes"));
      std::vector<std::string> names;
      for (uint64_t a : axes) {
        STABLERT_ASSIGN_OR_RETURN(std::string name, fb.String(a, "PartitionSpecOneAxis.axes"));
        names.push_back(std::move(name));
      }
      s.spec.push_back(std::move(names));
    }
  }
  return s;
}

// Reads the avals and shardings of one side (inputs or outputs) in either layout.
Status ReadSide(const FlatBuffer& fb, uint64_t root, bool inputs, const std::vector<uint64_t>& unique_avals,
                const std::vector<uint64_t>& unique_shardings, const std::vector<uint64_t>& meshes,
                std::vector<ExportedArray>& arrays, std::vector<std::optional<ExportedSharding>>& shardings) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint32_t> aval_idxs,
                            fb.ScalarVector<uint32_t>(root, inputs ? exported::kInAvalsIdxs : exported::kOutAvalsIdxs, "avals_idxs"));
  if (!unique_avals.empty() && !aval_idxs.empty()) {
    for (uint32_t i : aval_idxs) {
      if (i >= unique_avals.size()) return InvalidArgument("jax.export artifact: aval index out of range");
      STABLERT_ASSIGN_OR_RETURN(ExportedArray a, ReadAval(fb, unique_avals[i]));
      arrays.push_back(std::move(a));
    }
  } else {
    STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> avals, fb.OffsetVector(root, inputs ? exported::kInAvals : exported::kOutAvals, "avals"));
    for (uint64_t t : avals) {
      STABLERT_ASSIGN_OR_RETURN(ExportedArray a, ReadAval(fb, t));
      arrays.push_back(std::move(a));
    }
  }
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint32_t> sharding_idxs,
                            fb.ScalarVector<uint32_t>(root, inputs ? exported::kInShardingsIdxs : exported::kOutShardingsIdxs,
                                                      "shardings_idxs"));
  if (!sharding_idxs.empty()) {
    for (uint32_t i : sharding_idxs) {
      if (i == 0) {
        shardings.emplace_back();
        continue;
      }
      if (i - 1 >= unique_shardings.size()) return InvalidArgument("jax.export artifact: sharding index out of range");
      STABLERT_ASSIGN_OR_RETURN(ExportedSharding s, ReadNamedSharding(fb, unique_shardings[i - 1], meshes));
      shardings.push_back(std::move(s));
    }
  } else {
    // Older artifacts: a Sharding table per array (named_sharding from 1/2026; an HLO sharding
    // proto before, which this reader reports as unspecified: the module carries the same).
    STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> tables,
                              fb.OffsetVector(root, inputs ? exported::kInShardings : exported::kOutShardings, "shardings"));
    for (uint64_t t : tables) {
      STABLERT_ASSIGN_OR_RETURN(std::optional<uint64_t> named, fb.Indirect(t, sharding::kNamedSharding, "Sharding.named_sharding"));
      if (!named) {
        shardings.emplace_back();
        continue;
      }
      STABLERT_ASSIGN_OR_RETURN(ExportedSharding s, ReadNamedSharding(fb, *named, meshes));
      shardings.push_back(std::move(s));
    }
  }
  if (!shardings.empty() && shardings.size() != arrays.size())
    return InvalidArgument("jax.export artifact: " + std::to_string(arrays.size()) + " " + (inputs ? "inputs" : "outputs") +
                           " but " + std::to_string(shardings.size()) + " shardings");
  shardings.resize(arrays.size());
  return OkStatus();
}

}  // namespace

std::string ExportedSharding::ToString() const {
  std::string out = "P(";
  for (size_t d = 0; d < spec.size(); ++d) {
    if (d) out += ", ";
    if (spec[d].empty()) out += "None";
    else if (spec[d].size() == 1) out += "'" + spec[d][0] + "'";
    else {
      out += "(";
      for (size_t i = 0; i < spec[d].size(); ++i) out += (i ? ", '" : "'") + spec[d][i] + "'";
      out += ")";
    }
  }
  out += ") on mesh {";
  for (size_t i = 0; i < mesh.size(); ++i) out += (i ? ", " : "") + mesh[i].first + ": " + std::to_string(mesh[i].second);
  return out + "}";
}

bool LooksLikeJaxExport(std::string_view bytes) {
  if (bytes.size() < 16 || bytes.substr(0, 4) == std::string_view("ML\xefR", 4)) return false;
  FlatBuffer fb(bytes);
  StatusOr<uint64_t> root = fb.Root();
  if (!root.ok()) return false;
  StatusOr<std::string_view> module = fb.Bytes(*root, exported::kModule, "module");
  return module.ok() && module->size() >= 4 && module->substr(0, 4) == std::string_view("ML\xefR", 4);
}

StatusOr<ExportedArtifact> ReadJaxExport(std::string_view bytes) {
  FlatBuffer fb(bytes);
  STABLERT_ASSIGN_OR_RETURN(uint64_t root, fb.Root());
  ExportedArtifact a;
  STABLERT_ASSIGN_OR_RETURN(uint16_t version, fb.Scalar<uint16_t>(root, exported::kSerializationVersion, 0, "serialization_version"));
  a.serialization_version = version;
  if (version < 1 || version > 11)
    return Unimplemented("jax.export artifact: serialization version " + std::to_string(version) +
                         " (this reader knows 1 to 11)");
  STABLERT_ASSIGN_OR_RETURN(std::optional<std::string> name, fb.StringField(root, exported::kFunctionName, "function_name"));
  a.function_name = name.value_or("");
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> platforms, fb.OffsetVector(root, exported::kPlatforms, "platforms"));
  for (uint64_t p : platforms) {
    STABLERT_ASSIGN_OR_RETURN(std::string platform, fb.String(p, "platforms"));
    a.platforms.push_back(std::move(platform));
  }
  STABLERT_ASSIGN_OR_RETURN(uint32_t nr_devices, fb.Scalar<uint32_t>(root, exported::kNrDevices, 0, "nr_devices"));
  STABLERT_ASSIGN_OR_RETURN(int16_t nr_devices_short, fb.Scalar<int16_t>(root, exported::kNrDevicesShort, 1, "nr_devices_short"));
  a.num_devices = nr_devices ? nr_devices : nr_devices_short;
  if (a.num_devices < 1) return InvalidArgument("jax.export artifact: " + std::to_string(a.num_devices) + " devices");
  STABLERT_ASSIGN_OR_RETURN(std::string_view module, fb.Bytes(root, exported::kModule, "mlir_module_serialized"));
  if (module.empty()) return InvalidArgument("jax.export artifact: no mlir_module_serialized");
  a.module = std::string(module);
  STABLERT_ASSIGN_OR_RETURN(uint16_t convention, fb.Scalar<uint16_t>(root, exported::kCallingConvention, 0, "calling_convention_version"));
  a.calling_convention_version = convention;
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint16_t> kept, fb.ScalarVector<uint16_t>(root, exported::kKeptVarIdx, "module_kept_var_idx"));
  a.module_kept_var_idx.assign(kept.begin(), kept.end());
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> unique_avals, fb.OffsetVector(root, exported::kUniqueAvals, "unique_avals"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> meshes, fb.OffsetVector(root, exported::kUniqueMeshes, "unique_abstract_meshes"));
  STABLERT_ASSIGN_OR_RETURN(std::vector<uint64_t> unique_shardings,
                            fb.OffsetVector(root, exported::kUniqueShardings, "unique_named_shardings"));
  STABLERT_RETURN_IF_ERROR(ReadSide(fb, root, true, unique_avals, unique_shardings, meshes, a.inputs, a.input_shardings));
  STABLERT_RETURN_IF_ERROR(ReadSide(fb, root, false, unique_avals, unique_shardings, meshes, a.outputs, a.output_shardings));
  return a;
}

}  // namespace stablert::cli
