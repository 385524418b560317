#include "passes/sharding/sharding.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>
#include <set>

#include "base/proto_wire.h"

namespace stablert::passes {
namespace {

const ir::Attribute::Dictionary* AsDict(const ir::Attribute* attr) {
  return attr ? attr->get<ir::Attribute::Dictionary>() : nullptr;
}

const ir::Attribute::Array* AsArray(const ir::Attribute* attr) {
  return attr ? attr->get<ir::Attribute::Array>() : nullptr;
}

StatusOr<Mesh> ParseMesh(const ir::Attribute::Dictionary& dict, const std::string& what) {
  Mesh mesh;
  const ir::Attribute::Array* axes = AsArray(ir::FindAttr(dict, "axes"));
  if (!axes) return InvalidArgument(what + ": mesh has no axes list");
  for (const ir::Attribute& axis : *axes) {
    const ir::Attribute::Dictionary* a = axis.get<ir::Attribute::Dictionary>();
    const ir::Attribute* name = a ? ir::FindAttr(*a, "name") : nullptr;
    const ir::Attribute* size = a ? ir::FindAttr(*a, "size") : nullptr;
    if (!name || !name->AsString() || !size || !size->AsInt() || *size->AsInt() < 1)
      return InvalidArgument(what + ": malformed mesh axis " + ir::AttributeToString(axis));
    mesh.axes.push_back({std::string(*name->AsString()), *size->AsInt()});
  }
  if (const ir::Attribute* ids = ir::FindAttr(dict, "device_ids")) {
    auto values = ids->AsIntArray();
    if (!values) return InvalidArgument(what + ": mesh device_ids is not an integer list");
    mesh.device_ids = *values;
  }
  if (!mesh.device_ids.empty() && static_cast<int64_t>(mesh.device_ids.size()) != mesh.num_positions())
    return InvalidArgument(what + ": mesh has " + std::to_string(mesh.num_positions()) + " positions but " +
                           std::to_string(mesh.device_ids.size()) + " device ids");
  return mesh;
}

StatusOr<Mesh> ResolveMesh(const ir::Module& module, const ir::Attribute& ref, const std::string& what) {
  if (const auto* dict = ref.get<ir::Attribute::Dictionary>()) return ParseMesh(*dict, what);
  auto name = ref.AsString();
  if (!name) return InvalidArgument(what + ": sharding mesh is neither a mesh nor a mesh name");
  for (const auto& [mesh_name, mesh] : module.meshes) {
    if (mesh_name != *name) continue;
    const auto* dict = mesh.get<ir::Attribute::Dictionary>();
    if (!dict) return InvalidArgument(what + ": mesh @" + mesh_name + " is malformed");
    return ParseMesh(*dict, what);
  }
  return InvalidArgument(what + ": sharding refers to unknown mesh @" + std::string(*name));
}

StatusOr<AxisRef> ParseAxisRef(const Mesh& mesh, const ir::Attribute& attr, const std::string& what) {
  const ir::Attribute::Dictionary* dict = attr.get<ir::Attribute::Dictionary>();
  const ir::Attribute* name = dict ? ir::FindAttr(*dict, "name") : nullptr;
  if (!name || !name->AsString()) return InvalidArgument(what + ": malformed axis reference " + ir::AttributeToString(attr));
  AxisRef ref;
  auto it = std::find_if(mesh.axes.begin(), mesh.axes.end(), [&](const MeshAxis& a) { return a.name == *name->AsString(); });
  if (it == mesh.axes.end()) return InvalidArgument(what + ": sharding names unknown mesh axis '" + std::string(*name->AsString()) + "'");
  ref.axis = static_cast<int>(it - mesh.axes.begin());
  if (const ir::Attribute::Dictionary* sub = AsDict(ir::FindAttr(*dict, "sub_axis_info"))) {
    const ir::Attribute* pre = ir::FindAttr(*sub, "pre_size");
    const ir::Attribute* size = ir::FindAttr(*sub, "size");
    if (!pre || !pre->AsInt() || !size || !size->AsInt() || *pre->AsInt() < 1 || *size->AsInt() < 1 ||
        it->size % (*pre->AsInt() * *size->AsInt()) != 0)
      return InvalidArgument(what + ": malformed sub-axis of '" + it->name + "'");
    ref.pre_size = *pre->AsInt();
    ref.size = *size->AsInt();
  }
  return ref;
}

StatusOr<TensorSharding> ParseSdySharding(const ir::Module& module, const ir::Attribute& attr, int64_t rank,
                                          const std::string& what) {
  const ir::Attribute::Dictionary* dict = attr.get<ir::Attribute::Dictionary>();
  if (!dict) return InvalidArgument(what + ": sdy.sharding is not a tensor sharding");
  const ir::Attribute* mesh_ref = ir::FindAttr(*dict, "mesh");
  if (!mesh_ref) return InvalidArgument(what + ": sdy.sharding has no mesh");
  TensorSharding sharding;
  STABLERT_ASSIGN_OR_RETURN(sharding.mesh, ResolveMesh(module, *mesh_ref, what));
  const ir::Attribute::Array* dims = AsArray(ir::FindAttr(*dict, "dim_shardings"));
  if (!dims || static_cast<int64_t>(dims->size()) != rank)
    return InvalidArgument(what + ": sdy.sharding has " + std::to_string(dims ? dims->size() : 0) +
                           " dimension shardings for rank " + std::to_string(rank));
  for (const ir::Attribute& dim : *dims) {
    std::vector<AxisRef> refs;
    const ir::Attribute::Dictionary* d = dim.get<ir::Attribute::Dictionary>();
    const ir::Attribute::Array* axes = d ? AsArray(ir::FindAttr(*d, "axes")) : nullptr;
    if (!axes) return InvalidArgument(what + ": malformed dimension sharding " + ir::AttributeToString(dim));
    for (const ir::Attribute& axis : *axes) {
      STABLERT_ASSIGN_OR_RETURN(AxisRef ref, ParseAxisRef(sharding.mesh, axis, what));
      refs.push_back(ref);
    }
    sharding.dims.push_back(std::move(refs));
  }
  if (const ir::Attribute::Array* unreduced = AsArray(ir::FindAttr(*dict, "unreduced_axes"))) {
    for (const ir::Attribute& axis : *unreduced) {
      STABLERT_ASSIGN_OR_RETURN(AxisRef ref, ParseAxisRef(sharding.mesh, axis, what));
      sharding.unreduced.push_back(ref);
    }
  }
  // A mesh without axes but with one device id is a maximal sharding.
  if (sharding.mesh.axes.empty() && sharding.mesh.device_ids.size() == 1)
    sharding.maximal_partition = sharding.mesh.device_ids[0];
  return sharding;
}

// "{devices=[2,2]<=[4]}", "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
// "{devices=[2,2]0,2,1,3}", "{replicated}", "{maximal device=1}".
StatusOr<TensorSharding> ParseMhloSharding(std::string_view text, int64_t rank, const std::string& what) {
  TensorSharding sharding;
  auto fail = [&] { return Unimplemented(what + ": mhlo.sharding '" + std::string(text) + "' is not supported"); };
  if (text == "{replicated}" || text == "{}") {
    sharding.dims.assign(rank, {});
    return sharding;
  }
  if (text.rfind("{maximal device=", 0) == 0) {
    sharding.dims.assign(rank, {});
    sharding.maximal_partition = std::strtoll(std::string(text.substr(16)).c_str(), nullptr, 10);
    return sharding;
  }
  if (text.rfind("{devices=[", 0) != 0) return fail();
  std::string rest(text.substr(10));
  auto read_list = [](const std::string& s, size_t* pos, char close) {
    std::vector<int64_t> out;
    while (*pos < s.size() && s[*pos] != close) {
      char* end = nullptr;
      out.push_back(std::strtoll(s.c_str() + *pos, &end, 10));
      *pos = end - s.c_str();
      if (*pos < s.size() && s[*pos] == ',') ++*pos;
    }
    return out;
  };
  size_t pos = 0;
  std::vector<int64_t> tile = read_list(rest, &pos, ']');
  if (pos >= rest.size()) return fail();
  ++pos;
  int64_t total = 1;
  for (int64_t t : tile) total *= t;
  std::vector<int64_t> ids;
  if (rest.compare(pos, 2, "<=") == 0) {
    pos += 3;  // "<=["
    std::vector<int64_t> reshape = read_list(rest, &pos, ']');
    ++pos;
    std::vector<int64_t> perm;
    if (rest.compare(pos, 2, "T(") == 0) {
      pos += 2;
      perm = read_list(rest, &pos, ')');
      ++pos;
    }
    if (perm.empty())
      for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != reshape.size()) return fail();
    // ids = transpose(iota(reshape), perm), flattened.
    std::vector<int64_t> strides(reshape.size(), 1);
    for (size_t i = reshape.size(); i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
    std::vector<int64_t> shape(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) shape[i] = reshape[perm[i]];
    std::vector<int64_t> index(perm.size(), 0);
    for (int64_t n = 0; n < total; ++n) {
      int64_t id = 0;
      for (size_t i = 0; i < perm.size(); ++i) id += index[i] * strides[perm[i]];
      ids.push_back(id);
      for (size_t i = perm.size(); i-- > 0;)
        if (++index[i] < shape[i]) break; else index[i] = 0;
    }
  } else {
    ids = read_list(rest, &pos, '}');
  }
  if (static_cast<int64_t>(ids.size()) != total) return fail();
  bool replicate_last = text.find("last_tile_dim_replicate") != std::string_view::npos;
  if (text.find("last_tile_dims") != std::string_view::npos) return fail();
  int64_t sharded_dims = static_cast<int64_t>(tile.size()) - (replicate_last ? 1 : 0);
  if (sharded_dims != rank) return fail();
  for (size_t i = 0; i < tile.size(); ++i) {
    MeshAxis axis;
    axis.name = "tile";
    axis.name += std::to_string(i);
    axis.size = tile[i];
    sharding.mesh.axes.push_back(std::move(axis));
  }
  sharding.mesh.device_ids = ids;
  for (int64_t d = 0; d < rank; ++d) sharding.dims.push_back({AxisRef{static_cast<int>(d), 1, 0}});
  return sharding;
}

}  // namespace

int64_t Mesh::num_positions() const {
  int64_t n = 1;
  for (const MeshAxis& axis : axes) n *= axis.size;
  return n;
}

bool TensorSharding::IsReplicated() const {
  for (const auto& refs : dims)
    if (!refs.empty()) return false;
  return unreduced.empty();
}

std::string TensorSharding::ToString() const {
  if (maximal_partition >= 0) return "{maximal partition=" + std::to_string(maximal_partition) + "}";
  std::string out = "{";
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d) out += ", ";
    out += "[";
    for (size_t i = 0; i < dims[d].size(); ++i) {
      const AxisRef& ref = dims[d][i];
      if (i) out += ",";
      out += mesh.axes[ref.axis].name;
      if (ref.size) out += ":(" + std::to_string(ref.pre_size) + ")" + std::to_string(ref.size);
    }
    out += "]";
  }
  if (!unreduced.empty()) {
    out += ", unreduced={";
    for (size_t i = 0; i < unreduced.size(); ++i) out += (i ? "," : "") + mesh.axes[unreduced[i].axis].name;
    out += "}";
  }
  return out + "}";
}

StatusOr<TensorSharding> ParseSharding(const ir::Module& module, const ir::Attribute::Dictionary& attrs, int64_t rank,
                                       int64_t num_partitions, const std::string& what) {
  TensorSharding sharding;
  if (const ir::Attribute* sdy = ir::FindAttr(attrs, "sdy.sharding")) {
    STABLERT_ASSIGN_OR_RETURN(sharding, ParseSdySharding(module, *sdy, rank, what));
  } else if (const ir::Attribute* mhlo = ir::FindAttr(attrs, "mhlo.sharding")) {
    auto text = mhlo->AsString();
    if (!text) return InvalidArgument(what + ": mhlo.sharding is not a string");
    STABLERT_ASSIGN_OR_RETURN(sharding, ParseMhloSharding(*text, rank, what));
  } else {
    sharding.dims.assign(rank, {});
    return sharding;
  }
  if (!sharding.mesh.axes.empty() && sharding.mesh.num_positions() != num_partitions)
    return InvalidArgument(what + ": sharding mesh has " + std::to_string(sharding.mesh.num_positions()) +
                           " devices but the program runs on " + std::to_string(num_partitions));
  for (int64_t id : sharding.mesh.device_ids)
    if (id < 0 || id >= num_partitions)
      return InvalidArgument(what + ": sharding names device " + std::to_string(id) + " of " +
                             std::to_string(num_partitions));
  return sharding;
}

StatusOr<ShardLayout> LayoutShards(const TensorSharding& sharding, const Dims& global_dims, int64_t num_partitions,
                                   const std::string& what) {
  const Mesh& mesh = sharding.mesh;
  size_t rank = global_dims.size();
  ShardLayout layout;
  layout.local_dims = global_dims;
  layout.starts.assign(num_partitions, Dims(rank, 0));
  layout.first_holder.resize(num_partitions);
  // pieces along each dimension
  std::vector<int64_t> pieces(rank, 1);
  for (size_t d = 0; d < rank && d < sharding.dims.size(); ++d)
    for (const AxisRef& ref : sharding.dims[d]) pieces[d] *= ref.size ? ref.size : mesh.axes[ref.axis].size;
  for (size_t d = 0; d < rank; ++d) {
    if (global_dims[d] % pieces[d] != 0)
      return Unimplemented(what + ": dimension " + std::to_string(d) + " of size " + std::to_string(global_dims[d]) +
                           " does not split evenly into " + std::to_string(pieces[d]) + " shards");
    layout.local_dims[d] = global_dims[d] / pieces[d];
  }
  // partition -> row-major mesh position
  std::vector<int64_t> position(num_partitions);
  for (int64_t p = 0; p < num_partitions; ++p) position[p] = p;
  if (!mesh.device_ids.empty())
    for (size_t i = 0; i < mesh.device_ids.size(); ++i) position[mesh.device_ids[i]] = static_cast<int64_t>(i);
  std::map<Dims, int64_t> holders;
  std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>> partial_keys;  // (key, index, partition)
  for (int64_t p = 0; p < num_partitions; ++p) {
    std::vector<int64_t> coord(mesh.axes.size());
    int64_t rest = position[p];
    for (size_t a = mesh.axes.size(); a-- > 0;) {
      coord[a] = rest % mesh.axes[a].size;
      rest /= mesh.axes[a].size;
    }
    for (size_t d = 0; d < rank && d < sharding.dims.size(); ++d) {
      int64_t index = 0;
      for (const AxisRef& ref : sharding.dims[d]) {
        int64_t axis_size = mesh.axes[ref.axis].size;
        int64_t size = ref.size ? ref.size : axis_size;
        int64_t post = axis_size / (ref.size ? ref.pre_size * ref.size : axis_size);
        index = index * size + (coord[ref.axis] / post) % size;
      }
      layout.starts[p][d] = index * layout.local_dims[d];
    }
    auto [it, inserted] = holders.emplace(layout.starts[p], p);
    layout.first_holder[p] = it->second;
    // Position along the unreduced axes, and the coordinates without them (the group key).
    int64_t partial_index = 0;
    for (const AxisRef& ref : sharding.unreduced) {
      int64_t axis_size = mesh.axes[ref.axis].size;
      int64_t size = ref.size ? ref.size : axis_size;
      int64_t post = axis_size / (ref.size ? ref.pre_size * ref.size : axis_size);
      int64_t index = (coord[ref.axis] / post) % size;
      partial_index = partial_index * size + index;
      coord[ref.axis] -= index * post;
    }
    layout.partial_index.push_back(partial_index);
    partial_keys.emplace_back(coord, partial_index, p);
  }
  if (!sharding.unreduced.empty()) {
    std::sort(partial_keys.begin(), partial_keys.end());
    for (const auto& [key, index, p] : partial_keys) layout.partial_groups.push_back(p);
    layout.partial_group_size = 1;
    for (const AxisRef& ref : sharding.unreduced)
      layout.partial_group_size *= ref.size ? ref.size : mesh.axes[ref.axis].size;
  }
  return layout;
}

std::string SerializeOpSharding(const ShardLayout& layout, const Dims& global_dims) {
  // xla.OpSharding: type = 1, tile_assignment_dimensions = 3, tile_assignment_devices = 4,
  // replicate_on_last_tile_dim = 6, last_tile_dims = 8; Type REPLICATED = 0, OTHER = 3,
  // UNREDUCED = 6.
  constexpr uint64_t kReplicated = 0, kOther = 3, kUnreduced = 6;
  size_t rank = global_dims.size();
  int64_t partitions = static_cast<int64_t>(layout.starts.size());
  // Distinct block starts per dimension give the number of tiles along it.
  std::vector<std::vector<int64_t>> starts_by_dim(rank);
  for (size_t d = 0; d < rank; ++d) {
    std::set<int64_t> distinct;
    for (const Dims& start : layout.starts) distinct.insert(start[d]);
    starts_by_dim[d].assign(distinct.begin(), distinct.end());
  }
  int64_t tiles = 1;
  Dims tile_dims;
  for (const auto& values : starts_by_dim) {
    tile_dims.push_back(static_cast<int64_t>(values.size()));
    tiles *= tile_dims.back();
  }
  proto::WireWriter writer;
  const int64_t unreduced = layout.partial_group_size;
  if (tiles <= 1 && unreduced <= 1) {
    writer.Varint(1, kReplicated);
    return writer.Take();
  }
  if (tiles <= 1 && unreduced == partitions) {
    writer.Varint(1, kUnreduced);
    return writer.Take();
  }
  int64_t replication = partitions / tiles;
  std::vector<std::vector<int64_t>> holders(tiles);
  for (int64_t p = 0; p < partitions; ++p) {
    int64_t tile = 0;
    for (size_t d = 0; d < rank; ++d) {
      const auto& values = starts_by_dim[d];
      int64_t index = std::lower_bound(values.begin(), values.end(), layout.starts[p][d]) - values.begin();
      tile = tile * tile_dims[d] + index;
    }
    holders[tile].push_back(p);
  }
  writer.Varint(1, kOther);
  std::vector<int64_t> devices;
  if (unreduced > 1) {
    // Subgroups: [tiles..., unreduced, replicated] with last_tile_dims = 8 naming them;
    // within a tile the devices go by position along the unreduced axes.
    const int64_t replicas = replication / unreduced;
    tile_dims.push_back(unreduced);
    if (replicas > 1) tile_dims.push_back(replicas);
    for (auto& group : holders) {
      std::stable_sort(group.begin(), group.end(),
                       [&](int64_t a, int64_t b) { return layout.partial_index[a] < layout.partial_index[b]; });
      devices.insert(devices.end(), group.begin(), group.end());
    }
    writer.PackedVarints(3, tile_dims);
    writer.PackedVarints(4, devices);
    std::vector<int64_t> subgroup_types = {kUnreduced};
    if (replicas > 1) subgroup_types.push_back(kReplicated);
    writer.PackedVarints(8, subgroup_types);
    return writer.Take();
  }
  if (replication > 1) tile_dims.push_back(replication);
  for (const auto& group : holders) devices.insert(devices.end(), group.begin(), group.end());
  writer.PackedVarints(3, tile_dims);
  writer.PackedVarints(4, devices);
  if (replication > 1) writer.Varint(6, 1);
  return writer.Take();
}

}  // namespace stablert::passes
