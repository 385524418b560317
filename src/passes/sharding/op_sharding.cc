// Reading a serialized xla.OpSharding back into a ShardLayout (declared in sharding.h).
#include <map>

#include "base/proto_wire.h"
#include "passes/sharding/sharding.h"

namespace stablert::passes {
namespace {

// xla.OpSharding fields and types.
constexpr uint32_t kType = 1, kTileAssignmentDimensions = 3, kTileAssignmentDevices = 4, kReplicateOnLastTileDim = 6,
                   kLastTileDims = 8, kIotaReshapeDims = 9, kIotaTransposePerm = 10;
constexpr uint64_t kReplicated = 0, kMaximal = 1, kTuple = 2, kOther = 3, kManual = 4, kUnreduced = 6;

struct OpSharding {
  uint64_t type = kReplicated;
  std::vector<int64_t> tile_dims, devices, last_tile_dims, iota_reshape, iota_perm;
  bool replicate_on_last_tile_dim = false;
};

StatusOr<OpSharding> Decode(std::string_view serialized) {
  OpSharding sharding;
  proto::WireReader reader(serialized);
  while (!reader.done()) {
    STABLERT_ASSIGN_OR_RETURN(proto::Field field, reader.Next());
    switch (field.number) {
      case kType: sharding.type = field.varint; break;
      case kTileAssignmentDimensions:
        STABLERT_RETURN_IF_ERROR(proto::WireReader::AppendPackedVarints(field, &sharding.tile_dims));
        break;
      case kTileAssignmentDevices:
        STABLERT_RETURN_IF_ERROR(proto::WireReader::AppendPackedVarints(field, &sharding.devices));
        break;
      case kReplicateOnLastTileDim: sharding.replicate_on_last_tile_dim = field.varint != 0; break;
      case kLastTileDims:
        STABLERT_RETURN_IF_ERROR(proto::WireReader::AppendPackedVarints(field, &sharding.last_tile_dims));
        break;
      case kIotaReshapeDims:
        STABLERT_RETURN_IF_ERROR(proto::WireReader::AppendPackedVarints(field, &sharding.iota_reshape));
        break;
      case kIotaTransposePerm:
        STABLERT_RETURN_IF_ERROR(proto::WireReader::AppendPackedVarints(field, &sharding.iota_perm));
        break;
      default: break;
    }
  }
  return sharding;
}

// The devices of an iota tile assignment: iota over `reshape`, transposed by `perm`, flattened.
StatusOr<std::vector<int64_t>> IotaDevices(const std::vector<int64_t>& reshape, const std::vector<int64_t>& perm,
                                           const std::string& what) {
  size_t rank = reshape.size();
  if (perm.size() != rank) return InvalidArgument(what + ": iota_transpose_perm does not match iota_reshape_dims");
  std::vector<int64_t> transposed(rank);
  std::vector<bool> seen(rank, false);
  int64_t total = 1;
  for (size_t k = 0; k < rank; ++k) {
    if (perm[k] < 0 || static_cast<size_t>(perm[k]) >= rank || seen[perm[k]] || reshape[k] < 1)
      return InvalidArgument(what + ": malformed iota tile assignment");
    seen[perm[k]] = true;
    transposed[k] = reshape[perm[k]];
    total *= reshape[k];
    if (total > (int64_t{1} << 24)) return InvalidArgument(what + ": iota tile assignment too large");
  }
  std::vector<int64_t> source_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) source_strides[d - 1] = source_strides[d] * reshape[d];
  std::vector<int64_t> devices;
  devices.reserve(static_cast<size_t>(total));
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t device = 0;
    for (size_t k = 0; k < rank; ++k) device += coord[k] * source_strides[perm[k]];
    devices.push_back(device);
    for (size_t k = rank; k-- > 0;) {
      if (++coord[k] < transposed[k]) break;
      coord[k] = 0;
    }
  }
  return devices;
}

ShardLayout Whole(const Dims& global_dims, int64_t num_partitions, int64_t holder) {
  ShardLayout layout;
  layout.local_dims = global_dims;
  layout.starts.assign(num_partitions, Dims(global_dims.size(), 0));
  layout.first_holder.assign(num_partitions, holder);
  return layout;
}

}  // namespace

StatusOr<ShardLayout> LayoutFromOpSharding(std::string_view serialized, const Dims& global_dims, int64_t num_partitions,
                                           const std::string& what) {
  StatusOr<OpSharding> decoded = Decode(serialized);
  if (!decoded.ok()) return decoded.status().WithPrefix(what + ": the executable's OpSharding");
  const OpSharding& sharding = *decoded;
  size_t rank = global_dims.size();
  switch (sharding.type) {
    case kReplicated: return Whole(global_dims, num_partitions, 0);
    case kMaximal: {
      if (sharding.devices.size() != 1 || sharding.devices[0] < 0 || sharding.devices[0] >= num_partitions)
        return InvalidArgument(what + ": a MAXIMAL sharding names no partition of " + std::to_string(num_partitions));
      return Whole(global_dims, num_partitions, sharding.devices[0]);
    }
    case kOther: break;
    case kTuple: return Unimplemented(what + ": a TUPLE sharding for an array");
    case kManual: return Unimplemented(what + ": a MANUAL sharding (a shard_map output left per-device)");
    case kUnreduced: return Unimplemented(what + ": an unreduced (partial-sum) output");
    default: return Unimplemented(what + ": OpSharding type " + std::to_string(sharding.type));
  }
  // OTHER: tile_dims = [one per array dimension..., subgroup dimensions...].
  const std::vector<int64_t>& tiles = sharding.tile_dims;
  size_t subgroups = sharding.last_tile_dims.size() + (sharding.replicate_on_last_tile_dim ? 1 : 0);
  if (tiles.size() != rank + subgroups)
    return InvalidArgument(what + ": the OpSharding has " + std::to_string(tiles.size()) + " tile dimensions for a rank-" +
                           std::to_string(rank) + " array and " + std::to_string(subgroups) + " subgroup dimensions");
  for (int64_t type : sharding.last_tile_dims)
    if (static_cast<uint64_t>(type) != kReplicated)
      return Unimplemented(what + ": a subgroup of OpSharding type " + std::to_string(type) +
                           (static_cast<uint64_t>(type) == kUnreduced ? " (unreduced, partial-sum)" : "") +
                           " on the last tile dimensions");
  int64_t count = 1;
  for (int64_t t : tiles) {
    if (t < 1) return InvalidArgument(what + ": a tile dimension below 1");
    count *= t;
    if (count > num_partitions) break;
  }
  if (count != num_partitions)
    return InvalidArgument(what + ": the OpSharding tiles " + std::to_string(count) + " devices, the executable has " +
                           std::to_string(num_partitions) + " partitions");
  std::vector<int64_t> devices = sharding.devices;
  if (devices.empty() && !sharding.iota_reshape.empty()) {
    std::vector<int64_t> perm = sharding.iota_perm;
    if (perm.empty())
      for (size_t k = 0; k < sharding.iota_reshape.size(); ++k) perm.push_back(static_cast<int64_t>(k));
    StatusOr<std::vector<int64_t>> iota = IotaDevices(sharding.iota_reshape, perm, what);
    if (!iota.ok()) return iota.status();
    devices = std::move(*iota);
  } else if (devices.empty()) {
    for (int64_t d = 0; d < count; ++d) devices.push_back(d);
  }
  if (static_cast<int64_t>(devices.size()) != count)
    return InvalidArgument(what + ": " + std::to_string(devices.size()) + " tile assignment devices for " +
                           std::to_string(count) + " tiles");
  ShardLayout layout;
  layout.local_dims = global_dims;
  for (size_t d = 0; d < rank; ++d) {
    if (global_dims[d] % tiles[d] != 0)
      return Unimplemented(what + ": dimension " + std::to_string(d) + " of size " + std::to_string(global_dims[d]) +
                           " is split unevenly into " + std::to_string(tiles[d]) + " tiles");
    layout.local_dims[d] = global_dims[d] / tiles[d];
  }
  layout.starts.assign(num_partitions, Dims(rank, 0));
  layout.first_holder.assign(num_partitions, -1);
  std::vector<bool> placed(num_partitions, false);
  std::vector<int64_t> coord(tiles.size(), 0);
  for (int64_t position = 0; position < count; ++position) {
    int64_t partition = devices[position];
    if (partition < 0 || partition >= num_partitions || placed[partition])
      return InvalidArgument(what + ": the tile assignment names partition " + std::to_string(partition) +
                             (partition >= 0 && partition < num_partitions ? " twice" : ", out of range"));
    placed[partition] = true;
    for (size_t d = 0; d < rank; ++d) layout.starts[partition][d] = coord[d] * layout.local_dims[d];
    for (size_t k = tiles.size(); k-- > 0;) {
      if (++coord[k] < tiles[k]) break;
      coord[k] = 0;
    }
  }
  // The first holder of a block: the lowest partition holding it.
  std::map<Dims, int64_t> holders;
  for (int64_t p = 0; p < num_partitions; ++p) layout.first_holder[p] = holders.emplace(layout.starts[p], p).first->second;
  return layout;
}

}  // namespace stablert::passes
